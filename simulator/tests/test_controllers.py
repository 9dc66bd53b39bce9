"""Hardware profiles, the seeded cluster identity and the simulated OLM, through the real kubernetes client."""

import copy
import time

import pytest
import yaml
from kubernetes.dynamic.exceptions import MethodNotAllowedError, NotFoundError

from simulator.catalog import PACKAGES
from simulator.controllers.testing import OLM, Kube, wait
from simulator.profiles import ProfileError, load_profile, shipped_profiles, synthetic

V1A1 = OLM + "/v1alpha1"


@pytest.fixture
def kube_factory(sim_factory, tmp_path):
    def make(**kwargs):
        cluster = sim_factory(**kwargs)
        return Kube(cluster, str(tmp_path / ("discovery-%s.json" % cluster.path_prefix.strip("/"))))
    return make


@pytest.fixture
def kube(kube_factory):
    return kube_factory(profile="roce-lab")


# --------------------------------------------------------------------------------------------- profiles

def test_shipped_profiles_load_with_expected_hardware():
    assert {"roce-lab", "infiniband-lab", "mixed-lab"} <= set(shipped_profiles())
    roce = load_profile("roce-lab")
    assert [n.name for n in roce.nodes if n.is_master] == ["master-0", "master-1", "master-2"]
    assert [n.name for n in roce.workers] == ["worker-0", "worker-1"]
    w0 = roce.node("worker-0")
    assert len(w0.gpus) == 8 and {g.device_id for g in w0.gpus} == {"2330"}
    cx7 = [n for n in w0.nics if n.is_mellanox]
    assert len(cx7) == 4 and {n.device_id for n in cx7} == {"1021"}
    assert {p.link_layer for n in cx7 for p in n.ports} == {"Ethernet"}
    assert roce.cluster.version.startswith("4.20.")

    ib = load_profile("infiniband-lab")
    ports = [p for n in ib.workers[0].nics for p in n.ports]
    assert {p.link_layer for p in ports} == {"InfiniBand"} and {p.speed_gbps for p in ports} == {400}
    assert all(p.guid and not p.mac for p in ports)


def test_mixed_lab_is_the_chapter_lab():
    lab = load_profile("mixed-lab")
    names = [n.name for n in lab.workers if n.gpus]
    assert names == ["nvd-srv-32.nvidia.eng.rdu2.dc.redhat.com", "nvd-srv-33.nvidia.eng.rdu2.dc.redhat.com"]
    for node in lab.workers:
        if not node.gpus:
            continue
        assert [g.model for g in node.gpus] == ["NVIDIA A40", "NVIDIA A40"] and node.cpu == 128
        by_dev = {p.rdma_device: (n, p) for n in node.nics for p in n.ports}
        nic0, ib = by_dev["mlx5_0"]
        nic1, eth = by_dev["mlx5_1"]
        assert (ib.netdev, ib.link_layer, nic0.pci_address) == ("ibs2f0", "InfiniBand", "0000:0d:00.0")
        assert (eth.netdev, eth.link_layer, nic1.pci_address) == ("ens8f0np0", "Ethernet", "0000:a0:00.0")
        assert {nic0.device_id, nic1.device_id} == {"a2dc"} and nic0.firmware == "32.42.1000"
        assert nic0.pci_class == "0207" and nic1.pci_class == "0200"
    assert "edge-19.edge.lab.eng.rdu2.redhat.com" in [n.name for n in lab.nodes if n.is_master and n.is_worker]


def _valid():
    return yaml.safe_load(open(load_profile("mixed-lab").source))


@pytest.mark.parametrize("mutate, expected", [
    (lambda d: d["nodes"][1]["nics"][0]["ports"][0].update(link_layer="Infiniband"),
     "nodes[1].nics[0].ports[0].link_layer: 'Infiniband' is not one of Ethernet, InfiniBand"),
    (lambda d: d["nodes"][1]["nics"][1].update(pci_address="a0:00.0"),
     "nodes[1].nics[1].pci_address: 'a0:00.0' is not a valid PCI address"),
    (lambda d: d["nodes"][1]["nics"][1]["ports"][0].update(netdev="ibs2f0"),
     "nodes[1].nics[1].ports[0].netdev: netdev ibs2f0 already used by nodes[1].nics[0].ports[0].netdev"),
    (lambda d: d["nodes"][1]["nics"][0]["ports"][0].pop("guid"),
     "nodes[1].nics[0].ports[0].guid: is required for an InfiniBand port"),
    (lambda d: d["nodes"][2]["gpus"][0].update(memory="46068"),
     "nodes[2].gpus[0]: unknown key(s) memory"),
    (lambda d: d["nodes"][2]["gpus"][0].update(device_id="22350"),
     "nodes[2].gpus[0].device_id: '22350' is not a valid PCI device ID"),
    (lambda d: d["cluster"].update(version="3.11.0"),
     "cluster.version: OpenShift 3.11 is not known to the simulator"),
    (lambda d: d["nodes"][0].update(roles=["boss"]),
     "nodes[0].roles[0]: 'boss' is not one of"),
    (lambda d: d["nodes"].append(copy.deepcopy(d["nodes"][1])),
     "nodes[3].name: duplicate node name nvd-srv-32"),
    (lambda d: d["nodes"][1]["nics"][0].update(total_vfs=-1),
     "nodes[1].nics[0].total_vfs: must be >= 0, got -1"),
])
def test_profile_validation_names_the_field(tmp_path, mutate, expected):
    data = _valid()
    mutate(data)
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ProfileError) as exc:
        load_profile(str(path))
    assert str(path) in str(exc.value)
    assert expected in str(exc.value)


def test_load_profile_unknown_name_lists_shipped_ones():
    with pytest.raises(ProfileError, match="no such shipped profile or file.*mixed-lab"):
        load_profile("no-such-lab")


def test_load_profile_invalid_yaml(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("name: [unclosed\n")
    with pytest.raises(ProfileError, match="not valid YAML"):
        load_profile(str(path))


def test_synthetic_profile_for_scale():
    started = time.monotonic()
    prof = synthetic(nodes=1000, gpus=8, nics=8)
    assert time.monotonic() - started < 10
    workers = prof.workers
    assert len(workers) == 1000 and len(prof.nodes) == 1003
    assert all(len(w.gpus) == 8 and len(w.nics) == 8 for w in workers)
    guids = {p.guid for w in workers for n in w.nics for p in n.ports}
    assert len(guids) == 8000
    mixed = load_profile("synthetic:nodes=2,link_layer=mixed")
    assert [n.ports[0].link_layer for n in mixed.workers[0].nics][:2] == ["InfiniBand", "Ethernet"]
    assert synthetic(nodes=3) == synthetic(nodes=3)  # deterministic


# --------------------------------------------------------------------------------------------- seeded identity

def test_seeded_cluster_identity(kube):
    cv = kube.get("config.openshift.io/v1", "ClusterVersion", "version")
    assert cv["status"]["desired"]["version"] == "4.20.8"
    assert cv["status"]["history"][0]["state"] == "Completed"
    node = kube.node("worker-0")
    labels = node["metadata"]["labels"]
    assert labels["node-role.kubernetes.io/worker"] == "" and labels["node.openshift.io/os_id"] == "rhcos"
    assert labels["kubernetes.io/hostname"] == "worker-0" and labels["kubernetes.io/arch"] == "amd64"
    assert node["status"]["capacity"]["cpu"] == "224" and node["status"]["capacity"]["pods"] == "250"
    assert "nvidia.com/gpu" not in node["status"]["allocatable"]
    info = node["status"]["nodeInfo"]
    assert info["kernelVersion"] == "5.14.0-570.49.1.el9_6.x86_64" and "CoreOS" in info["osImage"]
    assert info["kubeletVersion"].startswith("v1.33.")
    assert [c["status"] for c in node["status"]["conditions"] if c["type"] == "Ready"] == ["True"]
    assert "node-role.kubernetes.io/master" in kube.node("master-0")["metadata"]["labels"]
    for ns in ("openshift-marketplace", "openshift-operators", "openshift-machine-config-operator"):
        assert kube.get("v1", "Namespace", ns) is not None
    for pool, count in (("master", 3), ("worker", 2)):
        mcp = kube.get("machineconfiguration.openshift.io/v1", "MachineConfigPool", pool)
        assert mcp["status"]["machineCount"] == count and mcp["status"]["updatedMachineCount"] == count
        assert {c["type"]: c["status"] for c in mcp["status"]["conditions"]}["Updated"] == "True"
    for src in ("redhat-operators", "certified-operators"):
        cs = kube.get(V1A1, "CatalogSource", src, "openshift-marketplace")
        assert cs["status"]["connectionState"]["lastObservedState"] == "READY"


def test_package_manifests(kube):
    pms = {p["metadata"]["name"]: p for p in kube.list("packages.operators.coreos.com/v1", "PackageManifest", "openshift-marketplace")}
    assert set(pms) == {"nfd", "sriov-network-operator", "nvidia-network-operator", "gpu-operator-certified"}
    netop = pms["nvidia-network-operator"]["status"]
    assert netop["catalogSource"] == "certified-operators" and netop["catalogSourceNamespace"] == "openshift-marketplace"
    channel = next(c for c in netop["channels"] if c["name"] == netop["defaultChannel"])
    assert channel["currentCSV"] == "nvidia-network-operator.v26.4.1"
    modes = {m["type"]: m["supported"] for m in channel["currentCSVDesc"]["installModes"]}
    assert modes == {"OwnNamespace": True, "SingleNamespace": True, "MultiNamespace": False, "AllNamespaces": False}
    gpu = pms["gpu-operator-certified"]["status"]
    # OpenShift 4.20's index holds only the bundles labelled for it (com.redhat.openshift.versions): v26.7 here.
    assert gpu["defaultChannel"] == "v26.7"
    assert sorted(c["name"] for c in gpu["channels"]) == ["stable", "v26.7"]
    assert next(c for c in gpu["channels"] if c["name"] == "v26.7")["currentCSV"] == "gpu-operator-certified.v26.7.0"
    nfd = pms["nfd"]["status"]
    assert nfd["catalogSource"] == "redhat-operators" and nfd["channels"][0]["currentCSV"].startswith("nfd.4.20.0-")
    with pytest.raises(MethodNotAllowedError):
        kube.create({"apiVersion": "packages.operators.coreos.com/v1", "kind": "PackageManifest",
                     "metadata": {"name": "mine", "namespace": "openshift-marketplace"}})


def test_catalog_config_removes_package_and_marks_source_unhealthy(kube_factory):
    kube = kube_factory(profile="roce-lab", config={"catalog_remove_packages": ["nfd"],
                                                    "catalog_source_states": {"certified-operators": "TRANSIENT_FAILURE"}})
    names = {p["metadata"]["name"] for p in kube.list("packages.operators.coreos.com/v1", "PackageManifest", "openshift-marketplace")}
    assert names == {"sriov-network-operator"}
    cs = kube.get(V1A1, "CatalogSource", "certified-operators", "openshift-marketplace")
    assert cs["status"]["connectionState"]["lastObservedState"] == "TRANSIENT_FAILURE"
    kube.namespace("nvidia-gpu-operator")
    kube.operator_group("nvidia-gpu-operator")
    kube.subscribe("gpu-operator-certified", "nvidia-gpu-operator")
    sub = wait(lambda: _condition(kube.get(V1A1, "Subscription", "gpu-operator-certified", "nvidia-gpu-operator"),
                                  "ResolutionFailed"), what="ResolutionFailed")
    assert "catalog source connection state TRANSIENT_FAILURE" in sub["message"]
    unhealthy = _condition(kube.get(V1A1, "Subscription", "gpu-operator-certified", "nvidia-gpu-operator"),
                           "CatalogSourcesUnhealthy")
    assert unhealthy["status"] == "True"
    # The catalog recovers: the package appears and the Subscription resolves.
    kube.sim.store.patch_status(kube.sim.store.find_type(OLM, "v1alpha1", "catalogsources"), "openshift-marketplace",
                                "certified-operators", {"connectionState": {"lastObservedState": "READY"}})
    wait(lambda: kube.get("packages.operators.coreos.com/v1", "PackageManifest", "gpu-operator-certified",
                          "openshift-marketplace"), what="package manifest back")


def _condition(obj, ctype):
    for cond in ((obj or {}).get("status") or {}).get("conditions") or []:
        if cond.get("type") == ctype:
            return cond
    return None


# --------------------------------------------------------------------------------------------- OLM

def test_automatic_install_reaches_succeeded_within_a_second(kube):
    ns = "openshift-nfd"
    kube.namespace(ns)
    kube.operator_group(ns)
    started = time.monotonic()
    kube.subscribe("nfd", ns)
    wait(lambda: kube.csv_phase(ns) == "Succeeded", what="CSV Succeeded")
    elapsed = time.monotonic() - started
    assert elapsed < 1.0, elapsed
    head = PACKAGES["nfd"]["channels"]["stable"][-1]
    csv = kube.get(V1A1, "ClusterServiceVersion", head, ns)
    history = [(c["phase"], c["reason"]) for c in csv["status"]["conditions"]]
    assert history == [("Pending", "RequirementsUnknown"), ("InstallReady", "RequirementsMet"),
                       ("Installing", "InstallSucceeded"), ("Succeeded", "InstallSucceeded")]
    assert all(c["lastTransitionTime"] and c["lastUpdateTime"] and c["message"] for c in csv["status"]["conditions"])
    assert csv["metadata"]["annotations"]["olm.targetNamespaces"] == ns
    examples = yaml.safe_load(csv["metadata"]["annotations"]["alm-examples"])
    assert [e["spec"]["operand"]["image"] for e in examples if e["kind"] == "NodeFeatureDiscovery"][0]
    sub = kube.get(V1A1, "Subscription", "nfd", ns)
    st = sub["status"]
    assert (st["state"], st["installedCSV"], st["currentCSV"]) == ("AtLatestKnown", head, head)
    plan = kube.get(V1A1, "InstallPlan", st["installPlanRef"]["name"], ns)
    assert plan["metadata"]["name"].startswith("install-") and len(plan["metadata"]["name"]) == len("install-") + 5
    assert plan["spec"] == {"approval": "Automatic", "approved": True, "clusterServiceVersionNames": [head],
                            "generation": 1}
    assert plan["status"]["phase"] == "Complete"
    dep = kube.get("apps/v1", "Deployment", "nfd-controller-manager", ns)
    assert dep["status"]["availableReplicas"] == 1
    pods = kube.core.list_namespaced_pod(ns).items
    assert [p.status.phase for p in pods] == ["Running"] and pods[0].metadata.name.startswith("nfd-controller-manager-")


def test_manual_approval_waits_then_installs(kube_factory):
    kube = kube_factory(profile="roce-lab@4.18.20")
    ns = "nvidia-gpu-operator"
    kube.namespace(ns)
    kube.operator_group(ns, name="nvidia-gpu-operator-group")
    starting = "gpu-operator-certified.v25.3.1"
    kube.subscribe("gpu-operator-certified", ns, channel="v25.3", approval="Manual", starting_csv=starting)
    sub = wait(lambda: (kube.get(V1A1, "Subscription", "gpu-operator-certified", ns).get("status") or {}).get("installPlanRef")
               and kube.get(V1A1, "Subscription", "gpu-operator-certified", ns), what="installPlanRef")
    assert sub["status"]["state"] == "UpgradePending" and sub["status"]["currentCSV"] == starting
    assert _condition(sub, "InstallPlanPending")["reason"] == "RequiresApproval"
    name = sub["status"]["installPlanRef"]["name"]
    plan = kube.get(V1A1, "InstallPlan", name, ns)
    assert plan["spec"]["approved"] is False and plan["status"]["phase"] == "RequiresApproval"
    assert plan["spec"]["clusterServiceVersionNames"] == [starting]
    time.sleep(0.4)
    assert kube.get(V1A1, "InstallPlan", name, ns)["status"]["phase"] == "RequiresApproval"
    assert kube.csv_phase(ns) is None
    assert not kube.served("nvidia.com/v1", "ClusterPolicy")
    kube.patch(V1A1, "InstallPlan", name, {"spec": {"approved": True}}, ns)
    wait(lambda: kube.csv_phase(ns, starting) == "Succeeded", what="CSV Succeeded after approval")
    assert kube.get(V1A1, "InstallPlan", name, ns)["status"]["phase"] == "Complete"
    assert kube.get(V1A1, "Subscription", "gpu-operator-certified", ns)["status"]["installedCSV"] == starting
    csv = kube.get(V1A1, "ClusterServiceVersion", starting, ns)
    assert csv["spec"]["replaces"] == "gpu-operator-certified.v25.3.0" and csv["spec"]["version"] == "25.3.1"


def test_operator_kinds_absent_until_csv_succeeds(kube):
    assert not kube.served("mellanox.com/v1alpha1", "NicClusterPolicy")
    assert kube.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", "nicclusterpolicies.mellanox.com") is None
    with pytest.raises(NotFoundError):
        kube.dyn.request("GET", "/apis/mellanox.com/v1alpha1")
    assert "mellanox.com" not in [g["name"] for g in kube.dyn.request("GET", "/apis").to_dict()["groups"]]
    for api_version, kind in (("nfd.openshift.io/v1", "NodeFeatureDiscovery"), ("nvidia.com/v1", "ClusterPolicy"),
                              ("sriovnetwork.openshift.io/v1", "SriovOperatorConfig")):
        assert not kube.served(api_version, kind)
    kube.install("nvidia-network-operator")
    assert kube.served("mellanox.com/v1alpha1", "NicClusterPolicy")
    assert kube.served("mellanox.com/v1alpha1", "MacvlanNetwork")
    assert kube.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", "nicclusterpolicies.mellanox.com")
    assert "mellanox.com" in [g["name"] for g in kube.dyn.request("GET", "/apis").to_dict()["groups"]]
    assert not kube.served("nvidia.com/v1", "ClusterPolicy")  # other packages stay uninstalled


def test_unsupported_operator_group_fails_the_csv(kube):
    # The network operator supports OwnNamespace/SingleNamespace only; openshift-operators is AllNamespaces.
    kube.subscribe("nvidia-network-operator", "openshift-operators")
    wait(lambda: kube.csv_phase("openshift-operators") == "Failed", what="CSV Failed")
    csv = kube.list(V1A1, "ClusterServiceVersion", "openshift-operators")[0]
    assert csv["status"]["reason"] == "UnsupportedOperatorGroup"
    assert csv["status"]["message"] == "AllNamespaces InstallModeType not supported, cannot configure to watch all namespaces"
    time.sleep(0.3)
    assert kube.csv_phase("openshift-operators") == "Failed"
    assert not kube.served("mellanox.com/v1alpha1", "NicClusterPolicy")


def test_operator_group_problems_and_recovery(kube):
    """catalog/operator.go syncResolvingNamespace resolves nothing unless the namespace has exactly one OperatorGroup
    ("found N operatorGroups, expected 1"); olm-operator fails an existing CSV on the same condition."""
    ns = "openshift-sriov-network-operator"
    kube.namespace(ns)
    kube.subscribe("sriov-network-operator", ns)
    time.sleep(0.5)
    assert kube.list(V1A1, "InstallPlan", ns) == [] and kube.csv_phase(ns) is None
    assert not (kube.get(V1A1, "Subscription", "sriov-network-operator", ns).get("status") or {}).get("state")
    # Both OperatorGroups exist before the Subscription comes back: adding them one by one under it would let OLM
    # resolve in between, while exactly one exists.
    kube.delete(V1A1, "Subscription", "sriov-network-operator", ns)
    kube.operator_group(ns, name="one")
    kube.operator_group(ns, name="two")
    kube.subscribe("sriov-network-operator", ns)
    time.sleep(0.5)
    assert kube.list(V1A1, "InstallPlan", ns) == [] and kube.csv_phase(ns) is None
    kube.delete(OLM + "/v1", "OperatorGroup", "two", ns)
    wait(lambda: kube.csv_phase(ns) == "Succeeded", what="resolution once one OperatorGroup is left")
    og = kube.get(OLM + "/v1", "OperatorGroup", "one", ns)
    assert og["status"]["namespaces"] == [ns]
    kube.operator_group(ns, name="two")
    wait(lambda: (kube.list(V1A1, "ClusterServiceVersion", ns)[0]["status"]["reason"] == "TooManyOperatorGroups"),
         what="TooManyOperatorGroups")
    kube.delete(OLM + "/v1", "OperatorGroup", "two", ns)
    kube.delete(OLM + "/v1", "OperatorGroup", "one", ns)
    csv = wait(lambda: (kube.list(V1A1, "ClusterServiceVersion", ns)[0]["status"]["reason"] == "NoOperatorGroup")
               and kube.list(V1A1, "ClusterServiceVersion", ns)[0], what="NoOperatorGroup")
    assert csv["status"]["message"] == "csv in namespace with no operatorgroups"
    kube.operator_group(ns, name="three")
    wait(lambda: kube.csv_phase(ns) == "Succeeded", what="CSV recovers with one OperatorGroup")


@pytest.mark.parametrize("transient", [False, True])
def test_injected_csv_failure(kube_factory, transient):
    fault = {"reason": "InstallComponentFailed", "message": "install strategy failed: deployment nfd-controller-manager crashed"}
    key = "csv_transient_failure" if transient else "csv_failure"
    kube = kube_factory(profile="roce-lab", faults={"operator_faults": {key: {"nfd": fault}}})
    ns = "openshift-nfd"
    kube.namespace(ns)
    kube.operator_group(ns)
    kube.subscribe("nfd", ns)
    wait(lambda: kube.csv_phase(ns) == "Failed", what="CSV Failed")
    csv = kube.list(V1A1, "ClusterServiceVersion", ns)[0]
    assert (csv["status"]["reason"], csv["status"]["message"]) == (fault["reason"], fault["message"])
    if transient:
        wait(lambda: kube.csv_phase(ns) == "Succeeded", what="CSV Succeeded after a transient failure")
        phases = [c["phase"] for c in kube.list(V1A1, "ClusterServiceVersion", ns)[0]["status"]["conditions"]]
        assert "Failed" in phases and phases[-1] == "Succeeded"
        assert kube.served("nfd.openshift.io/v1", "NodeFeatureDiscovery")
    else:
        time.sleep(0.4)
        assert kube.csv_phase(ns) == "Failed"
        assert not kube.served("nfd.openshift.io/v1", "NodeFeatureDiscovery")


@pytest.mark.parametrize("spec, message", [
    ({"package": "nfdx"}, "no operators found in package nfdx in the catalog referenced by subscription nfdx"),
    ({"package": "nfd", "channel": "4.12"}, "no operators found in channel 4.12 of package nfd"),
    ({"package": "nfd", "starting_csv": "nfd.4.12.0"}, "no operators found with name nfd.4.12.0 in channel stable"),
    ({"package": "nfd", "source": "certified-operators"}, "no operators found in package nfd"),
    ({"package": "nfd", "source": "my-mirror"}, "my-mirror/openshift-marketplace: catalogsource not found"),
])
def test_subscription_resolution_failures(kube, spec, message):
    ns = "resolve-test"
    kube.namespace(ns)
    kube.operator_group(ns)
    kube.subscribe(spec["package"], ns, channel=spec.get("channel"), source=spec.get("source", "redhat-operators"),
                   starting_csv=spec.get("starting_csv"))
    cond = wait(lambda: _condition(kube.get(V1A1, "Subscription", spec["package"], ns), "ResolutionFailed"),
                what="ResolutionFailed")
    assert cond["status"] == "True" and cond["reason"] == "ConstraintsNotSatisfiable"
    assert message in cond["message"]
    assert kube.list(V1A1, "InstallPlan", ns) == []
    before = kube.get(V1A1, "Subscription", spec["package"], ns)["metadata"]["resourceVersion"]
    time.sleep(0.2)
    assert kube.get(V1A1, "Subscription", spec["package"], ns)["metadata"]["resourceVersion"] == before  # settles


def test_deleting_subscription_keeps_csv_and_namespace_deletion_completes(kube):
    ns = "openshift-nfd"
    csv = kube.install("nfd", ns)
    assert len(kube.list(V1A1, "InstallPlan", ns)) == 1
    kube.delete(V1A1, "Subscription", "nfd", ns)
    time.sleep(0.2)
    assert kube.csv_phase(ns) == "Succeeded"
    assert kube.served("nfd.openshift.io/v1", "NodeFeatureDiscovery")
    # A new Subscription adopts the installed CSV instead of planning a second install.
    kube.subscribe("nfd", ns)
    sub = wait(lambda: (kube.get(V1A1, "Subscription", "nfd", ns).get("status") or {}).get("installedCSV")
               and kube.get(V1A1, "Subscription", "nfd", ns), what="adopted")
    assert sub["status"]["installedCSV"] == csv["metadata"]["name"]
    assert kube.list(V1A1, "InstallPlan", ns) == []  # the first plan was garbage-collected with its Subscription
    kube.delete("v1", "Namespace", ns)
    wait(lambda: kube.get("v1", "Namespace", ns) is None, what="namespace gone")
    assert kube.list(V1A1, "ClusterServiceVersion", ns) == []


def test_crds_served_when_installplan_completes_if_configured(kube_factory):
    # OLM creates the CRDs from the InstallPlan, before the operator runs: with this knob a failing CSV still
    # leaves the kinds served (and nothing reacts to their objects).
    kube = kube_factory(profile="roce-lab", config={"crds_served_at": "installplan_complete"},
                        faults={"operator_faults": {"csv_failure": {"nfd": "InstallComponentFailed"}}})
    ns = "openshift-nfd"
    kube.namespace(ns)
    kube.operator_group(ns)
    kube.subscribe("nfd", ns)
    wait(lambda: kube.csv_phase(ns) == "Failed", what="CSV Failed")
    assert kube.served("nfd.openshift.io/v1", "NodeFeatureDiscovery")
    kube.create({"apiVersion": "nfd.openshift.io/v1", "kind": "NodeFeatureDiscovery",
                 "metadata": {"name": "nfd-instance", "namespace": ns}, "spec": {}})
    time.sleep(0.3)
    assert not any(k.startswith("feature.node.kubernetes.io/") for k in kube.node("worker-0")["metadata"]["labels"])
    assert "status" not in kube.get("nfd.openshift.io/v1", "NodeFeatureDiscovery", "nfd-instance", ns)


def test_synthetic_cluster_end_to_end(kube_factory):
    kube = kube_factory(profile="synthetic:nodes=100,gpus=4,nics=4,link_layer=mixed")
    assert len(kube.list("v1", "Node")) == 103
    kube.install("nfd")
    kube.create({"apiVersion": "nfd.openshift.io/v1", "kind": "NodeFeatureDiscovery",
                 "metadata": {"name": "nfd-instance", "namespace": "openshift-nfd"},
                 "spec": {"workerConfig": {"configData": "sources:\n  pci:\n    deviceClassWhitelist: ['02', '03']\n"
                                                         "    deviceLabelFields: [vendor]\n"}}})
    wait(lambda: len(kube.list("v1", "Node", label_selector="feature.node.kubernetes.io/pci-10de.present=true")) == 100,
         timeout=20, what="100 GPU nodes labelled")
    kube.install("gpu-operator-certified")
    kube.create(PACKAGES["gpu-operator-certified"]["almExamples"][0])
    wait(lambda: ((kube.get("nvidia.com/v1", "ClusterPolicy", "gpu-cluster-policy") or {}).get("status") or {}).get("state")
         == "ready", timeout=20, what="ClusterPolicy ready")
    workers = kube.list("v1", "Node", label_selector="node-role.kubernetes.io/worker")
    assert {n["status"]["allocatable"].get("nvidia.com/gpu") for n in workers} == {"4"}


# --------------------------------------------------------------------------------------------- OLM keeps resolving

def _sub_status(kube, ns, name):
    return (kube.get(V1A1, "Subscription", name, ns) or {}).get("status") or {}


def test_automatic_approval_upgrades_past_the_starting_csv(kube_factory):
    kube = kube_factory(profile="roce-lab@4.18.20")
    """resolver.go: once a CSV is installed, bundles that replace or skip it are candidates; Automatic installs
    the plan at once and the old CSV goes Replacing, Deleting and away (olm/operator.go)."""
    ns = "nvidia-gpu-operator"
    kube.namespace(ns)
    kube.operator_group(ns)
    kube.subscribe("gpu-operator-certified", ns, channel="v25.3", starting_csv="gpu-operator-certified.v25.3.1")
    head = "gpu-operator-certified.v25.3.4"
    wait(lambda: kube.csv_phase(ns, head) == "Succeeded", what="the channel head installed after the starting CSV")
    status = wait(lambda: _sub_status(kube, ns, "gpu-operator-certified").get("installedCSV") == head
                  and _sub_status(kube, ns, "gpu-operator-certified"), what="installedCSV follows")
    assert status["state"] == "AtLatestKnown" and status["currentCSV"] == head
    assert kube.get(V1A1, "ClusterServiceVersion", head, ns)["spec"]["replaces"] == "gpu-operator-certified.v25.3.1"
    wait(lambda: kube.get(V1A1, "ClusterServiceVersion", "gpu-operator-certified.v25.3.1", ns) is None,
         what="the replaced CSV deleted")
    plans = kube.list(V1A1, "InstallPlan", ns)
    assert sorted(p["spec"]["clusterServiceVersionNames"][0] for p in plans) == ["gpu-operator-certified.v25.3.1", head]


def test_manual_approval_leaves_the_upgrade_pending(kube_factory):
    kube = kube_factory(profile="roce-lab@4.18.20")
    ns = "nvidia-gpu-operator"
    kube.namespace(ns)
    kube.operator_group(ns)
    pinned = "gpu-operator-certified.v25.3.1"
    kube.subscribe("gpu-operator-certified", ns, channel="v25.3", approval="Manual", starting_csv=pinned)
    first = wait(lambda: _sub_status(kube, ns, "gpu-operator-certified").get("installPlanRef"), what="first plan")["name"]
    kube.patch(V1A1, "InstallPlan", first, {"spec": {"approved": True}}, ns)
    wait(lambda: kube.csv_phase(ns, pinned) == "Succeeded", what="pinned CSV")
    status = wait(lambda: _sub_status(kube, ns, "gpu-operator-certified").get("installPlanRef", {}).get("name") != first
                  and _sub_status(kube, ns, "gpu-operator-certified"), what="the upgrade plan")
    assert status["state"] == "UpgradePending" and status["installedCSV"] == pinned
    assert status["currentCSV"] == "gpu-operator-certified.v25.3.4"
    plan = kube.get(V1A1, "InstallPlan", status["installPlanRef"]["name"], ns)
    assert plan["spec"]["approved"] is False and plan["status"]["phase"] == "RequiresApproval"
    assert plan["spec"]["generation"] == 2
    time.sleep(0.3)
    assert kube.csv_phase(ns, pinned) == "Succeeded"
    assert kube.get(V1A1, "ClusterServiceVersion", "gpu-operator-certified.v25.3.4", ns) is None


def test_a_published_bundle_and_a_moved_default_channel_are_resolved(kube_factory):
    kube = kube_factory(profile="roce-lab@4.17.30")
    """A catalog update (registryPoll) changes the PackageManifest and OLM re-resolves: an empty spec.channel
    follows the default channel of the moment."""
    ns = "openshift-nfd"
    kube.install("nfd", ns)
    head = PACKAGES["nfd"]["channels"]["stable"][-1]
    assert _sub_status(kube, ns, "nfd")["installedCSV"] == head
    newer = "nfd.4.20.0-202512010000"
    kube.sim.update_catalog(publish=[{"package": "nfd", "channel": "stable", "csv": newer}])
    pm = kube.get("packages.operators.coreos.com/v1", "PackageManifest", "nfd", "openshift-marketplace")
    assert next(c for c in pm["status"]["channels"] if c["name"] == "stable")["currentCSV"] == newer
    wait(lambda: kube.csv_phase(ns, newer) == "Succeeded", what="the published bundle installed")

    gpu_ns = "nvidia-gpu-operator"
    kube.namespace(gpu_ns)
    kube.operator_group(gpu_ns)
    kube.subscribe("gpu-operator-certified", gpu_ns, approval="Manual", channel=False)  # no channel: today's default
    first = wait(lambda: _sub_status(kube, gpu_ns, "gpu-operator-certified").get("installPlanRef"), what="plan")["name"]
    kube.patch(V1A1, "InstallPlan", first, {"spec": {"approved": True}}, gpu_ns)
    wait(lambda: kube.csv_phase(gpu_ns, "gpu-operator-certified.v25.3.4") == "Succeeded", what="default channel head")
    time.sleep(0.3)
    assert _sub_status(kube, gpu_ns, "gpu-operator-certified")["state"] == "AtLatestKnown"
    kube.sim.update_catalog(publish=[{"package": "gpu-operator-certified", "channel": "v25.10",
                                      "csv": "gpu-operator-certified.v25.10.0"}],
                            default_channels={"gpu-operator-certified": "v25.10"})
    status = wait(lambda: _sub_status(kube, gpu_ns, "gpu-operator-certified").get("state") == "UpgradePending"
                  and _sub_status(kube, gpu_ns, "gpu-operator-certified"), what="upgrade offered on the new default")
    assert status["currentCSV"] == "gpu-operator-certified.v25.10.0"
    assert status["installedCSV"] == "gpu-operator-certified.v25.3.4"


def test_any_manual_subscription_makes_the_namespace_plans_manual(kube):
    """catalog/operator.go syncResolvingNamespace: one Manual Subscription makes every plan of the namespace Manual."""
    ns = "shared-operators"
    kube.namespace(ns)
    kube.operator_group(ns)
    kube.subscribe("nvidia-network-operator", ns, approval="Manual")
    wait(lambda: _sub_status(kube, ns, "nvidia-network-operator").get("installPlanRef"), what="manual plan")
    kube.subscribe("gpu-operator-certified", ns, approval="Automatic")
    ref = wait(lambda: _sub_status(kube, ns, "gpu-operator-certified").get("installPlanRef"), what="second plan")
    plan = kube.get(V1A1, "InstallPlan", ref["name"], ns)
    assert plan["spec"]["approval"] == "Manual" and plan["spec"]["approved"] is False


def test_catalog_update_over_http(kube):
    """The control endpoint the CLI and other processes use: a bad update is a 400, a good one shows at once."""
    from simulator.tests.conftest import Http

    http = Http(kube.sim)
    bad = http.post("/_sim/catalog", {"default_channels": {"nfd": "nope"}})
    assert bad.status_code == 400 and "no channel nope" in bad.text
    good = http.post("/_sim/catalog", {"publish": [{"package": "nfd", "channel": "fast", "csv": "nfd.4.21.0-202601010000"}],
                                       "default_channels": {"nfd": "fast"}})
    assert good.status_code == 200
    pm = kube.get("packages.operators.coreos.com/v1", "PackageManifest", "nfd", "openshift-marketplace")
    assert pm["status"]["defaultChannel"] == "fast"
    assert next(c for c in pm["status"]["channels"] if c["name"] == "fast")["currentCSV"] == "nfd.4.21.0-202601010000"


def test_a_bundle_that_cannot_be_pulled_blocks_resolution_then_times_out_as_olm_words_it(kube_factory):
    """BundleUnpacking (UnpackingInProgress) at once, BundleUnpackFailed after the unpack timeout, no InstallPlan;
    once the image can be pulled the install goes on and the conditions go away."""
    kube = kube_factory(profile="roce-lab", config={"olm_bundle_unpack_timeout_seconds": 0.5},
                        faults={"operator_faults": {"bundle_unpack_failure": {"nfd": {}}}})
    kube.namespace("openshift-nfd")
    kube.operator_group("openshift-nfd")
    kube.subscribe("nfd", "openshift-nfd")

    def condition(kind):
        return next((c for c in _sub_status(kube, "openshift-nfd", "nfd").get("conditions") or []
                     if c["type"] == kind and c["status"] == "True"), None)

    unpacking = wait(lambda: condition("BundleUnpacking"), what="unpacking")
    assert unpacking["reason"] == "UnpackingInProgress" and unpacking["message"].startswith("Bundle image pull failed.")
    failed = wait(lambda: condition("BundleUnpackFailed"), what="unpack timeout")
    assert failed["message"].startswith("Bundle unpacking failed - DeadlineExceeded: Job was active longer than specified deadline.")
    assert condition("BundleUnpacking") is None
    assert kube.list(V1A1, "InstallPlan", "openshift-nfd") == []
    kube.sim.faults.update({"replace": True, "operator_faults": {}})
    wait(lambda: kube.csv_phase("openshift-nfd") == "Succeeded", what="install once the image can be pulled")
    assert condition("BundleUnpackFailed") is None


def _driver_properties(kube):
    crd = kube.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", "clusterpolicies.nvidia.com")
    schema = next(v for v in crd["spec"]["versions"] if v["name"] == "v1")["schema"]["openAPIV3Schema"]
    return schema["properties"]["spec"]["properties"]["driver"]["properties"]


def test_the_installed_operator_version_brings_its_crds(kube_factory):
    kube = kube_factory(profile="roce-lab@4.17.30")
    """catalog/operator.go ExecutePlan applies the bundle's CRDs with its plan: v24.9.2's ClusterPolicy has no
    driver.kernelModuleType, so the API server prunes it (Strict refuses it); the upgrade to v25.3 brings it."""
    ns = "nvidia-gpu-operator"
    kube.install("gpu-operator-certified", ns, channel="v24.9")
    assert kube.csv_phase(ns, "gpu-operator-certified.v24.9.2") == "Succeeded"
    driver = _driver_properties(kube)
    assert "kernelModuleType" not in driver and "useOpenKernelModules" in driver
    policy = copy.deepcopy(PACKAGES["gpu-operator-certified"]["almExamples"][0])
    policy["metadata"]["name"] = "probe"
    policy["spec"]["driver"]["kernelModuleType"] = "open"
    created = kube.create(policy)
    assert "kernelModuleType" not in (created["spec"].get("driver") or {})
    kube.delete("nvidia.com/v1", "ClusterPolicy", "probe")

    kube.patch(V1A1, "Subscription", "gpu-operator-certified", {"spec": {"channel": "v25.3"}}, ns)
    wait(lambda: kube.csv_phase(ns, "gpu-operator-certified.v25.3.4") == "Succeeded", what="upgrade to v25.3.4")
    assert "kernelModuleType" in _driver_properties(kube)
    created = kube.create(policy)
    assert created["spec"]["driver"]["kernelModuleType"] == "open"


def test_crds_pinned_by_the_test_stay_whatever_version_installs(kube_factory):
    kube = kube_factory(profile="roce-lab@4.17.30", crd_refs={"gpu-operator": "v26.7.0"})
    kube.install("gpu-operator-certified", channel="v24.9")
    assert "kernelModuleType" in _driver_properties(kube)


def test_min_kube_version_keeps_the_csv_pending_as_olm_words_it(kube):
    """olm/requirements.go minKubeVersionStatus; olm/operator.go: Pending, RequirementsNotMet."""
    ns = "nvidia-network-operator"
    kube.namespace(ns)
    kube.operator_group(ns)
    future = "nvidia-network-operator.v99.1.0"
    kube.sim.update_catalog(publish=[{"package": "nvidia-network-operator", "channel": "v99.1", "csv": future,
                                      "bundle": {"minKubeVersion": "1.99.0"}}])
    pm = kube.get("packages.operators.coreos.com/v1", "PackageManifest", "nvidia-network-operator", "openshift-marketplace")
    assert next(c for c in pm["status"]["channels"] if c["name"] == "v99.1")["currentCSVDesc"]["minKubeVersion"] == "1.99.0"
    kube.subscribe("nvidia-network-operator", ns, channel="v99.1")
    csv = wait(lambda: (kube.get(V1A1, "ClusterServiceVersion", future, ns) or {}).get("status", {}).get("reason")
               == "RequirementsNotMet" and kube.get(V1A1, "ClusterServiceVersion", future, ns), what="requirements not met")
    server = kube.sim.profile.cluster.kubernetes_version
    assert csv["status"]["phase"] == "Pending" and csv["status"]["message"] == "one or more requirements couldn't be found"
    assert csv["status"]["requirementStatus"] == [{
        "group": "operators.coreos.com", "version": "v1alpha1", "kind": "ClusterServiceVersion", "name": future,
        "status": "PresentNotSatisfied",
        "message": "CSV version requirement not met: minKubeVersion (1.99.0) > server version (%s)" % server}]
    time.sleep(0.3)
    assert kube.csv_phase(ns, future) == "Pending"
    assert not kube.served("mellanox.com/v1alpha1", "NicClusterPolicy")


def test_an_openshift_version_sees_only_the_bundles_built_for_it(kube_factory):
    """Red Hat's index image of an OpenShift version holds the bundles whose com.redhat.openshift.versions admits it."""
    from simulator.catalog import Catalog, openshift_versions_include

    assert openshift_versions_include("v4.12-v4.17", "4.16") and not openshift_versions_include("v4.12-v4.17", "4.18")
    assert openshift_versions_include("v4.14", "4.22") and not openshift_versions_include("v4.14", "4.13")
    assert openshift_versions_include("=v4.16", "4.16") and not openshift_versions_include("=v4.16", "4.17")
    for minor in ("4.16", "4.18", "4.20", "4.22"):
        catalog = Catalog(openshift_minor=minor)
        for name, pkg in catalog.packages.items():
            assert pkg["channels"] and pkg["defaultChannel"] in pkg["channels"], (minor, name)
            for entries in pkg["channels"].values():
                assert entries and all(openshift_versions_include(catalog.bundle(e).get("openshiftVersions"), minor)
                                       for e in entries), (minor, name)
    # The package's default channel is the one its newest admitted bundle names.
    assert Catalog(openshift_minor="4.16").package("gpu-operator-certified")["defaultChannel"] == "v25.3"
    assert Catalog(openshift_minor="4.16").package("nvidia-network-operator")["defaultChannel"] == "v25.4"
    assert Catalog(openshift_minor="4.20").package("gpu-operator-certified")["channels"]["v26.7"] == ["gpu-operator-certified.v26.7.0"]
    assert "v24.9" not in Catalog(openshift_minor="4.18").package("gpu-operator-certified")["channels"]
    # No network operator bundle admits 4.22: the package is not in that index.
    assert Catalog(openshift_minor="4.22").package("nvidia-network-operator") is None
    kube = kube_factory(profile="roce-lab@4.16.40")
    listed = kube.list("packages.operators.coreos.com/v1", "PackageManifest", "openshift-marketplace")
    pms = {p["metadata"]["name"]: p["status"] for p in listed}
    assert pms["gpu-operator-certified"]["defaultChannel"] == "v25.3"
    assert sorted(c["name"] for c in pms["gpu-operator-certified"]["channels"]) == ["stable", "v24.9", "v25.3"]


def test_openshift_has_four_default_catalogs_and_an_idle_one_still_serves(kube_factory):
    """openshift/operator-marketplace defaults/; package-server registry.go keeps an IDLE source's packages and the
    catalog operator counts it healthy (subscription/reconciler.go)."""
    kube = kube_factory(profile="roce-lab", config={"catalog_source_states": {"certified-operators": "IDLE"}})
    sources = {c["metadata"]["name"]: c["spec"]["priority"] for c in kube.list(V1A1, "CatalogSource", "openshift-marketplace")}
    assert sources == {"redhat-operators": -100, "certified-operators": -200, "redhat-marketplace": -300,
                       "community-operators": -400}
    pm = kube.get("packages.operators.coreos.com/v1", "PackageManifest", "gpu-operator-certified", "openshift-marketplace")
    assert pm["status"]["catalogSource"] == "certified-operators"
    csv = kube.install("gpu-operator-certified")
    assert csv["status"]["phase"] == "Succeeded"
    health = _sub_status(kube, "nvidia-gpu-operator", "gpu-operator-certified")["catalogHealth"]
    assert all(h["healthy"] for h in health) and len(health) == 4


def test_a_disconnected_cluster_resolves_from_the_mirrored_catalog_its_admin_creates(kube_factory):
    """OperatorHub disableAllDefaultSources: no default catalog, no package; the mirror's CatalogSource (as oc-mirror
    writes it) connects and then serves every package (catalog/operator.go syncSourceState re-resolves)."""
    mirror = "cs-redhat-operator-index"
    kube = kube_factory(profile="roce-lab", config={"catalog_disable_default_sources": True, "catalog_mirror": mirror})
    assert kube.list(V1A1, "CatalogSource", "openshift-marketplace") == []
    assert kube.list("packages.operators.coreos.com/v1", "PackageManifest", "openshift-marketplace") == []
    kube.create({"apiVersion": V1A1, "kind": "CatalogSource", "metadata": {"name": mirror, "namespace": "openshift-marketplace"},
                 "spec": {"sourceType": "grpc", "image": "mirror.example:5000/redhat/redhat-operator-index:v4.20"}})
    wait(lambda: len(kube.list("packages.operators.coreos.com/v1", "PackageManifest", "openshift-marketplace")) == 4,
         what="the mirrored packages")
    source = kube.get(V1A1, "CatalogSource", mirror, "openshift-marketplace")
    assert source["status"]["connectionState"]["lastObservedState"] == "READY"
    pm = kube.get("packages.operators.coreos.com/v1", "PackageManifest", "nfd", "openshift-marketplace")
    assert pm["status"]["catalogSource"] == mirror
    csv = kube.install("nfd", source=mirror)
    assert csv["status"]["phase"] == "Succeeded"


def test_a_package_two_catalogs_hold_is_listed_once_per_catalog(kube_factory):
    """operator-lifecycle-manager v0.46.0 pkg/package-server/provider/registry.go: the cache is keyed by catalog,
    namespace and name (PackageManifestKeyFunc), so LIST returns one PackageManifest per catalog that holds the package,
    each labelled catalog/catalog-namespace from its CatalogSource (newPackageManifest); a label-selected LIST keeps
    the matching ones; GET by name answers the first entry of that name in the list (Get), here the lowest catalog
    name; storage/reststorage.go filters a LIST by a metadata.name field selector."""
    mirror = "cs-redhat-operator-index"
    kube = kube_factory(profile="roce-lab", config={"catalog_package_sources": {"nfd": ["redhat-operators", mirror]}})
    pm_api = "packages.operators.coreos.com/v1"
    listed = [p for p in kube.list(pm_api, "PackageManifest", "openshift-marketplace") if p["metadata"]["name"] == "nfd"]
    assert [p["status"]["catalogSource"] for p in listed] == ["redhat-operators"]  # the mirror's CatalogSource is not there yet
    kube.create({"apiVersion": V1A1, "kind": "CatalogSource", "metadata": {"name": mirror, "namespace": "openshift-marketplace"},
                 "spec": {"sourceType": "grpc", "image": "mirror.example:5000/redhat/redhat-operator-index:v4.20"}})
    wait(lambda: len([p for p in kube.list(pm_api, "PackageManifest", "openshift-marketplace")
                      if p["metadata"]["name"] == "nfd"]) == 2, what="nfd listed twice")
    listed = [p for p in kube.list(pm_api, "PackageManifest", "openshift-marketplace") if p["metadata"]["name"] == "nfd"]
    assert sorted((p["status"]["catalogSource"], p["metadata"]["labels"]["catalog"], p["status"]["catalogSourceNamespace"],
                   p["metadata"]["labels"]["catalog-namespace"]) for p in listed) == [
        (mirror, mirror, "openshift-marketplace", "openshift-marketplace"),
        ("redhat-operators", "redhat-operators", "openshift-marketplace", "openshift-marketplace")]
    assert listed[0]["status"]["channels"] == listed[1]["status"]["channels"]
    # The other packages stay in their one catalog.
    assert len([p for p in kube.list(pm_api, "PackageManifest", "openshift-marketplace") if p["metadata"]["name"] == "sriov-network-operator"]) == 1
    by_label = kube.list(pm_api, "PackageManifest", "openshift-marketplace", label_selector="catalog=redhat-operators")
    assert [p["status"]["catalogSource"] for p in by_label if p["metadata"]["name"] == "nfd"] == ["redhat-operators"]
    by_name = kube.res(pm_api, "PackageManifest").get(namespace="openshift-marketplace", field_selector="metadata.name=nfd").to_dict()
    assert len(by_name["items"]) == 2
    assert kube.get(pm_api, "PackageManifest", "nfd", "openshift-marketplace")["status"]["catalogSource"] == mirror
    # OLM resolves from whichever of them the Subscription names.
    csv = kube.install("nfd", source="redhat-operators")
    assert csv["status"]["phase"] == "Succeeded"
    plan = kube.list(V1A1, "InstallPlan", "openshift-nfd")[0]
    assert plan["status"]["catalogSources"] == ["redhat-operators"]
    # A catalog that stops serving takes only its own entry away (registry.go gcPackages by catalog key).
    kube.sim.store.patch_status(kube.sim.store.find_type(OLM, "v1alpha1", "catalogsources"), "openshift-marketplace",
                                mirror, {"connectionState": {"lastObservedState": "TRANSIENT_FAILURE"}})
    wait(lambda: [p["status"]["catalogSource"] for p in kube.list(pm_api, "PackageManifest", "openshift-marketplace")
                  if p["metadata"]["name"] == "nfd"] == ["redhat-operators"], what="the mirror's nfd entry gone")


def test_subscriptions_resolved_together_share_one_install_plan(kube):
    """syncResolvingNamespace resolves a namespace at once: Subscriptions that need an install then get one
    InstallPlan listing every CSV, owned by each of them; approving it installs all of them."""
    ns = "shared-operators"
    kube.namespace(ns)
    kube.subscribe("nvidia-network-operator", ns, approval="Manual")
    kube.subscribe("gpu-operator-certified", ns, approval="Manual")
    kube.operator_group(ns)  # resolution starts once the namespace has its OperatorGroup: both are pending then
    ref = wait(lambda: _sub_status(kube, ns, "gpu-operator-certified").get("installPlanRef"), what="plan")
    assert _sub_status(kube, ns, "nvidia-network-operator")["installPlanRef"]["name"] == ref["name"]
    plan = kube.get(V1A1, "InstallPlan", ref["name"], ns)
    assert sorted(plan["spec"]["clusterServiceVersionNames"]) == ["gpu-operator-certified.v26.7.0", "nvidia-network-operator.v26.4.1"]
    assert sorted(o["name"] for o in plan["metadata"]["ownerReferences"]) == ["gpu-operator-certified", "nvidia-network-operator"]
    assert len(kube.list(V1A1, "InstallPlan", ns)) == 1
    kube.patch(V1A1, "InstallPlan", ref["name"], {"spec": {"approved": True}}, ns)
    wait(lambda: kube.csv_phase(ns, "gpu-operator-certified.v26.7.0") == "Succeeded"
         and kube.csv_phase(ns, "nvidia-network-operator.v26.4.1") == "Succeeded", what="both CSVs")
    assert _sub_status(kube, ns, "gpu-operator-certified")["installedCSV"] == "gpu-operator-certified.v26.7.0"
    assert _sub_status(kube, ns, "nvidia-network-operator")["installedCSV"] == "nvidia-network-operator.v26.4.1"


def test_a_plan_that_cannot_execute_is_retried_then_fails_as_olm_words_it(kube_factory):
    """catalog/operator.go transitionInstallPlanState: execution errors are retried ("retrying execution due to
    error: ...") until --install-plan-retry-timeout, then the plan is Failed (Installed=False, InstallComponentFailed)
    and the Subscription says InstallPlanFailed."""
    error = 'error creating csv gpu-operator-certified.v26.7.0: admission webhook "example" denied the request'
    kube = kube_factory(profile="roce-lab", faults={"operator_faults": {"installplan_failure": {"gpu-operator-certified": error}}},
                        config={"olm_installplan_retry_timeout_seconds": 1.0})
    ns = "nvidia-gpu-operator"
    kube.namespace(ns)
    kube.operator_group(ns)
    kube.subscribe("gpu-operator-certified", ns)
    ref = wait(lambda: _sub_status(kube, ns, "gpu-operator-certified").get("installPlanRef"), what="plan")
    retrying = wait(lambda: (kube.get(V1A1, "InstallPlan", ref["name"], ns).get("status") or {}).get("message", "")
                    .startswith("retrying") and kube.get(V1A1, "InstallPlan", ref["name"], ns), what="retrying")
    assert retrying["status"]["phase"] == "Installing"
    assert retrying["status"]["message"] == "retrying execution due to error: " + error
    plan = wait(lambda: kube.get(V1A1, "InstallPlan", ref["name"], ns)["status"]["phase"] == "Failed"
                and kube.get(V1A1, "InstallPlan", ref["name"], ns), what="plan Failed")
    installed = next(c for c in plan["status"]["conditions"] if c["type"] == "Installed")
    assert (installed["status"], installed["reason"], installed["message"]) == ("False", "InstallComponentFailed", error)
    cond = wait(lambda: _condition(kube.get(V1A1, "Subscription", "gpu-operator-certified", ns), "InstallPlanFailed"),
                what="InstallPlanFailed")
    assert cond["status"] == "True" and error in cond["message"]
    assert kube.csv_phase(ns) is None


def test_a_further_package_in_the_catalog_is_served_and_installed_like_the_others(kube_factory):
    """Test harness (config catalog_extra_packages): a package given by a test is a PackageManifest of its catalog and
    OLM installs it through the same Subscription -> InstallPlan -> CSV path."""
    kube = kube_factory(profile="roce-lab", config={"catalog_extra_packages": {
        "fifth-operator": {"catalogs": ["redhat-operators"], "channels": {"stable": ["fifth-operator.v1.0.0"]}}}})
    pm = kube.get("packages.operators.coreos.com/v1", "PackageManifest", "fifth-operator", "openshift-marketplace")
    assert pm["status"]["catalogSource"] == "redhat-operators" and pm["status"]["defaultChannel"] == "stable"
    kube.namespace("fifth")
    kube.operator_group("fifth")
    kube.subscribe("fifth-operator", "fifth")
    wait(lambda: kube.csv_phase("fifth") == "Succeeded", what="fifth-operator CSV Succeeded")
