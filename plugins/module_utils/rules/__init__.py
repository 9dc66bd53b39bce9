# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure rules: what was read from the cluster (a snapshot), the plan and the settings in, sentences out (no cluster
access, no Ansible). plan_status runs them on the lists it read; roles only show or fail with the sentences."""


def unique(values):
    """``values`` without repeats, in first-seen order (the rules' sentences keep their order; values may be
    unhashable)."""
    seen = []
    for value in values:
        if value not in seen:
            seen.append(value)
    return seen
