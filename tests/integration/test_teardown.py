"""playbooks/teardown.yml against the simulated cluster: ordered, label-scoped, idempotent, check mode without writes.

One cluster goes through site.yml (SR-IOV legacy over RoCE plus the host MachineConfig: every layer the teardown
has to undo), gets an unlabelled MacvlanNetwork and an unrelated namespace that must survive, and is then
torn down in check mode, for real, and once more.
"""

import os
import re
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "playbooks", "vars", "examples", "5-sriov-legacy-roce.yml")
# The host preparation MachineConfig on top, so that the opt-in MachineConfig teardown has something to remove.
# crio_memlock on the worker pool itself (no custom pool on this cluster): one MachineConfig, as before issue 20 point 7.
WITH_MACHINECONFIG = ('{"gpudirect_rdma_apply_machineconfigs": true, "gpudirect_rdma_machineconfigs": ["irdma_blacklist", "crio_memlock"], '
                      '"gpudirect_rdma_memlock_pool": "worker"}')
MANAGED = "app.kubernetes.io/managed-by=gpudirect.openshift"
OPERATOR_NAMESPACES = ["openshift-nfd", "openshift-sriov-network-operator", "nvidia-network-operator", "nvidia-gpu-operator"]
# Every kind the collection creates, with the (group, plural) the request log names.
MANAGED_KINDS = [
    ("mellanox.com/v1alpha1", "MacvlanNetwork"), ("mellanox.com/v1alpha1", "IPoIBNetwork"),
    ("mellanox.com/v1alpha1", "HostDeviceNetwork"), ("sriovnetwork.openshift.io/v1", "SriovNetwork"),
    ("sriovnetwork.openshift.io/v1", "SriovIBNetwork"), ("sriovnetwork.openshift.io/v1", "SriovNetworkNodePolicy"),
    ("sriovnetwork.openshift.io/v1", "SriovNetworkPoolConfig"), ("mellanox.com/v1alpha1", "NicClusterPolicy"),
    ("nvidia.com/v1", "ClusterPolicy"), ("machineconfiguration.openshift.io/v1", "MachineConfig"),
    ("nfd.openshift.io/v1", "NodeFeatureDiscovery"), ("sriovnetwork.openshift.io/v1", "SriovOperatorConfig"),
    ("operators.coreos.com/v1", "OperatorGroup"),
]
# The order deletes must reach the API in: each layer before the one it depends on.
DELETE_ORDER = ["pods", "sriovnetworks", "sriovnetworknodepolicies", "nicclusterpolicies", "clusterpolicies", "machineconfigs",
                "sriovoperatorconfigs", "nodefeaturediscoveries", "subscriptions", "namespaces"]


def run_playbook(sim, playbook, *args, timeout=600):
    env = dict(os.environ, K8S_AUTH_KUBECONFIG=sim.kubeconfig, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0")
    proc = subprocess.run(["ansible-playbook", os.path.join(ROOT, "playbooks", playbook)] + list(args), cwd=ROOT, env=env,
                          capture_output=True, text=True, check=False, timeout=timeout)
    return proc


def recap(stdout):
    match = re.search(r"localhost\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", stdout)
    assert match, stdout[-3000:]
    return dict(zip(("ok", "changed", "unreachable", "failed"), map(int, match.groups())))


def managed(client, api_version, kind):
    try:
        resource = client.resources.get(api_version=api_version, kind=kind)
    except Exception:  # pylint: disable=broad-except
        return []  # kind not served: nothing of it exists
    return resource.get(label_selector=MANAGED).to_dict()["items"]


def names(client, api_version, kind, namespace=None, label_selector=None):
    items = client.resources.get(api_version=api_version, kind=kind).get(namespace=namespace, label_selector=label_selector)
    return sorted((i["metadata"].get("namespace"), i["metadata"]["name"]) for i in items.to_dict()["items"])


@pytest.fixture
def installed(sim_factory):
    """A cluster that site.yml configured, plus objects the collection did not create."""
    sim = sim_factory(profile="mixed-lab")
    proc = run_playbook(sim, "site.yml", "-e", "@" + EXAMPLE, "-e", WITH_MACHINECONFIG)
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-3000:]
    client = sim.dynamic_client()
    client.resources.get(api_version="v1", kind="Namespace").create(body={"metadata": {"name": "unrelated-team"}})
    client.resources.get(api_version="mellanox.com/v1alpha1", kind="MacvlanNetwork").create(body={
        "apiVersion": "mellanox.com/v1alpha1", "kind": "MacvlanNetwork", "metadata": {"name": "team-macvlan"},
        "spec": {"networkNamespace": "unrelated-team", "master": "ens8f0np0", "mode": "bridge", "mtu": 1500,
                 "ipam": '{"type": "whereabouts", "range": "10.9.0.0/24"}'}})
    return sim


def test_teardown_check_mode_then_ordered_removal_then_nothing_left_to_do(installed):
    sim = installed
    client = sim.dynamic_client()
    before = {kind: managed(client, api, kind) for api, kind in MANAGED_KINDS}
    for kind in ("SriovNetwork", "SriovNetworkNodePolicy", "NicClusterPolicy", "ClusterPolicy", "MachineConfig",
                 "NodeFeatureDiscovery", "SriovOperatorConfig", "OperatorGroup"):
        assert before[kind], "site.yml created no %s; the teardown would have nothing to prove" % kind
    nads_before = names(client, "k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition")
    our_nads = [(n["spec"]["networkNamespace"], n["metadata"]["name"]) for n in before["SriovNetwork"]]
    assert set(our_nads) <= set(nads_before)

    # Check mode: server-side dry runs only, and a list of what would go.
    mark = sim.mark()
    proc = run_playbook(sim, "teardown.yml", "--check", "-e", "teardown_machineconfigs=true", "-e", "teardown_remove_namespaces=true")
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-3000:]
    assert sim.count(writes_only=True, since=mark) == 0
    assert sim.count(writes_only=True, include_dry_run=True, since=mark) > 0
    assert "Check mode, would delete" in proc.stdout
    for kind in ("SriovNetwork", "NicClusterPolicy", "ClusterPolicy", "MachineConfig", "Subscription", "Namespace"):
        assert kind in proc.stdout.split("Check mode, would delete", 1)[1], kind
    assert {kind: managed(client, api, kind) != [] for api, kind in MANAGED_KINDS} == {kind: bool(v) for kind, v in before.items()}

    # The real thing.
    mark = sim.mark()
    proc = run_playbook(sim, "teardown.yml", "-e", "teardown_machineconfigs=true", "-e", "teardown_remove_namespaces=true")
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-3000:]
    assert recap(proc.stdout)["changed"] > 0
    for api, kind in MANAGED_KINDS:
        assert managed(client, api, kind) == [], kind
    nads_after = names(client, "k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition")
    assert not set(our_nads) & set(nads_after)
    existing_namespaces = [n for _ns, n in names(client, "v1", "Namespace")]
    for namespace in OPERATOR_NAMESPACES:
        assert namespace not in existing_namespaces, namespace
    assert names(client, "operators.coreos.com/v1alpha1", "Subscription") == []
    assert names(client, "operators.coreos.com/v1alpha1", "ClusterServiceVersion") == []
    pool = client.resources.get(api_version="machineconfiguration.openshift.io/v1", kind="MachineConfigPool").get(name="worker").to_dict()
    assert pool["status"]["updatedMachineCount"] == pool["status"]["machineCount"]
    # What the collection did not create is still there.
    assert "unrelated-team" in existing_namespaces
    assert (None, "team-macvlan") in names(client, "mellanox.com/v1alpha1", "MacvlanNetwork")
    assert ("unrelated-team", "team-macvlan") in nads_after

    deletes = [e for e in sim.requests.entries(mark) if e["verb"] == "delete" and not e["dry_run"]]
    first_delete = {}
    for index, entry in enumerate(deletes):
        first_delete.setdefault(entry["plural"], index)
    assert not any(e["plural"] == "macvlannetworks" and e["name"] == "team-macvlan" for e in deletes)
    assert not any(e["plural"] == "namespaces" and e["name"] == "unrelated-team" for e in deletes)
    seen = [plural for plural in DELETE_ORDER if plural in first_delete]
    assert seen == [p for p in DELETE_ORDER if p != "pods"], first_delete
    assert [first_delete[p] for p in seen] == sorted(first_delete[p] for p in seen), first_delete
    # Operators go last installed first.
    subscription_order = [e["namespace"] for e in deletes if e["plural"] == "subscriptions"]
    assert subscription_order == list(reversed(OPERATOR_NAMESPACES))

    # Again: nothing to do, not even a dry run.
    mark = sim.mark()
    proc = run_playbook(sim, "teardown.yml", "-e", "teardown_machineconfigs=true", "-e", "teardown_remove_namespaces=true")
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-3000:]
    assert recap(proc.stdout)["changed"] == 0
    assert sim.count(writes_only=True, include_dry_run=True, since=mark) == 0
    assert "Nothing to delete" in proc.stdout


def test_teardown_waits_for_finalizers_and_names_a_cr_its_stopped_operator_still_holds(installed):
    """The operators hold their CRs with finalizers (issue 14 point 4). With the NFD operator down, the deleted
    NodeFeatureDiscovery stays held: teardown names it and its finalizer after the grace period, before removing any
    operator; with the operator back, teardown completes and nothing is left."""
    sim = installed
    client = sim.dynamic_client()
    (instance,) = managed(client, "nfd.openshift.io/v1", "NodeFeatureDiscovery")
    assert "nfd-finalizer" in instance["metadata"]["finalizers"]
    sim.faults.update({"operator_faults": {"operators_stopped": ["nfd"]}})
    mark = sim.mark()
    proc = run_playbook(sim, "teardown.yml", "-e", "teardown_finalizer_grace_period=2", "-e", "teardown_remove_namespaces=true")
    assert proc.returncode != 0, proc.stdout[-5000:]
    text = proc.stdout.replace("\n", " ")
    assert "NodeFeatureDiscovery nfd-instance is held by finalizer(s) nfd-finalizer" in text, proc.stdout[-5000:]
    assert not [e for e in sim.requests.entries(mark) if e["verb"] == "delete" and e["plural"] == "subscriptions"]

    sim.faults.update({"operator_faults": {"operators_stopped": []}})
    proc = run_playbook(sim, "teardown.yml", "-e", "teardown_remove_namespaces=true")
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-3000:]
    for api, kind in MANAGED_KINDS:
        if kind != "MachineConfig":  # removed only with teardown_machineconfigs (a pool reboot)
            assert managed(client, api, kind) == [], kind
    existing_namespaces = [n for _ns, n in names(client, "v1", "Namespace")]
    assert not set(OPERATOR_NAMESPACES) & set(existing_namespaces)


def test_a_default_teardown_says_what_it_leaves_and_a_later_run_removes_it(installed):
    """Issue 31 point 7: a default teardown keeps the MachineConfig and the operator namespaces, labelled as the
    collection's. It says so, with the setting that removes each; a later run with that setting removes them (the
    label proves they were the collection's, and no operator is left in them) instead of "Nothing to delete"."""
    sim = installed
    client = sim.dynamic_client()
    proc = run_playbook(sim, "teardown.yml")
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-3000:]
    text = " ".join(proc.stdout.split())
    (machineconfig,) = [m["metadata"]["name"] for m in managed(client, "machineconfiguration.openshift.io/v1", "MachineConfig")]
    assert re.search(r"Left in place: MachineConfig %s \(teardown_machineconfigs=true removes them; every node of their "
                     r"pool drains and reboots once\); Namespace [^;]*\(teardown_remove_namespaces=true removes them\)\."
                     % re.escape(machineconfig), text), text[-3000:]
    left = [n["metadata"]["name"] for n in managed(client, "v1", "Namespace")]
    assert set(OPERATOR_NAMESPACES) <= set(left)

    proc = run_playbook(sim, "teardown.yml", "-e", "teardown_remove_namespaces=true")
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-3000:]
    text = " ".join(proc.stdout.split())
    assert recap(proc.stdout)["changed"] > 0 and "Nothing to delete" not in text, text[-3000:]
    for namespace in OPERATOR_NAMESPACES:
        assert "Namespace %s" % namespace in text.split("Deleted ", 1)[1], text[-3000:]
    existing_namespaces = [n for _ns, n in names(client, "v1", "Namespace")]
    assert not set(OPERATOR_NAMESPACES) & set(existing_namespaces)
    assert "unrelated-team" in existing_namespaces
    assert "Left in place: MachineConfig %s" % machineconfig in text and "Namespace" not in text.split("Left in place:", 1)[1]

    proc = run_playbook(sim, "teardown.yml", "-e", "teardown_machineconfigs=true", "-e", "teardown_remove_namespaces=true")
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-3000:]
    assert managed(client, "machineconfiguration.openshift.io/v1", "MachineConfig") == []
    assert "Left in place" not in proc.stdout
