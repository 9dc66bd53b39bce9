# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPU/NIC inventory of gathered node facts (the collector's JSON, one document per node).

Pure functions: NIC ports flattened into the entries `gpudirect_rdma_nic_facts` takes, GPU-NIC
relations in the shape of `gpudirect_rdma_gpu_nic_affinity`, a readiness summary per node, and the
Markdown and self-contained HTML reports of the inventory and the affinity matrix.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

try:
    from html import escape as _html_escape
except ImportError:  # pragma: no cover - Python 2 has no html module; the collection needs 3.10
    _html_escape = None

from ansible_collections.gpudirect.openshift.plugins.module_utils import vocabulary

# nvidia-smi topo names, nearest first, with the report colours (green = same switch ... red = other socket).
RELATIONS = vocabulary.TOPOLOGY_RELATIONS
RELATION_COLOURS = {"PIX": "#1a9850", "PXB": "#91cf60", "PHB": "#fee08b", "NODE": "#fc8d59", "SYS": "#d73027"}
RELATION_MEANING = {
    "PIX": "at most one PCIe switch between them",
    "PXB": "several PCIe switches, same host bridge",
    "PHB": "same PCIe host bridge",
    "NODE": "different host bridges, same NUMA node",
    "SYS": "different NUMA nodes (crosses the CPU interconnect)",
}
# ARPHRD types of a netdev: how the link layer is known for a function without an RDMA device.
_NET_TYPE_LAYER = {1: "Ethernet", 32: "InfiniBand"}


def _hex4(value):
    """'0x15b3' -> '15b3'; None stays None."""
    if not isinstance(value, str):
        return None
    text = value.strip().lower()
    return text[2:] if text.startswith("0x") else text


def _netdev_by_name(nic, name):
    for dev in nic.get("netdevs") or []:
        if dev.get("name") == name:
            return dev
    return None


def nic_ports(node, facts):
    """One entry per RDMA port of every NVIDIA/Mellanox function (PF and VF) of one node.

    Keys are those gpudirect_rdma_nic_facts reads (node, pci_address, link_layer, vendor_id, device_id,
    netdev, rdma_device, total_vfs, numa_node, address, type, is_vf) plus port details for people.
    A function without an RDMA device gives one entry per netdev whose type tells the link layer."""
    ports = []
    # Path from every GPU to each function (topology.pairs), and each GPU's PCIe link: the verification names the path
    # and the PCIe links of the pair it measured, and judges against them (calibration.expected).
    paths = {}
    for pair in ((facts or {}).get("topology") or {}).get("pairs") or []:
        paths.setdefault(pair.get("nic_pci_address"), {})[pair.get("gpu_pci_address")] = pair.get("relation")
    gpu_links = dict((gpu.get("pci_address"), _link(gpu.get("pcie"))) for gpu in (facts or {}).get("gpus") or [])
    for nic in (facts or {}).get("nics") or []:
        sriov = nic.get("sriov") or {}
        gts, width = _link(nic.get("pcie"))
        base = {
            "node": node,
            "pci_address": nic.get("pci_address"),
            "vendor_id": _hex4(nic.get("vendor_id")),
            "device_id": _hex4(nic.get("device_id")),
            "model": nic.get("model"),
            "total_vfs": sriov.get("totalvfs"),
            "num_vfs": sriov.get("numvfs"),
            "numa_node": nic.get("numa_node"),
            "is_vf": nic.get("function") == "VF",
            "pf_pci_address": nic.get("pf_pci_address"),
            "firmware": nic.get("fw_ver"),
            "pcie_gts": gts,
            "pcie_width": width,
        }
        if nic.get("rdma_device") and nic.get("function") != "VF" and paths.get(nic.get("pci_address")):
            base["gpu_paths"] = [{"gpu": gpu, "relation": relation, "pcie_gts": gpu_links.get(gpu, (None, None))[0],
                                  "pcie_width": gpu_links.get(gpu, (None, None))[1]}
                                 for gpu, relation in sorted(paths[nic.get("pci_address")].items())]
        rdma_ports = nic.get("ports") or []
        if rdma_ports:
            for port in rdma_ports:
                netdev = _netdev_by_name(nic, port.get("netdev")) if port.get("netdev") else None
                entry = dict(base)
                entry.update({
                    "port": port.get("port"),
                    "link_layer": port.get("link_layer"),
                    "netdev": port.get("netdev"),
                    "rdma_device": nic.get("rdma_device"),
                    "state": port.get("state"),
                    "rate_gbps": port.get("rate_gbps"),
                    "mtu": port.get("mtu"),
                    "address": netdev.get("address") if netdev else None,
                    "type": netdev.get("type") if netdev else None,
                })
                ports.append(entry)
            continue
        for netdev in nic.get("netdevs") or []:
            layer = _NET_TYPE_LAYER.get(netdev.get("type"))
            if layer is None:
                continue
            entry = dict(base)
            entry.update({"port": None, "link_layer": layer, "netdev": netdev.get("name"), "rdma_device": None,
                          "state": None, "rate_gbps": None, "mtu": netdev.get("mtu"), "address": netdev.get("address"),
                          "type": netdev.get("type")})
            ports.append(entry)
    return ports


def _link(pcie):
    """(GT/s, lanes) of the current PCIe link in a collector `pcie` entry, or (None, None)."""
    pcie = pcie or {}
    return pcie.get("current_link_speed_gts"), pcie.get("current_link_width")


def gpu_nic_affinity(node, facts):
    """{node, gpu, nic, relation, ...} for every GPU x RDMA-capable PF pair whose relation is known."""
    facts = facts or {}
    functions = dict((nic.get("pci_address"), nic) for nic in facts.get("nics") or [])
    gpus = dict((gpu.get("index"), gpu) for gpu in facts.get("gpus") or [])
    links = []
    for pair in (facts.get("topology") or {}).get("pairs") or []:
        nic = functions.get(pair.get("nic_pci_address")) or {}
        if pair.get("relation") not in RELATIONS or not nic.get("rdma_device") or nic.get("function") == "VF":
            continue
        gpu = gpus.get(pair.get("gpu_index")) or {}
        netdevs = [dev.get("name") for dev in nic.get("netdevs") or [] if dev.get("name")]
        links.append({
            "node": node,
            "gpu": pair.get("gpu_index"),
            "gpu_pci_address": pair.get("gpu_pci_address"),
            "gpu_uuid": gpu.get("uuid"),
            "nic": pair.get("nic_pci_address"),
            "netdev": netdevs[0] if netdevs else None,
            "rdma_device": nic.get("rdma_device"),
            "relation": pair.get("relation"),
        })
    return links


def nearest_links(links, ports):
    """Of gpu_nic_affinity's links, for each GPU its nearest NIC(s) of each link layer and vendor, ties kept: what NIC
    selection reads (render/nics.py takes, per GPU, the nearest Mellanox PF of the fabric), a seventh of the matrix
    of an 8-GPU, 8-NIC node."""
    kinds = {}
    for port in ports:
        if not port.get("is_vf"):
            kinds.setdefault((port.get("node"), port.get("pci_address")), set()).add((port.get("link_layer"), port.get("vendor_id")))
    rank = dict((relation, position) for position, relation in enumerate(RELATIONS))
    best = {}
    for link in links:
        for kind in kinds.get((link.get("node"), link.get("nic"))) or [None]:
            key = (link.get("node"), link.get("gpu"), kind)
            best[key] = min(best.get(key, len(RELATIONS)), rank.get(link.get("relation"), len(RELATIONS)))
    return [link for link in links if any(rank.get(link.get("relation")) == best[(link.get("node"), link.get("gpu"), kind)]
                                          for kind in kinds.get((link.get("node"), link.get("nic"))) or [None])]


def readiness_summary(node, facts):
    """Short per-node verdict: ready, reasons, counts, link layers and peer memory path."""
    facts = facts or {}
    verdict = facts.get("readiness") or {}
    pfs = [nic for nic in facts.get("nics") or [] if nic.get("function") != "VF"]
    layers = sorted(set(layer for nic in pfs for layer in nic.get("link_layers") or []))
    return {
        "node": node,
        "ready": bool(verdict.get("ready")),
        "reason_codes": list(verdict.get("reason_codes") or []),
        "reasons": list(verdict.get("reasons") or []),
        "warning_codes": list(verdict.get("warning_codes") or []),
        "gpus": len(facts.get("gpus") or []),
        "nic_functions": len(pfs),
        "link_layers": layers,
        "peer_memory_path": (facts.get("peer_memory") or {}).get("path"),
        "kernel": (facts.get("kernel") or {}).get("release"),
    }


def flatten(nodes):
    """nodes: {node: facts} -> (nic_ports, gpu_nic_affinity, readiness), sorted by node."""
    ports, links, readiness = [], [], {}
    for node in sorted(nodes):
        ports.extend(nic_ports(node, nodes[node]))
        links.extend(gpu_nic_affinity(node, nodes[node]))
        readiness[node] = readiness_summary(node, nodes[node])
    return ports, links, readiness


def facts_summary(counts, readiness, pods=None, check_mode=False, listed=20):
    """One line on a facts run: how many nodes were selected, ready, taken from the cache, gathered now or left
    without facts. The nodes that are not ready are named (at most ``listed``); in check mode the nodes a pod would
    gather are named instead, since check mode starts none and their readiness is not known."""
    counts = counts or {}
    readiness = readiness or {}
    selected = counts.get("selected", 0)
    ready = sorted(node for node, verdict in readiness.items() if verdict.get("ready"))
    not_ready = sorted(node for node, verdict in readiness.items() if not verdict.get("ready"))

    def named(nodes):
        more = len(nodes) - listed
        return ", ".join(nodes[:listed]) + (" and %d more" % more if more > 0 else "")

    parts = ["%d node(s)" % selected]
    if check_mode:
        waiting = sorted(pod.get("node") for pod in pods or [] if pod.get("node"))
        text = "%s: %d from the cache (%d ready)" % (parts[0], counts.get("from_cache", 0), len(ready))
        if waiting:
            text += "; check mode starts no pod, so the facts of %d are not read: %s" % (len(waiting), named(waiting))
        if counts.get("failed"):
            text += "; %d without facts" % counts["failed"]
        return text + "."
    text = "%s: %d ready, %d from the cache, %d gathered now, %d without facts." % (
        parts[0], len(ready), counts.get("from_cache", 0), counts.get("gathered", 0), counts.get("failed", 0))
    if not_ready:
        text += " Not ready: %s." % named(not_ready)
    return text


# -- reports -------------------------------------------------------------------------------------


def _cell(value):
    if value is None or value == "":
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


# Characters that make Markdown text into something else: a link or image ([..](..)), raw HTML or an autolink (<..),
# code spans, table cells, escapes. Facts come from pods on the nodes (untrusted text), so every cell is escaped.
_MD_SPECIAL = {ch: "\\" + ch for ch in "\\`[]<|!"}


def _md(value):
    """``value`` as literal Markdown text on one line (CommonMark backslash escapes for the characters above)."""
    text = " ".join(_cell(value).splitlines())
    return "".join(_MD_SPECIAL.get(ch, ch) for ch in text)


def _gpu_rows(facts):
    rows = []
    for gpu in facts.get("gpus") or []:
        rows.append([gpu.get("index"), gpu.get("pci_address"), gpu.get("name") or gpu.get("pci_device_id"),
                     gpu.get("numa_node"), gpu.get("driver"), gpu.get("memory_total_mib")])
    return rows


GPU_HEADER = ["GPU", "PCI address", "Model", "NUMA", "Driver", "Memory MiB"]
NIC_HEADER = ["PCI address", "Function", "Model", "Device", "Netdev", "RDMA", "Link layer", "State", "Gb/s", "MTU",
              "NUMA", "VFs (total)"]


def _nic_rows(node, facts):
    rows = []
    for port in nic_ports(node, facts):
        vfs = None
        if not port["is_vf"] and port["total_vfs"] is not None:
            vfs = "%s (%s)" % (_cell(port["num_vfs"]), port["total_vfs"])
        rows.append([port["pci_address"], "VF" if port["is_vf"] else "PF", port["model"], port["device_id"], port["netdev"],
                     port["rdma_device"], port["link_layer"], port["state"], port["rate_gbps"], port["mtu"],
                     port["numa_node"], vfs])
    return rows


def _matrix(facts):
    """(column labels, rows): one row per GPU, one column per RDMA-capable PF (netdev or address)."""
    facts = facts or {}
    pfs = [nic for nic in facts.get("nics") or [] if nic.get("function") != "VF" and nic.get("rdma_device")]
    columns = []
    for nic in pfs:
        netdevs = [dev.get("name") for dev in nic.get("netdevs") or [] if dev.get("name")]
        columns.append((nic.get("pci_address"), "%s %s" % (nic.get("rdma_device"), netdevs[0] if netdevs else nic.get("pci_address"))))
    matrix = (facts.get("topology") or {}).get("matrix") or {}
    rows = []
    for gpu in facts.get("gpus") or []:
        row = matrix.get(str(gpu.get("index"))) or {}
        rows.append(("GPU%s" % gpu.get("index"), [row.get(address) for address, _label in columns]))
    return [label for _address, label in columns], rows


def _nearest(facts):
    result = []
    nearest = ((facts or {}).get("topology") or {}).get("nearest_nic", {})
    for gpu_index, nic in sorted(nearest.items(), key=lambda item: int(item[0]) if str(item[0]).isdigit() else 0):
        interfaces = ", ".join(nic.get("netdevs") or []) or nic.get("pci_address")
        result.append("GPU%s -> %s (%s, %s)" % (gpu_index, nic.get("rdma_device"), interfaces, nic.get("relation")))
    return result


def _md_table(header, rows):
    lines = ["| " + " | ".join(_md(cell) if cell else "" for cell in header) + " |", "|" + "|".join(["---"] * len(header)) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(_md(cell) for cell in row) + " |")
    return lines


def render_markdown(nodes, title="GPU/NIC inventory", failed=None, note=None):
    """Markdown report of {node: facts}; failed: [{node, error}] of nodes without facts; note: when and why the facts
    were taken (site.yml's are taken before the drivers it installs)."""
    return "\n".join(markdown_lines(nodes, title, failed, note)) + "\n"


def markdown_lines(nodes, title="GPU/NIC inventory", failed=None, note=None, summaries=None):
    """The lines of render_markdown, one at a time: a report of 1000 nodes is written without being held as one text,
    and ``nodes`` may read each document when it is asked for (issue 38). ``summaries``: {node: readiness_summary},
    when the caller has them, so that no document is read for the summary table."""
    yield "# %s" % _md(title)
    yield ""
    if note:
        yield "> %s" % _md(note)
        yield ""
    yield from _md_table(["Node", "Ready", "GPUs", "NIC PFs", "Link layers", "Peer memory", "Reasons"],
                         [[s["node"], s["ready"], s["gpus"], s["nic_functions"], ", ".join(s["link_layers"]),
                           s["peer_memory_path"], "; ".join(s["reason_codes"])] for s in _summaries(nodes, summaries)])
    for item in failed or []:
        yield ""
        yield "**%s: no facts** - %s" % (_md(item.get("node")), _md(item.get("error")))
    yield ""
    yield "Relations (nvidia-smi topo names, nearest first): " + ", ".join(
        "%s = %s" % (rel, RELATION_MEANING[rel]) for rel in RELATIONS) + "."
    for node in sorted(nodes):
        facts = nodes[node] or {}
        lines = ["", "## %s" % _md(node), ""]
        lines += ["### GPUs", ""] + _md_table(GPU_HEADER, _gpu_rows(facts))
        lines += ["", "### NIC ports", ""] + _md_table(NIC_HEADER, _nic_rows(node, facts))
        columns, rows = _matrix(facts)
        lines += ["", "### GPU-NIC affinity", ""]
        if columns and rows:
            lines += _md_table([""] + columns, [[label] + cells for label, cells in rows])
            nearest = _nearest(facts)
            if nearest:
                lines += ["", "Nearest NIC: " + "; ".join(_md(text) for text in nearest)]
        else:
            lines.append("No GPU or no RDMA-capable NIC: no matrix.")
        warnings = list((facts.get("readiness") or {}).get("warnings") or []) + list(facts.get("warnings") or [])
        if warnings:
            lines += ["", "Warnings:", ""] + ["- %s" % _md(text) for text in warnings]
        yield from lines


def _summaries(nodes, summaries=None):
    """readiness_summary of every node, sorted by node: the caller's when given, else from each document."""
    if summaries is not None:
        return [summaries[node] for node in sorted(nodes)]
    return [readiness_summary(node, nodes[node]) for node in sorted(nodes)]


def write_lines(handle, lines):
    """Each line and its newline to ``handle``: the text "\\n".join(lines) + "\\n", never held whole."""
    for line in lines:
        handle.write(line)
        handle.write("\n")


def _h(value):
    return _html_escape(_cell(value), quote=True)


def _html_table(header, rows, cell_class=None):
    out = ["<table>", "<tr>" + "".join("<th>%s</th>" % _html_escape(str(h), quote=True) for h in header) + "</tr>"]
    for row in rows:
        cells = []
        for position, cell in enumerate(row):
            css = cell_class(position, cell) if cell_class else None
            cells.append("<td%s>%s</td>" % (' class="%s"' % css if css else "", _h(cell)))
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</table>")
    return out


_STYLE = """body{font-family:sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1em}
th,td{border:1px solid #bbb;padding:.25em .5em;text-align:left;font-size:.9em}
th{background:#eee}
.ready{background:#d9f0d3}.notready{background:#f8d7da}
""" + "".join(".rel-%s{background:%s;text-align:center;font-weight:bold}\n" % (rel, RELATION_COLOURS[rel]) for rel in RELATIONS)


def render_html(nodes, title="GPU/NIC inventory", failed=None, note=None):
    """Self-contained HTML report (inline CSS, no scripts, no external assets)."""
    return "\n".join(html_lines(nodes, title, failed, note)) + "\n"


def html_lines(nodes, title="GPU/NIC inventory", failed=None, note=None, summaries=None):
    """The lines of render_html, one node at a time (see markdown_lines)."""
    out = ["<!DOCTYPE html>", "<html lang=\"en\"><head><meta charset=\"utf-8\">",
           "<title>%s</title>" % _html_escape(title), "<style>%s</style></head><body>" % _STYLE,
           "<h1>%s</h1>" % _html_escape(title)]
    if note:
        out.append("<p class=\"note\"><b>%s</b></p>" % _h(note))
    out += _html_table(["Node", "Ready", "GPUs", "NIC PFs", "Link layers", "Peer memory", "Reasons"],
                       [[s["node"], s["ready"], s["gpus"], s["nic_functions"], ", ".join(s["link_layers"]), s["peer_memory_path"],
                         "; ".join(s["reason_codes"])] for s in _summaries(nodes, summaries)],
                       cell_class=lambda pos, cell: ("ready" if cell else "notready") if pos == 1 else None)
    for item in failed or []:
        out.append("<p class=\"notready\"><b>%s: no facts</b> - %s</p>" % (_h(item.get("node")), _h(item.get("error"))))
    out.append("<p>" + " ".join('<span class="rel-%s">&nbsp;%s&nbsp;</span> %s.' % (rel, rel, RELATION_MEANING[rel]) for rel in RELATIONS)
               + "</p>")
    yield from out
    for node in sorted(nodes):
        facts = nodes[node] or {}
        out = ["<h2>%s</h2>" % _h(node), "<h3>GPUs</h3>"]
        out += _html_table(GPU_HEADER, _gpu_rows(facts))
        out.append("<h3>NIC ports</h3>")
        out += _html_table(NIC_HEADER, _nic_rows(node, facts))
        out.append("<h3>GPU-NIC affinity</h3>")
        columns, rows = _matrix(facts)
        if columns and rows:
            out += _html_table([""] + columns, [[label] + cells for label, cells in rows],
                               cell_class=lambda pos, cell: "rel-%s" % cell if pos > 0 and cell in RELATION_COLOURS else None)
            nearest = _nearest(facts)
            if nearest:
                out.append("<p>Nearest NIC: %s</p>" % _html_escape("; ".join(nearest)))
        else:
            out.append("<p>No GPU or no RDMA-capable NIC: no matrix.</p>")
        warnings = list((facts.get("readiness") or {}).get("warnings") or []) + list(facts.get("warnings") or [])
        if warnings:
            out.append("<ul>" + "".join("<li>%s</li>" % _h(text) for text in warnings) + "</ul>")
        yield from out
    yield "</body></html>"
