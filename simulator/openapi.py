"""OpenAPI documents of the simulated API server, built from what it serves: /openapi/v3 (index and one document per
group version) and /openapi/v2 (one JSON document).

Written from Kubernetes v1.32:
- the v3 index and documents: staging/src/k8s.io/kube-openapi/pkg/handler3/handler.go (`{"paths": {"apis/G/V":
  {"serverRelativeURL": "/openapi/v3/apis/G/V?hash=H"}}}`, H the upper-case hex SHA-512 of the document, served as
  application/json) and staging/src/k8s.io/client-go/openapi (what kubectl fetches: the index, then the document of
  the resource's group version, by serverRelativeURL);
- custom resources: staging/src/k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder/builder.go (one schema
  per version named by util.ToRESTFriendlyName: the reversed group, the version and the kind, e.g.
  com.mellanox.v1alpha1.NicClusterPolicy; metadata as a reference to ObjectMeta; apiVersion and kind with their
  standard descriptions; "x-kubernetes-group-version-kind"; the paths of the resource's verbs);
- paths and operations: staging/src/k8s.io/apiserver/pkg/endpoints/installer.go (collection and item paths, the
  namespaced and all-namespaces list, the status subresource; every operation carries "x-kubernetes-action" and
  "x-kubernetes-group-version-kind"; create, update and patch take the dryRun, fieldManager and fieldValidation
  query parameters, patch also force) - kubectl's field validation looks for fieldValidation among the PATCH
  operation's parameters of the kind (staging/src/k8s.io/cli-runtime/pkg/resource/query_param_verifier_v3.go) and
  then leaves validation to the server (`fieldValidation=Strict`);
- /openapi/v2: staging/src/k8s.io/kube-openapi/pkg/handler/handler.go serves application/json and the gnostic
  protobuf (application/com.github.proto-openapi.spec.v2@v1.0+protobuf); the simulator encodes no protobuf and answers
  a request that accepts only protobuf with 406 Not Acceptable, as that handler does for a type it cannot produce.
  kubectl 1.32 asks for v2 only when v3 fails (fallback_query_param_verifier.go).

The built-in kinds carry only apiVersion, kind and metadata (and keep unknown fields): the simulator holds no schema
for their other fields, so `kubectl explain pod.spec` does not work against it (docs/simulator.md says so).
"""

import copy
import hashlib
import json

OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
API_VERSION_DESCRIPTION = ("APIVersion defines the versioned schema of this representation of an object. Servers "
                           "should convert recognized schemas to the latest internal value, and may reject "
                           "unrecognized values. More info: https://git.k8s.io/community/contributors/devel/"
                           "sig-architecture/api-conventions.md#resources")
KIND_DESCRIPTION = ("Kind is a string value representing the REST resource this object represents. Servers may infer "
                    "this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More "
                    "info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds")
METADATA_DESCRIPTION = ("Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/"
                        "sig-architecture/api-conventions.md#metadata")
# ObjectMeta's fields and their types (staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/types.go).
_STRING_MAP = {"type": "object", "additionalProperties": {"type": "string", "default": ""}}
OBJECT_META_SCHEMA = {
    "type": "object",
    "description": "ObjectMeta is metadata that all persisted resources must have, which includes all objects users "
                   "must create.",
    "properties": {
        "annotations": _STRING_MAP, "creationTimestamp": {"type": "string", "format": "date-time"},
        "deletionGracePeriodSeconds": {"type": "integer", "format": "int64"},
        "deletionTimestamp": {"type": "string", "format": "date-time"},
        "finalizers": {"type": "array", "items": {"type": "string", "default": ""}, "x-kubernetes-list-type": "set"},
        "generateName": {"type": "string"}, "generation": {"type": "integer", "format": "int64"},
        "labels": _STRING_MAP,
        "managedFields": {"type": "array", "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
        "name": {"type": "string"}, "namespace": {"type": "string"},
        "ownerReferences": {"type": "array", "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                            "x-kubernetes-list-map-keys": ["uid"], "x-kubernetes-list-type": "map",
                            "x-kubernetes-patch-merge-key": "uid", "x-kubernetes-patch-strategy": "merge"},
        "resourceVersion": {"type": "string"}, "selfLink": {"type": "string"}, "uid": {"type": "string"},
    },
}
BUILTIN_PACKAGES = {
    "": "io.k8s.api.core", "apps": "io.k8s.api.apps", "rbac.authorization.k8s.io": "io.k8s.api.rbac",
    "authorization.k8s.io": "io.k8s.api.authorization",
    "apiextensions.k8s.io": "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions",
    "security.openshift.io": "com.github.openshift.api.security",
}
WRITE_PARAMETERS = ("dryRun", "fieldManager", "fieldValidation")
PATCH_CONTENT_TYPES = ("application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json")


def schema_name(rtype):
    """Name of rtype's schema (ToRESTFriendlyName of a custom resource; the Go package of a built-in kind)."""
    if rtype.builtin:
        return "%s.%s.%s" % (BUILTIN_PACKAGES.get(rtype.group, rtype.group), rtype.version, rtype.kind)
    return "%s.%s.%s" % (".".join(reversed(rtype.group.split("."))), rtype.version, rtype.kind)


def _gvk(rtype):
    return {"group": rtype.group, "kind": rtype.kind, "version": rtype.version}


def _ref(name, v2=False):
    return ("#/definitions/" if v2 else "#/components/schemas/") + name


def _kind_schema(rtype, crd):
    """The schema of one kind: the CRD version's structural schema, or the envelope of a built-in kind."""
    version = next((v for v in ((crd or {}).get("spec") or {}).get("versions") or [] if v.get("name") == rtype.version),
                   None)
    schema = copy.deepcopy(((version or {}).get("schema") or {}).get("openAPIV3Schema") or {})
    if not schema:
        schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    schema.setdefault("type", "object")
    props = schema.setdefault("properties", {})
    props["apiVersion"] = dict(props.get("apiVersion") or {}, type="string")
    props["apiVersion"].setdefault("description", API_VERSION_DESCRIPTION)
    props["kind"] = dict(props.get("kind") or {}, type="string")
    props["kind"].setdefault("description", KIND_DESCRIPTION)
    props["metadata"] = {"allOf": [{"$ref": _ref(OBJECT_META)}], "default": {}, "description": METADATA_DESCRIPTION}
    schema["x-kubernetes-group-version-kind"] = [_gvk(rtype)]
    return schema


def _parameter(name, where="query", required=False):
    return {"name": name, "in": where, "required": required, "schema": {"type": "string", "uniqueItems": True}}


def _operation(rtype, action, verb_name, scope, extra_params=(), body=False, patch=False):
    kind = rtype.kind
    group_part = "".join(p.capitalize() for p in (rtype.group or "core").replace("-", ".").split("."))
    op = {
        "operationId": "%s%s%s%s%s" % (verb_name, group_part, rtype.version.capitalize(), scope, kind),
        "parameters": [_parameter(p) for p in extra_params],
        "responses": {"200": {"description": "OK", "content": {"application/json": {
            "schema": {"$ref": _ref(schema_name(rtype))}}}}},
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": _gvk(rtype),
    }
    if body:
        # Strategic merge patch is left out: custom resources refuse it, and for the built-in kinds the simulator
        # holds no field schema with the patch strategies, so kubectl must not build a strategic patch from this
        # document (kubectl/pkg/cmd/apply/patcher.go gvkSupportsPatchOpenAPIV3); it then uses its compiled-in
        # types, as against a server without OpenAPI.
        types = PATCH_CONTENT_TYPES if patch else ("*/*",)
        op["requestBody"] = {"required": True, "content": {
            t: {"schema": {"type": "object"} if patch else {"$ref": _ref(schema_name(rtype))}} for t in types}}
    return op


def _paths(rtype):
    base = "/api/%s" % rtype.version if not rtype.group else "/apis/%s/%s" % (rtype.group, rtype.version)
    scope = "Namespaced" if rtype.namespaced else ""
    collection = "%s/namespaces/{namespace}/%s" % (base, rtype.plural) if rtype.namespaced else \
        "%s/%s" % (base, rtype.plural)
    item = collection + "/{name}"
    verbs = set(rtype.verbs)
    paths = {}
    ops = {}
    if "list" in verbs:
        ops["get"] = _operation(rtype, "list", "list", scope, ("labelSelector", "fieldSelector", "limit", "continue",
                                                               "resourceVersion", "watch"))
    if "create" in verbs:
        ops["post"] = _operation(rtype, "post", "create", scope, WRITE_PARAMETERS, body=True)
    if "deletecollection" in verbs:
        ops["delete"] = _operation(rtype, "deletecollection", "deleteCollection", scope, ("labelSelector",))
    if ops:
        path_params = [_parameter("namespace", "path", True)] if rtype.namespaced else []
        paths[collection] = dict(ops, parameters=path_params + [_parameter("pretty")])
    ops = {}
    if "get" in verbs:
        ops["get"] = _operation(rtype, "get", "read", scope)
    if "update" in verbs:
        ops["put"] = _operation(rtype, "put", "replace", scope, WRITE_PARAMETERS, body=True)
    if "patch" in verbs:
        ops["patch"] = _operation(rtype, "patch", "patch", scope, WRITE_PARAMETERS + ("force",), body=True, patch=True)
    if "delete" in verbs:
        ops["delete"] = _operation(rtype, "delete", "delete", scope,
                                   ("dryRun", "gracePeriodSeconds", "propagationPolicy"))
    item_params = [_parameter("name", "path", True)] + \
        ([_parameter("namespace", "path", True)] if rtype.namespaced else []) + [_parameter("pretty")]
    if ops:
        paths[item] = dict(ops, parameters=item_params)
    if rtype.namespaced and "list" in verbs:
        paths["%s/%s" % (base, rtype.plural)] = {
            "get": _operation(rtype, "list", "list", "ForAllNamespaces", ("labelSelector", "fieldSelector", "limit",
                                                                          "continue", "resourceVersion", "watch")),
            "parameters": [_parameter("pretty")]}
    if "status" in rtype.subresources:
        paths[item + "/status"] = {
            "get": _operation(rtype, "get", "read", scope + "Status"),
            "put": _operation(rtype, "put", "replace", scope + "Status", WRITE_PARAMETERS, body=True),
            "patch": _operation(rtype, "patch", "patch", scope + "Status", WRITE_PARAMETERS + ("force",), body=True,
                                patch=True),
            "parameters": item_params}
    return paths


def group_version_document(types, crds, info_version):
    """The OpenAPI v3 document of one group version (types: its served ResourceTypes)."""
    paths, schemas = {}, {OBJECT_META: OBJECT_META_SCHEMA}
    for rtype in sorted(types, key=lambda t: t.plural):
        schemas[schema_name(rtype)] = _kind_schema(rtype, None if rtype.builtin else crds.get(rtype.key))
        paths.update(_paths(rtype))
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": info_version}, "paths": paths,
            "components": {"schemas": schemas}}


def document_hash(document):
    return hashlib.sha512(encode(document)).hexdigest().upper()


def encode(document):
    return json.dumps(document, separators=(",", ":"), sort_keys=True).encode()


def gv_path(group, version):
    return "api/%s" % version if not group else "apis/%s/%s" % (group, version)


def _to_v2(value):
    """A v3 schema as a v2 definition: references to #/definitions, no OpenAPI 3 only keywords (builder.go's v2
    conversion drops nullable and the like)."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key == "$ref" and isinstance(item, str):
                out[key] = item.replace("#/components/schemas/", "#/definitions/")
            elif key in ("nullable", "anyOf", "oneOf", "not"):
                continue
            elif key == "allOf" and len(item) == 1 and "$ref" in item[0]:
                out["$ref"] = _to_v2(item[0])["$ref"]
            else:
                out[key] = _to_v2(item)
        return out
    if isinstance(value, list):
        return [_to_v2(v) for v in value]
    return value


def v2_document(gv_documents, info_version):
    """/openapi/v2 from the group-version documents: definitions and paths (parameters inline, v2 style)."""
    definitions, paths = {}, {}
    for doc in gv_documents:
        for name, schema in doc["components"]["schemas"].items():
            definitions[name] = _to_v2(schema)
        for path, item in doc["paths"].items():
            converted = {}
            for method, op in item.items():
                if method == "parameters":
                    converted[method] = [{"name": p["name"], "in": p["in"], "required": p["required"], "type": "string",
                                          "uniqueItems": True} for p in op]
                    continue
                op2 = {k: v for k, v in op.items() if k not in ("requestBody", "responses", "parameters")}
                op2["parameters"] = [{"name": p["name"], "in": p["in"], "type": "string", "uniqueItems": True}
                                     for p in op["parameters"]]
                if "requestBody" in op:
                    op2["parameters"].append({"name": "body", "in": "body", "required": True,
                                              "schema": {"type": "object"}})
                op2["responses"] = {"200": {"description": "OK", "schema": {
                    "$ref": "#/definitions/" + op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
                    .rsplit("/", 1)[1]}}}
                op2["produces"] = ["application/json"]
                converted[method] = op2
            paths[path] = converted
    return {"swagger": "2.0", "info": {"title": "Kubernetes", "version": info_version}, "paths": paths,
            "definitions": definitions}


def accepts_json(accept):
    """True when the Accept header admits application/json (or anything)."""
    if not accept:
        return True
    for part in accept.split(","):
        media = part.split(";")[0].strip().lower()
        if media in ("application/json", "application/*", "*/*"):
            return True
    return False


class OpenAPI:
    """Documents cached per set of served types (a CRD deleted or a catalogue change rebuilds them)."""

    def __init__(self):
        self._key = None
        self._docs = {}
        self._bytes = {}
        self._hashes = {}
        self._v2 = None
        self._info_version = ""

    def refresh(self, served_types, crds, info_version):
        # A CRD replaced by another version of its operator (cluster.py) is another object: the documents follow it.
        key = (tuple(sorted((t.group, t.version, t.plural) for t in served_types)),
               tuple(sorted((k, id(v)) for k, v in crds.items())))
        if key == self._key:
            return
        by_gv = {}
        for rtype in served_types:
            by_gv.setdefault((rtype.group, rtype.version), []).append(rtype)
        docs = {gv_path(g, v): group_version_document(types, crds, info_version) for (g, v), types in by_gv.items()}
        self._docs = docs
        self._bytes = {path: encode(doc) for path, doc in docs.items()}
        self._hashes = {path: hashlib.sha512(raw).hexdigest().upper() for path, raw in self._bytes.items()}
        self._v2 = None
        self._info_version = info_version
        self._key = key

    def index(self):
        return {"paths": {path: {"serverRelativeURL": "/openapi/v3/%s?hash=%s" % (path, self._hashes[path])}
                          for path in sorted(self._docs)}}

    def document_bytes(self, path):
        """(bytes, hash) of the document at api/V or apis/G/V, or None."""
        if path not in self._bytes:
            return None
        return self._bytes[path], self._hashes[path]

    def v2_bytes(self):
        if self._v2 is None:
            self._v2 = encode(v2_document([self._docs[p] for p in sorted(self._docs)], self._info_version))
        return self._v2
