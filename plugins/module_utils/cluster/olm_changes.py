# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""What one olm_operator run touched: the objects, each with the action taken (or, in check mode, that would be
taken), and the diffs of those it writes. Kept apart from cluster/operator_installer.py, which records into it.
"""

from ansible_collections.gpudirect.openshift.plugins.module_utils.rules.olm_install import strip_for_diff


class Changes:
    """Objects the run touched (or would touch in check mode) and their diffs."""

    WRITES = ("create", "update", "approve", "delete")

    def __init__(self):
        self.objects = []
        self.diffs = []

    def record(self, action, kind, name, namespace=None, before=None, after=None):
        entry = {"kind": kind, "name": name, "action": action}
        if namespace:
            entry["namespace"] = namespace
        self.objects.append(entry)
        if action in self.WRITES:
            ref = "%s %s" % (kind, "%s/%s" % (namespace, name) if namespace else name)
            self.diffs.append({"before_header": ref, "after_header": ref,
                               "before": strip_for_diff(before), "after": strip_for_diff(after)})

    @property
    def changed(self):
        return any(o["action"] in self.WRITES for o in self.objects)
