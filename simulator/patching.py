"""JSON merge patch (RFC 7386), JSON patch (RFC 6902) and a strategic merge patch for built-in kinds."""

import copy

import jsonpatch

from .errors import ApiError

# Lists that strategic merge patch merges by key in built-in kinds (patchMergeKey); others are replaced.
MERGE_KEYS = {
    "containers": "name", "initContainers": "name", "ephemeralContainers": "name", "volumes": "name",
    "env": "name", "volumeMounts": "mountPath", "volumeDevices": "devicePath", "ports": "containerPort",
    "imagePullSecrets": "name", "hostAliases": "ip", "conditions": "type", "tolerations": None,
    "ownerReferences": "uid", "subjects": None, "rules": None, "taints": "key", "addresses": "type",
    "finalizers": None,
}


def merge_patch(target, patch):
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if not isinstance(target, dict):
        target = {}
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        else:
            target[key] = merge_patch(target.get(key), value)
    return target


def json_patch(target, operations):
    if not isinstance(operations, list):
        raise ApiError(400, "BadRequest", "json: cannot unmarshal object into Go value of type jsonpatch.Patch")
    try:
        return jsonpatch.apply_patch(target, operations)
    except jsonpatch.JsonPatchTestFailed as exc:
        raise ApiError(422, "Invalid", "the server rejected our request due to an error in our request: %s" % exc)
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, KeyError, IndexError, TypeError) as exc:
        raise ApiError(422, "Invalid", "the server rejected our request due to an error in our request: %s" % exc)


def strategic_merge_patch(target, patch, field=None):
    """Strategic merge patch as far as built-in kinds need: keyed list merge, $patch directives, null deletes."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if patch.get("$patch") == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    if patch.get("$patch") == "delete":
        return None
    if not isinstance(target, dict):
        target = {}
    for key, value in patch.items():
        if key.startswith("$setElementOrder/") or key in ("$retainKeys", "$patch"):
            continue
        if key.startswith("$deleteFromPrimitiveList/"):
            real = key.split("/", 1)[1]
            target[real] = [v for v in target.get(real) or [] if v not in value]
            continue
        if value is None:
            target.pop(key, None)
        elif isinstance(value, list) and MERGE_KEYS.get(key) and isinstance(target.get(key), list):
            target[key] = _merge_list(target[key], value, MERGE_KEYS[key])
        elif isinstance(value, dict):
            merged = strategic_merge_patch(target.get(key), value, key)
            if merged is None:
                target.pop(key, None)
            else:
                target[key] = merged
        else:
            target[key] = copy.deepcopy(value)
    return target


def _merge_list(current, patch, merge_key):
    result = [copy.deepcopy(i) for i in current]
    for item in patch:
        if not isinstance(item, dict) or merge_key not in item:
            if item not in result:
                result.append(copy.deepcopy(item))
            continue
        idx = next((i for i, c in enumerate(result) if isinstance(c, dict) and c.get(merge_key) == item[merge_key]),
                   None)
        if item.get("$patch") == "delete":
            if idx is not None:
                result.pop(idx)
            continue
        if idx is None:
            result.append({k: v for k, v in copy.deepcopy(item).items() if k != "$patch"})
        else:
            result[idx] = strategic_merge_patch(result[idx], item)
    return result
