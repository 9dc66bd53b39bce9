"""site.yml end to end on the simulator: the six configurations, re-runs, check mode, method switches."""

import json
import os
import re

import pytest
import yaml

from ansible_collections.gpudirect.openshift.plugins.module_utils.render.plan import render_all
from ansible_collections.gpudirect.openshift.tests.configurations import CONFIGURATIONS

from simulator.controllers.seed import node_pool
from simulator.controllers.testing import Kube, wait
from site_support import ROOT, allocatable, example, objects, run_playbook

MANAGED = "app.kubernetes.io/managed-by"
# What a facts run writes and deletes again: its pods and ConfigMap (the namespace, service account and SCC come
# from deploy/rbac/workloads.yml, applied once by an administrator).
NETWORK_KINDS = (
    ("mellanox.com/v1alpha1", "MacvlanNetwork"), ("mellanox.com/v1alpha1", "IPoIBNetwork"),
    ("mellanox.com/v1alpha1", "HostDeviceNetwork"), ("sriovnetwork.openshift.io/v1", "SriovNetwork"),
    ("sriovnetwork.openshift.io/v1", "SriovIBNetwork"), ("sriovnetwork.openshift.io/v1", "SriovNetworkNodePolicy"),
)


def plan_for(name):
    with open(example(name)) as handle:
        result = render_all(yaml.safe_load(handle))
    assert result["errors"] == []
    return result


def managed_rdma_objects(sim):
    """(kind, name) of every RDMA-method object the collection created that still exists."""
    found = set()
    for api_version, kind in NETWORK_KINDS:
        try:
            items = objects(sim, api_version, kind)
        except Exception:  # kind not served on this cluster
            continue
        found.update((kind, i["metadata"]["name"]) for i in items if (i["metadata"].get("labels") or {}).get(MANAGED))
    return found


def expected_rdma_objects(plan):
    kinds = {kind for _v, kind in NETWORK_KINDS}
    return {(e["manifest"]["kind"], e["manifest"]["metadata"]["name"]) for e in plan["manifests"] if e["manifest"]["kind"] in kinds}


@pytest.mark.parametrize("configuration", sorted(CONFIGURATIONS))
def test_configuration_converges_idempotently_and_check_mode_writes_nothing(sim_factory, configuration):
    sim = sim_factory(profile="mixed-lab")
    plan = plan_for(configuration)

    # The SR-IOV configuration over InfiniBand installs its operators side by side (issue 38; the default is sequential):
    # check mode, the first run and the idempotence checks below hold for that order too.
    order = ("-e", "gpudirect_install_order=overlapped") if configuration == "sriov_legacy/infiniband" else ()
    check = run_playbook(sim, "-e", "@" + example(configuration), "--check", *order)
    assert check.rc == 0, check.output[-4000:]
    assert check.writes == 0, "check mode wrote to a fresh cluster"
    assert "olm_operator" in check.output or check.dry_run_writes > 0
    # Issue 31 point 9: check mode on a fresh cluster does not list operators as if they ran.
    assert re.search(r"Operators running: none; a run would install or change: nfd\.", " ".join(check.output.split())), check.output[-3000:]

    first = run_playbook(sim, "-e", "@" + example(configuration), *order)
    assert first.rc == 0, first.output[-4000:]
    assert first.changed > 0 and first.writes > 0
    # Overlapped: every Subscription is created before the first custom resource; sequential: NFD's CR comes first.
    writes = [(r["verb"], r["plural"]) for r in sim.request_log[-first.requests:]
              if r["verb"] in ("create", "patch") and not r.get("dry_run")]
    subscriptions = [i for i, write in enumerate(writes) if write == ("create", "subscriptions")]
    assert len(subscriptions) == 4, writes
    first_nfd = min(i for i, (_verb, plural) in enumerate(writes) if plural == "nodefeaturediscoveries")
    assert (subscriptions[-1] < first_nfd) == bool(order), writes

    second = run_playbook(sim, "-e", "@" + example(configuration))
    assert second.rc == 0, second.output[-4000:]
    assert second.changed == 0, second.output[-4000:]
    assert second.writes == 0, [r for r in sim.request_log[-second.requests:] if r["verb"] in ("create", "patch", "update", "delete")]
    assert "The cluster already matches the plan" in second.output, second.output[-4000:]
    # Issue 31 point 8: a no-op re-run prints no template error of a skipped step (olm_install_entry).
    assert "template error" not in second.output and "is undefined" not in second.output, second.output[-4000:]

    # The roles themselves are idempotent too (what --tags runs and standalone role users rely on), also after the
    # network operator replaced a MacvlanNetwork's annotations (last-applied-configuration too): the decision rests on
    # managedFields, not on that annotation.
    if configuration == "shared_device/roce":
        wait(lambda: (macvlan(sim)["metadata"].get("annotations") or {}).get(OPERATOR_ANNOTATION) == "default",
             what="the operator's annotation")
        assert macvlan(sim)["metadata"]["annotations"] == {OPERATOR_ANNOTATION: "default"}
    forced = run_playbook(sim, "-e", "@" + example(configuration), "-e", "gpudirect_always_converge=true")
    assert forced.rc == 0, forced.output[-4000:]
    assert "The cluster already matches the plan" not in forced.output
    assert forced.changed == 0 and forced.writes == 0, (writes_of(sim, forced), forced.output[-4000:])

    # What users need afterwards: the NADs in the target namespaces and the RDMA resource on the nodes.
    nads = {(n["metadata"]["namespace"], n["metadata"]["name"]) for n in objects(sim, "k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition")}
    for network in plan["summary"]["networks"]:
        assert (network["namespace"], network["name"]) in nads
    for resource in plan["summary"]["resources"]:
        assert any(int(v or 0) > 0 for v in allocatable(sim, resource).values()), resource
    assert managed_rdma_objects(sim) == expected_rdma_objects(plan)


def test_switching_method_leaves_exactly_the_last_methods_objects(sim_factory):
    sim = sim_factory(profile="mixed-lab")
    for configuration in ("shared_device/roce", "sriov_legacy/roce", "host_device/roce"):
        # The switches drain and reboot configured nodes (VFs created, then removed): confirmed (docs/disruption.md).
        run = run_playbook(sim, "-e", "@" + example(configuration), "-e", "gpudirect_allow_disruption=true")
        assert run.rc == 0, (configuration, run.output[-4000:])
        assert managed_rdma_objects(sim) == expected_rdma_objects(plan_for(configuration)), configuration
    policy = objects(sim, "mellanox.com/v1alpha1", "NicClusterPolicy")[0]["spec"]
    assert "sriovDevicePlugin" in policy and "rdmaSharedDevicePlugin" not in policy
    nads = {n["metadata"]["name"] for n in objects(sim, "k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition")}
    assert nads == {n["name"] for n in plan_for("host_device/roce")["summary"]["networks"]}


def test_shared_device_serves_both_fabrics_and_switching_back_prunes_the_second(sim_factory):
    """Issue 13 point 7: one NicClusterPolicy with both fabrics' resources (the chapter's shared-device policy), a
    network per fabric, a re-run that writes nothing; back to one fabric, the second fabric's network goes."""
    sim = sim_factory(profile="mixed-lab")
    both = "shared-device-roce-and-infiniband.yml"
    plan = plan_for(both)
    first = run_playbook(sim, "-e", "@" + example(both))
    assert first.rc == 0, first.output[-4000:]
    assert managed_rdma_objects(sim) == expected_rdma_objects(plan) == {
        ("MacvlanNetwork", "rdmashared-net"), ("IPoIBNetwork", "rdmashared-ib-net")}
    gpu_nodes = sorted(n for n, v in allocatable(sim, "nvidia.com/gpu").items() if int(v or 0) > 0)
    for resource in ("rdma/rdma_shared_device_eth", "rdma/rdma_shared_device_ib"):
        # The play waits for rdma_min_ready_nodes; the device plugin then reaches every node with both fabrics.
        wait(lambda: sorted(n for n, v in allocatable(sim, resource).items() if int(v or 0) > 0) == gpu_nodes, what=resource)
    nads = {n["metadata"]["name"] for n in objects(sim, "k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition")}
    assert nads == {"rdmashared-net", "rdmashared-ib-net"}
    policy = objects(sim, "mellanox.com/v1alpha1", "NicClusterPolicy")[0]["spec"]
    assert set(policy["secondaryNetwork"]) == {"ipoib"}

    again = run_playbook(sim, "-e", "@" + example(both))
    assert again.rc == 0 and again.changed == 0 and again.writes == 0, again.output[-4000:]

    back = run_playbook(sim, "-e", "@" + example("shared_device/roce"))
    assert back.rc == 0, back.output[-4000:]
    assert managed_rdma_objects(sim) == {("MacvlanNetwork", "rdmashared-net")}
    config = json.loads(objects(sim, "mellanox.com/v1alpha1", "NicClusterPolicy")[0]["spec"]["rdmaSharedDevicePlugin"]["config"])
    assert [c["resourceName"] for c in config["configList"]] == ["rdma_shared_device_eth"]


def test_nic_selection_auto_takes_interfaces_from_the_nodes_facts(sim_factory):
    """No interface names given: the facts pods find the RoCE ports of the roce-lab profile."""
    sim = sim_factory(profile="roce-lab")
    run = run_playbook(sim, "-e", "@" + example("shared_device/roce"), "-e",
                       '{"gpudirect_rdma_nic_interfaces": [], "gpudirect_rdma_nic_selection": "auto"}')
    assert run.rc == 0, run.output[-4000:]
    policy = objects(sim, "mellanox.com/v1alpha1", "NicClusterPolicy")[0]
    config = policy["spec"]["rdmaSharedDevicePlugin"]["config"]
    assert "ens1f0np0" in config and "eno8303" not in config  # Mellanox ports only, not the Intel E810
    leftover = [p["metadata"]["name"] for p in objects(sim, "v1", "Pod")
                if (p["metadata"].get("labels") or {}).get("app.kubernetes.io/component") == "gpudirect-facts"]
    assert leftover == []

    # A re-run takes the facts from the per-node cache (the nodes' hardware fingerprints did not change), renders
    # the same plan from them and skips the roles: no pod, no write, and few requests (issue 21).
    again = run_playbook(sim, "-e", "@" + example("shared_device/roce"), "-e",
                         '{"gpudirect_rdma_nic_interfaces": [], "gpudirect_rdma_nic_selection": "auto"}')
    assert again.rc == 0, again.output[-4000:]
    assert "The cluster already matches the plan" in again.output, again.output[-4000:]
    assert again.writes == 0 and again.changed == 0, again.output[-4000:]
    assert not [r for r in sim.request_log[-again.requests:] if r["plural"] == "pods" and r["verb"] == "create"]
    # The facts cost one list of the cache ConfigMaps (and one of the nodes); the rest is preflight's reads.
    rerun = sim.request_log[-again.requests:]
    assert [r["verb"] for r in rerun if "/namespaces/gpudirect-facts/" in (r.get("path") or "")] == ["list"]
    # The cache holds every node, so preflight renders the plan before any write and compares once: each kind is
    # listed once, the nodes twice (the cache's fingerprints, then preflight's summary and node waits).
    first_pages = [r["path"] for r in rerun if r["verb"] == "list" and not (r.get("query") or {}).get("continue")]
    assert sorted(set(p for p in first_pages if first_pages.count(p) > 1)) == ["/api/v1/nodes"], first_pages
    assert first_pages.count("/api/v1/nodes") == 2, first_pages
    assert again.requests <= 26, "\n".join("%s %s" % (r["verb"], r.get("path")) for r in rerun)


def pool_rolled_out(sim, pool, machineconfigs, without=()):
    """The pool renders ``machineconfigs`` (and none of ``without``) and every one of its nodes runs that rendered
    config."""
    mcp = objects(sim, "machineconfiguration.openshift.io/v1", "MachineConfigPool")
    (mcp,) = [p for p in mcp if p["metadata"]["name"] == pool]
    status = mcp.get("status") or {}
    sources = {s["name"] for s in (status.get("configuration") or {}).get("source") or []}
    rendered = (status.get("configuration") or {}).get("name")
    pools = objects(sim, "machineconfiguration.openshift.io/v1", "MachineConfigPool")
    nodes = [n for n in objects(sim, "v1", "Node") if node_pool(n["metadata"].get("labels") or {}, pools) == pool]
    current = {(n["metadata"].get("annotations") or {}).get("machineconfiguration.openshift.io/currentConfig") for n in nodes}
    return (set(machineconfigs) <= sources and not sources & set(without) and current == {rendered}
            and status.get("updatedMachineCount") == len(nodes))


def test_the_machineconfig_is_rolled_out_before_the_nic_cluster_policy_exists(sim_factory):
    """The chapter's order (issue 13 point 3): the host preparation (irdma blacklist) is in place on every node before
    the NicClusterPolicy makes the DOCA driver load, so the driver loads once and irdma cannot keep it from loading."""
    sim = sim_factory(profile="mixed-lab")
    machineconfigs = [e["manifest"]["metadata"]["name"] for e in plan_for("shared_device/infiniband")["manifests"]
                      if e["phase"] == "machineconfig"]
    rolled_out_when_policy_created = []

    def on_event(etype, rtype, obj):
        if etype == "ADDED" and rtype.plural == "nicclusterpolicies":
            # Subscribers run under the store's re-entrant lock: the pool and nodes read here are as of this write.
            rolled_out_when_policy_created.append(pool_rolled_out(sim, "worker", machineconfigs))

    sim.store.subscribe(on_event)
    run = run_playbook(sim, "-e", "@" + example("shared_device/infiniband"))
    assert run.rc == 0, run.output[-4000:]
    entries = sim.request_log
    created = [(i, e["plural"]) for i, e in enumerate(entries) if e["verb"] in ("create", "patch") and e.get("code") == 201
               and e["plural"] in ("machineconfigs", "nicclusterpolicies")]
    order = [plural for _i, plural in created]
    assert order == ["machineconfigs", "nicclusterpolicies"], order
    # Between the two creates the playbook watched the pool to the end of its roll-out.
    mc_at, policy_at = created[0][0], created[1][0]
    between = entries[mc_at:policy_at]
    assert any(e["plural"] == "machineconfigpools" and e["verb"] in ("watch", "list", "get") for e in between)
    assert rolled_out_when_policy_created == [True], "the NicClusterPolicy was created before the pool rolled out"
    # Issue 32: the rollout's timeout comes from the nodes that reboot (rules/timeouts.py), said before the wait.
    # Every node of the worker role is in the pool (mixed-lab has no custom pool), GPU or not.
    workers = [n for n in objects(sim, "v1", "Node") if "node-role.kubernetes.io/worker" in (n["metadata"].get("labels") or {})]
    said = re.search(r"Waiting up to (\d+) s for the MachineConfig rollout: (\d+) node\(s\) of pool worker drain and "
                     r"reboot one at a time, 1800 s each, plus 600 s", " ".join(run.output.split()))
    assert said and int(said.group(2)) == len(workers) and int(said.group(1)) == 600 + 1800 * len(workers), run.output[-4000:]
    said_at = run.output.index("Say how long the pool rollout may take")
    assert said_at < run.output.index("Apply the MachineConfig and wait until the pool has rebooted onto it"), run.output[-4000:]


def test_machineconfig_wait_is_not_satisfied_by_the_pools_stale_status(sim_factory):
    """Right after a MachineConfig is applied the pool still reports its old rendered config as Updated (the
    render controller waits about 5 s). The simulator's render hold keeps the pool in that state: site.yml must
    not take it for done (it times out naming the pool), and once the pool renders, a run ends only when every node
    runs the rendered config; teardown likewise waits for the configuration without the MachineConfigs."""
    sim = sim_factory(profile="mixed-lab", faults={"operator_faults": {"mco_render_hold": ["worker"]}})
    machineconfigs = [e["manifest"]["metadata"]["name"] for e in plan_for("shared_device/infiniband")["manifests"]
                      if e["phase"] == "machineconfig"]
    assert machineconfigs
    held = run_playbook(sim, "-e", "@" + example("shared_device/infiniband"), "-e", "rdma_machineconfig_timeout=5")
    assert held.rc != 0, "the wait took the pool's stale Updated status for the new configuration"
    assert "MachineConfigPool worker updated" in held.output, held.output[-4000:]
    assert not pool_rolled_out(sim, "worker", machineconfigs)

    sim.faults.update({"operator_faults": {"mco_render_hold": []}})
    run = run_playbook(sim, "-e", "@" + example("shared_device/infiniband"))
    assert run.rc == 0, run.output[-4000:]
    assert pool_rolled_out(sim, "worker", machineconfigs), "site.yml returned before the pool rolled out"

    sim.faults.update({"operator_faults": {"mco_render_hold": ["worker"]}})
    down = run_playbook(sim, "-e", "teardown_machineconfigs=true", "-e", "teardown_machineconfig_timeout=5",
                        playbook="playbooks/teardown.yml")
    assert down.rc != 0, "teardown took the pool's stale Updated status for the configuration without them"
    assert "MachineConfigPool" in down.output and "worker" in down.output, down.output[-4000:]
    assert "Waiting up to 5 s for the MachineConfig rollout (teardown_machineconfig_timeout)." in down.output, down.output[-4000:]
    sim.faults.update({"operator_faults": {"mco_render_hold": []}})
    wait(lambda: pool_rolled_out(sim, "worker", [], without=machineconfigs), what="the pool rendered without them")


def test_memlock_is_raised_only_on_the_labelled_rdma_nodes(sim_factory, tmp_path):
    """Issue 20 point 7: the CRI-O memlock MachineConfig goes to the custom pool gpudirect-rdma, never to the whole
    worker pool. With no node labelled for it and no pool, site.yml stops before any write, naming the variable and
    the fix; once the administrator labelled a node and created the pool (deploy/machineconfigpool-gpudirect-rdma.yml)
    only that node runs it, and a second run writes nothing."""
    sim = sim_factory(profile="mixed-lab")
    memlock = '{"gpudirect_rdma_apply_machineconfigs": true, "gpudirect_rdma_machineconfigs": ["crio_memlock"]}'
    refused = run_playbook(sim, "-e", "@" + example("shared_device/roce"), "-e", memlock)
    assert refused.rc != 0 and refused.writes == 0, refused.output[-3000:]
    assert "gpudirect_rdma_memlock_pool: no node carries node-role.kubernetes.io/gpudirect-rdma" in refused.output
    assert "gpudirect_rdma_memlock_pool: MachineConfigPool gpudirect-rdma does not exist" in refused.output
    assert "oc label node" in refused.output

    kube = Kube(sim, str(tmp_path / "discovery.json"))
    rdma_node = "nvd-srv-32.nvidia.eng.rdu2.dc.redhat.com"
    kube.patch("v1", "Node", rdma_node, {"metadata": {"labels": {"node-role.kubernetes.io/gpudirect-rdma": ""}}})
    with open(os.path.join(ROOT, "deploy", "machineconfigpool-gpudirect-rdma.yml")) as handle:
        kube.create(yaml.safe_load(handle))

    run = run_playbook(sim, "-e", "@" + example("shared_device/roce"), "-e", memlock)
    assert run.rc == 0, run.output[-4000:]
    managed = [m for m in objects(sim, "machineconfiguration.openshift.io/v1", "MachineConfig") if (m["metadata"].get("labels") or {}).get(MANAGED)]
    memlock_mc = "99-gpudirect-rdma-gpudirect-rdma-memlock"
    assert [(m["metadata"]["name"], m["metadata"]["labels"]["machineconfiguration.openshift.io/role"]) for m in managed] == [
        (memlock_mc, "gpudirect-rdma")]
    assert pool_rolled_out(sim, "gpudirect-rdma", [memlock_mc])
    assert pool_rolled_out(sim, "worker", [], without=[memlock_mc])
    rdma_rendered = {p["metadata"]["name"]: p["status"]["configuration"]["name"]
                     for p in objects(sim, "machineconfiguration.openshift.io/v1", "MachineConfigPool")}["gpudirect-rdma"]
    running = {n["metadata"]["name"]: n["metadata"]["annotations"]["machineconfiguration.openshift.io/currentConfig"]
               for n in objects(sim, "v1", "Node")}
    assert [name for name, config in running.items() if config == rdma_rendered] == [rdma_node]

    again = run_playbook(sim, "-e", "@" + example("shared_device/roce"), "-e", memlock)
    assert again.rc == 0 and again.changed == 0 and again.writes == 0, again.output[-3000:]


def test_the_memlock_pool_check_counts_every_node_on_a_large_cluster(sim_factory, tmp_path):
    """plan_status names only a sample of the nodes (node_sample, 20) on large clusters; the memlock pool check
    counts the pool's nodes over all of them, and reads the pool in plan_status's one list of the kind."""
    sim = sim_factory(profile="synthetic:nodes=25,gpus=1,nics=1,link_layer=Ethernet")
    kube = Kube(sim, str(tmp_path / "discovery.json"))
    # The last worker by name: outside the first 20 nodes the sample holds.
    kube.patch("v1", "Node", "gpu-worker-0024", {"metadata": {"labels": {"node-role.kubernetes.io/gpudirect-rdma": ""}}})
    with open(os.path.join(ROOT, "deploy", "machineconfigpool-gpudirect-rdma.yml")) as handle:
        kube.create(yaml.safe_load(handle))
    memlock = '{"gpudirect_rdma_apply_machineconfigs": true, "gpudirect_rdma_machineconfigs": ["crio_memlock"]}'
    start = len(sim.request_log)
    run = run_playbook(sim, "-e", "@" + example("shared_device/roce"), "-e", memlock, "--tags", "preflight")
    assert "gpudirect_rdma_memlock_pool" not in run.output, run.output[-3000:]
    assert run.rc == 0 and run.writes == 0, run.output[-3000:]
    assert sim.count(since=start, plural="machineconfigpools", verb="list") == 1


SRIOV_NS = "openshift-sriov-network-operator"
SRIOV_V1 = "sriovnetwork.openshift.io/v1"


def test_sriov_policies_wait_for_the_config_daemons_reports(sim_factory):
    """The SR-IOV operator's webhook (sriov-network-operator pkg/webhook/validate.go) refuses every policy until a
    config daemon has reported a NIC it selects. The simulator's report hold keeps the daemons from reporting: site.yml
    must wait for the reports instead of sending a policy the webhook refuses, write no policy meanwhile, and converge
    once they come."""
    webhook_down = [{"workload": "operator-webhook", "reason": "ImagePullBackOff", "message": "manifest unknown"}]
    sim = sim_factory(profile="mixed-lab", faults={"operator_faults": {"sriov_daemon_report_hold": True,
                                                                       "operand_failures": webhook_down}})
    start = len(sim.request_log)
    held = run_playbook(sim, "-e", "@" + example("sriov_legacy/roce"), "-e", "rdma_wait_timeout=5")
    assert held.rc != 0, held.output[-4000:]
    assert "SR-IOV config daemons reported the NICs" in held.output or "SriovNetworkNodeState" in held.output, held.output[-4000:]
    assert "denied the request" not in held.output, held.output[-4000:]
    assert sim.count(since=start, plural="sriovnetworknodepolicies", verb="create") == 0
    assert not objects(sim, SRIOV_V1, "SriovNetworkNodePolicy", SRIOV_NS)

    # The daemons report, but the webhook's pod cannot pull its image: kube-apiserver answers each SR-IOV write with
    # 500 "failed calling webhook" (failurePolicy Fail). The write is retried for rdma_webhook_grace_period, then the
    # play fails quoting the API server, within the grace + 5 s, with nothing stored.
    sim.faults.update({"operator_faults": {"sriov_daemon_report_hold": False, "operand_failures": webhook_down}})
    start = len(sim.request_log)
    down = run_playbook(sim, "-e", "@" + example("sriov_legacy/roce"), "-e", "rdma_webhook_grace_period=5")
    assert down.rc != 0, down.output[-4000:]
    said = " ".join(down.output.split())
    waited = re.search(r"the admission webhook operator-webhook.sriovnetwork.openshift.io was not serving for (\d+) s", said)
    assert waited and 5 <= int(waited.group(1)) <= 5 + 5, down.output[-4000:]
    assert 'no endpoints available for service "operator-webhook-service"' in said, down.output[-4000:]
    # The diagnostics the failed play writes name the real cause: the webhook's pod and its image pull.
    assert re.search(r"pod openshift-sriov-network-operator/operator-webhook-\S+ on node \S+: container webhook-server is "
                     r"ImagePullBackOff", said), down.output[-4000:]
    refused = [r["time"] for r in sim.request_log[start:] if r.get("code") == 500]
    assert len(refused) >= 2 and 5 <= refused[-1] - refused[0] <= 5 + 5, refused
    assert not objects(sim, SRIOV_V1, "SriovNetworkNodePolicy", SRIOV_NS)

    sim.faults.update({"operator_faults": {"operand_failures": []}})
    run = run_playbook(sim, "-e", "@" + example("sriov_legacy/roce"))
    assert run.rc == 0, run.output[-4000:]
    assert sriov_applied_everywhere(sim, 8)
    assert "differs from the 16 VFs the firmware of ens8f0np0" in run.output, "the firmware rewrite is announced"
    again = run_playbook(sim, "-e", "@" + example("sriov_legacy/roce"))
    assert again.rc == 0 and again.changed == 0 and again.writes == 0, again.output[-4000:]
    assert "differs from the" not in again.output, "the firmware runs the VF count now"


def test_a_nic_the_nodes_do_not_report_is_refused_before_any_sriov_write(sim_factory):
    """A first install has no SriovNetworkNodeStates at preflight time; the rdma role checks the NIC variables
    against the reports before it writes a policy (the webhook would refuse it, after the pool config was written)."""
    sim = sim_factory(profile="mixed-lab")
    start = len(sim.request_log)
    run = run_playbook(sim, "-e", "@" + example("sriov_legacy/roce"), "-e", '{"gpudirect_rdma_nic_interfaces": ["ens9f0np0"]}')
    assert run.rc != 0, run.output[-4000:]
    assert "gpudirect_rdma_nic_interfaces: ens9f0np0 is not an interface of any node" in run.output, run.output[-4000:]
    for plural in ("sriovnetworknodepolicies", "sriovnetworkpoolconfigs", "sriovnetworks"):
        assert sim.count(since=start, plural=plural, writes_only=True) == 0, plural


def sriov_applied_everywhere(sim, vfs):
    """Every node state applied ``vfs`` VFs on ens8f0np0, no drain asked for or running, nodes schedulable, pool unpaused."""
    for state in objects(sim, SRIOV_V1, "SriovNetworkNodeState", SRIOV_NS):
        ann = state["metadata"].get("annotations") or {}
        pf = [i for i in state["status"].get("interfaces") or [] if i["name"] == "ens8f0np0"]
        if state["status"].get("syncStatus") != "Succeeded" or [i["numVfs"] for i in pf] != [vfs]:
            return False
        if ann.get("sriovnetwork.openshift.io/desired-state") != "Idle" or ann.get("sriovnetwork.openshift.io/current-state") != "Idle":
            return False
    if any((n.get("spec") or {}).get("unschedulable") for n in objects(sim, "v1", "Node")):
        return False
    pool = [p for p in objects(sim, "machineconfiguration.openshift.io/v1", "MachineConfigPool") if p["metadata"]["name"] == "worker"]
    return not (pool[0].get("spec") or {}).get("paused")


def test_sriov_wait_is_not_satisfied_by_the_node_states_stale_status(sim_factory):
    """A changed SR-IOV policy reaches the node states about a second later, and until the config daemon starts, each
    still reports the previous sync's Succeeded (its status carries no generation) and the nodes still advertise the
    old VFs. The simulator's policy-sync hold keeps the cluster in that state: site.yml must not take it for done, and
    once the operator renders, the run ends only when every node applied the change and finished its drain."""
    sim = sim_factory(profile="mixed-lab")
    first = run_playbook(sim, "-e", "@" + example("sriov_legacy/roce"))
    assert first.rc == 0, first.output[-4000:]
    assert sriov_applied_everywhere(sim, 8), "site.yml returned before every node applied the VFs"
    # Issue 32: the node states' timeout comes from the nodes the sync drains (a first install: the node states reported,
    # since preflight saw none), one at a time without a SriovNetworkPoolConfig (the operator's default pool config),
    # said before the wait (rules/timeouts.py).
    drained = len(objects(sim, SRIOV_V1, "SriovNetworkNodeState", SRIOV_NS))
    said = re.search(r"Waiting up to (\d+) s for the SR-IOV policy sync: (\d+) node\(s\) drain and reboot one at a time, "
                     r"1800 s each, plus 600 s \(set rdma_sriov_timeout to override\)", " ".join(first.output.split()))
    assert said and int(said.group(2)) == drained and int(said.group(1)) == 600 + 1800 * drained, first.output[-4000:]
    assert first.output.index("Say how long the SR-IOV policy sync may take") < first.output.index("Apply the SR-IOV pool config"), \
        first.output[-4000:]

    sim.faults.update({"operator_faults": {"sriov_policy_sync_hold": True}})
    held = run_playbook(sim, "-e", "@" + example("sriov_legacy/roce"), "-e", "gpudirect_rdma_num_vfs=4",
                        "-e", "rdma_sriov_timeout=5", "-e", "gpudirect_allow_disruption=true")
    assert held.rc != 0, "the wait took the node states' stale Succeeded for the new policy"
    assert "Waiting up to 5 s for the SR-IOV policy sync (rdma_sriov_timeout)." in held.output, held.output[-4000:]
    assert "SR-IOV node states synced with the policies" in held.output, held.output[-4000:]
    assert "policies not rendered by the operator yet" in held.output, held.output[-4000:]

    sim.faults.update({"operator_faults": {"sriov_policy_sync_hold": False}})
    run = run_playbook(sim, "-e", "@" + example("sriov_legacy/roce"), "-e", "gpudirect_rdma_num_vfs=4",
                       "-e", "gpudirect_allow_disruption=true")
    assert run.rc == 0, run.output[-4000:]
    assert sriov_applied_everywhere(sim, 4), "site.yml returned before every node applied the change"

    # An MTU change keeps the VF count: the operator re-renders the node states at once, and each config daemon reads
    # the host before it writes InProgress (pkg/daemon/daemon.go), so the re-rendered spec first stands beside the
    # previous sync's Succeeded. The simulator's host-read hold keeps every daemon there.
    mtu = ("-e", "@" + example("sriov_legacy/roce"), "-e", "gpudirect_rdma_num_vfs=4", "-e", "gpudirect_rdma_mtu=9000")
    sim.faults.update({"operator_faults": {"sriov_daemon_host_read_hold": True}})
    held = run_playbook(sim, *mtu, "-e", "rdma_sriov_timeout=5", "-e", "gpudirect_allow_disruption=true")
    assert held.rc != 0, "the wait took the previous sync's Succeeded for the MTU change"
    assert "VFs not applied yet" in held.output, held.output[-4000:]
    sim.faults.update({"operator_faults": {"sriov_daemon_host_read_hold": False}})
    run = run_playbook(sim, *mtu, "-e", "gpudirect_allow_disruption=true")
    assert run.rc == 0, run.output[-4000:]
    assert sriov_applied_everywhere(sim, 4), "site.yml returned before every node applied the change"
    for state in objects(sim, SRIOV_V1, "SriovNetworkNodeState", SRIOV_NS):
        (pf,) = [i for i in state["status"]["interfaces"] if i["name"] == "ens8f0np0"]
        assert pf["mtu"] >= 9000 and {vf["mtu"] for vf in pf["Vfs"]} == {9000}, state["metadata"]["name"]
    again = run_playbook(sim, *mtu)
    assert again.rc == 0 and again.changed == 0 and again.writes == 0, again.output[-4000:]


# --------------------------------------------------------------------------------------------- server-side apply

OPERATOR_ANNOTATION = "operator.macvlannetwork.mellanox.com/last-network-namespace"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def macvlan(sim):
    (network,) = objects(sim, "mellanox.com/v1alpha1", "MacvlanNetwork")
    return network


def writes_of(sim, run):
    """(verb, plural, name, content type) of each write a run made."""
    return [(r["verb"], r["plural"], r["name"], r["content_type"]) for r in sim.request_log[len(sim.request_log) - run.requests:]
            if r["verb"] in ("create", "patch", "update", "delete") and not r.get("dry_run")
            and r["group"] != "authorization.k8s.io"]  # the permission reviews ask, they store nothing


def test_an_option_removed_from_the_input_is_removed_from_the_object(sim_factory):
    sim = sim_factory(profile="mixed-lab")
    first = run_playbook(sim, "-e", "@" + example("shared_device/roce"))
    assert first.rc == 0, first.output[-4000:]
    assert macvlan(sim)["spec"]["mtu"] == 1500
    without = run_playbook(sim, "-e", "@" + example("shared_device/roce"), "-e", '{"gpudirect_rdma_mtu": null}')
    assert without.rc == 0, without.output[-4000:]
    assert "mtu" not in macvlan(sim)["spec"]
    assert without.writes == 1, writes_of(sim, without)  # the one apply of the MacvlanNetwork
    again = run_playbook(sim, "-e", "@" + example("shared_device/roce"), "-e", '{"gpudirect_rdma_mtu": null}')
    assert again.rc == 0 and again.changed == 0 and again.writes == 0, writes_of(sim, again)


def as_left_by_client_side_apply(sim):
    """Turn what the collection applied into what its earlier client-side applier left: the fields owned by the
    kubernetes client's Update entry (its user agent, OpenAPI-Generator), plus the last-applied annotation."""
    converted = []
    for rtype in sim.store.resource_types():
        try:
            items, _rv = sim.store.list(rtype)
        except Exception:  # not served
            continue
        for obj in items:
            entries = obj["metadata"].get("managedFields") or []
            if not any(e["manager"] == "gpudirect.openshift" and e["operation"] == "Apply" for e in entries):
                continue

            def edit(live):
                applied = {"apiVersion": live["apiVersion"], "kind": live["kind"], "spec": live.get("spec"),
                           "metadata": {k: live["metadata"][k] for k in ("name", "namespace", "labels") if k in live["metadata"]}}
                live["metadata"].setdefault("annotations", {})[LAST_APPLIED] = json.dumps(applied)
                for entry in live["metadata"]["managedFields"]:
                    if entry["manager"] == "gpudirect.openshift" and entry["operation"] == "Apply":
                        entry.update(manager="OpenAPI-Generator", operation="Update")
                        entry["fieldsV1"].setdefault("f:metadata", {}).setdefault("f:annotations", {})["f:" + LAST_APPLIED] = {}

            meta = obj["metadata"]
            sim.store.mutate(rtype, meta.get("namespace"), meta["name"], edit)
            converted.append((rtype, meta.get("namespace"), meta["name"]))
    return converted


def test_objects_of_the_client_side_applier_are_migrated_once_and_then_pruned_by_server_side_apply(sim_factory):
    sim = sim_factory(profile="mixed-lab")
    first = run_playbook(sim, "-e", "@" + example("shared_device/roce"))
    assert first.rc == 0, first.output[-4000:]
    legacy = as_left_by_client_side_apply(sim)
    assert len(legacy) >= 3
    # The migration run also drops mtu from the input: the field moved to our manager, so the apply removes it.
    migrating = run_playbook(sim, "-e", "@" + example("shared_device/roce"), "-e", '{"gpudirect_rdma_mtu": null}')
    assert migrating.rc == 0, migrating.output[-4000:]
    assert "mtu" not in macvlan(sim)["spec"]
    patches = [w for w in writes_of(sim, migrating) if w[0] == "patch"]
    assert len(patches) == migrating.writes == len(legacy) + 1, writes_of(sim, migrating)  # one per object, one apply
    for rtype, namespace, name in legacy:
        obj = sim.store.get(rtype, namespace, name)
        assert LAST_APPLIED not in (obj["metadata"].get("annotations") or {}), name
        assert [e["manager"] for e in obj["metadata"]["managedFields"] if not e.get("subresource")
                and e["manager"] in ("OpenAPI-Generator", "gpudirect.openshift")] == ["gpudirect.openshift"], name
    again = run_playbook(sim, "-e", "@" + example("shared_device/roce"), "-e", '{"gpudirect_rdma_mtu": null}')
    assert again.rc == 0 and again.changed == 0 and again.writes == 0, writes_of(sim, again)
