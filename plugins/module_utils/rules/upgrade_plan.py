# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Upgrade planning rules (site.yml with gpudirect_upgrade=true, playbooks/upgrade.yml, docs/upgrades.md).

Pure functions of what plan_status read (``operator_versions``: per operator the installed CSV and the upgrade OLM
offers, and the cluster summary), the operators' settings and the operand images rendered for the installed and the
offered versions. They decide which operators the run upgrades, what that changes on the nodes, the sentences shown
before the approval, and afterwards whether each upgrade happened and which pins to keep.
"""


from ansible_collections.gpudirect.openshift.plugins.module_utils.rules import unique as _unique

import re

# The gpudirect_rdma_* variables that choose the operand releases (render/releases.py), per operator role.
OPERAND_VERSION_VARIABLES = {
    "nvidia_gpu_operator": "gpudirect_rdma_gpu_operator_version",
    "nvidia_network_operator": "gpudirect_rdma_network_operator_version",
}
GPU_OPERATOR_ROLE = "nvidia_gpu_operator"
# The NVIDIA Network Operator's DOCA driver container: a new image reloads the NIC driver on every NIC node.
NIC_DRIVER_IMAGE = "/doca-driver:"
REBOOTS = "none: an operator upgrade changes no MachineConfig"


def csv_version(csv):
    """25.3.4 of gpu-operator-certified.v25.3.4 (the text after the package name and its first dot, less a 'v')."""
    return re.sub(r"^[^.]*[.]v?", "", csv or "")


def automatic_packages(operators):
    """The packages OLM upgrades by itself (install_plan_approval Automatic): the run plans only the others."""
    return [o["package"] for o in operators if o.get("install_plan_approval") == "Automatic"]


def planned_upgrades(operator_versions, operators, operator_roles, packages=None):
    """One entry per operator with Manual approval that OLM offers an upgrade for, in install order, limited to
    ``packages`` (gpudirect_upgrade_packages) when given: package, namespace, channel, role, from, to, their versions
    and the line shown."""
    automatic = automatic_packages(operators)
    plan = []
    for item in operator_versions or []:
        if not item.get("upgrade_available") or item["package"] in automatic or (
                packages and item["package"] not in packages):
            continue
        plan.append({
            "package": item["package"], "namespace": item["namespace"], "channel": item["channel"],
            "role": operator_roles.get(item["package"], item["package"]),
            "from": item["installed_csv"], "to": item["upgrade_available"],
            "from_version": csv_version(item["installed_csv"]), "to_version": csv_version(item["upgrade_available"]),
            "line": "%s in %s: %s -> %s (channel %s)" % (item["package"], item["namespace"], item["installed_csv"],
                                                         item["upgrade_available"], item["channel"]),
        })
    return plan


def operand_versions(plan):
    """The operand release variables to render before and after the upgrade ('' keeps the renderer's choice)."""
    by_role = {entry["role"]: entry for entry in plan}
    return {when: {variable: (by_role.get(role) or {}).get(key, "")
                   for role, variable in OPERAND_VERSION_VARIABLES.items()}
            for when, key in (("before", "from_version"), ("after", "to_version"))}


def upgrade_changes(plan, images_before, images_after, cluster_summary, max_parallel=None):
    """What the upgrade changes on the nodes: operand images added and removed, the nodes whose GPU driver reloads (a
    new GPU Operator brings its own default driver) and whose NIC driver reloads (a new DOCA driver image), at most
    the names plan_status sampled with every node counted, and how many GPU nodes roll at a time."""
    before, after = _unique(images_before), _unique(images_after)
    added = [i for i in after if i not in before]
    gpu_moves = any(entry["role"] == GPU_OPERATOR_ROLE for entry in plan)
    nic_moves = any(NIC_DRIVER_IMAGE in image for image in added)
    summary = cluster_summary or {}
    return {
        "images_removed": [i for i in before if i not in after],
        "images_added": added,
        "gpu_driver_reload_nodes": summary.get("gpu_nodes") if gpu_moves else [],
        "gpu_driver_reload_count": summary.get("gpu_node_count") if gpu_moves else 0,
        "nic_driver_reload_nodes": summary.get("nic_nodes") if nic_moves else [],
        "nic_driver_reload_count": summary.get("nic_node_count") if nic_moves else 0,
        "reboots": REBOOTS,
        "max_unavailable_gpu_nodes": max_parallel or 1,
    }


def _reloads(count, nodes):
    if int(count or 0) <= 0:
        return "no node"
    return "%s node(s): %s%s" % (count, ", ".join(nodes or []), " ..." if int(count) > len(nodes or []) else "")


def plan_lines(host, plan, changes, automatic):
    """The sentences shown before the approval."""
    if plan:
        lines = ["Upgrade plan for %s, in this order:" % host] + [entry["line"] for entry in plan] + [
            "Operand images added: %s" % (", ".join(changes["images_added"]) or "none"),
            "Operand images no longer used: %s" % (", ".join(changes["images_removed"]) or "none"),
            "GPU driver reloads on: %s" % _reloads(changes["gpu_driver_reload_count"],
                                                   changes["gpu_driver_reload_nodes"]),
            "NIC driver reloads on: %s" % _reloads(changes["nic_driver_reload_count"],
                                                   changes["nic_driver_reload_nodes"]),
            "Drivers roll at most %s node(s) at a time (gpudirect_rdma_driver_upgrade_max_parallel); reboots: %s"
            % (changes["max_unavailable_gpu_nodes"], changes["reboots"])]
    else:
        lines = ["No operator upgrade is offered on %s for the operators with Manual approval." % host]
    if automatic:
        lines.append("OLM upgrades %s by itself (Automatic approval)." % ", ".join(automatic))
    return lines


def next_step(plan):
    """What to do after a plan that was not approved (or is empty)."""
    if plan:
        return "Nothing was changed. To upgrade as planned, run again with -e gpudirect_upgrade_approve=true."
    return "Nothing was changed."


def upgrade_targets(plan):
    """Package to the CSV the approved run pins it to (olm_install reads it as preflight_upgrade_to)."""
    return {entry["package"]: entry["to"] for entry in plan}


def upgrade_outcome(plan, operator_versions_after):
    """Each planned operator with the CSV it runs now (installed_now) and whether that is the planned one (done)."""
    installed = {item["package"]: item.get("installed_csv") for item in operator_versions_after or []}
    return [dict(entry, installed_now=installed.get(entry["package"]),
                 done=installed.get(entry["package"]) == entry["to"])
            for entry in plan]


def pins_to_keep(plan):
    """The inventory pins that keep the new versions on later runs (<role>_starting_csv)."""
    return {"%s_starting_csv" % entry["role"]: entry["to"] for entry in plan}


def upgraded_line(outcome):
    """The sentence that says what each planned operator runs after the upgrade."""
    return "Upgraded: %s" % ", ".join("%s: %s" % (entry["package"], entry["installed_now"]) for entry in outcome)
