"""Patch semantics: merge, JSON patch, strategic merge (built-ins only), server-side apply with managedFields."""

import json

import yaml

from .conftest import ncp_body, served_ncp

CM_PATH = "/api/v1/namespaces/default/configmaps"
NCP_PATH = "/apis/mellanox.com/v1alpha1/nicclusterpolicies"
APPLY = "application/apply-patch+yaml"


def _cm(http, name="c", data=None, labels=None):
    body = {"metadata": {"name": name, "labels": labels or {}}, "data": data or {"a": "1"}}
    resp = http.post(CM_PATH, body)
    assert resp.status_code == 201, resp.text
    return resp.json()


def test_merge_patch_sets_and_removes_fields(http):
    _cm(http, data={"a": "1", "b": "2"})
    out = http.patch(CM_PATH + "/c", {"data": {"a": None, "c": "3"}}).json()
    assert out["data"] == {"b": "2", "c": "3"}


def test_patch_with_stale_resource_version_conflicts(http):
    created = _cm(http)
    http.patch(CM_PATH + "/c", {"data": {"a": "2"}})
    resp = http.patch(CM_PATH + "/c", {"metadata": {"resourceVersion": created["metadata"]["resourceVersion"]},
                                       "data": {"a": "3"}})
    assert resp.status_code == 409 and resp.json()["reason"] == "Conflict"


def test_json_patch_with_test_operation(http):
    _cm(http)
    ok = http.patch(CM_PATH + "/c", [{"op": "test", "path": "/data/a", "value": "1"},
                                     {"op": "replace", "path": "/data/a", "value": "9"},
                                     {"op": "add", "path": "/metadata/labels/x", "value": "y"}],
                    content_type="application/json-patch+json")
    assert ok.status_code == 200 and ok.json()["data"]["a"] == "9" and ok.json()["metadata"]["labels"]["x"] == "y"
    failed = http.patch(CM_PATH + "/c", [{"op": "test", "path": "/data/a", "value": "1"}],
                        content_type="application/json-patch+json")
    assert failed.status_code == 422 and failed.json()["kind"] == "Status"


def test_strategic_merge_patch_refused_for_custom_resources(api, http):
    served_ncp(api)
    http.post(NCP_PATH, ncp_body())
    resp = http.patch(NCP_PATH + "/nic-cluster-policy", {"spec": {"ofedDriver": {"version": "2"}}},
                      content_type="application/strategic-merge-patch+json")
    assert resp.status_code == 415 and resp.json()["reason"] == "UnsupportedMediaType"
    assert "application/merge-patch+json" in resp.json()["message"]
    resp = http.patch(NCP_PATH + "/nic-cluster-policy", {"spec": {"ofedDriver": {"version": "2"}}})
    assert resp.status_code == 200 and resp.json()["spec"]["ofedDriver"]["version"] == "2"


def test_strategic_merge_patch_on_builtins_merges_lists_by_key(http):
    _cm(http)
    out = http.patch(CM_PATH + "/c", {"data": {"b": "2"}}, content_type="application/strategic-merge-patch+json")
    assert out.status_code == 200 and out.json()["data"] == {"a": "1", "b": "2"}
    ds = {"metadata": {"name": "d"}, "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {
        "metadata": {"labels": {"a": "b"}},
        "spec": {"containers": [{"name": "one", "image": "i1"}, {"name": "two", "image": "i2"}]}}}}
    http.post("/apis/apps/v1/namespaces/default/daemonsets", ds)
    patched = http.patch("/apis/apps/v1/namespaces/default/daemonsets/d",
                         {"spec": {"template": {"spec": {"containers": [{"name": "two", "image": "i2b"}]}}}},
                         content_type="application/strategic-merge-patch+json").json()
    assert patched["spec"]["template"]["spec"]["containers"] == [{"name": "one", "image": "i1"},
                                                                 {"name": "two", "image": "i2b"}]


def test_unknown_patch_content_type_is_415(http):
    _cm(http)
    resp = http.patch(CM_PATH + "/c", {"data": {}}, content_type="text/plain")
    assert resp.status_code == 415


def _apply(http, path, body, manager, force=False, **kw):
    query = "?fieldManager=%s%s" % (manager, "&force=true" if force else "")
    return http.patch(path + query, yaml.safe_dump(body), content_type=APPLY, **kw)


def test_server_side_apply_creates_and_records_managed_fields(http):
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa", "labels": {"app": "x"}},
            "data": {"a": "1"}}
    resp = _apply(http, CM_PATH + "/ssa", body, "alpha")
    assert resp.status_code == 201, resp.text
    managed = resp.json()["metadata"]["managedFields"]
    assert managed == [{"manager": "alpha", "operation": "Apply", "apiVersion": "v1",
                        "time": managed[0]["time"], "fieldsType": "FieldsV1",
                        "fieldsV1": {"f:data": {"f:a": {}}, "f:metadata": {"f:labels": {"f:app": {}}}}}]
    again = _apply(http, CM_PATH + "/ssa", body, "alpha")
    assert again.status_code == 200
    assert again.json()["metadata"]["resourceVersion"] == resp.json()["metadata"]["resourceVersion"]


def test_server_side_apply_conflict_between_managers_and_force(http):
    base = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "shared"}, "data": {"a": "1", "b": "1"}}
    assert _apply(http, CM_PATH + "/shared", base, "alpha").status_code == 201
    other = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "shared"}, "data": {"a": "2"}}
    resp = _apply(http, CM_PATH + "/shared", other, "beta")
    assert resp.status_code == 409
    status = resp.json()
    assert status["reason"] == "Conflict"
    assert status["message"] == 'Apply failed with 1 conflict: conflict with "alpha": .data.a'
    # Same value is not a conflict: both managers then share the field.
    same = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "shared"}, "data": {"b": "1"}}
    assert _apply(http, CM_PATH + "/shared", same, "gamma").status_code == 200
    forced = _apply(http, CM_PATH + "/shared", other, "beta", force=True)
    assert forced.status_code == 200 and forced.json()["data"] == {"a": "2", "b": "1"}
    owners = {m["manager"]: m["fieldsV1"] for m in forced.json()["metadata"]["managedFields"]}
    assert owners["beta"] == {"f:data": {"f:a": {}}}
    assert owners["alpha"] == {"f:data": {"f:b": {}}}
    # alpha stops applying b: gamma still owns it, so it stays.
    only_name = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "shared"}}
    out = _apply(http, CM_PATH + "/shared", only_name, "alpha").json()
    assert out["data"] == {"a": "2", "b": "1"}


def test_server_side_apply_removes_fields_no_longer_applied(http):
    _apply(http, CM_PATH + "/drop", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "drop"},
                                     "data": {"a": "1", "b": "2"}}, "alpha")
    out = _apply(http, CM_PATH + "/drop", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "drop"},
                                           "data": {"a": "1"}}, "alpha").json()
    assert out["data"] == {"a": "1"}


def test_update_by_another_client_conflicts_with_apply(http):
    _apply(http, CM_PATH + "/mixed", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "mixed"},
                                      "data": {"a": "1"}}, "alpha")
    http.patch(CM_PATH + "/mixed?fieldManager=kubectl-edit", {"data": {"a": "changed"}})
    resp = _apply(http, CM_PATH + "/mixed", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "mixed"},
                                             "data": {"a": "1"}}, "alpha")
    assert resp.status_code == 409
    assert 'conflict with "kubectl-edit": .data.a' in resp.json()["message"]


def test_server_side_apply_needs_field_manager(http):
    resp = http.patch(CM_PATH + "/x", yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap",
                                                      "metadata": {"name": "x"}}), content_type=APPLY)
    assert resp.status_code == 422 and resp.json()["reason"] == "Invalid"


def test_server_side_apply_on_custom_resource_with_list_map_keys(api, http):
    served_ncp(api)
    body = ncp_body()
    body["spec"]["ofedDriver"]["env"] = [{"name": "A", "value": "1"}]
    resp = _apply(http, NCP_PATH + "/nic-cluster-policy", body, "ansible")
    assert resp.status_code == 201, resp.text
    fields = resp.json()["metadata"]["managedFields"][0]["fieldsV1"]
    assert "f:spec" in fields and "f:ofedDriver" in fields["f:spec"]
    bad = ncp_body(ofedDriver={"image": "x", "repository": "r", "version": 3})
    resp = _apply(http, NCP_PATH + "/nic-cluster-policy", bad, "ansible")
    assert resp.status_code == 422
    assert resp.json()["details"]["causes"][0]["field"] == "spec.ofedDriver.version"


def test_server_side_apply_dry_run_writes_nothing(api, http):
    rv = api.store.current_resource_version
    resp = http.patch(CM_PATH + "/dry?fieldManager=m&dryRun=All", json.dumps(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dry"}, "data": {"a": "1"}}), content_type=APPLY)
    assert resp.status_code == 201
    assert api.store.current_resource_version == rv
    assert http.get(CM_PATH + "/dry").status_code == 404


MACVLAN_PATH = "/apis/mellanox.com/v1alpha1/macvlannetworks"


def _macvlan(**spec):
    return {"apiVersion": "mellanox.com/v1alpha1", "kind": "MacvlanNetwork", "metadata": {"name": "net"},
            "spec": dict({"networkNamespace": "default", "master": "ens8f0np0", "mode": "bridge"}, **spec)}


def test_server_side_apply_removes_a_custom_resource_field_no_longer_applied(api, http):
    """structured-merge-diff merge/update.go (prune): a field the manager applied before and applies no more is
    removed when no other manager owns it, and kept while another one does."""
    api.store.set_served("mellanox.com", "macvlannetworks", True)
    assert _apply(http, MACVLAN_PATH + "/net", _macvlan(mtu=9000), "gpudirect.openshift", force=True).status_code == 201
    out = _apply(http, MACVLAN_PATH + "/net", _macvlan(), "gpudirect.openshift", force=True).json()
    assert "mtu" not in out["spec"] and out["spec"]["master"] == "ens8f0np0"
    assert out["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"] == {
        "f:master": {}, "f:mode": {}, "f:networkNamespace": {}}
    # Set again, then changed by an Update of another client: that one owns it now, so it stays when we stop applying.
    _apply(http, MACVLAN_PATH + "/net", _macvlan(mtu=9000), "gpudirect.openshift", force=True)
    http.patch(MACVLAN_PATH + "/net?fieldManager=admin", {"spec": {"mtu": 1500}})
    out = _apply(http, MACVLAN_PATH + "/net", _macvlan(), "gpudirect.openshift", force=True).json()
    assert out["spec"]["mtu"] == 1500


def test_server_side_apply_removes_a_named_field_left_empty(api, http):
    """fieldpath EnsureNamedFieldsAreMembers: a struct field above the removed fields that nobody owns any more goes
    as a whole (no empty object is left behind)."""
    served_ncp(api)
    body = ncp_body()
    body["spec"]["rdmaSharedDevicePlugin"] = {"image": "k8s-rdma-shared-dev-plugin", "repository": "r", "version": "v1"}
    assert _apply(http, NCP_PATH + "/nic-cluster-policy", body, "gpudirect.openshift").status_code == 201
    out = _apply(http, NCP_PATH + "/nic-cluster-policy", ncp_body(), "gpudirect.openshift").json()
    assert set(out["spec"]) == {"ofedDriver"}
    labelled = ncp_body()
    labelled["metadata"]["labels"] = {"app.kubernetes.io/managed-by": "gpudirect.openshift"}
    _apply(http, NCP_PATH + "/nic-cluster-policy", labelled, "gpudirect.openshift")
    out = _apply(http, NCP_PATH + "/nic-cluster-policy", ncp_body(), "gpudirect.openshift").json()
    assert "labels" not in out["metadata"]


def test_an_update_that_removes_fields_takes_them_from_every_manager(api, http):
    """k8s.io/apiserver fieldmanager (structured-merge-diff Updater.update): fields an Update removes leave every
    manager's set, so the applier no longer owns an annotation an operator's Update dropped."""
    api.store.set_served("mellanox.com", "macvlannetworks", True)
    body = _macvlan()
    body["metadata"]["annotations"] = {"team": "rdma"}
    _apply(http, MACVLAN_PATH + "/net", body, "gpudirect.openshift", force=True)
    current = http.get(MACVLAN_PATH + "/net").json()
    current["metadata"]["annotations"] = {"operator.macvlannetwork.mellanox.com/last-network-namespace": "default"}
    current["metadata"].pop("managedFields")
    assert http.put(MACVLAN_PATH + "/net?fieldManager=manager", current).status_code == 200
    owners = {m["manager"]: m["fieldsV1"] for m in http.get(MACVLAN_PATH + "/net").json()["metadata"]["managedFields"]}
    assert "f:metadata" not in owners["gpudirect.openshift"] and "f:spec" in owners["gpudirect.openshift"]
    assert owners["manager"] == {"f:metadata": {"f:annotations": {
        "f:operator.macvlannetwork.mellanox.com/last-network-namespace": {}}}}


def test_a_forced_apply_takes_only_the_fields_whose_value_it_changes(api, http):
    """structured-merge-diff merge/update.go (update): force moves the conflicting fields; a field applied with the
    value it has stays shared with its Update owner, which keeps it when the applier stops applying it."""
    api.store.set_served("mellanox.com", "macvlannetworks", True)
    created = http.post(MACVLAN_PATH + "?fieldManager=OpenAPI-Generator", _macvlan(mtu=9000))
    assert created.status_code == 201
    out = _apply(http, MACVLAN_PATH + "/net", _macvlan(mtu=1500), "gpudirect.openshift", force=True).json()
    owners = {m["manager"]: m["fieldsV1"] for m in out["metadata"]["managedFields"]}
    assert "f:mtu" not in owners["OpenAPI-Generator"]["f:spec"] and "f:master" in owners["OpenAPI-Generator"]["f:spec"]
    out = _apply(http, MACVLAN_PATH + "/net", {"apiVersion": "mellanox.com/v1alpha1", "kind": "MacvlanNetwork",
                                               "metadata": {"name": "net"}, "spec": {"networkNamespace": "default"}},
                 "gpudirect.openshift", force=True).json()
    assert "mtu" not in out["spec"] and out["spec"]["master"] == "ens8f0np0"
