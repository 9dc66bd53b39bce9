"""Paginated lists (limit + continue) as kube-apiserver serves them from etcd
(k8s.io/apiserver pkg/storage/etcd3/store.go GetList, pkg/storage/continue.go, pkg/storage/etcd3/errors.go)."""

import base64
import json

from kubernetes import config
from kubernetes.dynamic import DynamicClient

from simulator.tests.conftest import Http

CM_PATH = "/api/v1/namespaces/default/configmaps"
NODES_PATH = "/api/v1/nodes"


def _add_nodes(cluster, count, labels=None):
    """Node objects written straight into the store: the test is about the API, not the operators."""
    nodes = cluster.store.find_type("", "v1", "nodes")
    for i in range(count):
        cluster.store.create(nodes, {"apiVersion": "v1", "kind": "Node",
                                     "metadata": {"name": "worker-%04d" % i, "labels": dict(labels or {}, index=str(i))}})


def _token(value):
    return json.loads(base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)))


def test_pages_see_every_item_once_at_one_resource_version(api):
    http = Http(api)
    _add_nodes(api, 1200)
    first = http.get(NODES_PATH + "?limit=500").json()
    meta = first["metadata"]
    assert len(first["items"]) == 500 and meta["remainingItemCount"] == 700
    assert _token(meta["continue"]) == {"v": "meta.k8s.io/v1", "rv": int(meta["resourceVersion"]),
                                        "start": first["items"][-1]["metadata"]["name"] + "\x00"}
    names = [n["metadata"]["name"] for n in first["items"]]
    pages = [meta]
    while pages[-1].get("continue"):
        page = http.get(NODES_PATH + "?limit=500&continue=" + pages[-1]["continue"]).json()
        names += [n["metadata"]["name"] for n in page["items"]]
        pages.append(page["metadata"])
    assert names == ["worker-%04d" % i for i in range(1200)]
    assert [p.get("remainingItemCount") for p in pages] == [700, 200, None]
    assert {p["resourceVersion"] for p in pages} == {meta["resourceVersion"]}


def test_continued_pages_are_a_snapshot_of_the_first_page(api):
    http = Http(api)
    for name in ("a", "b", "c", "d"):
        assert http.post(CM_PATH, {"metadata": {"name": name}, "data": {"v": "1"}}).status_code == 201
    first = http.get(CM_PATH + "?limit=2").json()
    http.delete(CM_PATH + "/c")
    http.patch(CM_PATH + "/d", {"data": {"v": "2"}})
    http.post(CM_PATH, {"metadata": {"name": "e"}, "data": {}})
    rest = http.get(CM_PATH + "?limit=10&continue=" + first["metadata"]["continue"]).json()
    assert [(c["metadata"]["name"], c["data"].get("v")) for c in rest["items"]] == [("c", "1"), ("d", "1")]
    assert rest["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    assert "continue" not in rest["metadata"]


def test_expired_continue_token_is_410_with_a_token_for_the_remainder(sim_factory):
    small = sim_factory(profile=None, controllers=False, history_limit=5)
    http = Http(small)
    for name in ("a", "b", "c"):
        http.post(CM_PATH, {"metadata": {"name": name}, "data": {}})
    first = http.get(CM_PATH + "?limit=1").json()
    for i in range(6):  # more writes than the history keeps: the first page's revision is compacted
        http.post(CM_PATH, {"metadata": {"name": "z%d" % i}, "data": {}})
    resp = http.get(CM_PATH + "?limit=1&continue=" + first["metadata"]["continue"])
    status = resp.json()
    assert resp.status_code == 410 and status["reason"] == "Expired" and status["code"] == 410
    expected = ("The provided continue parameter is too old to display a consistent list result. You can start a new "
                "list without the continue parameter, or use the continue token in this response")
    assert status["message"].startswith(expected)
    inconsistent = status["metadata"]["continue"]
    assert _token(inconsistent)["rv"] == -1 and _token(inconsistent)["start"] == "a\x00"
    rest = http.get(CM_PATH + "?limit=100&continue=" + inconsistent).json()
    assert [c["metadata"]["name"] for c in rest["items"]] == ["b", "c", "z0", "z1", "z2", "z3", "z4", "z5"]
    assert rest["metadata"]["resourceVersion"] == small.store.current_resource_version


def test_selectors_page_without_remaining_item_count(api):
    http = Http(api)
    nodes = api.store.find_type("", "v1", "nodes")
    for i in range(10):
        api.store.create(nodes, {"metadata": {"name": "n%d" % i, "labels": {"gpu": "yes" if i % 2 else "no"}}})
    page = http.get(NODES_PATH + "?limit=2&labelSelector=gpu%3Dyes").json()
    assert [n["metadata"]["name"] for n in page["items"]] == ["n1", "n3"]
    assert "remainingItemCount" not in page["metadata"] and page["metadata"]["continue"]
    seen = [n["metadata"]["name"] for n in page["items"]]
    while page["metadata"].get("continue"):
        page = http.get(NODES_PATH + "?limit=2&labelSelector=gpu%3Dyes&continue=" + page["metadata"]["continue"]).json()
        seen += [n["metadata"]["name"] for n in page["items"]]
    assert seen == ["n1", "n3", "n5", "n7", "n9"]


def test_bad_continue_requests_are_400(api):
    http = Http(api)
    _add_nodes(api, 3)
    token = http.get(NODES_PATH + "?limit=1").json()["metadata"]["continue"]
    both = http.get(NODES_PATH + "?limit=1&resourceVersion=5&continue=" + token)
    assert both.status_code == 400
    assert both.json()["message"] == "specifying resource version is not allowed when using continue"
    garbage = http.get(NODES_PATH + "?limit=1&continue=bm90LWpzb24")
    assert garbage.status_code == 400 and garbage.json()["message"].startswith("invalid continue token: continue key is not valid")
    traversal = base64.urlsafe_b64encode(b'{"v":"meta.k8s.io/v1","rv":3,"start":"../secrets/x"}').decode().rstrip("=")
    assert http.get(NODES_PATH + "?limit=1&continue=" + traversal).status_code == 400


def test_kubernetes_client_pages_with_limit_and_continue(api, tmp_path):
    _add_nodes(api, 7)
    dyn = DynamicClient(config.new_client_from_config(config_file=api.kubeconfig), cache_file=str(tmp_path / "d.json"))
    nodes = dyn.resources.get(api_version="v1", kind="Node")
    seen, token = [], None
    while True:
        page = nodes.get(limit=3, _continue=token)
        seen += [n.metadata.name for n in page.items]
        token = page.metadata["continue"]
        if not token:
            break
    assert seen == ["worker-%04d" % i for i in range(7)]
