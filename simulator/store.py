"""In-memory object store of the simulated OpenShift API server.

INTERFACE CONTRACT (implemented by the API-server work, used by controllers and tests).
Everything the HTTP layer and the simulated operators (controllers) do to objects goes through
this class, so that resourceVersion, generation, events and watches behave the same for both.

Keys: a resource type is identified by (group, version, plural); group "" is the core API.
Objects are plain dicts as they appear on the wire (apiVersion, kind, metadata, spec, status).
All methods return deep copies; callers never hold references into the store.

Semantics (as kube-apiserver provides them):
- metadata.uid (uuid4), metadata.resourceVersion (cluster-wide increasing integer, as string),
  metadata.generation (starts at 1, bumps only when spec (or non-metadata, non-status content)
  changes), metadata.creationTimestamp (RFC3339 UTC, "Z").
- create() of an existing name raises ApiError(409, "AlreadyExists").
- update() with a metadata.resourceVersion that is set and differs from the stored one raises
  ApiError(409, "Conflict"). An empty resourceVersion means unconditional.
- For types with a status subresource, update() ignores incoming status; update_status() changes
  only status (and bumps resourceVersion, not generation).
- delete(): if metadata.finalizers is non-empty, set deletionTimestamp (once) and keep the object
  (MODIFIED event); otherwise remove it (DELETED event). An update that empties finalizers of an
  object with deletionTimestamp removes it. Namespaces: delete sets status.phase Terminating, deletes
  the namespace's content, and the namespace is removed once it holds no objects.
  Objects whose ownerReferences point at a removed object are deleted too (background GC).
- Every successful change appends an event with its resourceVersion to a bounded history (default
  10000 events) used to serve watches from a resourceVersion; a resourceVersion older than the
  history raises ApiError(410, "Gone", "too old resource version").
- subscribe(callback) registers a synchronous callback(event_type, resource_type, obj) called after
  every change, in order; callbacks must not block (they schedule work on the event loop). A callback that
  raises is logged and recorded in `subscriber_errors`; the write it reacts to stands.
- A type with `instance_field` (PackageManifest: status.catalogSource) holds one object per (namespace, name,
  value of that field), as an aggregated API server may: list() returns each, get(namespace, name) the first in
  key order unless `instance` names one, and writes address an object by its name and that field.

Thread-safety: one re-entrant lock guards everything; callbacks run while it is held, so events reach
subscribers in resourceVersion order even when the HTTP loop and test threads write concurrently.
"""

import base64
import collections
import copy
import dataclasses
import datetime
import json
import logging
import posixpath
import random
import threading
import uuid

from .errors import ApiError, already_exists, conflict, not_found  # noqa: F401  (ApiError is part of the contract)
from .selectors import Selector

__all__ = ["ResourceType", "ApiError", "Store", "now_rfc3339"]
log = logging.getLogger("simulator.store")


@dataclasses.dataclass(frozen=True)
class ResourceType:
    group: str  # "" for core
    version: str
    kind: str
    plural: str
    namespaced: bool
    singular: str = ""
    short_names: tuple = ()
    subresources: tuple = ()  # e.g. ("status",) or ("log",) for pods
    schema: dict = dataclasses.field(default=None, compare=False, hash=False, repr=False)
    served: bool = True
    verbs: tuple = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
    categories: tuple = ()
    builtin: bool = False  # built-in kinds accept strategic merge patch; custom resources answer 415
    # A field path (("status", "catalogSource")) whose value tells apart several objects of one name; () for none.
    instance_field: tuple = ()

    @property
    def api_version(self):
        return self.version if not self.group else "%s/%s" % (self.group, self.version)

    @property
    def key(self):
        """Storage key shared by every version of one resource."""
        return (self.group, self.plural)

    @property
    def has_status(self):
        return "status" in self.subresources


def now_rfc3339():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _generation_content(obj, has_status):
    return {k: v for k, v in obj.items()
            if k not in ("metadata", "apiVersion", "kind") and not (has_status and k == "status")}


Event = collections.namedtuple("Event", "rv type key namespace obj old")
_KEEP = object()
_SEP = "\x00"  # between name and instance in the bucket keys of instance_field types (never part of a name)
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # the apiserver's generateName suffix alphabet
_RAND = random.Random()


# The apiserver's messages for an expired list (k8s.io/apiserver pkg/storage/etcd3/errors.go).
_CONTINUE_EXPIRED = "The provided continue parameter is too old to display a consistent list result. " \
    "You can start a new list without the continue parameter."
_INCONSISTENT_CONTINUE = _CONTINUE_EXPIRED[:-1] + ", or use the continue token in this response to retrieve the " \
    "remainder of the results. Continuing with the provided token results in an inconsistent list - objects that " \
    "were created, modified, or deleted between the time the first chunk was returned and now may show up in the list."


def _encode_continue(start_key, revision):
    """k8s.io/apiserver pkg/storage/continue.go EncodeContinue: base64url (no padding) of {"v", "rv", "start"}."""
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": revision, "start": start_key}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _decode_continue(token):
    """(start key, revision) of a continue token; the 400s of pkg/storage/continue.go DecodeContinue."""
    def invalid(why):
        return ApiError(400, "BadRequest", "invalid continue token: continue key is not valid" + why)
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode())
    except (ValueError, UnicodeDecodeError) as exc:
        raise invalid(": %s" % exc) from None
    if not isinstance(data, dict) or data.get("v") != "meta.k8s.io/v1":
        raise invalid(": server does not recognize this encoded version") from None
    if not isinstance(data.get("rv"), int) or data["rv"] == 0:
        raise invalid(": incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
    start = data.get("start")
    if not isinstance(start, str) or not start:
        raise invalid(": encoded start key empty (version meta.k8s.io/v1)")
    # path traversal guard of DecodeContinue: the cleaned path must equal the given one
    key = start if start.startswith("/") else "/" + start
    cleaned = posixpath.normpath(key)
    if cleaned.startswith("//"):
        cleaned = "/" + cleaned.lstrip("/")
    if cleaned != key:
        raise invalid(": %s" % start)
    return cleaned[1:], data["rv"]


class Store:
    def __init__(self, history_limit=10000):
        self._lock = threading.RLock()
        self._types = {}  # (group, version, plural) -> ResourceType
        self._objects = {}  # (group, plural) -> {(namespace, name): obj}
        self._rv = 0
        self._history = collections.deque(maxlen=history_limit)
        self._history_floor = 0  # events with rv <= floor are no longer available
        self._subscribers = []
        self._listeners = {}  # id -> (key, namespace, callback) for watches
        self.subscriber_errors = []  # (callback, event type, plural, exception) of failed subscriber calls

    # ---------------------------------------------------------------- types
    @property
    def lock(self):
        return self._lock

    def register(self, rtype):
        with self._lock:
            self._types[(rtype.group, rtype.version, rtype.plural)] = rtype
            self._objects.setdefault(rtype.key, {})

    def set_served(self, group, plural, served):
        with self._lock:
            found = False
            for k, t in list(self._types.items()):
                if t.group == group and t.plural == plural:
                    self._types[k] = dataclasses.replace(t, served=bool(served))
                    found = True
            if not found:
                raise KeyError("no registered resource %s.%s" % (plural, group))

    def resource_types(self):
        with self._lock:
            return list(self._types.values())

    def find_type(self, group, version, plural):
        with self._lock:
            t = self._types.get((group, version, plural))
        if t is None or not t.served:
            raise _unknown_resource()
        return t

    def find_kind(self, api_version, kind):
        group, _sep, version = api_version.rpartition("/")
        with self._lock:
            for t in self._types.values():
                if t.group == group and t.version == version and t.kind == kind:
                    return t
        raise ApiError(404, "NotFound", 'no matches for kind "%s" in version "%s"' % (kind, api_version))

    def type_of(self, rtype):
        """The current registration of rtype (served flag may have changed since the caller got it)."""
        with self._lock:
            return self._types.get((rtype.group, rtype.version, rtype.plural), rtype)

    # ---------------------------------------------------------------- reads
    @property
    def current_resource_version(self):
        with self._lock:
            return str(self._rv)

    def _bucket(self, rtype):
        try:
            return self._objects[rtype.key]
        except KeyError:
            raise ApiError(404, "NotFound", "resource %s is not registered" % rtype.plural) from None

    @staticmethod
    def _ns(rtype, namespace):
        return (namespace or "") if rtype.namespaced else ""

    @staticmethod
    def _instance_of(rtype, obj):
        value = obj
        for part in rtype.instance_field:
            value = (value or {}).get(part) if isinstance(value, dict) else None
        return "" if value is None else str(value)

    def _key(self, rtype, namespace, name, instance=None, obj=None):
        """The bucket key of one object: (namespace, name), or (namespace, name NUL instance) for instance_field types.

        A name that already carries its instance (a bucket key's second half, as GC and namespace purges pass it)
        is taken as it is. Without instance nor obj, the first stored object of that name in key order."""
        ns = self._ns(rtype, namespace)
        if not rtype.instance_field or _SEP in name:
            return (ns, name)
        if instance is None and obj is not None:
            instance = self._instance_of(rtype, obj)
        if instance is not None:
            return (ns, name + _SEP + instance)
        keys = sorted(k for k in self._bucket(rtype) if k[0] == ns and k[1].split(_SEP, 1)[0] == name)
        return keys[0] if keys else (ns, name + _SEP)

    def _out(self, rtype, obj):
        out = copy.deepcopy(obj)
        out["apiVersion"] = rtype.api_version
        out["kind"] = rtype.kind
        return out

    def get(self, rtype, namespace, name, instance=None):
        with self._lock:
            obj = self._bucket(rtype).get(self._key(rtype, namespace, name, instance))
            if obj is None:
                raise not_found(rtype, name)
            return self._out(rtype, obj)

    def try_get(self, rtype, namespace, name, instance=None):
        with self._lock:
            obj = self._bucket(rtype).get(self._key(rtype, namespace, name, instance))
            return None if obj is None else self._out(rtype, obj)

    def inspect(self, rtype, namespace, name, fn):
        """fn(stored object) under the lock, without a copy, or None when absent: for controllers that only read a
        few fields of large objects (a node) on every reconcile. fn must neither change the object nor keep it."""
        with self._lock:
            obj = self._bucket(rtype).get(self._key(rtype, namespace, name))
            return None if obj is None else fn(obj)

    def scan(self, rtype, fn, namespace=None):
        """[fn(stored object)] for every object of the type (in one namespace) under the lock, without copies, in key
        order: for controllers that read a few fields of many objects (operand pods, nodes). fn must neither change
        the objects nor keep them."""
        with self._lock:
            ns = self._ns(rtype, namespace) if namespace is not None else None
            return [fn(obj) for key, obj in sorted(self._bucket(rtype).items()) if ns is None or key[0] == ns]

    def list(self, rtype, namespace=None, label_selector=None, field_selector=None):
        items, rv, _cont, _remaining = self.list_page(rtype, namespace, label_selector, field_selector)
        return items, rv

    @staticmethod
    def _storage_key(rtype, namespace, bucket_key):
        """The object's key under the list's prefix, as etcd orders them: "namespace/name" across namespaces,
        "name" within one (k8s.io/apiserver pkg/registry/generic/registry/store.go NamespaceKeyFunc)."""
        ns, name = bucket_key
        return name if (not rtype.namespaced or namespace) else ns + "/" + name

    def _snapshot(self, rtype, revision):
        """The type's bucket as it was at `revision`: current objects with the later history undone.

        etcd serves a continued list at the first page's revision (clientv3.WithRev); a revision older than the
        retained history is compacted and answers 410 (k8s.io/apiserver pkg/storage/etcd3/store.go GetList)."""
        if revision < self._history_floor:
            raise ApiError(410, "Expired", _CONTINUE_EXPIRED)
        bucket = dict(self._bucket(rtype))
        for ev in reversed(self._history):
            if ev.rv <= revision:
                break
            if ev.key != rtype.key:
                continue
            key = self._key(rtype, ev.namespace, ev.obj["metadata"]["name"], obj=ev.obj)
            if ev.type == "ADDED":
                bucket.pop(key, None)
            else:
                bucket[key] = ev.old if ev.old is not None else ev.obj
        return bucket

    def list_page(self, rtype, namespace=None, label_selector=None, field_selector=None, limit=0, continue_token="",
                  resource_version=""):
        """(items, list resourceVersion, continue token or "", remainingItemCount or None), as the apiserver's
        etcd3 storage pages a list (k8s.io/apiserver pkg/storage/etcd3/store.go GetList, pkg/storage/continue.go):
        - limit > 0 returns at most `limit` items in key order and, when keys remain after the last one, a continue
          token {"v": "meta.k8s.io/v1", "rv": <list revision>, "start": <last key + NUL>} (base64url, no padding);
        - a continued page is read at the token's revision (a consistent snapshot) or, for rv -1, at the latest;
          a compacted revision answers 410 Expired with a token that resumes at the latest revision
          (pkg/storage/etcd3/errors.go handleCompactedErrorForPaging);
        - remainingItemCount is set only without label and field selectors (etcd counts every key in the range);
        - resourceVersion together with continue is a 400; a bad token is a 400 "invalid continue token: ..."."""
        sel = Selector(label_selector, field_selector, rtype.group, rtype.plural)
        limit = int(limit or 0)
        with self._lock:
            revision = self._rv
            start = ""
            if continue_token:
                start, token_rv = _decode_continue(continue_token)
                if resource_version not in ("", "0", None):
                    raise ApiError(400, "BadRequest", "specifying resource version is not allowed when using continue")
                if token_rv > 0:
                    revision = token_rv
            elif limit > 0 and resource_version not in ("", "0", None):
                try:
                    revision = int(resource_version)  # the legacy exact-revision read of a paged list
                except ValueError:
                    raise ApiError(400, "BadRequest", "invalid resource version: %s" % resource_version) from None
            try:
                bucket = self._bucket(rtype) if revision >= self._rv else self._snapshot(rtype, revision)
            except ApiError as err:
                if not continue_token:
                    raise ApiError(410, "Expired", "The resourceVersion for the provided list is too old.") from None
                err.list_meta = {"continue": _encode_continue(start, -1)}
                err.message = _INCONSISTENT_CONTINUE
                raise
            keyed = []
            for key, obj in bucket.items():
                if rtype.namespaced and namespace and key[0] != namespace:
                    continue
                skey = self._storage_key(rtype, namespace, key)
                if start and skey < start:
                    continue
                keyed.append((skey, obj))
            keyed.sort(key=lambda pair: pair[0])
            items, last = [], None
            has_more = False
            for skey, obj in keyed:
                if limit > 0 and len(items) >= limit:
                    has_more = True
                    break
                last = skey
                if sel and not sel.matches(obj):
                    continue
                items.append(self._out(rtype, obj))
            if not has_more:
                return items, str(revision), "", None
            remaining = None if sel else len(keyed) - limit
            return items, str(revision), _encode_continue(last + "\x00", revision), remaining

    def count_in_namespace(self, namespace):
        with self._lock:
            return sum(1 for bucket in self._objects.values() for (ns, _n) in bucket if ns == namespace)

    # ---------------------------------------------------------------- writes
    def _emit(self, etype, rtype, obj, old=None):
        ev = Event(self._rv, etype, rtype.key, obj["metadata"].get("namespace", ""), obj, old)
        if len(self._history) == self._history.maxlen:
            self._history_floor = self._history[0].rv
        self._history.append(ev)
        for lid, (key, namespace, cb) in list(self._listeners.items()):
            if key == rtype.key and (not namespace or namespace == ev.namespace):
                cb(ev)
        for cb in list(self._subscribers):
            try:
                cb(etype, rtype, self._out(rtype, obj))
            except ApiError as exc:
                log.info("store subscriber %r on %s %s: %r", cb, etype, rtype.plural, exc)
            except Exception as exc:  # a controller bug must not turn a committed write into an error
                log.exception("store subscriber %r failed on %s %s", cb, etype, rtype.plural)
                self.subscriber_errors.append((cb, etype, rtype.plural, exc))

    def _next_rv(self):
        self._rv += 1
        return str(self._rv)

    def _check_namespace(self, rtype, namespace, name=""):
        if not rtype.namespaced:
            return
        if not namespace:
            raise ApiError(400, "BadRequest", "the namespace of the object must be set for namespaced resource %s"
                           % rtype.plural)
        ns_bucket = self._objects.get(("", "namespaces"), {})
        ns_obj = ns_bucket.get(("", namespace))
        if ns_obj is None:
            raise ApiError(404, "NotFound", 'namespaces "%s" not found' % namespace,
                           details={"name": namespace, "group": "", "kind": "namespaces"})
        if ns_obj["metadata"].get("deletionTimestamp"):
            raise ApiError(403, "Forbidden", '%s "%s" is forbidden: unable to create new content in namespace %s '
                           "because it is being terminated" % (rtype.plural, name, namespace),
                           details={"group": rtype.group, "kind": rtype.plural,
                                    "causes": [{"reason": "NamespaceTerminating",
                                                "message": "namespace %s is being terminated" % namespace,
                                                "field": "metadata.namespace"}]})

    def create(self, rtype, obj, dry_run=False):
        obj = copy.deepcopy(obj)
        meta = obj.setdefault("metadata", {})
        with self._lock:
            ns = self._ns(rtype, meta.get("namespace"))
            if not meta.get("name"):
                if meta.get("generateName"):
                    meta["name"] = meta["generateName"] + "".join(
                        _RAND.choice(_NAME_ALPHABET) for _position in range(5))
                else:
                    raise ApiError(422, "Invalid", "%s \"\" is invalid: metadata.name: Required value: name or "
                                   "generateName is required" % rtype.kind,
                                   causes=[{"reason": "FieldValueRequired", "message": "Required value: name or "
                                            "generateName is required", "field": "metadata.name"}],
                                   details={"group": rtype.group, "kind": rtype.kind})
            self._check_namespace(rtype, ns, meta["name"])
            bucket = self._bucket(rtype)
            key = self._key(rtype, ns, meta["name"], obj=obj)
            if key in bucket:
                raise already_exists(rtype, meta["name"])
            if rtype.namespaced:
                meta["namespace"] = ns
            else:
                meta.pop("namespace", None)
            meta["uid"] = str(uuid.uuid4())
            meta["creationTimestamp"] = now_rfc3339()
            meta["generation"] = 1
            meta.pop("deletionTimestamp", None)
            meta.pop("selfLink", None)
            obj["apiVersion"] = rtype.api_version
            obj["kind"] = rtype.kind
            if rtype.group == "" and rtype.plural == "namespaces":
                obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
                obj.setdefault("status", {})["phase"] = "Active"
                meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = meta["name"]
            if dry_run:
                meta["resourceVersion"] = str(self._rv)
                return self._out(rtype, obj)
            meta["resourceVersion"] = self._next_rv()
            bucket[key] = obj
            self._emit("ADDED", rtype, obj)
            return self._out(rtype, obj)

    def _current(self, rtype, namespace, name, instance=None):
        obj = self._bucket(rtype).get(self._key(rtype, namespace, name, instance))
        if obj is None:
            raise not_found(rtype, name)
        return obj

    def _commit(self, rtype, old, new, dry_run, bump_generation=True):
        """Store `new` in place of `old` (same key); handles finalizer removal after deletion."""
        meta = new["metadata"]
        if bump_generation and _generation_content(old, rtype.has_status) != _generation_content(new, rtype.has_status):
            meta["generation"] = old["metadata"].get("generation", 1) + 1
        if new == old:  # no-op writes do not bump resourceVersion, as on a real server
            return self._out(rtype, old)
        if dry_run:
            return self._out(rtype, new)
        key = self._key(rtype, meta.get("namespace"), meta["name"], obj=old)
        meta["resourceVersion"] = self._next_rv()
        self._bucket(rtype)[key] = new
        if meta.get("deletionTimestamp") and not meta.get("finalizers") and not self._is_namespace(rtype):
            return self._remove(rtype, key, new)
        self._emit("MODIFIED", rtype, new, old)
        if self._is_namespace(rtype) and meta.get("deletionTimestamp"):
            self._maybe_finish_namespace(meta["name"])
        return self._out(rtype, new)

    @staticmethod
    def _is_namespace(rtype):
        return rtype.group == "" and rtype.plural == "namespaces"

    def update(self, rtype, obj, dry_run=False):
        obj = copy.deepcopy(obj)
        meta = obj.setdefault("metadata", {})
        with self._lock:
            old = self._current(rtype, meta.get("namespace"), meta.get("name", ""),
                                self._instance_of(rtype, obj) if rtype.instance_field else None)
            rv = meta.get("resourceVersion")
            if rv and rv != old["metadata"]["resourceVersion"]:
                raise conflict(rtype, meta["name"])
            new = obj
            om = old["metadata"]
            # System-owned metadata is kept from the stored object.
            for k in ("uid", "creationTimestamp", "generation", "resourceVersion", "deletionTimestamp",
                      "deletionGracePeriodSeconds", "namespace"):
                if k in om:
                    meta[k] = om[k]
                else:
                    meta.pop(k, None)
            if "managedFields" not in meta and "managedFields" in om:
                meta["managedFields"] = copy.deepcopy(om["managedFields"])
            new["apiVersion"], new["kind"] = rtype.api_version, rtype.kind
            if rtype.has_status:
                if "status" in old:
                    new["status"] = copy.deepcopy(old["status"])
                else:
                    new.pop("status", None)
            if self._is_namespace(rtype):
                new["spec"] = copy.deepcopy(old.get("spec", {}))
                new["status"] = copy.deepcopy(old.get("status", {}))
            return self._commit(rtype, old, new, dry_run)

    def update_status(self, rtype, namespace, name, status, dry_run=False, resource_version=None,
                      managed_fields=_KEEP, instance=None):
        """Replace status only. managed_fields: new metadata.managedFields ([] or None drops them); default keeps."""
        with self._lock:
            old = self._current(rtype, namespace, name, instance)
            if resource_version and resource_version != old["metadata"]["resourceVersion"]:
                raise conflict(rtype, name)
            new = copy.deepcopy(old)
            if status is None:
                new.pop("status", None)
            else:
                new["status"] = copy.deepcopy(status)
            if managed_fields is not _KEEP:
                if managed_fields:
                    new["metadata"]["managedFields"] = copy.deepcopy(managed_fields)
                else:
                    new["metadata"].pop("managedFields", None)
            return self._commit(rtype, old, new, dry_run, bump_generation=not rtype.has_status)

    def replace_status(self, rtype, obj, dry_run=False):
        """PUT .../status: only status (and, like the apiserver, nothing else) is taken from obj."""
        meta = obj.get("metadata") or {}
        return self.update_status(rtype, meta.get("namespace"), meta.get("name", ""), obj.get("status"),
                                  dry_run=dry_run, resource_version=meta.get("resourceVersion"))

    def patch_status(self, rtype, namespace, name, status_patch, instance=None):
        from .patching import merge_patch

        with self._lock:
            old = self._current(rtype, namespace, name, instance)
            status = merge_patch(copy.deepcopy(old.get("status") or {}), status_patch)
            return self.update_status(rtype, namespace, name, status, instance=self._instance_of(rtype, old) if rtype.instance_field else None)

    def mutate(self, rtype, namespace, name, fn, instance=None):
        """Controller helper: fn(obj_copy) edits in place (or returns a new dict); stored as an update.
        Status edits are kept too, so controllers can change spec and status in one call."""
        with self._lock:
            old = self._current(rtype, namespace, name, instance)
            work = copy.deepcopy(old)
            result = fn(work)
            new = result if isinstance(result, dict) else work
            new["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
            for k in ("uid", "creationTimestamp", "namespace", "name"):
                if k in old["metadata"]:
                    new["metadata"][k] = old["metadata"][k]
            new["metadata"]["generation"] = old["metadata"].get("generation", 1)
            return self._commit(rtype, old, new, False)

    def delete(self, rtype, namespace, name, dry_run=False, propagation_policy=None, resource_version=None,
               uid=None, instance=None):
        with self._lock:
            ns = self._ns(rtype, namespace)
            key = self._key(rtype, ns, name, instance)
            old = self._current(rtype, ns, key[1])
            if resource_version and resource_version != old["metadata"]["resourceVersion"]:
                raise conflict(rtype, name)
            if uid and uid != old["metadata"]["uid"]:
                raise conflict(rtype, name, "Precondition failed: UID in precondition: %s, UID in object meta: %s"
                               % (uid, old["metadata"]["uid"]))
            is_ns = self._is_namespace(rtype)
            if old["metadata"].get("finalizers") or is_ns or propagation_policy == "Foreground":
                if old["metadata"].get("deletionTimestamp"):
                    return self._out(rtype, old)
                new = copy.deepcopy(old)
                new["metadata"]["deletionTimestamp"] = now_rfc3339()
                new["metadata"]["deletionGracePeriodSeconds"] = 0
                if is_ns:
                    new.setdefault("status", {})["phase"] = "Terminating"
                if propagation_policy == "Foreground" and not is_ns:
                    fins = new["metadata"].setdefault("finalizers", [])
                    if "foregroundDeletion" not in fins:
                        fins.append("foregroundDeletion")
                if dry_run:
                    return self._out(rtype, new)
                new["metadata"]["resourceVersion"] = self._next_rv()
                self._bucket(rtype)[key] = new
                self._emit("MODIFIED", rtype, new, old)
                if is_ns:
                    self._purge_namespace(name)
                elif propagation_policy == "Foreground":
                    self._collect_dependents(old["metadata"]["uid"])
                    self._maybe_finish_foreground(rtype, key)
                return self._out(rtype, self._bucket(rtype).get(key, new))
            if dry_run:
                return self._out(rtype, old)
            return self._remove(rtype, key, old, orphan=propagation_policy == "Orphan")

    def _remove(self, rtype, key, obj, orphan=False):
        bucket = self._bucket(rtype)
        bucket.pop(key, None)
        gone = copy.deepcopy(obj)
        gone["metadata"]["resourceVersion"] = self._next_rv()
        self._emit("DELETED", rtype, gone, obj)
        if not orphan:
            self._collect_dependents(obj["metadata"]["uid"])
        ns = key[0]
        if ns:
            self._maybe_finish_namespace(ns)
            self._finish_foreground_owners(obj)
        if self._is_namespace(rtype):
            self._purge_namespace(key[1])
        return self._out(rtype, gone)

    def _type_for_key(self, key):
        for t in self._types.values():
            if t.key == key:
                return t
        return None

    def _collect_dependents(self, owner_uid):
        """Background garbage collection of objects owned by owner_uid."""
        victims = []
        for key, bucket in self._objects.items():
            for okey, obj in bucket.items():
                refs = obj["metadata"].get("ownerReferences") or []
                if any(r.get("uid") == owner_uid for r in refs):
                    victims.append((key, okey))
        for key, okey in victims:
            rtype = self._type_for_key(key)
            if rtype is not None and okey in self._objects[key]:
                self.delete(rtype, okey[0], okey[1])

    def _finish_foreground_owners(self, dependent):
        for ref in dependent["metadata"].get("ownerReferences") or []:
            for key, bucket in self._objects.items():
                for okey, owner in list(bucket.items()):
                    if owner["metadata"].get("uid") == ref.get("uid"):
                        rtype = self._type_for_key(key)
                        if rtype is not None:
                            self._maybe_finish_foreground(rtype, okey)

    def _maybe_finish_foreground(self, rtype, okey):
        obj = self._bucket(rtype).get(okey)
        if obj is None or "foregroundDeletion" not in (obj["metadata"].get("finalizers") or []):
            return
        uid = obj["metadata"]["uid"]
        for bucket in self._objects.values():
            for dep in bucket.values():
                if any(r.get("uid") == uid for r in dep["metadata"].get("ownerReferences") or []):
                    return
        new = copy.deepcopy(obj)
        new["metadata"]["finalizers"] = [f for f in new["metadata"]["finalizers"] if f != "foregroundDeletion"]
        self._commit(rtype, obj, new, False)

    def _purge_namespace(self, namespace):
        """Namespace controller: delete everything in a terminating namespace, then the namespace."""
        victims = []
        for key, bucket in self._objects.items():
            for okey, obj in bucket.items():
                if okey[0] == namespace and not obj["metadata"].get("deletionTimestamp"):
                    victims.append((key, okey))
        for key, okey in victims:
            rtype = self._type_for_key(key)
            if rtype is not None and okey in self._objects[key]:
                self.delete(rtype, okey[0], okey[1])
        self._maybe_finish_namespace(namespace)

    def _maybe_finish_namespace(self, namespace):
        ns_key = ("", namespace)
        ns_bucket = self._objects.get(("", "namespaces"), {})
        ns_obj = ns_bucket.get(ns_key)
        if ns_obj is None or not ns_obj["metadata"].get("deletionTimestamp"):
            return
        if any(okey[0] == namespace for bucket in self._objects.values() for okey in bucket):
            return
        if ns_obj["metadata"].get("finalizers"):
            return
        ns_type = self._type_for_key(("", "namespaces"))
        ns_bucket.pop(ns_key, None)
        gone = copy.deepcopy(ns_obj)
        gone["metadata"]["resourceVersion"] = self._next_rv()
        gone.setdefault("spec", {})["finalizers"] = []
        self._emit("DELETED", ns_type, gone, ns_obj)

    # ---------------------------------------------------------------- events
    def events_since(self, resource_version, rtype, namespace=None):
        """[(event_type, obj)] of rtype after resource_version; ApiError 410 when history no longer has it."""
        with self._lock:
            evs = self._events_after(int(resource_version or 0), rtype, namespace)
            return [(e.type, self._out(rtype, e.obj)) for e in evs]

    def _events_after(self, rv, rtype, namespace):
        if rv < self._history_floor:
            raise ApiError(410, "Gone", "too old resource version: %d (%d)" % (rv, self._history_floor + 1))
        return [e for e in self._history
                if e.rv > rv and e.key == rtype.key and (not namespace or e.namespace == namespace)]

    def watch(self, rtype, namespace, resource_version, callback):
        """Atomically: the backlog of events after resource_version (None = synthetic ADDED of every current
        object) and registration of callback(Event) for later ones. Returns (listener_id, backlog Events)."""
        with self._lock:
            if resource_version in (None, "", "0"):
                backlog = [Event(self._rv, "ADDED", rtype.key, ns, obj, None)
                           for (ns, _n), obj in sorted(self._bucket(rtype).items())
                           if not (rtype.namespaced and namespace and ns != namespace)]
            else:
                try:
                    rv = int(resource_version)
                except ValueError:
                    raise ApiError(400, "BadRequest", 'invalid resource version "%s"' % resource_version) from None
                backlog = self._events_after(rv, rtype, namespace)
            lid = uuid.uuid4().hex
            self._listeners[lid] = (rtype.key, namespace if rtype.namespaced else None, callback)
            return lid, backlog

    def unwatch(self, listener_id):
        with self._lock:
            self._listeners.pop(listener_id, None)

    def subscribe(self, callback):
        with self._lock:
            self._subscribers.append(callback)

    def unsubscribe(self, callback):
        with self._lock:
            if callback in self._subscribers:
                self._subscribers.remove(callback)

    def output(self, rtype, obj):
        """Deep copy of obj as rtype's version presents it."""
        return self._out(rtype, obj)


def _unknown_resource():
    return ApiError(404, "NotFound", "the server could not find the requested resource",
                    details={"causes": [{"reason": "UnexpectedServerResponse", "message": "404 page not found"}]})
