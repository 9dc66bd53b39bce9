"""pod_states.operand_problems / describe_operand_problem and the OperandPods check of cluster/waits.py, on pod
statuses shaped as the kubelet writes them in the upstream threads cited below."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpudirect.openshift.plugins.module_utils.verify import pod_states
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.waits import OperandFailed, OperandPods
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import waits as render_waits


def pod(name, node, statuses, phase="Running", namespace="nvidia-network-operator"):
    return {"metadata": {"name": name, "namespace": namespace}, "spec": {"nodeName": node},
            "status": {"phase": phase, "containerStatuses": statuses}}


# Mellanox/network-operator issue 830 (https://github.com/Mellanox/network-operator/issues/830): the DOCA driver pod
# on OpenShift 4.14 restarts because no driver exists for the kernel and the repositories to build one are unreachable.
CRASHING_DRIVER = pod("mofed-rhcos4.14-ds-ncj2n", "worker-1", [{
    "name": "mofed-container", "ready": False, "restartCount": 7, "image": "nvcr.io/nvidia/mellanox/mofed:23.10-0.5.5.0",
    "state": {"waiting": {"reason": "CrashLoopBackOff",
                          "message": "back-off 5m0s restarting failed container=mofed-container pod=mofed-rhcos4.14-ds-ncj2n_nvidia-network-operator(0c1f)"}},
    "lastState": {"terminated": {"exitCode": 1, "reason": "Error", "message": "No OFED driver found for kernel 5.14.0-284.40.1.el9_2.x86_64\n"}}}])
# NVIDIA/gpu-operator issue 682 (https://github.com/NVIDIA/gpu-operator/issues/682): the precompiled driver image for the
# node's kernel does not exist, so the driver pod cannot pull it.
MISSING_PRECOMPILED = pod("nvidia-driver-daemonset-5.15.0-100-generic-ubuntu22.04-x7k2p", "gpu-0", [{
    "name": "nvidia-driver-ctr", "ready": False, "restartCount": 0, "image": "nvcr.io/nvidia/driver:535-5.15.0-100-generic-ubuntu22.04",
    "state": {"waiting": {"reason": "ImagePullBackOff",
                          "message": 'Back-off pulling image "nvcr.io/nvidia/driver:535-5.15.0-100-generic-ubuntu22.04"'}},
    "lastState": {}}], phase="Pending", namespace="nvidia-gpu-operator")
HEALTHY = pod("rdma-shared-dp-ds-abcde", "worker-1", [{"name": "rdma-shared-dp", "ready": True, "restartCount": 0,
                                                       "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}}}])
STARTING = pod("mofed-rhcos4.14-ds-zzzzz", "worker-2", [{"name": "mofed-container", "ready": False, "restartCount": 0,
                                                        "state": {"waiting": {"reason": "ContainerCreating"}}}], phase="Pending")


def test_crash_loops_and_image_pulls_are_problems_starting_and_running_containers_are_not():
    problems = pod_states.operand_problems([CRASHING_DRIVER, MISSING_PRECOMPILED, HEALTHY, STARTING])
    assert [(p["pod"], p["reason"]) for p in problems] == [
        ("mofed-rhcos4.14-ds-ncj2n", "CrashLoopBackOff"),
        ("nvidia-driver-daemonset-5.15.0-100-generic-ubuntu22.04-x7k2p", "ImagePullBackOff")]
    crash = problems[0]
    assert (crash["node"], crash["container"], crash["restarts"], crash["exit_code"]) == ("worker-1", "mofed-container", 7, 1)
    assert crash["termination_message"] == "No OFED driver found for kernel 5.14.0-284.40.1.el9_2.x86_64"


def test_a_problem_reads_as_pod_node_container_reason_termination_and_log():
    crash, pull = pod_states.operand_problems([CRASHING_DRIVER, MISSING_PRECOMPILED])
    assert pod_states.describe_operand_problem(crash, ["Unsetting driver ready state", "", "Enabling RHOCP and EUS RPM repos..."]) == (
        "pod nvidia-network-operator/mofed-rhcos4.14-ds-ncj2n on node worker-1: container mofed-container is CrashLoopBackOff "
        "(7 restarts); last exit code 1: No OFED driver found for kernel 5.14.0-284.40.1.el9_2.x86_64; last log lines: "
        "Unsetting driver ready state | Enabling RHOCP and EUS RPM repos...")
    assert pod_states.describe_operand_problem(pull) == (
        "pod nvidia-gpu-operator/nvidia-driver-daemonset-5.15.0-100-generic-ubuntu22.04-x7k2p on node gpu-0: container "
        "nvidia-driver-ctr is ImagePullBackOff: Back-off pulling image \"nvcr.io/nvidia/driver:535-5.15.0-100-generic-ubuntu22.04\"")


class FakeCluster:
    """Answers the pod list and log reads OperandPods sends; counts them."""

    def __init__(self, pods, log="line one\nline two\n"):
        self.pods, self.log, self.lists, self.reads = pods, log, 0, []

    def resource(self, api_version, kind):
        return (api_version, kind)

    def list(self, resource, namespace=None, label_selector=None):
        self.lists += 1
        return [p for p in self.pods if p["metadata"]["namespace"] == namespace], "1"

    def read_text(self, path, params):
        self.reads.append((path, params))
        return self.log


def test_operand_pods_fail_only_after_the_grace_period_and_list_at_most_once_per_interval():
    now = [100.0]
    cluster = FakeCluster([CRASHING_DRIVER, HEALTHY])
    pods = OperandPods(cluster, {"namespace": "nvidia-network-operator"}, grace=10, clock=lambda: now[0])
    assert pods.interval == 5.0 and pods.next_check() == 100.0
    assert pods.check() is False and cluster.lists == 1       # first seen now: within its grace period
    now[0] = 103.0
    assert pods.check() is False and cluster.lists == 1       # within the listing interval: no request
    now[0] = 110.0
    with pytest.raises(OperandFailed) as failed:
        pods.check()
    assert str(failed.value).startswith("pod nvidia-network-operator/mofed-rhcos4.14-ds-ncj2n on node worker-1: container "
                                        "mofed-container is CrashLoopBackOff")
    assert str(failed.value).endswith("last log lines: line one | line two")
    path, params = cluster.reads[0]
    assert path == "/api/v1/namespaces/nvidia-network-operator/pods/mofed-rhcos4.14-ds-ncj2n/log"
    assert ("container", "mofed-container") in params and ("previous", "true") in params


def test_a_problem_that_clears_restarts_its_grace_period():
    now = [0.0]
    cluster = FakeCluster([CRASHING_DRIVER])
    pods = OperandPods(cluster, {"namespace": "nvidia-network-operator"}, grace=4, clock=lambda: now[0])
    assert pods.check() is False
    cluster.pods = [HEALTHY]
    now[0] = 2.0
    assert pods.check() is False
    cluster.pods = [CRASHING_DRIVER]
    now[0] = 4.0
    assert pods.check() is False  # seen again at 4 s: its grace period starts over
    now[0] = 8.0
    with pytest.raises(OperandFailed):
        pods.check()


def test_operator_waits_follow_the_operand_pods_of_the_operator_namespace():
    assert render_waits.nic_cluster_policy_wait("nvidia-network-operator")["operand_pods"] == {
        "namespace": "nvidia-network-operator", "label_selectors": [], "images": []}
    assert render_waits.cluster_policy_wait("nvidia-gpu-operator")["operand_pods"]["namespace"] == "nvidia-gpu-operator"
    assert "operand_pods" not in render_waits.nic_cluster_policy_wait()
    (entry,) = render_waits.operator_phase_waits("nic_cluster_policy", operand_namespace="nvidia-network-operator")
    assert entry["operand_pods"]["namespace"] == "nvidia-network-operator"


def daemonset(name, generation, observed, desired, updated, available, image):
    return {"metadata": {"name": name, "namespace": "nvidia-network-operator", "generation": generation},
            "spec": {"template": {"spec": {"containers": [{"name": "c", "image": image}]}}},
            "status": {"observedGeneration": observed, "desiredNumberScheduled": desired,
                       "updatedNumberScheduled": updated, "numberAvailable": available}}


class RolloutCluster(FakeCluster):
    def __init__(self, sets):
        super(RolloutCluster, self).__init__([])
        self.sets = sets

    def list(self, resource, namespace=None, label_selector=None):
        if resource == ("apps/v1", "DaemonSet"):
            return self.sets, "1"
        return super(RolloutCluster, self).list(resource, namespace, label_selector)


@pytest.mark.parametrize("ds, rolled, why", [
    (daemonset("mofed-ds", 2, 1, 2, 2, 2, "repo/doca-driver:25.04-0.6.1.0-2-rhcos4.20-amd64"), False, "1 of 2"),   # not observed
    (daemonset("mofed-ds", 2, 2, 2, 1, 2, "repo/doca-driver:25.04-0.6.1.0-2-rhcos4.20-amd64"), False, "1 of 2 pods updated"),
    (daemonset("mofed-ds", 2, 2, 2, 2, 1, "repo/doca-driver:25.04-0.6.1.0-2-rhcos4.20-amd64"), False, "1 available"),
    (daemonset("mofed-ds", 1, 1, 2, 2, 2, "repo/doca-driver:24.10-0.7.0.0-0-rhcos4.20-amd64"), False, "no DaemonSet runs"),
    (daemonset("mofed-ds", 2, 2, 2, 2, 2, "repo/doca-driver:25.04-0.6.1.0-2-rhcos4.20-amd64"), True, None),
])
def test_operands_rolled_out_as_kubectl_rollout_status_judges_with_the_applied_images(ds, rolled, why):
    pods = OperandPods(RolloutCluster([ds]), {"namespace": "nvidia-network-operator",
                                              "images": ["repo/doca-driver:25.04-0.6.1.0-2-"]}, grace=10, clock=lambda: 0.0)
    assert pods.rolled_out() is rolled
    assert (pods.rollout is None) if why is None else (why in pods.rollout or why == "1 of 2")


def test_the_nic_cluster_policy_wait_names_the_images_its_policy_applies():
    policy = {"kind": "NicClusterPolicy", "spec": {
        "ofedDriver": {"repository": "nvcr.io/nvidia/mellanox", "image": "doca-driver", "version": "25.04-0.6.1.0-2"},
        "rdmaSharedDevicePlugin": {"repository": "nvcr.io/nvidia/mellanox", "image": "k8s-rdma-shared-dev-plugin",
                                   "version": "sha256:" + "a" * 64}}}
    assert render_waits.nic_cluster_policy_wait("ns", policy)["operand_pods"]["images"] == [
        "nvcr.io/nvidia/mellanox/doca-driver:25.04-0.6.1.0-2-", "nvcr.io/nvidia/mellanox/k8s-rdma-shared-dev-plugin@sha256:" + "a" * 64]


def test_the_rollout_is_checked_as_soon_as_the_resource_reads_ready_then_less_and_less_often():
    """A wait whose custom resource turns ready just after the first pod check must not sit out the 5 s listing
    interval (it did, on every NicClusterPolicy and ClusterPolicy wait of a converge)."""
    now = [100.0]
    cluster = RolloutCluster([daemonset("mofed-ds", 2, 2, 2, 1, 2, "repo/doca-driver:25.04")])
    pods = OperandPods(cluster, {"namespace": "nvidia-network-operator"}, grace=10, clock=lambda: now[0])
    assert pods.check() is False and cluster.lists == 1          # the resource is not ready yet: pods listed once
    now[0] = 100.3
    assert pods.rolled_out() is False and cluster.lists == 2      # it turned ready: the pods (and DaemonSets) at once
    assert pods.next_check() == pytest.approx(100.55)
    checks = []
    for step in range(40):
        now[0] = 100.3 + step * 0.05
        before = cluster.lists
        pods.rolled_out()
        if cluster.lists > before:
            checks.append(round(now[0] - 100.3, 2))
    assert checks == [0.25, 0.75, 1.75]                            # 0.25 s, doubling up to the interval
    cluster.sets = [daemonset("mofed-ds", 2, 2, 2, 2, 2, "repo/doca-driver:25.04")]
    now[0] = 110.0
    assert pods.rolled_out() is True
