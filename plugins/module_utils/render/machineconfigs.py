# Copyright: (c) 2025, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Host preparation MachineConfigs: irdma blacklist, persistent NIC names, CRI-O memlock.

Everything for a pool goes into one MachineConfig so the pool drains and reboots once. The CRI-O memlock drop-in lifts
the locked-memory limit of every container on a node, so it goes to its own MachineConfig for the custom pool of the
RDMA nodes (gpudirect_rdma_memlock_pool), unless that is the main pool (then it joins the main MachineConfig).
"""


import base64
import re

from ansible_collections.gpudirect.openshift.plugins.module_utils import names
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import nics

UDEV_RULES_PATH = "/etc/udev/rules.d/70-gpudirect-rdma-persistent-net.rules"
# Drop-ins are read in name order and the last value of a key wins: sort after the MCO's 00-default.
CRIO_DROPIN_PATH = "/etc/crio/crio.conf.d/99-gpudirect-rdma-memlock"
CRIO_MEMLOCK = '[crio.runtime]\ndefault_ulimits = [\n"memlock=-1:-1"\n]\n'
IRDMA_KERNEL_ARGUMENT = "module_blacklist=irdma"

_MAC = re.compile(r"^([0-9a-f]{2}:){5}[0-9a-f]{2}\Z")
_IPOIB = re.compile(r"^([0-9a-f]{2}:){19}[0-9a-f]{2}\Z")
_GUID_COLON = re.compile(r"^([0-9a-f]{2}:){7}[0-9a-f]{2}\Z")
_GUID_HEX = re.compile(r"^(0x)?[0-9a-f]{16}\Z")


def _guid(address):
    """The 8-byte port GUID part of an IPoIB hardware address, colon separated; None if not one."""
    if _IPOIB.match(address):
        return ":".join(address.split(":")[-8:])
    if _GUID_COLON.match(address):
        return address
    if _GUID_HEX.match(address):
        digits = address[2:] if address.startswith("0x") else address
        return ":".join(digits[i:i + 2] for i in range(0, 16, 2))
    return None


def udev_rule(address, name, fabric):
    """One rule. Ethernet netdevs are ARPHRD_ETHER (type 1) with a MAC; IPoIB netdevs are
    ARPHRD_INFINIBAND (type 32) with a 20-byte address whose first bytes (QPN, GID prefix) are not
    stable, so the match is on the trailing 8-byte port GUID."""
    name = names.node_text(name, "udev rule interface name")
    address = names.node_text(address, "udev rule address")
    if fabric == "infiniband":
        match = 'ATTR{type}=="32", ATTR{address}=="?*%s"' % _guid(address)
    else:
        match = 'ATTR{type}=="1", ATTR{address}=="%s"' % address
    return 'SUBSYSTEM=="net", ACTION=="add", %s, NAME="%s"' % (match, name)


def _fabric_of(entry):
    kind = entry.get("type")
    if kind is not None and str(kind) in ("1", "32"):
        return "roce" if str(kind) == "1" else "infiniband"
    return nics.LINK_LAYERS.get(str(entry.get("link_layer") or "").strip().lower())


def facts_udev_ports(model, all_ports=False):
    """The ports of nic_facts that persistent_names rules would name: NVIDIA/Mellanox PFs with a netdev and an address.
    Unless ``all_ports``, only when those rules are rendered (the MachineConfig is applied with persistent_names and
    udev_rules_from_facts is on)."""
    if not all_ports and not ("persistent_names" in (model["machineconfigs"] if model["apply_machineconfigs"] else [])
                              and model["udev_rules_from_facts"]):
        return []
    return [p for p in (model.get("selection") or {}).get("facts_ports") or []
            if not p["is_vf"] and p["vendor_id"] == names.MELLANOX_VENDOR_ID and p["netdev"] and p["address"]]


def collect_udev_rules(model, errors):
    """Rules from the explicit udev_rules list and from every NVIDIA/Mellanox PF in nic_facts."""
    entries = []
    for index, entry in enumerate(model["udev_rules"]):
        field = "udev_rules[%d]" % index
        address, name, fabric = str(entry.get("address") or "").strip().lower(), entry.get("name"), _fabric_of(entry)
        ok = True
        if not names.is_ifname(name):
            errors.add(field + ".name", "%r is not a network interface name" % (name,))
            ok = False
        if fabric is None:
            errors.add(field + ".link_layer", "give link_layer (Ethernet or InfiniBand) or type (1 or 32)")
            ok = False
        elif fabric == "roce" and not _MAC.match(address):
            errors.add(field + ".address",
                       "%r is not a 6-byte MAC address (Ethernet, type 1)" % (entry.get("address"),))
            ok = False
        elif fabric == "infiniband" and _guid(address) is None:
            errors.add(field + ".address",
                       "%r is not a 20-byte IPoIB address or an 8-byte port GUID (InfiniBand, type 32)"
                       % (entry.get("address"),))
            ok = False
        if ok:
            entries.append((field, address, name, fabric, entry.get("node")))
    from_facts = facts_udev_ports(model, all_ports=True)
    if from_facts and not model["udev_rules_from_facts"]:
        # Facts come from pods on the nodes; rules derived from them run as root on every node of the pool.
        errors.add("udev_rules_from_facts", "persistent_names would name %d port(s) from gpudirect_rdma_nic_facts, "
                                            "which pods on the nodes reported: review the rules (playbooks/render.yml "
                                            "writes the MachineConfig) and set gpudirect_rdma_udev_rules_from_facts: "
                                            "true, or list the ports in gpudirect_rdma_udev_rules instead"
                                            % len(from_facts))
        from_facts = []
    for port in from_facts:
        valid = _MAC.match(port["address"]) if port["fabric"] == "roce" else _guid(port["address"])
        if not valid:
            errors.add("nic_facts[%d].address" % port["index"],
                       "%r does not fit a %s port" % (port["address"], port["fabric"]))
            continue
        entries.append(("nic_facts[%d]" % port["index"], port["address"], port["netdev"], port["fabric"], port["node"]))
    rules, by_key, by_node_name, claimed_by = [], {}, {}, {}
    for field, address, name, fabric, node in entries:
        key = (fabric, _guid(address) if fabric == "infiniband" else address)
        if field.startswith("nic_facts") and node:
            # One NIC address belongs to one node: facts in which two nodes report it are wrong for at least one of
            # them, and the rule would rename that address on every node of the pool (issue 34).
            first = claimed_by.setdefault(key, node)
            if first != node:
                errors.add("udev_rules_from_facts",
                           "%s: %s is reported by nodes %s and %s; a NIC address belongs to one node: gather the facts "
                           "again (facts.yml) or list the ports in gpudirect_rdma_udev_rules"
                           % (field, address, first, node))
                continue
        if key in by_key:
            if by_key[key] != name:
                errors.add(field, "%s is already named %s; one address cannot get two names" % (address, by_key[key]))
            continue
        if node:
            owner = by_node_name.get((node, name))
            if owner and owner != key:
                errors.add(field, "node %s would get two interfaces named %s" % (node, name))
                continue
            by_node_name[(node, name)] = key
        by_key[key] = name
        rules.append(udev_rule(address, name, fabric))
    if not rules:
        errors.add("machineconfigs", "persistent_names needs interface addresses: give gpudirect_rdma_udev_rules or "
                                     "gpudirect_rdma_nic_facts with address fields")
    return sorted(rules)


def _data_url(text):
    return "data:text/plain;charset=utf-8;base64," + base64.b64encode(text.encode("utf-8")).decode("ascii")


def _file(path, text):
    return {"path": path, "mode": 420, "overwrite": True, "contents": {"source": _data_url(text)}}


def memlock_separate(model):
    """True when the memlock drop-in goes to its own MachineConfig for gpudirect_rdma_memlock_pool."""
    wanted = model["machineconfigs"] if model["apply_machineconfigs"] else []
    return "crio_memlock" in wanted and model["memlock_pool"] != model["machineconfig_role"]


def memlock_machineconfig_name(model):
    return "99-%s-gpudirect-rdma-memlock" % model["memlock_pool"]


def _machineconfig(name, role, spec):
    return {"apiVersion": names.API_MCO, "kind": "MachineConfig",
            "metadata": {"name": name, "labels": {names.MCO_ROLE_LABEL: role}}, "spec": spec}


def _ignition(model, files):
    config = {"ignition": {"version": model["ignition_version"]}}
    if files:
        config["storage"] = {"files": files}
    return config


def machineconfigs(model, errors):
    """The MachineConfig list for the opted-in items: the main pool's (zero or one), then the memlock pool's."""
    wanted = model["machineconfigs"] if model["apply_machineconfigs"] else []
    if not wanted:
        return []
    separate = memlock_separate(model)
    files = []
    if "persistent_names" in wanted:
        rules = collect_udev_rules(model, errors)
        text = ("# Generated by gpudirect.openshift: pin NVIDIA NIC names used by RDMA selectors.\n" + "\n".join(rules)
                + "\n")
        files.append(_file(UDEV_RULES_PATH, text))
    if "crio_memlock" in wanted and not separate:
        files.append(_file(CRIO_DROPIN_PATH, CRIO_MEMLOCK))
    result = []
    if files or "irdma_blacklist" in wanted:
        spec = {"config": _ignition(model, files)}
        if "irdma_blacklist" in wanted:
            spec["kernelArguments"] = [IRDMA_KERNEL_ARGUMENT]
        result.append(_machineconfig(model["machineconfig_name"], model["machineconfig_role"], spec))
    if separate:
        spec = {"config": _ignition(model, [_file(CRIO_DROPIN_PATH, CRIO_MEMLOCK)])}
        result.append(_machineconfig(memlock_machineconfig_name(model), model["memlock_pool"], spec))
    return result
