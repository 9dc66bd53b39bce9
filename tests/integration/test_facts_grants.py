"""Issue 34 (MEDIUM): an SCC grant must not outlive the facts run that needed it. A run killed while
hardware_facts_manage_rbac was on left its hostmount-anyuid RoleBinding, and later runs kept it for good."""

import json
import os
import signal
import subprocess
import sys
import time

from test_hardware_facts import NAMESPACE, ROOT, run_facts, scc_grants

from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster import node_facts as nf

PER_RUN = {"hardware_facts_manage_rbac": True, "hardware_facts_create_namespace": True,
           "hardware_facts_node_names": ["worker-0"]}


def leave_an_interrupted_runs_grant(sim):
    client = sim.dynamic_client()
    labels = {"app.kubernetes.io/managed-by": "gpudirect.openshift", nf.COMPONENT_LABEL: nf.COMPONENT_VALUE}
    client.resources.get(api_version="v1", kind="Namespace").create(body={
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE, "labels": labels}})
    client.resources.get(api_version="v1", kind="ServiceAccount").create(namespace=NAMESPACE, body={
        "apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "gpudirect-facts", "labels": labels}})
    client.resources.get(api_version="rbac.authorization.k8s.io/v1", kind="RoleBinding").create(
        namespace=NAMESPACE, body=nf.scc_role_binding(NAMESPACE, "gpudirect-facts", "hostmount-anyuid"))
    assert len(scc_grants(sim)) == 3


def test_the_next_run_removes_an_interrupted_runs_grant(sim_factory, tmp_path):
    sim = sim_factory(profile="roce-lab", admin_manifests=[])
    leave_an_interrupted_runs_grant(sim)
    proc, _reports = run_facts(sim, tmp_path, PER_RUN)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert scc_grants(sim) == [], "a later run kept the interrupted run's namespace, account or SCC grant"


def test_an_administrators_grant_is_never_taken_over(sim_factory, tmp_path):
    """deploy/rbac/workloads.yml (applied by the simulator as an administrator would) carries no run labels."""
    sim = sim_factory(profile="roce-lab")
    before = scc_grants(sim, created_by_collection=False)
    assert before, "the administrator's objects are missing: the test proves nothing"
    proc, _reports = run_facts(sim, tmp_path, {"hardware_facts_node_names": ["worker-0"]})
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert scc_grants(sim, created_by_collection=False) == before


def test_a_run_stopped_by_sigterm_removes_its_pods_and_grant(sim_factory, tmp_path):
    """SIGTERM is what a task timeout or a cancelled AWX job sends. The module runs alone here (as Ansible runs it),
    its pods slowed so that the signal comes mid-run."""
    sim = sim_factory(profile="roce-lab", admin_manifests=[], config={"facts_pod_step_seconds": 20})
    args = {"ANSIBLE_MODULE_ARGS": {"kubeconfig": sim.kubeconfig, "namespace": NAMESPACE, "create_namespace": True,
                                    "manage_rbac": True, "service_account": "gpudirect-facts", "scc": "hostmount-anyuid",
                                    "nodes": ["worker-0"], "report_dir": str(tmp_path / "reports")}}
    proc = subprocess.Popen([sys.executable, "-m", "ansible_collections.gpudirect.openshift.plugins.modules.gather_node_hardware"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            cwd=ROOT, env=dict(os.environ))
    proc.stdin.write(json.dumps(args))
    proc.stdin.close()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not sim.dynamic_client().resources.get(api_version="v1", kind="Pod").get(
            namespace=NAMESPACE, label_selector=nf.RUN_LABEL).items:
        assert proc.poll() is None, proc.stdout.read()
        time.sleep(0.2)
    assert len(scc_grants(sim)) == 3, "the run never reached its pods: the test proves nothing"
    proc.send_signal(signal.SIGTERM)
    out = proc.stdout.read()
    assert proc.wait(timeout=120) != 0, out
    assert scc_grants(sim) == [], out
    assert [p.metadata.name for p in sim.dynamic_client().resources.get(api_version="v1", kind="Pod").get(
        namespace=NAMESPACE).items] == []
