"""Integration tests of gpudirect.openshift.olm_operator: ansible-playbook against the simulated cluster.

Each test starts its own simulated cluster (sim_factory), runs tests/integration/playbooks/olm_operator.yml
with K8S_AUTH_KUBECONFIG pointing at it, and checks both the module result and the cluster (objects in the
store and the request log).
"""

import json
import os
import subprocess
import sys
import time

import pytest
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.client import ClusterClient
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.waiter import wait_for
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client

PLAYBOOK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "playbooks", "olm_operator.yml")
OLM_V1 = "operators.coreos.com/v1"
OLM_V1A1 = "operators.coreos.com/v1alpha1"

# The four operators of the GPUDirect RDMA chapter, in install order, with the namespaces the docs use.
OPERATORS = [
    {"package": "nfd", "namespace": "openshift-nfd"},
    {"package": "sriov-network-operator", "namespace": "openshift-sriov-network-operator",
     "operator_group_name": "sriov-network-operators",
     "namespace_annotations": {"workload.openshift.io/allowed": "management"}},
    {"package": "nvidia-network-operator", "namespace": "nvidia-network-operator"},
    {"package": "gpu-operator-certified", "namespace": "nvidia-gpu-operator"},
]


def run_olm(sim, tmp_path, operators, check=False, diff=False, timeout=300):
    """Run olm_operator once per entry; return (results, seconds the playbook took)."""
    result_file = tmp_path / ("result-%d.json" % len(list(tmp_path.glob("result-*.json"))))
    extra = {"operators": operators, "result_file": str(result_file), "ansible_python_interpreter": sys.executable}
    vars_file = tmp_path / "vars.json"
    vars_file.write_text(json.dumps(extra))
    env = dict(os.environ, K8S_AUTH_KUBECONFIG=sim.kubeconfig, ANSIBLE_NOCOLOR="1")
    cmd = ["ansible-playbook", "-i", "localhost,", "-c", "local", PLAYBOOK, "-e", "@%s" % vars_file]
    if check:
        cmd.append("--check")
    if diff:
        cmd.append("--diff")
    started = time.monotonic()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False, timeout=timeout)
    took = time.monotonic() - started
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(result_file.read_text()), took


def kube(sim):
    return sim.dynamic_client()


def get(client, api_version, kind, name, namespace=None):
    from kubernetes.dynamic.exceptions import NotFoundError

    try:
        return client.resources.get(api_version=api_version, kind=kind).get(name=name, namespace=namespace).to_dict()
    except NotFoundError:
        return None


def items(client, api_version, kind, namespace=None):
    return client.resources.get(api_version=api_version, kind=kind).get(namespace=namespace).to_dict()["items"]


def channel_head(client, package, channel=None):
    pm = get(client, "packages.operators.coreos.com/v1", "PackageManifest", package, "openshift-marketplace")
    channel = channel or pm["status"]["defaultChannel"]
    return next(c for c in pm["status"]["channels"] if c["name"] == channel)["currentCSV"]


def assert_ok(result):
    assert not result.get("failed"), result.get("msg")


def test_fresh_install_of_the_four_operators_then_rerun_writes_nothing(sim_factory, tmp_path):
    sim = sim_factory(profile="mixed-lab@4.17.30")
    client = kube(sim)
    mark = sim.mark()
    results, took = run_olm(sim, tmp_path, OPERATORS)
    print("fresh install of 4 operators: %.1f s, %d writes" % (took, sim.count(writes_only=True, since=mark)))
    for spec, result in zip(OPERATORS, results):
        assert_ok(result)
        ns = spec["namespace"]
        assert result["changed"] is True
        assert result["phase"] == "Succeeded"
        assert result["csv"] == channel_head(client, spec["package"])
        assert result["version"] and result["version"] in result["csv"]
        assert result["timeline"][-1]["phase"] == "Succeeded"
        assert [e["phase"] for e in result["timeline"]][:1] == ["Pending"]
        assert {(o["kind"], o["action"]) for o in result["objects"]} == {
            ("Namespace", "create"), ("OperatorGroup", "create"), ("Subscription", "create")}
        csv = get(client, OLM_V1A1, "ClusterServiceVersion", result["csv"], ns)
        assert csv["status"]["phase"] == "Succeeded"
        namespace = get(client, "v1", "Namespace", ns)
        assert namespace["metadata"]["labels"]["openshift.io/cluster-monitoring"] == "true"
        for key, value in (spec.get("namespace_annotations") or {}).items():
            assert namespace["metadata"]["annotations"][key] == value
        groups = items(client, OLM_V1, "OperatorGroup", ns)
        assert [g["spec"].get("targetNamespaces") for g in groups] == [[ns]]
        assert groups[0]["metadata"]["name"] == spec.get("operator_group_name", ns)
        sub = get(client, OLM_V1A1, "Subscription", spec["package"], ns)
        pm = get(client, "packages.operators.coreos.com/v1", "PackageManifest", spec["package"], "openshift-marketplace")
        assert sub["spec"]["channel"] == pm["status"]["defaultChannel"]
        assert sub["spec"]["source"] == pm["status"]["catalogSource"]
        assert sub["spec"]["sourceNamespace"] == "openshift-marketplace"
        assert sub["spec"]["installPlanApproval"] == "Automatic"

    mark = sim.mark()
    again, took = run_olm(sim, tmp_path, OPERATORS)
    writes = sim.count(writes_only=True, since=mark)
    print("second run: %.1f s, %d requests, %d writes" % (took, sim.count(since=mark), writes))
    assert [r["changed"] for r in again] == [False] * 4
    assert all(r["phase"] == "Succeeded" for r in again)
    assert all(o["action"] == "none" for r in again for o in r["objects"])
    assert writes == 0
    assert sim.count(writes_only=True, include_dry_run=True, since=mark) == 0


def test_check_mode_lists_objects_and_writes_nothing(sim_factory, tmp_path):
    sim = sim_factory(profile="roce-lab@4.17.30")
    mark = sim.mark()
    results, _took = run_olm(sim, tmp_path, [OPERATORS[0]], check=True, diff=True)
    result = results[0]
    assert_ok(result)
    assert result["changed"] is True
    assert [(o["kind"], o["name"], o["action"]) for o in result["objects"]] == [
        ("Namespace", "openshift-nfd", "create"), ("OperatorGroup", "openshift-nfd", "create"), ("Subscription", "nfd", "create")]
    assert sim.count(writes_only=True, since=mark) == 0
    assert sim.count(writes_only=True, include_dry_run=True, since=mark) >= 1  # the namespace went through server dry run
    assert get(kube(sim), "v1", "Namespace", "openshift-nfd") is None
    after = {d["after_header"]: d["after"] for d in result["diff"]}
    assert after["Subscription openshift-nfd/nfd"]["spec"]["name"] == "nfd"
    assert after["OperatorGroup openshift-nfd/openshift-nfd"]["spec"] == {"targetNamespaces": ["openshift-nfd"]}


def test_check_mode_on_installed_operator_reports_the_subscription_change(sim_factory, tmp_path):
    sim = sim_factory(profile="roce-lab@4.17.30")
    gpu = dict(OPERATORS[3])
    results, _took = run_olm(sim, tmp_path, [gpu])
    assert_ok(results[0])
    mark = sim.mark()
    results, _took = run_olm(sim, tmp_path, [dict(gpu, channel="v24.9")], check=True, diff=True)
    result = results[0]
    assert_ok(result)
    assert result["changed"] is True
    assert {o["kind"]: o["action"] for o in result["objects"]} == {
        "Namespace": "none", "OperatorGroup": "none", "Subscription": "update"}
    assert result["diff"][0]["before"]["spec"]["channel"] == "v25.3"
    assert result["diff"][0]["after"]["spec"]["channel"] == "v24.9"
    assert sim.count(writes_only=True, since=mark) == 0
    assert get(kube(sim), OLM_V1A1, "Subscription", "gpu-operator-certified", "nvidia-gpu-operator")["spec"]["channel"] == "v25.3"


def test_manual_approval_approves_only_the_plan_of_the_wanted_csv(sim_factory, tmp_path):
    sim = sim_factory(profile="roce-lab@4.17.30")
    client = kube(sim)
    ns = "nvidia-gpu-operator"
    head = channel_head(client, "gpu-operator-certified")
    pinned = "gpu-operator-certified.v25.3.1"
    assert head != pinned
    client.resources.get(api_version="v1", kind="Namespace").create(body={"metadata": {"name": ns}})
    decoy = client.resources.get(api_version=OLM_V1A1, kind="InstallPlan").create(namespace=ns, body={
        "apiVersion": OLM_V1A1, "kind": "InstallPlan", "metadata": {"name": "install-decoy", "namespace": ns},
        "spec": {"approval": "Manual", "approved": False, "clusterServiceVersionNames": [head]}}).to_dict()
    first = sim.mark()
    results, _took = run_olm(sim, tmp_path, [dict(OPERATORS[3], install_plan_approval="Manual", starting_csv=pinned)])
    result = results[0]
    assert_ok(result)
    # The InstallPlan wait and the CSV wait share one Subscription health tracker: at most one read of the
    # Subscription within its interval (10 s at the default grace period), not one per wait.
    assert sim.count(verb="get", plural="subscriptions", since=first) <= 1
    assert result["csv"] == pinned and result["phase"] == "Succeeded" and result["version"] == "25.3.1"
    plans = {p["metadata"]["name"]: p for p in items(client, OLM_V1A1, "InstallPlan", ns)}
    assert plans["install-decoy"]["spec"]["approved"] is False
    assert plans["install-decoy"]["metadata"]["resourceVersion"] == decoy["metadata"]["resourceVersion"]
    approved = [name for name, p in plans.items() if p["spec"]["approved"]]
    assert approved == [result["install_plan"]]
    assert pinned in plans[result["install_plan"]]["spec"]["clusterServiceVersionNames"]
    assert ("InstallPlan", result["install_plan"], "approve") in {(o["kind"], o["name"], o["action"]) for o in result["objects"]}
    sub = get(client, OLM_V1A1, "Subscription", "gpu-operator-certified", ns)
    assert sub["spec"]["installPlanApproval"] == "Manual" and sub["spec"]["startingCSV"] == pinned

    mark = sim.mark()
    again, _took = run_olm(sim, tmp_path, [dict(OPERATORS[3], install_plan_approval="Manual", starting_csv=pinned)])
    assert again[0]["changed"] is False and sim.count(writes_only=True, since=mark) == 0


def test_check_mode_reports_the_pending_approval_without_approving(sim_factory, tmp_path):
    sim = sim_factory(profile="roce-lab@4.17.30")
    client = kube(sim)
    ns = "nvidia-gpu-operator"
    manual = dict(OPERATORS[3], install_plan_approval="Manual")
    # Someone subscribed by hand with Manual approval; OLM made an InstallPlan that waits for approval.
    client.resources.get(api_version="v1", kind="Namespace").create(body={"metadata": {"name": ns}})
    client.resources.get(api_version=OLM_V1, kind="OperatorGroup").create(namespace=ns, body={
        "apiVersion": OLM_V1, "kind": "OperatorGroup", "metadata": {"name": ns, "namespace": ns},
        "spec": {"targetNamespaces": [ns]}})
    client.resources.get(api_version=OLM_V1A1, kind="Subscription").create(namespace=ns, body={
        "apiVersion": OLM_V1A1, "kind": "Subscription", "metadata": {"name": "gpu-operator-certified", "namespace": ns},
        "spec": {"name": "gpu-operator-certified", "channel": "v25.3", "source": "certified-operators",
                 "sourceNamespace": "openshift-marketplace", "installPlanApproval": "Manual"}})
    # OLM creates the InstallPlan asynchronously: wait for it with the collection's own watch-based waiter.
    cluster = ClusterClient(get_api_client(kubeconfig=sim.kubeconfig))
    plans = wait_for(cluster, cluster.require(OLM_V1A1, "InstallPlan"), lambda found: len(found) == 1, namespace=ns, timeout=30).state
    assert [p["spec"]["approved"] for p in plans] == [False]
    mark = sim.mark()
    results, _took = run_olm(sim, tmp_path, [manual], check=True)
    result = results[0]
    assert_ok(result)
    assert ("InstallPlan", plans[0]["metadata"]["name"], "approve") in {(o["kind"], o["name"], o["action"]) for o in result["objects"]}
    assert result["changed"] is True
    assert {o["kind"]: o["action"] for o in result["objects"]}["Subscription"] == "none"
    assert sim.count(writes_only=True, since=mark) == 0
    assert items(client, OLM_V1A1, "InstallPlan", ns)[0]["spec"]["approved"] is False

    # wait=false approves the plan that is already there and returns without waiting for the CSV.
    results, _took = run_olm(sim, tmp_path, [dict(manual, wait=False)])
    assert_ok(results[0])
    assert results[0]["install_plan"] == plans[0]["metadata"]["name"]
    assert items(client, OLM_V1A1, "InstallPlan", ns)[0]["spec"]["approved"] is True


def test_wait_for_install_plan_subscribes_and_approves_without_waiting_for_the_csv(sim_factory, tmp_path):
    """site.yml's overlapped installs: every Subscription first (Manual plans approved), the CSV waits later."""
    sim = sim_factory(profile="roce-lab@4.17.30")
    client = kube(sim)
    gpu = dict(OPERATORS[3], install_plan_approval="Manual", wait_for="install_plan")
    nfd = dict(OPERATORS[0], wait_for="install_plan")
    results, _took = run_olm(sim, tmp_path, [gpu, nfd])
    for result in results:
        assert_ok(result)
        assert result["changed"] is True
        # Returned on the state read before the approval: no CSV wait ran (wait_for=csv ends at Succeeded).
        assert result["phase"] != "Succeeded" and result["timeline"] == []
    plans = items(client, OLM_V1A1, "InstallPlan", "nvidia-gpu-operator")
    assert [p["metadata"]["name"] for p in plans if p["spec"]["approved"]] == [results[0]["install_plan"]]
    assert ("InstallPlan", results[0]["install_plan"], "approve") in {(o["kind"], o["name"], o["action"]) for o in results[0]["objects"]}
    assert results[1]["install_plan"] is None  # Automatic: nothing to approve, nothing waited for
    # OLM installs both by itself; the later wait (wait_for=csv) finds them and writes nothing.
    cluster = ClusterClient(get_api_client(kubeconfig=sim.kubeconfig))
    for result, operator in zip(results, (gpu, nfd)):
        wait_for(cluster, cluster.require(OLM_V1A1, "ClusterServiceVersion"),
                 lambda csv: ((csv or {}).get("status") or {}).get("phase") == "Succeeded",
                 name=result["csv"], namespace=operator["namespace"], timeout=60)
    mark = sim.mark()
    again, _took = run_olm(sim, tmp_path, [dict(gpu, wait_for="csv"), dict(nfd, wait_for="csv")])
    assert [(r["changed"], r["phase"]) for r in again] == [(False, "Succeeded"), (False, "Succeeded")]
    assert sim.count(writes_only=True, since=mark) == 0


def test_csv_failure_fails_after_the_grace_period_quoting_olm(sim_factory, tmp_path):
    grace = 3
    sim = sim_factory(profile="roce-lab@4.17.30", faults={"operator_faults": {"csv_failure": {"nfd": "InstallComponentFailed"}}})
    results, took = run_olm(sim, tmp_path, [dict(OPERATORS[0], failure_grace_period=grace, wait_timeout=120)])
    result = results[0]
    assert result["failed"] is True
    assert "InstallComponentFailed" in result["msg"]
    assert "simulated fault for package nfd" in result["msg"]  # OLM's message is quoted
    assert result["phase"] == "Failed" and result["reason"] == "InstallComponentFailed"
    assert result["timeline"][-1]["phase"] == "Failed"
    failed_at = [e for e in result["timeline"] if e["phase"] == "Failed"]
    assert failed_at
    # It waited the grace period (not less) and gave up soon after (not at wait_timeout).
    assert grace <= result["elapsed"] < grace + 10, result["elapsed"]
    assert took < 60


def test_transient_csv_failure_within_grace_still_succeeds(sim_factory, tmp_path):
    sim = sim_factory(profile="roce-lab@4.17.30", faults={"operator_faults": {"csv_transient_failure": {"nfd": "InstallComponentFailed"}}},
                      config={"olm_transient_failure_seconds": 1.0})
    results, _took = run_olm(sim, tmp_path, [dict(OPERATORS[0], failure_grace_period=20)])
    result = results[0]
    assert_ok(result)
    assert result["phase"] == "Succeeded"
    assert "Failed" in [e["phase"] for e in result["timeline"]]


def test_foreign_operator_group_that_does_not_fit_is_an_error(sim_factory, tmp_path):
    sim = sim_factory(profile="roce-lab@4.17.30")
    client = kube(sim)
    ns = "openshift-nfd"
    client.resources.get(api_version="v1", kind="Namespace").create(body={"metadata": {"name": ns}})
    client.resources.get(api_version=OLM_V1, kind="OperatorGroup").create(namespace=ns, body={
        "apiVersion": OLM_V1, "kind": "OperatorGroup", "metadata": {"name": "everything", "namespace": ns}, "spec": {}})
    mark = sim.mark()
    results, _took = run_olm(sim, tmp_path, [OPERATORS[0]])
    result = results[0]
    assert result["failed"] is True
    assert "OperatorGroup everything" in result["msg"] and "AllNamespaces" in result["msg"]
    assert "OwnNamespace" in result["msg"]
    assert get(client, OLM_V1A1, "Subscription", "nfd", ns) is None
    assert sim.count(writes_only=True, since=mark, plural="subscriptions") == 0


def test_foreign_operator_group_that_fits_is_used(sim_factory, tmp_path):
    sim = sim_factory(profile="roce-lab@4.17.30")
    client = kube(sim)
    ns = "openshift-nfd"
    client.resources.get(api_version="v1", kind="Namespace").create(body={"metadata": {"name": ns}})
    client.resources.get(api_version=OLM_V1, kind="OperatorGroup").create(namespace=ns, body={
        "apiVersion": OLM_V1, "kind": "OperatorGroup", "metadata": {"name": "mine", "namespace": ns},
        "spec": {"targetNamespaces": [ns]}})
    results, _took = run_olm(sim, tmp_path, [OPERATORS[0]])
    assert_ok(results[0])
    assert [g["metadata"]["name"] for g in items(client, OLM_V1, "OperatorGroup", ns)] == ["mine"]
    assert ("OperatorGroup", "mine", "none") in {(o["kind"], o["name"], o["action"]) for o in results[0]["objects"]}


def test_state_absent_removes_operator_and_waits_for_namespace_termination(sim_factory, tmp_path):
    sim = sim_factory(profile="roce-lab@4.17.30")
    client = kube(sim)
    ns = "openshift-nfd"
    results, _took = run_olm(sim, tmp_path, [OPERATORS[0]])
    assert_ok(results[0])
    csv_name = results[0]["csv"]
    remove = dict(OPERATORS[0], state="absent", remove_operator_group=True, remove_namespace=True)
    results, _took = run_olm(sim, tmp_path, [remove])
    result = results[0]
    assert_ok(result)
    assert result["changed"] is True and result["csv"] == csv_name
    deleted = {(o["kind"], o["name"]) for o in result["objects"] if o["action"] == "delete"}
    assert deleted == {("Subscription", "nfd"), ("ClusterServiceVersion", csv_name), ("Namespace", ns)}
    # The module returned only once the namespace had finished terminating.
    assert get(client, "v1", "Namespace", ns) is None

    mark = sim.mark()
    results, _took = run_olm(sim, tmp_path, [remove])
    assert_ok(results[0])
    assert results[0]["changed"] is False and sim.count(writes_only=True, since=mark) == 0


def test_state_absent_removes_the_crds_the_csv_owns(sim_factory, tmp_path):
    sim = sim_factory(profile="roce-lab@4.17.30")
    client = kube(sim)
    ns = "openshift-nfd"
    results, _took = run_olm(sim, tmp_path, [OPERATORS[0]])
    assert_ok(results[0])
    csv = get(client, OLM_V1A1, "ClusterServiceVersion", results[0]["csv"], ns)
    owned = [o["name"] for o in csv["spec"]["customresourcedefinitions"]["owned"]]
    assert owned
    results, _took = run_olm(sim, tmp_path, [dict(OPERATORS[0], state="absent", remove_crds=True)])
    assert_ok(results[0])
    deleted = {(o["kind"], o["name"]) for o in results[0]["objects"] if o["action"] == "delete"}
    assert {("CustomResourceDefinition", name) for name in owned} <= deleted
    for name in owned:
        assert get(client, "apiextensions.k8s.io/v1", "CustomResourceDefinition", name) is None
    # As on a real API server, the kinds left discovery with their CRDs.
    served = {(t.group, t.plural) for t in sim.store.resource_types() if t.served}
    assert not [name for name in owned if tuple(reversed(name.split(".", 1))) in served]


def test_absent_keeps_namespace_and_operator_group_by_default(sim_factory, tmp_path):
    sim = sim_factory(profile="roce-lab@4.17.30")
    client = kube(sim)
    ns = "nvidia-network-operator"
    results, _took = run_olm(sim, tmp_path, [OPERATORS[2]])
    assert_ok(results[0])
    results, _took = run_olm(sim, tmp_path, [dict(OPERATORS[2], state="absent")], diff=True)
    assert_ok(results[0])
    assert get(client, OLM_V1A1, "Subscription", "nvidia-network-operator", ns) is None
    assert get(client, OLM_V1A1, "ClusterServiceVersion", results[0]["csv"], ns) is None
    assert get(client, "v1", "Namespace", ns) is not None
    assert len(items(client, OLM_V1, "OperatorGroup", ns)) == 1


def test_transient_api_errors_and_conflicts_are_retried(sim_factory, tmp_path):
    faults = {"rules": [
        {"verb": "create", "plural": "subscriptions", "code": 503, "count": 2},
        {"verb": "list", "plural": "packagemanifests", "code": 429, "retry_after": 1, "count": 1},
        {"verb": "update", "plural": "namespaces", "code": 409, "count": 1},
    ]}
    sim = sim_factory(profile="roce-lab@4.17.30", faults=faults)
    client = kube(sim)
    ns = "openshift-nfd"
    client.resources.get(api_version="v1", kind="Namespace").create(body={"metadata": {"name": ns, "labels": {"keep": "me"}}})
    results, _took = run_olm(sim, tmp_path, [OPERATORS[0]])
    assert_ok(results[0])
    assert results[0]["phase"] == "Succeeded"
    assert sim.count(verb="create", plural="subscriptions", code=503) == 2
    assert sim.count(verb="create", plural="subscriptions", code=201) == 1
    assert sim.count(verb="update", plural="namespaces", code=409) == 1
    labels = get(client, "v1", "Namespace", ns)["metadata"]["labels"]
    assert labels["keep"] == "me" and labels["openshift.io/cluster-monitoring"] == "true"


def test_dropped_watch_streams_are_resumed_from_the_last_resource_version(sim_factory, tmp_path):
    # Every CSV watch is cut after one event, as a load balancer or an apiserver restart would do.
    sim = sim_factory(profile="roce-lab@4.17.30", faults={"rules": [
        {"verb": "watch", "plural": "clusterserviceversions", "drop_after_events": 1}]})
    results, _took = run_olm(sim, tmp_path, [OPERATORS[0]])
    assert_ok(results[0])
    assert results[0]["phase"] == "Succeeded"
    watches = [e for e in sim.request_log if e["verb"] == "watch" and e["plural"] == "clusterserviceversions"]
    assert len(watches) >= 2
    versions = [int(e["query"]["resourceVersion"]) for e in watches]
    assert versions == sorted(versions) and len(set(versions)) == len(versions)
    assert all(e["query"].get("fieldSelector") == "metadata.name=%s" % results[0]["csv"] for e in watches)
    # Resuming does not list again: one list before the first watch.
    assert sim.count(verb="list", plural="clusterserviceversions") == 1


def test_client_errors_are_not_retried(sim_factory, tmp_path):
    sim = sim_factory(profile="roce-lab@4.17.30", faults={"rules": [{"verb": "create", "plural": "subscriptions", "code": 403}]})
    results, _took = run_olm(sim, tmp_path, [OPERATORS[0]])
    assert results[0]["failed"] is True
    assert "Subscription" in results[0]["msg"] and "403" in results[0]["msg"]
    assert sim.count(verb="create", plural="subscriptions") == 1


@pytest.mark.parametrize("package", ["nonexistent-operator"])
def test_unknown_package_is_reported(sim_factory, tmp_path, package):
    sim = sim_factory(profile="roce-lab@4.17.30")
    results, _took = run_olm(sim, tmp_path, [{"package": package, "namespace": "x"}])
    assert results[0]["failed"] is True and package in results[0]["msg"]
    assert sim.count(writes_only=True) == 0
