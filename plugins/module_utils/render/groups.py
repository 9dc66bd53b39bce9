# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Node groups (gpudirect_rdma_node_groups): several sets of nodes, each with its own method, fabric, ports, names,
address ranges and MachineConfigPool.

Each group is the single-group input model (model.build) of the shared variables with the group's keys on top; the
one renderer (plan.render_objects) renders each group, and merge() puts the results together: objects rendered alike
are kept once, the one NicClusterPolicy takes every group's device-plugin entries, and anything else two groups would
both own is refused, naming the group and the key to change. Without gpudirect_rdma_node_groups the variables are the
one implicit group, as before.
"""


import copy
import ipaddress
import json
import re

from ansible_collections.gpudirect.openshift.plugins.module_utils.render import input_fields
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import model as input_model
from ansible_collections.gpudirect.openshift.plugins.module_utils import names
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import rdma

FIELD = "node_groups"
VARIABLE = names.variable(FIELD)
# What a group may set: the keys of one RDMA configuration on some nodes. Everything else (operators, drivers, GPU
# settings, the MachineConfig opt-in, namespaces) is cluster-wide and comes from the gpudirect_rdma_* variables.
GROUP_KEYS = (
    "node_selector", "method", "fabric",
    "nic_interfaces", "nic_pci_addresses", "nic_device_ids",
    "resource_name", "resource_names", "resource_prefix", "network_name", "network_names",
    "ipam_range", "ipam_ranges", "ipam_range_start", "ipam_range_end", "ipam_exclude", "ipam_gateway",
    "mtu", "macvlan_mode", "macvlan_master", "ipoib_master", "ipoib_mode", "vlan",
    "rdma_hca_max", "num_vfs", "sriov_policy_name", "sriov_policy_priority",
    "sriov_pool_config", "sriov_pool_max_unavailable", "sriov_pool_rdma_mode",
    "machineconfig_pool", "machineconfig_role", "machineconfig_name",
)
# A group name ends up in object names (<network>-<group>), which are DNS-1123 labels of at most 63 characters.
MAX_NAME = 20
_MESSAGE_FIELD = re.compile(r"^%s([a-z0-9_]+)(\.[a-z_]+)?: " % re.escape(names.VARIABLE_PREFIX))


def group_variable(name, key=None):
    return "%s[%s]%s" % (VARIABLE, name, "." + key if key else "")


def given(variables):
    value = (variables or {}).get(VARIABLE)
    return value not in (None, "", [], "[]")


def _rename(message, name, set_here):
    """'gpudirect_rdma_<key>: ...' of a group's own key becomes 'gpudirect_rdma_node_groups[<name>].<key>: ...'."""
    match = _MESSAGE_FIELD.match(message)
    if not match or match.group(1) not in GROUP_KEYS:
        return message
    key = match.group(1)
    if key not in set_here and key in ("method", "fabric"):
        return message  # inherited from the shared variable: the fix is there or in the group
    return "%s%s: %s" % (group_variable(name, key), match.group(2) or "", message[match.end():])


def _suffixed(values, field, name, separator):
    """The shared (or per-configuration default) names, each with the group's name appended, so two groups that set
    no names of their own never render the same resource, network or policy."""
    suffix = separator + name if separator == "-" else separator + name.replace("-", "_")
    value = values.get(field)
    if isinstance(value, list):
        return [str(item) + suffix for item in value]
    return str(value) + suffix if value else value


def _group_variables(variables, item, errors):
    """The single-group variables of one group: the shared variables with the group's keys on top."""
    name = item.get("name")
    sub = {key: value for key, value in variables.items() if key != VARIABLE}
    own = {key: value for key, value in item.items() if key != "name"}
    for key, value in own.items():
        sub[names.variable(key)] = value
    # Names the group does not set: the shared ones (or the configuration's defaults) with the group's name.
    values, _provided, _errors = input_model.normalise({k: v for k, v in sub.items()
                                                        if k[len(names.VARIABLE_PREFIX):] in input_fields.FIELDS})
    if not ({"resource_name", "resource_names"} & set(own)):
        if values.get("resource_names"):
            sub[names.variable("resource_names")] = _suffixed(values, "resource_names", name, "_")
        elif values.get("resource_name"):
            sub[names.variable("resource_name")] = _suffixed(values, "resource_name", name, "_")
    if not ({"network_name", "network_names"} & set(own)):
        if values.get("network_names"):
            sub[names.variable("network_names")] = _suffixed(values, "network_names", name, "-")
        elif values.get("network_name"):
            sub[names.variable("network_name")] = _suffixed(values, "network_name", name, "-")
    if "sriov_policy_name" not in own and values.get("sriov_policy_name"):
        sub[names.variable("sriov_policy_name")] = _suffixed(values, "sriov_policy_name", name, "-")
    if values.get("nic_selection") == "auto":
        errors.add(FIELD, "group %s: gpudirect_rdma_nic_selection auto derives one port list from every node's facts; "
                          "with node groups give each group its ports (nic_interfaces, nic_pci_addresses or "
                          "nic_device_ids)" % name)
    return sub, set(own)


def _check_items(raw, errors):
    """The list itself: mappings with a unique DNS-1123 name, a node selector and known keys only."""
    items = input_model._coerce(FIELD, input_fields.FIELDS[FIELD].kind, raw, errors)
    if items is None:
        return []
    good, seen = [], set()
    for index, item in enumerate(items):
        name = item.get("name")
        if not isinstance(name, str) or not names.is_dns1123_label(name) or len(name) > MAX_NAME:
            errors.add(FIELD, "item %d: name %r must be a DNS-1123 label of at most %d characters (it is appended to "
                              "the group's object names)" % (index, name, MAX_NAME))
            continue
        if name in seen:
            errors.add(FIELD, "two groups are named %s: give each group its own name" % name)
            continue
        seen.add(name)
        unknown = sorted(str(key) for key in item if key != "name" and key not in GROUP_KEYS)
        if unknown:
            errors.add(FIELD, "group %s: unknown key %s (a group sets: name, %s; the other gpudirect_rdma_* variables "
                              "are shared by every group)" % (name, ", ".join(unknown), ", ".join(GROUP_KEYS)))
            continue
        if not isinstance(item.get("node_selector"), dict) or not item["node_selector"]:
            errors.messages.append("%s: required, the labels of this group's nodes (for example "
                                   "{node.example.com/rdma-group: %s})"
                                   % (group_variable(name, "node_selector"), name))
            continue
        good.append(item)
    return good


def _selector_text(selector):
    return {str(k): names.label_text(v) for k, v in selector.items()}


def _check_across(models, errors):
    """What two groups must not share: nodes (as far as the selectors alone tell), resources, networks, address
    ranges."""
    for index, (name, model) in enumerate(models):
        mine = _selector_text(model["node_selector"])
        for other_name, other in models[:index]:
            theirs = _selector_text(other["node_selector"])
            narrower, wider = (name, other_name) if set(theirs.items()) <= set(mine.items()) else (other_name, name)
            if set(theirs.items()) <= set(mine.items()) or set(mine.items()) <= set(theirs.items()):
                errors.messages.append(
                    "%s: every node it selects is also selected by group %s, and a node belongs to one group only: "
                    "give each group a node_selector with a label the other group's nodes do not carry"
                    % (group_variable(narrower, "node_selector"), wider))
    taken = {}
    for name, model in models:
        for resource in rdma.resource_names(model):
            if resource in taken and taken[resource] != name:
                errors.messages.append("%s: %s is also a resource of group %s: give each group its own resource names"
                                       % (group_variable(name, "resource_name"), resource, taken[resource]))
            taken.setdefault(resource, name)
    taken = {}
    for name, model in models:
        for _config, group in rdma.fabric_groups(model):
            network = group["network_name"]
            if network in taken and taken[network] != name:
                errors.messages.append("%s: %s is also a network of group %s: give each group its own network names"
                                       % (group_variable(name, "network_name"), network, taken[network]))
            taken.setdefault(network, name)
    ranges = []
    for name, model in models:
        for _config, group in rdma.fabric_groups(model):
            text = group.get("ipam_range") or model.get("ipam_range")
            if not text:
                continue
            network = ipaddress.ip_network(text, strict=False)
            for other_name, other in ranges:
                if other_name != name and other.version == network.version and other.overlaps(network):
                    errors.messages.append(
                        "%s: %s overlaps %s of group %s: the two groups' networks would hand out the same addresses; "
                        "give each group a range of its own" % (group_variable(name, "ipam_range"), network, other,
                                                                other_name))
            ranges.append((name, network))


def build(variables, require_facts=True):
    """([model], errors, warnings). Without gpudirect_rdma_node_groups: the one implicit group (model.build). With it:
    one model per group, each carrying node_group (its name)."""
    if not given(variables):
        model, errors, warnings = input_model.build(variables, require_facts=require_facts)
        return ([model] if model else []), errors, warnings
    errors = input_model.Errors()
    warnings = []
    items = _check_items(variables[VARIABLE], errors)
    shared_selector = variables.get(names.variable("node_selector"))
    if shared_selector not in (None, "", {}) and shared_selector != input_fields.FIELDS["node_selector"].default:
        warnings.append("%s is not used with %s: each group's node_selector picks its nodes"
                        % (names.variable("node_selector"), VARIABLE))
    models = []
    for item in items:
        sub, set_here = _group_variables(variables, item, errors)
        model, group_errors, group_warnings = input_model.build(sub, require_facts=require_facts)
        for message in group_errors:
            text = _rename(message, item["name"], set_here)
            if text not in errors.messages:
                errors.messages.append(text)
        warnings.extend("group %s: %s" % (item["name"], text) for text in group_warnings if text not in warnings)
        if model is not None:
            model["node_group"] = item["name"]
            models.append((item["name"], model))
    if not errors.messages:
        _check_across(models, errors)
    if errors.messages:
        return [], errors.messages, warnings
    return [model for _name, model in models], [], warnings


# Merging the groups' objects ------------------------------------------------------------------------------

_PLUGIN_LISTS = {"rdmaSharedDevicePlugin": "configList", "sriovDevicePlugin": "resourceList"}
# The key a group changes so that its object no longer collides with another group's.
_COLLISION_HINT = {
    "MachineConfig": "machineconfig_pool (with its own MachineConfigPool) or machineconfig_name",
    "SriovNetworkPoolConfig": "machineconfig_pool (the SriovNetworkPoolConfig is named after it)",
    "SriovNetworkNodePolicy": "sriov_policy_name or resource_name",
}


def _port_names(selectors):
    for key in ("ifNames", "pciAddresses"):
        if selectors.get(key):
            return key, set(selectors[key])
    return None, None


def _may_share_ports(first, second):
    """Whether two device-plugin selectors could take the same port on some node."""
    first_key, first_names = _port_names(first)
    second_key, second_names = _port_names(second)
    if first_key and first_key == second_key:
        return bool(first_names & second_names)
    first_links, second_links = set(first.get("linkTypes") or []), set(second.get("linkTypes") or [])
    return not (first_links and second_links and not first_links & second_links)


def _selector_list(entry):
    selectors = entry.get("selectors") or {}
    return selectors if isinstance(selectors, list) else [selectors]


def _merge_nic_cluster_policy(kept, owners, name, manifest, errors):
    """Adds a group's device-plugin entries and secondary networks to the one NicClusterPolicy. The Network Operator
    runs each device plugin as one DaemonSet with one ConfigMap on every NIC node (network-operator
    manifests/state-rdma-shared-device-plugin/0060_rdma-shared-dev-plugin-ds.yaml and
    manifests/state-sriov-device-plugin/0030-sriov-dp-daemonset.yaml: NIC-node selector, one ConfigMap), so
    every group's entries apply on every node: they must name different ports, and the two plugins cannot be split
    between groups."""
    spec, new = kept["spec"], manifest["spec"]
    for key in sorted(set(spec) | set(new)):
        if key in _PLUGIN_LISTS or key == "secondaryNetwork":
            continue
        if spec.get(key) != new.get(key):  # cluster-wide settings: equal by construction
            errors.messages.append("%s: group %s renders NicClusterPolicy %s differently from group %s"
                                   % (VARIABLE, name, key, ", ".join(sorted(set(owners.values())))))
    for key, list_key in _PLUGIN_LISTS.items():
        if key not in new:
            continue
        other = [k for k in _PLUGIN_LISTS if k != key and k in spec]
        if other:
            errors.messages.append(
                "%s: group %s needs the NicClusterPolicy's %s, another group its %s; the Network Operator runs each on "
                "every NIC node with one config, so both would claim the same ports. Give these groups the same "
                "method, or use sriov_legacy (SriovNetworkNodePolicy, with the group's nodeSelector) for one of them"
                % (group_variable(name, "method"), name, key, other[0]))
            continue
        if key not in spec:
            spec[key] = copy.deepcopy(new[key])
            for entry in json.loads(new[key]["config"])[list_key]:
                owners[entry["resourceName"]] = name
            continue
        merged = json.loads(spec[key]["config"])
        for entry in json.loads(new[key]["config"])[list_key]:
            for kept_entry in merged[list_key]:
                if any(_may_share_ports(a, b) for a in _selector_list(entry) for b in _selector_list(kept_entry)):
                    errors.messages.append(
                        "%s: resource %s could take the ports of resource %s of group %s: the %s runs with one config "
                        "on every NIC node, so groups sharing it must select their ports by interface name or PCI "
                        "address, none of them the other group's"
                        % (group_variable(name, "nic_interfaces"), entry["resourceName"], kept_entry["resourceName"],
                           owners.get(kept_entry["resourceName"]), key))
            owners[entry["resourceName"]] = name
            merged[list_key].append(entry)
        spec[key]["config"] = json.dumps(merged)
    if new.get("secondaryNetwork"):
        spec.setdefault("secondaryNetwork", {}).update(copy.deepcopy(new["secondaryNetwork"]))


def _uses_vfs(model):
    return rdma.configuration(model).vf_policy


def _merge_sriov_operator_config(seen, key, rendered, model, manifest, errors):
    """The one SriovOperatorConfig runs the config daemons on the nodes of one label map (sriov-network-operator
    api/v1/sriovoperatorconfig_types.go: configDaemonNodeSelector is a map[string]string), and the SR-IOV wait needs
    every node state to be one the policies reach: the sriov_legacy group's nodes. One such group at most."""
    first, kept = seen[key]
    first_model = [m for m, _objects in rendered if m.get("node_group") == first][0]
    if not _uses_vfs(model):
        return
    if _uses_vfs(first_model):
        errors.messages.append(
            "%s: groups %s and %s both use sriov_legacy, but the SR-IOV operator runs its config daemons on the nodes "
            "of one label selector (SriovOperatorConfig configDaemonNodeSelector): use sriov_legacy in one group only"
            % (group_variable(model["node_group"], "method"), first, model["node_group"]))
        return
    kept.clear()
    kept.update(copy.deepcopy(manifest))
    seen[key] = (model["node_group"], kept)


def merge(rendered, errors):
    """[(phase, manifest)] of every group: [(model, [(phase, manifest)])] put together in group order."""
    out, seen, owners = [], {}, {}
    for model, objects in rendered:
        name = model.get("node_group")
        for phase, manifest in objects:
            key = names.object_key(manifest)
            if key not in seen:
                manifest = copy.deepcopy(manifest)
                seen[key] = (name, manifest)
                out.append((phase, manifest))
                if manifest["kind"] == "NicClusterPolicy":
                    for list_key in ("rdmaSharedDevicePlugin", "sriovDevicePlugin"):
                        if list_key in manifest["spec"]:
                            for entry in json.loads(manifest["spec"][list_key]["config"])[_PLUGIN_LISTS[list_key]]:
                                owners[entry["resourceName"]] = name
                continue
            first, kept = seen[key]
            if manifest == kept:
                continue
            if manifest["kind"] == "NicClusterPolicy":
                _merge_nic_cluster_policy(kept, owners, name, manifest, errors)
                continue
            if manifest["kind"] == "SriovOperatorConfig":
                _merge_sriov_operator_config(seen, key, rendered, model, manifest, errors)
                continue
            errors.messages.append("%s: renders %s %s, which group %s renders differently: give the group its own %s"
                                   % (group_variable(name), manifest["kind"], manifest["metadata"]["name"], first,
                                      _COLLISION_HINT.get(manifest["kind"], "network_name or network_names")))
    return out


def merged_summary(per_group):
    """One plan summary from the groups' summaries [(model, summary)]: the first group's shape, with every group's
    resources, networks, NIC groups, pools and reboots, and node_groups: each group's own part (the waits and the
    preflight node checks read it)."""
    if len(per_group) == 1 and per_group[0][0].get("node_group") is None:
        return per_group[0][1]
    merged = copy.deepcopy(per_group[0][1])
    for key in ("resources", "networks", "reboots"):
        merged[key] = []
    merged["pod_resources"], merged["machineconfig_pools"] = {}, {}
    merged["nic_selection"] = {"source": merged["nic_selection"]["source"], "groups": []}
    merged["node_groups"] = []
    for model, summary in per_group:
        name = model["node_group"]
        merged["resources"].extend(summary["resources"])
        merged["networks"].extend(summary["networks"])
        merged["reboots"].extend(r for r in summary["reboots"] if r not in merged["reboots"])
        merged["pod_resources"].update(summary["pod_resources"])
        for pool, machineconfigs in summary["machineconfig_pools"].items():
            merged["machineconfig_pools"][pool] = sorted(
                set(merged["machineconfig_pools"].get(pool, []) + machineconfigs))
        for group in summary["nic_selection"]["groups"]:
            group = dict(group, fabric=group.get("fabric") or summary["fabric"])
            group.setdefault("variable", group_variable(name))
            group.update({"node_group": name, "method": model["method"], "num_vfs": model.get("num_vfs")})
            merged["nic_selection"]["groups"].append(group)
        merged["node_groups"].append({
            "name": name, "variable": group_variable(name), "node_selector": summary["node_selector"],
            "label_selectors": ["%s=%s" % (key, value) for key, value in sorted(summary["node_selector"].items())],
            "configuration": summary["configuration"], "method": summary["method"], "fabric": summary["fabric"],
            "resources": summary["resources"], "networks": [n["name"] for n in summary["networks"]],
            "machineconfig_pool": summary["machineconfig_pool"]})
    # The SriovOperatorConfig of merge(): the config daemons run on the sriov_legacy group's nodes (None: no such
    # group).
    merged["sriov_daemon_group"] = ([m["node_group"] for m, _s in per_group if _uses_vfs(m)] or [None])[0]
    merged["configuration"] = "; ".join("%s: %s" % (g["name"], g["configuration"]) for g in merged["node_groups"])
    merged["fabrics"] = sorted({f for _m, s in per_group for f in s["fabrics"]})
    return merged


# Against the cluster (preflight) --------------------------------------------------------------------------

def node_group_problems(summary, selected):
    """Problems, each naming the variable and the fix: a group whose selector matches no node, and a node two groups
    select. ``selected``: [{"item": node group of the summary, "nodes": [names of the nodes it selects]}] (plan_status
    node_groups)."""
    problems = []
    owner = {}
    for result in selected or []:
        group = result.get("item") or {}
        nodes = sorted(result.get("nodes") or [])
        if not nodes:
            problems.append("%s: %s selects no node of the cluster; label this group's nodes (oc label node <node> %s) "
                            "or change the selector" % (group_variable(group.get("name"), "node_selector"),
                                                        ", ".join(group.get("label_selectors") or []),
                                                        " ".join(group.get("label_selectors") or [])))
        for node in nodes:
            if node in owner and owner[node] != group.get("name"):
                problems.append("%s: node %s is also selected by group %s, and a node belongs to one group only; give "
                                "each group a node_selector with a label the other group's nodes do not carry"
                                % (group_variable(group.get("name"), "node_selector"), node, owner[node]))
            owner.setdefault(node, group.get("name"))
    return problems
