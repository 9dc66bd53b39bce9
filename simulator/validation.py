"""Validation, defaulting and pruning of objects against a structural openAPIV3Schema, as kube-apiserver does.

Covered: type (with x-kubernetes-int-or-string and nullable), required, enum, pattern, min/max length,
minimum/maximum (exclusive too), multipleOf, minItems/maxItems, formats date-time/byte/int32/int64, anyOf/allOf/
oneOf as value validations, additionalProperties maps, x-kubernetes-preserve-unknown-fields,
x-kubernetes-embedded-resource, defaults, dropping of nulls for non-nullable fields, pruning of unknown fields.
Not covered: x-kubernetes-validations (CEL rules), list-type uniqueness, ratcheting.
"""

import base64
import datetime
import re

from .errors import ApiError, invalid

_RE_CACHE = {}

DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")


def _regex(pattern):
    r = _RE_CACHE.get(pattern)
    if r is None:
        # Go RE2 and Python re agree on the patterns CRDs use; \z is RE2's end of text.
        r = _RE_CACHE[pattern] = re.compile(pattern.replace("\\z", "\\Z"))
    return r


def _type_name(value):
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


def _fmt(value):
    if isinstance(value, str):
        return '"%s"' % value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return '"%s"' % _type_name(value)
    if value is None:
        return "null"
    return str(value)


def _type_ok(value, typ):
    if typ == "object":
        return isinstance(value, dict)
    if typ == "array":
        return isinstance(value, list)
    if typ == "string":
        return isinstance(value, str)
    if typ == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if typ == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if typ == "boolean":
        return isinstance(value, bool)
    return True


def _check_format(value, fmt):
    if not isinstance(value, str):
        return True
    if fmt == "date-time":
        try:
            datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
            return True
        except ValueError:
            return False
    if fmt == "byte":
        try:
            base64.b64decode(value, validate=True)
            return True
        except ValueError:
            return False
    return True


class Result:
    def __init__(self):
        self.causes = []  # {reason, message, field}
        self.unknown = []  # dotted paths of pruned fields

    def add(self, reason, field, message):
        self.causes.append({"reason": reason, "message": message, "field": field})


def _join(path, key):
    return key if not path else "%s.%s" % (path, key)


def apply_schema(value, schema, path, result, prune=True):
    """Validate value (defaults applied, unknown fields pruned in place). Returns the possibly new value."""
    if schema is None:
        return value
    if value is None:
        return value
    int_or_string = schema.get("x-kubernetes-int-or-string")
    typ = schema.get("type")
    if int_or_string:
        if not (_type_ok(value, "integer") or _type_ok(value, "string")):
            result.add("FieldValueTypeMismatch", path, 'Invalid value: %s: %s in body must be of type integer-or-string: %s'
                       % (_fmt(_type_name(value)), path, _fmt(_type_name(value))))
            return value
    elif typ and not _type_ok(value, typ):
        result.add("FieldValueTypeMismatch", path, "Invalid value: %s: %s in body must be of type %s: %s"
                   % (_fmt(_type_name(value)), path, typ, _fmt(_type_name(value))))
        return value

    enum = schema.get("enum")
    if enum is not None and value not in enum:
        result.add("FieldValueNotSupported", path, "Unsupported value: %s: supported values: %s"
                   % (_fmt(value), ", ".join(_fmt(e) for e in enum)))

    if isinstance(value, str):
        _string_checks(value, schema, path, result)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        _number_checks(value, schema, path, result)

    for key in ("anyOf", "oneOf", "allOf"):
        branches = schema.get(key)
        if branches:
            _combinator(key, value, branches, path, result)

    if isinstance(value, dict):
        value = _object(value, schema, path, result, prune)
    elif isinstance(value, list):
        items = schema.get("items")
        n = len(value)
        if "minItems" in schema and n < schema["minItems"]:
            result.add("FieldValueInvalid", path, "Invalid value: %d: %s in body should have at least %d items"
                       % (n, path, schema["minItems"]))
        if "maxItems" in schema and n > schema["maxItems"]:
            result.add("FieldValueTooMany", path, "Too many: %d: must have at most %d items" % (n, schema["maxItems"]))
        if isinstance(items, dict):
            for i, item in enumerate(value):
                value[i] = apply_schema(item, items, "%s[%d]" % (path, i), result, prune)
    return value


def _string_checks(value, schema, path, result):
    if "pattern" in schema and not _regex(schema["pattern"]).search(value):
        result.add("FieldValueInvalid", path, "Invalid value: %s: %s in body should match '%s'"
                   % (_fmt(value), path, schema["pattern"]))
    if "minLength" in schema and len(value) < schema["minLength"]:
        result.add("FieldValueInvalid", path, "Invalid value: %s: %s in body should be at least %d chars long"
                   % (_fmt(value), path, schema["minLength"]))
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        result.add("FieldValueTooLong", path, "Too long: may not be more than %d bytes" % schema["maxLength"])
    fmt = schema.get("format")
    if fmt and not _check_format(value, fmt):
        result.add("FieldValueInvalid", path, "Invalid value: %s: %s in body must be of type %s: %s"
                   % (_fmt(value), path, fmt, _fmt(value)))


def _number_checks(value, schema, path, result):
    if "minimum" in schema:
        if schema.get("exclusiveMinimum") is True and value <= schema["minimum"]:
            result.add("FieldValueInvalid", path, "Invalid value: %s: %s in body should be greater than %s"
                       % (_fmt(value), path, schema["minimum"]))
        elif value < schema["minimum"]:
            result.add("FieldValueInvalid", path, "Invalid value: %s: %s in body should be greater than or equal to %s"
                       % (_fmt(value), path, schema["minimum"]))
    if "maximum" in schema:
        if schema.get("exclusiveMaximum") is True and value >= schema["maximum"]:
            result.add("FieldValueInvalid", path, "Invalid value: %s: %s in body should be less than %s"
                       % (_fmt(value), path, schema["maximum"]))
        elif value > schema["maximum"]:
            result.add("FieldValueInvalid", path, "Invalid value: %s: %s in body should be less than or equal to %s"
                       % (_fmt(value), path, schema["maximum"]))
    if schema.get("multipleOf") and value % schema["multipleOf"]:
        result.add("FieldValueInvalid", path, "Invalid value: %s: %s in body should be a multiple of %s"
                   % (_fmt(value), path, schema["multipleOf"]))
    fmt = schema.get("format")
    if fmt == "int32" and isinstance(value, int) and not -2**31 <= value < 2**31:
        result.add("FieldValueInvalid", path, "Invalid value: %s: %s in body must be of type int32: %s"
                   % (value, path, value))


def _combinator(key, value, branches, path, result):
    passed = 0
    for branch in branches:
        sub = Result()
        apply_schema(value, branch, path, sub, prune=False)
        if not sub.causes:
            passed += 1
    if key == "anyOf" and not passed:
        result.add("FieldValueInvalid", path, "Invalid value: %s: %s in body must validate at least one schema (anyOf)"
                   % (_fmt(value), path))
    elif key == "oneOf" and passed != 1:
        result.add("FieldValueInvalid", path, "Invalid value: %s: %s in body must validate one and only one schema "
                   "(oneOf)" % (_fmt(value), path))
    elif key == "allOf" and passed != len(branches):
        for branch in branches:
            apply_schema(value, branch, path, result, prune=False)


def _object(value, schema, path, result, prune):
    props = schema.get("properties") or {}
    addl = schema.get("additionalProperties")
    preserve = schema.get("x-kubernetes-preserve-unknown-fields")
    embedded = schema.get("x-kubernetes-embedded-resource")
    # Nulls of non-nullable fields are dropped before defaulting, like the apiserver does.
    for key in [k for k, v in value.items() if v is None]:
        sub = props.get(key) or (addl if isinstance(addl, dict) else None)
        if not (sub and sub.get("nullable")):
            del value[key]
    for key, sub in props.items():
        if key not in value and "default" in sub:
            import copy

            value[key] = copy.deepcopy(sub["default"])
    for key in schema.get("required") or ():
        if key not in value:
            result.add("FieldValueRequired", _join(path, key), "Required value")
    for key in list(value.keys()):
        sub_path = _join(path, key)
        if key in props:
            value[key] = apply_schema(value[key], props[key], sub_path, result, prune)
        elif isinstance(addl, dict):
            value[key] = apply_schema(value[key], addl, sub_path, result, prune)
        elif addl is True or preserve:
            continue
        elif embedded and key in ("apiVersion", "kind", "metadata"):
            continue
        elif prune:
            result.unknown.append(sub_path)
            del value[key]
    return value


def validate_metadata(rtype, obj, result):
    meta = obj.get("metadata") or {}
    name = meta.get("name")
    if name:
        if rtype.group == "" and rtype.plural == "namespaces":
            if len(name) > 63 or not DNS1123_LABEL.match(name):
                result.add("FieldValueInvalid", "metadata.name",
                           "Invalid value: %s: a lowercase RFC 1123 label must consist of lower case alphanumeric "
                           "characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name', "
                           "or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')" % _fmt(name))
        elif rtype.group == "rbac.authorization.k8s.io":
            # RBAC names are path segments ("system:controller:x" is valid).
            if name in (".", "..") or "/" in name or "%" in name:
                result.add("FieldValueInvalid", "metadata.name", "Invalid value: %s: may not contain '/' or '%%'"
                           % _fmt(name))
        elif len(name) > 253 or not DNS1123_SUBDOMAIN.match(name):
            result.add("FieldValueInvalid", "metadata.name",
                       "Invalid value: %s: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                       "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
                       "'example.com', regex used for validation is "
                       "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')" % _fmt(name))
    for key, val in (meta.get("labels") or {}).items():
        if not isinstance(val, str):
            raise ApiError(400, "BadRequest", "%s in version \"%s\" cannot be handled as a %s: json: cannot unmarshal "
                           "%s into Go struct field ObjectMeta.metadata.labels of type string"
                           % (rtype.kind, rtype.version, rtype.kind, _type_name(val)))
        if len(val) > 63 or not LABEL_VALUE.match(val):
            result.add("FieldValueInvalid", "metadata.labels", "Invalid value: %s: a valid label must be an empty "
                       "string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                       "alphanumeric character" % _fmt(val))
        name_part = key.rsplit("/", 1)[-1]
        if len(name_part) > 63 or not QUALIFIED_NAME.match(name_part):
            result.add("FieldValueInvalid", "metadata.labels", "Invalid value: %s: name part must consist of "
                       "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
                       "character" % _fmt(key))
    for key, val in (meta.get("annotations") or {}).items():
        if not isinstance(val, str):
            raise ApiError(400, "BadRequest", "%s in version \"%s\" cannot be handled as a %s: json: cannot unmarshal "
                           "%s into Go struct field ObjectMeta.metadata.annotations of type string"
                           % (rtype.kind, rtype.version, rtype.kind, _type_name(val)))


def validate_object(rtype, obj, field_validation="Warn", subresource=None):
    """Validate obj (in place: defaults, pruning) for a create/update. Raises ApiError 422 (Invalid) or 400 (strict
    decoding error). Returns the list of warnings (unknown fields under fieldValidation=Warn)."""
    result = Result()
    validate_metadata(rtype, obj, result)
    schema = rtype.schema
    if schema:
        for key in list(obj.keys()):
            if key in ("apiVersion", "kind", "metadata"):
                continue
            sub = (schema.get("properties") or {}).get(key)
            if sub is None:
                if not schema.get("x-kubernetes-preserve-unknown-fields"):
                    result.unknown.append(key)
                    del obj[key]
                continue
            obj[key] = apply_schema(obj[key], sub, key, result)
        for key in schema.get("required") or ():
            if key not in obj and key not in ("apiVersion", "kind", "metadata"):
                result.add("FieldValueRequired", key, "Required value")
    else:
        _builtin_checks(rtype, obj, result)
    if subresource == "status":
        result.causes = [c for c in result.causes if _in_part(c["field"], ("status", "metadata"))]
    elif rtype.has_status:
        # Writes to the main resource keep the stored status, which was validated when it was written.
        result.causes = [c for c in result.causes if not _in_part(c["field"], ("status",))]
    warnings = []
    if result.unknown:
        fv = (field_validation or "Warn").capitalize()
        if fv == "Strict":
            raise ApiError(400, "BadRequest", '%s in version "%s" cannot be handled as a %s: strict decoding error: %s'
                           % (rtype.kind, rtype.version, rtype.kind,
                              ", ".join('unknown field "%s"' % u for u in result.unknown)))
        if fv == "Warn":
            warnings = ['unknown field "%s"' % u for u in result.unknown]
    if result.causes:
        raise invalid(rtype, (obj.get("metadata") or {}).get("name", ""), result.causes)
    return warnings


def _in_part(field, tops):
    return any(field == t or field.startswith(t + ".") or field.startswith(t + "[") for t in tops)


def _builtin_checks(rtype, obj, result):
    """Decoding checks the apiserver applies to a few built-in kinds (wrong types are 400 there)."""
    if rtype.group == "" and rtype.plural in ("configmaps", "secrets"):
        for field in ("data", "stringData", "binaryData"):
            for key, val in (obj.get(field) or {}).items():
                if not isinstance(val, str):
                    raise ApiError(400, "BadRequest", "%s in version \"v1\" cannot be handled as a %s: json: cannot "
                                   "unmarshal %s into Go struct field %s.%s of type string"
                                   % (rtype.kind, rtype.kind, _type_name(val), rtype.kind, field))
