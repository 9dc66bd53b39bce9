# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Unit tests of the pure parts behind olm_operator: install modes, InstallPlan choice, CSV
timeline and failure predicate, retry classification, and the watch-based waiter (fake streams)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster import client as cc
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster import api_errors
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster import operator_installer
from ansible_collections.gpudirect.openshift.plugins.module_utils.rules import olm_install
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.waiter import WaitTimeout, absent, wait_for
from ansible_collections.gpudirect.openshift.plugins.module_utils import names
from ansible_collections.gpudirect.openshift.plugins.modules import olm_operator
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.module_base import with_connection_options


def modes(*supported):
    return [{"type": m, "supported": m in supported} for m in olm_install.INSTALL_MODES]


# -- install modes -> OperatorGroup ---------------------------------------------------------------


@pytest.mark.parametrize("supported, expected", [
    (("OwnNamespace", "SingleNamespace"), {"targetNamespaces": ["ns1"]}),
    (("OwnNamespace", "AllNamespaces"), {"targetNamespaces": ["ns1"]}),
    (("AllNamespaces",), {}),
    (("SingleNamespace", "AllNamespaces"), {}),
])
def test_operator_group_spec_from_install_modes(supported, expected):
    assert olm_install.desired_operator_group_spec(modes(*supported), "ns1") == expected


def test_operator_group_spec_without_expressible_mode_names_supported_modes():
    with pytest.raises(olm_install.OLMProblem) as err:
        olm_install.desired_operator_group_spec(modes("SingleNamespace", "MultiNamespace"), "ns1")
    assert "MultiNamespace, SingleNamespace" in str(err.value)
    assert "target_namespaces" in str(err.value)


def test_explicit_target_namespaces_are_checked_against_modes():
    assert olm_install.desired_operator_group_spec(modes("SingleNamespace"), "ns1", ["other"]) == {"targetNamespaces": ["other"]}
    assert olm_install.desired_operator_group_spec(modes("AllNamespaces"), "ns1", []) == {}
    with pytest.raises(olm_install.OLMProblem) as err:
        olm_install.desired_operator_group_spec(modes("OwnNamespace"), "ns1", [])
    assert "AllNamespaces" in str(err.value) and "OwnNamespace" in str(err.value)


@pytest.mark.parametrize("spec, mode", [
    ({}, "AllNamespaces"),
    ({"targetNamespaces": []}, "AllNamespaces"),
    ({"targetNamespaces": ["ns1"]}, "OwnNamespace"),
    ({"targetNamespaces": ["x"]}, "SingleNamespace"),
    ({"targetNamespaces": ["ns1", "x"]}, "MultiNamespace"),
    ({"selector": {"matchLabels": {"a": "b"}}}, "MultiNamespace"),
])
def test_operator_group_mode(spec, mode):
    assert olm_install.operator_group_mode(spec, "ns1") == mode


def test_foreign_operator_group_fit_and_error_text():
    global_og = {"metadata": {"name": "global-operators"}, "spec": {}}
    assert not olm_install.operator_group_fits(global_og, modes("OwnNamespace", "SingleNamespace"), "ns1")
    assert olm_install.operator_group_fits(global_og, modes("AllNamespaces"), "ns1")
    text = olm_install.foreign_operator_group_error(global_og, modes("OwnNamespace", "SingleNamespace"), "ns1")
    assert "global-operators" in text and "AllNamespaces" in text and "OwnNamespace, SingleNamespace" in text
    assert "not created by this module" in text
    assert not olm_install.is_managed(global_og)
    assert olm_install.is_managed({"metadata": {"labels": {names.MANAGED_BY_LABEL: names.MANAGED_BY_VALUE}}})


def test_resolve_channel_default_and_unknown():
    pm = {"metadata": {"name": "gpu"}, "status": {"defaultChannel": "v25.3", "channels": [
        {"name": "v24.9", "currentCSV": "gpu.v24.9.2"}, {"name": "v25.3", "currentCSV": "gpu.v25.3.4"}]}}
    assert olm_install.resolve_channel(pm)[0]["currentCSV"] == "gpu.v25.3.4"
    assert olm_install.resolve_channel(pm, "v24.9") == ({"name": "v24.9", "currentCSV": "gpu.v24.9.2"}, "v24.9")
    with pytest.raises(olm_install.OLMProblem) as err:
        olm_install.resolve_channel(pm, "beta")
    assert "'beta'" in str(err.value) and "v24.9, v25.3" in str(err.value)


# -- a package several catalogs list ----------------------------------------------------------------


def listed(package, source, namespace="openshift-marketplace"):
    return {"metadata": {"name": package, "namespace": "openshift-marketplace", "labels": {"catalog": source}},
            "status": {"catalogSource": source, "catalogSourceNamespace": namespace}}


TWICE = [listed("nfd", "redhat-operators"), listed("nfd", "cs-mirror"), listed("sriov-network-operator", "redhat-operators")]


def test_the_entry_of_the_configured_source_is_chosen():
    manifest, problem = olm_install.choose_package_manifest(TWICE, {"package": "nfd", "source": "cs-mirror"})
    assert problem is None and manifest["status"]["catalogSource"] == "cs-mirror"
    manifest, problem = olm_install.choose_package_manifest(TWICE, {"package": "nfd", "source": "redhat-operators",
                                                            "source_namespace": "openshift-marketplace"})
    assert problem is None and manifest["status"]["catalogSource"] == "redhat-operators"
    # One catalog: the entry, whatever source is empty.
    manifest, problem = olm_install.choose_package_manifest(TWICE, {"package": "sriov-network-operator", "source": ""})
    assert problem is None and manifest["status"]["catalogSource"] == "redhat-operators"
    assert olm_install.choose_package_manifest(TWICE, {"package": "gpu"}) == (None, None)


def test_without_a_source_the_subscription_decides_else_the_variable_is_named():
    sub = {"metadata": {"name": "nfd", "namespace": "openshift-nfd"},
           "spec": {"source": "cs-mirror", "sourceNamespace": "openshift-marketplace"}}
    manifest, problem = olm_install.choose_package_manifest(TWICE, {"package": "nfd"}, sub)
    assert problem is None and manifest["status"]["catalogSource"] == "cs-mirror"
    manifest, problem = olm_install.choose_package_manifest(TWICE, {"package": "nfd", "source": ""}, None,
                                                            {"source": "nfd_source", "source_namespace": "nfd_source_namespace"})
    assert manifest is None
    assert problem.startswith("Package nfd is listed by 2 catalogs (openshift-marketplace/cs-mirror, "
                              "openshift-marketplace/redhat-operators) and nfd_source is empty")
    assert "Set nfd_source to one of them (and nfd_source_namespace to its namespace" in problem


def test_a_source_that_does_not_hold_the_package_is_named_with_the_catalogs_that_do():
    manifest, problem = olm_install.choose_package_manifest(TWICE, {"package": "nfd", "source": "my-index"})
    assert manifest is None
    assert problem.startswith("Package nfd is not in CatalogSource my-index (source=my-index); the catalogs that list it "
                              "are openshift-marketplace/cs-mirror, openshift-marketplace/redhat-operators. Set source")
    # The namespace counts too, and one source name in two namespaces needs it.
    twins = [listed("nfd", "mirror"), listed("nfd", "mirror", "mirrors")]
    _manifest, problem = olm_install.choose_package_manifest(twins, {"package": "nfd", "source": "mirror", "source_namespace": "other"})
    assert "not in CatalogSource other/mirror (source=mirror, source_namespace=other)" in problem
    _manifest, problem = olm_install.choose_package_manifest(twins, {"package": "nfd", "source": "mirror"})
    assert "source=mirror is in more than one namespace and source_namespace is empty" in problem
    manifest, problem = olm_install.choose_package_manifest(twins, {"package": "nfd", "source": "mirror", "source_namespace": "mirrors"})
    assert problem is None and manifest["status"]["catalogSourceNamespace"] == "mirrors"


def test_operator_package_choices_find_each_subscription_and_name_role_variables():
    operators = [{"package": "nfd", "namespace": "openshift-nfd", "source": ""},
                 {"package": "sriov-network-operator", "namespace": "openshift-sriov-network-operator", "source": ""}]
    choices = olm_install.operator_package_choices(operators, TWICE, [], {"nfd": "nfd"})
    assert choices[0][0] is None and "nfd_source is empty" in choices[0][1]
    assert choices[1][0]["metadata"]["name"] == "sriov-network-operator" and choices[1][1] is None
    subs = [{"metadata": {"name": "nfd", "namespace": "elsewhere"}, "spec": {"source": "cs-mirror"}},
            {"metadata": {"name": "nfd", "namespace": "openshift-nfd"}, "spec": {"source": "redhat-operators"}}]
    choices = olm_install.operator_package_choices(operators, TWICE, subs)
    assert choices[0][0]["status"]["catalogSource"] == "redhat-operators" and choices[0][1] is None


# -- InstallPlan selection -------------------------------------------------------------------------


def plan(name, csvs, approved=False, phase="RequiresApproval", created="2026-12-02T10:00:00Z", rv="10"):
    return {"metadata": {"name": name, "creationTimestamp": created, "resourceVersion": rv},
            "spec": {"clusterServiceVersionNames": csvs, "approved": approved, "approval": "Manual"},
            "status": {"phase": phase}}


def test_select_install_plan_only_matches_the_wanted_csv():
    decoy = plan("install-decoy", ["gpu.v25.3.4"], created="2026-12-02T10:05:00Z")
    wanted = plan("install-wanted", ["gpu.v25.3.1", "dep.v1"])
    assert olm_install.select_install_plan([decoy, wanted], "gpu.v25.3.1")["metadata"]["name"] == "install-wanted"
    assert olm_install.select_install_plan([decoy], "gpu.v25.3.1") is None
    assert olm_install.select_install_plan([], "gpu.v25.3.1") is None


def test_select_install_plan_prefers_live_then_newest():
    failed = plan("a", ["x.v1"], phase="Failed", created="2026-12-02T11:00:00Z")
    old = plan("b", ["x.v1"], created="2026-12-02T09:00:00Z")
    new = plan("c", ["x.v1"], created="2026-12-02T10:00:00Z")
    assert olm_install.select_install_plan([failed, old, new], "x.v1")["metadata"]["name"] == "c"
    assert olm_install.select_install_plan([failed], "x.v1")["metadata"]["name"] == "a"
    assert olm_install.needs_approval(old) and not olm_install.needs_approval(plan("d", ["x.v1"], approved=True))


# -- CSV timeline and failure predicate -------------------------------------------------------------


class FakeClock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def csv(phase, reason="", message="", conditions=None):
    return {"metadata": {"name": "nfd.v1"}, "status": {"phase": phase, "reason": reason, "message": message,
                                                       "conditions": conditions or []}}


def test_csv_progress_succeeds_and_records_observed_phases():
    clock = FakeClock()
    stamps = iter(["t1", "t2", "t3"])
    progress = olm_install.CsvProgress("nfd.v1", 30, clock=clock, now=lambda: next(stamps))
    assert progress(None) is False
    assert progress(csv("Pending", "RequirementsUnknown")) is False
    assert progress(csv("Pending", "RequirementsUnknown")) is False  # repeated state: no new entry
    assert progress(csv("Installing", "InstallWaiting")) is False
    assert progress(csv("Succeeded", "InstallSucceeded")) is True
    assert [(o["phase"], o["reason"], o["time"]) for o in progress.observed] == [
        ("Pending", "RequirementsUnknown", "t1"), ("Installing", "InstallWaiting", "t2"), ("Succeeded", "InstallSucceeded", "t3")]


def test_csv_progress_tolerates_brief_failure_then_fails_after_grace():
    clock = FakeClock()
    progress = olm_install.CsvProgress("nfd.v1", 30, clock=clock)
    assert progress(csv("Failed", "InstallCheckFailed", "webhook not ready")) is False
    assert progress.recheck_at() == 130.0
    clock.t = 110.0
    assert progress(csv("Installing", "InstallWaiting")) is False  # recovered: the episode ends 30 s after the Failed
    assert progress.recheck_at() == 130.0
    clock.t = 130.0
    assert progress(csv("Installing", "InstallWaiting")) is False
    assert progress.recheck_at() is None
    clock.t = 135.0
    assert progress(csv("Failed", "InstallComponentFailed", "deployment nfd-controller-manager failed")) is False
    clock.t = 164.9
    assert progress(csv("Failed", "InstallComponentFailed", "deployment nfd-controller-manager failed")) is False
    clock.t = 165.0
    with pytest.raises(olm_install.OLMProblem) as err:
        progress(csv("Failed", "InstallComponentFailed", "deployment nfd-controller-manager failed"))
    assert "InstallComponentFailed: deployment nfd-controller-manager failed" in str(err.value)
    assert "nfd.v1" in str(err.value) and err.value.reason == "InstallComponentFailed"


def test_csv_progress_fails_a_csv_that_cycles_failed_and_pending_within_the_grace_period():
    """OLM requeues a failed install: Failed (InstallCheckFailed) -> Pending (NeedsReinstall) about once a second
    (olm/operator.go transitionCSVState), so the CSV is never Failed for the whole grace period. The wait fails once
    the episode lasted the grace period, quoting the last Failed status although the CSV shows Pending then."""
    clock = FakeClock()
    progress = olm_install.CsvProgress("gpu-operator.v25", 30, clock=clock)
    cycles = 0
    with pytest.raises(olm_install.OLMProblem) as err:
        while clock.t < 140:
            progress(csv("Failed", "InstallCheckFailed", "install failed: deployment gpu-operator not ready before timeout"))
            clock.t += 0.5
            progress(csv("Pending", "NeedsReinstall", "calculated deployment install is bad"))
            clock.t += 0.5
            cycles += 1
    assert clock.t <= 131.0 and cycles >= 29
    assert "Failed 30 times" in str(err.value) or "Failed 31 times" in str(err.value)
    assert "InstallCheckFailed: install failed: deployment gpu-operator not ready before timeout" in str(err.value)
    assert err.value.reason == "InstallCheckFailed"


def test_csv_progress_zero_grace_fails_at_once():
    progress = olm_install.CsvProgress("x", 0, clock=FakeClock())
    with pytest.raises(olm_install.OLMProblem):
        progress(csv("Failed", "UnsupportedOperatorGroup", "OwnNamespace not supported"))


def test_merge_timeline_orders_and_deduplicates():
    conditions = [
        {"phase": "Pending", "reason": "RequirementsUnknown", "lastTransitionTime": "2026-12-02T10:00:00Z"},
        {"phase": "InstallReady", "reason": "AllRequirementsMet", "lastTransitionTime": "2026-12-02T10:00:02Z"},
        {"phase": "Succeeded", "reason": "InstallSucceeded", "lastTransitionTime": "2026-12-02T10:00:05Z"},
    ]
    observed = [{"phase": "Pending", "reason": "RequirementsUnknown", "time": "2026-12-02T10:00:01Z"},
                {"phase": "Failed", "reason": "InstallCheckFailed", "time": "2026-12-02T10:00:03Z"}]
    timeline = olm_install.merge_timeline(conditions, observed)
    assert [(e["phase"], e["time"]) for e in timeline] == [
        ("Pending", "2026-12-02T10:00:00Z"), ("InstallReady", "2026-12-02T10:00:02Z"),
        ("Failed", "2026-12-02T10:00:03Z"), ("Succeeded", "2026-12-02T10:00:05Z")]
    assert set(timeline[0]) == {"phase", "reason", "time"}
    assert olm_install.merge_timeline(None, None) == []


def test_subscription_drift_and_summary():
    desired = {"name": "nfd", "channel": "stable", "source": "redhat-operators",
               "sourceNamespace": "openshift-marketplace", "installPlanApproval": "Automatic"}
    existing = dict(desired, startingCSV="nfd.v1", config={"env": []})
    assert olm_install.subscription_drift(existing, desired) == []
    assert olm_install.subscription_drift(dict(existing, channel="beta"), desired) == ["channel"]
    sub = {"status": {"state": "UpgradePending", "currentCSV": "nfd.v2", "conditions": [
        {"type": "ResolutionFailed", "status": "True", "message": "no operators found in channel"},
        {"type": "CatalogSourcesUnhealthy", "status": "False"}]}}
    text = olm_install.subscription_summary(sub)
    assert "state=UpgradePending" in text and "ResolutionFailed: no operators found" in text
    assert "CatalogSourcesUnhealthy" not in text
    assert olm_install.subscription_summary(None) == "no Subscription"


def test_changes_track_writes_and_diffs():
    changes = operator_installer.Changes()
    changes.record("none", "Namespace", "ns1")
    assert not changes.changed and changes.diffs == []
    before = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns1", "uid": "u", "resourceVersion": "3"}}
    after = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns1", "uid": "u", "labels": {"a": "b"}}}
    changes.record("update", "Namespace", "ns1", before=before, after=after)
    assert changes.changed
    assert changes.diffs[0]["before"] == {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns1"}}
    assert changes.diffs[0]["after"]["metadata"] == {"name": "ns1", "labels": {"a": "b"}}


# -- retries -----------------------------------------------------------------------------------------


class FakeApiError(Exception):
    def __init__(self, status, headers=None, body=None):
        super(FakeApiError, self).__init__("HTTP %s" % status)
        self.status = status
        self.headers = headers or {}
        self.body = body


@pytest.mark.parametrize("exc, transient", [
    (FakeApiError(500), True), (FakeApiError(503), True), (FakeApiError(429), True), (FakeApiError(504), True),
    (FakeApiError(501), False), (FakeApiError(404), False), (FakeApiError(409), False), (FakeApiError(422), False),
    (ConnectionResetError(), True), (ValueError("x"), False),
])
def test_is_transient(exc, transient):
    assert api_errors.is_transient(exc) is transient


def test_retry_policy_honours_retry_after_and_backs_off_with_jitter():
    sleeps = []
    policy = api_errors.RetryPolicy(attempts=4, base_delay=0.5, max_delay=4, sleep=sleeps.append, rand=lambda: 1.0)
    answers = [FakeApiError(429, {"Retry-After": "2"}), FakeApiError(503), ConnectionResetError(), "ok"]

    def call():
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    assert policy.call(call) == "ok"
    assert sleeps == [2.0, 1.0, 2.0]  # Retry-After, then 0.5*2^1, 0.5*2^2 (jitter factor 1.0)


def test_retry_policy_does_not_retry_client_errors_and_gives_up():
    sleeps = []
    policy = api_errors.RetryPolicy(attempts=3, sleep=sleeps.append, rand=lambda: 0.0)
    calls = []

    def not_found():
        calls.append(1)
        raise FakeApiError(404)

    with pytest.raises(FakeApiError):
        policy.call(not_found)
    assert len(calls) == 1 and sleeps == []

    def always_500():
        calls.append(1)
        raise FakeApiError(500)

    with pytest.raises(FakeApiError):
        policy.call(always_500)
    assert len(sleeps) == 2


def test_api_error_text_and_reason():
    body = json.dumps({"kind": "Status", "reason": "Conflict", "message": "the object has been modified"})
    exc = FakeApiError(409, body=body)
    assert api_errors.api_reason(exc) == "Conflict"
    assert "the object has been modified" in api_errors.api_message(exc) and "409" in api_errors.api_message(exc)


def test_an_api_server_that_refuses_connections_is_named_unreachable_after_the_retries():
    """urllib3's text of a refused connection is a URL dump; the message says what happened and where."""
    import socket

    import urllib3

    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # bound once, never listening: connections to it are refused
    sleeps = []
    policy = api_errors.RetryPolicy(attempts=3, sleep=sleeps.append, rand=lambda: 0.0)
    with pytest.raises(urllib3.exceptions.HTTPError) as caught:
        policy.call(urllib3.PoolManager(retries=1).request, "POST", "http://127.0.0.1:%d/apis" % port)
    assert len(sleeps) == 2
    assert api_errors.api_message(caught.value) == "the API server at 127.0.0.1:%d is unreachable: Connection refused (3 attempts)" % port
    assert api_errors.api_message(ConnectionResetError(104, "Connection reset by peer")) == \
        "the API server did not answer: Connection reset by peer"


# -- waiter on fake watch streams ---------------------------------------------------------------------


class FakeResource:
    kind = "ClusterServiceVersion"
    group_version = "operators.coreos.com/v1alpha1"


class FakeStream:
    def __init__(self, events, error=None):
        self.events = events
        self.error = error
        self.closed = False

    def stream(self, amt=None, decode_content=False):
        for event in self.events:
            yield (json.dumps(event) + "\n").encode()
        if self.error is not None:
            raise self.error

    def close(self):
        self.closed = True

    def release_conn(self):
        pass


class FakeCluster:
    def __init__(self, lists, streams):
        self.lists = list(lists)
        self.streams = list(streams)
        self.watch_versions = []
        self.list_calls = 0
        self.retry = api_errors.RetryPolicy(sleep=lambda s: None)

    def list(self, resource, namespace=None, label_selector=None, field_selector=None):
        self.list_calls += 1
        return self.lists.pop(0)

    def watch_stream(self, resource, resource_version, **kwargs):
        self.watch_versions.append(resource_version)
        return self.streams.pop(0)


def obj(name, rv, phase=None):
    out = {"metadata": {"name": name, "namespace": "ns", "resourceVersion": str(rv)}}
    if phase:
        out["status"] = {"phase": phase}
    return out


def test_waiter_returns_on_the_event_that_satisfies_the_predicate():
    stream = FakeStream([{"type": "ADDED", "object": obj("x", 11, "Pending")},
                         {"type": "MODIFIED", "object": obj("x", 12, "Succeeded")},
                         {"type": "MODIFIED", "object": obj("x", 13, "Failed")}])
    cluster = FakeCluster([([], "10")], [stream])
    seen = []
    result = wait_for(cluster, FakeResource(), lambda o: (o or {}).get("status", {}).get("phase") == "Succeeded",
                      name="x", namespace="ns", timeout=30, on_change=seen.append)
    assert result.state["metadata"]["resourceVersion"] == "12"
    assert cluster.watch_versions == ["10"] and stream.closed
    assert [s and s["status"]["phase"] for s in seen] == [None, "Pending", "Succeeded"]


def test_waiter_resumes_from_last_resource_version_after_dropped_stream():
    dropped = FakeStream([{"type": "ADDED", "object": obj("x", 21, "Pending")},
                          {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "25"}}}],
                         error=ConnectionResetError("reset by peer"))
    resumed = FakeStream([{"type": "MODIFIED", "object": obj("x", 26, "Succeeded")}])
    cluster = FakeCluster([([], "20")], [dropped, resumed])
    result = wait_for(cluster, FakeResource(), olm_install.CsvProgress("x", 5), name="x", namespace="ns", timeout=30)
    assert cluster.watch_versions == ["20", "25"]
    assert cluster.list_calls == 1
    assert result.state["status"]["phase"] == "Succeeded"


def test_waiter_relists_on_410_gone():
    gone = FakeStream([{"type": "ERROR", "object": {"kind": "Status", "code": 410, "reason": "Gone", "message": "too old"}}])
    cluster = FakeCluster([([obj("x", 5, "Pending")], "30"), ([obj("x", 40, "Succeeded")], "41")], [gone])
    result = wait_for(cluster, FakeResource(), lambda o: (o or {}).get("status", {}).get("phase") == "Succeeded",
                      name="x", namespace="ns", timeout=30)
    assert cluster.list_calls == 2 and result.relists == 2
    assert result.state["metadata"]["resourceVersion"] == "40"


def test_waiter_list_mode_and_deletion():
    stream = FakeStream([{"type": "DELETED", "object": obj("a", 51)}, {"type": "DELETED", "object": obj("b", 52)}])
    cluster = FakeCluster([([obj("a", 1), obj("b", 2)], "50")], [stream])
    result = wait_for(cluster, FakeResource(), absent, namespace="ns", timeout=30)
    assert result.state == [] and result.events == 2


def test_waiter_times_out_with_last_state():
    clock = FakeClock()

    class Expiring(FakeStream):
        def stream(self, amt=None, decode_content=False):
            clock.t += 100
            yield (json.dumps({"type": "MODIFIED", "object": obj("x", 61, "Installing")}) + "\n").encode()

    cluster = FakeCluster([([obj("x", 60, "Pending")], "60")], [Expiring([])])
    with pytest.raises(WaitTimeout) as err:
        wait_for(cluster, FakeResource(), lambda o: False, name="x", namespace="ns", timeout=30, clock=clock)
    assert err.value.state["status"]["phase"] == "Installing"


def test_waiter_wakes_for_grace_period_without_new_events():
    clock = FakeClock()

    class ReadTimeoutError(TimeoutError):
        pass

    class Quiet(FakeStream):
        def stream(self, amt=None, decode_content=False):
            clock.t += 5  # nothing arrives until the client's read timeout
            return iter(self.read_timeout, None)

        def read_timeout(self):
            raise ReadTimeoutError("Read timed out.")

    failed = obj("x", 71, "Failed")
    failed["status"].update({"reason": "InstallComponentFailed", "message": "deployment failed"})
    first = FakeStream([{"type": "MODIFIED", "object": failed}, {"type": "MODIFIED", "object": obj("x", 72, "Unexpected")}])
    cluster = FakeCluster([([obj("x", 70, "Installing")], "70")], [first, Quiet([])])
    watched = []
    original = cluster.watch_stream

    def watch_stream(resource, resource_version, **kwargs):
        watched.append(kwargs["read_timeout"])
        return original(resource, resource_version, **kwargs)

    cluster.watch_stream = watch_stream
    progress = olm_install.CsvProgress("x", 3, clock=clock)
    with pytest.raises(olm_install.OLMProblem) as err:
        wait_for(cluster, FakeResource(), progress, name="x", namespace="ns", timeout=600, recheck_at=progress.recheck_at, clock=clock)
    assert "InstallComponentFailed: deployment failed" in str(err.value)
    # First stream: read timeout up to the deadline; once Failed was seen the watch is reopened
    # with a read timeout of about the grace period, without waiting for another event.
    assert watched[0] > 500 and watched[1] < 4
    assert first.events[1:] and not cluster.streams


def test_waiter_error_event_other_than_gone_fails():
    stream = FakeStream([{"type": "ERROR", "object": {"code": 500, "message": "etcd unavailable"}}])
    cluster = FakeCluster([([], "1")], [stream])
    with pytest.raises(api_errors.ClusterError) as err:
        wait_for(cluster, FakeResource(), lambda o: False, name="x", namespace="ns", timeout=30)
    assert "etcd unavailable" in str(err.value)


# -- module argument spec ------------------------------------------------------------------------------


def test_argument_spec_reuses_kubernetes_core_auth_options():
    spec = with_connection_options(olm_operator.argument_spec())
    for key in ("kubeconfig", "context", "host", "api_key", "validate_certs"):
        assert key in spec
    assert spec["install_plan_approval"]["choices"] == ["Automatic", "Manual"]
    assert spec["failure_grace_period"]["default"] == 30


# -- ClusterClient writes and conflicts ----------------------------------------------------------------


class FakeResponse:
    def __init__(self, body):
        self.data = json.dumps(body).encode()


class FakeDynamic:
    """Records requests; answers from a queue of bodies or exceptions."""

    def __init__(self, answers=()):
        self.answers = list(answers)
        self.requests = []

    def request(self, method, path, **params):
        self.requests.append((method, path, params))
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return FakeResponse(answer)


class FakeK8sClient:
    def __init__(self, dynamic, dry_run=False):
        self.client = dynamic
        self.dry_run = dry_run


class NsResource:
    namespaced = False
    kind = "Namespace"
    group_version = "v1"

    @staticmethod
    def path(name=None, namespace=None):
        return "/api/v1/namespaces" + ("/" + name if name else "")


def test_writes_carry_dry_run_in_check_mode():
    dynamic = FakeDynamic([{"metadata": {"name": "a"}}])
    cluster = cc.ClusterClient(FakeK8sClient(dynamic, dry_run=True), check_mode=True)
    cluster.create(NsResource(), {"metadata": {"name": "a"}})
    assert dynamic.requests[0][2]["dry_run"] == "All"


def test_check_mode_without_server_dry_run_sends_no_write():
    dynamic = FakeDynamic([])
    cluster = cc.ClusterClient(FakeK8sClient(dynamic, dry_run=False), check_mode=True)
    body = {"metadata": {"name": "a"}}
    assert cluster.create(NsResource(), body) == body
    assert cluster.delete(NsResource(), "a") == {}
    assert dynamic.requests == []


def test_update_rereads_and_reapplies_on_conflict():
    first = {"metadata": {"name": "a", "resourceVersion": "1", "labels": {}}}
    second = {"metadata": {"name": "a", "resourceVersion": "2", "labels": {"other": "x"}}}
    stored = {"metadata": {"name": "a", "resourceVersion": "3", "labels": {"other": "x", "want": "y"}}}
    dynamic = FakeDynamic([first, FakeApiError(409), second, stored])
    cluster = cc.ClusterClient(FakeK8sClient(dynamic), retry=api_errors.RetryPolicy(sleep=lambda s: None))

    def mutate(obj):
        obj["metadata"]["labels"]["want"] = "y"

    before, after, changed = cluster.update(NsResource(), "a", None, mutate)
    assert changed and before == second and after == stored
    puts = [r for r in dynamic.requests if r[0] == "put"]
    assert [p[2]["body"]["metadata"]["resourceVersion"] for p in puts] == ["1", "2"]
    assert puts[1][2]["body"]["metadata"]["labels"] == {"other": "x", "want": "y"}


def test_a_create_is_retried_after_a_refused_connection_and_a_conflict_then_is_real():
    """A refused connection reached no server: unlike a reset, it leaves no outcome to find out. A generateName create
    is sent again after it; an AlreadyExists that follows only refusals is someone else's object, reported as is."""
    import urllib3

    refused = urllib3.exceptions.MaxRetryError(None, "/api/v1/namespaces", urllib3.exceptions.NewConnectionError(None, "refused"))
    assert api_errors.never_connected(refused) and not api_errors.never_connected(ConnectionResetError())
    dynamic = FakeDynamic([refused, {"metadata": {"name": "gen-x"}}])
    cluster = cc.ClusterClient(FakeK8sClient(dynamic), retry=api_errors.RetryPolicy(sleep=lambda s: None))
    assert cluster.create(NsResource(), {"metadata": {"generateName": "gen-"}}) == {"metadata": {"name": "gen-x"}}
    assert [r[0] for r in dynamic.requests] == ["post", "post"]
    exists = FakeApiError(409, body=json.dumps({"kind": "Status", "reason": "AlreadyExists", "message": "exists"}))
    dynamic = FakeDynamic([refused, exists])
    cluster = cc.ClusterClient(FakeK8sClient(dynamic), retry=api_errors.RetryPolicy(sleep=lambda s: None))
    with pytest.raises(FakeApiError):
        cluster.create(NsResource(), {"metadata": {"name": "a"}})
    assert [r[0] for r in dynamic.requests] == ["post", "post"]  # no read: the conflict is real


def test_update_without_change_writes_nothing():
    current = {"metadata": {"name": "a", "resourceVersion": "1", "labels": {"want": "y"}}}
    dynamic = FakeDynamic([current])
    cluster = cc.ClusterClient(FakeK8sClient(dynamic))
    assert cluster.update(NsResource(), "a", None, lambda obj: obj["metadata"]["labels"].update(want="y")) == (current, current, False)
    assert [r[0] for r in dynamic.requests] == ["get"]


def test_get_returns_none_on_404_and_list_fills_kind():
    dynamic = FakeDynamic([FakeApiError(404), {"metadata": {"resourceVersion": "9"}, "items": [{"metadata": {"name": "a"}}]}])
    cluster = cc.ClusterClient(FakeK8sClient(dynamic))
    assert cluster.get(NsResource(), "missing") is None
    found, version = cluster.list(NsResource())
    assert version == "9" and found[0]["kind"] == "Namespace" and found[0]["apiVersion"] == "v1"


# -- pins, approval modes, Subscription failures ----------------------------------------------------


def sub(name, approval, namespace="ns", status=None):
    return {"metadata": {"name": name, "namespace": namespace}, "spec": {"installPlanApproval": approval}, "status": status or {}}


def test_a_starting_csv_pins_only_with_manual_approval():
    assert olm_install.pin_problem({"starting_csv": "x.v1", "install_plan_approval": "Manual"}) is None
    assert olm_install.pin_problem({"starting_csv": "", "install_plan_approval": "Automatic"}) is None
    assert "does not pin the version" in olm_install.pin_problem({"starting_csv": "x.v1", "install_plan_approval": "Automatic"})


def test_two_approval_modes_in_one_namespace_are_a_problem_but_not_across_namespaces():
    params = {"package": "gpu", "namespace": "ns", "install_plan_approval": "Automatic"}
    assert olm_install.approval_problem(params, [sub("gpu", "Manual"), sub("net", "Automatic")]) is None  # its own Subscription
    assert olm_install.approval_problem(params, [sub("net", "Manual", namespace="other")]) is None
    assert "also holds Subscription net (Manual)" in olm_install.approval_problem(params, [sub("net", "Manual")])


def test_the_upgrade_offer_is_read_from_an_upgrade_pending_subscription_only():
    pending = sub("gpu", "Manual", status={"state": "UpgradePending", "currentCSV": "g.v2", "installedCSV": "g.v1",
                                           "installPlanRef": {"name": "install-abc"}})
    assert olm_install.upgrade_offer(pending) == ("g.v2", "install-abc")
    first = sub("gpu", "Manual", status={"state": "UpgradePending", "currentCSV": "g.v1"})
    assert olm_install.upgrade_offer(first) == (None, None)


@pytest.mark.parametrize("condition, failing", [
    ({"type": "BundleUnpacking", "status": "True", "message": "Bundle image pull failed. ..."}, True),
    ({"type": "BundleUnpacking", "status": "True", "message": ""}, False),  # still unpacking, nothing wrong yet
    ({"type": "BundleUnpackFailed", "status": "True", "message": "Bundle unpacking failed - DeadlineExceeded"}, True),
    ({"type": "CatalogSourcesUnhealthy", "status": "False"}, False),
    ({"type": "ResolutionFailed", "status": "True", "reason": "ConstraintsNotSatisfiable", "message": "no operators"}, True),
])
def test_subscription_failure_conditions(condition, failing):
    assert (olm_install.subscription_failure({"status": {"conditions": [condition]}}) is not None) is failing


@pytest.mark.parametrize("groups, status, fails", [
    (2, {}, True), (0, {}, True), (1, {}, False),
    (2, {"installPlanRef": {"name": "install-abc"}}, False),  # OLM resolved before the second group came
])
def test_subscription_health_names_a_namespace_without_exactly_one_operator_group(groups, status, fails):
    now = [0.0]
    counted = []
    health = olm_install.SubscriptionHealth(lambda: {"status": status}, grace=6, clock=lambda: now[0],
                                            count_operator_groups=lambda: counted.append(now[0]) or groups)
    health.check()
    assert counted == []  # a Subscription read unresolved once may just be new
    now[0] = 2.0
    health.check()
    now[0] = 9.0
    if fails:
        with pytest.raises(olm_install.OLMProblem, match=r"found %d operatorGroups, expected 1" % groups):
            health.check()
    else:
        health.check()


def test_subscription_health_fails_only_after_the_grace_period():
    now = [0.0]
    state = {"status": {"conditions": [{"type": "BundleUnpackFailed", "status": "True", "reason": "BundleUnpackFailed",
                                        "message": "m"}]}}
    health = olm_install.SubscriptionHealth(lambda: state, grace=6, clock=lambda: now[0])
    health.check()
    now[0] = 3.0
    health.check()
    now[0] = 6.5
    with pytest.raises(olm_install.OLMProblem, match=r"BundleUnpackFailed \(BundleUnpackFailed\): m"):
        health.check()
