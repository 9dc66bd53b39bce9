# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a teardown leaves of the collection's objects, and why; and the operator namespaces a later teardown may still
remove (issue 31 point 7). Pure functions over objects read from the cluster.

An operator namespace carries the managed-by label only when olm_operator created it (cluster/operator_installer.py).
Once its operator is gone (no Subscription left in it), nothing but the namespace remains, so a later run with
teardown_remove_namespaces can remove it: the label is the proof it was the collection's. A namespace that holds a
Subscription without the collection's OperatorGroup runs an operator someone else installed, and stays.
"""


def _names(objects):
    return sorted(((item or {}).get("metadata") or {}).get("name") for item in objects or []
                  if (item or {}).get("metadata"))


def _namespaces_of(objects):
    return {((item or {}).get("metadata") or {}).get("namespace") for item in objects or []}


def orphaned_namespaces(namespaces, subscriptions, operator_groups, operator_namespaces):
    """The collection's operator namespaces (labelled, among ``operator_namespaces``) that hold neither a Subscription
    nor the collection's OperatorGroup: their operator was removed by an earlier teardown."""
    busy = _namespaces_of(subscriptions) | _namespaces_of(operator_groups)
    wanted = set(operator_namespaces or [])
    return [name for name in _names(namespaces) if name in wanted and name not in busy]


def leftovers(namespaces, subscriptions, operator_groups, machineconfigs, operator_namespaces,
              remove_machineconfigs=False, remove_operators=True, remove_namespaces=False):
    """One message per kind of object of the collection that this teardown leaves, with the setting that removes it
    or the reason it stays. ``namespaces``, ``operator_groups`` and ``machineconfigs`` are the labelled ones;
    ``subscriptions`` are all Subscriptions."""
    left = []
    machineconfig_names = _names(machineconfigs)
    if machineconfig_names and not remove_machineconfigs:
        left.append("MachineConfig %s (teardown_machineconfigs=true removes them; every node of their pool drains and "
                    "reboots once)" % ", ".join(machineconfig_names))
    ours = set(_namespaces_of(operator_groups))
    if ours and not remove_operators:
        left.append("the operators in %s (teardown_operators=true removes them)" % ", ".join(sorted(ours)))
    wanted = set(operator_namespaces or [])
    labelled = [name for name in _names(namespaces) if name in wanted]
    foreign = sorted((_namespaces_of(subscriptions) - ours) & set(labelled))
    if foreign:
        left.append("Namespace %s: an operator the collection did not install runs there (its Subscription), so it "
                    "stays" % ", ".join(foreign))
    removable = [name for name in labelled if name not in foreign]
    if removable and not (remove_namespaces and remove_operators):
        left.append("Namespace %s (teardown_remove_namespaces=true removes them%s)" % (
            ", ".join(removable), "" if remove_operators else ", with teardown_operators=true"))
    return left
