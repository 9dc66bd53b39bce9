"""CRUD semantics of the simulated API server, each as a real kube-apiserver behaves."""

import pytest
from kubernetes.dynamic.exceptions import ConflictError, NotFoundError, UnprocessibleEntityError

from .conftest import ncp_body, served_ncp


def cm(name, labels=None, data=None):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels or {}},
            "data": data or {"k": "v"}}


def test_create_twice_is_409_already_exists(dyn):
    cms = dyn.resources.get(api_version="v1", kind="ConfigMap")
    cms.create(body=cm("dup"), namespace="default")
    with pytest.raises(ConflictError) as exc:
        cms.create(body=cm("dup"), namespace="default")
    status = exc.value.body if isinstance(exc.value.body, dict) else __import__("json").loads(exc.value.body)
    assert status["kind"] == "Status" and status["reason"] == "AlreadyExists" and status["code"] == 409
    assert status["message"] == 'configmaps "dup" already exists'
    assert status["details"] == {"name": "dup", "group": "", "kind": "configmaps"}


def test_update_with_stale_resource_version_is_409_conflict(dyn):
    cms = dyn.resources.get(api_version="v1", kind="ConfigMap")
    first = cms.create(body=cm("stale"), namespace="default").to_dict()
    fresh = dict(first, data={"k": "v2"})
    cms.replace(body=fresh, namespace="default")
    stale = dict(first, data={"k": "v3"})
    with pytest.raises(ConflictError) as exc:
        cms.replace(body=stale, namespace="default")
    assert "the object has been modified" in str(exc.value.body)
    assert cms.get(name="stale", namespace="default").data.k == "v2"


def test_get_missing_is_404_status_not_found(http):
    resp = http.get("/api/v1/namespaces/default/configmaps/missing")
    assert resp.status_code == 404
    body = resp.json()
    assert (body["kind"], body["reason"], body["code"]) == ("Status", "NotFound", 404)
    assert body["message"] == 'configmaps "missing" not found'


def test_get_missing_custom_resource_names_group(api, http):
    served_ncp(api)
    body = http.get("/apis/mellanox.com/v1alpha1/nicclusterpolicies/x").json()
    assert body["message"] == 'nicclusterpolicies.mellanox.com "x" not found'
    assert body["details"] == {"name": "x", "group": "mellanox.com", "kind": "nicclusterpolicies"}


def test_wrongly_typed_field_is_422_naming_the_field(api, http):
    served_ncp(api)
    body = ncp_body(ofedDriver={"image": "doca-driver", "repository": "nvcr.io/nvidia/mellanox", "version": 25})
    resp = http.post("/apis/mellanox.com/v1alpha1/nicclusterpolicies", body)
    assert resp.status_code == 422
    status = resp.json()
    assert status["reason"] == "Invalid"
    assert status["message"].startswith('NicClusterPolicy.mellanox.com "nic-cluster-policy" is invalid: '
                                        'spec.ofedDriver.version: Invalid value: ')
    causes = status["details"]["causes"]
    assert [c["field"] for c in causes] == ["spec.ofedDriver.version"]
    assert causes[0]["reason"] == "FieldValueTypeMismatch"
    assert api.store.try_get(served_ncp(api), None, "nic-cluster-policy") is None


def test_required_enum_and_minimum_violations_are_reported_with_reason_types(api, http):
    served_ncp(api)
    body = ncp_body(ofedDriver={"version": "1", "terminationGracePeriodSeconds": -1},  # image is required
                    nicConfigurationOperator={"logLevel": "trace"})
    resp = http.post("/apis/mellanox.com/v1alpha1/nicclusterpolicies", body)
    assert resp.status_code == 422
    causes = {c["field"]: c for c in resp.json()["details"]["causes"]}
    assert causes["spec.ofedDriver.image"]["reason"] == "FieldValueRequired"
    assert causes["spec.ofedDriver.image"]["message"] == "Required value"
    assert causes["spec.nicConfigurationOperator.logLevel"]["reason"] == "FieldValueNotSupported"
    assert causes["spec.nicConfigurationOperator.logLevel"]["message"] == \
        'Unsupported value: "trace": supported values: "info", "debug"'
    assert causes["spec.ofedDriver.terminationGracePeriodSeconds"]["reason"] == "FieldValueInvalid"
    assert "should be greater than or equal to 0" in causes["spec.ofedDriver.terminationGracePeriodSeconds"]["message"]
    assert resp.json()["message"].startswith('NicClusterPolicy.mellanox.com "nic-cluster-policy" is invalid: [')


def test_defaults_are_applied(api, http):
    served_ncp(api)
    created = http.post("/apis/mellanox.com/v1alpha1/nicclusterpolicies", ncp_body()).json()
    assert created["spec"]["ofedDriver"]["terminationGracePeriodSeconds"] == 300
    assert created["spec"]["ofedDriver"]["forcePrecompiled"] is False


def test_unknown_field_is_pruned_and_strict_rejects_it(api, http):
    served_ncp(api)
    body = ncp_body()
    body["spec"]["notAField"] = {"x": 1}
    resp = http.post("/apis/mellanox.com/v1alpha1/nicclusterpolicies", body)
    assert resp.status_code == 201, resp.text
    assert "notAField" not in resp.json()["spec"]
    assert 'unknown field \\"spec.notAField\\"' in resp.headers.get("Warning", "")
    body["metadata"]["name"] = "strict"
    resp = http.post("/apis/mellanox.com/v1alpha1/nicclusterpolicies?fieldValidation=Strict", body)
    # kube-apiserver answers strict decoding errors with 400 BadRequest.
    assert resp.status_code == 400
    assert resp.json()["reason"] == "BadRequest"
    assert 'strict decoding error: unknown field "spec.notAField"' in resp.json()["message"]
    resp = http.post("/apis/mellanox.com/v1alpha1/nicclusterpolicies?fieldValidation=Ignore", dict(
        body, metadata={"name": "ignored"}))
    assert resp.status_code == 201 and "Warning" not in resp.headers


def test_invalid_metadata_name_is_422(http):
    resp = http.post("/api/v1/namespaces/default/configmaps", cm("Not_Valid"))
    assert resp.status_code == 422
    assert resp.json()["details"]["causes"][0]["field"] == "metadata.name"


@pytest.mark.parametrize("selector,expected", [
    ("tier=gpu", ["a", "b"]),
    ("tier!=gpu", ["c", "d"]),
    ("tier in (gpu,nic)", ["a", "b", "c"]),
    ("tier notin (gpu)", ["c", "d"]),
    ("rdma", ["b", "c"]),
    ("!rdma", ["a", "d"]),
    ("tier=gpu,rdma", ["b"]),
])
def test_list_by_label_selector(dyn, selector, expected):
    cms = dyn.resources.get(api_version="v1", kind="ConfigMap")
    cms.create(body=cm("a", {"tier": "gpu"}), namespace="default")
    cms.create(body=cm("b", {"tier": "gpu", "rdma": "true"}), namespace="default")
    cms.create(body=cm("c", {"tier": "nic", "rdma": ""}), namespace="default")
    cms.create(body=cm("d", {}), namespace="default")
    got = sorted(i.metadata.name for i in cms.get(namespace="default", label_selector=selector).items)
    assert got == expected


def test_list_shape_field_selector_and_all_namespaces(api, dyn, http):
    cms = dyn.resources.get(api_version="v1", kind="ConfigMap")
    dyn.resources.get(api_version="v1", kind="Namespace").create(body={"metadata": {"name": "other"}})
    cms.create(body=cm("one"), namespace="default")
    cms.create(body=cm("two"), namespace="other")
    body = http.get("/api/v1/configmaps").json()
    assert body["kind"] == "ConfigMapList" and body["apiVersion"] == "v1"
    assert int(body["metadata"]["resourceVersion"]) >= 2
    assert {(i["metadata"]["namespace"], i["metadata"]["name"]) for i in body["items"]} >= {
        ("default", "one"), ("other", "two")}
    names = [i["metadata"]["name"] for i in http.get("/api/v1/configmaps?fieldSelector=metadata.namespace=other")
             .json()["items"]]
    assert names == ["two"]
    resp = http.get("/api/v1/configmaps?fieldSelector=data.k=v")
    assert resp.status_code == 400 and "field label not supported" in resp.json()["message"]


def test_dry_run_writes_nothing(api, http):
    start_rv = api.store.current_resource_version
    resp = http.post("/api/v1/namespaces/default/configmaps?dryRun=All", cm("dry"))
    assert resp.status_code == 201 and resp.json()["metadata"]["name"] == "dry"
    assert http.get("/api/v1/namespaces/default/configmaps/dry").status_code == 404
    http.post("/api/v1/namespaces/default/configmaps", cm("real"))
    rv = api.store.current_resource_version
    assert http.patch("/api/v1/namespaces/default/configmaps/real?dryRun=All", {"data": {"k": "changed"}}) \
        .json()["data"]["k"] == "changed"
    assert http.delete("/api/v1/namespaces/default/configmaps/real?dryRun=All").status_code == 200
    assert http.get("/api/v1/namespaces/default/configmaps/real").json()["data"]["k"] == "v"
    assert api.store.current_resource_version == rv != start_rv
    assert api.count(writes_only=True) == 1
    assert api.count(include_dry_run=True, verb=("create", "patch", "delete")) == 4


def test_generation_bumps_only_on_spec_change(api, http):
    served_ncp(api)
    created = http.post("/apis/mellanox.com/v1alpha1/nicclusterpolicies", ncp_body()).json()
    assert created["metadata"]["generation"] == 1
    path = "/apis/mellanox.com/v1alpha1/nicclusterpolicies/nic-cluster-policy"
    labeled = http.patch(path, {"metadata": {"labels": {"a": "b"}}}).json()
    assert labeled["metadata"]["generation"] == 1
    assert int(labeled["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])
    status = http.patch(path + "/status", {"status": {"state": "ready"}}).json()
    assert status["metadata"]["generation"] == 1 and status["status"]["state"] == "ready"
    spec = http.patch(path, {"spec": {"ofedDriver": {"version": "25.07"}}}).json()
    assert spec["metadata"]["generation"] == 2
    same = http.patch(path, {"spec": {"ofedDriver": {"version": "25.07"}}}).json()
    assert same["metadata"]["resourceVersion"] == spec["metadata"]["resourceVersion"]


def test_status_subresource_isolation(api, http):
    served_ncp(api)
    body = ncp_body()
    body["status"] = {"state": "ready"}
    created = http.post("/apis/mellanox.com/v1alpha1/nicclusterpolicies", body).json()
    assert "status" not in created  # status is dropped on create when the status subresource exists
    path = "/apis/mellanox.com/v1alpha1/nicclusterpolicies/nic-cluster-policy"
    http.patch(path + "/status", {"status": {"state": "notReady"}})
    obj = http.get(path).json()
    obj["status"] = {"state": "ready"}
    obj["spec"]["ofedDriver"]["version"] = "9"
    updated = http.put(path, obj).json()
    assert updated["status"] == {"state": "notReady"} and updated["spec"]["ofedDriver"]["version"] == "9"
    obj = http.get(path).json()
    obj["spec"]["ofedDriver"]["version"] = "10"
    obj["status"] = {"state": "ready"}
    via_status = http.put(path + "/status", obj).json()
    assert via_status["status"] == {"state": "ready"} and via_status["spec"]["ofedDriver"]["version"] == "9"
    assert http.get(path + "/status").json()["status"] == {"state": "ready"}


def test_finalizers_keep_object_with_deletion_timestamp(http):
    body = cm("fin")
    body["metadata"]["finalizers"] = ["example.com/hold"]
    http.post("/api/v1/namespaces/default/configmaps", body)
    resp = http.delete("/api/v1/namespaces/default/configmaps/fin", {"propagationPolicy": "Background"})
    assert resp.status_code == 200
    obj = http.get("/api/v1/namespaces/default/configmaps/fin").json()
    assert obj["metadata"]["deletionTimestamp"]
    first_ts = obj["metadata"]["deletionTimestamp"]
    http.delete("/api/v1/namespaces/default/configmaps/fin")
    assert http.get("/api/v1/namespaces/default/configmaps/fin").json()["metadata"]["deletionTimestamp"] == first_ts
    http.patch("/api/v1/namespaces/default/configmaps/fin", {"metadata": {"finalizers": None}})
    assert http.get("/api/v1/namespaces/default/configmaps/fin").status_code == 404


def test_namespace_terminating_until_empty(http):
    http.post("/api/v1/namespaces", {"metadata": {"name": "doomed"}})
    held = cm("held")
    held["metadata"]["finalizers"] = ["example.com/hold"]
    http.post("/api/v1/namespaces/doomed/configmaps", held)
    http.post("/api/v1/namespaces/doomed/configmaps", cm("free"))
    resp = http.delete("/api/v1/namespaces/doomed")
    assert resp.status_code == 200 and resp.json()["status"]["phase"] == "Terminating"
    assert http.get("/api/v1/namespaces/doomed").json()["status"]["phase"] == "Terminating"
    assert http.get("/api/v1/namespaces/doomed/configmaps/free").status_code == 404
    refused = http.post("/api/v1/namespaces/doomed/configmaps", cm("late"))
    assert refused.status_code == 403 and refused.json()["reason"] == "Forbidden"
    http.patch("/api/v1/namespaces/doomed/configmaps/held", {"metadata": {"finalizers": []}})
    assert http.get("/api/v1/namespaces/doomed").status_code == 404


def test_create_in_missing_namespace_is_404(http):
    resp = http.post("/api/v1/namespaces/nope/configmaps", cm("x"))
    assert resp.status_code == 404 and resp.json()["message"] == 'namespaces "nope" not found'


def test_owner_references_are_garbage_collected(http):
    owner = http.post("/apis/apps/v1/namespaces/default/daemonsets", {
        "metadata": {"name": "ds"}, "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {
            "metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}}).json()
    pod = {"metadata": {"name": "ds-1", "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet",
                                                            "name": "ds", "uid": owner["metadata"]["uid"]}]},
           "spec": {"containers": [{"name": "c", "image": "i"}]}}
    assert http.post("/api/v1/namespaces/default/pods", pod).json()["status"]["phase"] == "Pending"
    http.delete("/apis/apps/v1/namespaces/default/daemonsets/ds")
    assert http.get("/api/v1/namespaces/default/pods/ds-1").status_code == 404


def test_deletecollection_with_label_selector(http):
    for name, tier in (("a", "x"), ("b", "x"), ("c", "y")):
        http.post("/api/v1/namespaces/default/configmaps", cm(name, {"tier": tier}))
    resp = http.delete("/api/v1/namespaces/default/configmaps?labelSelector=tier%3Dx")
    assert resp.status_code == 200
    left = [i["metadata"]["name"] for i in http.get("/api/v1/namespaces/default/configmaps").json()["items"]]
    assert left == ["c"]


def test_unauthenticated_requests_are_401(api):
    import requests

    resp = requests.get(api.url + "/api/v1/namespaces", timeout=5)
    assert resp.status_code == 401 and resp.json()["reason"] == "Unauthorized"
    resp = requests.get(api.url + "/api/v1/namespaces", headers={"Authorization": "Bearer wrong"}, timeout=5)
    assert resp.status_code == 401


def test_read_only_kinds_answer_405(api, http):
    import dataclasses

    from simulator.store import ResourceType

    api.store.register(ResourceType("packages.operators.coreos.com", "v1", "PackageManifest", "packagemanifests",
                                    True, "packagemanifest", verbs=("get", "list", "watch")))
    assert http.get("/apis/packages.operators.coreos.com/v1/namespaces/openshift-marketplace/packagemanifests") \
        .status_code == 200
    resp = http.post("/apis/packages.operators.coreos.com/v1/namespaces/openshift-marketplace/packagemanifests",
                     {"metadata": {"name": "x"}})
    assert resp.status_code == 405 and resp.json()["reason"] == "MethodNotAllowed"
    assert dataclasses.is_dataclass(ResourceType)


def test_pod_log_with_tail_lines(api, http):
    http.post("/api/v1/namespaces/default/pods", {"metadata": {"name": "p"}, "spec": {
        "containers": [{"name": "main", "image": "i"}]}})
    api.pod_logs[("default", "p")] = "one\ntwo\nthree\n"
    resp = http.get("/api/v1/namespaces/default/pods/p/log?tailLines=2&container=main")
    assert resp.status_code == 200 and resp.text == "two\nthree\n"
    assert resp.headers["Content-Type"].startswith("text/plain")


def test_crd_list_reflects_served_crds(api, http):
    api.store.set_served("mellanox.com", "nicclusterpolicies", False)
    names = {i["metadata"]["name"] for i in http.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
             .json()["items"]}
    assert "nicclusterpolicies.mellanox.com" not in names and "subscriptions.operators.coreos.com" in names
    api.store.set_served("mellanox.com", "nicclusterpolicies", True)
    crd = http.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/nicclusterpolicies.mellanox.com").json()
    assert crd["spec"]["names"]["kind"] == "NicClusterPolicy"
    assert {"type": "Established", "status": "True", "reason": "InitialNamesAccepted"} in crd["status"]["conditions"]


def test_store_reads_are_copies_and_update_conflicts(api):
    t = api.store.find_type("", "v1", "configmaps")
    obj = api.store.create(t, cm("copy") | {"metadata": {"name": "copy", "namespace": "default"}})
    obj["data"]["k"] = "mutated"
    assert api.store.get(t, "default", "copy")["data"]["k"] == "v"
    obj["metadata"]["resourceVersion"] = "1"
    with pytest.raises(Exception) as exc:
        api.store.update(t, obj)
    assert getattr(exc.value, "code", None) == 409


def test_not_found_error_class_for_missing_object(dyn):
    with pytest.raises(NotFoundError):
        dyn.resources.get(api_version="v1", kind="ConfigMap").get(name="nope", namespace="default")


def test_unprocessable_entity_for_invalid_cr(api, dyn):
    served_ncp(api)
    ncp = dyn.resources.get(api_version="mellanox.com/v1alpha1", kind="NicClusterPolicy")
    with pytest.raises(UnprocessibleEntityError):
        ncp.create(body=ncp_body(ofedDriver={"image": 1, "repository": "r", "version": "v"}))
