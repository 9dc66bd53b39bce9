"""playbooks/verify.yml (role gpudirect.openshift.verify, module rdma_bandwidth) against simulated clusters.

Each inventory host is one cluster (as in site.yml), so one ansible-playbook run verifies several simulated
clusters in parallel: one run for the passing cases (the six example configurations on the mixed-lab profile and a
three-node ring with a message-size sweep), one run for the failures (each injected perftest fault, and a missing
RDMA resource). The parametrized tests then check each host's results, reports and cluster.

Each simulated cluster gets what the configured method leaves on a real cluster, written straight into the
simulator's store: GPU and RDMA allocatable on the GPU workers and the NetworkAttachmentDefinition that the network CR
of the rendered plan produces. site.yml does not apply the SR-IOV policies and network CRs yet; once it does, the
set-up can run it instead (about 10 s per configuration here, measured for the operator part). The simulator runs the
ib_write_bw pods (simulator/controllers/perftest_pods.py); faults come from operator_faults["perftest"].
"""

import json
import os
import re
import subprocess
import sys
import time

import pytest
import yaml
from ansible_collections.gpudirect.openshift.plugins.module_utils.render.plan import render_all
from ansible_collections.gpudirect.openshift.tests.configurations import EXAMPLE_FILES, EXAMPLES
from simulator import SimulatedCluster
from simulator.cluster import default_admin_manifests
from simulator.controllers.facts_pods import profile_facts
from simulator.controllers.networks import render_nad

# One worker runs this module: its two module fixtures (a passing and a failing fleet, each converged) would be set up again on each xdist worker.
pytestmark = pytest.mark.xdist_group("verify")


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PLAYBOOK = os.path.join(ROOT, "playbooks", "verify.yml")
COMPONENT_SELECTOR = "app.kubernetes.io/component=gpudirect-verify"
GPU_NODES = ("nvd-srv-32.nvidia.eng.rdu2.dc.redhat.com", "nvd-srv-33.nvidia.eng.rdu2.dc.redhat.com")
NETWORK_KINDS = {"MacvlanNetwork": ("mellanox.com", "macvlannetworks"), "IPoIBNetwork": ("mellanox.com", "ipoibnetworks"),
                 "HostDeviceNetwork": ("mellanox.com", "hostdevicenetworks"),
                 "SriovNetwork": ("sriovnetwork.openshift.io", "sriovnetworks"),
                 "SriovIBNetwork": ("sriovnetwork.openshift.io", "sriovibnetworks")}
# What the device plugins advertise per node in the mixed lab: the shared plugin rdmaHcaMax, one PF for host
# device, numVfs for SR-IOV.
ALLOCATABLE = {"shared_device": 63, "host_device": 1, "sriov_legacy": 8}
FAST = {"perftest_start_seconds": 0.02, "perftest_run_seconds": 0.05}
RING_PROFILE = "synthetic:nodes=3,gpus=2,nics=2,link_layer=Ethernet"
COMMON = {"verify_image": "registry.example/perftest-cuda:25.01", "verify_duration": 2, "verify_start_timeout": 30,
          "verify_pending_grace_period": 1, "verify_cleanup_timeout": 30}


def example_vars(name):
    with open(os.path.join(EXAMPLES, name)) as handle:
        return yaml.safe_load(handle)


def nic_ports(sim):
    """The port facts the hardware_facts role reports (the collector over each profile node's sysfs tree, flattened by
    inventory.nic_ports: devices, rates, states, PCIe links and each GPU's path to the port)."""
    return profile_facts(sim.profile.nodes)[0]


def prepare(sim, variables, nodes=GPU_NODES, resource_count=None):
    """Give the GPU workers their GPU and RDMA allocatable and create the configuration's NAD; returns the plan summary."""
    plan = render_all(variables)
    assert not plan["errors"], plan["errors"]
    summary = plan["summary"]
    count = ALLOCATABLE[summary["method"]] if resource_count is None else resource_count
    for name in nodes:
        def edit(node):
            node["metadata"].setdefault("labels", {})["nvidia.com/gpu.present"] = "true"
            for key in ("capacity", "allocatable"):
                node["status"][key]["nvidia.com/gpu"] = "2"
                for resource in summary["pod_resources"]:
                    node["status"][key][resource] = str(count)
        sim.store.mutate(sim.type("v1", "Node"), None, name, edit)
    for entry in plan["manifests"]:
        manifest = entry["manifest"]
        if manifest["kind"] in NETWORK_KINDS:
            nad, error = render_nad(NETWORK_KINDS[manifest["kind"]], manifest)
            assert error is None, error
            sim.store.create(sim.type("k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition"), nad)
    return summary


def verify_account(namespace):
    """What deploy/rbac/workloads.yml asks the administrator to repeat for a network namespace other than default."""
    labels = {"app.kubernetes.io/part-of": "gpudirect.openshift"}
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "gpudirect-verify", "namespace": namespace, "labels": labels},
         "automountServiceAccountToken": False},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
         "metadata": {"name": "gpudirect-verify-scc", "namespace": namespace, "labels": labels},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "gpudirect-openshift-scc-verify"},
         "subjects": [{"kind": "ServiceAccount", "name": "gpudirect-verify", "namespace": namespace}]},
    ]


class PodRecorder:
    """Every verification pod the store saw created (they are gone by the time the playbook returns), and the order
    in which the store added and deleted them (events: (ADDED or DELETED, pod name))."""

    def __init__(self, sim):
        self.pods = []
        self.events = []
        sim.store.subscribe(self)

    def __call__(self, etype, rtype, obj):
        if rtype.plural == "pods" and "gpudirect-verify" in str(obj["metadata"].get("labels") or {}):
            if etype == "ADDED":
                self.pods.append(obj)
            if etype in ("ADDED", "DELETED"):
                self.events.append((etype, obj["metadata"]["name"]))


class Fleet:
    """Simulated clusters, one inventory host each, verified by one ansible-playbook run."""

    def __init__(self, crd_dir, tmp_path):
        self.crd_dir = crd_dir
        self.tmp = tmp_path
        self.hosts = {}
        self.sims = {}
        self.summaries = {}
        self.recorders = {}
        self.output = ""
        self.returncode = None
        self.took = 0.0

    def add(self, host, variables, profile="mixed-lab", nodes=GPU_NODES, resource_count=None, fault=None, admin_objects=(),
            facts_from_cluster=False, **extra):
        """admin_objects: what the cluster administrator created besides deploy/rbac/workloads.yml. facts_from_cluster:
        the host gets neither NIC facts nor verify_nic_ports, as after hack/site.sh (NIC selection auto): verify.yml
        reads them itself."""
        faults = {"operator_faults": {"perftest": fault}} if fault else None
        manifests = default_admin_manifests()
        if admin_objects:
            path = self.tmp / ("%s-admin.yml" % host)
            path.write_text(yaml.safe_dump_all(list(admin_objects)))
            manifests.append(str(path))
        sim = SimulatedCluster(profile=profile, crd_dir=self.crd_dir, config=dict(FAST), faults=faults,
                               admin_manifests=manifests).start()
        self.sims[host] = sim
        rendered = dict(variables, gpudirect_rdma_nic_facts=nic_ports(sim)) if facts_from_cluster else variables
        self.summaries[host] = prepare(sim, rendered, nodes=nodes, resource_count=resource_count)
        self.recorders[host] = PodRecorder(sim)
        hostvars = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                    "gpudirect_kubeconfig": sim.kubeconfig, "verify_artifacts_dir": str(self.tmp / host)}
        if not facts_from_cluster:
            hostvars["verify_nic_ports"] = nic_ports(sim)
        hostvars.update(COMMON)
        hostvars.update(variables)
        hostvars.update(extra)
        self.hosts[host] = hostvars

    def run(self, timeout=300):
        inventory = self.tmp / "inventory.yml"
        inventory.write_text(yaml.safe_dump({"all": {"hosts": self.hosts}}))
        env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_FORKS=str(len(self.hosts)))
        for name in ("K8S_AUTH_KUBECONFIG", "KUBECONFIG"):
            env.pop(name, None)
        started = time.monotonic()
        proc = subprocess.run(["ansible-playbook", "-i", str(inventory), PLAYBOOK], env=env, capture_output=True, text=True,
                              check=False, timeout=timeout, cwd=ROOT)
        self.took = time.monotonic() - started
        self.output = proc.stdout + proc.stderr
        self.returncode = proc.returncode

    def results(self, host):
        path = self.tmp / host / "results.json"
        assert path.exists(), "no results.json for %s:\n%s" % (host, self.output)
        return json.loads(path.read_text())

    def pods_left(self, host):
        sim = self.sims[host]
        return sim.store.list(sim.type("v1", "Pod"), None, label_selector=COMPONENT_SELECTOR)[0]

    def stop(self):
        errors = []
        for sim in self.sims.values():
            sim.stop()
            errors.extend(sim.errors)
        assert not errors, errors


# The shipped profiles whose hack/site.sh variables (playbooks/vars/simulator/<profile>.yml) select the NICs from
# the facts and have one rail, with their GPU workers.
AUTO_PROFILES = {"roce-lab": ("worker-0", "worker-1"), "infiniband-lab": ("gpu-ib-0", "gpu-ib-1")}


def site_variables(profile):
    with open(os.path.join(ROOT, "playbooks", "vars", "simulator", profile + ".yml")) as handle:
        return yaml.safe_load(handle)


def host_name(example):
    return "config-%s" % example.split("-")[0]


VERIFY_TRANSIENT = [
    {"verb": "list", "plural": "pods", "code": 503, "count": 1},
    {"verb": "get", "plural": "pods", "subresource": "log", "code": 500, "count": 1},
    {"verb": "deletecollection", "plural": "pods", "reset": True, "count": 1},
]


@pytest.fixture(scope="module")
def passing_fleet(crd_dir, tmp_path_factory):
    fleet = Fleet(crd_dir, tmp_path_factory.mktemp("verify-pass"))
    try:
        for example in EXAMPLE_FILES:
            extra = {}
            if example.startswith("4-"):
                extra = {"verify_nic_ports": [], "verify_link_rate_gbps": 400}  # the link rate given instead of facts
            fleet.add(host_name(example), example_vars(example), **extra)
        ring = {"gpudirect_rdma_method": "shared_device", "gpudirect_rdma_fabric": "roce",
                "gpudirect_rdma_nic_interfaces": ["enp26s0np0"], "gpudirect_rdma_ipam_range": "192.168.20.0/24"}
        # Networks in a namespace of their own (issue 13 point 4): the pods must run there (Multus isolation).
        fleet.add("networks-in-ml", dict(example_vars("1-shared-device-roce.yml"), gpudirect_rdma_network_namespaces=["ml"]),
                  admin_objects=verify_account("ml"), verify_namespace="ml")
        fleet.add("ring", ring, profile=RING_PROFILE, nodes=("gpu-worker-0000", "gpu-worker-0001", "gpu-worker-0002"),
                  verify_sweep=True, verify_iterations=1000)
        # Issue 31 point 1: the variables hack/site.sh uses on its profiles (NIC selection auto), without the facts
        # site.yml read in its own play: verify.yml reads them from the cluster (the facts cache, else pods).
        for profile in AUTO_PROFILES:
            fleet.add("auto-" + profile, site_variables(profile), profile=profile, nodes=AUTO_PROFILES[profile],
                      facts_from_cluster=True)
        # The fault matrix on verify.yml (issue 18): transient API errors on the pods it runs.
        fleet.add("api-faults", example_vars("1-shared-device-roce.yml"))
        for rule in VERIFY_TRANSIENT:
            fleet.sims["api-faults"].faults.add(**rule)
        fleet.run()
        yield fleet
    finally:
        fleet.stop()


def test_verify_absorbs_transient_api_faults(passing_fleet):
    """A 503 on a pod list, a 500 on a log read and a reset on a pod delete are retried: the pair passes, nothing is left."""
    sim = passing_fleet.sims["api-faults"]
    assert [rule.fired for rule in sim.faults.rules] == [1] * len(VERIFY_TRANSIENT), [r.to_dict() for r in sim.faults.rules]
    results = passing_fleet.results("api-faults")
    assert results["passed"] is True and results["summary"]["passed"] == 1, results["summary"]
    assert passing_fleet.pods_left("api-faults") == []


def test_passing_run_succeeds_for_every_cluster(passing_fleet):
    assert passing_fleet.returncode == 0, passing_fleet.output
    assert re.search(r"config-1\s*:\s*ok=\d+\s+changed=\d+\s+unreachable=0\s+failed=0", passing_fleet.output), passing_fleet.output


@pytest.mark.parametrize("example", EXAMPLE_FILES)
def test_verify_passes_for_each_configuration(passing_fleet, example):
    host = host_name(example)
    summary = passing_fleet.summaries[host]
    results = passing_fleet.results(host)
    artifacts = passing_fleet.tmp / host

    # One pair per rail: the both-fabrics example has a RoCE and an InfiniBand rail (issue 13).
    groups = summary["nic_selection"]["groups"]
    assert results["passed"] is True and results["summary"]["pairs"] == len(groups) == results["summary"]["passed"]
    for pair in results["pairs"]:
        fabric = (pair.get("rail") or {}).get("fabric") or summary["fabric"]
        assert (pair["server_node"], pair["client_node"]) == GPU_NODES
        assert pair["verdict"] == "passed" and pair["diagnosis"]["code"] == "ok"
        # mixed-lab: A40 (PCIe Gen4 x16, 230 Gb/s of payload) on 400 Gb/s ports: the bound is the GPU's PCIe link,
        # judged at the calibrated low end; the pod's GPU (61:00, NUMA 0) meets the InfiniBand NIC (0d:00, NUMA 0)
        # through the CPU (NODE) and the RoCE NIC (a0:00, NUMA 1) across the sockets (SYS).
        expectation = pair["expected"]
        assert pair["link_rate_gbps"] == 400.0 and pair["bound_gbps"] == expectation["bound_gbps"] == 230.46
        assert expectation["limited_by"].startswith("GPU PCIe Gen4 x16")
        if example.startswith("4-"):  # no port facts: the GPU's link from its model (perftest names an A40), no path
            assert pair["path"] == {"server": None, "client": None} and pair["pcie"]["client"] == {"gpu": None, "nic": None}
        else:
            assert pair["pcie"]["client"] == {"gpu": "PCIe Gen4 x16 (16 GT/s)", "nic": "PCIe Gen5 x16 (32 GT/s)"}, pair["pcie"]
            path = "NODE" if fabric == "infiniband" else "SYS"
            assert pair["path"] == {"server": path, "client": path}
        assert pair["threshold_source"] == "calibrated" and pair["threshold_gbps"] == pytest.approx(expectation["low_gbps"], abs=0.02)
        assert expectation["low_gbps"] <= pair["bandwidth_gbps"] <= expectation["high_gbps"]
        # a path through the CPU adds the published run measured on such a path
        assert {s["key"] for s in expectation["sources"]} >= ({"redhat-chapter"} if example.startswith("4-") else {"redhat-chapter", "perftest-241"})
        assert pair["use_cuda"] is True and pair["use_dmabuf"] is (summary["gpu_rdma_mode"] == "dmabuf")
        if summary["method"] == "sriov_legacy":
            assert pair["client_device"] not in ("mlx5_0", "mlx5_1")  # the VF's own RDMA device, found in the pod
        else:
            expected = "mlx5_1" if fabric == "roce" else "mlx5_0"
            assert pair["client_device"] == pair["server_device"] == expected

    # The pods asked for what the chapter's workload pods ask for, one on each node, each rail's own resource.
    pods = passing_fleet.recorders[host].pods
    assert len(pods) == 2 * len(groups)
    networks = {g["network_name"]: "%s/%s" % (summary["resources"][0].split("/")[0], g["resource_name"]) for g in groups}
    for pod in pods:
        container = pod["spec"]["containers"][0]
        network = pod["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"]
        wanted = dict((name, "1") for name in summary["pod_resources"]) if len(groups) == 1 else {networks[network.split("/")[-1]]: "1"}
        wanted["nvidia.com/gpu"] = "1"
        assert container["resources"]["requests"] == wanted == container["resources"]["limits"]
        # Hardened (security issue, point 8): every capability dropped but IPC_LOCK, no escalation, RuntimeDefault
        # seccomp, no service account token.
        # SCC admission adds a UID from the namespace's range (and runAsNonRoot) to what the module sent.
        sent = dict((k, v) for k, v in container["securityContext"].items() if k not in ("runAsUser", "runAsNonRoot"))
        assert sent == {"capabilities": {"drop": ["ALL"], "add": ["IPC_LOCK"]}, "allowPrivilegeEscalation": False}
        assert container["securityContext"]["runAsUser"] >= 1000000000
        # ... and an fsGroup from the namespace's block (the SCC's fsGroup MustRunAs), never group 0.
        pod_context = dict(pod["spec"]["securityContext"])
        assert pod_context.pop("fsGroup") >= 1000000000
        assert pod_context == {"seccompProfile": {"type": "RuntimeDefault"}}
        # Admitted by the SCC deploy/rbac/workloads.yml provides for gpudirect-verify, not by a broader one.
        assert pod["spec"]["serviceAccountName"] == "gpudirect-verify"
        assert pod["metadata"]["annotations"]["openshift.io/scc"] == "gpudirect-verify"
        assert pod["spec"]["automountServiceAccountToken"] is False
        assert "privileged" not in json.dumps(pod["spec"])
        # In the collection's own namespace (issue 34), attaching the network of "default" by <namespace>/<name>.
        assert pod["metadata"]["namespace"] == "gpudirect-verify"
        assert network in ["%s/%s" % (n["namespace"], n["annotation"]) for n in summary["networks"]]
        # perftest's arguments are the script's positional parameters, one word each (point 10).
        assert container["command"][:2] == ["/bin/bash", "-c"] and '"$@"' in container["command"][2]
        args = container["command"][4:]
        assert "-R" in args and "--use_cuda=0" in args and ("--use_cuda_dmabuf" in args) == (summary["gpu_rdma_mode"] == "dmabuf")
    assert {p["spec"]["nodeSelector"]["kubernetes.io/hostname"] for p in pods} == set(GPU_NODES)

    # Artifacts: JSON, Markdown, HTML with an inline SVG chart, the logs; nothing left on the cluster.
    assert (artifacts / "report.md").read_text().count("| passed |") == len(groups)
    html = (artifacts / "report.html").read_text()
    assert "<svg" in html and "PASSED" in html and "<script" not in html
    assert "RDMA_Write BW Test" in (artifacts / "pair-0-client.log").read_text()
    assert passing_fleet.pods_left(host) == []


@pytest.mark.parametrize("profile", sorted(AUTO_PROFILES))
def test_verify_reads_the_nic_facts_itself_with_nic_selection_auto(passing_fleet, profile):
    """Issue 31 point 1: `hack/site.sh --then playbooks/verify.yml` failed with "method must be ... got None" on the
    default profile: verify.yml rendered the plan without the NIC facts."""
    host = "auto-" + profile
    assert "got None" not in passing_fleet.output
    results = passing_fleet.results(host)
    assert results["passed"] is True and results["summary"]["pairs"] == 1 == results["summary"]["passed"], results["summary"]
    assert results["configuration"] == passing_fleet.summaries[host]["configuration"]
    pair = results["pairs"][0]
    assert (pair["server_node"], pair["client_node"]) == AUTO_PROFILES[profile]
    assert pair["link_rate_gbps"] > 0


def test_ring_of_three_nodes_with_a_message_size_sweep(passing_fleet):
    """Three GPU nodes: three pairs around the ring (not all six ordered pairs); the sweep is charted per pair."""
    results = passing_fleet.results("ring")
    workers = ["gpu-worker-0000", "gpu-worker-0001", "gpu-worker-0002"]
    pairs = [(p["server_node"], p["client_node"]) for p in results["pairs"]]
    assert pairs == [(workers[0], workers[1]), (workers[1], workers[2]), (workers[2], workers[0])]
    assert all(p["verdict"] == "passed" for p in results["pairs"])
    assert all(len(p["sweep"]) == 23 and p["sweep"][-1]["bytes"] == 8388608 for p in results["pairs"])
    assert results["summary"]["min_bandwidth_gbps"] <= results["summary"]["avg_bandwidth_gbps"] <= results["summary"]["max_bandwidth_gbps"]
    html = (passing_fleet.tmp / "ring" / "report.html").read_text()
    assert html.count("<svg") == 2 and html.count("<polyline") == 3
    assert len(passing_fleet.recorders["ring"].pods) == 6
    assert passing_fleet.pods_left("ring") == []


def test_verify_runs_its_pods_where_the_networks_are(passing_fleet):
    results = passing_fleet.results("networks-in-ml")
    assert results["passed"] is True and results["summary"]["passed"] == 1
    pods = passing_fleet.recorders["networks-in-ml"].pods
    assert len(pods) == 2 and {p["metadata"]["namespace"] for p in pods} == {"ml"}
    network = passing_fleet.summaries["networks-in-ml"]["networks"][0]
    assert network["namespace"] == "ml"
    assert {p["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"] for p in pods} == {network["annotation"]}
    assert {p["metadata"]["annotations"]["openshift.io/scc"] for p in pods} == {"gpudirect-verify"}
    sim = passing_fleet.sims["networks-in-ml"]
    assert sim.store.list(sim.type("v1", "Pod"), "ml", label_selector=COMPONENT_SELECTOR)[0] == []


FAULTS = [
    # (operator fault, extra variables, diagnosis code, text the failure message must contain)
    ("link_down", {}, "link_down", "Unable to init the socket connection"),
    ("wrong_gid", {"verify_rdma_cm": False, "verify_gid_index": 7}, "wrong_gid", "to RTR"),
    ("no_gpu", {}, "no_gpu_memory_path", "There are no available device(s) that support CUDA"),
    ("image_pull", {}, "image_pull_error", "ImagePullBackOff"),
    ("hang", {"verify_run_timeout": 2}, "timeout", "did not finish in time"),
    ("slow", {}, "bandwidth_below_threshold", "below the expected range"),
]


@pytest.fixture(scope="module")
def failing_fleet(crd_dir, tmp_path_factory):
    fleet = Fleet(crd_dir, tmp_path_factory.mktemp("verify-fail"))
    try:
        for fault, extra, _code, _text in FAULTS:
            # SR-IOV legacy over RoCE: the chapter's own 5.10 test.
            fleet.add("fault-%s" % fault, example_vars("5-sriov-legacy-roce.yml"), fault=fault, **extra)
        fleet.add("no-rdma-resource", example_vars("1-shared-device-roce.yml"), resource_count=0)
        # Networks in ml, but the administrator created the verify account only in default.
        fleet.add("no-account-in-ml", dict(example_vars("1-shared-device-roce.yml"), gpudirect_rdma_network_namespaces=["ml"]),
                  admin_objects=verify_account("ml")[:1], verify_namespace="ml")
        # Networks in ml and verify_namespace left at gpudirect-verify: Multus would refuse the network (issue 34).
        fleet.add("ml-out-of-reach", dict(example_vars("1-shared-device-roce.yml"), gpudirect_rdma_network_namespaces=["ml"]),
                  admin_objects=verify_account("ml"))
        fleet.run()
        yield fleet
    finally:
        fleet.stop()


@pytest.mark.parametrize("fault,extra,code,text", FAULTS, ids=[f[0] for f in FAULTS])
def test_injected_fault_fails_with_its_diagnosis(failing_fleet, fault, extra, code, text):
    host = "fault-%s" % fault
    assert failing_fleet.returncode != 0
    assert re.search(r"fatal: \[%s\]" % host, failing_fleet.output), failing_fleet.output
    results = failing_fleet.results(host)
    assert results["passed"] is False
    assert results["message"].startswith("GPUDirect RDMA bandwidth test failed for 1 of 1 pair(s)")
    assert "%s:" % code in results["message"] and text in results["message"], results["message"]
    assert results["message"] in failing_fleet.output.replace("\n", " ") or code in failing_fleet.output
    pair = results["pairs"][0]
    assert pair["verdict"] == "failed" and pair["diagnosis"]["code"] == code
    assert results["summary"]["diagnoses"] == [code]
    assert failing_fleet.pods_left(host) == [], "pods left behind after %s" % fault
    assert "FAILED" in (failing_fleet.tmp / host / "report.html").read_text()


def test_missing_rdma_resource_is_diagnosed_and_cleaned_up(failing_fleet):
    results = failing_fleet.results("no-rdma-resource")
    pair = results["pairs"][0]
    assert pair["diagnosis"]["code"] == "resource_not_allocatable"
    assert "resource_not_allocatable:" in results["message"] and "rdma/rdma_shared_device_eth" in results["message"]
    assert "0/3 nodes are available: 1 Insufficient rdma/rdma_shared_device_eth, 2 node(s) didn't match" in pair["server_state"]
    assert len(failing_fleet.recorders["no-rdma-resource"].pods) == 1  # no client without a running server
    assert failing_fleet.pods_left("no-rdma-resource") == []


def test_a_missing_verify_account_in_the_network_namespace_is_named_with_its_fix(failing_fleet):
    output = failing_fleet.output.replace("\n", " ")
    assert re.search(r"fatal: \[no-account-in-ml\]", failing_fleet.output), failing_fleet.output
    assert "verify_service_account" in output and "'gpudirect-verify' does not exist in namespace ml" in output, output
    assert "deploy/rbac/workloads.yml" in output
    assert 'error looking up service account ml/gpudirect-verify: serviceaccount \\"gpudirect-verify\\" not found' in output \
        or 'error looking up service account ml/gpudirect-verify: serviceaccount "gpudirect-verify" not found' in output
    assert failing_fleet.recorders["no-account-in-ml"].pods == [] and failing_fleet.pods_left("no-account-in-ml") == []


def test_networks_out_of_reach_of_the_verify_namespace_are_refused_before_any_pod(failing_fleet):
    """Issue 34: verify's own namespace reaches only the networks of Multus' global namespaces; one in ml is named with
    the fix (verify_namespace) before any pod is created."""
    output = failing_fleet.output.replace("\n", " ")
    assert re.search(r"fatal: \[ml-out-of-reach\]", failing_fleet.output), failing_fleet.output
    assert "no network of the configuration is in namespace gpudirect-verify" in output and "they are in ml" in output, output
    assert "(verify_namespace)" in output
    assert failing_fleet.recorders["ml-out-of-reach"].pods == []
