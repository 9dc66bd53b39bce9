# Copyright (c) 2026 gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""upgrade_plan_report and upgrade_outcome: the upgrade planning rules (module_utils/rules/upgrade_plan.py) for the
preflight role's upgrade mode.

Documentation lives next to this file (upgrade_plan_report.yml, upgrade_outcome.yml).
"""


from ansible.errors import AnsibleFilterError

from ansible_collections.gpudirect.openshift.plugins.module_utils.rules import upgrade_plan


def _images(render):
    return [entry.get("image") for entry in (render or {}).get("images") or []]


def upgrade_plan_report(status, renders=None, host="", max_parallel=None):
    if not isinstance(status, dict) or "upgrade_plan" not in status:
        raise AnsibleFilterError("upgrade_plan_report: expects the result of gpudirect.openshift.plan_status")
    if renders is not None and not isinstance(renders, list):
        raise AnsibleFilterError("upgrade_plan_report: renders must be the results of the two gpudirect_manifests runs")
    plan = status["upgrade_plan"]
    renders = renders or []
    changes = upgrade_plan.upgrade_changes(plan, _images(renders[0] if renders else None),
                                           _images(renders[-1] if renders else None),
                                           (status.get("cluster") or {}).get("summary"), max_parallel)
    return {"plan": plan, "automatic": status.get("upgrade_automatic") or [], "changes": changes,
            "lines": upgrade_plan.plan_lines(host, plan, changes, status.get("upgrade_automatic") or []),
            "next_step": upgrade_plan.next_step(plan), "targets": upgrade_plan.upgrade_targets(plan)}


def upgrade_outcome(plan, status_after):
    if not isinstance(plan, list):
        raise AnsibleFilterError("upgrade_outcome: expects the upgrade plan (plan_status upgrade_plan), a list")
    if not isinstance(status_after, dict):
        raise AnsibleFilterError(
            "upgrade_outcome: expects the result of gpudirect.openshift.plan_status after the upgrade")
    outcome = upgrade_plan.upgrade_outcome(plan, status_after.get("operator_versions"))
    return {"operators": outcome, "keep_these_pins": upgrade_plan.pins_to_keep(plan),
            "line": upgrade_plan.upgraded_line(outcome)}


class FilterModule:
    """Upgrade planning."""

    def filters(self):
        return {"upgrade_plan_report": upgrade_plan_report, "upgrade_outcome": upgrade_outcome}
