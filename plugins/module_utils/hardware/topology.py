# Copyright: (c) 2025, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""PCIe relation between two PCI functions in `nvidia-smi topo -m` terms, computed from their physical
sysfs paths, and a parser for the `nvidia-smi topo -m` matrix text.

A physical path looks like /sys/devices/pci0000:20/0000:20:03.1/0000:21:00.0: `pci0000:20` is the
host bridge (root complex), each following PCI address is a bridge (root port, switch upstream or
downstream port) and the last one is the function itself. Relations, nearest first:
  PIX  both sides meet inside one PCIe switch (or under one root port) and neither crosses another switch;
  PXB  they meet below the host bridge but at least one side crosses more switch levels;
  PHB  same host bridge, different root ports;
  NODE different host bridges, same NUMA node;
  SYS  different NUMA nodes.
"""


import re

RELATIONS = ("PIX", "PXB", "PHB", "NODE", "SYS")
RELATION_RANK = {name: rank for rank, name in enumerate(RELATIONS)}

_ROOT_RE = re.compile(r"^pci[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}$")
_BDF_RE = re.compile(r"^[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")
_ANSI_RE = re.compile(r"\x1b\[[0-9;]*m")
_CELL_SPLIT_RE = re.compile(r"\t| {2,}")
_DEVICE_LABEL_RE = re.compile(r"^(GPU|NIC|mlx5_|NVS)[0-9A-Za-z_]*$")


def _decoded(value):
    """bytes decoded as UTF-8 (undecodable bytes replaced); anything else unchanged."""
    return value.decode("utf-8", "replace") if isinstance(value, (bytes, bytearray)) else value


def pci_chain(physical_path):
    """(host bridge, [bridge addresses], function address) from a physical sysfs path, or None."""
    physical_path = _decoded(physical_path)
    if not physical_path:
        return None
    parts = [part for part in physical_path.replace("\\", "/").split("/") if part]
    for position, part in enumerate(parts):
        if _ROOT_RE.match(part):
            chain = []
            for item in parts[position + 1:]:
                if not _BDF_RE.match(item):
                    break
                chain.append(item.lower())
            if not chain:
                return None
            return part.lower(), chain[:-1], chain[-1]
    return None


def relation(chain_a, chain_b, numa_a=None, numa_b=None):
    """PCIe relation of two functions given their pci_chain() results and NUMA nodes (None = unknown).

    Returns None when either chain is unknown."""
    if chain_a is None or chain_b is None:
        return None
    root_a, bridges_a, _func_a = chain_a
    root_b, bridges_b, _func_b = chain_b
    if root_a != root_b:
        return "NODE" if numa_a == numa_b else "SYS"
    common = 0
    for left, right in zip(bridges_a, bridges_b):
        if left != right:
            break
        common += 1
    if common == 0:
        return "PHB"
    # Below the shared bridge each side may cross one more port of the same switch (its downstream
    # port); anything deeper is another switch level.
    if len(bridges_a) - common <= 1 and len(bridges_b) - common <= 1:
        return "PIX"
    return "PXB"


def better(rel_a, rel_b):
    """True when rel_a is nearer than rel_b (None is the farthest)."""
    rank_a = RELATION_RANK.get(rel_a, len(RELATIONS))
    rank_b = RELATION_RANK.get(rel_b, len(RELATIONS))
    return rank_a < rank_b


def gpu_nic_topology(gpus, nics, chains):
    """Relations for every GPU x NIC PCI function, and the nearest RDMA-capable NIC per GPU.

    gpus, nics: fact dicts with pci_address, numa_node (and for NICs function, rdma_device, ports).
    chains: pci_address -> pci_chain() result (None when unknown)."""
    pairs = []
    matrix = {}
    nearest = {}
    for gpu in gpus:
        gpu_addr = gpu.get("pci_address")
        row = {}
        best = None
        for nic in nics:
            nic_addr = nic.get("pci_address")
            rel = relation(chains.get(gpu_addr), chains.get(nic_addr), gpu.get("numa_node"), nic.get("numa_node"))
            row[nic_addr] = rel
            pairs.append({
                "gpu_index": gpu.get("index"),
                "gpu_pci_address": gpu_addr,
                "nic_pci_address": nic_addr,
                "rdma_device": nic.get("rdma_device"),
                "relation": rel,
            })
            if rel is None or not nic.get("rdma_device"):
                continue
            candidate = (RELATION_RANK[rel], 0 if _has_active_port(nic) else 1,
                         0 if nic.get("function") == "PF" else 1, nic_addr)
            if best is None or candidate < best[0]:
                best = (candidate, nic, rel)
        matrix[str(gpu.get("index"))] = row
        if best is not None:
            nic = best[1]
            nearest[str(gpu.get("index"))] = {
                "pci_address": nic.get("pci_address"),
                "rdma_device": nic.get("rdma_device"),
                "netdevs": [dev.get("name") for dev in nic.get("netdevs", [])],
                "relation": best[2],
            }
    return {"pairs": pairs, "matrix": matrix, "nearest_nic": nearest}


def _has_active_port(nic):
    return any(port.get("state") == "ACTIVE" for port in nic.get("ports", []))


def _split_cells(line, use_tabs):
    if use_tabs:
        return [cell.strip() for cell in line.split("\t")]
    return [cell.strip() for cell in _CELL_SPLIT_RE.split(line.strip())]


def parse_topo_matrix(text):
    """Parse `nvidia-smi topo -m` text (tab-separated older layout or the space-aligned newer one).

    Returns {"devices": [labels], "extra_columns": [...], "matrix": {row: {col: relation}},
    "attributes": {row: {extra column: value}}, "nic_legend": {"NIC0": "mlx5_0"}}."""
    if text is None:
        raise ValueError("no nvidia-smi topo output (got None)")
    text = _decoded(text)
    if not isinstance(text, str):
        raise ValueError("nvidia-smi topo output must be text, got %s" % type(text).__name__)
    lines = [_ANSI_RE.sub("", line.rstrip("\n")) for line in text.splitlines()]
    header_at = None
    for position, line in enumerate(lines):
        if line[:1] in ("\t", " ") and re.search(r"(^|\s)GPU0(\s|$)", line):
            header_at = position
            break
    if header_at is None:
        raise ValueError("no nvidia-smi topo header line (with GPU0) found")
    header = lines[header_at]
    use_tabs = "\t" in header
    columns = [cell for cell in _split_cells(header, use_tabs) if cell]
    devices = [col for col in columns if _DEVICE_LABEL_RE.match(col)]
    extra = columns[len(devices):]
    matrix = {}
    attributes = {}
    for line in lines[header_at + 1:]:
        if not line.strip() or line.strip().startswith("Legend"):
            break
        cells = _split_cells(line, use_tabs)
        label = cells[0]
        values = cells[1:]
        matrix[label] = dict(zip(devices, values[:len(devices)]))
        rest = [cell for cell in values[len(devices):] if cell]
        attributes[label] = dict(zip(extra, rest))
    legend = {}
    in_legend = False
    for line in lines[header_at + 1:]:
        if line.strip() == "NIC Legend:":
            in_legend = True
            continue
        if in_legend:
            match = re.match(r"^\s*(NIC[0-9]+):\s*(\S+)\s*$", line)
            if match:
                legend[match.group(1)] = match.group(2)
    return {"devices": devices, "extra_columns": extra, "matrix": matrix, "attributes": attributes,
            "nic_legend": legend}
