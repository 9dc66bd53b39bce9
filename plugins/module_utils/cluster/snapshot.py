# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""A read-only view of the cluster made of one list request per kind.

``SnapshotClient`` has ClusterClient's interface, so the installer, the applier and the condition
code run on it unchanged: reads of a prefetched kind are answered from memory, reads of any other
kind go to the API, and writes are never sent (they are recorded by the callers as changes, as in
check mode). That is how plan_status decides, from one list per kind, whether a converge would
change or wait on anything. The kinds read by name only (MachineConfigs, module_utils/names.py READ_BY_NAME_KINDS) are
never listed: prefetch_names reads the planned names, one GET each.
"""


import copy
import re

from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.api_errors import ClusterError
from ansible_collections.gpudirect.openshift.plugins.module_utils.label_selectors import (  # noqa: F401
    labels_match, parse_label_selector)


def selected_nodes(nodes, label_selectors):
    """Names of the ``nodes`` that match every one of ``label_selectors``, sorted."""
    requirements = [r for selector in label_selectors or [] for r in parse_label_selector(selector)]
    return sorted(n["metadata"]["name"] for n in nodes if labels_match(requirements, n["metadata"].get("labels")))


def _name_from_field_selector(field_selector):
    """The name of a ``metadata.name=X`` field selector, None for no selector; ValueError for others."""
    if not field_selector:
        return None
    match = re.match(r"^\s*metadata\.name\s*==?\s*([^,\s]+)\s*\Z", field_selector)
    if not match:
        raise ValueError(field_selector)
    return match.group(1)


class SnapshotClient:
    """ClusterClient's read interface over prefetched lists; writes are never sent.

    ``kinds`` is a list of (api_version, kind, namespace or None, label selector or None): each is
    listed once. A kind the server does not serve is remembered as empty. ``reads`` counts the
    requests made, prefetch and fall-through reads alike.
    """

    dry_run = False
    skip_writes = True

    def __init__(self, cluster):
        self.cluster = cluster
        self.retry = cluster.retry
        self._resources = {}
        self._kinds = {}
        self.reads = 0
        self.fallthrough = []

    # -- discovery -------------------------------------------------------------------------------

    def resource(self, api_version, kind):
        key = (api_version, kind)
        if key not in self._resources:
            self._resources[key] = self.cluster.resource(api_version, kind)
        return self._resources[key]

    def require(self, api_version, kind):
        resource = self.resource(api_version, kind)
        if resource is None:
            raise ClusterError(
                "The API server does not serve %s %s (is the operator that owns it installed?)" % (api_version, kind))
        return resource

    # -- prefetch --------------------------------------------------------------------------------

    def prefetch(self, api_version, kind, namespace=None, label_selector=None):
        """List a kind once (cluster-wide unless ``namespace``); later reads of it come from memory."""
        key = (api_version, kind)
        if key in self._kinds:
            return
        resource = self.resource(api_version, kind)
        if resource is None:
            self._kinds[key] = {"namespace": namespace, "selector": parse_label_selector(label_selector), "items": []}
            return
        items, _rv = self.cluster.list(resource, namespace=namespace if resource.namespaced else None,
                                       label_selector=label_selector)
        self.reads += 1
        self._kinds[key] = {"namespace": namespace if resource.namespaced else None,
                            "selector": parse_label_selector(label_selector), "items": items}

    def prefetch_names(self, api_version, kind, names):
        """Read a cluster-scoped kind that is read by name only (never listed) with one GET per name; later reads of
        those names come from memory, and items() holds the ones that exist."""
        key = (api_version, kind)
        resource = self.resource(api_version, kind)
        entry = self._kinds.setdefault(key, {"namespace": None, "selector": [], "items": [], "names": set()})
        for name in sorted(set(names) - entry["names"]) if resource is not None else []:
            self.reads += 1
            found = self.cluster.get(resource, name)
            entry["names"].add(name)
            if found is not None:
                found.setdefault("apiVersion", api_version)
                found.setdefault("kind", kind)
                entry["items"].append(found)

    def _covered(self, resource, namespace):
        """The prefetched entry that holds every object of ``resource`` in ``namespace``, or None."""
        entry = self._kinds.get((resource.group_version, resource.kind))
        if entry is None or entry["selector"] or "names" in entry:
            return None
        if entry["namespace"] is not None and (namespace is None or namespace != entry["namespace"]):
            return None
        return entry

    # -- reads -----------------------------------------------------------------------------------

    def raw_get(self, path):
        self.reads += 1
        return self.cluster.raw_get(path)

    def items(self, api_version, kind):
        """Everything prefetched of a kind (as listed; empty when not served or not prefetched)."""
        entry = self._kinds.get((api_version, kind))
        return copy.deepcopy(entry["items"]) if entry else []

    def get(self, resource, name, namespace=None):
        named = self._kinds.get((resource.group_version, resource.kind)) or {}
        if name in named.get("names", ()):
            return self._find(named, name, None)
        entry = self._covered(resource, namespace if resource.namespaced else None)
        if entry is None:
            entry = self._kinds.get((resource.group_version, resource.kind))
            # A name in a selector-filtered prefetch is still that object; its absence proves nothing.
            if entry is not None:
                found = self._find(entry, name, namespace if resource.namespaced else None)
                if found is not None:
                    return found
            return self._read_through("get", resource, name, namespace)
        return self._find(entry, name, namespace if resource.namespaced else None)

    @staticmethod
    def _find(entry, name, namespace):
        matches = [i for i in entry["items"]
                   if i["metadata"]["name"] == name
                   and (namespace is None or i["metadata"].get("namespace") == namespace)]
        return copy.deepcopy(matches[0]) if len(matches) == 1 else None

    def list(self, resource, namespace=None, label_selector=None, field_selector=None):
        entry = self._covered(resource, namespace if resource.namespaced else None)
        try:
            name = _name_from_field_selector(field_selector)
            selector = parse_label_selector(label_selector)
        except ValueError:
            entry = None
        if entry is None:
            self.reads += 1
            self.fallthrough.append(("list", resource.group_version, resource.kind, namespace))
            return self.cluster.list(resource, namespace=namespace, label_selector=label_selector,
                                     field_selector=field_selector)
        items = [copy.deepcopy(i) for i in entry["items"]
                 if (not resource.namespaced or namespace is None or i["metadata"].get("namespace") == namespace)
                 and (name is None or i["metadata"]["name"] == name)
                 and labels_match(selector, i["metadata"].get("labels"))]
        return items, None

    def _read_through(self, verb, resource, name, namespace):
        self.reads += 1
        self.fallthrough.append((verb, resource.group_version, resource.kind, namespace))
        return self.cluster.get(resource, name, namespace)

    # -- writes: never sent; callers record them as changes ---------------------------------------

    def create(self, resource, body):
        return copy.deepcopy(body)

    def replace(self, resource, body):
        return copy.deepcopy(body)

    def merge_patch(self, resource, name, namespace, patch):
        return None

    def server_side_apply(self, resource, body, field_manager, force=True):
        return None

    def json_patch(self, resource, name, namespace, operations, field_manager=None):
        return None

    def delete(self, resource, name, namespace=None, propagation_policy="Background"):
        return {}

    def update(self, resource, name, namespace, mutate, conflict_attempts=5, current=None):
        current = self.get(resource, name, namespace) if current is None else current
        if current is None:
            return None, None, False
        desired = copy.deepcopy(current)
        if mutate(desired) is False or desired == current:
            return current, current, False
        return current, desired, True

    def watch_stream(self, *args, **kwargs):
        raise ClusterError("a snapshot cannot watch; plan_status never waits")
