"""Pure parts of the GPUDirect RDMA bandwidth test: settings, ib_write_bw arguments, pairs, pod manifests,
network-status, devices and link rates from facts, verdicts, rounds of node-disjoint pairs, and the Markdown/HTML
reports (module_utils/verify/bandwidth_plan.py); the runner's plan in check mode (cluster/bandwidth_run.py)."""

import json
import os
import subprocess
from xml.etree import ElementTree

import pytest
from ansible_collections.gpudirect.openshift.plugins.module_utils.reports import bandwidth_report
from ansible_collections.gpudirect.openshift.plugins.module_utils.verify import bandwidth_plan as bt, bandwidth_verdicts
from ansible_collections.gpudirect.openshift.plugins.module_utils.verify import pod_states
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.bandwidth_run import BandwidthTest
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.api_errors import ClusterError
from ansible_collections.gpudirect.openshift.plugins.module_utils.render.plan import render_all

SHARED_ROCE = {"gpudirect_rdma_method": "shared_device", "gpudirect_rdma_fabric": "roce",
               "gpudirect_rdma_nic_interfaces": ["ens8f0np0"], "gpudirect_rdma_ipam_range": "192.168.2.0/24"}
SRIOV_ROCE = {"gpudirect_rdma_method": "sriov_legacy", "gpudirect_rdma_fabric": "roce", "gpudirect_rdma_nic_interfaces": ["ens8f0np0"],
              "gpudirect_rdma_num_vfs": 8, "gpudirect_rdma_ipam_range": "192.168.3.0/24", "gpudirect_rdma_gpu_rdma_mode": "peermem",
              "gpudirect_rdma_nic_driver": "doca"}
PORTS = [
    {"node": "n0", "rdma_device": "mlx5_0", "netdev": "ibs2f0", "link_layer": "InfiniBand", "speed": "400 Gb/sec (4X NDR)"},
    {"node": "n0", "rdma_device": "mlx5_1", "netdev": "ens8f0np0", "link_layer": "Ethernet", "speed_mbps": 200000},
    {"node": "n1", "rdma_device": "mlx5_1", "netdev": "ens8f0np0", "link_layer": "Ethernet", "rate_gbps": 100},
]


def settings(variables=None, **params):
    summary = render_all(SHARED_ROCE if variables is None else variables)["summary"]
    params.setdefault("image", "registry.example/perftest:1")
    return bt.settings_from(**dict(params, configuration=summary))


def test_settings_come_from_the_plan_summary():
    s = settings()
    assert (s["method"], s["fabric"], s["link_layer"]) == ("shared_device", "roce", "Ethernet")
    assert s["network"] == "rdmashared-net" and s["resources"] == {"rdma/rdma_shared_device_eth": 1}
    assert s["gpu_rdma_mode"] == "dmabuf" and s["selection"]["interfaces"] == ["ens8f0np0"]
    assert s["run_timeout"] == 130  # 120 + the 10 s default duration
    sriov = settings(SRIOV_ROCE)
    assert sriov["network"] == "sriov-network" and sriov["resources"] == {"openshift.io/sriovlegacy": 1}
    assert sriov["gpu_rdma_mode"] == "peermem"


def test_settings_report_every_problem_at_once():
    with pytest.raises(bt.SettingsError) as info:
        bt.settings_from(**{"image": "x", "threshold": 1.5, "qps": 0})
    text = str(info.value)
    for part in ("method must be", "fabric must be", "no secondary network", "no RDMA resource", "threshold", "qps must be"):
        assert part in text


def test_perftest_arguments_follow_the_gpu_mode_and_connection_options():
    assert bt.perftest_args(settings()) == ["-F", "--report_gbits", "-q", "16", "-s", "65536", "-D", "10", "-R",
                                            "--use_cuda=0", "--use_cuda_dmabuf"]
    peermem = bt.perftest_args(settings(SRIOV_ROCE, rdma_cm=False, gid_index=3, qps=4))
    assert peermem == ["-F", "--report_gbits", "-q", "4", "-s", "65536", "-D", "10", "-x", "3", "--use_cuda=0"]
    sweep = bt.perftest_args(settings(sweep=True, iterations=2000, gpu_rdma_mode="none", extra_args=["-T", "41"]))
    assert sweep == ["-F", "--report_gbits", "-q", "16", "-a", "-n", "2000", "-R", "-T", "41"]


def test_pairs_go_around_the_ring():
    assert bt.ring_pairs(["a"]) == []
    assert bt.ring_pairs(["a", "b"]) == [("a", "b")]
    assert bt.ring_pairs(["a", "b", "c", "d"]) == [("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")]


def test_pod_manifest_requests_gpu_rdma_resource_network_and_ipc_lock_only():
    pod = bt.pod_manifest(settings(), "abc123", 0, "client", "n1", "n1.example", "mlx5_1", "192.168.2.5")
    container = pod["spec"]["containers"][0]
    assert container["resources"]["requests"] == {"rdma/rdma_shared_device_eth": "1", "nvidia.com/gpu": "1"}
    assert container["resources"]["limits"] == container["resources"]["requests"]
    assert container["securityContext"] == {"capabilities": {"drop": ["ALL"], "add": ["IPC_LOCK"]},
                                            "allowPrivilegeEscalation": False}
    assert pod["spec"]["securityContext"] == {"seccompProfile": {"type": "RuntimeDefault"}}
    assert pod["spec"]["automountServiceAccountToken"] is False
    assert pod["spec"]["nodeSelector"] == {"kubernetes.io/hostname": "n1.example"}
    assert pod["spec"]["restartPolicy"] == "Never" and pod["spec"]["activeDeadlineSeconds"] > 0
    assert pod["metadata"]["annotations"] == {"k8s.v1.cni.cncf.io/networks": "rdmashared-net"}
    assert pod["metadata"]["labels"][bt.COMPONENT_LABEL] == "gpudirect-verify"
    env = dict((e["name"], e["value"]) for e in container["env"])
    assert env["PERFTEST_SERVER_IP"] == "192.168.2.5" and env["RDMA_DEVICE"] == "mlx5_1" and env["PERFTEST_ROLE"] == "client"
    assert pod["metadata"]["name"] == "gpudirect-verify-abc123-0-client"


def test_secondary_ips_from_network_status():
    status = [{"name": "ovn-kubernetes", "interface": "eth0", "ips": ["10.128.2.5"], "default": True},
              {"name": "default/rdmashared-net", "interface": "net1", "ips": ["192.168.2.1"]}]
    pod = {"metadata": {"annotations": {bt.NETWORK_STATUS_ANNOTATION: json.dumps(status)}}}
    assert bt.secondary_ips(pod, "rdmashared-net", "default") == ["192.168.2.1"]
    assert bt.secondary_ips(pod, "other-net", "default") == []
    assert bt.secondary_ips({"metadata": {}}, "rdmashared-net", "default") == []
    assert bt.secondary_ips({"metadata": {"annotations": {bt.NETWORK_STATUS_ANNOTATION: "not json"}}}, "x", "default") == []


def test_pending_problems_are_recognised():
    unschedulable = {"status": {"phase": "Pending", "conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/3 nodes are available: 1 Insufficient rdma/x"}]}}
    assert pod_states.pending_problem(unschedulable) == ("Unschedulable", "0/3 nodes are available: 1 Insufficient rdma/x")
    pulling = {"status": {"phase": "Pending", "containerStatuses": [{"state": {"waiting": {"reason": "ImagePullBackOff", "message": "m"}}}]}}
    assert pod_states.pending_problem(pulling) == ("ImagePullBackOff", "m")
    creating = {"status": {"phase": "Pending", "containerStatuses": [{"state": {"waiting": {"reason": "ContainerCreating"}}}]}}
    assert pod_states.pending_problem(creating) is None
    assert pod_states.pending_problem({"status": {"phase": "Running"}}) is None


def test_device_and_link_rate_from_facts():
    s = settings(nic_ports=PORTS)
    assert bandwidth_verdicts.device_for(s, "n0") == "mlx5_1"  # the Ethernet port named in the selection, not the IB one
    assert bandwidth_verdicts.link_rate_for(s, "n0", "mlx5_1")[0] == 200.0
    assert bandwidth_verdicts.link_rate_for(s, "n1", "mlx5_1")[0] == 100.0
    rate, reason = bandwidth_verdicts.link_rate_for(s, "n9")
    assert rate is None and "verify_link_rate_gbps" in reason
    assert bandwidth_verdicts.link_rate_for(settings(nic_ports=PORTS, link_rate_gbps=25), "n9") == (25.0, "link_rate_gbps option")
    assert bandwidth_verdicts.device_for(settings(SRIOV_ROCE, nic_ports=PORTS), "n0") is None  # a VF: found in the pod
    assert bandwidth_verdicts.device_for(settings(nic_ports=PORTS, rdma_device="mlx5_9"), "n0") == "mlx5_9"
    state = {"status": {"interfaces": [{"name": "ens8f0np0", "linkType": "ETH", "linkSpeed": "400000 Mb/s"}]}}
    assert bandwidth_verdicts.link_rate_for(settings(), "n5", None, state)[0] == 400.0


def test_judge_passes_a_gpu_run_and_refuses_a_host_memory_run(fixtures_dir):
    path = os.path.join(fixtures_dir, "command-outputs", "ib_write_bw", "nvidia-gpu-addon-operator_ocp410_T4_client_use_cuda_sweep_roce.txt")
    with open(path) as handle:
        cuda_log = handle.read()
    s = settings(gpu_rdma_mode="peermem")
    parsed, evaluation, diagnosis = bandwidth_verdicts.judge(s, cuda_log, "", {"status": {"phase": "Succeeded"}}, None, 25)
    assert evaluation["passed"] and diagnosis["code"] == "ok" and parsed["use_cuda"]
    # The same numbers from the dmabuf configuration: the capture used cuMemAlloc (peer memory), not DMA-BUF.
    _parsed, evaluation, diagnosis = bandwidth_verdicts.judge(settings(), cuda_log, "", None, None, 25)
    assert not evaluation["passed"] and diagnosis["code"] == "no_gpu_memory_path"
    with open(os.path.join(fixtures_dir, "command-outputs", "ib_write_bw", "cloud-native-stack_ubuntu24_v19_client_sweep_roce.txt")) as handle:
        host_log = handle.read()
    _parsed, evaluation, diagnosis = bandwidth_verdicts.judge(s, host_log, "", None, None, 50)
    assert diagnosis["code"] == "no_gpu_memory_path" and "host memory" in diagnosis["message"]
    _parsed, evaluation, diagnosis = bandwidth_verdicts.judge(settings(gpu_rdma_mode="none"), host_log, "", None, None, 100)
    assert diagnosis["code"] == "bandwidth_below_threshold"


def test_judge_diagnoses_the_server_when_it_failed_first():
    server = {"status": {"phase": "Failed"}}
    log = "initializing CUDA\nThere are no available device(s) that support CUDA\n"
    _parsed, evaluation, diagnosis = bandwidth_verdicts.judge(settings(), "", log, None, server, 400, problem="server")
    assert evaluation is None and diagnosis["code"] == "no_gpu_memory_path"


def _pairs():
    passed = {"index": 0, "server_node": "a.example", "client_node": "b.example", "server_device": "mlx5_1", "client_device": "mlx5_1",
              "link_rate_gbps": 400.0, "threshold_gbps": 320.0, "bandwidth_gbps": 375.2, "fraction": 0.938, "verdict": "passed",
              "diagnosis": {"code": "ok", "message": "ok"},
              "sweep": [{"bytes": 2 ** n, "bw_avg_gbps": min(375.2, 2 ** n * 0.3)} for n in range(1, 24)]}
    failed = {"index": 1, "server_node": "b.example", "client_node": "c.example", "link_rate_gbps": 400.0, "threshold_gbps": 320.0,
              "bandwidth_gbps": None, "fraction": None, "verdict": "failed", "server_state": "Running", "client_state": "Failed",
              "client_log": "Failed to modify QP 288 to RTR <script>", "diagnosis": {"code": "wrong_gid", "message": "bad | gid"},
              "sweep": []}
    return [passed, failed]


def test_summary_and_failure_message():
    summary = bandwidth_verdicts.summarize(_pairs(), 0.8)
    assert summary == {"pairs": 2, "passed": 1, "failed": 1, "all_passed": False, "min_bandwidth_gbps": 375.2,
                       "avg_bandwidth_gbps": 375.2, "max_bandwidth_gbps": 375.2, "threshold": 0.8, "diagnoses": ["wrong_gid"]}
    assert bandwidth_verdicts.failure_message(_pairs()) == (
        "GPUDirect RDMA bandwidth test failed for 1 of 2 pair(s): b.example -> c.example: wrong_gid: bad | gid")
    assert bandwidth_verdicts.summarize([], 0.8)["all_passed"] is False


def test_reports_markdown_and_self_contained_html_with_charts():
    pairs = _pairs()
    result = {"pairs": pairs, "summary": bandwidth_verdicts.summarize(pairs, 0.8), "cluster": "lab", "configuration": "1", "arguments": "-a"}
    text = bandwidth_report.markdown(result)
    # path, PCIe links and expected range unknown here (no facts): shown as such
    assert "| a.example | b.example | mlx5_1 / mlx5_1 | - | - / - | 400 | - | 320.00 | 375.20 | 93.8% | passed | ok |" in text
    assert "wrong_gid: bad \\| gid" in text and "**FAILED**" in text
    assert "|---|---|---|" in text  # the sweep table has one column per swept pair plus the size
    page = bandwidth_report.html(result)
    assert page.count("<svg") == 2 and "<script" not in page and "&lt;script&gt;" in page
    assert "http" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")  # nothing loaded from elsewhere
    for svg in (bandwidth_report.bar_chart_svg(pairs), bandwidth_report.sweep_chart_svg(pairs)):
        root = ElementTree.fromstring(svg)  # well-formed SVG
        assert root.tag.endswith("svg")
    bars = bandwidth_report.bar_chart_svg(pairs)
    assert 'stroke="#d62728"' in bars and "no result: wrong_gid" in bars  # threshold marks, failed pair labelled
    no_sweep = bandwidth_report.html({"pairs": pairs[1:], "summary": bandwidth_verdicts.summarize(pairs[1:], 0.8)})
    assert no_sweep.count("<svg") == 1


def test_pod_script_passes_every_argument_as_one_word(tmp_path):
    """The perftest wrapper really run by bash: arguments with spaces or glob characters reach perftest unchanged,
    and the server address is one quoted word (no word splitting, no globbing)."""
    fake = tmp_path / "ib_write_bw"
    fake.write_text('#!/bin/sh\nfor a in "$@"; do printf "[%s]\\n" "$a"; done\n')
    fake.chmod(0o755)
    (tmp_path / "matches-a-glob").write_text("")
    pod = bt.pod_manifest(settings(extra_args=["-T", "a b", "*"]), "abc123", 0, "client", "n1", None, "mlx5_1",
                          "192.168.2.5")
    container = pod["spec"]["containers"][0]
    env = dict((e["name"], e["value"]) for e in container["env"])
    env.update(PERFTEST_BINARY=str(fake), PATH=os.environ["PATH"])
    out = subprocess.run(container["command"], env=env, cwd=str(tmp_path), capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out[-8:] == ["[-T]", "[a b]", "[*]", "[-d]", "[mlx5_1]", "[-p]", "[%s]" % env["PERFTEST_PORT"],
                        "[192.168.2.5]"], out
    assert "[a b]" in out and "[*]" in out and "[matches-a-glob]" not in out and out[-1] == "[192.168.2.5]"


def test_pods_run_where_the_network_is():
    """With gpudirect_rdma_network_namespaces [ml] the NAD is in ml: the pods go there, not to default."""
    variables = dict(SHARED_ROCE, gpudirect_rdma_network_namespaces=["ml"])
    s = settings(variables)
    assert s["namespace"] == "ml" and s["network"] == "rdmashared-net"
    with pytest.raises(bt.SettingsError, match="no network of the configuration is in namespace default or in a namespace whose "
                       "networks Multus lets every namespace use .default, openshift-multus, openshift-sriov-network-operator.; "
                       "they are in ml: run the pods in one of those namespaces .verify_namespace., or give network"):
        settings(variables, namespace="default")
    assert settings(variables, namespace="default", network="ml/rdmashared-net")["namespace"] == "default"


def test_pods_in_their_own_namespace_name_a_network_of_default_with_its_namespace():
    """Issue 34: verify runs in its own namespace (gpudirect-verify); OpenShift's Multus lets a pod there attach a
    NetworkAttachmentDefinition of "default" (a global namespace) when the annotation names it as default/<name>."""
    s = settings(SHARED_ROCE, namespace="gpudirect-verify")
    assert s["namespace"] == "gpudirect-verify" and s["network"] == "default/rdmashared-net"
    pod = bt.pod_manifest(s, "abc123", 0, "server", "n0", None, "mlx5_0")
    assert pod["metadata"]["namespace"] == "gpudirect-verify"
    assert pod["metadata"]["annotations"] == {"k8s.v1.cni.cncf.io/networks": "default/rdmashared-net"}
    rails = settings(TWO_RAILS, namespace="gpudirect-verify", nic_ports=RAIL_PORTS)["rails"]
    assert [r["network"] for r in rails] == ["default/rdmashared-net-1", "default/rdmashared-net-2"]
    # A network of another namespace is out of reach (Multus' namespace isolation): run the pods there instead.
    with pytest.raises(bt.SettingsError, match="no network of the configuration is in namespace gpudirect-verify .*they are in ml"):
        settings(dict(SHARED_ROCE, gpudirect_rdma_network_namespaces=["ml"]), namespace="gpudirect-verify")


# -- several rails (issue 13) -----------------------------------------------------------------------------

TWO_RAILS = {"gpudirect_rdma_method": "shared_device", "gpudirect_rdma_fabric": "roce",
             "gpudirect_rdma_nic_interfaces": ["ens1f0np0", "ens2f0np0"], "gpudirect_rdma_resource_names": ["rail_a", "rail_b"],
             "gpudirect_rdma_ipam_ranges": ["192.168.10.0/24", "192.168.11.0/24"]}
RAIL_PORTS = [dict(node=node, rdma_device="mlx5_%d" % i, netdev=netdev, link_layer="Ethernet", rate_gbps=rate)
              for node in ("n0", "n1") for i, (netdev, rate) in enumerate((("ens1f0np0", 400), ("ens2f0np0", 200)))]


def test_every_rail_gets_its_own_network_resource_and_selection():
    s = settings(TWO_RAILS, nic_ports=RAIL_PORTS)
    rails = s["rails"]
    assert [(r["index"], r["network"], r["resources"], r["interfaces"], r["nic"], r["ipam_range"], r["count"]) for r in rails] == [
        (0, "rdmashared-net-1", {"rdma/rail_a": 1}, ["ens1f0np0"], "ens1f0np0", "192.168.10.0/24", 2),
        (1, "rdmashared-net-2", {"rdma/rail_b": 1}, ["ens2f0np0"], "ens2f0np0", "192.168.11.0/24", 2)]
    # The top-level keys stay those of the first rail (what a one-rail run used).
    assert s["network"] == "rdmashared-net-1" and s["resources"] == {"rdma/rail_a": 1} and s["selection"]["interfaces"] == ["ens1f0np0"]
    for rail, device, rate in zip(rails, ("mlx5_0", "mlx5_1"), (400.0, 200.0)):
        r = bt.rail_settings(s, rail)
        assert bandwidth_verdicts.device_for(r, "n0") == device and bandwidth_verdicts.link_rate_for(r, "n1", device)[0] == rate
        pod = bt.pod_manifest(r, "abc123", rail["index"], "server", "n0", None, device)
        container = pod["spec"]["containers"][0]
        # Only this rail's resource: a pod holding every rail's NIC would not show a weak rail.
        assert container["resources"]["requests"] == {list(rail["resources"])[0]: "1", "nvidia.com/gpu": "1"} == container["resources"]["limits"]
        assert pod["metadata"]["annotations"] == {"k8s.v1.cni.cncf.io/networks": rail["network"]}
        assert dict((e["name"], e["value"]) for e in container["env"])["RDMA_DEVICE"] == device


def test_one_rail_when_asked_or_when_the_user_names_the_network():
    first = settings(TWO_RAILS, rails="first")
    assert len(first["rails"]) == 1 and first["network"] == "rdmashared-net-1"
    # As before rails were tested one by one: the first network with every resource of the plan.
    assert first["resources"] == {"rdma/rail_a": 1, "rdma/rail_b": 1} and first["rails"][0]["count"] == 1
    assert first["rails"][0]["interfaces"] == ["ens1f0np0"]
    for pinned in (settings(TWO_RAILS, network="rdmashared-net-2"), settings(TWO_RAILS, resources={"rdma/rail_b": 1})):
        assert len(pinned["rails"]) == 1
    assert settings(TWO_RAILS, network="rdmashared-net-2")["network"] == "rdmashared-net-2"
    assert settings(TWO_RAILS, resources={"rdma/rail_b": 1})["resources"] == {"rdma/rail_b": 1}
    one = settings()
    assert len(one["rails"]) == 1 and one["rails"][0]["network"] == "rdmashared-net" and one["rails"][0]["nic"] == "ens8f0np0"


def test_rail_options_that_cannot_work_are_refused():
    with pytest.raises(bt.SettingsError, match="rdma_device names one device for all 2 rails"):
        settings(TWO_RAILS, rdma_device="mlx5_0")
    assert settings(TWO_RAILS, rdma_device="mlx5_0", rails="first")["rdma_device"] == "mlx5_0"
    with pytest.raises(bt.SettingsError, match="rails must be all or first"):
        settings(rails="some")
    summary = render_all(TWO_RAILS)["summary"]
    summary["networks"] = summary["networks"][:1]  # the second rail's network missing from the plan
    with pytest.raises(bt.SettingsError, match=r"rail 1 \(ens2f0np0\): no network rdmashared-net-2 in namespace default"):
        bt.settings_from(**{"image": "x", "configuration": summary})


def test_rails_in_several_namespaces_take_the_network_of_the_pods_namespace():
    s = settings(dict(TWO_RAILS, gpudirect_rdma_network_namespaces=["ml", "default"]))
    assert s["namespace"] == "ml"
    assert [r["network"] for r in s["rails"]] == ["rdmashared-net-1-ml", "rdmashared-net-2-ml"]
    assert [r["network"] for r in settings(dict(TWO_RAILS, gpudirect_rdma_network_namespaces=["ml", "default"]),
                                           namespace="default")["rails"]] == ["rdmashared-net-1-default", "rdmashared-net-2-default"]


def _rail_pairs():
    rails = [dict(index=i, count=2, network="net-%d" % i, resource="rdma/rail_%d" % i, nic="ens%df0np0" % (i + 1),
                  interfaces=["ens%df0np0" % (i + 1)], pci_addresses=[], device_ids=[], ipam_range=None) for i in range(2)]
    good, bad = _pairs()
    good = dict(good, rail=rails[0], sweep=[])
    bad = dict(bad, index=1, server_node="a.example", client_node="b.example", rail=rails[1])
    return [good, bad]


def test_summary_failure_message_and_reports_name_the_weak_rail():
    pairs = _rail_pairs()
    summary = bandwidth_verdicts.summarize(pairs, 0.8)
    assert [(r["index"], r["network"], r["pairs"], r["passed"], r["all_passed"], r["diagnoses"]) for r in summary["rails"]] == [
        (0, "net-0", 1, 1, True, []), (1, "net-1", 1, 0, False, ["wrong_gid"])]
    assert bandwidth_verdicts.failure_message(pairs) == (
        "GPUDirect RDMA bandwidth test failed for 1 of 2 pair(s), on 1 of 2 rail(s): rail 1 (network net-1, resource rdma/rail_1, "
        "NIC ens2f0np0): a.example -> b.example: wrong_gid: bad | gid")
    # One rail: the message is the one it always was.
    single = [dict(p, rail=dict(p["rail"], count=1)) for p in pairs]
    assert bandwidth_verdicts.failure_message(single) == "GPUDirect RDMA bandwidth test failed for 1 of 2 pair(s): a.example -> b.example: wrong_gid: bad | gid"
    result = {"pairs": pairs, "summary": summary, "cluster": "lab", "configuration": "1", "arguments": "-a"}
    text = bandwidth_report.markdown(result)
    assert "| 1 | net-1 | rdma/rail_1 | ens2f0np0 | 1 | 0 | - | FAILED |" in text
    assert "| 0: net-0 (ens1f0np0) | a.example | b.example | mlx5_1 / mlx5_1 | - | - / - | 400 |" in text
    page = bandwidth_report.html(result)
    assert "<h2>Rails</h2>" in page and "<td>1: net-1 (ens2f0np0)</td>" in page and "a -&gt; b rail 1" in page
    ElementTree.fromstring(bandwidth_report.bar_chart_svg(pairs))
    one = {"pairs": single[:1], "summary": bandwidth_verdicts.summarize(single[:1], 0.8)}
    assert "Rail" not in bandwidth_report.markdown(one) and "Rails" not in bandwidth_report.html(one)


class _FakeCluster:
    def __init__(self, nodes):
        self.nodes = nodes

    def require(self, api_version, kind):
        return kind

    def list(self, resource, **kwargs):
        return (self.nodes if resource == "Node" else []), "1"


def test_check_mode_plans_every_pair_on_every_rail_one_rail_after_the_other():
    nodes = [{"metadata": {"name": name, "labels": {"nvidia.com/gpu.present": "true"}}, "spec": {}, "status": {}} for name in ("n0", "n1")]
    test = BandwidthTest(_FakeCluster(nodes), settings(TWO_RAILS, nic_ports=RAIL_PORTS), run_id="abc123")
    outcome = test.run(check_mode=True)
    assert [(p["index"], p["rail"]["network"], p["server_node"], p["client_node"]) for p in outcome["pairs"]] == [
        (0, "rdmashared-net-1", "n0", "n1"), (1, "rdmashared-net-2", "n0", "n1")]
    pods = outcome["pods"]
    assert [p["metadata"]["name"] for p in pods] == ["gpudirect-verify-abc123-%d-%s" % (i, role) for i in (0, 1) for role in ("server", "client")]
    assert [sorted(p["spec"]["containers"][0]["resources"]["requests"]) for p in pods] == [["nvidia.com/gpu", "rdma/rail_a"]] * 2 + [
        ["nvidia.com/gpu", "rdma/rail_b"]] * 2
    assert [dict((e["name"], e["value"]) for e in p["spec"]["containers"][0]["env"])["RDMA_DEVICE"] for p in pods] == ["mlx5_0"] * 2 + ["mlx5_1"] * 2


def _ring(count):
    nodes = ["n%d" % i for i in range(count)]
    return list(bt.ring_pairs(nodes))


@pytest.mark.parametrize("count,rounds", [(2, 1), (3, 3), (4, 2), (10, 2), (11, 3), (1000, 2), (1001, 3)])
def test_ring_pairs_run_in_at_most_three_rounds_of_node_disjoint_pairs(count, rounds):
    pairs = _ring(count)
    planned = bt.pair_rounds(pairs)
    assert len(planned) == rounds
    assert sorted(i for members in planned for i in members) == list(range(len(pairs)))  # every pair once
    for members in planned:
        nodes = [node for i in members for node in pairs[i]]
        assert len(nodes) == len(set(nodes)), "a node is in two pairs of one round"


@pytest.mark.parametrize("params,rounds", [({"gpu_rdma_mode": "none"}, 4), ({"parallel_rails": False}, 4), ({}, 2)])
def test_check_mode_plans_rounds_per_rail_with_round_labels(params, rounds):
    """The rails share the rounds (each its own NIC and GPU) unless asked not to, or the buffers are in host memory."""
    nodes = [{"metadata": {"name": "n%d" % i, "labels": {"nvidia.com/gpu.present": "true"}}, "spec": {}, "status": {}} for i in range(10)]
    # Every node's ports: each rail's pods must be told their rail's device.
    ports = [dict(p, node="n%d" % i) for i in range(10) for p in RAIL_PORTS if p["node"] == "n0"]
    test = BandwidthTest(_FakeCluster(nodes), settings(TWO_RAILS, nic_ports=ports, **params), run_id="abc123")
    outcome = test.run(check_mode=True)
    rail_of = dict((p["index"], p["rail"]["index"]) for p in outcome["pairs"])
    if rounds == 4:
        assert [len(r["pairs"]) for r in outcome["rounds"]] == [5, 5, 5, 5]  # two rails, two rounds each
        for entry in outcome["rounds"]:
            assert len(set(rail_of[i] for i in entry["pairs"])) == 1  # rail after rail
    else:
        assert [len(r["pairs"]) for r in outcome["rounds"]] == [10, 10]  # both rails of a pair in the same round
        for entry in outcome["rounds"]:
            assert sorted(set(rail_of[i] for i in entry["pairs"])) == [0, 1]
            for rail in (0, 1):  # within one rail the pairs of a round still share no node
                ends = [end for p in outcome["pairs"] if p["index"] in entry["pairs"] and rail_of[p["index"]] == rail
                        for end in (p["server_node"], p["client_node"])]
                assert len(ends) == len(set(ends))
    labels = [p["metadata"]["labels"][bt.ROUND_LABEL] for p in outcome["pods"]]
    assert labels == [str(p["round"]) for p in outcome["pairs"] for _role in ("server", "client")]


# -- each rail measured on its own device (issue 31 item 2) -----------------------------------------------------------

def test_several_rails_without_their_devices_are_refused_before_any_pod():
    nodes = [{"metadata": {"name": name, "labels": {"nvidia.com/gpu.present": "true"}}, "spec": {}, "status": {}} for name in ("n0", "n1")]
    # No port facts: a pod left to choose would take the first active port, the same NIC for both rails.
    cluster = _FakeCluster(nodes)
    with pytest.raises(ClusterError) as caught:
        BandwidthTest(cluster, settings(TWO_RAILS), run_id="abc123").run()
    text = str(caught.value)
    assert "rail 0 (network rdmashared-net-1, resource rdma/rail_a, NIC ens1f0np0): no RDMA device for node n0" in text
    assert "rail 1 (network rdmashared-net-2" in text and "hardware_facts" in text
    # Facts of another rail's NIC only are no stand-in either: n1 has no port of rail 1 (ens2f0np0).
    partial = [p for p in RAIL_PORTS if not (p["node"] == "n1" and p["netdev"] == "ens2f0np0")]
    problems = bandwidth_verdicts.rail_device_problems([(bt.rail_settings(settings(TWO_RAILS, nic_ports=partial), r), node)
                                                        for r in settings(TWO_RAILS)["rails"] for node in ("n0", "n1")])
    assert [p.split(":")[0] for p in problems[:-1]] == ["rail 1 (network rdmashared-net-2, resource rdma/rail_b, NIC ens2f0np0)"]
    assert "node n1" in problems[0]
    # One rail keeps the pod's own choice; SR-IOV pods take the VF behind their interface.
    assert bandwidth_verdicts.rail_device_problems([(bt.rail_settings(settings(), settings()["rails"][0]), "n0")]) == []


def test_a_result_from_another_device_than_the_rails_is_not_the_rails():
    assert bandwidth_verdicts.device_mismatch({"server": "mlx5_3", "client": "mlx5_3"}, {"server": "mlx5_3", "client": "mlx5_3"}) is None
    wrong = bandwidth_verdicts.device_mismatch({"server": "mlx5_3", "client": "mlx5_3"}, {"server": "mlx5_0", "client": "mlx5_0"})
    assert wrong["code"] == "wrong_rdma_device" and not wrong["ok"]
    assert wrong["message"] == "the rail's device is mlx5_3 but perftest measured server mlx5_0, client mlx5_0: this result is not the rail's"
    # A side whose device the log does not name (it failed before its header) is no mismatch.
    assert bandwidth_verdicts.device_mismatch({"server": "mlx5_3", "client": "mlx5_3"}, {"server": "mlx5_3", "client": None}) is None


def test_a_port_the_facts_show_down_is_named():
    ports = [dict(p, state="DOWN" if (p["node"], p["rdma_device"]) == ("n1", "mlx5_1") else "ACTIVE") for p in RAIL_PORTS]
    s = settings(TWO_RAILS, nic_ports=ports)
    second = bt.rail_settings(s, s["rails"][1])
    assert bandwidth_verdicts.port_not_active(second, "n1", "mlx5_1") == "n1 ens2f0np0 (mlx5_1) is DOWN in the facts"
    assert bandwidth_verdicts.port_not_active(second, "n0", "mlx5_1") is None
    assert bandwidth_verdicts.port_not_active(bt.rail_settings(s, s["rails"][0]), "n1", "mlx5_0") is None
