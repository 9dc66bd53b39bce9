# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The NIC variables against the interfaces the SR-IOV config daemons report (SriovNetworkNodeState status), or
against the hardware facts (the collector pods, which need no operator).

Pure: takes the plan's summary and node states, returns problems. Preflight runs it when the SR-IOV operator already
runs, and on a cluster without node states (a first install) on the port facts (facts_as_reports), so that a wrong NIC
name or a port of the other fabric stops the run before any write, for every method (issue 31 point 3); the rdma role
runs it again once the daemons have reported, before it writes a policy.
"""


from ansible_collections.gpudirect.openshift.plugins.module_utils import names

# sriov-network-operator pkg/webhook/validate.go: the webhook's limit for Mellanox PFs. Below it, the Mellanox plugin
# rewrites the firmware's NUM_OF_VFS to numVfs and reboots (pkg/vendors/mellanox/mellanox.go HandleTotalVfs), so the
# totalvfs a Mellanox PF reports now is not its limit. Other vendors cannot exceed totalvfs.
MELLANOX_MAX_VFS = 128


def _interfaces(node_states):
    """[(node, interface)] from SriovNetworkNodeStates, or from {node, interfaces} entries."""
    out = []
    for state in node_states or []:
        if not isinstance(state, dict):
            continue
        if "metadata" in state:
            node = (state.get("metadata") or {}).get("name")
            interfaces = (state.get("status") or {}).get("interfaces")
        else:
            node = state.get("node") or state.get("name")
            interfaces = state.get("interfaces")
        for iface in interfaces or []:
            if isinstance(iface, dict) and iface.get("name"):
                out.append((node, iface))
    return out


# Where the reported interfaces come from, as the messages say it.
SRIOV_SOURCE = "the SR-IOV operator reports"
FACTS_SOURCE = "the hardware facts show the NVIDIA NIC ports"
# hardware/sysfs.py link layers (/sys/class/infiniband/<dev>/ports/<n>/link_layer) -> SriovNetworkNodeState linkType.
_LINK_TYPES = {"infiniband": "IB", "ethernet": "ETH"}


def facts_as_reports(nic_ports):
    """The hardware_facts role's port facts (inventory.nic_ports: one entry per port) as {node, interfaces} entries in
    the shape of a SriovNetworkNodeState status: name, pciAddress, linkType, vendor, totalvfs of each physical function.
    VFs are left out, as the node states list them under their PF."""
    by_node = {}
    for port in nic_ports or []:
        if not isinstance(port, dict) or port.get("is_vf") or not port.get("node"):
            continue
        interfaces = by_node.setdefault(port["node"], [])
        name = port.get("netdev")
        if not name or any(i["name"] == name for i in interfaces):
            continue
        interfaces.append({"name": name, "pciAddress": port.get("pci_address"),
                           "linkType": _LINK_TYPES.get(str(port.get("link_layer") or "").lower()),
                           "vendor": port.get("vendor_id"), "totalvfs": port.get("total_vfs")})
    return [{"node": node, "interfaces": interfaces} for node, interfaces in sorted(by_node.items())]


def _port(iface, node):
    return "%s (%s) on %s" % (iface.get("name"), iface.get("pciAddress") or "no PCI address", node)


def _address_key(address, fabric):
    """A NIC address as compared: the MAC, or an IPoIB address's trailing 8-byte port GUID (its first bytes change)."""
    text = str(address or "").strip().lower()
    return ":".join(text.split(":")[-8:]) if fabric == "infiniband" else text


def udev_address_problems(summary, node_states):
    """Errors for udev rules derived from facts whose address the SR-IOV config daemon of that node does not report at
    that PCI address (SriovNetworkNodeState status.interfaces[].mac and pciAddress): the facts, which pods on the nodes
    reported, are then wrong or forged, and the rule would rename another NIC on every node of the pool."""
    errors = []
    by_node = {}
    for node, iface in _interfaces(node_states):
        by_node.setdefault(node, {})[str(iface.get("pciAddress") or "").lower()] = iface
    for port in (summary or {}).get("udev_from_facts") or []:
        interfaces = by_node.get(port["node"])
        if not interfaces:
            continue  # this node's daemon has not reported yet: nothing to compare with
        iface = interfaces.get(str(port["pci_address"] or "").lower())
        reported = iface.get("mac") if iface else None
        if _address_key(reported, port["fabric"]) != _address_key(port["address"], port["fabric"]):
            errors.append("gpudirect_rdma_udev_rules_from_facts: node %s's facts give %s for %s (%s), but its SR-IOV "
                          "config daemon reports %s there; gather the facts again (facts.yml) or list the ports in "
                          "gpudirect_rdma_udev_rules." % (port["node"], port["address"], port["netdev"],
                                                          port["pci_address"], reported or "no such port"))
    return errors


def reported_nic_problems(summary, node_states, num_vfs=None, source=SRIOV_SOURCE):
    """{"errors": [...], "warnings": [...]}: each error names the variable and the fix. Nothing is checked when no
    interface is reported yet (the caller waits for the reports first) or the plan has no NIC selection. source: who
    reports the interfaces, as the messages say it (SRIOV_SOURCE, or FACTS_SOURCE for facts_as_reports)."""
    problems = {"errors": [], "warnings": []}
    reported = _interfaces(node_states)
    if not reported or not summary:
        return problems
    if source == SRIOV_SOURCE:  # udev addresses from facts are checked against the daemons, never the facts themselves
        problems["errors"].extend(udev_address_problems(summary, node_states))
    reported_names = sorted({i.get("name") for _n, i in reported})
    reported_pcis = sorted({i.get("pciAddress") for _n, i in reported if i.get("pciAddress")})
    daemons_on = summary.get("sriov_daemon_group")
    for group in (summary.get("nic_selection") or {}).get("groups") or []:
        # With node groups the config daemons run on the sriov_legacy group's nodes only (render/groups.py): only its
        # ports are checked; the reports of other nodes may be those of a previous configuration.
        if summary.get("node_groups") and group.get("node_group") != daemons_on:
            continue
        group_vfs = group.get("num_vfs", num_vfs) if group.get("node_group") else num_vfs
        sriov = group.get("method", summary.get("method")) == "sriov_legacy" and group_vfs
        # A group of gpudirect_rdma_second_fabric has its own fabric, and its variables are that mapping's keys.
        fabric = group.get("fabric") or summary.get("fabric")
        wanted_link = "IB" if fabric == "infiniband" else "ETH"
        prefix = group["variable"] + "." if group.get("variable") else "gpudirect_rdma_"
        fabric_variable = group.get("variable") or "gpudirect_rdma_fabric"
        fabric_value = "ports of the %s fabric" % fabric if group.get("variable") else fabric
        selected = []
        for name in group.get("interfaces") or []:
            ports = [(n, i) for n, i in reported if i.get("name") == name]
            if not ports:
                problems["errors"].append(
                    "%snic_interfaces: %s is not an interface of any node (%s %s); "
                    "give one of those names%s." % (prefix, name, source, ", ".join(reported_names),
                                                    "" if group.get("variable")
                                                    else ", or PCI addresses in gpudirect_rdma_nic_pci_addresses"))
            selected.extend(ports)
        for address in group.get("pci_addresses") or []:
            ports = [(n, i) for n, i in reported if (i.get("pciAddress") or "").lower() == str(address).lower()]
            if not ports:
                problems["errors"].append(
                    "gpudirect_rdma_nic_pci_addresses: %s is not a NIC of any node (%s %s); "
                    "give one of those addresses." % (address, source, ", ".join(reported_pcis)))
            selected.extend(p for p in ports if p not in selected)
        for node, iface in selected:
            link = str(iface.get("linkType") or wanted_link).upper()  # no link type reported: nothing to compare
            if link != wanted_link:
                problems["errors"].append(
                    "%s: %s, but %s is %s port (linkType %s); set the fabric that port runs, or select "
                    "a port of the %s fabric." % (fabric_variable, fabric_value, _port(iface, node),
                                                  "an InfiniBand" if link == "IB" else "an Ethernet",
                                                  iface.get("linkType"), fabric))
            if sriov:
                _vf_problems(problems, group_vfs, iface, node,
                             group["variable"] + ".num_vfs" if group.get("node_group") else "gpudirect_rdma_num_vfs")
    return problems


def _vf_problems(problems, num_vfs, iface, node, variable="gpudirect_rdma_num_vfs"):
    total = iface.get("totalvfs")
    if total is None:
        return problems
    total, num_vfs = int(total), int(num_vfs)
    if str(iface.get("vendor") or "").lower() == names.MELLANOX_VENDOR_ID:
        if num_vfs > MELLANOX_MAX_VFS:
            problems["errors"].append("%s: %d is more than the %d VFs the SR-IOV operator allows on "
                                      "a Mellanox NIC (%s); give at most %d." % (variable, num_vfs, MELLANOX_MAX_VFS,
                                                                                 _port(iface, node), MELLANOX_MAX_VFS))
        elif num_vfs != total:
            problems["warnings"].append("%s: %d differs from the %d VFs the firmware of %s enables "
                                        "(NUM_OF_VFS); the SR-IOV operator rewrites the firmware and reboots the node."
                                        % (variable, num_vfs, total, _port(iface, node)))
    elif num_vfs > total:
        problems["errors"].append("%s: %d is more than the %d VFs %s supports (totalvfs); give at most "
                                  "%d." % (variable, num_vfs, total, _port(iface, node), total))
    return problems
