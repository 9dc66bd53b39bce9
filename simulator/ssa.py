"""Server-side apply and metadata.managedFields (fieldsV1), as far as clients can observe them.

A field set is a set of paths; a path is a tuple of fieldsV1 keys: "f:<field>", 'k:{"name":"x"}' (item of an
associative list), "v:<json>" (item of a set list) and "." (the list item itself). fieldsV1 is the same set
as a nested dict whose leaves are {}.

List semantics come from the schema (x-kubernetes-list-type / x-kubernetes-list-map-keys) for custom
resources, and from the patch merge keys of built-in kinds; other lists are atomic (owned as one field).
"""

import copy
import json

from .errors import ApiError, resource_ref
from .patching import MERGE_KEYS
from .store import now_rfc3339

# Fields never recorded in managedFields.
_SKIP_META = {"name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp",
              "deletionGracePeriodSeconds", "managedFields", "selfLink", "generateName"}
_META_SCHEMA = {"properties": {
    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
    "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
    "finalizers": {"type": "array", "x-kubernetes-list-type": "set"},
    "ownerReferences": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["uid"]},
}}


def _sub_schema(schema, key):
    if not schema:
        return None
    props = schema.get("properties") or {}
    if key in props:
        return props[key]
    addl = schema.get("additionalProperties")
    return addl if isinstance(addl, dict) else None


def _list_kind(field, schema, builtin):
    """('map', keys) | ('set', None) | ('atomic', None) for a list field."""
    if schema:
        lt = schema.get("x-kubernetes-list-type")
        if lt == "map":
            return "map", tuple(schema.get("x-kubernetes-list-map-keys") or ("name",))
        if lt == "set":
            return "set", None
        if lt == "atomic" or not builtin:
            return "atomic", None
    if builtin and MERGE_KEYS.get(field):
        return "map", (MERGE_KEYS[field],)
    return "atomic", None


def _item_key(item, keys):
    return "k:" + json.dumps({k: item.get(k) for k in keys if k in item}, separators=(",", ":"), sort_keys=True)


def _set_key(item):
    return "v:" + json.dumps(item, separators=(",", ":"), sort_keys=True)


def field_paths(obj, schema=None, builtin=False, part="main"):
    """Leaf paths of obj. part: "main" (no status), "status" (only status) or "all"."""
    paths = set()
    for key, value in obj.items():
        if key in ("apiVersion", "kind"):
            continue
        if key == "status" and part == "main":
            continue
        if part == "status" and key != "status":
            continue
        if key == "metadata":
            meta = {k: v for k, v in (value or {}).items() if k not in _SKIP_META}
            _walk(meta, _META_SCHEMA, ("f:metadata",), paths, True)
            continue
        _walk_value(key, value, _sub_schema(schema, key), ("f:" + key,), paths, builtin)
    return paths


def _walk(obj, schema, prefix, paths, builtin):
    for key, value in obj.items():
        _walk_value(key, value, _sub_schema(schema, key), prefix + ("f:" + key,), paths, builtin)


def _walk_value(field, value, schema, path, paths, builtin):
    if isinstance(value, dict) and value and not (schema or {}).get("x-kubernetes-map-type") == "atomic":
        _walk(value, schema, path, paths, builtin)
    elif isinstance(value, list) and value:
        kind, keys = _list_kind(field, schema, builtin)
        items_schema = (schema or {}).get("items")
        if kind == "map" and all(isinstance(i, dict) for i in value):
            for item in value:
                ipath = path + (_item_key(item, keys),)
                paths.add(ipath + (".",))
                _walk(item, items_schema, ipath, paths, builtin)
        elif kind == "set":
            for item in value:
                paths.add(path + (_set_key(item),))
        else:
            paths.add(path)
    else:
        paths.add(path)


def to_fields_v1(paths):
    tree = {}
    for path in sorted(paths):
        node = tree
        for elem in path:
            node = node.setdefault(elem, {})
    return tree


def from_fields_v1(tree, prefix=()):
    paths = set()
    for key, sub in (tree or {}).items():
        if sub:
            paths |= from_fields_v1(sub, prefix + (key,))
        else:
            paths.add(prefix + (key,))
    return paths


_MISSING = object()


def get_at(obj, path):
    cur = obj
    for elem in path:
        if elem == ".":
            return cur
        if elem.startswith("f:"):
            if not isinstance(cur, dict) or elem[2:] not in cur:
                return _MISSING
            cur = cur[elem[2:]]
        elif elem.startswith("k:"):
            want = json.loads(elem[2:])
            if not isinstance(cur, list):
                return _MISSING
            cur = next((i for i in cur if isinstance(i, dict) and all(i.get(k) == v for k, v in want.items())),
                       _MISSING)
            if cur is _MISSING:
                return cur
        elif elem.startswith("v:"):
            want = json.loads(elem[2:])
            return want if isinstance(cur, list) and want in cur else _MISSING
        else:
            return _MISSING
    return cur


def delete_at(obj, path):
    """Remove the field or list item a path names (no-op when absent)."""
    if path and path[-1] == ".":
        path = path[:-1]
    parent = get_at(obj, path[:-1]) if len(path) > 1 else obj
    if parent is _MISSING:
        return
    last = path[-1]
    if last.startswith("f:") and isinstance(parent, dict):
        parent.pop(last[2:], None)
    elif last.startswith("k:") and isinstance(parent, list):
        want = json.loads(last[2:])
        parent[:] = [i for i in parent if not (isinstance(i, dict) and all(i.get(k) == v for k, v in want.items()))]
    elif last.startswith("v:") and isinstance(parent, list):
        want = json.loads(last[2:])
        parent[:] = [i for i in parent if i != want]


def _with_named_parents(paths, schema, builtin):
    """The paths (a list item without its "." marker) plus every named field above one: top-level fields, properties
    of a schema, and, for built-in kinds without a schema here, every field; not keys of a map
    (additionalProperties) nor fields of an unknown-fields object of a custom resource."""
    out = set()
    for path in paths:
        path = path[:-1] if path and path[-1] == "." else path
        out.add(path)
        node = schema
        for depth, elem in enumerate(path[:-1]):
            if not elem.startswith("f:"):
                node = (node or {}).get("items")
                continue
            key = elem[2:]
            if depth == 0:
                named = True
                node = _META_SCHEMA if key == "metadata" else _sub_schema(node, key)
            else:
                named = key in ((node or {}).get("properties") or {}) or (builtin and not node)
                node = _sub_schema(node, key)
            if named:
                out.add(path[:depth + 1])
    return out


def merge_applied(current, applied, schema, builtin, field=None):
    """Merge an applied configuration into current: maps merge, associative lists merge by key, sets union,
    atomic lists and scalars are replaced."""
    if isinstance(applied, dict) and isinstance(current, dict) and (schema or {}).get("x-kubernetes-map-type") != "atomic":
        out = dict(current)
        for key, value in applied.items():
            sub = _META_SCHEMA if (field is None and key == "metadata") else _sub_schema(schema, key)
            out[key] = merge_applied(current.get(key), value, sub, builtin, key)
        return out
    if isinstance(applied, list) and isinstance(current, list):
        kind, keys = _list_kind(field, schema, builtin)
        items_schema = (schema or {}).get("items")
        if kind == "map":
            out = list(current)
            for item in applied:
                if not isinstance(item, dict):
                    return copy.deepcopy(applied)
                k = _item_key(item, keys)
                idx = next((n for n, c in enumerate(out) if isinstance(c, dict) and _item_key(c, keys) == k), None)
                if idx is None:
                    out.append(copy.deepcopy(item))
                else:
                    out[idx] = merge_applied(out[idx], item, items_schema, builtin)
            return out
        if kind == "set":
            return list(current) + [copy.deepcopy(i) for i in applied if i not in current]
    return copy.deepcopy(applied)


def _entries(obj):
    return (obj.get("metadata") or {}).get("managedFields") or []


def _entry_paths(entry):
    return from_fields_v1(entry.get("fieldsV1") or {})


def _subresource_of(part):
    return "status" if part == "status" else None


def _set_entries(obj, entries):
    entries = [e for e in entries if e.get("fieldsV1")]
    if entries:
        obj["metadata"]["managedFields"] = entries
    else:
        obj["metadata"].pop("managedFields", None)


def record_update(rtype, old, new, manager, part="main"):
    """Non-apply write (create/update/patch) by manager: the fields it changed become its own (operation
    Update); other managers lose them. Leaves managedFields untouched when nothing changed."""
    builtin = rtype.builtin
    schema = rtype.schema
    new_paths = field_paths(new, schema, builtin, part)
    old_paths = field_paths(old, schema, builtin, part) if old else set()
    changed = {p for p in new_paths if p not in old_paths or get_at(old, p) != get_at(new, p)}
    removed = old_paths - new_paths
    if old is not None and not changed and not removed:
        if old and "managedFields" not in new.get("metadata", {}) and _entries(old):
            new["metadata"]["managedFields"] = copy.deepcopy(_entries(old))
        return
    entries = copy.deepcopy(_entries(new) or (_entries(old) if old else []))
    sub = _subresource_of(part)
    result, mine = [], None
    for e in entries:
        paths = _entry_paths(e) - changed - removed
        if e.get("manager") == manager and e.get("operation") == "Update" and e.get("subresource") == sub:
            mine = e
            continue
        e["fieldsV1"] = to_fields_v1(paths)
        result.append(e)
    mine_paths = (_entry_paths(mine) - removed if mine else set()) | changed
    if mine_paths:
        entry = {"manager": manager, "operation": "Update", "apiVersion": rtype.api_version, "time": now_rfc3339(),
                 "fieldsType": "FieldsV1", "fieldsV1": to_fields_v1(mine_paths)}
        if sub:
            entry["subresource"] = sub
        result.append(entry)
    _set_entries(new, result)


def apply(rtype, current, applied, manager, force=False, part="main"):
    """Server-side apply of `applied` by `manager` onto `current` (None: create). Returns the new object.
    Raises ApiError 409 Conflict naming the conflicting fields and managers unless force."""
    if not manager:
        raise ApiError(422, "Invalid", "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: "
                       "is required for apply patch",
                       causes=[{"reason": "FieldValueRequired", "message": "Required value: is required for apply patch",
                                "field": "fieldManager"}])
    builtin, schema = rtype.builtin, rtype.schema
    applied = copy.deepcopy(applied)
    applied_paths = field_paths(applied, schema, builtin, part)
    base = copy.deepcopy(current) if current is not None else {"metadata": {}}
    entries = copy.deepcopy(_entries(base))
    sub = _subresource_of(part)

    conflicts = []
    taken = {}  # id(entry) -> the fields whose value this apply changes: force takes only those (same value: shared)
    for e in entries:
        if e.get("manager") == manager and e.get("operation") == "Apply":
            continue
        if e.get("subresource") != sub:
            continue
        for p in sorted(_entry_paths(e) & applied_paths):
            if p[-1] == ".":
                continue
            if get_at(base, p) != get_at(applied, p):
                conflicts.append((e["manager"], p))
                taken.setdefault(id(e), set()).add(p)
    if conflicts and not force:
        where = "" if sub is None else " with subresource \"%s\"" % sub
        fields = ["conflict with \"%s\"%s: %s" % (m, where, _path_text(p)) for m, p in conflicts]
        n = len(conflicts)
        msg = "Apply failed with %d conflict%s: %s" % (n, "" if n == 1 else "s", "\n".join(fields))
        name = (base.get("metadata") or {}).get("name") or (applied.get("metadata") or {}).get("name", "")
        raise ApiError(409, "Conflict", msg, details={
            "name": name, "group": rtype.group, "kind": rtype.plural,
            "causes": [{"reason": "FieldManagerConflict", "message": "conflict with \"%s\"" % m,
                        "field": _path_text(p)} for m, p in conflicts]})

    mine = next((e for e in entries if e.get("manager") == manager and e.get("operation") == "Apply"
                 and e.get("subresource") == sub), None)
    previously = _entry_paths(mine) if mine else set()
    others = set()
    new_entries = []
    for e in entries:
        if e is mine:
            continue
        paths = _entry_paths(e)
        if force:
            # structured-merge-diff merge/update.go (update): a forced apply removes the conflicting fields from the
            # other managers; fields it sets to the value they already have stay shared.
            paths -= taken.get(id(e), set())
        e["fieldsV1"] = to_fields_v1(paths)
        others |= paths
        new_entries.append(e)

    # Fields this manager applied before and no longer applies are removed unless someone else owns them; so is a
    # named field (struct member) above them that nobody owns any more, as a whole, while map keys are not
    # (structured-merge-diff merge/update.go prune, addBackOwnedItems, addBackDanglingItems;
    # fieldpath EnsureNamedFieldsAreMembers).
    keep = _with_named_parents(others | applied_paths, schema, builtin)
    keep |= {o[:n] for o in others for n in range(1, len(o)) if o[n - 1][:2] in ("k:", "v:")}  # items holding theirs
    gone = _with_named_parents(previously, schema, builtin) - keep - {("f:metadata",)}
    for p in sorted(gone, key=len):
        delete_at(base, p)

    applied_meta = applied.pop("metadata", {}) or {}
    top = {k: v for k, v in applied.items() if k not in ("apiVersion", "kind")}
    if part == "main" and rtype.has_status:
        top.pop("status", None)
    if part == "status":
        top = {"status": top.get("status")} if "status" in top else {}
    merged = merge_applied(base, top, schema, builtin)
    meta = merged.setdefault("metadata", {})
    for key in ("labels", "annotations"):
        if key in applied_meta:
            meta[key] = merge_applied(meta.get(key) or {}, applied_meta[key] or {}, None, builtin, key)
    if "finalizers" in applied_meta:
        meta["finalizers"] = merge_applied(meta.get("finalizers") or [], applied_meta["finalizers"] or [],
                                           _META_SCHEMA["properties"]["finalizers"], builtin, "finalizers")
    if "ownerReferences" in applied_meta:
        meta["ownerReferences"] = merge_applied(meta.get("ownerReferences") or [], applied_meta["ownerReferences"],
                                                _META_SCHEMA["properties"]["ownerReferences"], builtin)
    if current is None:
        for key in ("name", "namespace", "generateName"):
            if key in applied_meta:
                meta[key] = applied_meta[key]

    if mine is not None and previously == applied_paths and current is not None:
        entry = mine  # unchanged ownership keeps its timestamp, so a no-op apply changes nothing
    else:
        entry = {"manager": manager, "operation": "Apply", "apiVersion": rtype.api_version, "time": now_rfc3339(),
                 "fieldsType": "FieldsV1", "fieldsV1": to_fields_v1(applied_paths)}
        if sub:
            entry["subresource"] = sub
    if mine is not None:
        idx = entries.index(mine)
        new_entries.insert(min(idx, len(new_entries)), entry)
    else:
        new_entries.append(entry)
    _set_entries(merged, new_entries)
    return merged


def _path_text(path):
    out = []
    for elem in path:
        if elem.startswith("f:"):
            out.append("." + elem[2:])
        elif elem.startswith("k:"):
            out.append("[" + ",".join("%s=%s" % (k, json.dumps(v)) for k, v in json.loads(elem[2:]).items()) + "]")
        elif elem.startswith("v:"):
            out.append("[=" + elem[2:] + "]")
    return "".join(out)


def conflict_ref(rtype):
    return resource_ref(rtype)
