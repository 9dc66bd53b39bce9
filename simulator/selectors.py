"""Label and field selectors with the syntax and errors of kube-apiserver."""

import re

from .errors import ApiError

_REQ = re.compile(
    r"^\s*(?P<neg>!)?\s*(?P<key>[A-Za-z0-9_./-]+)\s*"
    r"(?:(?P<op>==|!=|=|notin(?=\s*\()|in(?=\s*\())\s*(?P<val>\([^)]*\)|[A-Za-z0-9_.-]*))?\s*$"
)


def _split_top(selector):
    """Split on commas that are not inside parentheses."""
    parts, depth, cur = [], 0, []
    for ch in selector:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p for p in parts if p.strip()]


def parse_label_selector(selector):
    """Return a list of (key, op, values) with op in =, !=, in, notin, exists, !exists."""
    reqs = []
    if not selector:
        return reqs
    for part in _split_top(selector):
        m = _REQ.match(part)
        if not m:
            raise ApiError(400, "BadRequest", "unable to parse requirement: found '%s', expected: identifier" % part.strip())
        key, op, val = m.group("key"), (m.group("op") or "").strip(), m.group("val")
        if m.group("neg"):
            if op:
                raise ApiError(400, "BadRequest", "unable to parse requirement: found '%s'" % part.strip())
            reqs.append((key, "!exists", ()))
        elif not op:
            reqs.append((key, "exists", ()))
        elif op in ("in", "notin"):
            if not val or not val.startswith("("):
                raise ApiError(400, "BadRequest", "unable to parse requirement: found '%s', expected: '('" % part.strip())
            values = tuple(v.strip() for v in val[1:-1].split(",") if v.strip())
            reqs.append((key, op, values))
        else:
            if val is None or val.startswith("("):
                raise ApiError(400, "BadRequest", "unable to parse requirement: found '%s'" % part.strip())
            reqs.append((key, "!=" if op == "!=" else "=", (val,)))
    return reqs


def labels_match(reqs, labels):
    labels = labels or {}
    for key, op, values in reqs:
        present = key in labels
        val = labels.get(key)
        if op == "=" and (not present or val != values[0]):
            return False
        if op == "!=" and present and val == values[0]:
            return False
        if op == "in" and (not present or val not in values):
            return False
        if op == "notin" and present and val in values:
            return False
        if op == "exists" and not present:
            return False
        if op == "!exists" and present:
            return False
    return True


# Field labels the real apiserver accepts per (group, plural); metadata.name/namespace work everywhere.
FIELD_LABELS = {
    ("", "pods"): {"spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
                   "spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName"},
    ("", "nodes"): {"spec.unschedulable"},
    ("", "namespaces"): {"status.phase"},
    ("", "secrets"): {"type"},
    ("", "events"): {"involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
                     "involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath",
                     "reason", "reportingComponent", "source", "type"},
    ("apps", "replicasets"): {"status.replicas"},
}


def parse_field_selector(selector, group="", plural=""):
    reqs = []
    if not selector:
        return reqs
    allowed = {"metadata.name", "metadata.namespace"} | FIELD_LABELS.get((group, plural), set())
    for part in _split_top(selector):
        m = re.match(r"^\s*([A-Za-z0-9_.]+)\s*(==|=|!=)\s*(.*?)\s*$", part)
        if not m:
            raise ApiError(400, "BadRequest", "invalid selector: '%s'; can't understand '%s'" % (selector, part))
        key, op, val = m.groups()
        if key not in allowed:
            raise ApiError(400, "BadRequest", 'field label not supported: %s' % key)
        reqs.append((key, "!=" if op == "!=" else "=", val))
    return reqs


def _field_value(obj, path):
    cur = obj
    for part in path.split("."):
        if not isinstance(cur, dict):
            return ""
        cur = cur.get(part)
    if cur is None:
        return ""
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return str(cur)


def fields_match(reqs, obj):
    for key, op, val in reqs:
        actual = _field_value(obj, key)
        if op == "=" and actual != val:
            return False
        if op == "!=" and actual == val:
            return False
    return True


class Selector:
    """Compiled label + field selector."""

    def __init__(self, label_selector=None, field_selector=None, group="", plural=""):
        self.labels = parse_label_selector(label_selector)
        self.fields = parse_field_selector(field_selector, group, plural)

    def __bool__(self):
        return bool(self.labels or self.fields)

    def matches(self, obj):
        if obj is None:
            return False
        meta = obj.get("metadata") or {}
        return labels_match(self.labels, meta.get("labels")) and fields_match(self.fields, obj)
