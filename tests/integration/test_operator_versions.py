"""Operator versions as the catalog of each OpenShift version holds them (docs/support.md): the oldest supported
GPU Operator converges with the ClusterPolicy fields it knows, a deliberate upgrade to a newer one converges and
re-runs with no write, a field the installed version does not know is refused before any write, and a channel the
cluster's catalog does not hold is refused by preflight."""

import json
import time

import yaml

from site_support import example, objects, run_playbook

from test_olm_operator import OLM_V1A1, OPERATORS, get, items, kube, run_olm

OLDEST = {"nvidia_gpu_operator_channel": "v24.9", "nvidia_gpu_operator_install_plan_approval": "Manual",
          "nvidia_gpu_operator_starting_csv": "gpu-operator-certified.v24.9.2",
          "nvidia_network_operator_channel": "v25.1", "nvidia_network_operator_install_plan_approval": "Manual",
          "nvidia_network_operator_starting_csv": "nvidia-network-operator.v25.1.0"}
NEWER = {"nvidia_gpu_operator_channel": "v25.3", "nvidia_gpu_operator_install_plan_approval": "Manual",
         "nvidia_gpu_operator_starting_csv": "gpu-operator-certified.v25.3.4",
         "nvidia_network_operator_channel": "v25.4", "nvidia_network_operator_install_plan_approval": "Manual",
         "nvidia_network_operator_starting_csv": "nvidia-network-operator.v25.4.0"}


def cluster_policy_driver(sim):
    policies = objects(sim, "nvidia.com/v1", "ClusterPolicy")
    assert len(policies) == 1
    return policies[0]["spec"]["driver"]


def nic_cluster_policy_images(sim):
    """The component images follow the installed Network Operator release (render/releases.py)."""
    spec = objects(sim, "mellanox.com/v1alpha1", "NicClusterPolicy")[0]["spec"]
    # Pinned components carry tag@sha256:<digest> (render/releases.py): the tag says which release it is.
    return dict((key, spec[key]["version"].split("@", 1)[0]) for key in ("ofedDriver", "rdmaSharedDevicePlugin"))


def installed(sim, package, namespace):
    return get(kube(sim), OLM_V1A1, "Subscription", package, namespace)["status"]["installedCSV"]


def test_oldest_versions_converge_then_upgrade_to_newer_ones_with_no_write_on_reruns(sim_factory):
    sim = sim_factory(profile="mixed-lab@4.17.30")  # OpenShift 4.17: GPU Operator v24.9 and v25.3, Network Operator v25.1 to v26.4
    config = "@" + example("shared_device/roce")
    first = run_playbook(sim, "-e", config, "-e", json.dumps(OLDEST))
    assert first.rc == 0, first.output[-4000:]
    assert installed(sim, "gpu-operator-certified", "nvidia-gpu-operator") == "gpu-operator-certified.v24.9.2"
    assert installed(sim, "nvidia-network-operator", "nvidia-network-operator") == "nvidia-network-operator.v25.1.0"
    driver = cluster_policy_driver(sim)
    # v24.9's ClusterPolicy has no kernelModuleType: DMA-BUF asks for the open modules the way v24.9 knows.
    assert driver.get("useOpenKernelModules") is True and "kernelModuleType" not in driver
    assert nic_cluster_policy_images(sim) == {"ofedDriver": "25.01-0.6.0.0-0", "rdmaSharedDevicePlugin": "v1.5.2"}
    again = run_playbook(sim, "-e", config, "-e", json.dumps(OLDEST), "-e", "gpudirect_always_converge=true")
    assert again.rc == 0 and again.writes == 0, (again.writes, again.output[-3000:])

    upgrade = run_playbook(sim, "-e", config, "-e", json.dumps(NEWER))
    assert upgrade.rc == 0, upgrade.output[-4000:]
    assert installed(sim, "gpu-operator-certified", "nvidia-gpu-operator") == "gpu-operator-certified.v25.3.4"
    assert installed(sim, "nvidia-network-operator", "nvidia-network-operator") == "nvidia-network-operator.v25.4.0"
    driver = cluster_policy_driver(sim)
    assert driver.get("kernelModuleType") == "open" and "useOpenKernelModules" not in driver
    assert nic_cluster_policy_images(sim) == {"ofedDriver": "25.04-0.6.1.0-2", "rdmaSharedDevicePlugin": "v1.5.3"}
    rerun = run_playbook(sim, "-e", config, "-e", json.dumps(NEWER), "-e", "gpudirect_always_converge=true")
    assert rerun.rc == 0 and rerun.writes == 0, (rerun.writes, rerun.output[-3000:])


def test_a_field_the_installed_operator_does_not_know_is_refused_before_any_write(sim_factory, tmp_path):
    from simulator.catalog import PACKAGES
    from site_support import run_test_playbook

    sim = sim_factory(profile="roce-lab@4.17.30")
    results, _took = run_olm(sim, tmp_path, [dict(OPERATORS[3], channel="v24.9")])
    assert results[0]["installed_csv"] == "gpu-operator-certified.v24.9.2", results
    policy = json.loads(json.dumps(PACKAGES["gpu-operator-certified"]["almExamples"][0]))
    policy["spec"]["driver"]["kernelModuleType"] = "open"
    mark = sim.mark()
    results = run_test_playbook(sim, tmp_path, "apply_and_wait.yml", {"steps": [
        {"manifests": [policy], "schema_owner": "gpu-operator-certified.v24.9.2"}]})
    assert results[0]["failed"] is True
    text = results[0]["msg"]
    assert "ClusterPolicy gpu-cluster-policy: spec.driver.kernelModuleType is not declared by the nvidia.com/v1 schema" \
        in text, text
    assert "installed with gpu-operator-certified.v24.9.2" in text
    assert sim.count(writes_only=True, since=mark) == 0


def test_preflight_refuses_a_channel_the_clusters_catalog_does_not_hold(sim_factory):
    sim = sim_factory(profile="mixed-lab")  # OpenShift 4.20: GPU Operator v26.7 only
    run = run_playbook(sim, "-e", "@" + example("shared_device/roce"), "-e", json.dumps(OLDEST))
    text = " ".join(run.output.split())
    assert run.rc != 0 and "Preflight found" in text, text[-3000:]
    assert "Channel v24.9 of package gpu-operator-certified is not in the catalog of this OpenShift 4.20.8 cluster" in text
    assert "available: v26.7, stable" in text
    assert "CSV gpu-operator-certified.v24.9.2 (starting_csv of gpu-operator-certified) is not in the catalog" in text
    assert run.writes == 0 and run.dry_run_writes == 0


def test_render_lists_the_operand_images_to_mirror(tmp_path):
    import os
    import subprocess

    from site_support import ROOT

    out = tmp_path / "out"
    proc = subprocess.run(["ansible-playbook", "playbooks/render.yml", "-e", "@" + example("shared_device/infiniband"),
                           "-e", "render_dir=%s" % out, "-e", '{"gpudirect_rdma_image_pull_secrets": ["mirror-pull"]}'],
                          cwd=ROOT, env=dict(os.environ), capture_output=True, text=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    images = (out / "images.txt").read_text().split()
    assert images == sorted(set(images)) and len(images) == 3, images
    assert any("/doca-driver:" in i for i in images) and any("/k8s-rdma-shared-dev-plugin:" in i for i in images)
    assert any("/ipoib-cni:" in i for i in images)
    policy = next(p for p in out.glob("*-nicclusterpolicy-*.yaml")).read_text()
    assert policy.count("- mirror-pull") == 3
    # the pod template of a job on the rails (issue 17): one GPU and the one rail of this configuration
    pod = yaml.safe_load((out / "workload-rail-job-pod.yaml").read_text())
    assert pod["spec"]["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": "1", "rdma/rdma_shared_device_ib": "1"}


def test_render_writes_the_olm_objects_and_olm_installs_the_operators_from_them(sim_factory, tmp_path):
    """Issue 13: render.yml also writes each operator's Namespace, OperatorGroup and Subscription (role settings
    honoured); applied to a cluster in file order, OLM installs the operators from them."""
    import os
    import subprocess

    import yaml

    from simulator.controllers.testing import wait
    from site_support import ROOT

    out = tmp_path / "out"
    proc = subprocess.run(["ansible-playbook", "playbooks/render.yml", "-e", "@" + example("shared_device/roce"),
                           "-e", "render_dir=%s" % out, "-e", "nvidia_gpu_operator_install_plan_approval=Automatic",
                           # Applied as files, nothing approves a Manual plan (every operator's default): Automatic here.
                           "-e", "nfd_install_plan_approval=Automatic", "-e", "sriov_network_operator_install_plan_approval=Automatic",
                           "-e", "nvidia_network_operator_install_plan_approval=Automatic", "-e", "nfd_channel=stable"],
                          cwd=ROOT, env=dict(os.environ), capture_output=True, text=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    files = sorted(p.name for p in out.glob("*.yaml"))
    # Kinds and names in file-name order (the apply order), whatever the files' numbers are.
    olm_kinds = ("namespace", "operatorgroup", "subscription")
    olm_files = [f for f in files if f.split("-")[1] in olm_kinds]
    assert olm_files == files[:len(olm_files)], files  # the operators come first
    assert [f.split("-", 1)[1] for f in olm_files] == [
        "namespace-openshift-nfd.yaml", "operatorgroup-openshift-nfd.yaml", "subscription-nfd.yaml",
        "namespace-openshift-sriov-network-operator.yaml", "operatorgroup-openshift-sriov-network-operator.yaml",
        "subscription-sriov-network-operator.yaml", "namespace-nvidia-network-operator.yaml",
        "operatorgroup-nvidia-network-operator.yaml", "subscription-nvidia-network-operator.yaml",
        "namespace-nvidia-gpu-operator.yaml", "operatorgroup-nvidia-gpu-operator.yaml",
        "subscription-gpu-operator-certified.yaml"], files
    (nfd_file,) = out.glob("*-subscription-nfd.yaml")
    nfd = yaml.safe_load(nfd_file.read_text())
    assert nfd["spec"] == {"name": "nfd", "source": "redhat-operators", "sourceNamespace": "openshift-marketplace",
                           "installPlanApproval": "Automatic", "channel": "stable"}
    (gpu_file,) = out.glob("*-subscription-gpu-operator-certified.yaml")
    gpu = yaml.safe_load(gpu_file.read_text())
    assert gpu["spec"]["source"] == "certified-operators" and "channel" not in gpu["spec"]

    sim = sim_factory(profile="mixed-lab")
    client = sim.dynamic_client()
    for name in olm_files:
        manifest = yaml.safe_load((out / name).read_text())
        resource = client.resources.get(api_version=manifest["apiVersion"], kind=manifest["kind"])
        resource.create(body=manifest, namespace=manifest["metadata"].get("namespace"))
    csv = client.resources.get(api_version="operators.coreos.com/v1alpha1", kind="ClusterServiceVersion")
    for namespace in ("openshift-nfd", "openshift-sriov-network-operator", "nvidia-network-operator", "nvidia-gpu-operator"):
        # A CSV OLM has just created has no status yet.
        wait(lambda: [(c.get("status") or {}).get("phase") for c in csv.get(namespace=namespace).to_dict()["items"]
                      if not (c["metadata"].get("labels") or {}).get("olm.copiedFrom")] == ["Succeeded"],
             timeout=120, what="CSV Succeeded in %s" % namespace)

    bad = subprocess.run(["ansible-playbook", "playbooks/render.yml", "-e", "@" + example("shared_device/roce"),
                          "-e", "render_dir=%s" % (tmp_path / "bad"), "-e", "nfd_install_plan_approval=Sometimes"],
                         cwd=ROOT, env=dict(os.environ), capture_output=True, text=True, check=False, timeout=300)
    assert bad.returncode != 0
    assert "nfd_install_plan_approval: 'Sometimes' is not Automatic or Manual" in bad.stdout, bad.stdout[-3000:]


def test_upgrade_playbook_plans_then_upgrades_exactly_what_olm_offers_and_reports_it(sim_factory, tmp_path):
    """playbooks/upgrade.yml: without approval it only shows from -> to, operand images and the nodes whose drivers
    reload (0 writes); approved, it upgrades in order, rolls the operands to the new releases, writes a report, and a
    re-run finds nothing more to do."""
    import glob
    import os

    sim = sim_factory(profile="mixed-lab@4.17.30")
    config = "@" + example("shared_device/roce")
    manual = {"nvidia_network_operator_install_plan_approval": "Manual", "nvidia_network_operator_channel": "stable"}
    pins = dict(manual, nvidia_gpu_operator_channel="v25.3", nvidia_gpu_operator_starting_csv="gpu-operator-certified.v25.3.1",
                nvidia_network_operator_starting_csv="nvidia-network-operator.v25.1.0")
    first = run_playbook(sim, "-e", config, "-e", json.dumps(pins))
    assert first.rc == 0, first.output[-4000:]
    env = {"GPUDIRECT_ARTIFACTS_DIR": str(tmp_path / "artifacts")}

    plan = run_playbook(sim, "-e", config, "-e", json.dumps(manual), playbook="playbooks/upgrade.yml", env=env)
    text = " ".join(plan.output.split())
    assert plan.rc == 0, plan.output[-4000:]
    assert "nvidia-network-operator in nvidia-network-operator: nvidia-network-operator.v25.1.0 -> nvidia-network-operator.v26.4.1" in text
    assert "gpu-operator-certified in nvidia-gpu-operator: gpu-operator-certified.v25.3.1 -> gpu-operator-certified.v25.3.4" in text
    assert "nvcr.io/nvidia/mellanox/doca-driver:doca3.4.1-26.04-1.1.0.0-1" in text  # the new release's DOCA driver
    assert "GPU driver reloads on: 2 node(s): nvd-srv-32" in text and "NIC driver reloads on:" in text  # both mixed-lab workers have GPUs
    assert "run again with -e gpudirect_upgrade_approve=true" in text
    assert plan.writes == 0 and plan.dry_run_writes == 0
    assert installed(sim, "gpu-operator-certified", "nvidia-gpu-operator") == "gpu-operator-certified.v25.3.1"

    approved = run_playbook(sim, "-e", config, "-e", json.dumps(manual), "-e", "gpudirect_upgrade_approve=true",
                            playbook="playbooks/upgrade.yml", env=env)
    assert approved.rc == 0, approved.output[-4000:]
    assert installed(sim, "gpu-operator-certified", "nvidia-gpu-operator") == "gpu-operator-certified.v25.3.4"
    assert installed(sim, "nvidia-network-operator", "nvidia-network-operator") == "nvidia-network-operator.v26.4.1"
    assert nic_cluster_policy_images(sim) == {"ofedDriver": "doca3.4.1-26.04-1.1.0.0-1",
                                              "rdmaSharedDevicePlugin": "network-operator-v26.4.1"}
    reports = glob.glob(os.path.join(str(tmp_path / "artifacts"), "*", "upgrade-*.json"))
    assert len(reports) == 1, reports
    report = json.load(open(reports[0]))
    assert sorted((o["package"], o["from"], o["installed_now"], o["done"]) for o in report["operators"]) == [
        ("gpu-operator-certified", "gpu-operator-certified.v25.3.1", "gpu-operator-certified.v25.3.4", True),
        ("nvidia-network-operator", "nvidia-network-operator.v25.1.0", "nvidia-network-operator.v26.4.1", True)]
    assert report["keep_these_pins"] == {"nvidia_gpu_operator_starting_csv": "gpu-operator-certified.v25.3.4",
                                         "nvidia_network_operator_starting_csv": "nvidia-network-operator.v26.4.1"}

    again = run_playbook(sim, "-e", config, "-e", json.dumps(manual), "-e", "gpudirect_upgrade_approve=true",
                         playbook="playbooks/upgrade.yml", env=env)
    assert again.rc == 0 and again.writes == 0, again.output[-3000:]
    assert "No operator upgrade is offered" in again.output
    kept = dict(manual, nvidia_gpu_operator_channel="v25.3", **report["keep_these_pins"])
    rerun = run_playbook(sim, "-e", config, "-e", json.dumps(kept), "-e", "gpudirect_always_converge=true")
    assert rerun.rc == 0 and rerun.writes == 0, (rerun.writes, rerun.output[-3000:])


def test_the_first_install_writes_its_channels_and_csvs_as_inventory_pins(sim_factory, tmp_path):
    import yaml

    sim = sim_factory(profile="mixed-lab")
    pins_file = tmp_path / "pins.yml"
    first = run_playbook(sim, "-e", "@" + example("shared_device/roce"), "-e", "gpudirect_pins_file=%s" % pins_file)
    assert first.rc == 0, first.output[-4000:]
    pins = yaml.safe_load(pins_file.read_text())
    assert oct(pins_file.stat().st_mode & 0o777) == "0o600"
    # Every operator (Manual by default, issue 34) is pinned to what OLM resolved.
    assert pins["nvidia_gpu_operator_channel"] == "v26.7"
    assert pins["nvidia_gpu_operator_starting_csv"] == "gpu-operator-certified.v26.7.0"
    assert pins["nvidia_gpu_operator_install_plan_approval"] == "Manual"
    assert pins["nvidia_network_operator_channel"] == "stable"
    assert pins["nvidia_network_operator_starting_csv"] == "nvidia-network-operator.v26.4.1"
    assert pins["nfd_channel"] == "stable" and pins["sriov_network_operator_channel"] == "stable"
    assert pins["nfd_starting_csv"].startswith("nfd.") and pins["sriov_network_operator_starting_csv"].startswith("sriov-network-operator.")
    assert all(pins["%s_install_plan_approval" % role] == "Manual"
               for role in ("nfd", "sriov_network_operator", "nvidia_network_operator", "nvidia_gpu_operator"))
    again = run_playbook(sim, "-e", "@" + example("shared_device/roce"), "-e", "@%s" % pins_file,
                         "-e", "gpudirect_always_converge=true")
    assert again.rc == 0 and again.writes == 0, (again.writes, again.output[-3000:])


def test_a_disconnected_install_from_a_mirrored_catalog_converges(sim_factory):
    """Default catalogs disabled, one mirrored index (docs/disconnected.md): preflight names what is missing until the
    mirror's CatalogSource exists; then every operator comes from it and a re-run writes nothing."""
    mirror = "cs-redhat-operator-index"
    sim = sim_factory(profile="mixed-lab", config={"catalog_disable_default_sources": True, "catalog_mirror": mirror})
    sources = {"%s_source" % role: mirror for role in ("nfd", "sriov_network_operator", "nvidia_network_operator", "nvidia_gpu_operator")}
    settings = dict(sources, gpudirect_rdma_image_pull_secrets=["mirror-pull"])
    config = "@" + example("shared_device/roce")
    before = run_playbook(sim, "-e", config, "-e", json.dumps(settings))
    assert before.rc != 0 and before.writes == 0
    assert "Package nfd is not in any catalog in openshift-marketplace" in " ".join(before.output.split())
    kube(sim).resources.get(api_version=OLM_V1A1, kind="CatalogSource").create(
        namespace="openshift-marketplace",
        body={"apiVersion": OLM_V1A1, "kind": "CatalogSource", "metadata": {"name": mirror, "namespace": "openshift-marketplace"},
              "spec": {"sourceType": "grpc", "image": "mirror.example:5000/redhat/redhat-operator-index:v4.20"}})
    first = run_playbook(sim, "-e", config, "-e", json.dumps(settings))
    assert first.rc == 0, first.output[-4000:]
    subscriptions = objects(sim, OLM_V1A1, "Subscription")
    assert len(subscriptions) == 4 and {s["spec"]["source"] for s in subscriptions} == {mirror}
    policy = objects(sim, "mellanox.com/v1alpha1", "NicClusterPolicy")[0]["spec"]
    assert policy["ofedDriver"]["imagePullSecrets"] == ["mirror-pull"]
    again = run_playbook(sim, "-e", config, "-e", json.dumps(settings), "-e", "gpudirect_always_converge=true")
    assert again.rc == 0 and again.writes == 0, (again.writes, again.output[-3000:])


def _create_mirror(sim, mirror, packages):
    """The mirror's CatalogSource, as its admin creates it; returns once the package server lists ``packages`` twice."""
    client = kube(sim)
    client.resources.get(api_version=OLM_V1A1, kind="CatalogSource").create(
        namespace="openshift-marketplace",
        body={"apiVersion": OLM_V1A1, "kind": "CatalogSource", "metadata": {"name": mirror, "namespace": "openshift-marketplace"},
              "spec": {"sourceType": "grpc", "image": "mirror.example:5000/redhat/redhat-operator-index:v4.20"}})
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        names = [p["metadata"]["name"] for p in items(client, "packages.operators.coreos.com/v1", "PackageManifest", "openshift-marketplace")]
        if all(names.count(package) == 2 for package in packages):
            return
        time.sleep(0.1)
    raise AssertionError("the mirror's packages were never listed: %s" % names)


def test_a_package_two_catalogs_list_installs_from_the_configured_one_and_reruns_in_sync(sim_factory):
    """A mirror beside the default catalogs (docs/disconnected.md): the package server lists nfd and the SR-IOV operator
    once per catalog under one name (operator-lifecycle-manager pkg/package-server/provider/registry.go). Preflight
    names the variable to set, before any write, when no source decides or the configured one does not list the
    package; with the sources set every operator comes from its catalog, and re-runs find the cluster in sync, also
    with the sources left empty again (the Subscriptions then decide)."""
    mirror = "cs-redhat-operator-index"
    sim = sim_factory(profile="mixed-lab", config={"catalog_package_sources": {
        "nfd": ["redhat-operators", mirror], "sriov-network-operator": ["redhat-operators", mirror]}})
    _create_mirror(sim, mirror, ("nfd", "sriov-network-operator"))
    config = "@" + example("shared_device/roce")
    undecided = run_playbook(sim, "-e", config, "-e", json.dumps({"nfd_source": mirror, "nvidia_gpu_operator_source": mirror}))
    text = " ".join(undecided.output.split())
    assert undecided.rc != 0 and "Preflight found 2 problem(s)" in text, text[-4000:]
    assert ("Package sriov-network-operator is listed by 2 catalogs (openshift-marketplace/%s, openshift-marketplace/redhat-operators)"
            " and sriov_network_operator_source is empty" % mirror) in text
    assert "Set sriov_network_operator_source to one of them (and sriov_network_operator_source_namespace to its namespace" in text
    assert ("Package gpu-operator-certified is not in CatalogSource %s (nvidia_gpu_operator_source=%s); the catalogs that list it "
            "are openshift-marketplace/certified-operators. Set nvidia_gpu_operator_source to one of them" % (mirror, mirror)) in text
    assert undecided.writes == 0 and undecided.dry_run_writes == 0

    sources = {"nfd_source": mirror, "sriov_network_operator_source": "redhat-operators"}
    first = run_playbook(sim, "-e", config, "-e", json.dumps(sources))
    assert first.rc == 0, first.output[-4000:]
    subscriptions = dict((s["spec"]["name"], s["spec"]["source"]) for s in objects(sim, OLM_V1A1, "Subscription"))
    assert subscriptions == {"nfd": mirror, "sriov-network-operator": "redhat-operators",
                             "nvidia-network-operator": "certified-operators", "gpu-operator-certified": "certified-operators"}
    for settings in (sources, {}):
        again = run_playbook(sim, "-e", config, "-e", json.dumps(settings))
        assert again.rc == 0 and again.changed == 0 and again.writes == 0, (settings, again.writes, again.output[-4000:])
        assert "Nothing written: the cluster already matched the plan." in " ".join(again.output.split())


def test_a_plan_that_would_also_install_another_operator_is_left_unapproved(sim_factory, tmp_path):
    """Two Manual operators subscribed in one namespace before OLM resolved it share one InstallPlan; the module
    approves only a plan that installs its own CSV alone, and says why."""
    sim = sim_factory(profile="roce-lab")
    client = kube(sim)
    ns = "shared-operators"
    client.resources.get(api_version="v1", kind="Namespace").create(body={"metadata": {"name": ns}})
    subscriptions = client.resources.get(api_version=OLM_V1A1, kind="Subscription")
    subscriptions.create(namespace=ns, body={"metadata": {"name": "nvidia-network-operator", "namespace": ns}, "spec": {
        "name": "nvidia-network-operator", "channel": "stable", "source": "certified-operators",
        "sourceNamespace": "openshift-marketplace", "installPlanApproval": "Manual"}})
    results, _took = run_olm(sim, tmp_path, [dict(OPERATORS[3], namespace=ns, install_plan_approval="Manual", failure_grace_period=3,
                                                  wait_timeout=60)])
    result = results[0]
    assert result["failed"] is True, result
    assert "would install gpu-operator-certified.v26.7.0 together with nvidia-network-operator.v26.4.1" in result["msg"]
    plans = client.resources.get(api_version=OLM_V1A1, kind="InstallPlan").get(namespace=ns).to_dict()["items"]
    assert len(plans) == 1 and plans[0]["spec"]["approved"] is False


def test_an_install_plan_that_fails_fails_the_task_within_the_grace_period_quoting_olm(sim_factory, tmp_path):
    error = 'error creating csv gpu-operator-certified.v26.7.0: admission webhook "example" denied the request'
    sim = sim_factory(profile="roce-lab", faults={"operator_faults": {"installplan_failure": {"gpu-operator-certified": error}}},
                      config={"olm_installplan_retry_timeout_seconds": 1.0})
    results, took = run_olm(sim, tmp_path, [dict(OPERATORS[3], install_plan_approval="Automatic", failure_grace_period=3,
                                                 wait_timeout=300)])
    result = results[0]
    assert result["failed"] is True, result
    assert "InstallPlanFailed" in result["msg"] and error in result["msg"], result["msg"]
    assert took < 120
