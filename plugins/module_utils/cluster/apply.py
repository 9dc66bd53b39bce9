# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Apply a set of manifests with one list request per kind, and prune what the set no longer holds.

Objects are written by server-side apply under the field manager ``gpudirect.openshift`` (force: the fields we
set are ours). The API server records in ``metadata.managedFields`` which fields each manager owns, so the
decision needs no annotation that someone else may rewrite (the network operator replaces the annotations of
MacvlanNetwork/IPoIBNetwork): an object is left alone, with no request, when our manager owns exactly the
fields we desire and each has our value; otherwise one apply sets them, and the server removes the fields we
owned and no longer desire. kubernetes.core.k8s would read each object again (``apply_object``) or patch every
time; this reads each (kind, namespace) once.

Objects written earlier by client-side apply (``kubectl.kubernetes.io/last-applied-configuration``, fields owned
by an Update manager) are migrated once as kubectl does (k8s.io/client-go util/csaupgrade): the fields of the
manager that wrote the annotation become our Apply manager's, and the annotation goes, in one JSON patch.
"""


import copy
import json
import time

from ansible_collections.kubernetes.core.plugins.module_utils.apply import LAST_APPLIED_CONFIG_ANNOTATION
from ansible.module_utils.common.dict_transformations import dict_merge
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.api_errors import (
    ClusterError, api_message, api_status)
from ansible_collections.gpudirect.openshift.plugins.module_utils.label_selectors import (
    labels_match, parse_label_selector)
from ansible_collections.gpudirect.openshift.plugins.module_utils.names import (
    MANAGED_BY_LABEL, MANAGED_BY_VALUE, READ_BY_NAME_KINDS)
from ansible_collections.gpudirect.openshift.plugins.module_utils.rules import webhooks

FIELD_MANAGER = "gpudirect.openshift"
LAST_APPLIED_FIELD = ("f:metadata", "f:annotations", "f:" + LAST_APPLIED_CONFIG_ANNOTATION)
# metadata the API server never records in managedFields
_UNTRACKED_META = frozenset(["name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
                             "deletionTimestamp", "deletionGracePeriodSeconds", "managedFields", "selfLink",
                             "generateName"])


def identity(obj):
    meta = obj.get("metadata") or {}
    return (obj.get("apiVersion"), obj.get("kind"), meta.get("namespace"), meta.get("name"))


def describe(obj):
    api_version, kind, namespace, name = identity(obj)
    return "%s %s%s" % (kind, "%s/" % namespace if namespace else "", name)


def _strip(obj):
    """What a diff should show: no server bookkeeping."""
    if obj is None:
        return None
    clean = copy.deepcopy(obj)
    meta = clean.get("metadata") or {}
    for key in ("managedFields", "resourceVersion", "uid", "generation", "creationTimestamp"):
        meta.pop(key, None)
    (meta.get("annotations") or {}).pop(LAST_APPLIED_CONFIG_ANNOTATION, None)
    if "annotations" in meta and not meta["annotations"]:
        del meta["annotations"]
    clean.pop("status", None)
    return clean


_MISSING = object()


def managed_entry(obj, manager=FIELD_MANAGER, operation="Apply"):
    """The managedFields entry of ``manager`` for ``operation`` on the main resource (not a subresource), or None."""
    for entry in (obj.get("metadata") or {}).get("managedFields") or []:
        if entry.get("manager") == manager and entry.get("operation") == operation and not entry.get("subresource"):
            return entry
    return None


def applied_body(desired):
    """What server-side apply records of a manifest: no apiVersion, kind, status, nor the metadata it never tracks."""
    body = {k: v for k, v in desired.items() if k not in ("apiVersion", "kind", "status", "metadata")}
    meta = {k: v for k, v in (desired.get("metadata") or {}).items() if k not in _UNTRACKED_META}
    if meta:
        body["metadata"] = meta
    return body


def _item_matches(item, key):
    return isinstance(item, dict) and all(k in item and item[k] == v for k, v in key.items())


def owns_exactly(desired, current, fields):
    """Whether the fieldsV1 tree ``fields`` names exactly the fields of ``desired`` (so there is nothing to add and
    nothing to prune) and ``current`` holds each with the desired value. List items are matched by the key or value
    fieldsV1 records (``k:{...}``, ``v:...``), so no schema is needed."""
    children = {k: v for k, v in (fields or {}).items() if k != "."}
    if not children:  # a leaf: scalar, atomic list or map, empty object
        return current is not _MISSING and current == desired
    if isinstance(desired, dict):
        if not isinstance(current, dict) or set(children) != {"f:" + k for k in desired}:
            return False
        return all(owns_exactly(v, current.get(k, _MISSING), children["f:" + k]) for k, v in desired.items())
    if not isinstance(desired, list) or not isinstance(current, list) or len(children) != len(desired):
        return False
    for child, sub in children.items():
        prefix, _sep, text = child.partition(":")
        try:
            value = json.loads(text)
        except ValueError:
            return False
        if prefix == "v":
            if value not in desired or value not in current:
                return False
        elif prefix == "k" and isinstance(value, dict):
            wanted = [i for i in desired if _item_matches(i, value)]
            found = [i for i in current if _item_matches(i, value)]
            if len(wanted) != 1 or len(found) != 1 or not owns_exactly(wanted[0], found[0], sub):
                return False
        else:
            return False
    return True


def in_sync(existing, desired, manager=FIELD_MANAGER):
    """True when applying ``desired`` would change nothing: our Apply entry, at the desired apiVersion, owns exactly
    the desired fields and the object holds our values (another manager's later change to one of them moves it
    away from us, so it is re-applied)."""
    entry = managed_entry(existing, manager)
    if entry is None or entry.get("apiVersion") != desired.get("apiVersion") \
            or entry.get("fieldsType", "FieldsV1") != "FieldsV1":
        return False
    return owns_exactly(applied_body(desired), existing, entry.get("fieldsV1") or {})


def _has_path(fields, path):
    node = fields or {}
    for elem in path:
        if not isinstance(node, dict) or elem not in node:
            return False
        node = node[elem]
    return True


def _union(left, right):
    out = copy.deepcopy(left or {})
    for key, value in (right or {}).items():
        out[key] = _union(out.get(key), value)
    return out


def csa_managers(obj):
    """Update managers of the main resource that own the last-applied annotation: the client-side appliers."""
    names = []
    for entry in (obj.get("metadata") or {}).get("managedFields") or []:
        if entry.get("operation") == "Update" and not entry.get("subresource") and entry.get("manager") not in names \
                and _has_path(entry.get("fieldsV1"), LAST_APPLIED_FIELD):
            names.append(entry.get("manager"))
    return names


def upgraded_managed_fields(entries, csa_manager, ssa_manager=FIELD_MANAGER):
    """managedFields with ``csa_manager``'s Update fields moved into ``ssa_manager``'s Apply entry, following
    k8s.io/client-go util/csaupgrade (upgradedManagedFields): without an Apply entry the newest Update entry of
    the client-side manager becomes it; an Update entry of the same apiVersion is merged in; the others go."""
    entries = copy.deepcopy(entries or [])

    def is_csa(entry):
        return (entry.get("manager") == csa_manager and entry.get("operation") == "Update"
                and not entry.get("subresource"))

    target = next((e for e in entries if e.get("manager") == ssa_manager and e.get("operation") == "Apply"
                   and not e.get("subresource")), None)
    if target is None:
        target = next((e for e in entries if is_csa(e)), None)
        if target is None:
            return entries
        target.update(manager=ssa_manager, operation="Apply")
    merged = next((e for e in entries if is_csa(e) and e.get("apiVersion") == target.get("apiVersion")), None)
    if merged is not None:
        target["fieldsV1"] = _union(target.get("fieldsV1"), merged.get("fieldsV1"))
    return [e for e in entries if not is_csa(e)]


def _pointer(*parts):
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def migration_patch(existing, manager=FIELD_MANAGER):
    """JSON patch operations that move an object written by client-side apply to server-side apply, or None.

    Needed once: the object carries last-applied-configuration and no Apply entry of ours. The fields of the
    manager(s) that wrote the annotation become ours (so fields dropped from the input since are pruned by the
    next apply), and the annotation is removed; the resourceVersion makes a concurrent write a 409, as csaupgrade
    does, instead of overwriting managedFields someone just changed."""
    meta = existing.get("metadata") or {}
    if LAST_APPLIED_CONFIG_ANNOTATION not in (meta.get("annotations")
                                              or {}) or managed_entry(existing, manager) is not None:
        return None
    entries = meta.get("managedFields") or []
    upgraded = entries
    for name in csa_managers(existing):
        upgraded = upgraded_managed_fields(upgraded, name, manager)
    operations = []
    if upgraded != entries:
        operations.append({"op": "replace", "path": "/metadata/managedFields", "value": upgraded})
    if len(meta["annotations"]) == 1:  # no empty map left behind, which the patch would make a field of ours
        operations.append({"op": "remove", "path": "/metadata/annotations"})
    else:
        operations.append({"op": "remove", "path": _pointer("metadata", "annotations", LAST_APPLIED_CONFIG_ANNOTATION)})
    operations.append({"op": "replace", "path": "/metadata/resourceVersion", "value": meta.get("resourceVersion")})
    return operations


def migrated(existing, operations):
    """The object ``migration_patch``'s operations produce (for check mode without server-side dry run)."""
    result = copy.deepcopy(existing)
    meta = result["metadata"]
    for operation in operations:
        if operation["path"] == "/metadata/managedFields":
            meta["managedFields"] = copy.deepcopy(operation["value"])
    annotations = meta.get("annotations") or {}
    annotations.pop(LAST_APPLIED_CONFIG_ANNOTATION, None)
    if not annotations:
        meta.pop("annotations", None)
    return result


def parse_kind(text):
    """'group/version/Kind' or 'v1/Kind' -> (apiVersion, kind)."""
    api_version, _sep, kind = text.rpartition("/")
    if not api_version or not kind:
        raise ValueError(
            "prune_kinds entry %r is not apiVersion/Kind, for example mellanox.com/v1alpha1/MacvlanNetwork" % text)
    return api_version, kind


def validate_manifests(manifests):
    """Every problem with the input at once, before any request."""
    problems = []
    seen = set()
    for index, obj in enumerate(manifests):
        where = "manifests[%d]" % index
        if not isinstance(obj, dict):
            problems.append("%s is not a mapping" % where)
            continue
        for key in ("apiVersion", "kind"):
            if not obj.get(key):
                problems.append("%s has no %s" % (where, key))
        if not (obj.get("metadata") or {}).get("name"):
            problems.append("%s has no metadata.name" % where)
        key = identity(obj)
        if key in seen:
            problems.append("%s repeats %s" % (where, describe(obj)))
        seen.add(key)
    return problems


class ManifestApplier:
    """One apply run. ``results`` lists what happened to each object, in order."""

    def __init__(self, cluster, label_managed=True, webhook_grace_period=webhooks.DEFAULT_WEBHOOK_GRACE_SECONDS,
                 sleep=time.sleep, clock=time.monotonic, before_first_write=None):
        self.cluster = cluster
        # Called once, before the run's first write (a wait's baseline: the objects as they were before any change).
        self._before_first_write = before_first_write
        self.webhook_grace_period = webhook_grace_period
        self._sleep, self._clock = sleep, clock
        self.check_mode = bool(cluster.dry_run or cluster.skip_writes)
        self.label_managed = label_managed
        self.results = []
        self.diffs = []
        self._resources = {}
        self._listed = {}

    def resource(self, api_version, kind):
        key = (api_version, kind)
        if key not in self._resources:
            self._resources[key] = self.cluster.require(api_version, kind)
        return self._resources[key]

    def _existing(self, resource, namespace, label_selector=None):
        """Objects of a kind in a namespace (or cluster-wide), by name; one list request per key."""
        key = (resource.group_version, resource.kind, namespace if resource.namespaced else None, label_selector)
        if key not in self._listed:
            items, _rv = self.cluster.list(resource, namespace=key[2], label_selector=label_selector)
            self._listed[key] = {(i["metadata"].get("namespace"), i["metadata"]["name"]): i for i in items}
        return self._listed[key]

    def _named(self, resource, namespace, name):
        """One object, from the kind's list (one request per kind and namespace), or for a kind read by name only
        (READ_BY_NAME_KINDS) from one GET by name; None when it does not exist."""
        if (resource.group_version, resource.kind) not in READ_BY_NAME_KINDS:
            return self._existing(resource, namespace).get((namespace, name))
        key = (resource.group_version, resource.kind, namespace, name)
        if key not in self._listed:
            found = self.cluster.get(resource, name, namespace)
            self._listed[key] = {(namespace, name): found} if found is not None else {}
        return self._listed[key].get((namespace, name))

    def _record(self, action, obj, before=None, after=None):
        self.results.append({"action": action, "api_version": obj.get("apiVersion"), "kind": obj.get("kind"),
                             "namespace": (obj.get("metadata") or {}).get("namespace"),
                             "name": obj["metadata"]["name"]})
        if action != "unchanged":
            self.diffs.append({"before": _strip(before) or {}, "after": _strip(after) or {}, "object": describe(obj)})

    def _writing(self):
        if self._before_first_write is not None:
            hook, self._before_first_write = self._before_first_write, None
            hook()

    @property
    def changed(self):
        return any(r["action"] != "unchanged" for r in self.results)

    def apply(self, manifest):
        desired = copy.deepcopy(manifest)
        if self.label_managed:
            desired.setdefault("metadata", {}).setdefault("labels", {}).setdefault(MANAGED_BY_LABEL, MANAGED_BY_VALUE)
        if self.check_mode and self.cluster.resource(desired["apiVersion"], desired["kind"]) is None:
            # Check mode on a cluster whose operator is not installed yet: the kind will exist once it is.
            self._record("created", desired, None, desired)
            return
        resource = self.resource(desired["apiVersion"], desired["kind"])
        meta = desired["metadata"]
        namespace = meta.get("namespace") if resource.namespaced else None
        if resource.namespaced and not namespace:
            raise ClusterError("%s is namespaced but has no metadata.namespace" % describe(desired))
        existing = self._named(resource, namespace, meta["name"])
        current = existing
        if existing is not None:
            existing.setdefault("apiVersion", desired["apiVersion"])
            existing.setdefault("kind", desired["kind"])
            operations = migration_patch(existing)
            if operations:
                self._writing()
                current = self.cluster.json_patch(resource, meta["name"], namespace, operations,
                                                  FIELD_MANAGER) or migrated(existing, operations)
            if in_sync(current, desired):
                self._record("unchanged" if current is existing else "patched", desired, existing, current)
                return
        self._writing()
        after = self._through_webhook(
            describe(desired), lambda: self.cluster.server_side_apply(resource, desired, FIELD_MANAGER, force=True))
        if existing is None:
            self._record("created", desired, None, after or desired)
        else:
            self._record("patched", desired, existing, after or dict_merge(current, desired))

    def _through_webhook(self, what, write):
        """``write()``, tried again while an admission webhook it needs is not serving yet (its pod is starting: HTTP
        500 "failed calling webhook", rules/webhooks.py), up to webhook_grace_period; then a ClusterError quoting the
        API server."""
        first = None
        while True:
            try:
                return write()
            except Exception as exc:  # pylint: disable=broad-except
                text = api_message(exc)
                webhook = webhooks.webhook_call_failure(api_status(exc), text)
                if webhook is None:
                    raise
                now = self._clock()
                first = now if first is None else first
                delay = webhooks.retry_delay(first, now, self.webhook_grace_period)
                if delay is None:
                    raise ClusterError(webhooks.unavailable_message(what, webhook, now - first, text), status=500,
                                       reason="InternalError")
                self._sleep(delay)

    def prune(self, keep, kinds, label_selector, namespaces=None, names=None):
        """Delete labelled objects of ``kinds`` that are not in ``keep``, last kind first. With ``namespaces``,
        namespaced kinds are listed in those namespaces only (what a Role-scoped identity may list). A kind read by
        name only (READ_BY_NAME_KINDS, cluster-scoped) is never listed: ``names`` are read, one GET each, and those
        that exist and match ``label_selector`` are the candidates."""
        wanted = {identity(m) for m in keep}
        for api_version, kind in reversed(kinds):
            resource = self.cluster.resource(api_version, kind)
            if resource is None:
                continue  # not served: nothing of it can exist
            found = {}
            if (api_version, kind) in READ_BY_NAME_KINDS:
                if names is None:
                    raise ClusterError("%s is read by name only, never listed: give the names to look for" % kind)
                selector = parse_label_selector(label_selector)
                for name in names:
                    obj = self._named(resource, None, name)
                    if obj is not None and labels_match(selector, (obj.get("metadata") or {}).get("labels")):
                        found[(None, name)] = obj
            else:
                for scope in (namespaces or [None]) if resource.namespaced else [None]:
                    found.update(self._existing(resource, scope, label_selector))
            for (namespace, name), obj in sorted(found.items(), key=lambda kv: (kv[0][0] or "", kv[0][1])):
                obj.setdefault("apiVersion", api_version)
                obj.setdefault("kind", kind)
                if (api_version, kind, namespace, name) in wanted:
                    continue
                self._writing()
                self.cluster.delete(resource, name, namespace)
                self._record("deleted", obj, obj, None)

    def delete(self, manifest):
        resource = self.cluster.resource(manifest["apiVersion"], manifest["kind"])
        if resource is None:
            self._record("unchanged", manifest)
            return
        meta = manifest["metadata"]
        namespace = meta.get("namespace") if resource.namespaced else None
        existing = self._named(resource, namespace, meta["name"])
        if existing is None:
            self._record("unchanged", manifest)
            return
        self._writing()
        self.cluster.delete(resource, meta["name"], namespace)
        self._record("deleted", manifest, existing, None)
