"""Decoding the Kubernetes protobuf request bodies the simulator must read: kubectl's typed clients send the access
reviews (kubectl auth can-i) and the objects of `kubectl create <kind>` as `application/vnd.kubernetes.protobuf` and
do not fall back to JSON. Kinds not listed in MESSAGES are answered 415 (app.py).

Written from Kubernetes v1.32:
- the envelope: staging/src/k8s.io/apimachinery/pkg/runtime/serializer/protobuf/protobuf.go (the 4-byte prefix
  "k8s\\x00", then a runtime.Unknown: typeMeta = 1 {apiVersion = 1, kind = 2}, raw = 2, contentEncoding = 3,
  contentType = 4; staging/src/k8s.io/apimachinery/pkg/runtime/generated.proto);
- the messages: staging/src/k8s.io/api/authorization/v1/generated.proto (field numbers below);
- the wire format: protocol buffers encoding (varint, 64-bit, length-delimited, 32-bit).
Answers go back as JSON, which the client accepts (it sends Accept: application/vnd.kubernetes.protobuf,application/json).
"""

from .errors import ApiError

CONTENT_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"

# A message is {field number: (json name, nested message or str, repeated)}; MAP is a map<string, string>.
MAP = "map"
BOOL = "bool"
OBJECT_META = {1: ("name", str, False), 2: ("generateName", str, False), 3: ("namespace", str, False),
               11: ("labels", MAP, False), 12: ("annotations", MAP, False), 14: ("finalizers", str, True)}
POLICY_RULE = {1: ("verbs", str, True), 2: ("apiGroups", str, True), 3: ("resources", str, True),
               4: ("resourceNames", str, True), 5: ("nonResourceURLs", str, True)}
SUBJECT = {1: ("kind", str, False), 2: ("apiGroup", str, False), 3: ("name", str, False), 4: ("namespace", str, False)}
ROLE_REF = {1: ("apiGroup", str, False), 2: ("kind", str, False), 3: ("name", str, False)}
RESOURCE_ATTRIBUTES = {1: ("namespace", str, False), 2: ("verb", str, False), 3: ("group", str, False),
                       4: ("version", str, False), 5: ("resource", str, False), 6: ("subresource", str, False),
                       7: ("name", str, False)}
NON_RESOURCE_ATTRIBUTES = {1: ("path", str, False), 2: ("verb", str, False)}
SELF_ACCESS_SPEC = {1: ("resourceAttributes", RESOURCE_ATTRIBUTES, False),
                    2: ("nonResourceAttributes", NON_RESOURCE_ATTRIBUTES, False)}
ACCESS_SPEC = {**SELF_ACCESS_SPEC, 3: ("user", str, False), 4: ("groups", str, True), 6: ("uid", str, False)}
RULES_SPEC = {1: ("namespace", str, False)}
MESSAGES = {
    "SelfSubjectAccessReview": {1: ("metadata", OBJECT_META, False), 2: ("spec", SELF_ACCESS_SPEC, False)},
    "SubjectAccessReview": {1: ("metadata", OBJECT_META, False), 2: ("spec", ACCESS_SPEC, False)},
    "LocalSubjectAccessReview": {1: ("metadata", OBJECT_META, False), 2: ("spec", ACCESS_SPEC, False)},
    "SelfSubjectRulesReview": {1: ("metadata", OBJECT_META, False), 2: ("spec", RULES_SPEC, False)},
    # What `kubectl create namespace|configmap|serviceaccount|role|rolebinding|clusterrole|clusterrolebinding`
    # sends (staging/src/k8s.io/api/core/v1/generated.proto, rbac/v1/generated.proto).
    "Namespace": {1: ("metadata", OBJECT_META, False), 2: ("spec", {1: ("finalizers", str, True)}, False)},
    "ConfigMap": {1: ("metadata", OBJECT_META, False), 2: ("data", MAP, False), 4: ("immutable", BOOL, False)},
    "ServiceAccount": {1: ("metadata", OBJECT_META, False), 4: ("automountServiceAccountToken", BOOL, False)},
    "Role": {1: ("metadata", OBJECT_META, False), 2: ("rules", POLICY_RULE, True)},
    "ClusterRole": {1: ("metadata", OBJECT_META, False), 2: ("rules", POLICY_RULE, True)},
    "RoleBinding": {1: ("metadata", OBJECT_META, False), 2: ("subjects", SUBJECT, True), 3: ("roleRef", ROLE_REF, False)},
    "ClusterRoleBinding": {1: ("metadata", OBJECT_META, False), 2: ("subjects", SUBJECT, True),
                           3: ("roleRef", ROLE_REF, False)},
}
UNKNOWN = {1: ("typeMeta", {1: ("apiVersion", str, False), 2: ("kind", str, False)}, False), 2: ("raw", bytes, False)}


def _varint(data, pos):
    value = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("truncated varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7


def _fields(data):
    """(field number, wire type, value) of every field of one message."""
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 1:
            value, pos = data[pos:pos + 8], pos + 8
        elif wire == 2:
            size, pos = _varint(data, pos)
            value, pos = data[pos:pos + size], pos + size
        elif wire == 5:
            value, pos = data[pos:pos + 4], pos + 4
        else:
            raise ValueError("unsupported wire type %d" % wire)
        if pos > len(data):
            raise ValueError("truncated field %d" % number)
        yield number, wire, value


def decode_message(data, message):
    out = {}
    for number, wire, value in _fields(data):
        if number not in message:
            continue  # fields the simulator does not read (extra, selectors) are skipped, as unknown fields are
        name, kind, repeated = message[number]
        if kind == BOOL:
            out[name] = bool(value)
            continue
        if wire != 2:
            continue
        if kind == MAP:  # map entries: key = 1, value = 2
            entry = decode_message(value, {1: ("key", str, False), 2: ("value", str, False)})
            out.setdefault(name, {})[entry.get("key", "")] = entry.get("value", "")
            continue
        if kind is str:
            item = value.decode("utf-8")
        elif kind is bytes:
            item = bytes(value)
        else:
            item = decode_message(value, kind)
        if repeated:
            out.setdefault(name, []).append(item)
        else:
            out[name] = item
    return out


def decodable(kind):
    return kind in MESSAGES


def decode(raw, expected_kind):
    """The object a protobuf request body carries, as its JSON form would be."""
    try:
        if not raw.startswith(MAGIC):
            raise ValueError("the body does not start with the protobuf prefix")
        unknown = decode_message(raw[len(MAGIC):], UNKNOWN)
        kind = (unknown.get("typeMeta") or {}).get("kind") or expected_kind
        if kind not in MESSAGES:
            raise ValueError("no protobuf message for kind %s" % kind)
        obj = decode_message(unknown.get("raw", b""), MESSAGES[kind])
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApiError(400, "BadRequest", "error decoding request body: %s" % exc) from None
    obj["apiVersion"] = (unknown.get("typeMeta") or {}).get("apiVersion") or ""
    obj["kind"] = kind
    return obj
