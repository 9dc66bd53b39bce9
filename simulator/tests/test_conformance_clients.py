"""What strict clients ask of the API server beyond CRUD, over raw HTTP: access reviews, Table output, OpenAPI and
protobuf bodies (sources in authorization.py, tables.py, openapi.py, protobuf.py). test_kubectl.py drives the same
through the system kubectl."""

from simulator import protobuf, tables
from simulator.tests.test_conformance_rbac import As, grant

AUTHZ = "/apis/authorization.k8s.io/v1"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


def access_review(namespace, verb, resource, group=""):
    return {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": {"namespace": namespace, "verb": verb, "group": group, "resource": resource}}}


def test_access_reviews_answer_with_the_rbac_verdict_and_the_binding(api, http):
    grant(http, "default", "reader", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}])
    bot = As(api, "default", "bot")
    allowed = bot.post(AUTHZ + "/selfsubjectaccessreviews", access_review("default", "get", "configmaps"))
    assert allowed.status_code == 201
    assert allowed.json()["status"] == {"allowed": True, "reason": 'RBAC: allowed by RoleBinding "reader/default" of '
                                        'Role "reader" to ServiceAccount "bot/default"'}
    denied = bot.post(AUTHZ + "/selfsubjectaccessreviews", access_review("kube-system", "get", "configmaps"))
    assert denied.json()["status"] == {"allowed": False}
    admin = http.post(AUTHZ + "/selfsubjectaccessreviews", {"spec": {"resourceAttributes": {
        "verb": "*", "group": "*", "resource": "*"}}})
    assert admin.json()["status"] == {"allowed": True}
    # Someone else's access needs create on subjectaccessreviews, which system:basic-user does not give.
    other = {"spec": {"user": "system:serviceaccount:default:bot",
                      "resourceAttributes": {"namespace": "default", "verb": "get", "resource": "configmaps"}}}
    assert bot.post(AUTHZ + "/subjectaccessreviews", other).status_code == 403
    assert http.post(AUTHZ + "/subjectaccessreviews", other).json()["status"]["allowed"] is True
    local = http.post(AUTHZ + "/namespaces/kube-system/localsubjectaccessreviews", other)
    assert local.status_code == 400 and "must match namespace" in local.json()["message"]


def test_rules_reviews_list_the_rules_of_the_namespace_and_the_cluster(api, http):
    grant(http, "default", "reader", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}])
    bot = As(api, "default", "bot")
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview", "spec": {"namespace": "default"}}
    rules = bot.post(AUTHZ + "/selfsubjectrulesreviews", review).json()["status"]
    assert {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["configmaps"]} in rules["resourceRules"]
    assert {"verbs": ["create"], "apiGroups": ["authorization.k8s.io"],
            "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]} in rules["resourceRules"]
    assert rules["incomplete"] is False
    elsewhere = bot.post(AUTHZ + "/selfsubjectrulesreviews", dict(review, spec={"namespace": "other"})).json()["status"]
    assert all("configmaps" not in r["resources"] for r in elsewhere["resourceRules"])
    assert bot.post(AUTHZ + "/selfsubjectrulesreviews", dict(review, spec={})).status_code == 400
    admin = http.post(AUTHZ + "/selfsubjectrulesreviews", review).json()["status"]
    assert admin["resourceRules"][0] == {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}


def _field(number, payload):
    """One length-delimited protobuf field (payload shorter than 128 bytes)."""
    return bytes([number << 3 | 2, len(payload)]) + payload


def test_a_protobuf_review_is_decoded():
    # The shape kubectl 1.32 sends for `kubectl auth can-i create pods -n default` (runtime.Unknown envelope).
    attributes = b"".join(_field(n, v) for n, v in ((1, b"default"), (2, b"create"), (3, b""), (4, b""), (5, b"pods"),
                                                    (6, b""), (7, b"")))
    review = _field(1, b"") + _field(2, _field(1, attributes))
    type_meta = _field(1, b"authorization.k8s.io/v1") + _field(2, b"SelfSubjectAccessReview")
    raw = protobuf.MAGIC + _field(1, type_meta) + _field(2, review)
    decoded = protobuf.decode(raw, "SelfSubjectAccessReview")
    assert decoded["kind"] == "SelfSubjectAccessReview" and decoded["apiVersion"] == "authorization.k8s.io/v1"
    assert decoded["spec"]["resourceAttributes"] == {"namespace": "default", "verb": "create", "group": "",
                                                     "version": "", "resource": "pods", "subresource": "", "name": ""}
    labels = _field(11, _field(1, b"team") + _field(2, b"rdma"))
    config_map = _field(1, _field(1, b"settings") + labels) + _field(2, _field(1, b"mtu") + _field(2, b"9000"))
    decoded = protobuf.decode(protobuf.MAGIC + _field(1, _field(1, b"v1") + _field(2, b"ConfigMap")) + _field(2, config_map),
                              "ConfigMap")
    assert decoded == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "labels": {"team": "rdma"}},
                       "data": {"mtu": "9000"}}


def test_tables_for_built_in_kinds_and_custom_resource_columns(api, http):
    nodes = http.get("/api/v1/nodes", headers={"Accept": TABLE}).json()
    assert nodes["kind"] == "Table" and nodes["apiVersion"] == "meta.k8s.io/v1"
    assert [c["name"] for c in nodes["columnDefinitions"] if c["priority"] == 0] == ["Name", "Status", "Roles", "Age",
                                                                                     "Version"]
    plain = http.get("/api/v1/nodes").json()
    assert plain["kind"] == "NodeList"
    none = http.get("/api/v1/namespaces?includeObject=None", headers={"Accept": TABLE}).json()
    assert all("object" not in row for row in none["rows"])
    meta = http.get("/api/v1/namespaces", headers={"Accept": TABLE}).json()
    assert meta["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
    assert http.get("/api/v1/namespaces?includeObject=All", headers={"Accept": TABLE}).status_code == 400


def test_printer_column_jsonpath_subset():
    steps = tables.parse_jsonpath('.status.conditions[?(@.type=="Progressing")].status')
    obj = {"status": {"conditions": [{"type": "Available", "status": "True"},
                                     {"type": "Progressing", "status": "False"}]}}
    assert tables.evaluate_jsonpath(steps, obj) == ["False"]
    escaped = tables.parse_jsonpath(r".metadata.annotations.sriovnetwork\.openshift\.io/current-state")
    assert tables.evaluate_jsonpath(escaped, {"metadata": {"annotations": {
        "sriovnetwork.openshift.io/current-state": "Idle"}}}) == ["Idle"]
    assert tables.evaluate_jsonpath(tables.parse_jsonpath(".spec.names[0]"), {"spec": {"names": ["a", "b"]}}) == ["a"]
    assert tables.evaluate_jsonpath(tables.parse_jsonpath(".spec.missing"), {"spec": {}}) == []
    assert [tables.human_duration(s) for s in (-5, 0, 119, 125, 600, 3 * 3600 + 60, 9 * 3600, 3 * 86400 + 3600)] == [
        "<invalid>", "0s", "119s", "2m5s", "10m", "3h1m", "9h", "3d1h"]


def test_openapi_v3_index_and_v2_negotiation(api, http):
    index = http.get("/openapi/v3").json()["paths"]
    url = index["api/v1"]["serverRelativeURL"]
    document = http.get(url).json()
    assert "io.k8s.api.core.v1.ConfigMap" in document["components"]["schemas"]
    patch = document["paths"]["/api/v1/namespaces/{namespace}/configmaps/{name}"]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {"group": "", "kind": "ConfigMap", "version": "v1"}
    assert "fieldValidation" in [p["name"] for p in patch["parameters"]]
    stale = http.get("/openapi/v3/api/v1?hash=0", allow_redirects=False)
    assert stale.status_code == 301 and stale.headers["Location"].endswith(url)
    assert http.get("/openapi/v2", headers={"Accept": "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"}
                    ).status_code == 406
    assert http.get("/openapi/v2", headers={"Accept": "application/json"}).json()["swagger"] == "2.0"
