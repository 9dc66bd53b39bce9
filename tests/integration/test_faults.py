"""playbooks/site.yml (configuration 1 on mixed-lab) under injected API faults.

Transient faults (503 and 500 on reads, a create and a patch; 429 with Retry-After; dropped watches; connections reset
without an answer; a 409 Conflict on the InstallPlan approval) must not fail the play. Permanent ones (403 Forbidden or 422 Invalid on a create) must fail
it with a message that names the object and the API's reason. In both cases a run after the faults are gone converges
with nothing lost and nothing duplicated, and the run after that writes nothing. A killed API server (the simulator's
kill rule, fired by the request itself, not by a timer racing the play): back within a second, the retries absorb it;
down for good, the play fails within seconds naming the unreachable server, and the run after its restart converges.
"""

import os
import re
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SITE = os.path.join(ROOT, "playbooks", "site.yml")
EXAMPLE = os.path.join(ROOT, "playbooks", "vars", "examples", "1-shared-device-roce.yml")
OPERATOR_NAMESPACES = {"openshift-nfd": "nfd", "openshift-sriov-network-operator": "sriov-network-operator",
                       "nvidia-network-operator": "nvidia-network-operator", "nvidia-gpu-operator": "gpu-operator-certified"}

TRANSIENT = [
    # preflight's plan_status (one list per kind)
    {"verb": "list", "plural": "catalogsources", "code": 503, "count": 1},
    {"verb": "list", "plural": "subscriptions", "reset": True, "count": 1},
    # the collection's own modules (RetryPolicy): reads, a create, throttling, watches
    {"verb": "list", "plural": "packagemanifests", "code": 500, "count": 1},
    {"verb": "get", "plural": "subscriptions", "code": 503, "count": 2},
    {"verb": "create", "plural": "operatorgroups", "code": 503, "count": 1},
    {"verb": "list", "plural": "nodes", "code": 429, "retry_after": 1, "count": 2},
    {"verb": "watch", "plural": "clusterserviceversions", "drop_after_events": 1, "count": 3},
    {"verb": "watch", "plural": "installplans", "drop_after_events": 0, "count": 1},
    {"verb": "update", "plural": "installplans", "code": 409, "count": 1},
    # olm_operator reads the operator namespace first (a fresh install reads no CSV: nothing exists there yet)
    {"verb": "get", "plural": "namespaces", "reset": True, "count": 1},
]


def site_command(sim, *extra):
    """(command, environment) of site.yml with configuration 1 against ``sim``."""
    env = dict(os.environ, K8S_AUTH_KUBECONFIG=sim.kubeconfig, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0")
    return ["ansible-playbook", SITE, "-e", "@" + EXAMPLE] + list(extra), env


def run_site(sim, *extra):
    cmd, env = site_command(sim, *extra)
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=600)


def run_site_holding_resolution(sim, namespaces, *extra):
    """run_site, with OLM holding resolution in ``namespaces`` until the collection watches there.

    The watch faults must meet a watch: without the hold, a loaded machine lets OLM finish before the collection
    first lists, the collection never watches, and the rule never fires. With it, no InstallPlan or CSV exists
    in a held namespace until the collection has opened a watch on it, whatever the timing."""
    held = set(namespaces)
    sim.faults.update({"operator_faults": {"olm_resolution_hold": sorted(held)}})
    mark = sim.mark()
    cmd, env = site_command(sim, *extra)
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + 600
        try:
            while proc.poll() is None and time.monotonic() < deadline:
                watched = {r["namespace"] for r in sim.request_log[mark:] if r["verb"] == "watch"
                           and r["plural"] in ("clusterserviceversions", "installplans")}
                if held & watched:
                    held -= watched
                    sim.faults.update({"operator_faults": {"olm_resolution_hold": sorted(held)}})
                time.sleep(0.05)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        out.seek(0)
        text = out.read()
    assert not held, "the collection never watched in %s" % sorted(held)
    return subprocess.CompletedProcess(cmd, proc.returncode, text, "")


def output(proc):
    return proc.stdout[-6000:] + proc.stderr[-3000:]


def fired(sim):
    return [(rule.to_dict(), rule.fired) for rule in sim.faults.rules]


def items(client, api_version, kind, namespace=None, label_selector=None):
    resource = client.resources.get(api_version=api_version, kind=kind)
    return resource.get(namespace=namespace, label_selector=label_selector).to_dict()["items"]


def assert_converged_once(sim):
    """Everything the configuration needs exists, exactly once; each operator's InstallPlan (Manual approval, every
    operator's default) was approved once."""
    client = sim.dynamic_client()
    namespaces = [n["metadata"]["name"] for n in items(client, "v1", "Namespace")]
    for namespace, package in OPERATOR_NAMESPACES.items():
        assert namespace in namespaces, namespaces
        groups = items(client, "operators.coreos.com/v1", "OperatorGroup", namespace)
        subs = items(client, "operators.coreos.com/v1alpha1", "Subscription", namespace)
        csvs = items(client, "operators.coreos.com/v1alpha1", "ClusterServiceVersion", namespace)
        assert len(groups) == 1, (namespace, [g["metadata"]["name"] for g in groups])
        assert [s["spec"]["name"] for s in subs] == [package], (namespace, subs)
        assert [c["status"]["phase"] for c in csvs] == ["Succeeded"], (namespace, [c["metadata"]["name"] for c in csvs])
        plans = items(client, "operators.coreos.com/v1alpha1", "InstallPlan", namespace)
        assert [p["spec"]["approved"] for p in plans] == [True], (namespace, plans)
    approvals = [r for r in sim.request_log if r["plural"] == "installplans" and r["verb"] in ("update", "patch")
                 and r["mutated"]]
    assert len(approvals) == len(OPERATOR_NAMESPACES), approvals
    for api_version, kind, namespace, name in [
            ("nfd.openshift.io/v1", "NodeFeatureDiscovery", "openshift-nfd", "nfd-instance"),
            ("sriovnetwork.openshift.io/v1", "SriovOperatorConfig", "openshift-sriov-network-operator", "default"),
            ("mellanox.com/v1alpha1", "NicClusterPolicy", None, "nic-cluster-policy"),
            ("nvidia.com/v1", "ClusterPolicy", None, "gpu-cluster-policy"),
            ("mellanox.com/v1alpha1", "MacvlanNetwork", None, "rdmashared-net"),
            ("k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition", "default", "rdmashared-net")]:
        found = items(client, api_version, kind, namespace)
        assert [i["metadata"]["name"] for i in found] == [name], (kind, found)
        if kind in ("NicClusterPolicy", "ClusterPolicy", "MacvlanNetwork"):
            assert found[0]["status"]["state"] == "ready", (kind, found[0].get("status"))


def assert_noop_rerun(sim):
    mark = sim.mark()
    proc = run_site(sim)
    assert proc.returncode == 0, output(proc)
    writes = [(r["verb"], r["path"]) for r in sim.request_log[mark:]
              if r["verb"] in ("create", "update", "patch", "delete", "deletecollection") and not r["dry_run"]
              and r["group"] != "authorization.k8s.io"]  # the permission reviews ask, they store nothing
    assert writes == [], writes
    assert re.search(r"localhost\s+: ok=\d+\s+changed=0\s", proc.stdout), proc.stdout[-3000:]


def test_transient_faults_are_retried_and_leave_no_trace(sim_factory):
    sim = sim_factory(profile="mixed-lab", faults={"seed": 3, "rules": TRANSIENT})
    mark = sim.mark()
    proc = run_site_holding_resolution(sim, OPERATOR_NAMESPACES)
    assert proc.returncode == 0, output(proc)
    unfired = [rule for rule, count in fired(sim) if count == 0]
    assert unfired == [], "fault rules that never matched a request (the test lost its purpose): %s" % unfired
    codes = sorted(set(r["code"] for r in sim.request_log[mark:] if r["code"] >= 400 and r["code"] != 404))
    assert codes == [409, 429, 500, 503], codes
    resets = [(r["verb"], r["plural"]) for r in sim.request_log[mark:] if r["code"] == 0]
    assert sorted(resets) == [("get", "namespaces"), ("list", "subscriptions")], resets
    assert_converged_once(sim)

    # Drift on a managed object, repaired through a PATCH that first meets two 503s.
    sim.faults.clear()
    client = sim.dynamic_client()
    macvlan = client.resources.get(api_version="mellanox.com/v1alpha1", kind="MacvlanNetwork")
    macvlan.patch(name="rdmashared-net", body={"spec": {"mtu": 9000}}, content_type="application/merge-patch+json")
    patch_fault = sim.faults.add(verb="patch", group="mellanox.com", plural="macvlannetworks", code=503, count=2)
    mark = sim.mark()
    proc = run_site(sim)
    assert proc.returncode == 0, output(proc)
    assert patch_fault.fired == 2
    patches = [r["code"] for r in sim.request_log[mark:] if r["verb"] == "patch" and r["plural"] == "macvlannetworks"]
    assert patches == [503, 503, 200], patches
    assert macvlan.get(name="rdmashared-net").to_dict()["spec"]["mtu"] == 1500

    sim.faults.clear()
    assert_noop_rerun(sim)
    assert_converged_once(sim)


def test_permanent_faults_fail_clearly_then_a_clean_run_converges(sim_factory):
    sim = sim_factory(profile="mixed-lab")
    client = sim.dynamic_client()

    sim.faults.add(verb="create", plural="subscriptions", code=403,
                   message="subscriptions.operators.coreos.com is forbidden: User \"ansible\" cannot create resource")
    proc = run_site(sim)
    assert proc.returncode != 0, output(proc)
    text = proc.stdout + proc.stderr
    assert re.search(r"Failed to create Subscription openshift-nfd/nfd: .*forbidden.*\(HTTP 403 Forbidden\)", text), output(proc)
    assert items(client, "operators.coreos.com/v1alpha1", "Subscription") == []
    assert sim.count(verb="create", plural="subscriptions") == 1, "a permanent error must not be retried"

    sim.faults.clear()
    # Custom resources go through server-side apply: a PATCH that creates (dry runs of preflight left alone).
    sim.faults.add(verb="patch", group="mellanox.com", plural="nicclusterpolicies", code=422, include_dry_run=False,
                   message="NicClusterPolicy.mellanox.com \"nic-cluster-policy\" is invalid: spec.ofedDriver.version: Required value")
    proc = run_site(sim)
    assert proc.returncode != 0, output(proc)
    text = proc.stdout + proc.stderr
    assert "NicClusterPolicy" in text and "spec.ofedDriver.version: Required value" in text and "422" in text, output(proc)
    assert items(client, "mellanox.com/v1alpha1", "NicClusterPolicy") == []
    assert sim.count(verb="patch", plural="nicclusterpolicies") == 1, "a permanent error must not be retried"

    sim.faults.clear()
    proc = run_site(sim)
    assert proc.returncode == 0, output(proc)
    assert_converged_once(sim)
    assert_noop_rerun(sim)


def test_a_nic_cluster_policy_component_in_error_fails_the_play_with_the_operators_message(sim_factory):
    """The network operator's vocabulary (issue 14 point 6): the policy only says notReady; the failing component says
    error in appliedStates with its message. The play fails on that within the grace period, not at the 600 s timeout."""
    sim = sim_factory(profile="mixed-lab")
    message = "failed to create k8s objects from manifest: unexpected DOCA driver image tag"
    sim.faults.update({"operator_faults": {"nic_policy_component_failure": {
        "state": "state-OFED", "sync_state": "error", "message": message}}})
    proc = run_site(sim, "-e", "nvidia_network_operator_failure_grace_period=2", "-e", "nvidia_network_operator_wait_timeout=600")
    text = proc.stdout + proc.stderr
    assert proc.returncode != 0, output(proc)
    assert "state-OFED: " + message in text, output(proc)
    assert "timed out" not in text.lower(), output(proc)
    policy = items(sim.dynamic_client(), "mellanox.com/v1alpha1", "NicClusterPolicy")[0]
    assert policy["status"]["state"] == "notReady"


def test_a_cluster_policy_that_cannot_reconcile_fails_the_play_with_the_operators_message(sim_factory):
    """The GPU operator's vocabulary (issue 14 point 6): Error=True also means "not ready yet" (OperandNotReady);
    reason ReconcileFailed is the failure, and the play stops on it within the grace period."""
    sim = sim_factory(profile="mixed-lab")
    sim.faults.update({"operator_faults": {"gpu_policy_reconcile_failure": {
        "state": "state-driver", "message": "failed to get driver image: invalid repository"}}})
    proc = run_site(sim, "-e", "nvidia_gpu_operator_failure_grace_period=2", "-e", "nvidia_gpu_operator_wait_timeout=600")
    text = proc.stdout + proc.stderr
    assert proc.returncode != 0, output(proc)
    assert "gpu-cluster-policy: Failed to reconcile state-driver: failed to get driver image: invalid repository" in text, output(proc)
    assert "timed out" not in text.lower(), output(proc)


TEARDOWN_TRANSIENT = [
    {"verb": "delete", "plural": "macvlannetworks", "code": 503, "count": 1},
    {"verb": "delete", "plural": "subscriptions", "code": 500, "count": 1},
    {"verb": "delete", "plural": "clusterserviceversions", "reset": True, "count": 1},
    {"verb": "list", "plural": "nicclusterpolicies", "code": 429, "retry_after": 1, "count": 1},
]


def test_teardown_absorbs_transient_faults_and_leaves_nothing(sim_factory):
    """The fault matrix on teardown.yml (issue 18): 503/500 on deletes, a reset, a 429 on a list; the teardown still
    removes everything the collection created, and a second teardown has nothing to do."""
    sim = sim_factory(profile="mixed-lab")
    converged = run_site(sim)
    assert converged.returncode == 0, output(converged)
    rules = [sim.faults.add(**rule) for rule in TEARDOWN_TRANSIENT]
    env = dict(os.environ, K8S_AUTH_KUBECONFIG=sim.kubeconfig, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0")
    teardown = [os.path.join(ROOT, "playbooks", "teardown.yml"), "-e", "teardown_remove_namespaces=true"]
    proc = subprocess.run(["ansible-playbook"] + teardown, cwd=ROOT, env=env, capture_output=True, text=True, check=False,
                          timeout=600)
    assert proc.returncode == 0, output(proc)
    assert [rule.fired for rule in rules] == [1] * len(rules), fired(sim)
    client = sim.dynamic_client()
    selector = "app.kubernetes.io/managed-by=gpudirect.openshift"
    for api_version, kind in (("mellanox.com/v1alpha1", "MacvlanNetwork"), ("mellanox.com/v1alpha1", "NicClusterPolicy"),
                              ("nvidia.com/v1", "ClusterPolicy")):
        assert items(client, api_version, kind, label_selector=selector) == [], kind
    assert items(client, "operators.coreos.com/v1alpha1", "Subscription") == []
    namespaces = [n["metadata"]["name"] for n in items(client, "v1", "Namespace")]
    assert not set(OPERATOR_NAMESPACES) & set(namespaces), namespaces
    again = subprocess.run(["ansible-playbook"] + teardown, cwd=ROOT, env=env, capture_output=True, text=True, check=False,
                           timeout=600)
    assert again.returncode == 0 and "Nothing to delete" in again.stdout, output(again)


def run_site_watching_kills(sim, *extra):
    """run_site in the background; returns (process, seconds from the API server's death to the play's end, or None)."""
    cmd, env = site_command(sim, *extra)
    killed_at = None
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + 600
        try:
            while proc.poll() is None and time.monotonic() < deadline:
                if killed_at is None and sim.kills:
                    killed_at = time.monotonic()
                time.sleep(0.05)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        ended = time.monotonic()
        out.seek(0)
        text = out.read()
    return subprocess.CompletedProcess(cmd, proc.returncode, text, ""), None if killed_at is None else ended - killed_at


def test_an_api_server_that_dies_and_comes_back_within_seconds_is_absorbed(sim_factory):
    """The API server dies right after storing the first Subscription, before answering, and is back a second later:
    the create's retry meets AlreadyExists and reads the object; the play passes with the objects of a clean run."""
    sim = sim_factory(profile="mixed-lab")
    # 1 s down against at least 3.1 s of backoff (RetryPolicy: 6 attempts, 0.2 s doubling, jitter 0.5..1) in the client.
    rule = sim.faults.add(verb="create", plural="subscriptions", kill=True, after_handler=True, down_seconds=1.0, count=1)
    proc, _seconds = run_site_watching_kills(sim)
    assert proc.returncode == 0, output(proc)
    assert rule.fired == 1 and sim.kills == 1
    creates = [(r["code"], r["namespace"]) for r in sim.request_log if r["verb"] == "create" and r["plural"] == "subscriptions"]
    assert creates[:2] == [(0, "openshift-nfd"), (409, "openshift-nfd")], creates
    assert_converged_once(sim)
    sim.faults.clear()
    assert_noop_rerun(sim)


def test_an_api_server_that_stays_down_fails_the_play_quickly_and_the_next_run_converges(sim_factory):
    """The API server dies on the NicClusterPolicy apply and stays down: the apply fails after its retries (seconds,
    not a hang) naming the object and the unreachable server; diagnostics say at once that they could not be
    collected; the play ends failed, not "unreachable". Once the server is back, a run converges with nothing lost or
    duplicated, and the run after it writes nothing."""
    sim = sim_factory(profile="mixed-lab")
    rule = sim.faults.add(verb="patch", group="mellanox.com", plural="nicclusterpolicies", kill=True, include_dry_run=False,
                          count=1)
    proc, seconds = run_site_watching_kills(sim)
    text = " ".join(proc.stdout.split())  # the YAML callback wraps long messages
    assert proc.returncode == 2, output(proc)  # failed (4 would be "host unreachable", which skips the rescue's end)
    assert rule.fired == 1 and not sim.api_server_up
    unreachable = "the API server at 127.0.0.1:%d is unreachable: Connection refused" % sim.port
    assert re.search(r"Applying manifests failed at NicClusterPolicy nic-cluster-policy: " + re.escape(unreachable)
                     + r" \(6 attempts\)", text), output(proc)
    assert re.search(r'Stopped at "Apply the NicClusterPolicy [^"]*"; its error is printed above', text), output(proc)
    assert "Diagnostics could not be collected: " + unreachable + "." in text, output(proc)
    assert re.search(r"localhost\s+: ok=\d+\s+changed=\d+\s+unreachable=0\s+failed=1\s", text), output(proc)
    assert "Traceback" not in text, output(proc)
    # RetryPolicy: 6 attempts, at most 0.2+0.4+0.8+1.6+3.2 s of backoff; then one probe for the diagnostics.
    assert seconds is not None and seconds < 60, seconds
    print("the play failed %.1f s after the API server died" % seconds)

    sim.faults.clear()
    sim.restart()
    proc = run_site(sim)
    assert proc.returncode == 0, output(proc)
    assert_converged_once(sim)
    assert_noop_rerun(sim)
