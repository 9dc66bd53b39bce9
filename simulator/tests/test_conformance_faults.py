"""Fault injection and the request log."""

import time

import pytest
import requests
from kubernetes.dynamic.exceptions import TooManyRequestsError

CM_PATH = "/api/v1/namespaces/default/configmaps"


def test_count_fault_fails_next_n_requests(api, http):
    api.faults.add(verb="get", plural="configmaps", code=503, count=2)
    http.post(CM_PATH, {"metadata": {"name": "x"}, "data": {}})
    codes = [http.get(CM_PATH + "/x").status_code for _attempt in range(3)]
    assert codes == [503, 503, 200]
    assert http.get(CM_PATH).status_code == 200  # list is another verb
    body = None
    api.faults.add(verb="create", plural="configmaps", code=500, count=1)
    body = http.post(CM_PATH, {"metadata": {"name": "y"}, "data": {}}).json()
    assert body["kind"] == "Status" and body["code"] == 500 and body["reason"] == "InternalError"
    assert http.get(CM_PATH + "/y").status_code == 404


def test_a_fault_after_the_handler_answers_an_error_for_a_write_that_was_stored(api, http):
    api.faults.add(verb="create", plural="configmaps", code=504, reason="Timeout", after_handler=True, count=1,
                   message="Timeout: request did not complete within requested timeout")
    resp = http.post(CM_PATH, {"metadata": {"name": "late"}, "data": {}})
    assert resp.status_code == 504 and resp.json()["reason"] == "Timeout"
    assert http.get(CM_PATH + "/late").status_code == 200  # stored all the same
    again = http.post(CM_PATH, {"metadata": {"name": "late"}, "data": {}})
    assert again.status_code == 409 and again.json()["reason"] == "AlreadyExists"


def test_reset_fault_closes_the_connection_without_an_answer(api, http):
    api.faults.add(verb="list", plural="configmaps", reset=True, count=1)
    with pytest.raises(requests.exceptions.ConnectionError):
        http.get(CM_PATH)
    assert http.get(CM_PATH).status_code == 200
    resets = [e for e in api.request_log if e["path"] == CM_PATH and e["code"] == 0]
    assert len(resets) == 1 and resets[0]["verb"] == "list"


def test_rate_fault_is_repeatable_with_seed(crd_dir, sim_factory):
    def run():
        cluster = sim_factory(profile=None, controllers=False,
                              faults={"seed": 7, "rules": [{"verb": "list", "resource": "configmaps", "code": 500,
                                                            "rate": 0.5}]})
        s = requests.Session()
        s.headers["Authorization"] = "Bearer " + cluster.token
        return [s.get(cluster.url + CM_PATH, timeout=5).status_code for _attempt in range(20)]

    first, second = run(), run()
    assert first == second
    assert 3 <= first.count(500) <= 17 and first.count(200) >= 3


def test_429_with_retry_after(api, http, dyn):
    api.faults.add(verb="list", plural="configmaps", code=429, retry_after=1, count=1)
    resp = http.get(CM_PATH)
    assert resp.status_code == 429 and resp.headers["Retry-After"] == "1"
    status = resp.json()
    assert status["reason"] == "TooManyRequests" and status["details"]["retryAfterSeconds"] == 1
    # The kubernetes client (urllib3) honours Retry-After on 429 and retries by itself.
    api.faults.add(verb="list", plural="configmaps", code=429, retry_after=1, count=1)
    mark = api.mark()
    started = time.monotonic()
    assert dyn.resources.get(api_version="v1", kind="ConfigMap").get(namespace="default").kind == "ConfigMapList"
    assert time.monotonic() - started >= 1.0
    assert [e["code"] for e in api.request_log[mark:] if e["verb"] == "list"] == [429, 200]
    api.faults.add(verb="list", plural="configmaps", code=429, retry_after=0, count=10)
    with pytest.raises(TooManyRequestsError):
        dyn.resources.get(api_version="v1", kind="ConfigMap").get(namespace="default")


def test_latency_fault_and_request_log_latency(api, http):
    api.faults.add(verb="get", plural="namespaces", name="default", latency_ms=200, count=1)
    started = time.monotonic()
    assert http.get("/api/v1/namespaces/default").status_code == 200
    assert time.monotonic() - started >= 0.2
    entry = [e for e in api.request_log if e["plural"] == "namespaces"][-1]
    assert entry["latency_ms"] >= 200 and entry["verb"] == "get" and entry["name"] == "default"


def test_faults_over_http_and_operator_faults(api, http):
    resp = http.post("/_sim/faults", {"rules": [{"verb": "delete", "plural": "configmaps", "code": 409, "count": 1}],
                                      "operator_faults": {"csv_failure": {"nfd": "InstallComponentFailed"}}})
    assert resp.status_code == 200
    assert api.faults.operator_faults == {"csv_failure": {"nfd": "InstallComponentFailed"}}
    http.post(CM_PATH, {"metadata": {"name": "z"}, "data": {}})
    conflict = http.delete(CM_PATH + "/z")
    assert conflict.status_code == 409 and conflict.json()["reason"] == "Conflict"
    assert http.delete(CM_PATH + "/z").status_code == 200
    assert http.request("DELETE", "/_sim/faults").json() == {"rules": [], "operator_faults": {}}


def test_faults_file_and_constructor(sim_factory, tmp_path):
    path = tmp_path / "faults.yaml"
    path.write_text("rules:\n- verb: get\n  plural: namespaces\n  code: 404\n  count: 1\n"
                    "operator_faults:\n  slow: true\n")
    cluster = sim_factory(profile=None, controllers=False, faults=str(path))
    s = requests.Session()
    s.headers["Authorization"] = "Bearer " + cluster.token
    assert s.get(cluster.url + "/api/v1/namespaces/default", timeout=5).status_code == 404
    assert s.get(cluster.url + "/api/v1/namespaces/default", timeout=5).status_code == 200
    assert cluster.faults.operator_faults == {"slow": True}


def test_request_log_verbs_counts_and_http_endpoint(api, http):
    mark = api.mark()
    http.post(CM_PATH, {"metadata": {"name": "r"}, "data": {}})
    http.get(CM_PATH + "/r")
    http.get(CM_PATH)
    http.put(CM_PATH + "/r", {"metadata": {"name": "r"}, "data": {"a": "b"}})
    http.patch(CM_PATH + "/r?dryRun=All", {"data": {"a": "c"}})
    http.patch(CM_PATH + "/r", {"data": {"a": "c"}})
    http.delete(CM_PATH + "/r")
    http.delete(CM_PATH + "?labelSelector=x%3Dy")
    verbs = [e["verb"] for e in api.request_log[mark:]]
    assert verbs == ["create", "get", "list", "update", "patch", "patch", "delete", "deletecollection"]
    assert api.count(writes_only=True, since=mark) == 5
    assert api.count(verb="patch", since=mark) == 1
    assert api.count(verb="patch", since=mark, include_dry_run=True) == 2
    entry = api.request_log[mark]
    assert {k: entry[k] for k in ("group", "plural", "namespace", "code", "dry_run")} == {
        "group": "", "plural": "configmaps", "namespace": "default", "code": 201, "dry_run": False}
    assert entry["user_agent"].startswith("python-requests")
    served = http.get("/_sim/requests?since=%d" % mark).json()
    assert [e["verb"] for e in served["requests"]] == verbs
    http.request("DELETE", "/_sim/requests")
    assert api.request_log == []


def _refused(cluster):
    try:
        requests.get(cluster.url + "/version", timeout=5)
    except requests.exceptions.ConnectionError as exc:
        return "refused" in str(exc).lower()
    return False


def test_kill_and_restart_keep_the_port_and_every_stored_object(api, http):
    """An API server that dies and comes back (etcd intact): refused while down, same address after, objects and
    resourceVersions kept, open watches cut."""
    created = http.post(CM_PATH, {"metadata": {"name": "kept"}, "data": {"a": "1"}}).json()
    watch = http.session.get(api.url + CM_PATH + "?watch=true&resourceVersion=" + created["metadata"]["resourceVersion"],
                             stream=True, timeout=10)
    port = api.port
    api.kill()
    assert not api.api_server_up and api.kills == 1
    assert b"".join(watch.iter_content(None)) == b""  # the stream ended with the server
    assert _refused(api)
    api.kill()  # already down: nothing happens
    assert api.kills == 1
    api.restart()
    assert api.api_server_up and api.port == port
    kept = http.get(CM_PATH + "/kept").json()
    assert kept["data"] == {"a": "1"} and kept["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    later = http.post(CM_PATH, {"metadata": {"name": "later"}, "data": {}}).json()
    assert int(later["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])
    api.restart()  # already up: nothing happens
    assert http.get(CM_PATH).json()["items"][0]["metadata"]["name"] == "kept"


def test_controller_work_due_while_down_runs_after_restart(api):
    ran = []
    api.kill()
    api.schedule(0.01, ran.append, "held")
    time.sleep(0.3)
    assert ran == [], "a controller acted while the API server was down"
    api.restart()
    deadline = time.monotonic() + 5
    while not ran and time.monotonic() < deadline:
        time.sleep(0.02)
    assert ran == ["held"]


def test_a_kill_rule_dies_on_the_request_and_comes_back_after_down_seconds(api, http):
    rule = api.faults.add(verb="create", plural="configmaps", kill=True, after_handler=True, down_seconds=1.0, count=1)
    with pytest.raises(requests.exceptions.ConnectionError):
        http.post(CM_PATH, {"metadata": {"name": "stored"}, "data": {}})
    assert rule.fired == 1 and api.kills == 1
    assert _refused(api)  # refused at once: a client's immediate retry must not reach the dying server
    assert api.up.wait(10)
    assert http.get(CM_PATH + "/stored").status_code == 200  # stored before the server died
    entry = [e for e in api.request_log if e["verb"] == "create"][-1]
    assert entry["code"] == 0 and entry["name"] is None


def test_stop_while_killed(sim_factory):
    cluster = sim_factory(profile=None, controllers=False)
    cluster.kill()
    cluster.stop()
    assert not cluster.running


def test_kill_and_restart_over_https(sim_factory):
    import urllib3

    cluster = sim_factory(profile=None, controllers=False, tls=True)
    namespaces = cluster.dynamic_client().resources.get(api_version="v1", kind="Namespace")  # trusts the CA of the kubeconfig
    assert namespaces.get(name="default").metadata.name == "default"
    cluster.kill()
    with pytest.raises(urllib3.exceptions.MaxRetryError):
        namespaces.get(name="default")
    cluster.restart()
    assert namespaces.get(name="default").metadata.name == "default"
