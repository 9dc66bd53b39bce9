# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Apply a set of manifests with one list request per kind, and prune what the set no longer holds.

kubernetes.core.k8s with ``state: present`` sends a PATCH for every existing object even when
nothing changed, and ``apply: true`` reads each object up to three times. Re-runs of site.yml must
make no writes and at most one read per object, so this reads each (kind, namespace) once, decides
with kubernetes.core's own three-way merge (``apply_patch``, the last-applied-configuration
annotation, compatible with ``kubectl apply``), and writes only what differs.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.kubernetes.core.plugins.module_utils.apply import LAST_APPLIED_CONFIG_ANNOTATION, annotate, apply_patch
from ansible.module_utils.common.dict_transformations import dict_merge
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.client import ClusterError
from ansible_collections.gpudirect.openshift.plugins.module_utils.render.names import MANAGED_BY_LABEL, MANAGED_BY_VALUE


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


def merge_patched(target, patch):
    """The object a JSON merge patch (RFC 7386) would produce; None deletes a key, lists replace."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patched(result.get(key), value)
    return result


def parse_kind(text):
    """'group/version/Kind' or 'v1/Kind' -> (apiVersion, kind)."""
    api_version, _sep, kind = text.rpartition("/")
    if not api_version or not kind:
        raise ValueError("prune_kinds entry %r is not apiVersion/Kind, for example mellanox.com/v1alpha1/MacvlanNetwork" % text)
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

    def __init__(self, cluster, label_managed=True):
        self.cluster = cluster
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
            self._listed[key] = dict(((i["metadata"].get("namespace"), i["metadata"]["name"]), i) for i in items)
        return self._listed[key]

    def _record(self, action, obj, before=None, after=None):
        self.results.append({"action": action, "api_version": obj.get("apiVersion"), "kind": obj.get("kind"),
                             "namespace": (obj.get("metadata") or {}).get("namespace"), "name": obj["metadata"]["name"]})
        if action != "unchanged":
            self.diffs.append({"before": _strip(before) or {}, "after": _strip(after) or {}, "object": describe(obj)})

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
        existing = self._existing(resource, namespace).get((namespace, meta["name"]))
        if existing is None:
            body = dict_merge(desired, annotate(desired))
            created = self.cluster.create(resource, body)
            self._record("created", desired, None, created or body)
            return
        existing.setdefault("apiVersion", desired["apiVersion"])
        existing.setdefault("kind", desired["kind"])
        actual, patch = apply_patch(existing, desired)
        # kubernetes.core's delta always carries lists of custom resources; only a patch that would
        # change the object is worth a request.
        if patch is actual or patch == actual or merge_patched(actual, patch) == actual:
            self._record("unchanged", desired)
            return
        after = self.cluster.merge_patch(resource, meta["name"], namespace, patch)
        self._record("patched", desired, existing, after or dict_merge(existing, patch))

    def prune(self, keep, kinds, label_selector, namespaces=None):
        """Delete labelled objects of ``kinds`` that are not in ``keep``, last kind first. With ``namespaces``,
        namespaced kinds are listed in those namespaces only (what a Role-scoped identity may list)."""
        wanted = set(identity(m) for m in keep)
        for api_version, kind in reversed(kinds):
            resource = self.cluster.resource(api_version, kind)
            if resource is None:
                continue  # not served: nothing of it can exist
            found = {}
            for scope in (namespaces or [None]) if resource.namespaced else [None]:
                found.update(self._existing(resource, scope, label_selector))
            for (namespace, name), obj in sorted(found.items(), key=lambda kv: (kv[0][0] or "", kv[0][1])):
                obj.setdefault("apiVersion", api_version)
                obj.setdefault("kind", kind)
                if (api_version, kind, namespace, name) in wanted:
                    continue
                self.cluster.delete(resource, name, namespace)
                self._record("deleted", obj, obj, None)

    def delete(self, manifest):
        resource = self.cluster.resource(manifest["apiVersion"], manifest["kind"])
        if resource is None:
            self._record("unchanged", manifest)
            return
        meta = manifest["metadata"]
        namespace = meta.get("namespace") if resource.namespaced else None
        existing = self._existing(resource, namespace).get((namespace, meta["name"]))
        if existing is None:
            self._record("unchanged", manifest)
            return
        self.cluster.delete(resource, meta["name"], namespace)
        self._record("deleted", manifest, existing, None)
