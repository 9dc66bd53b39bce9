# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Unit tests of the facts pods' pure parts: script, names, manifests, node selection, log parsing, the
per-node cache (fingerprints, ConfigMaps) read back through the same checks as fresh output."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest

from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster import node_facts as nf
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster import facts_nodes
from ansible_collections.gpudirect.openshift.plugins.module_utils.hardware import standalone
from ansible_collections.gpudirect.openshift.plugins.module_utils.hardware import collector
from ansible_collections.gpudirect.openshift.tests.unit.fixtures import synthetic_sysfs as synth


def test_standalone_script_runs_alone_and_matches_the_collector(tmp_path):
    builder = synth.build_gpu_nic_node(tmp_path / "node", gpus=2, nics=2, vfs_per_pf=1)
    proc = synth.ProcBuilder(tmp_path / "node", modules=["mlx5_core", "ib_uverbs"], osrelease="5.14.0-570.el9.x86_64")
    script = tmp_path / "alone" / nf.SCRIPT_KEY
    script.parent.mkdir()
    script.write_text(standalone.standalone_script())
    out = subprocess.run([sys.executable, "-I", "-B", str(script), "--sys-root", builder.root, "--proc-root", proc.root,
                          "--nvidia-smi", "skip", "--json"], capture_output=True, text=True, check=True, cwd=str(script.parent),
                         env={"PATH": os.environ.get("PATH", "")})
    facts = nf.parse_collector_log(out.stdout)
    assert facts == json.loads(json.dumps(collector.collect(builder.root, proc.root)))
    assert len(facts["gpus"]) == 2 and len([n for n in facts["nics"] if n["function"] == "PF"]) == 4


def test_pod_names_are_dns_labels_and_unique_for_long_node_names():
    short = nf.pod_name("gpudirect-facts", "abcde", "worker-0")
    assert short == "gpudirect-facts-abcde-worker-0"
    long_a = nf.pod_name("gpudirect-facts", "abcde", "nvd-srv-32.nvidia.eng.rdu2.dc.redhat.com.example.internal")
    long_b = nf.pod_name("gpudirect-facts", "abcde", "nvd-srv-32.nvidia.eng.rdu2.dc.redhat.com.example.internal2")
    for name in (short, long_a, long_b):
        assert len(name) <= 63 and name[0].isalnum() and name[-1].isalnum()
        assert all(c.isalnum() or c == "-" for c in name) and name == name.lower()
    assert long_a != long_b


def test_pod_manifest_is_pinned_read_only_and_unprivileged():
    pod = nf.pod_manifest("p", "ns", "worker-0", "abcde", "cm", "img:1", service_account="sa", deadline_seconds=120)
    spec = pod["spec"]
    assert spec["nodeName"] == "worker-0" and spec["restartPolicy"] == "Never" and spec["activeDeadlineSeconds"] == 120
    assert spec["serviceAccountName"] == "sa" and spec["automountServiceAccountToken"] is False
    assert spec["tolerations"] == [{"operator": "Exists"}]
    assert not any(spec.get(k) for k in ("hostNetwork", "hostPID", "hostIPC"))
    container = spec["containers"][0]
    ctx = container["securityContext"]
    assert ctx["privileged"] is False and ctx["allowPrivilegeEscalation"] is False and ctx["readOnlyRootFilesystem"] is True
    assert ctx["capabilities"] == {"drop": ["ALL"]}
    mounts = dict((m["mountPath"], m) for m in container["volumeMounts"])
    assert all(m["readOnly"] for m in mounts.values())
    volumes = dict((v["name"], v) for v in spec["volumes"])
    assert volumes["host-sys"]["hostPath"]["path"] == "/sys"
    assert volumes["collector"]["configMap"]["name"] == "cm"
    assert container["command"][:4] == ["python3", "-I", "-B", "/opt/gpudirect/gpudirect-facts.py"]
    assert container["command"][container["command"].index("--nvidia-smi") + 1] == "skip" and "env" not in container
    labels = pod["metadata"]["labels"]
    assert labels[nf.COMPONENT_LABEL] == "gpudirect-facts" and labels[nf.RUN_LABEL] == "abcde"
    with_smi = nf.pod_manifest("p", "ns", "n", "abcde", "cm", "img", nvidia_smi=2, tolerations=[])
    assert with_smi["spec"]["tolerations"] == [] and "serviceAccountName" not in with_smi["spec"]


def test_facts_pod_mounts_only_the_proc_files_it_reads():
    """Issue 20 point 10: not the host's whole /proc, only the entries hardware/sysfs.py reads."""
    pod = nf.pod_manifest("p", "ns", "worker-0", "abcde", "cm", "img:1")
    host_paths = sorted(v["hostPath"]["path"] for v in pod["spec"]["volumes"] if "hostPath" in v)
    assert host_paths == ["/proc/driver", "/proc/modules", "/proc/sys/kernel/osrelease", "/sys"]
    mounts = sorted(m["mountPath"] for m in pod["spec"]["containers"][0]["volumeMounts"])
    assert mounts == ["/host/proc/driver", "/host/proc/modules", "/host/proc/sys/kernel/osrelease", "/host/sys", "/opt/gpudirect"]


def test_nvidia_smi_asks_the_device_plugin_for_the_gpus_instead_of_visible_devices_all():
    """Issue 20 point 10: NVIDIA_VISIBLE_DEVICES=all is gone; the node's allocatable GPUs are requested instead."""
    pod = nf.pod_manifest("p", "ns", "n", "abcde", "cm", "img", nvidia_smi=8)
    container = pod["spec"]["containers"][0]
    assert "NVIDIA_VISIBLE_DEVICES" not in [e["name"] for e in container.get("env", [])]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == "8"
    assert container["command"][container["command"].index("--nvidia-smi") + 1] == "auto"
    params = {"namespace": "ns", "name_prefix": "gpudirect-facts", "image": "img", "nvidia_smi": True, "nodes": ["gpu-0", "cpu-0"]}
    run = nf.FactsRun(None, facts_nodes.FactsSettings(**params), run_id="abcde")
    nodes = [{"metadata": {"name": "gpu-0", "labels": {}}, "status": {"allocatable": {"nvidia.com/gpu": "4"}}},
             {"metadata": {"name": "cpu-0", "labels": {}}, "status": {"allocatable": {"cpu": "8"}}}]
    _selected, _unknown, _how, pods = run.plan(nodes)
    by_node = dict((p["spec"]["nodeName"], p["spec"]["containers"][0]) for p in pods)
    assert by_node["gpu-0"]["resources"]["limits"]["nvidia.com/gpu"] == "4"
    # No device plugin on the node: no GPU request and no nvidia-smi (sysfs is read instead).
    assert "nvidia.com/gpu" not in by_node["cpu-0"]["resources"]["limits"]
    assert by_node["cpu-0"]["command"][by_node["cpu-0"]["command"].index("--nvidia-smi") + 1] == "skip"


def test_configmap_and_role_binding():
    cm = nf.configmap_manifest("cm", "ns", "abcde", "print(1)\n")
    assert cm["data"] == {nf.SCRIPT_KEY: "print(1)\n"} and cm["metadata"]["labels"][nf.RUN_LABEL] == "abcde"
    binding = nf.scc_role_binding("ns", "sa", "hostmount-anyuid")
    assert binding["roleRef"]["name"] == "system:openshift:scc:hostmount-anyuid"
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "sa", "namespace": "ns"}]


def _node(name, **labels):
    return {"metadata": {"name": name, "labels": labels}}


NODES = [
    _node("master-0", **{"node-role.kubernetes.io/master": ""}),
    _node("worker-0", **{"node-role.kubernetes.io/worker": "", "feature.node.kubernetes.io/pci-10de.present": "true"}),
    _node("worker-1", **{"node-role.kubernetes.io/worker": "", facts_nodes.NIC_VENDOR_LABEL: "true", "rack": "b"}),
    _node("worker-2", **{"node-role.kubernetes.io/worker": "", "rack": "b"}),
]


def test_node_selection():
    assert facts_nodes.select_nodes(NODES) == (["worker-0", "worker-1"], [], "nfd_vendor_labels")
    plain = [_node(n["metadata"]["name"], **dict((k, v) for k, v in n["metadata"]["labels"].items() if "pci-" not in k)) for n in NODES]
    assert facts_nodes.select_nodes(plain) == (["worker-0", "worker-1", "worker-2"], [], "workers")
    assert facts_nodes.select_nodes(NODES, node_selector={"rack": "b"}) == (["worker-1", "worker-2"], [], "node_selector")
    assert facts_nodes.select_nodes(NODES, names=["worker-2", "ghost", "worker-2"]) == (["worker-2"], ["ghost"], "names")


COMPACT = [
    _node("master-0", **{"node-role.kubernetes.io/master": "", "node-role.kubernetes.io/worker": "",
                         "feature.node.kubernetes.io/pci-10de.present": "true"}),
    _node("cp-1", **{"node-role.kubernetes.io/control-plane": "", "node-role.kubernetes.io/worker": ""}),
    _node("worker-0", **{"node-role.kubernetes.io/worker": "", "feature.node.kubernetes.io/pci-10de.present": "true"}),
]


class _NodesOnly:
    """Just enough of module_utils/cluster/client for a check-mode FactsRun: the nodes, and no cache ConfigMaps."""

    def __init__(self, nodes):
        self.nodes = nodes

    def require(self, _api, kind):
        return kind

    def list(self, kind, namespace=None, label_selector=None):
        return (list(self.nodes) if kind == "Node" else []), "1"

    def list_pages(self, kind, on_page, namespace=None, label_selector=None):
        """The cache ConfigMaps are read page by page: one empty page."""
        on_page([], True)
        return "1"


def test_control_plane_nodes_get_no_facts_pod_unless_asked():
    """Issue 34: facts pods mount host paths, and the SCC cannot keep them off nodes: the module refuses control-plane
    nodes named by the user, and leaves out those a selector or the automatic choice matched (compact clusters)."""
    assert facts_nodes.without_control_plane(COMPACT, ["master-0", "worker-0"], "nfd_vendor_labels", False) == (["worker-0"], [], ["master-0"])
    assert facts_nodes.without_control_plane(COMPACT, ["cp-1"], "names", False) == ([], ["cp-1"], [])
    assert facts_nodes.without_control_plane(COMPACT, ["master-0", "cp-1"], "names", True) == (["master-0", "cp-1"], [], [])
    params = {"namespace": "gpudirect-facts", "name_prefix": "gpudirect-facts", "image": "img"}
    automatic = nf.FactsRun(_NodesOnly(COMPACT), facts_nodes.FactsSettings(**params), run_id="abcde").run(check_mode=True)
    assert [p["node"] for p in automatic["pods"]] == ["worker-0"] and automatic["control_plane_left_out"] == ["master-0"]
    assert automatic["failed_nodes"] == []
    settings = facts_nodes.FactsSettings(**dict(params, nodes=["cp-1", "worker-0"]))
    named = nf.FactsRun(_NodesOnly(COMPACT), settings, run_id="abcde").run(check_mode=True)
    assert [p["node"] for p in named["pods"]] == ["worker-0"]
    assert named["failed_nodes"] == [{"node": "cp-1", "pod": None, "error": facts_nodes.CONTROL_PLANE_REFUSAL}]
    assert "hardware_facts_allow_control_plane: true" in facts_nodes.CONTROL_PLANE_REFUSAL
    settings = facts_nodes.FactsSettings(**dict(params, nodes=["cp-1"], allow_control_plane=True))
    asked = nf.FactsRun(_NodesOnly(COMPACT), settings, run_id="abcde").run(check_mode=True)
    assert [p["node"] for p in asked["pods"]] == ["cp-1"] and asked["failed_nodes"] == []
    _selected, _unknown, _how, pods = nf.FactsRun(None, facts_nodes.FactsSettings(**params), run_id="abcde").plan(COMPACT)
    assert [p["spec"]["nodeName"] for p in pods] == ["worker-0"]


def test_parse_collector_log():
    facts = {"schema_version": 1, "readiness": {"ready": True}, "nics": []}
    assert nf.parse_collector_log("some runtime line\n%s\n" % json.dumps(facts)) == facts
    with pytest.raises(ValueError, match="printed nothing"):
        nf.parse_collector_log("  \n")
    with pytest.raises(ValueError, match="no JSON document.*Traceback"):
        nf.parse_collector_log("Traceback (most recent call last):\nOSError\n")
    with pytest.raises(ValueError, match="not valid JSON"):
        nf.parse_collector_log('{"readiness": ')
    with pytest.raises(ValueError, match="not a facts document"):
        nf.parse_collector_log('{"a": 1}')


def _gpus(*specs):
    return {"gpus": [{"pci_device_id": device_id, "memory_total_mib": memory, "memory_source": None}
                     for device_id, memory in specs]}


def test_gpu_memory_from_the_gfd_label_only_when_unknown_and_one_model():
    facts = _gpus(("0x2235", None), ("0x2235", None))
    facts_nodes.fill_from_node_labels(facts, {facts_nodes.GFD_MEMORY_LABEL: "46068"})
    assert [(g["memory_total_mib"], g["memory_source"]) for g in facts["gpus"]] == [(46068, "node label nvidia.com/gpu.memory")] * 2
    kept = _gpus(("0x2335", 143771))
    facts_nodes.fill_from_node_labels(kept, {facts_nodes.GFD_MEMORY_LABEL: "1"})
    assert kept["gpus"][0]["memory_total_mib"] == 143771  # nvidia-smi's reading stays
    for facts, labels in ((_gpus(("0x2235", None), ("0x2330", None)), {facts_nodes.GFD_MEMORY_LABEL: "46068"}),  # two models
                          (_gpus((None, None)), {facts_nodes.GFD_MEMORY_LABEL: "46068"}),
                          (_gpus(("0x2235", None)), {facts_nodes.GFD_MEMORY_LABEL: "lots"}),
                          (_gpus(("0x2235", None)), {}), (_gpus(("0x2235", None)), None)):
        facts_nodes.fill_from_node_labels(facts, labels)
        assert all(g["memory_total_mib"] is None for g in facts["gpus"])


NODE = {"metadata": {"name": "worker-0", "labels": {"feature.node.kubernetes.io/pci-15b3.present": "true", "rack": "a",
                                                    "nvidia.com/cuda.driver-version.full": "570.124.06"}},
        "status": {"nodeInfo": {"kernelVersion": "5.14.0-570.el9.x86_64", "bootID": "b-1"}}}


def _changed(path, value):
    node = json.loads(json.dumps(NODE))
    target = node
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return node


def test_fingerprint_follows_pci_labels_kernel_boot_and_collector_only():
    base = nf.hardware_fingerprint(NODE, "c1")
    for same in (_changed(("metadata", "labels", "rack"), "b"),  # not a hardware label
                 _changed(("metadata", "labels", "nvidia.com/cuda.driver-version.full"), "575.1")):
        assert nf.hardware_fingerprint(same, "c1") == base
    for changed in (_changed(("metadata", "labels", "feature.node.kubernetes.io/pci-10de.present"), "true"),
                    _changed(("status", "nodeInfo", "bootID"), "b-2"),
                    _changed(("status", "nodeInfo", "kernelVersion"), "5.14.0-611.el9.x86_64")):
        assert not nf.fingerprint_matches(base, nf.hardware_fingerprint(changed, "c1"))
    assert not nf.fingerprint_matches(base, nf.hardware_fingerprint(NODE, "c2"))
    assert not nf.fingerprint_matches(base, nf.hardware_fingerprint(NODE, "c1", nvidia_smi=True))
    assert nf.fingerprint_matches(base, base) and not nf.fingerprint_matches("forged", base)


def test_an_entry_made_before_nfd_labelled_the_node_stays_good_for_the_same_boot():
    unlabelled = _changed(("metadata", "labels"), {"rack": "a"})
    before = nf.hardware_fingerprint(unlabelled, "c1")
    assert before.endswith("/none")
    assert nf.fingerprint_matches(before, nf.hardware_fingerprint(NODE, "c1"))
    rebooted = _changed(("status", "nodeInfo", "bootID"), "b-2")
    assert not nf.fingerprint_matches(before, nf.hardware_fingerprint(rebooted, "c1"))
    assert not nf.fingerprint_matches(nf.hardware_fingerprint(NODE, "c1"), nf.hardware_fingerprint(unlabelled, "c1"))


def test_cache_configmap_round_trip_and_the_same_checks_as_a_pod_log():
    line = json.dumps({"readiness": {"ready": True}, "gpus": []})
    name = nf.cache_name("gpudirect-facts", "worker-0")
    configmap = nf.cache_configmap(name, "gpudirect-facts", "worker-0", "fp", line)
    assert len(name) <= 63 and configmap["metadata"]["labels"][nf.COMPONENT_LABEL] == nf.CACHE_COMPONENT
    assert nf.cached_document(configmap) == ("worker-0", "fp", json.loads(line))
    forged = nf.cache_configmap(name, "gpudirect-facts", "worker-0", "fp", '{"not": "facts"}')
    with pytest.raises(ValueError, match="not a facts document"):
        nf.cached_document(forged)
    broken = dict(configmap, binaryData={nf.CACHE_KEY: "bm90IGd6aXA="})
    with pytest.raises(ValueError, match="compressed"):
        nf.cached_document(broken)
