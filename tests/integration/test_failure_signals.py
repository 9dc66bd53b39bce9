"""site.yml against the real failure signals of the operators' custom resources (issue 32, point 4).

Each test injects one failure mode the way the operator shows it on a real cluster (a cited upstream thread; the
simulator fault cites it too) and asserts that the play fails within the wait's grace period + 5 s after the cluster
first shows the signal, with the operator's own cause in its message. The time is measured from the first moment a
watcher of the simulator's store sees the signal to the output line of the failing task that quotes the cause. On the code before these signals
were read, each of these plays ran to its timeout (600 s and more) or succeeded.
"""

import os
import subprocess
import threading
import time

from simulator.controllers.testing import Kube
from site_support import ROOT, example, objects

GRACE = 3
SLACK = 5
SRIOV_NS = "openshift-sriov-network-operator"
MCO = "machineconfiguration.openshift.io/v1"
# Configuration 2 (shared device, InfiniBand) renders a MachineConfig for the worker pool (persistent NIC names).


def run_watching(sim, signal, quote, *args):
    """Run site.yml against ``sim``; (return code, output, seconds from the first time ``signal(sim)`` held to the
    first output line that quotes ``quote``, or None when either never happened). The output is read as ansible prints
    it, so the time is when the failing task reported the cause, not after the diagnostics the play collects then."""
    seen = {}
    done = threading.Event()

    def watch():
        while not done.is_set():
            try:
                if "signal" not in seen and signal(sim):
                    seen["signal"] = time.monotonic()
            except Exception:  # pylint: disable=broad-except  # the store may be mid-write; look again
                pass
            time.sleep(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    env = dict(os.environ, K8S_AUTH_KUBECONFIG=sim.kubeconfig, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0",
               PYTHONUNBUFFERED="1")
    env.pop("KUBECONFIG", None)
    proc = subprocess.Popen(["ansible-playbook", "playbooks/site.yml"] + list(args), cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    lines = []
    for line in proc.stdout:
        lines.append(line)
        # The YAML callback folds long messages over several lines: look at the latest lines joined.
        if "reported" not in seen and quote in " ".join("".join(lines[-20:]).split()):
            seen["reported"] = time.monotonic()
    proc.wait(timeout=60)
    done.set()
    watcher.join()
    after = seen["reported"] - seen["signal"] if "reported" in seen and "signal" in seen else None
    print("signal to reported cause: %s s (grace %d s)" % (None if after is None else round(after, 2), GRACE))
    return proc.returncode, "".join(lines), after


def test_an_sriov_sync_error_that_stays_in_progress_fails_the_play_with_last_sync_error(sim_factory):
    """On OpenShift the config daemon writes InProgress + lastSyncError, never Failed (sriov-network-operator
    pkg/daemon/daemon.go): lockdown mode on a Mellanox NIC, k8snetworkplumbingwg/sriov-network-operator#103."""
    error = "Mellanox device detected when in lockdown mode"
    sim = sim_factory(profile="mixed-lab", faults={"operator_faults": {"sriov_sync_error": {"*": error}}})

    def signal(cluster):
        return any((s.get("status") or {}).get("lastSyncError") == error
                   for s in objects(cluster, "sriovnetwork.openshift.io/v1", "SriovNetworkNodeState", SRIOV_NS))

    rc, output, after = run_watching(sim, signal, "InProgress: " + error, "-e", "@" + example("sriov_legacy/roce"),
                                     "-e", "rdma_failure_grace_period=%d" % GRACE)
    assert rc != 0, output[-4000:]
    assert "did not satisfy" not in output, "the play ran to its timeout"
    # The diagnostics the play collects hold the node state with its error.
    assert "syncStatus InProgress: " + error in " ".join(output.split()), output[-4000:]
    assert after is not None and after <= GRACE + SLACK, "the play reported it %s s after the node state showed the error" % after


def test_a_csv_that_cycles_failed_and_pending_fails_the_play_within_the_grace_period(sim_factory):
    """olm-operator requeues a failed install check: Failed (InstallCheckFailed) -> Pending (NeedsReinstall) and
    round again (olm/operator.go transitionCSVState; operator-framework/operator-lifecycle-manager#606), so the CSV is
    never Failed for the whole grace period; the wait counts the failures instead."""
    cause = "deployment gpu-operator not ready before timeout"
    sim = sim_factory(profile="mixed-lab", faults={"operator_faults": {"csv_failure_cycle": {"gpu-operator-certified": cause}}})

    def signal(cluster):
        return any((c.get("status") or {}).get("phase") == "Failed"
                   for c in objects(cluster, "operators.coreos.com/v1alpha1", "ClusterServiceVersion", "nvidia-gpu-operator"))

    rc, output, after = run_watching(sim, signal, "InstallCheckFailed: install failed: " + cause, "-e", "@" + example("shared_device/roce"),
                                     "-e", "nvidia_gpu_operator_failure_grace_period=%d" % GRACE)
    assert rc != 0, output[-4000:]
    assert "OLM retries the install and fails again" in " ".join(output.split()), output[-4000:]
    assert after is not None and after <= GRACE + SLACK, "the play reported it %s s after the CSV first failed" % after


def test_a_node_degraded_pool_with_an_empty_degraded_message_fails_with_the_nodes_reason(sim_factory):
    """Since the MachineConfigNode rework the pool's Degraded condition can have an empty message; the node's reason
    is on NodeDegraded (machine-config-operator pkg/controller/node/status.go; openstack-k8s-operators/neutron-operator#332)."""
    reason = 'unexpected on-disk state validating against rendered-worker-0: content mismatch for file "/etc/node-sizing-enabled.env"'
    sim = sim_factory(profile="mixed-lab", faults={"operator_faults": {"mcp_node_degraded": {"worker": reason}}})

    def signal(cluster):
        pool = [p for p in objects(cluster, MCO, "MachineConfigPool") if p["metadata"]["name"] == "worker"][0]
        return any(c["type"] == "NodeDegraded" and c["status"] == "True" for c in (pool.get("status") or {}).get("conditions") or [])

    rc, output, after = run_watching(sim, signal, "content mismatch for file", "-e", "@" + example("shared_device/infiniband"),
                                     "-e", "rdma_failure_grace_period=%d" % GRACE)
    assert rc != 0, output[-4000:]
    assert "is reporting" in output, output[-4000:]
    assert "Degraded without a message" not in output
    assert after is not None and after <= GRACE + SLACK, "the play reported it %s s after the pool went NodeDegraded" % after


def test_a_paused_pool_fails_the_play_instead_of_waiting_for_a_roll_that_never_comes(sim_factory, tmp_path):
    """The Machine Config Operator does not roll out a paused pool (pkg/controller/node/status.go: Updating False,
    "Pool is paused"); the play says so within the grace period instead of waiting rdma_wait_timeout."""
    sim = sim_factory(profile="mixed-lab")
    Kube(sim, str(tmp_path / "discovery")).patch(MCO, "MachineConfigPool", "worker", {"spec": {"paused": True}})

    def signal(cluster):
        pool = [p for p in objects(cluster, MCO, "MachineConfigPool") if p["metadata"]["name"] == "worker"][0]
        return ((pool.get("spec") or {}).get("configuration") or {}).get("name") != \
            ((pool.get("status") or {}).get("configuration") or {}).get("name")

    rc, output, after = run_watching(sim, signal, "the pool is paused (spec.paused: true)", "-e", "@" + example("shared_device/infiniband"),
                                     "-e", "rdma_failure_grace_period=%d" % GRACE)
    assert rc != 0, output[-4000:]
    assert after is not None and after <= GRACE + SLACK, "the play reported it %s s after the pool got a config it does not roll" % after


def test_a_nic_cluster_policy_component_not_ready_with_a_message_fails_the_play(sim_factory):
    """The Network Operator copies a state's error into its message whatever the state (controllers/nic_policy_helpers.go;
    Mellanox/network-operator#895: state-OFED notReady with "ForcePrecompiled is enabled and precompiled image was not
    found"); the policy itself stays notReady."""
    message = ("failed to create k8s objects from manifest: failed to render objects: ForcePrecompiled is enabled and "
               "precompiled image was not found")
    sim = sim_factory(profile="mixed-lab", faults={"operator_faults": {"nic_policy_component_failure": {
        "state": "state-OFED", "sync_state": "notReady", "message": message}}})

    def signal(cluster):
        return any(s.get("message") == message for p in objects(cluster, "mellanox.com/v1alpha1", "NicClusterPolicy")
                   for s in (p.get("status") or {}).get("appliedStates") or [])

    rc, output, after = run_watching(sim, signal, "state-OFED: " + message, "-e", "@" + example("shared_device/roce"),
                                     "-e", "nvidia_network_operator_failure_grace_period=%d" % GRACE)
    assert rc != 0, output[-4000:]
    assert after is not None and after <= GRACE + SLACK, "the play reported it %s s after the policy showed the message" % after
