# Copyright: (c) 2025, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NIC selection: explicit names/addresses/IDs, or ports derived from collected NIC facts.

The result is a list of *groups*; each group becomes one device-plugin resource and one network.
Without gpudirect_rdma_resource_names there is one group holding every selected port; with it,
one group per port ("rails"), ordered by GPU affinity when given, else by PCI address.
"""


from ansible_collections.gpudirect.openshift.plugins.module_utils import vocabulary
from ansible_collections.gpudirect.openshift.plugins.module_utils import names

# nvidia-smi topo relations between a GPU and a NIC, nearest first.
AFFINITY_RANK = vocabulary.TOPOLOGY_RANK
LINK_LAYERS = {
    "ethernet": "roce", "eth": "roce", "ether": "roce", "roce": "roce",
    "infiniband": "infiniband", "ib": "infiniband",
}
ARPHRD = {"roce": 1, "infiniband": 32}


def _facts_error(errors, index, key, message):
    errors.add("nic_facts[%d].%s" % (index, key), message)


def normalise_facts(entries, errors):
    """Check and normalise nic_facts entries; returns the valid ones (PFs and VFs)."""
    ports = []
    for index, entry in enumerate(entries):
        node = entry.get("node")
        pci = names.normalise_pci_address(entry.get("pci_address"))
        ok = True
        if not node or not isinstance(node, str):
            _facts_error(errors, index, "node", "required (the node name)")
            ok = False
        if pci is None:
            _facts_error(errors, index, "pci_address",
                         "%r is not a PCI address like 0000:0d:00.0" % (entry.get("pci_address"),))
            ok = False
        layer_text = str(entry.get("link_layer") or "").strip().lower()
        layer = LINK_LAYERS.get(layer_text)
        if layer is None:
            _facts_error(errors, index, "link_layer", "%r is not Ethernet or InfiniBand" % (entry.get("link_layer"),))
            ok = False
        vendor = entry.get("vendor_id", entry.get("vendor"))
        vendor = names.normalise_hex_id(vendor) if vendor is not None else names.MELLANOX_VENDOR_ID
        device = entry.get("device_id")
        device_id = names.normalise_hex_id(device) if device is not None else None
        if device is not None and device_id is None:
            _facts_error(errors, index, "device_id", "%r is not a 4-digit hex PCI device ID" % (device,))
            ok = False
        # Facts come from pods on the nodes: untrusted input, held to the same patterns as variables.
        if node and isinstance(node, str) and not names.is_dns1123_subdomain(node):
            _facts_error(errors, index, "node", "%r is not a node name" % (node,))
            ok = False
        netdev = entry.get("netdev")
        if netdev not in (None, "") and not names.is_ifname(netdev):
            _facts_error(errors, index, "netdev", "%r is not a network interface name" % (netdev,))
            ok = False
        rdma_device = entry.get("rdma_device")
        if rdma_device not in (None, "") and not names.is_rdma_device(rdma_device):
            _facts_error(errors, index, "rdma_device", "%r is not an RDMA device name like mlx5_0" % (rdma_device,))
            ok = False
        total_vfs = entry.get("total_vfs", entry.get("sriov_totalvfs"))
        if total_vfs is not None and (isinstance(total_vfs, bool) or not str(total_vfs).isdigit()):
            _facts_error(errors, index, "total_vfs", "%r is not a count" % (total_vfs,))
            ok = False
        if not ok:
            continue
        address = entry.get("address", entry.get("mac_address", entry.get("hw_address")))
        ports.append({
            "index": index,
            "node": node,
            "pci_address": pci,
            "vendor_id": vendor,
            "device_id": device_id,
            "netdev": entry.get("netdev") or None,
            "rdma_device": entry.get("rdma_device"),
            "fabric": layer,
            "total_vfs": int(total_vfs) if total_vfs is not None else None,
            "numa_node": entry.get("numa_node"),
            "address": address.lower() if isinstance(address, str) else None,
            "type": entry.get("type"),
            "is_vf": bool(entry.get("is_vf") or entry.get("physfn")),
        })
    return ports


def _manual_lists(values, errors):
    interfaces, pci_addresses, device_ids = [], [], []
    for name in values["nic_interfaces"]:
        if names.is_ifname(name):
            interfaces.append(name)
        else:
            errors.add("nic_interfaces", "%r is not a network interface name" % name)
    for text in values["nic_pci_addresses"]:
        pci = names.normalise_pci_address(str(text))
        if pci is None:
            errors.add("nic_pci_addresses", "%r is not a PCI address like 0000:0d:00.0" % text)
        else:
            pci_addresses.append(pci)
    for text in values["nic_device_ids"]:
        device = names.normalise_hex_id(text)
        if device is None:
            errors.add("nic_device_ids", "%r is not a 4-digit hex PCI device ID (for example 101b)" % text)
        else:
            device_ids.append(device)
    for field, items in (("nic_interfaces", interfaces), ("nic_pci_addresses", pci_addresses),
                         ("nic_device_ids", device_ids)):
        dups = sorted({i for i in items if items.count(i) > 1})
        if dups:
            errors.add(field, "lists %s twice" % ", ".join(dups))
    return _unique(interfaces), _unique(pci_addresses), _unique(device_ids)


def _unique(items):
    seen = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen


def _check_against_facts(values, ports, interfaces, pci_addresses, errors):
    """Manual selection cross-checked with facts: ports exist and have the fabric's link layer."""
    fabric = values["fabric"]
    selected = []
    for field, key, wanted in (("nic_interfaces", "netdev", interfaces),
                               ("nic_pci_addresses", "pci_address", pci_addresses)):
        for item in wanted:
            matches = [p for p in ports if p[key] == item and not p["is_vf"]]
            if not matches:
                errors.add(field, "%s is not a physical port in gpudirect_rdma_nic_facts" % item)
                continue
            for port in matches:
                if port["fabric"] != fabric:
                    if fabric == "infiniband":
                        errors.add(field, "%s on node %s is an Ethernet port (from nic_facts): IPoIB/infiniband needs "
                                          "an InfiniBand link layer (change the port type with mlxconfig LINK_TYPE or "
                                          "use fabric roce)" % (item, port["node"]))
                    else:
                        errors.add(field, "%s on node %s is an InfiniBand port (from nic_facts): roce needs an "
                                          "Ethernet link layer (use fabric infiniband)" % (item, port["node"]))
                selected.append(port)
    return selected


def _auto_ports(values, ports, errors, warnings=None):
    fabric = values["fabric"]
    is_candidate = [not p["is_vf"] and p["vendor_id"] == names.MELLANOX_VENDOR_ID and p["fabric"] == fabric
                    for p in ports]
    if not any(is_candidate):
        layers = sorted({p["fabric"] for p in ports if not p["is_vf"]})
        errors.add("nic_facts", "no NVIDIA/Mellanox %s port found (ports seen: %s)"
                   % ("InfiniBand" if fabric == "infiniband" else "Ethernet", ", ".join(layers) or "none"))
        return []
    affinity = values["gpu_nic_affinity"]
    if not affinity:
        return sorted((p for p, wanted in zip(ports, is_candidate) if wanted),
                      key=lambda p: (p["node"], p["pci_address"]))
    # Ports indexed by node, then PCI address and netdev, so that each link finds its ports without scanning every
    # port of the cluster (issue 38: that scan made the render quadratic in the number of nodes). One pass over the
    # links also keeps each NIC's nearest relation for _warn_far_rails.
    port_index = _port_index(ports, is_candidate)
    pci_of = _PciCache()
    ranks = {}  # the relation as given -> its rank: a handful of distinct values over every link
    nearest_rank = {}  # (node, NIC PCI address) -> the nearest relation of a GPU to it, over every link
    best = {}  # (node, gpu) -> (rank, [ports])
    for index, link in enumerate(affinity):
        given = link.get("relation", "")
        try:
            rank = ranks[given]
        except (KeyError, TypeError):
            rank = AFFINITY_RANK.get(str(given).upper(), _UNRELATED)
            if _hashable(given):
                ranks[given] = rank
        node, nic = link.get("node"), link.get("nic")
        nic_pci = pci_of(str(nic))
        if not isinstance(node, str) and not _hashable(node):
            node = _Unhashable(node)  # names no port (a list from bad input), as comparing did; an error below
        near_key = (node, nic_pci)
        if rank < nearest_rank.get(near_key, _NO_LINK):
            nearest_rank[near_key] = rank
        if rank == _UNRELATED:
            errors.add("gpu_nic_affinity[%d].relation" % index,
                       "%r is not one of %s" % (link.get("relation"), ", ".join(AFFINITY_RANK)))
            continue
        positions, matches = _indexed_ports(port_index, ports, is_candidate, node, nic_pci, nic)
        if not matches:
            if not positions:
                errors.add("gpu_nic_affinity[%d].nic" % index,
                           "%r on node %r is not in gpudirect_rdma_nic_facts" % (nic, node))
            continue  # a port of the other fabric: never preferred
        key = (node, str(link.get("gpu")))
        found = best.get(key)
        if found is None or rank < found[0]:
            best[key] = (rank, list(matches))
        elif rank == found[0]:
            found[1].extend(matches)
    chosen = []
    seen = set()  # the ports already chosen, by content (equal ports count once, as list membership did)
    for key in sorted(best, key=lambda k: (k[0], _gpu_sort_key(k[1]))):
        for port in sorted(best[key][1], key=lambda p: p["pci_address"]):
            identity = _port_identity(port)
            if identity not in seen:
                seen.add(identity)
                chosen.append(port)
    _warn_far_rails(nearest_rank, chosen, warnings)
    if not chosen and not errors.messages:
        errors.add("gpu_nic_affinity", "names no %s port of gpudirect_rdma_nic_facts" % fabric)
    return chosen


# The rank of a relation that is none of AFFINITY_RANK's (farther than any), and of a NIC that no link names.
_UNRELATED = 9
_NO_LINK = 10


class _PciCache(dict):
    """normalise_pci_address once per distinct text: every node of a cluster names the same few NIC addresses, so
    the links of 1000 nodes hold a handful of distinct texts (issue 38: the regular expressions were most of the
    render at 1000 nodes)."""

    def __call__(self, text):
        try:
            return self[text]
        except KeyError:
            value = self[text] = names.normalise_pci_address(text)
            return value


def _warn_far_rails(nearest_rank, chosen, warnings):
    """A chosen NIC with no GPU behind its own PCIe switch (PIX) or switch tree (PXB): GPUDirect RDMA through it
    crosses the host bridge, which is slower or refused, so the rail it makes is not a GPU's rail. ``nearest_rank``:
    {(node, NIC PCI address): the nearest relation of a GPU to it} from _auto_ports' pass over the links."""
    if warnings is None:
        return
    for port in chosen:
        nearest = nearest_rank.get((port["node"], port["pci_address"]))
        if nearest is None or nearest > AFFINITY_RANK["PXB"]:
            relation = [name for name, rank in AFFINITY_RANK.items() if rank == nearest]
            warnings.append("%s: NIC %s (%s) on node %s is %s to every GPU, not PIX or PXB: GPUDirect RDMA through it "
                            "crosses the CPU's host bridge; check that the NIC sits in a GPU's PCIe switch, or leave "
                            "it out" % (names.variable("gpu_nic_affinity"), port["netdev"] or port["pci_address"],
                                        port["pci_address"], port["node"], relation[0] if relation else "unrelated"))


def _port_index(ports, is_candidate):
    """{node: ({PCI address: entry}, {netdev: entry})}; entry: (positions in ``ports``, the candidate ports among them),
    both in the order of ``ports``."""
    index = {}
    for position, port in enumerate(ports):
        by_pci, by_netdev = index.setdefault(port["node"], ({}, {}))
        for keyed, key in ((by_pci, port["pci_address"]), (by_netdev, port["netdev"])):
            entry = keyed.get(key)
            if entry is None:
                entry = keyed[key] = ([], [])
            entry[0].append(position)
            if is_candidate[position]:
                entry[1].append(port)
    return index


def _indexed_ports(index, ports, is_candidate, node, nic_pci, nic):
    """(positions, candidate ports) of the ports of ``node`` whose PCI address is ``nic_pci`` or whose netdev is
    ``nic``, in the order of ``ports``; the lists are the index's own (read only)."""
    found = index.get(node)
    if found is None:
        return (), ()
    by_pci = found[0].get(nic_pci) if nic_pci is not None else None
    by_netdev = found[1].get(nic) if isinstance(nic, str) or _hashable(nic) else None
    if by_netdev is None or by_pci is None:  # one entry alone is already in the order of ``ports``, without repeats
        return by_pci or by_netdev or ((), ())
    positions = sorted(set(by_pci[0]) | set(by_netdev[0]))
    return positions, [ports[position] for position in positions if is_candidate[position]]


def _hashable(value):
    try:
        hash(value)
    except TypeError:
        return False
    return True


class _Unhashable:
    """A link's node that cannot be a key: equal to no node of the index, and shown as the value itself."""

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return repr(self.value)


def _port_identity(port):
    """What makes two ports equal. normalise_facts gives each port its position in nic_facts ("index"), so equal
    ports are the ports of one entry, and the position alone tells them apart."""
    if "index" in port:
        return port["index"]
    return tuple(sorted((key, repr(value)) for key, value in port.items()))


def _gpu_sort_key(gpu):
    return (0, int(gpu)) if gpu.isdigit() else (1, gpu)


def _groups_from_ports(values, ports, errors, warnings, selector):
    """Split the chosen ports into resource groups (one, or one per port rank on each node)."""
    rails = values["resource_names"]
    if not rails:
        return [_group(values["resource_name"], values["network_name"], ports, selector)]
    by_node = {}
    for port in ports:
        by_node.setdefault(port["node"], []).append(port)
    counts = {node: len(items) for node, items in by_node.items()}
    if any(count != len(rails) for count in counts.values()):
        errors.add("resource_names", "has %d names but the selected ports per node are %s: give one name per port"
                   % (len(rails), ", ".join("%s=%d" % item for item in sorted(counts.items()))))
        return []
    groups = []
    for rank, resource in enumerate(rails):
        members = [by_node[node][rank] for node in sorted(by_node)]
        groups.append(_group(resource, _rail_network(values, rank), members, selector))
    return groups


def _rail_network(values, rank):
    if values["network_names"]:
        return values["network_names"][rank]
    return "%s-%d" % (values["network_name"], rank + 1)


def _group(resource, network, ports, selector):
    group = {"resource_name": resource, "network_name": network, "interfaces": [], "pci_addresses": [],
             "device_ids": [], "nodes": sorted({p["node"] for p in ports}), "ports": ports}
    if selector == "interfaces":
        group["interfaces"] = _unique([p["netdev"] for p in ports if p["netdev"]])
    else:
        group["pci_addresses"] = _unique([p["pci_address"] for p in ports])
    group["device_ids"] = _unique([p["device_id"] for p in ports if p["device_id"]])
    return group


def _manual_groups(values, interfaces, pci_addresses, device_ids, facts_ports, errors):
    rails = values["resource_names"]
    if not rails:
        return [{"resource_name": values["resource_name"], "network_name": values["network_name"],
                 "interfaces": interfaces, "pci_addresses": pci_addresses, "device_ids": device_ids,
                 "nodes": sorted({p["node"] for p in facts_ports}), "ports": facts_ports}]
    units, field = (interfaces, "interfaces") if interfaces else (pci_addresses, "pci_addresses")
    if interfaces and pci_addresses:
        errors.add("resource_names",
                   "one resource per port needs either gpudirect_rdma_nic_interfaces or "
                   "gpudirect_rdma_nic_pci_addresses, not both")
        return []
    if len(units) != len(rails):
        errors.add("resource_names",
                   "has %d names for %d selected ports (gpudirect_rdma_nic_%s): give one name per port"
                   % (len(rails), len(units), "interfaces" if field == "interfaces" else "pci_addresses"))
        return []
    groups = []
    for rank, resource in enumerate(rails):
        group = {"resource_name": resource, "network_name": _rail_network(values, rank), "interfaces": [],
                 "pci_addresses": [], "device_ids": device_ids, "nodes": [], "ports": []}
        group[field] = [units[rank]]
        key = "netdev" if field == "interfaces" else "pci_address"
        group["ports"] = [p for p in facts_ports if p[key] == units[rank]]
        group["nodes"] = sorted({p["node"] for p in group["ports"]})
        groups.append(group)
    return groups


def _host_device_pci_addresses(groups, errors):
    """Host device hands whole PFs to pods through the SR-IOV device plugin, which selects a PF by PCI address or by
    vendor/device/driver/link type: it knows a PF name or root device only for VFs (sriov-network-device-plugin,
    pkg/utils/utils.go GetPfName is empty for a PF, and pkg/resources/deviceSelectors.go drops devices whose PF name
    does not match). Interface names are therefore turned into the PCI addresses that NIC facts report for them."""
    for group in groups:
        if not group["interfaces"]:
            continue
        pfs = [p for p in group["ports"] if not p["is_vf"] and p["netdev"] in group["interfaces"]]
        missing = [name for name in group["interfaces"] if not any(p["netdev"] == name for p in pfs)]
        if missing:
            message = ("host_device cannot select a physical function by interface name (%s): the SR-IOV device plugin "
                       "matches PF names only for VFs. Give gpudirect_rdma_nic_pci_addresses or "
                       "gpudirect_rdma_nic_device_ids instead, or NIC facts (gpudirect_rdma_nic_facts, or "
                       "gpudirect_rdma_nic_selection: auto) that map the names to PCI addresses" % ", ".join(missing))
            errors.add("nic_interfaces", message)
            continue
        group["pci_addresses"] = sorted(set(group["pci_addresses"]) | {p["pci_address"] for p in pfs})


def _check_sriov(values, groups, errors, warnings):
    num_vfs = values.get("num_vfs")
    for group in groups:
        if len(group["device_ids"]) > 1 and not group["interfaces"] and not group["pci_addresses"]:
            errors.add("nic_device_ids", "SriovNetworkNodePolicy.nicSelector.deviceID takes one ID; got %s (select "
                                         "ports by name or PCI address, or one device ID)"
                                         % ", ".join(group["device_ids"]))
        for port in group["ports"] if num_vfs else []:
            if port["total_vfs"] is None or num_vfs == port["total_vfs"]:
                continue
            where = "%s (%s) on node %s" % (port["netdev"] or port["pci_address"], port["pci_address"], port["node"])
            if port["vendor_id"] == names.MELLANOX_VENDOR_ID:
                # The model bounds num_vfs by the operator's Mellanox limit; the firmware follows numVfs.
                warnings.append("%s: %d differs from the %d VFs the firmware of %s enables (sriov_totalvfs from "
                                "nic_facts); the "
                                "SR-IOV operator rewrites NUM_OF_VFS and reboots the node" % (
                                    names.variable("num_vfs"), num_vfs, port["total_vfs"], where))
            elif num_vfs > port["total_vfs"]:
                errors.add("num_vfs",
                           "%d is more than the %d VFs %s supports (sriov_totalvfs from nic_facts); give at most %d"
                           % (num_vfs, port["total_vfs"], where, port["total_vfs"]))


def _check_masters(values, provided, groups, errors, warnings):
    method, fabric = values["method"], values["fabric"]
    if method != "shared_device":
        return
    field = "macvlan_master" if fabric == "roce" else "ipoib_master"
    for group in groups:
        master = values.get(field)
        if master is not None and len(groups) > 1:
            errors.add(field,
                       "cannot name one master for %d resources (gpudirect_rdma_resource_names); each network uses its "
                       "own port" % len(groups))
            return
        if master is not None and not names.is_ifname(master):
            errors.add(field, "%r is not a network interface name" % master)
            return
        if master is None:
            if not group["interfaces"]:
                errors.add(field, "required: shared_device selects by %s, so the %s network needs the interface name "
                                  "of its master port" % ("device ID" if group["device_ids"] else "PCI address",
                                                          "macvlan" if fabric == "roce" else "IPoIB"))
                continue
            master = group["interfaces"][0]
            if len(group["interfaces"]) > 1:
                warnings.append("%s: not set; the %s network uses %s, the first of %s" % (
                    names.variable(field), group["network_name"], master, ", ".join(group["interfaces"])))
        elif group["interfaces"] and master not in group["interfaces"]:
            warnings.append("%s: %s is not one of the selected interfaces (%s)"
                            % (names.variable(field), master, ", ".join(group["interfaces"])))
        names_by_node = {}
        for port in group["ports"]:
            if port["netdev"]:
                names_by_node.setdefault(port["node"], set()).add(port["netdev"])
        missing = sorted(node for node, found in names_by_node.items() if master not in found)
        if missing:
            warnings.append("%s: %s is not a selected port name on %s; pin names with persistent_names or select ports "
                            "by name" % (names.variable(field), master, ", ".join(missing)))
        group["master"] = master


def resolve(values, provided, errors, warnings, require_facts=True):
    """Validate the NIC selection and return {'source', 'groups', 'facts_ports'}."""
    facts_ports = normalise_facts(values["nic_facts"], errors)
    interfaces, pci_addresses, device_ids = _manual_lists(values, errors)
    method = values["method"]
    selection = {"source": values["nic_selection"], "groups": [], "facts_ports": facts_ports}
    if values["nic_selection"] == "auto":
        for field in ("nic_interfaces", "nic_pci_addresses", "nic_device_ids"):
            if values[field]:
                errors.add(field,
                           "conflicts with gpudirect_rdma_nic_selection: auto (ports come from "
                           "gpudirect_rdma_nic_facts)")
        if not facts_ports:
            if require_facts and not values["nic_facts"]:
                errors.add("nic_facts", "required when gpudirect_rdma_nic_selection is auto (collect NIC facts first)")
            selection["source"] = "pending"
            return selection
        chosen = _auto_ports(values, facts_ports, errors, warnings)
        if not chosen:
            return selection
        # Shared device plugins and macvlan/IPoIB masters match by name; host device and VFs by PCI address, which
        # survives interface renames.
        selector = "interfaces" if method == "shared_device" else "pci_addresses"
        if selector == "interfaces" and any(not p["netdev"] for p in chosen):
            errors.add("nic_facts",
                       "shared_device needs the netdev name of every selected port; some entries have none")
            return selection
        groups = _groups_from_ports(values, chosen, errors, warnings, selector)
    else:
        if values["gpu_nic_affinity"]:
            errors.add("gpu_nic_affinity", "only used with gpudirect_rdma_nic_selection: auto")
        if not (interfaces or pci_addresses or device_ids):
            if not any(values[f] for f in ("nic_interfaces", "nic_pci_addresses", "nic_device_ids")):
                errors.add("nic_interfaces", "no NIC selected: set gpudirect_rdma_nic_interfaces, "
                                             "gpudirect_rdma_nic_pci_addresses or gpudirect_rdma_nic_device_ids, or "
                                             "gpudirect_rdma_nic_selection: auto with NIC facts")
            return selection
        if method == "shared_device" and pci_addresses:
            errors.add("nic_pci_addresses", "the RDMA shared device plugin cannot select by PCI address: use "
                                            "gpudirect_rdma_nic_interfaces or gpudirect_rdma_nic_device_ids")
        selected = _check_against_facts(values, facts_ports, interfaces, pci_addresses, errors) if facts_ports else []
        if facts_ports and device_ids and not (interfaces or pci_addresses):
            selected = [p for p in facts_ports if not p["is_vf"] and p["device_id"] in device_ids
                        and p["fabric"] == values["fabric"]]
        groups = _manual_groups(values, interfaces, pci_addresses, device_ids, selected, errors)
    if method == "sriov_legacy":
        _check_sriov(values, groups, errors, warnings)
    if method == "host_device":
        _host_device_pci_addresses(groups, errors)
    _check_masters(values, provided, groups, errors, warnings)
    selection["groups"] = groups
    return selection
