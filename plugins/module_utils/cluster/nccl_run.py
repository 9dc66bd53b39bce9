# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""All-reduce across nodes with nccl-tests (all_reduce_perf over MPI), as Kubernetes pods, judged against the rails.

The pods follow MPI Operator's layout for an MPIJob (kubeflow/mpi-operator): one worker pod per node holding the
node's GPUs and every rail (resource and network), running the image's SSH daemon, and one launcher pod that runs
``mpirun -H <worker IP>:<GPUs>,... all_reduce_perf_mpi`` once every worker runs. The launcher's log is parsed with
module_utils/verify/nccl_tests_output.py and judged against the sum of one node's rail rates. Every pod is deleted when
run() returns, also when anything fails. Pods are created, followed, read and deleted through the collection's one pod
runner (cluster/pods.py PodRun); the nodes are chosen as the bandwidth test chooses them (bandwidth_plan.nodes_to_test).

The helpers above ``NcclAllReduceTest`` are pure and unit tested without a cluster.
"""


import time

from ansible_collections.gpudirect.openshift.plugins.module_utils.verify import bandwidth_plan, pod_states
from ansible_collections.gpudirect.openshift.plugins.module_utils.verify import nccl_tests_output
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.api_errors import ClusterError
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.pods import PodRun
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.waiter import WaitTimeout, wait_for
from ansible_collections.gpudirect.openshift.plugins.module_utils.names import MANAGED_BY_LABEL, MANAGED_BY_VALUE
from ansible_collections.gpudirect.openshift.plugins.module_utils.verify.nccl_tests_output import nccl_environment

COMPONENT = "gpudirect-nccl"
ROLE_LABEL = "gpudirect.openshift/nccl-role"
RUN_LABEL = "gpudirect.openshift/nccl-run"
CONTAINER = "nccl"
NEAR = ("PIX", "PXB")


class SettingsError(ValueError):
    """Options that cannot work together; the module reports the message as is."""


def rail_hcas(affinity, node, rail_devices=None):
    """RDMA devices of a node's rails in GPU order: for each GPU the NIC nearest to it (PIX, else PXB).

    ``rail_devices`` limits the choice to the configured rails' devices. GPUs with no near NIC are left out.
    """
    best = {}
    for link in affinity or []:
        if link.get("node") != node or link.get("relation") not in NEAR or not link.get("rdma_device"):
            continue
        if rail_devices is not None and link["rdma_device"] not in rail_devices:
            continue
        gpu = link.get("gpu")
        rank = NEAR.index(link["relation"])
        if gpu not in best or rank < best[gpu][0]:
            best[gpu] = (rank, link["rdma_device"])
    ordered = []
    for gpu in sorted(best, key=lambda g: (0, int(g)) if str(g).isdigit() else (1, str(g))):
        device = best[gpu][1]
        if device not in ordered:
            ordered.append(device)
    return ordered


def settings_from(image, namespace=None, image_pull_policy=None, nodes=None, node_selector=None,
                  gpu_resource="nvidia.com/gpu", gpus_per_node=None, rails=None, rail_rates_gbps=None, fabric=None,
                  hcas=None, binary=None, min_bytes=None, max_bytes=None, worker_command=None, threshold=None,
                  start_timeout=None, run_timeout=None, cleanup_timeout=None, service_account=None,
                  pending_grace_period=None):
    """Validated settings from the values of nccl_allreduce's options of the same names; every problem in one
    SettingsError."""
    problems = []
    rails = rails or []
    for index, rail in enumerate(rails):
        if not rail.get("network") or not rail.get("resource"):
            problems.append("rails[%d]: network and resource are both required" % index)
    nodes = list(nodes or [])
    if nodes and len(nodes) < 2:
        problems.append("nodes: give at least two nodes (an all-reduce on one node never crosses the rails)")
    gpus = int(gpus_per_node or 0)
    if gpus < 1:
        problems.append("gpus_per_node: must be at least 1")
    threshold = float(threshold or 0)
    if not 0 <= threshold <= 1:
        problems.append("threshold: must be in [0, 1] (0: the calibrated low end of published runs)")
    rates = rail_rates_gbps or []
    if rails and rates and len(rates) != len(rails):
        problems.append("rail_rates_gbps: %d rates for %d rails" % (len(rates), len(rails)))
    if problems:
        raise SettingsError("; ".join(problems))
    return {
        "namespace": namespace or "default",
        "image": image,
        "image_pull_policy": image_pull_policy or "IfNotPresent",
        "nodes": nodes,
        "node_selector": node_selector or {},
        "gpu_resource": gpu_resource,
        "gpus_per_node": gpus,
        "rails": rails,
        "rail_rates_gbps": [float(rate) for rate in rates],
        "fabric": fabric or "infiniband",
        "hcas": list(hcas or []),
        "binary": binary or "all_reduce_perf_mpi",
        "min_bytes": str(min_bytes or "8"),
        "max_bytes": str(max_bytes or "8G"),
        "worker_command": list(worker_command or ["/usr/sbin/sshd", "-D", "-e"]),
        "threshold": threshold,
        "start_timeout": float(start_timeout or 300),
        "run_timeout": float(run_timeout or 600),
        "cleanup_timeout": float(cleanup_timeout or 120),
        "service_account": service_account or "",
        "pending_grace_period": float(pending_grace_period or 60),
    }


def _resources(settings):
    resources = {rail["resource"]: "1" for rail in settings["rails"]}
    if settings["gpu_resource"]:
        resources[settings["gpu_resource"]] = str(settings["gpus_per_node"])
    return resources


def _pod(settings, name, run_id, role, node_selector, command, env, resources):
    spec = {
        "restartPolicy": "Never",
        "activeDeadlineSeconds": int(settings["start_timeout"] + settings["run_timeout"] + 60),
        "terminationGracePeriodSeconds": 5,
        "automountServiceAccountToken": False,
        "containers": [{
            "name": CONTAINER,
            "image": settings["image"],
            "imagePullPolicy": settings["image_pull_policy"],
            "command": command,
            "env": [{"name": key, "value": value} for key, value in sorted(env.items())],
            # IPC_LOCK: NCCL pins its buffers for RDMA
            "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}},
            "resources": {"requests": dict(resources), "limits": dict(resources)},
        }],
    }
    if node_selector:
        spec["nodeSelector"] = node_selector
    if settings["service_account"]:
        spec["serviceAccountName"] = settings["service_account"]
    metadata = {"name": name, "namespace": settings["namespace"],
                "labels": {bandwidth_plan.COMPONENT_LABEL: COMPONENT, MANAGED_BY_LABEL: MANAGED_BY_VALUE,
                           RUN_LABEL: run_id, ROLE_LABEL: role}}
    if role == "worker" and settings["rails"]:
        metadata["annotations"] = {
            bandwidth_plan.NETWORKS_ANNOTATION: ",".join(rail["network"] for rail in settings["rails"])}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def worker_manifest(settings, run_id, index, node, hostname=None):
    """The worker of one node: the node's GPUs, one of every rail's resource, every rail's network."""
    name = "nccl-%s-worker-%d" % (run_id, index)
    return _pod(settings, name, run_id, "worker", {"kubernetes.io/hostname": hostname or node},
                settings["worker_command"], {}, _resources(settings))


def launcher_command(settings, worker_ips):
    """mpirun over the workers (one slot per GPU), passing the NCCL variables to every rank."""
    ranks = settings["gpus_per_node"] * len(worker_ips)
    hosts = ",".join("%s:%d" % (ip, settings["gpus_per_node"]) for ip in worker_ips)
    env = nccl_environment(settings["hcas"], settings["fabric"])
    command = ["mpirun", "--allow-run-as-root", "-np", str(ranks), "-H", hosts, "--bind-to", "none"]
    for key in sorted(env):
        command += ["-x", key]
    return command + [settings["binary"], "-b", settings["min_bytes"], "-e", settings["max_bytes"], "-f", "2", "-g",
                      "1"]


def launcher_manifest(settings, run_id, worker_ips):
    name = "nccl-%s-launcher" % run_id
    return _pod(settings, name, run_id, "launcher", {}, launcher_command(settings, worker_ips),
                nccl_environment(settings["hcas"], settings["fabric"]), {})


def judge(settings, log, hosts_to_nodes, suspects=None):
    """The result of one run: parsed output, verdict, and the rails that facts point at when it is low."""
    result = {"log_tail": "\n".join((log or "").splitlines()[-20:]), "suspects": list(suspects or [])}
    try:
        parsed = nccl_tests_output.parse_nccl_tests_output(log or "", collective="all_reduce")
    except nccl_tests_output.NcclTestsParseError as exc:
        result.update(passed=False, code="unparsable_output", reason="all_reduce_perf output: %s" % exc)
        return result
    rates = settings["rail_rates_gbps"] or [0.0]
    verdict = nccl_tests_output.evaluate_allreduce(parsed, rates if sum(rates) else [1.0], settings["threshold"])
    verdict["nodes"] = sorted({hosts_to_nodes.get(host, host) for host in verdict["hosts"]})
    result.update(verdict)
    result["rows"] = [{"size_bytes": row["size_bytes"], "busbw_gbs": row["out_of_place"]["busbw_gbs"],
                       "algbw_gbs": row["out_of_place"]["algbw_gbs"]} for row in parsed["rows"]]
    named = "; ".join("rail %s on %s: NIC %s (GPU %s) %s" % (s["rail"], s["node"], s["nic"], s["gpu"], s["problem"])
                      for s in suspects or [])
    down = [s for s in suspects or [] if s["problem"].startswith("link ")]
    if verdict["passed"] and down:
        # NCCL uses only active ports (NVIDIA/nccl src/transport/net_ib/init.cc) and every rank runs at the pace of
        # the weakest node (src/init.cc): one rail of n down costs 1/n, which a threshold <= (n-1)/n lets through.
        result.update(passed=False, code="rail_down",
                      reason="%s, but the job ran without the rails whose link is down: %s"
                      % (verdict["reason"], named))
    elif not verdict["passed"] and suspects:
        result["reason"] += "; from the facts: " + named
    return result


def suspect_rails(nic_ports, affinity, rails_devices, nodes):
    """Rails whose port on a tested node is not active or slower than the same rail elsewhere: (node, NIC, GPU)."""
    gpu_of = {}
    for link in affinity or []:
        if link.get("relation") in NEAR:
            gpu_of.setdefault((link.get("node"), link.get("rdma_device")), link.get("gpu"))
    speeds = {}
    for port in nic_ports or []:
        if port.get("node") in nodes and port.get("rdma_device") in rails_devices:
            speeds.setdefault(port["rdma_device"], []).append(port.get("rate_gbps") or 0)
    suspects = []
    for port in nic_ports or []:
        device = port.get("rdma_device")
        if port.get("node") not in nodes or device not in rails_devices or port.get("is_vf"):
            continue
        problem = None
        if port.get("state") not in (None, "ACTIVE"):
            problem = "link %s" % port.get("state")
        elif port.get("rate_gbps") and port["rate_gbps"] < max(speeds.get(device) or [0]):
            problem = "at %s Gb/s, the others at %s" % (port["rate_gbps"], max(speeds[device]))
        if problem:
            suspects.append({"rail": rails_devices.index(device), "node": port["node"],
                             "nic": port.get("netdev") or port.get("pci_address"), "rdma_device": device,
                             "gpu": gpu_of.get((port["node"], device)), "problem": problem})
    return suspects


class NcclAllReduceTest:
    """Runs the workers and the launcher against a cluster (a ClusterClient); every pod is gone when run() returns."""

    def __init__(self, cluster, settings, run_id=None, clock=time.monotonic):
        self.cluster = cluster
        self.settings = settings
        self.run_id = run_id or pod_states.new_run_id()
        self.clock = clock
        self.pods = PodRun(cluster, settings["namespace"], RUN_LABEL, self.run_id,
                           grace=settings["pending_grace_period"], clock=clock)

    @property
    def pods_resource(self):
        return self.pods.resource

    def nodes(self):
        """[(name, hostname label)] of the nodes to run on, in name order."""
        items, _rv = self.cluster.list(self.cluster.require("v1", "Node"))
        try:
            return bandwidth_plan.nodes_to_test(items, self.settings)
        except bandwidth_plan.SettingsError as exc:
            raise ClusterError(str(exc))

    def run(self, check_mode=False, nic_ports=None, affinity=None):
        nodes = self.nodes()
        if check_mode:
            return {"changed": False, "planned_nodes": [n for n, _h in nodes], "passed": None}
        selector = self.pods.selector()
        hosts_to_nodes = {}
        try:
            for index, (node, hostname) in enumerate(nodes):
                manifest = worker_manifest(self.settings, self.run_id, index, node, hostname)
                hosts_to_nodes[manifest["metadata"]["name"]] = node
                self.pods.create_or_fail(manifest)
            workers = self._wait_workers(selector, len(nodes))
            if isinstance(workers, dict):
                return workers
            self.pods.create_or_fail(launcher_manifest(self.settings, self.run_id, workers))
            outcome = self._wait_launcher(selector)
            log = self.pods.log("nccl-%s-launcher" % self.run_id)
            devices = self.settings["hcas"]
            suspects = suspect_rails(nic_ports, affinity, devices, [n for n, _h in nodes]) if devices else []
            result = judge(self.settings, log, hosts_to_nodes, suspects)
            if outcome == "timeout":
                result.update(passed=False, code="timeout",
                              reason="all_reduce_perf did not finish in %ss" % self.settings["run_timeout"])
            result["changed"] = True
            return result
        finally:
            self.pods.delete_all(selector, wait_timeout=self.settings["cleanup_timeout"])

    def _wait_workers(self, selector, count):
        state = {"since": {}}
        grace = self.settings["pending_grace_period"]

        def predicate(items):
            now = self.clock()
            workers = [p for p in items or [] if (p["metadata"].get("labels") or {}).get(ROLE_LABEL) == "worker"]
            for pod in workers:
                # Unschedulable or image pull trouble can clear by itself (device plugin registering): a failure
                # only once it lasts the grace period
                if pod_states.pending_problem(pod):
                    state["since"].setdefault(pod["metadata"]["name"], now)
                else:
                    state["since"].pop(pod["metadata"]["name"], None)
            failed = [p for p in workers if pod_states.pod_phase(p) in ("Failed", "Succeeded")
                      or now - state["since"].get(p["metadata"]["name"], now) >= grace > 0]
            state["failed"] = failed
            running = [p for p in workers if pod_states.pod_phase(p) == "Running"
                       and (p.get("status") or {}).get("podIP")]
            state["ips"] = [p["status"]["podIP"] for p in sorted(running, key=lambda p: p["metadata"]["name"])]
            return bool(failed) or len(running) == count

        def recheck_at():
            return min(state["since"].values()) + grace if state["since"] else None

        try:
            wait_for(self.cluster, self.pods_resource, predicate, namespace=self.settings["namespace"],
                     label_selector=selector, timeout=self.settings["start_timeout"], recheck_at=recheck_at,
                     clock=self.clock)
        except WaitTimeout:
            return {"changed": True, "passed": False, "code": "workers_not_running",
                    "reason": "the NCCL worker pods were not all running after %ss" % self.settings["start_timeout"]}
        if state["failed"]:
            pod = state["failed"][0]
            return {"changed": True, "passed": False, "code": "worker_failed",
                    "reason": "NCCL worker %s on %s: %s" % (pod["metadata"]["name"],
                                                            (pod.get("spec") or {}).get("nodeName"),
                                                            pod_states.pod_state_text(pod))}
        return state["ips"]

    def _wait_launcher(self, selector):
        def predicate(items):
            return any((p["metadata"].get("labels") or {}).get(ROLE_LABEL) == "launcher"
                       and pod_states.pod_phase(p) in ("Failed", "Succeeded") for p in items or [])

        try:
            wait_for(self.cluster, self.pods_resource, predicate, namespace=self.settings["namespace"],
                     label_selector=selector, timeout=self.settings["start_timeout"] + self.settings["run_timeout"],
                     clock=self.clock)
        except WaitTimeout:
            return "timeout"
        return "done"
