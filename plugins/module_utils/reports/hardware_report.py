# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The hardware reports of gathered node facts: Markdown and self-contained HTML of the inventory and the GPU-NIC
affinity matrix (markdown_lines, html_lines), and Documents, which writes each node's document as it arrives and
then the reports and hardware-facts.json into the report folder of gather_node_hardware.
"""


import json
import os
import tempfile
from collections.abc import Mapping

from ansible_collections.gpudirect.openshift.plugins.module_utils.reports.hardware_facts import (
    RELATIONS,
    gpu_nic_affinity,
    nearest_links,
    nic_ports,
    readiness_summary,
)
from ansible_collections.gpudirect.openshift.plugins.module_utils.reports.markup import (
    cell_text,
    html_cell,
    html_text,
    markdown_table,
    markdown_text,
)

# The report colours of the nvidia-smi topo relations (green = same switch ... red = other socket).
RELATION_COLOURS = {"PIX": "#1a9850", "PXB": "#91cf60", "PHB": "#fee08b", "NODE": "#fc8d59", "SYS": "#d73027"}
RELATION_MEANING = {
    "PIX": "at most one PCIe switch between them",
    "PXB": "several PCIe switches, same host bridge",
    "PHB": "same PCIe host bridge",
    "NODE": "different host bridges, same NUMA node",
    "SYS": "different NUMA nodes (crosses the CPU interconnect)",
}


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
            vfs = "%s (%s)" % (cell_text(port["num_vfs"]), port["total_vfs"])
        rows.append([port["pci_address"], "VF" if port["is_vf"] else "PF", port["model"], port["device_id"],
                     port["netdev"], port["rdma_device"], port["link_layer"], port["state"], port["rate_gbps"],
                     port["mtu"], port["numa_node"], vfs])
    return rows


def _matrix(facts):
    """(column labels, rows): one row per GPU, one column per RDMA-capable PF (netdev or address)."""
    facts = facts or {}
    pfs = [nic for nic in facts.get("nics") or [] if nic.get("function") != "VF" and nic.get("rdma_device")]
    columns = []
    for nic in pfs:
        netdevs = [dev.get("name") for dev in nic.get("netdevs") or [] if dev.get("name")]
        columns.append((nic.get("pci_address"),
                        "%s %s" % (nic.get("rdma_device"), netdevs[0] if netdevs else nic.get("pci_address"))))
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


def render_markdown(nodes, title="GPU/NIC inventory", failed=None, note=None):
    """Markdown report of {node: facts}; failed: [{node, error}] of nodes without facts; note: when and why the facts
    were taken (site.yml's are taken before the drivers it installs)."""
    return "\n".join(markdown_lines(nodes, title, failed, note)) + "\n"


def markdown_lines(nodes, title="GPU/NIC inventory", failed=None, note=None, summaries=None):
    """The lines of render_markdown, one at a time: a report of 1000 nodes is written without being held as one text,
    and ``nodes`` may read each document when it is asked for (issue 38). ``summaries``: {node: readiness_summary},
    when the caller has them, so that no document is read for the summary table."""
    yield "# %s" % markdown_text(title)
    yield ""
    if note:
        yield "> %s" % markdown_text(note)
        yield ""
    yield from markdown_table(["Node", "Ready", "GPUs", "NIC PFs", "Link layers", "Peer memory", "Reasons"],
                              [[s["node"], s["ready"], s["gpus"], s["nic_functions"], ", ".join(s["link_layers"]),
                                s["peer_memory_path"], "; ".join(s["reason_codes"])]
                               for s in _summaries(nodes, summaries)])
    for item in failed or []:
        yield ""
        yield "**%s: no facts** - %s" % (markdown_text(item.get("node")), markdown_text(item.get("error")))
    yield ""
    yield "Relations (nvidia-smi topo names, nearest first): " + ", ".join(
        "%s = %s" % (rel, RELATION_MEANING[rel]) for rel in RELATIONS) + "."
    for node in sorted(nodes):
        facts = nodes[node] or {}
        lines = ["", "## %s" % markdown_text(node), ""]
        lines += ["### GPUs", ""] + markdown_table(GPU_HEADER, _gpu_rows(facts))
        lines += ["", "### NIC ports", ""] + markdown_table(NIC_HEADER, _nic_rows(node, facts))
        columns, rows = _matrix(facts)
        lines += ["", "### GPU-NIC affinity", ""]
        if columns and rows:
            lines += markdown_table([""] + columns, [[label] + cells for label, cells in rows])
            nearest = _nearest(facts)
            if nearest:
                lines += ["", "Nearest NIC: " + "; ".join(markdown_text(text) for text in nearest)]
        else:
            lines.append("No GPU or no RDMA-capable NIC: no matrix.")
        warnings = list((facts.get("readiness") or {}).get("warnings") or []) + list(facts.get("warnings") or [])
        if warnings:
            lines += ["", "Warnings:", ""] + ["- %s" % markdown_text(text) for text in warnings]
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


def _html_table(header, rows, cell_class=None):
    out = ["<table>", "<tr>" + "".join("<th>%s</th>" % html_text(h) for h in header) + "</tr>"]
    for row in rows:
        cells = []
        for position, cell in enumerate(row):
            css = cell_class(position, cell) if cell_class else None
            cells.append("<td%s>%s</td>" % (' class="%s"' % css if css else "", html_cell(cell)))
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</table>")
    return out


_STYLE = """body{font-family:sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1em}
th,td{border:1px solid #bbb;padding:.25em .5em;text-align:left;font-size:.9em}
th{background:#eee}
.ready{background:#d9f0d3}.notready{background:#f8d7da}
""" + "".join(".rel-%s{background:%s;text-align:center;font-weight:bold}\n" % (rel, RELATION_COLOURS[rel])
              for rel in RELATIONS)


def render_html(nodes, title="GPU/NIC inventory", failed=None, note=None):
    """Self-contained HTML report (inline CSS, no scripts, no external assets)."""
    return "\n".join(html_lines(nodes, title, failed, note)) + "\n"


def html_lines(nodes, title="GPU/NIC inventory", failed=None, note=None, summaries=None):
    """The lines of render_html, one node at a time (see markdown_lines)."""
    out = ["<!DOCTYPE html>", "<html lang=\"en\"><head><meta charset=\"utf-8\">",
           "<title>%s</title>" % html_text(title), "<style>%s</style></head><body>" % _STYLE,
           "<h1>%s</h1>" % html_text(title)]
    if note:
        out.append("<p class=\"note\"><b>%s</b></p>" % html_cell(note))
    out += _html_table(["Node", "Ready", "GPUs", "NIC PFs", "Link layers", "Peer memory", "Reasons"],
                       [[s["node"], s["ready"], s["gpus"], s["nic_functions"], ", ".join(s["link_layers"]),
                         s["peer_memory_path"], "; ".join(s["reason_codes"])] for s in _summaries(nodes, summaries)],
                       cell_class=lambda pos, cell: ("ready" if cell else "notready") if pos == 1 else None)
    for item in failed or []:
        out.append("<p class=\"notready\"><b>%s: no facts</b> - %s</p>"
                   % (html_cell(item.get("node")), html_cell(item.get("error"))))
    out.append("<p>" + " ".join('<span class="rel-%s">&nbsp;%s&nbsp;</span> %s.' % (rel, rel, RELATION_MEANING[rel])
                                for rel in RELATIONS)
               + "</p>")
    yield from out
    for node in sorted(nodes):
        facts = nodes[node] or {}
        out = ["<h2>%s</h2>" % html_cell(node), "<h3>GPUs</h3>"]
        out += _html_table(GPU_HEADER, _gpu_rows(facts))
        out.append("<h3>NIC ports</h3>")
        out += _html_table(NIC_HEADER, _nic_rows(node, facts))
        out.append("<h3>GPU-NIC affinity</h3>")
        columns, rows = _matrix(facts)
        if columns and rows:
            out += _html_table([""] + columns, [[label] + cells for label, cells in rows],
                               cell_class=lambda pos, cell: "rel-%s" % cell if pos > 0 and cell in RELATION_COLOURS
                               else None)
            nearest = _nearest(facts)
            if nearest:
                out.append("<p>Nearest NIC: %s</p>" % html_text("; ".join(nearest)))
        else:
            out.append("<p>No GPU or no RDMA-capable NIC: no matrix.</p>")
        warnings = list((facts.get("readiness") or {}).get("warnings") or []) + list(facts.get("warnings") or [])
        if warnings:
            out.append("<ul>" + "".join("<li>%s</li>" % html_cell(text) for text in warnings) + "</ul>")
        yield from out
    yield "</body></html>"


# -- the report folder -------------------------------------------------------------------------


class _Stored(Mapping):
    """{node: document} read back from report_dir/nodes/ on each access: the reports of 1000 nodes are rendered
    without holding 1000 documents in memory."""

    def __init__(self, directory, names):
        self.directory = directory
        self.names = sorted(names)

    def __getitem__(self, node):
        if node not in self.names:
            raise KeyError(node)
        with open(os.path.join(self.directory, "%s.json" % node)) as handle:
            return json.load(handle)

    def __iter__(self):
        return iter(self.names)

    def __len__(self):
        return len(self.names)


class Documents:
    """Each node's document as it arrives: written to report_dir/nodes/ and flattened into what plays need; kept in
    memory only for return_facts. The node's full GPU-NIC matrix, which only the report needs, waits in a temporary
    file as the JSON text it takes in hardware-facts.json (issue 38: 64 links per node held as dicts were most of the
    module's memory at 1000 nodes)."""

    def __init__(self, report_dir, keep):
        self.report_dir = report_dir
        self.keep = keep
        self.nodes = {}
        self.ports = {}
        self.links = {}
        self.readiness = {}
        self.matrix_text = None  # the temporary file, and {node: (offset, length)} of each node's links in it
        self.matrix_at = {}
        self.values = {}  # see _shared
        if report_dir:
            os.makedirs(os.path.join(report_dir, "nodes"), exist_ok=True)

    def __call__(self, node, facts):
        self.ports[node] = self._shared(nic_ports(node, facts))
        links = gpu_nic_affinity(node, facts)
        self.links[node] = self._shared(nearest_links(links, self.ports[node]))
        self.readiness[node] = readiness_summary(node, facts)
        if self.report_dir:
            self._keep_matrix(node, links)
            with open(os.path.join(self.report_dir, "nodes", "%s.json" % node), "w") as handle:
                json.dump(facts, handle, indent=1, sort_keys=True)
        if self.keep:
            self.nodes[node] = facts

    def _shared(self, entries):
        """``entries`` with each text and each list of GPU paths that an earlier node had replaced by the earlier node's
        object: the nodes of a cluster are mostly alike (the same NIC models, addresses and paths), so the ports of 1000
        nodes hold a few distinct values. What is kept is only read from here on (written out, or copied by
        exit_json)."""
        values = self.values
        for entry in entries:
            for key, value in entry.items():
                if isinstance(value, str):
                    entry[key] = values.setdefault(value, value)
                elif key == "gpu_paths" and isinstance(value, list):
                    try:
                        entry[key] = values.setdefault(tuple(tuple(sorted(path.items())) for path in value), value)
                    except TypeError:  # a value that is no key (collector output is checked, not trusted): kept as is
                        pass
        return entries

    def _keep_matrix(self, node, links):
        if self.matrix_text is None:
            self.matrix_text = tempfile.TemporaryFile("w+b")
        text = _LIST_SEPARATOR.join(_indented(link, 2) for link in links).encode("utf-8")
        self.matrix_text.seek(0, os.SEEK_END)
        self.matrix_at[node] = (self.matrix_text.tell(), len(text))
        self.matrix_text.write(text)

    def _matrix_items(self):
        """The JSON text of every node's links, sorted by node, read back from the temporary file one node at a time."""
        for node in sorted(self.matrix_at):
            offset, length = self.matrix_at[node]
            if length:
                self.matrix_text.seek(offset)
                yield self.matrix_text.read(length).decode("utf-8")

    def close(self):
        if self.matrix_text is not None:
            self.matrix_text.close()
            self.matrix_text = None

    def flat(self):
        order = sorted(self.readiness)
        return ([p for node in order for p in self.ports[node]], [link for node in order for link in self.links[node]],
                {node: self.readiness[node] for node in order})

    def write_reports(self, title, name, flat, failed, note=None):
        ports, _nearest, readiness = flat
        stored = _Stored(os.path.join(self.report_dir, "nodes"), self.readiness)
        for file_name, lines in (("hardware-report.md", markdown_lines), ("hardware-report.html", html_lines)):
            with open(os.path.join(self.report_dir, file_name), "w") as handle:
                write_lines(handle, lines(stored, title=title, failed=failed, note=note, summaries=self.readiness))
        # hardware-facts.json one node (and one port) at a time, in the layout json.dumps(indent=4, sort_keys=True)
        # gives
        with open(os.path.join(self.report_dir, "hardware-facts.json"), "w") as handle:
            handle.write('{\n    "cluster": %s,\n    "failed_nodes": %s,\n    "gpu_nic_affinity": '
                         % (_indented(name), _indented(failed)))
            _write_list(handle, self._matrix_items())
            handle.write(',\n    "nic_ports": ')
            _write_list(handle, (_indented(port, 2) for port in ports))
            handle.write(',\n    "nodes": {')
            note_line = ',\n    "note": %s' % _indented(note) if note else ""
            for position, node in enumerate(stored):
                handle.write("%s\n        %s: %s" % ("," if position else "", json.dumps(node),
                                                     _indented(stored[node], 2)))
            handle.write("%s}%s,\n    \"readiness\": %s\n}\n" % ("\n    " if len(stored) else "", note_line,
                                                                 _indented(readiness)))
        return ["hardware-report.md", "hardware-report.html",
                "hardware-facts.json"] + ["nodes/%s.json" % node for node in stored]


# Between two items of a list one level down in hardware-facts.json, as json.dumps(indent=4) separates them.
_LIST_SEPARATOR = ",\n        "


def _write_list(handle, items):
    """A list of hardware-facts.json's top level from the JSON text of its items (each _indented at level 2), written
    as _indented(the list) would give it, without the list's whole text in memory."""
    empty = True
    for text in items:
        handle.write(_LIST_SEPARATOR if not empty else "[\n        ")
        handle.write(text)
        empty = False
    handle.write("[]" if empty else "\n    ]")


def _indented(value, level=1):
    return json.dumps(value, indent=4, sort_keys=True).replace("\n", "\n" + "    " * level)
