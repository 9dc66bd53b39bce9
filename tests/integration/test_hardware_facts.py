"""Integration tests of the hardware_facts role (playbooks/facts.yml) and gather_node_hardware against the simulator.

The simulated kubelet runs the real collector over a sysfs tree built from each node's hardware profile, so these
tests check the whole path: pods created and pinned, logs read, facts flattened for the RDMA input model, reports
written, and every pod and ConfigMap deleted again, also when a pod fails.
"""

import json
import os
import subprocess
import sys

import pytest

from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster import node_facts as nf
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.facts_nodes import FactsSettings
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.client import ClusterClient
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import plan
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PLAYBOOK = os.path.join(ROOT, "playbooks", "facts.yml")
INVENTORY = os.path.join(ROOT, "playbooks", "inventory", "localhost.yml")
NAMESPACE = "gpudirect-facts"

# A configuration each lab can run, to render with nic_selection auto from the gathered ports.
CONFIGS = {
    "roce-lab": {"gpudirect_rdma_method": "shared_device", "gpudirect_rdma_fabric": "roce"},
    "infiniband-lab": {"gpudirect_rdma_method": "sriov_legacy", "gpudirect_rdma_fabric": "infiniband", "gpudirect_rdma_num_vfs": 8},
    "mixed-lab": {"gpudirect_rdma_method": "host_device", "gpudirect_rdma_fabric": "infiniband"},
}


def run_facts(sim, tmp_path, extra=None, check=False):
    report_dir = tmp_path / "artifacts"
    extra_vars = dict(extra or {}, hardware_facts_report_dir=str(report_dir), ansible_python_interpreter=sys.executable)
    vars_file = tmp_path / "vars.json"
    vars_file.write_text(json.dumps(extra_vars))
    env = dict(os.environ, K8S_AUTH_KUBECONFIG=sim.kubeconfig, ANSIBLE_NOCOLOR="1", TMPDIR=str(tmp_path))
    cmd = ["ansible-playbook", "-i", INVENTORY, PLAYBOOK, "-e", "@%s" % vars_file]
    if check:
        cmd.append("--check")
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False, timeout=300, cwd=str(tmp_path))
    return proc, report_dir


def leftovers(sim):
    client = sim.dynamic_client()
    found = []
    for kind in ("Pod", "ConfigMap"):
        items = client.resources.get(api_version="v1", kind=kind).get(namespace=NAMESPACE, label_selector="%s=%s" % (
            nf.COMPONENT_LABEL, nf.COMPONENT_VALUE)).items
        found += ["%s/%s" % (kind, item.metadata.name) for item in items]
    return found


MANAGED = "app.kubernetes.io/managed-by=gpudirect.openshift"
# facts.yml reads nodes cached as "not ready" again (drivers load without a reboot); the cache tests keep them.
KEEP_NOT_READY = {"hardware_facts_refresh_not_ready": False}
# What deploy/rbac/workloads.yml (applied by the simulator as the administrator would) puts in the facts namespace.
PROVISIONED = ["Namespace gpudirect-facts", "RoleBinding gpudirect-facts/gpudirect-facts-scc", "ServiceAccount gpudirect-facts/gpudirect-facts"]


def scc_grants(sim, created_by_collection=True):
    """Objects that let someone run pods with an SCC or in the facts namespace (security issue, point 4): those the
    collection created (its label), or every one."""
    client = sim.dynamic_client()
    selector = MANAGED if created_by_collection else None
    bindings = client.resources.get(api_version="rbac.authorization.k8s.io/v1", kind="RoleBinding").get(label_selector=selector).items
    found = ["RoleBinding %s/%s" % (b.metadata.namespace, b.metadata.name) for b in bindings
             if "scc" in b.roleRef.name and b.metadata.namespace == NAMESPACE]
    found += ["Namespace %s" % n.metadata.name
              for n in client.resources.get(api_version="v1", kind="Namespace").get(label_selector=selector).items
              if n.metadata.name == NAMESPACE]
    found += ["ServiceAccount %s/%s" % (a.metadata.namespace, a.metadata.name)
              for a in client.resources.get(api_version="v1", kind="ServiceAccount").get(namespace=NAMESPACE, label_selector=selector).items]
    return sorted(found)


@pytest.mark.parametrize("profile", sorted(CONFIGS))
def test_facts_match_the_profile_and_render(sim_factory, tmp_path, profile):
    sim = sim_factory(profile=profile)
    proc, report_dir = run_facts(sim, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads((report_dir / "hardware-facts.json").read_text())
    # No NFD labels yet: every worker, but not a control-plane node that is a worker too (mixed-lab's edge-19, issue 34).
    workers = [n for n in sim.profile.nodes if n.is_worker and not n.is_master]
    assert sorted(data["nodes"]) == sorted(n.name for n in workers)
    assert data["failed_nodes"] == []
    for pnode in workers:
        facts = data["nodes"][pnode.name]
        assert len(facts["gpus"]) == len(pnode.gpus)
        assert [g["pci_address"] for g in facts["gpus"]] == sorted(g.pci_address for g in pnode.gpus)
        want = sorted((nic.pci_address, port.netdev, port.link_layer, port.rdma_device)
                      for nic in pnode.nics if nic.is_mellanox for port in nic.ports)
        got = sorted((p["pci_address"], p["netdev"], p["link_layer"], p["rdma_device"])
                     for p in data["nic_ports"] if p["node"] == pnode.name)
        assert got == want
        assert data["readiness"][pnode.name]["gpus"] == len(pnode.gpus)
    if workers[-1].gpus:
        assert any(link["relation"] in ("PIX", "NODE") for link in data["gpu_nic_affinity"])
    variables = dict(CONFIGS[profile], gpudirect_rdma_ipam_range="192.168.50.0/24", gpudirect_rdma_nic_selection="auto",
                     gpudirect_rdma_nic_facts=data["nic_ports"], gpudirect_rdma_gpu_nic_affinity=data["gpu_nic_affinity"])
    rendered = plan.render_all(variables)
    assert rendered["errors"] == [] and rendered["manifests"]
    markdown = (report_dir / "hardware-report.md").read_text()
    html = (report_dir / "hardware-report.html").read_text()
    gpu_node = next(n for n in workers if n.gpus)
    assert "## %s" % gpu_node.name in markdown and "### GPU-NIC affinity" in markdown and "| GPU0 |" in markdown
    assert 'class="rel-' in html and "<script" not in html
    assert leftovers(sim) == []
    assert scc_grants(sim) == [], "a facts run must not leave a standing grant"
    assert scc_grants(sim, created_by_collection=False) == PROVISIONED  # the administrator's, untouched
    facts_pods = [r for r in sim.request_log if r["verb"] == "create" and r["plural"] == "pods"]
    assert facts_pods and all(r["code"] == 201 for r in facts_pods)


def test_roce_lab_gpu_nic_pairs(sim_factory, tmp_path):
    """The roce-lab's GPUs at 18/3a/9a/ba share a PCIe switch with the NICs at 1a/3c/9c/bc."""
    sim = sim_factory(profile="roce-lab")
    proc, report_dir = run_facts(sim, tmp_path, {"hardware_facts_node_names": ["worker-0"], "hardware_facts_write_report": True})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads((report_dir / "hardware-facts.json").read_text())
    pix = sorted((link["gpu_pci_address"], link["netdev"]) for link in data["gpu_nic_affinity"] if link["relation"] == "PIX")
    assert pix == [("0000:18:00.0", "ens1f0np0"), ("0000:3a:00.0", "ens2f0np0"), ("0000:9a:00.0", "ens3f0np0"),
                   ("0000:ba:00.0", "ens4f0np0")]
    assert "irdma_loaded" in data["readiness"]["worker-0"]["reason_codes"]  # the E810 management port


def test_failures_still_remove_every_pod_and_configmap(sim_factory, tmp_path):
    sim = sim_factory(profile="infiniband-lab", faults={"operator_faults": {"facts_pod_failure": {"gpu-ib-1": "OSError: boom"}}})
    proc, _report_dir = run_facts(sim, tmp_path, {"hardware_facts_node_names": ["gpu-ib-0", "gpu-ib-1", "no-such-node"]})
    assert proc.returncode != 0
    output = proc.stdout + proc.stderr
    assert "no-such-node: no such node" in output
    assert "gpu-ib-1: pod failed: exit code 1 (Error)" in output and "OSError: boom" in output
    assert leftovers(sim) == []
    mark = sim.mark()
    proc, report_dir = run_facts(sim, tmp_path, {"hardware_facts_node_names": ["gpu-ib-0", "gpu-ib-1"],
                                                 "hardware_facts_fail_on_error": False, **KEEP_NOT_READY})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads((report_dir / "hardware-facts.json").read_text())
    assert list(data["nodes"]) == ["gpu-ib-0"] and [f["node"] for f in data["failed_nodes"]] == ["gpu-ib-1"]
    assert "gpu-ib-1: no facts" in (report_dir / "hardware-report.md").read_text()
    assert leftovers(sim) == [] and scc_grants(sim) == []
    # the pods by label in one request, the script ConfigMap by name (the namespace and account are the administrator's);
    # gpu-ib-0's document comes from the cache the first run wrote: only gpu-ib-1's pod ran
    assert sim.count(verb="deletecollection", since=mark) == 1 and sim.count(verb="delete", since=mark) == 1
    assert sim.count(verb="create", plural="pods", since=mark) == 1


def test_check_mode_creates_nothing(sim_factory, tmp_path):
    sim = sim_factory(profile="mixed-lab")
    mark = sim.mark()
    proc, report_dir = run_facts(sim, tmp_path, check=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sim.count(writes_only=True, include_dry_run=True, since=mark) == 0
    assert "gpudirect-facts-" in proc.stdout and "nvd-srv-32.nvidia.eng.rdu2.dc.redhat.com" in proc.stdout
    assert not report_dir.exists()


def test_unschedulable_pod_is_a_node_failure_and_is_deleted(sim_factory, monkeypatch):
    """A pod bound to a node that vanished stays Pending/Unschedulable: reported at once, then deleted."""
    # A namespace that exists before the run (deploy/rbac/workloads.yml) is kept, with the scheduler's events in
    # it; only what the run created goes.
    sim = sim_factory(profile="roce-lab")
    monkeypatch.setattr(nf, "select_nodes", lambda nodes, names=None, node_selector=None: (["worker-0", "gone-node"], [], "names"))
    params = {"namespace": NAMESPACE, "name_prefix": "gpudirect-facts", "image": nf.DEFAULT_IMAGE, "service_account": "gpudirect-facts",
              "manage_rbac": True, "scc": "hostmount-anyuid", "create_namespace": True, "timeout": 60, "tolerations": None}
    cluster = ClusterClient(get_api_client(kubeconfig=sim.kubeconfig))
    result = nf.FactsRun(cluster, FactsSettings(**params)).run()
    assert list(result["nodes"]) == ["worker-0"]
    assert [(f["node"], f["error"]) for f in result["failed_nodes"]] == [
        ("gone-node", "pod cannot be scheduled: 0/%d nodes are available: node gone-node not found" % len(sim.profile.nodes))]
    events = sim.dynamic_client().resources.get(api_version="v1", kind="Event").get(namespace=NAMESPACE).items
    assert any(e.reason == "FailedScheduling" for e in events)
    assert leftovers(sim) == []


def test_teardown_removes_what_an_interrupted_facts_run_left(sim_factory, tmp_path):
    """An interrupted run with per-run RBAC leaves its namespace, service account and SCC binding: teardown removes
    them (a bare cluster: nothing prepared by an administrator)."""
    sim = sim_factory(profile="mixed-lab", admin_manifests=[])
    client = sim.dynamic_client()
    labels = {"app.kubernetes.io/managed-by": "gpudirect.openshift", nf.COMPONENT_LABEL: nf.COMPONENT_VALUE}
    client.resources.get(api_version="v1", kind="Namespace").create(body={
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE, "labels": labels}})
    client.resources.get(api_version="v1", kind="ServiceAccount").create(namespace=NAMESPACE, body={
        "apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "gpudirect-facts", "labels": labels}})
    binding = nf.scc_role_binding(NAMESPACE, "gpudirect-facts", "hostmount-anyuid")
    client.resources.get(api_version="rbac.authorization.k8s.io/v1", kind="RoleBinding").create(
        namespace=NAMESPACE, body=binding)
    assert len(scc_grants(sim)) == 3
    env = dict(os.environ, K8S_AUTH_KUBECONFIG=sim.kubeconfig, ANSIBLE_NOCOLOR="1")
    proc = subprocess.run(["ansible-playbook", os.path.join(ROOT, "playbooks", "teardown.yml")], env=env, cwd=ROOT,
                          capture_output=True, text=True, check=False, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert scc_grants(sim) == []
    assert "Namespace %s" % NAMESPACE in proc.stdout and "Nothing to delete" not in proc.stdout


def test_a_cluster_not_prepared_for_facts_fails_before_any_write_naming_the_fix(sim_factory, tmp_path):
    sim = sim_factory(profile="roce-lab", admin_manifests=[])
    mark = sim.mark()
    proc, _report_dir = run_facts(sim, tmp_path)
    assert proc.returncode != 0
    assert "Namespace gpudirect-facts does not exist" in proc.stdout and "oc apply -f deploy/rbac/workloads.yml" in proc.stdout
    assert sim.count(writes_only=True, since=mark) == 0


def test_per_run_rbac_creates_and_removes_its_grant(sim_factory, tmp_path):
    """hardware_facts_manage_rbac: the namespace, account and SCC binding exist only during the run."""
    sim = sim_factory(profile="roce-lab", admin_manifests=[])
    proc, _report_dir = run_facts(sim, tmp_path, {"hardware_facts_manage_rbac": True, "hardware_facts_create_namespace": True,
                                                  "hardware_facts_node_names": ["worker-0"]})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    created = {r["plural"] for r in sim.request_log if r["verb"] == "create" and r["code"] == 201}
    assert {"namespaces", "serviceaccounts", "rolebindings", "pods"} <= created
    assert scc_grants(sim, created_by_collection=False) == [] and leftovers(sim) == []


def test_a_malformed_facts_image_is_refused_before_any_write(sim_factory, tmp_path):
    """Issue 20 point 6: image inputs take name[:tag][@sha256:...] and nothing else; the module says so before it
    creates anything."""
    sim = sim_factory(profile="roce-lab")
    mark = sim.mark()
    proc, _report_dir = run_facts(sim, tmp_path, {"hardware_facts_image": 'registry.example.com/img:1 "; id'})
    assert proc.returncode != 0
    assert "hardware_facts_image" in proc.stdout and "is not an image reference" in proc.stdout, proc.stdout[-2000:]
    assert sim.count(writes_only=True, since=mark) == 0


def test_a_rerun_on_unchanged_nodes_starts_no_pod_and_writes_nothing(sim_factory, tmp_path):
    """The per-node cache (issue 21): a second run reads the documents back, a changed node or refresh gathers again,
    and a forged cache entry is not used."""
    sim = sim_factory(profile="roce-lab")  # its nodes are not ready (no drivers): the cache is kept anyway
    proc, report_dir = run_facts(sim, tmp_path, KEEP_NOT_READY)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    first = json.loads((report_dir / "hardware-facts.json").read_text())
    workers = sorted(first["nodes"])
    assert sorted(p.name for p in (report_dir / "nodes").iterdir()) == ["%s.json" % n for n in workers]
    mark = sim.mark()
    proc, report_dir = run_facts(sim, tmp_path, KEEP_NOT_READY)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sim.count(writes_only=True, since=mark) == 0 and sim.count(verb="create", plural="pods", since=mark) == 0
    assert "%d from the cache, 0 gathered now" % len(workers) in proc.stdout
    again = json.loads((report_dir / "hardware-facts.json").read_text())
    assert again["nic_ports"] == first["nic_ports"] and again["readiness"] == first["readiness"]
    # One node rebooted (the kubelet reports a new boot ID), and another node's entry is forged (not a collector
    # document): those two nodes only are gathered again

    def reboot(node):
        node["status"]["nodeInfo"]["bootID"] = "after-reboot"

    sim.store.mutate(sim.type("v1", "Node"), None, workers[0], reboot)
    client = sim.dynamic_client()
    configmaps = client.resources.get(api_version="v1", kind="ConfigMap")
    cache = dict((c.metadata.annotations[nf.NODE_ANNOTATION], c) for c in configmaps.get(
        namespace=NAMESPACE, label_selector="%s=%s" % (nf.COMPONENT_LABEL, nf.CACHE_COMPONENT)).items)
    assert sorted(cache) == workers
    entry = cache[workers[1]]
    forged = nf.cache_configmap(entry.metadata.name, NAMESPACE, workers[1], entry.metadata.annotations[nf.FINGERPRINT_ANNOTATION],
                                '{"gpus": "not facts"}')
    configmaps.patch(body={"binaryData": forged["binaryData"]}, name=entry.metadata.name, namespace=NAMESPACE,
                     content_type="application/merge-patch+json")
    mark = sim.mark()
    proc, _report_dir = run_facts(sim, tmp_path, KEEP_NOT_READY)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    created = [r for r in sim.request_log[mark:] if r["verb"] == "create" and r["plural"] == "pods"]
    assert len(created) == 2 and "%d from the cache, 2 gathered now" % (len(workers) - 2) in proc.stdout
    assert leftovers(sim) == []


def test_facts_yml_reads_again_the_nodes_cached_as_not_ready(sim_factory, tmp_path):
    """Issue 31 (journeys): after an install the operators have loaded the drivers without a reboot, so the fingerprint
    still matches a document that says "not ready"; facts.yml reads such nodes again instead of repeating it."""
    sim = sim_factory(profile="roce-lab")
    proc, report_dir = run_facts(sim, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    workers = sorted(json.loads((report_dir / "hardware-facts.json").read_text())["nodes"])
    assert "0 ready" in proc.stdout, "the bare profile's nodes should not be ready: the test proves nothing"
    mark = sim.mark()
    proc, _report_dir = run_facts(sim, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sim.count(verb="create", plural="pods", since=mark) == len(workers)
    assert "0 from the cache, %d gathered now" % len(workers) in proc.stdout


def test_teardown_removes_the_facts_cache_and_only_it(sim_factory, tmp_path):
    """The per-node cache ConfigMaps outlive facts runs; teardown deletes them (issue 21), and a ConfigMap of the
    same namespace that the collection did not create stays."""
    sim = sim_factory(profile="roce-lab")
    proc, _report_dir = run_facts(sim, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    configmaps = sim.dynamic_client().resources.get(api_version="v1", kind="ConfigMap")
    cache_selector = "%s=%s" % (nf.COMPONENT_LABEL, nf.CACHE_COMPONENT)
    cached = sorted(c.metadata.name for c in configmaps.get(namespace=NAMESPACE, label_selector=cache_selector).items)
    assert cached
    # Same component label, but not the collection's (no managed-by label): teardown must leave it.
    configmaps.create(namespace=NAMESPACE, body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": "someone-elses", "labels": {nf.COMPONENT_LABEL: nf.CACHE_COMPONENT}}, "data": {"a": "b"}})
    env = dict(os.environ, K8S_AUTH_KUBECONFIG=sim.kubeconfig, ANSIBLE_NOCOLOR="1")
    proc = subprocess.run(["ansible-playbook", os.path.join(ROOT, "playbooks", "teardown.yml")], env=env, cwd=ROOT,
                          capture_output=True, text=True, check=False, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:]
    left = [c.metadata.name for c in configmaps.get(namespace=NAMESPACE, label_selector=cache_selector).items]
    assert left == ["someone-elses"]
    assert all("ConfigMap %s/%s" % (NAMESPACE, name) in proc.stdout for name in cached), proc.stdout[-3000:]
    assert leftovers(sim) == []
