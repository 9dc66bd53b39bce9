"""Watch semantics: event order, resuming from a resourceVersion, 410 Gone, selectors, bookmarks."""

import json
import threading
import time

import requests
from kubernetes import watch

from simulator import SimulatedCluster

CM_PATH = "/api/v1/namespaces/default/configmaps"


def _stream(cluster, query, max_events=10, timeout=5):
    """Raw watch: read NDJSON events until the server closes the stream (timeoutSeconds) or max_events."""
    resp = requests.get(cluster.url + CM_PATH + "?watch=true&" + query, stream=True, timeout=timeout,
                        headers={"Authorization": "Bearer " + cluster.token})
    assert resp.status_code == 200 and resp.headers["Content-Type"].startswith("application/json")
    events = []
    for line in resp.iter_lines():
        if line:
            events.append(json.loads(line))
            if len(events) >= max_events:
                break
    resp.close()
    return events


def test_watch_sees_added_modified_deleted_in_order(api, dyn):
    cms = dyn.resources.get(api_version="v1", kind="ConfigMap")
    start_rv = cms.get(namespace="default").metadata.resourceVersion
    seen = []

    def consume():
        for ev in cms.watch(namespace="default", resource_version=start_rv, timeout=3):
            seen.append((ev["type"], ev["object"].metadata.name, ev["object"].data.k if ev["object"].data else None))
            if ev["type"] == "DELETED":
                return

    t = threading.Thread(target=consume)
    t.start()
    time.sleep(0.3)
    cms.create(body={"metadata": {"name": "w"}, "data": {"k": "1"}}, namespace="default")
    cms.patch(body={"data": {"k": "2"}}, name="w", namespace="default",
              content_type="application/merge-patch+json")
    cms.delete(name="w", namespace="default")
    t.join(10)
    assert seen == [("ADDED", "w", "1"), ("MODIFIED", "w", "2"), ("DELETED", "w", "2")]


def test_watch_without_resource_version_starts_with_synthetic_added(api, http):
    http.post(CM_PATH, {"metadata": {"name": "pre"}, "data": {}})
    events = _stream(api, "timeoutSeconds=1")
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "pre")]
    assert events[0]["object"]["kind"] == "ConfigMap"


def test_watch_from_old_resource_version_replays_history(api, http):
    rv = http.post(CM_PATH, {"metadata": {"name": "h"}, "data": {"k": "1"}}).json()["metadata"]["resourceVersion"]
    http.patch(CM_PATH + "/h", {"data": {"k": "2"}})
    http.delete(CM_PATH + "/h")
    events = _stream(api, "resourceVersion=%s&timeoutSeconds=1" % rv)
    assert [e["type"] for e in events] == ["MODIFIED", "DELETED"]
    assert int(events[0]["object"]["metadata"]["resourceVersion"]) > int(rv)


def test_too_old_resource_version_gives_410_error_event(crd_dir):
    with SimulatedCluster(profile=None, controllers=False, crd_dir=crd_dir, history_limit=5) as small:
        session = requests.Session()
        session.headers["Authorization"] = "Bearer " + small.token
        for i in range(10):
            session.post(small.url + CM_PATH, json={"metadata": {"name": "c%d" % i}, "data": {}}, timeout=5)
        events = _stream(small, "resourceVersion=2&timeoutSeconds=1")
        assert len(events) == 1 and events[0]["type"] == "ERROR"
        status = events[0]["object"]
        assert (status["kind"], status["code"], status["reason"]) == ("Status", 410, "Gone")
        assert "too old resource version" in status["message"]


def test_kubernetes_watch_relists_after_410(crd_dir):
    """kubernetes.watch.Watch raises ApiException(410) on the ERROR event; clients then relist."""
    from kubernetes import client, config
    from kubernetes.client.rest import ApiException

    with SimulatedCluster(profile=None, controllers=False, crd_dir=crd_dir, history_limit=3) as small:
        core = client.CoreV1Api(config.new_client_from_config(config_file=small.kubeconfig))
        for i in range(6):
            core.create_namespaced_config_map("default", {"metadata": {"name": "c%d" % i}})
        try:
            for _ev in watch.Watch().stream(core.list_namespaced_config_map, "default", resource_version="1",
                                            timeout_seconds=2):
                raise AssertionError("expected a 410 before any event")
        except ApiException as exc:
            assert exc.status == 410
        listing = core.list_namespaced_config_map("default")
        assert len(listing.items) == 6


def test_watch_label_selector_turns_unlabel_into_deleted(api, http):
    rv = http.post(CM_PATH, {"metadata": {"name": "s", "labels": {"sel": "yes"}}, "data": {}}).json()
    http.patch(CM_PATH + "/s", {"metadata": {"labels": {"sel": "no"}}})
    http.patch(CM_PATH + "/s", {"metadata": {"labels": {"sel": "yes"}}})
    http.post(CM_PATH, {"metadata": {"name": "other"}, "data": {}})
    events = _stream(api, "labelSelector=sel%%3Dyes&resourceVersion=%s&timeoutSeconds=1"
                     % (int(rv["metadata"]["resourceVersion"]) - 1))
    assert [e["type"] for e in events] == ["ADDED", "DELETED", "ADDED"]
    assert {e["object"]["metadata"]["name"] for e in events} == {"s"}


def test_watch_bookmarks(crd_dir):
    with SimulatedCluster(profile=None, controllers=False, crd_dir=crd_dir,
                          config={"watch_bookmark_interval_s": 0.2}) as cluster:
        events = _stream(cluster, "allowWatchBookmarks=true&resourceVersion=%s&timeoutSeconds=1"
                         % cluster.store.current_resource_version)
        assert events and all(e["type"] == "BOOKMARK" for e in events)
        assert events[0]["object"]["metadata"]["resourceVersion"]


def test_watch_drop_fault_closes_stream_early(api, http):
    for i in range(3):
        http.post(CM_PATH, {"metadata": {"name": "d%d" % i}, "data": {}})
    api.faults.add(verb="watch", plural="configmaps", drop_after_events=1, count=1)
    started = time.monotonic()
    events = _stream(api, "timeoutSeconds=5")
    assert len(events) == 1 and time.monotonic() - started < 4
    assert len(_stream(api, "timeoutSeconds=1")) == 3


def test_watch_is_in_request_log(api):
    _stream(api, "timeoutSeconds=1")
    entries = [e for e in api.request_log if e["verb"] == "watch"]
    assert entries and entries[0]["plural"] == "configmaps" and entries[0]["code"] == 200


def test_stop_closes_open_watches(crd_dir):
    cluster = SimulatedCluster(profile=None, controllers=False, crd_dir=crd_dir).start()
    done = []

    def consume():
        done.append(_stream(cluster, "timeoutSeconds=60", timeout=30))

    t = threading.Thread(target=consume)
    t.start()
    time.sleep(0.3)
    started = time.monotonic()
    cluster.stop()
    t.join(10)
    assert done and time.monotonic() - started < 5
    import socket

    with socket.socket() as s:  # port released
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", cluster.port))
