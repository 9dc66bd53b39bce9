# Copyright: (c) 2025, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Entry points: render_all (variables -> ordered manifests), teardown_order and stale_objects."""


import copy

from ansible_collections.gpudirect.openshift.plugins.module_utils.render import groups
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import machineconfigs
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import input_fields
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import model as input_model
from ansible_collections.gpudirect.openshift.plugins.module_utils import names
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import operators
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import rdma
from ansible_collections.gpudirect.openshift.plugins.module_utils.render.waits import render_waits
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import workload

DEVICE_PLUGIN_KEYS = ("rdmaSharedDevicePlugin", "sriovDevicePlugin", "secondaryNetwork")


def _empty(errors, warnings):
    return {"errors": errors, "warnings": warnings, "manifests": [], "phases": {}, "teardown_order": [], "summary": {},
            "images": [], "waits": {}, "workload": {}}


def validate(variables, require_facts=False):
    """Only the checks: (errors, warnings). Accepts nic_selection auto before facts exist."""
    _models, errors, warnings = groups.build(variables, require_facts=require_facts)
    return errors, warnings


def memlock_pool_of(model):
    """The custom MachineConfigPool that gets its own CRI-O memlock MachineConfig, or None (it needs no NIC facts)."""
    return model["memlock_pool"] if machineconfigs.memlock_separate(model) else None


def validate_checks(variables):
    """validate() plus what preflight checks against the cluster before the NIC facts exist: {"errors", "warnings",
    "memlock_pool"} (the first group's, as in the rendered summary), so that NIC selection auto is checked as fully
    as NICs given by name (issue 31 point 4)."""
    models, errors, warnings = groups.build(variables, require_facts=False)
    return {"errors": errors, "warnings": warnings,
            "memlock_pool": memlock_pool_of(models[0]) if models and not errors else None}


def render_objects(model, render_errors):
    """[(phase, manifest)] of one group's configuration (the one renderer; render_all runs it once per node group)."""
    objects = []
    objects.extend(("machineconfig", mc) for mc in machineconfigs.machineconfigs(model, render_errors))
    objects.append(("nfd", operators.node_feature_discovery(model)))
    objects.append(("sriov_operator", operators.sriov_operator_config(model)))
    policy = operators.nic_cluster_policy(model)
    if policy:
        objects.append(("nic_cluster_policy", policy))
    objects.append(("gpu_cluster_policy", operators.gpu_cluster_policy(model)))
    pool = rdma.sriov_pool_config(model)
    if pool:
        objects.append(("sriov_pool", pool))
    objects.extend(("sriov_policy", p) for p in rdma.sriov_node_policies(model))
    objects.extend(("network", n) for n in rdma.networks(model))
    return objects


# The keys that name a configuration's MachineConfigs: the shared variables and, per node group, the group's own.
_MACHINECONFIG_NAME_KEYS = ("machineconfig_pool", "machineconfig_role", "machineconfig_name")


def owned_machineconfig_names(variables):
    """Every name the renderer gives a MachineConfig of the configuration ``variables`` describe (gpudirect_rdma_*,
    invalid or incomplete ones included), whichever items are opted in: the main MachineConfig of each pool (shared
    and per node group) and the memlock one of gpudirect_rdma_memlock_pool when that is another pool. Sorted.

    The collection never lists MachineConfigs (names.READ_BY_NAME_KINDS): teardown, diagnostics and the applier read
    these names with one GET each. Derived from the variables rather than recorded at apply time, because these are
    exactly the names hack/gen_clusterrole.py grants get and delete on (it renders the same variables with every item
    on), so each GET is one the automation's role allows, and no record can be lost or disagree with the cluster.
    A name given up by a later change of these variables is found with the earlier variables (docs/teardown.md)."""
    shared = {key: value for key, value in (variables or {}).items()
              if isinstance(key, str) and key.startswith(names.VARIABLE_PREFIX)
              and key[len(names.VARIABLE_PREFIX):] in input_fields.FIELDS and key != groups.VARIABLE}
    configurations = [shared]
    errors = input_model.Errors()
    raw_groups = (variables or {}).get(groups.VARIABLE)
    items = input_model._coerce(groups.FIELD, input_fields.FIELDS[groups.FIELD].kind, raw_groups,
                                errors) if groups.given(variables) else []
    for item in items or []:
        if isinstance(item, dict):
            own = {names.variable(key): value for key, value in item.items() if key in _MACHINECONFIG_NAME_KEYS}
            configurations.append(dict(shared, **own))
    found = set()
    for configuration in configurations:
        values, _provided, _errors = input_model.normalise(configuration)
        found.add(values["machineconfig_name"])
        if values["memlock_pool"] != values["machineconfig_role"]:
            found.add(machineconfigs.memlock_machineconfig_name(values))
    return sorted(name for name in found if isinstance(name, str) and name)


def render_all(variables):
    """Render every object of the configuration the variables describe (each node group's, merged).

    Returns {"errors", "warnings", "manifests": [{"phase", "order", "file", "manifest"}],
    "phases": {phase: [names]}, "teardown_order": [...], "summary": {...}}; with errors, nothing else.
    """
    models, errors, warnings = groups.build(variables, require_facts=True)
    if errors:
        return _empty(errors, warnings)
    render_errors = input_model.Errors()
    rendered = [(model, render_objects(model, render_errors)) for model in models]
    objects = groups.merge(rendered,
                           render_errors) if len(rendered) > 1 or models[0].get("node_group") else rendered[0][1]
    if render_errors.messages:
        return _empty(render_errors.messages, warnings)
    manifests = _number(objects)
    phases = {}
    for entry in manifests:
        phases.setdefault(entry["phase"], []).append(entry["file"])
    per_group = [(model, _summary(model, _number(copy.deepcopy(group_objects)))) for model, group_objects in rendered]
    summary = groups.merged_summary(per_group)
    summary["object_count"] = len(manifests)
    return {
        "errors": [],
        "warnings": warnings,
        "manifests": manifests,
        "phases": phases,
        "teardown_order": teardown_order(manifests),
        "summary": summary,
        "images": images_of(manifests),
        "waits": render_waits(manifests, models[0]),
        # not applied: the pod a job uses the rails with (render.yml writes it, docs/nccl-tests.md); the first group's
        "workload": workload.rail_job_pod(models[0], per_group[0][1]),
    }


def images_of(manifests):
    """[{"object", "field", "image"}] of every operand image the rendered objects name (repository/image:version, or a
    full reference), for mirroring to a disconnected registry. Images the operators choose themselves (their own
    defaults, and the operator bundles' images) are not here: see docs/upgrades.md."""
    found = []

    def walk(value, path, obj):
        if isinstance(value, dict):
            if value.get("repository") and value.get("image") and value.get("version"):
                found.append({"object": obj, "field": path,
                              "image": names.image_reference(value["repository"], value["image"], value["version"])})
            elif isinstance(value.get("image"), str) and "/" in value["image"]:
                found.append({"object": obj, "field": path, "image": value["image"]})
            for key, child in value.items():
                walk(child, "%s.%s" % (path, key), obj)

    for entry in manifests:
        manifest = entry["manifest"]
        walk(manifest.get("spec") or {}, "spec", "%s/%s" % (manifest["kind"], manifest["metadata"]["name"]))
    return found


def _number(objects):
    """Order = names.phase_order (phase base x 100 + position in the phase): apply ascending, delete descending."""
    seen = {}
    entries = []
    for phase, manifest in objects:
        # The label lets teardown and method switches find exactly what this collection created.
        manifest.setdefault("metadata", {}).setdefault("labels", {})[names.MANAGED_BY_LABEL] = names.MANAGED_BY_VALUE
        position = seen.get(phase, 0)
        seen[phase] = position + 1
        entry = {"phase": phase, "order": names.phase_order(phase, position), "manifest": manifest}
        entry["file"] = names.file_name(entry)
        entries.append(entry)
    return sorted(entries, key=lambda e: e["order"])


def _identity(entry):
    manifest = entry["manifest"]
    meta = {"name": manifest["metadata"]["name"]}
    if manifest["metadata"].get("namespace"):
        meta["namespace"] = manifest["metadata"]["namespace"]
    return {"phase": entry.get("phase"), "order": entry.get("order"),
            "manifest": {"apiVersion": manifest["apiVersion"], "kind": manifest["kind"], "metadata": meta}}


def teardown_order(manifests):
    """Identities of the rendered objects in safe delete order (reverse of apply)."""
    entries = [_as_entry(item) for item in manifests]
    return [_identity(e) for e in sorted(entries, key=lambda e: e["order"], reverse=True)]


def _as_entry(item):
    if "manifest" in item:
        return item
    kind = item.get("kind")
    phase = _phase_of_kind(kind)
    return {"phase": phase, "order": names.phase_order(phase, 0), "manifest": item}


def _phase_of_kind(kind):
    if kind in names.NETWORK_KINDS:
        return "network"
    return {
        "MachineConfig": "machineconfig", "NodeFeatureDiscovery": "nfd", "SriovOperatorConfig": "sriov_operator",
        "NicClusterPolicy": "nic_cluster_policy", "ClusterPolicy": "gpu_cluster_policy",
        "SriovNetworkPoolConfig": "sriov_pool", "SriovNetworkNodePolicy": "sriov_policy",
    }.get(kind, "network")


_STALE_RANK = {"network": 0, "sriov_policy": 1, "sriov_pool": 2, "nic_cluster_policy": 3}


def stale_objects(previous_manifests, new_manifests, include_machineconfigs=False):
    """What to delete before applying new_manifests over previous_manifests, in safe order.

    Network CRs first (they hold pod attachments to the resources), then SR-IOV policies (VFs
    go away, nodes drain), then the NicClusterPolicy when its device-plugin composition changes
    (the method switched: delete and re-create, as the chapter does). Each item:
    {"action": "delete" | "replace", "reason", "phase", "order", "manifest": identity}.
    MachineConfigs are left out unless asked for: deleting one reboots the pool.
    """
    previous = [_as_entry(item) for item in previous_manifests or []]
    new = {names.object_key(_as_entry(item)["manifest"]): _as_entry(item) for item in new_manifests or []}
    stale = []
    for entry in previous:
        key = names.object_key(entry["manifest"])
        phase = entry["phase"]
        if phase == "machineconfig" and not include_machineconfigs:
            continue
        if key not in new:
            item = _identity(entry)
            item.update({"action": "delete", "reason": "not part of the new configuration"})
            stale.append((_STALE_RANK.get(phase, 4), -entry["order"], item))
        elif entry["manifest"]["kind"] == "NicClusterPolicy":
            before = _plugin_parts(entry["manifest"])
            after = _plugin_parts(new[key]["manifest"])
            if before != after:
                item = _identity(entry)
                item.update({"action": "replace", "reason": "device plugin sections change from %s to %s"
                             % (", ".join(before) or "none", ", ".join(after) or "none")})
                stale.append((_STALE_RANK["nic_cluster_policy"], -entry["order"], item))
    return [item for _rank, _order, item in sorted(stale, key=lambda s: (s[0], s[1]))]


def _plugin_parts(manifest):
    spec = manifest.get("spec") or {}
    parts = []
    for key in DEVICE_PLUGIN_KEYS:
        value = spec.get(key)
        if isinstance(value, dict) and key == "secondaryNetwork":
            parts.extend("secondaryNetwork.%s" % sub for sub in sorted(value))
        elif value:
            parts.append(key)
    return parts


def _machineconfig_pools(model, manifests):
    """{pool: [MachineConfig names]} of the rendered MachineConfigs, by their role label."""
    rendered = [e["manifest"] for e in manifests if e["manifest"]["kind"] == "MachineConfig"]
    pools = {}
    for manifest in rendered:
        role = manifest["metadata"]["labels"][names.MCO_ROLE_LABEL]
        pool = model["machineconfig_pool"] if role == model["machineconfig_role"] else role
        pools.setdefault(pool, []).append(manifest["metadata"]["name"])
    memlock_pool = model["memlock_pool"] if machineconfigs.memlock_separate(model) else None
    if memlock_pool and model["machineconfig_role"] == "worker":
        pools[memlock_pool] = sorted(set(pools.get(memlock_pool, []) + pools.get(model["machineconfig_pool"], [])))
    return pools


def _summary(model, manifests):
    config = rdma.configuration(model)
    resources = rdma.resource_names(model)
    network_objects = [e["manifest"] for e in manifests if e["phase"] == "network"]
    networks = [{
        "kind": n["kind"], "name": n["metadata"]["name"], "namespace": n["spec"]["networkNamespace"],
        # Pods attach with this annotation value in their own namespace.
        "annotation": n["metadata"]["name"],
    } for n in network_objects]
    reboots = []
    pools = _machineconfig_pools(model, manifests)
    for pool, machineconfig_names in sorted(pools.items()):
        reboots.append("MachineConfig %s: one rolling reboot of pool %s" % (", ".join(machineconfig_names), pool))
    if config.vf_policy:
        reboots.append(
            "SriovNetworkNodePolicy: nodes drain and usually reboot once while VFs and firmware are configured")
    if model.get("sriov_pool_rdma_mode") and config.vf_policy:
        reboots.append(
            "SriovNetworkPoolConfig rdmaMode %s: every node of the pool reboots" % model["sriov_pool_rdma_mode"])
    fabric_groups = rdma.fabric_groups(model)
    groups = [{k: copy.deepcopy(g[k]) for k in ("resource_name", "network_name", "interfaces", "pci_addresses",
                                                "device_ids", "nodes")}
              for _config, g in fabric_groups]
    for group, (group_config, full) in zip(groups, fabric_groups):
        group["fabric"] = group_config.fabric
        if group_config.fabric != config.fabric:
            group["variable"] = names.variable("second_fabric")  # where reports send the user to fix this group
        if full.get("master"):
            group["master"] = full["master"]
        if full.get("ipam_range"):
            group["ipam_range"] = full["ipam_range"]
    fabrics = [config.fabric] + [c.fabric for c, _g in fabric_groups if c.fabric != config.fabric][:1]
    return {
        "configuration": config.label + "".join(" + %s" % f for f in fabrics[1:]),
        "fabrics": fabrics,
        "configuration_number": config.number,
        "method": config.method,
        "fabric": config.fabric,
        "in_chapter": config.in_chapter,
        "resources": resources,
        "pod_resources": {resource: 1 for resource in resources},
        "networks": networks,
        "nic_selection": {"source": model["selection"]["source"], "groups": groups},
        "gpu_rdma_mode": model["gpu_rdma_mode"],
        "nic_driver": model["nic_driver"],
        "machineconfig_pool": model["machineconfig_pool"],
        # {pool: [MachineConfig names it renders]}: the memlock pool is a custom pool of the worker role, so it renders
        # the main pool's MachineConfig too (machine-config-operator docs/custom-pools.md).
        "machineconfig_pools": pools,
        "memlock_pool": memlock_pool_of(model),
        # The nodes the SR-IOV policies select: the allocatable waits watch only these.
        "node_selector": {key: names.label_text(value) for key, value in model["node_selector"].items()},
        "reboots": reboots,
        # Ports whose udev rules come from facts that pods reported: checked against the SR-IOV node states (a second
        # source) before a policy is written (render/reported.py udev_address_problems).
        "udev_from_facts": [{k: p[k] for k in ("node", "pci_address", "address", "netdev", "fabric")}
                            for p in machineconfigs.facts_udev_ports(model)],
        "object_count": len(manifests),
    }
