# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""collect() over the real captures, a synthetic 8 GPU / 8 dual-port NIC / 64 VF node and broken
trees; the command line and the single-file standalone copy."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import shutil
import subprocess
import sys

import pytest

from ansible_collections.gpudirect.openshift.plugins.module_utils.hardware import collector
from ansible_collections.gpudirect.openshift.tests.unit.fixtures import synthetic_sysfs as synth

COLLECTOR_PY = collector.__file__
OPEN_MODULE = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (dvs-builder@U16)"
PROPRIETARY = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.54.03  Tue Jun  6 22:20:39 UTC 2023"
RDMA_MODULES = ("mlx5_core", "mlx5_ib", "ib_core", "ib_uverbs", "rdma_cm")


def h200_tree(tmp_path, **proc):
    tree = synth.build_from_attr_dump(tmp_path, synth.fixture_path("h200-node", "pci-sysfs-attrs"))
    proc.setdefault("modules_text", synth.strip_capture(synth.read_fixture("h200-node", "lsmod.txt")))
    return tree, synth.ProcBuilder(tmp_path, **proc)


def test_h200_capture_with_nvidia_smi_xml(tmp_path):
    tree, proc = h200_tree(tmp_path)
    facts = collector.collect(tree.root, proc.root, synth.read_fixture("h200-node", "nvidia-smi-q-x.xml"))
    [gpu] = facts["gpus"]
    assert gpu["source"] == "nvidia-smi"
    assert gpu["name"] == "NVIDIA H200"
    assert gpu["uuid"] == "GPU-9afc864c-c5d7-6c43-7842-f5e9cfaba8a3"
    assert gpu["pci_address"] == "0000:00:06.0"
    assert gpu["driver"] == "nvidia"
    assert (gpu["driver_version"], gpu["cuda_version"]) == ("580.159.04", "13.0")
    assert gpu["memory_total_mib"] == 143771
    assert gpu["numa_node"] is None
    assert gpu["mig_mode"] == {"current": "Disabled", "pending": "Disabled"}
    assert gpu["persistence_mode"] == "Enabled"
    assert gpu["pcie"]["current_link_speed_gts"] == 32.0
    assert facts["nvidia_smi"] == {"used": True, "xml_schema": "v13", "cuda_version": "13.0"}
    assert facts["nvidia_driver"]["version"] == "580.159.04"
    assert facts["nics"] == [] and facts["rdma_devices"] == []
    assert facts["kernel_modules"]["nvidia"] is True
    assert facts["kernel_modules"]["nvidia_peermem"] is False
    assert facts["topology"]["pairs"] == [] and facts["topology"]["nearest_nic"] == {}
    readiness = facts["readiness"]
    assert readiness["ready"] is False
    # the capture has no /proc/driver/nvidia/version and no osrelease: DMA-BUF cannot be confirmed
    assert readiness["reason_codes"] == ["no_mellanox_nic", "no_peer_memory_path"]
    assert "nvidia_peermem is not loaded" in readiness["reasons"][1]
    assert facts["warnings"] == []
    json.dumps(facts)  # facts must be JSON-serialisable as they are


def test_h200_capture_without_nvidia_smi_uses_sysfs(tmp_path):
    tree, proc = h200_tree(tmp_path)
    facts = collector.collect(tree.root, proc.root, None, "nvidia-smi not found")
    [gpu] = facts["gpus"]
    assert gpu["source"] == "sysfs"
    assert (gpu["index"], gpu["pci_address"], gpu["pci_device_id"], gpu["driver"]) == (0, "0000:00:06.0", "0x2335", "nvidia")
    assert gpu["name"] == "NVIDIA H200 SXM 141GB"  # the PCI ID table names what nvidia-smi did not
    assert gpu["uuid"] is None and gpu["memory_total_mib"] is None and gpu["memory_source"] is None
    assert facts["nvidia_smi"]["used"] is False
    assert facts["warnings"] == ["nvidia-smi not found"]
    assert "no_nvidia_gpu" not in facts["readiness"]["reason_codes"]


def test_garbage_nvidia_smi_output_falls_back_to_sysfs(tmp_path):
    tree, proc = h200_tree(tmp_path)
    facts = collector.collect(tree.root, proc.root, "Failed to initialize NVML: Driver/library version mismatch")
    assert facts["gpus"][0]["source"] == "sysfs"
    assert any("nvidia-smi output ignored" in warning for warning in facts["warnings"])


def a10g_tree(tmp_path, sysfs_device="0x2237"):
    """One GPU at the A10G capture's address (an AWS g5 VM: the GPU sits on bus 0, slot 0x1e)."""
    tree = synth.SysfsBuilder(tmp_path)
    tree.add_pci(["pci0000:00", "0000:00:1e.0"], "0x10de", sysfs_device, "0x030200", driver="nvidia")
    return tree, synth.ProcBuilder(tmp_path, modules=("nvidia",))


def test_a10g_capture_keeps_the_sysfs_device_id(tmp_path):
    # nvidia-smi says 000000DE on this VM: it used to become '0x0000' and replace the sysfs ID.
    tree, proc = a10g_tree(tmp_path)
    facts = collector.collect(tree.root, proc.root, synth.read_fixture("command-outputs", "nvidia-smi-q-x", "telegraf_a10g.xml"))
    [gpu] = facts["gpus"]
    assert (gpu["source"], gpu["name"], gpu["pci_device_id"]) == ("nvidia-smi", "NVIDIA A10G", "0x2237")
    assert gpu["memory_total_mib"] == 23028
    assert facts["warnings"] == []


def test_sysfs_device_id_wins_over_a_different_nvidia_smi_one(tmp_path):
    tree, proc = a10g_tree(tmp_path, sysfs_device="0x2236")
    xml = synth.read_fixture("command-outputs", "nvidia-smi-q-x", "telegraf_a10g.xml").replace("000000DE", "223710DE", 1)
    facts = collector.collect(tree.root, proc.root, xml)
    assert facts["gpus"][0]["pci_device_id"] == "0x2236"
    assert facts["warnings"] == ["GPU 0000:00:1e.0: nvidia-smi reports PCI device ID 0x2237, sysfs 0x2236; the sysfs one is kept"]


def test_unreadable_proc_modules_after_nvidia_smi_answered_is_not_driver_not_loaded(tmp_path):
    # The GPU shows no driver link (as inside some containers) and /proc/modules cannot be read: nvidia-smi
    # listing the GPU is the evidence that the driver runs.
    tree = synth.SysfsBuilder(tmp_path)
    tree.add_pci(["pci0000:00", "0000:00:1e.0"], "0x10de", "0x2237", "0x030200")
    proc = synth.ProcBuilder(tmp_path)
    os.remove(os.path.join(proc.root, "modules"))
    facts = collector.collect(tree.root, proc.root, synth.read_fixture("command-outputs", "nvidia-smi-q-x", "telegraf_a10g.xml"))
    assert facts["kernel_modules"]["nvidia"] is True
    assert facts["kernel_modules"]["nvidia_peermem"] is None
    readiness = facts["readiness"]
    assert "nvidia_driver_not_loaded" not in readiness["reason_codes"]
    assert "nvidia_driver_unknown" not in readiness["warning_codes"]
    assert "nvidia_peermem is not known to be loaded" in " ".join(readiness["reasons"])


def test_unreadable_proc_modules_without_nvidia_smi_is_unknown_not_a_reason(tmp_path):
    tree = synth.SysfsBuilder(tmp_path)
    tree.add_pci(["pci0000:00", "0000:00:1e.0"], "0x10de", "0x2237", "0x030200")
    proc = synth.ProcBuilder(tmp_path)
    os.remove(os.path.join(proc.root, "modules"))
    readiness = collector.collect(tree.root, proc.root)["readiness"]
    assert "nvidia_driver_not_loaded" not in readiness["reason_codes"]
    assert "nvidia_driver_unknown" in readiness["warning_codes"]


@pytest.mark.parametrize("version,osrelease,path,usable", [
    (OPEN_MODULE, "5.14.0-427.50.1.el9_4.x86_64", "dma_buf", True),
    (OPEN_MODULE, "5.4.0-150-generic", None, False),
    (PROPRIETARY, "5.14.0-427.50.1.el9_4.x86_64", None, False),
    (None, "6.8.0-45-generic", None, None),
])
def test_dma_buf_heuristic_from_proc(tmp_path, version, osrelease, path, usable):
    tree, proc = h200_tree(tmp_path, osrelease=osrelease, nvidia_version=version)
    facts = collector.collect(tree.root, proc.root)
    assert facts["kernel"]["release"] == osrelease
    assert facts["peer_memory"]["path"] == path
    assert facts["peer_memory"]["dma_buf"]["usable"] is usable
    assert ("no_peer_memory_path" in facts["readiness"]["reason_codes"]) is (path is None)
    if version:
        assert facts["nvidia_driver"]["open_kernel_module"] is (version == OPEN_MODULE)
        assert facts["nvidia_driver"]["version"] == ("580.159.04" if version == OPEN_MODULE else "535.54.03")


def test_node_exporter_tree_gives_partial_facts_and_warnings():
    root = synth.fixture_path("sysfs", "node-exporter-sys")
    facts = collector.collect(root, "/nonexistent-proc")
    by_name = dict((dev["name"], dev) for dev in facts["rdma_devices"])
    assert sorted(by_name) == ["i40iw0", "mlx4_0"]
    mlx4 = by_name["mlx4_0"]
    assert (mlx4["vendor"], mlx4["model"], mlx4["family"], mlx4["pci_address"]) == ("mellanox", "ConnectX-3", "mlx4", None)
    assert [(p["port"], p["state"], p["rate_gbps"], p["link_layer"]) for p in mlx4["ports"]] == \
        [(1, "ACTIVE", 40.0, "InfiniBand"), (2, "ACTIVE", 40.0, "InfiniBand")]
    assert by_name["i40iw0"]["vendor"] is None
    assert facts["nics"] == [] and facts["gpus"] == []
    warnings = "\n".join(facts["warnings"])
    assert "bus/pci/devices is missing" in warnings
    assert "RDMA device mlx4_0 has no device link" in warnings
    assert "modules is unreadable" in warnings
    assert all(value is None for value in facts["kernel_modules"].values())
    readiness = facts["readiness"]
    assert "no_nvidia_gpu" in readiness["reason_codes"]
    assert "no_mellanox_nic" not in readiness["reason_codes"]  # mlx4_0 is there, only its PCI link is missing
    assert "mlx4_only" in readiness["warning_codes"]


def node(tmp_path, modules=RDMA_MODULES + ("nvidia", "nvidia_peermem"), **kwargs):
    tree = synth.build_gpu_nic_node(tmp_path, **kwargs)
    proc = synth.ProcBuilder(tmp_path, modules=modules, osrelease="5.14.0-427.el9.x86_64")
    return tree, proc


def test_eight_gpus_eight_dual_port_nics_sixty_four_vfs(tmp_path):
    tree, proc = node(tmp_path)
    gpu_addresses = sorted(addr for addr, path in tree.paths.items() if os.path.exists(os.path.join(path, "vendor"))
                           and open(os.path.join(path, "vendor")).read().strip() == synth.NVIDIA)
    xml = synth.multi_gpu_xml(synth.read_fixture("h200-node", "nvidia-smi-q-x.xml"), gpu_addresses)
    facts = collector.collect(tree.root, proc.root, xml)
    assert len(facts["gpus"]) == 8 and all(gpu["source"] == "nvidia-smi" for gpu in facts["gpus"])
    assert [gpu["numa_node"] for gpu in facts["gpus"]] == [0] * 4 + [1] * 4
    pfs = [nic for nic in facts["nics"] if nic["function"] == "PF"]
    vfs = [nic for nic in facts["nics"] if nic["function"] == "VF"]
    assert (len(pfs), len(vfs), len(facts["rdma_devices"])) == (16, 64, 80)
    assert set(nic["model"] for nic in pfs) == {"ConnectX-7"}
    assert set(nic["model"] for nic in vfs) == {"ConnectX-7 VF"}
    pf = pfs[0]
    assert pf["sriov"]["totalvfs"] == 16 and pf["sriov"]["numvfs"] == 4 and len(pf["sriov"]["vf_addresses"]) == 4
    assert sorted(vf["pci_address"] for vf in vfs if vf["pf_pci_address"] == pf["pci_address"]) == \
        sorted(pf["sriov"]["vf_addresses"])
    assert (pf["driver"], pf["rdma_device"], pf["fw_ver"], pf["hca_type"]) == ("mlx5_core", "mlx5_0", "28.41.1000", "MT4129")
    [port] = pf["ports"]
    assert (port["state"], port["rate_gbps"], port["link_layer"], port["mtu"]) == ("ACTIVE", 400.0, "InfiniBand", 4092)
    assert port["port_guid"] == pf["node_guid"]
    assert pf["pcie"]["current_link_width"] == 16 and pf["numa_node"] == 0
    topo = facts["topology"]
    assert len(topo["pairs"]) == 8 * 80
    for index in range(8):
        nearest = topo["nearest_nic"][str(index)]
        assert nearest["relation"] == "PIX"
        assert nearest["pci_address"] == pfs[2 * index]["pci_address"]  # port 0 PF of the NIC behind the same switch
    assert topo["matrix"]["0"][pfs[2]["pci_address"]] == "NODE"  # other host bridge, same socket
    assert topo["matrix"]["0"][pfs[15]["pci_address"]] == "SYS"
    assert facts["readiness"] == {"ready": True, "reasons": [], "reason_codes": [], "warnings": [], "warning_codes": []}
    assert facts["peer_memory"]["path"] == "nvidia_peermem"


def test_every_reason_is_listed(tmp_path):
    tree, proc = node(tmp_path, modules=("nvidia", "mlx5_core", "irdma"), gpus=2, nics=2, vfs_per_pf=0,
                      port_state="1: DOWN")
    shutil.rmtree(os.path.join(tree.root, "module"))  # nothing built in
    facts = collector.collect(tree.root, proc.root)
    assert facts["readiness"]["ready"] is False
    assert facts["readiness"]["reason_codes"] == ["no_active_rdma_port", "ib_uverbs_not_loaded", "no_peer_memory_path",
                                                  "irdma_loaded"]
    assert "mlx5_0/1=DOWN" in facts["readiness"]["reasons"][0]


def test_nic_without_rdma_device_and_gpu_without_driver(tmp_path):
    tree = synth.SysfsBuilder(tmp_path)
    tree.add_pci(["pci0000:00", "0000:00:01.0", "0000:01:00.0"], synth.NVIDIA, "0x2330", synth.CLASS_3D)
    tree.add_pci(["pci0000:00", "0000:00:02.0", "0000:02:00.0"], synth.MELLANOX, "0x1021", synth.CLASS_ETHERNET)
    proc = synth.ProcBuilder(tmp_path, modules=())
    facts = collector.collect(tree.root, proc.root)
    assert facts["readiness"]["reason_codes"] == ["nvidia_driver_not_loaded", "no_rdma_device", "no_peer_memory_path"]
    assert "NIC 0000:02:00.0: no driver bound" in facts["warnings"]
    assert facts["topology"]["matrix"] == {"0": {"0000:02:00.0": "PHB"}}
    assert facts["topology"]["nearest_nic"] == {}  # no RDMA device to recommend


def test_all_pairs_sys_and_inactive_second_port_are_warnings(tmp_path):
    tree = synth.SysfsBuilder(tmp_path)
    tree.add_pci(["pci0000:00", "0000:00:01.0", "0000:01:00.0"], synth.NVIDIA, "0x2330", synth.CLASS_3D, numa_node=0,
                 driver="nvidia")
    for function, state in ((0, "4: ACTIVE"), (1, "1: DOWN")):
        address = "0000:81:00.%d" % function
        tree.add_pci(["pci0000:80", "0000:80:01.0", address], synth.MELLANOX, "0x101d", synth.CLASS_ETHERNET,
                     numa_node=1, driver="mlx5_core")
        tree.add_netdev(address, "ens8f%dnp%d" % (function, function), mtu=9000)
        tree.add_rdma(address, "mlx5_%d" % function, "b8e9:2403:004e:deb%d" % function, "22.39.1002", "MT4125",
                      [synth.ib_port(state=state, link_layer="Ethernet", rate="100 Gb/sec (2X HDR)")])
    proc = synth.ProcBuilder(tmp_path, modules=RDMA_MODULES + ("nvidia", "nvidia_peermem"))
    facts = collector.collect(tree.root, proc.root)
    assert facts["readiness"]["ready"] is True
    assert facts["readiness"]["warning_codes"] == ["all_pairs_sys", "rdma_port_not_active"]
    assert facts["nics"][0]["model"] == "ConnectX-6 Dx"
    assert facts["nics"][0]["ports"][0]["mtu"] == 9000  # single netdev of the function
    assert facts["topology"]["nearest_nic"]["0"] == {"pci_address": "0000:81:00.0", "rdma_device": "mlx5_0",
                                                     "netdevs": ["ens8f0np0"], "relation": "SYS"}


def test_broken_trees_never_raise(tmp_path):
    tree, proc = node(tmp_path, gpus=2, nics=2, vfs_per_pf=2)
    nic_dir = tree.device_dir("0000:14:00.0")
    os.unlink(os.path.join(nic_dir, "infiniband", "mlx5_0", "device"))  # HCA without device link
    os.unlink(os.path.join(nic_dir, "driver"))
    for name in ("numa_node", "current_link_speed", "sriov_totalvfs", "class"):
        os.unlink(os.path.join(nic_dir, name))
    shutil.rmtree(os.path.join(nic_dir, "infiniband", "mlx5_0", "ports", "1", "gids"))
    os.unlink(os.path.join(tree.root, "bus", "pci", "devices", "0000:13:00.0"))  # GPU link gone
    os.symlink("../../../devices/pci0000:99/0000:99:00.0", os.path.join(tree.root, "bus", "pci", "devices", "0000:99:00.0"))
    with open(os.path.join(tree.root, "class", "infiniband", "mlx5_1", "ports", "1", "rate"), "w") as handle:
        handle.write("garbage\n")
    os.symlink("/nonexistent", os.path.join(tree.root, "class", "infiniband", "mlx5_99"))
    facts = collector.collect(tree.root, proc.root)
    nic = facts["nics"][0]
    assert nic["pci_address"] == "0000:14:00.0"
    assert nic["driver"] is None and nic["numa_node"] is None and nic["sriov"]["totalvfs"] is None
    assert nic["rdma_device"] == "mlx5_0" and nic["ports"][0]["gids"] == []
    assert len(facts["gpus"]) == 1  # the GPU whose bus link was removed is gone, the other stays
    assert any("no driver bound" in warning for warning in facts["warnings"])
    assert facts["rdma_devices"][-1]["name"] == "mlx5_99" and facts["rdma_devices"][-1]["ports"] == []
    rates = dict((dev["name"], dev["ports"][0]["rate_gbps"]) for dev in facts["rdma_devices"] if dev["ports"])
    assert rates["mlx5_1"] is None
    json.dumps(facts)


def test_gather_toggles(tmp_path):
    tree, proc = node(tmp_path, gpus=1, nics=1, vfs_per_pf=0)
    only_nics = collector.collect(tree.root, proc.root, gather_gpus=False)
    assert only_nics["gpus"] == [] and len(only_nics["nics"]) == 2
    only_gpus = collector.collect(tree.root, proc.root, gather_nics=False)
    assert len(only_gpus["gpus"]) == 1 and only_gpus["nics"] == [] and only_gpus["rdma_devices"] == []


def test_command_line_prints_the_same_facts(tmp_path):
    tree, proc = node(tmp_path, gpus=2, nics=2, vfs_per_pf=1)
    out = subprocess.run([sys.executable, COLLECTOR_PY, "--sys-root", tree.root, "--proc-root", proc.root,
                          "--nvidia-smi", "skip", "--json"], stdout=subprocess.PIPE, check=True).stdout
    assert json.loads(out) == collector.collect(tree.root, proc.root)


def test_standalone_copy_runs_alone_with_bare_python(tmp_path):
    tree, proc = node(tmp_path, gpus=2, nics=2, vfs_per_pf=1)
    lone = tmp_path / "configmap"
    lone.mkdir()
    script = str(lone / "gpudirect-facts.py")
    subprocess.run([sys.executable, COLLECTOR_PY, "--write-standalone", script], check=True)
    assert os.listdir(str(lone)) == ["gpudirect-facts.py"]
    env = {"PATH": "/usr/bin:/bin"}
    # -I: no PYTHONPATH, no user site, no script directory on sys.path -- only this one file and the stdlib
    out = subprocess.run([sys.executable, "-I", script, "--sys-root", tree.root, "--proc-root", proc.root,
                          "--nvidia-smi", "skip", "--json"], stdout=subprocess.PIPE, env=env, cwd=str(tmp_path),
                         check=True).stdout
    assert json.loads(out) == collector.collect(tree.root, proc.root)


def test_standalone_copy_runs_nvidia_smi(tmp_path):
    tree, proc = h200_tree(tmp_path)
    xml_file = tmp_path / "q.xml"
    xml_file.write_text(synth.read_fixture("h200-node", "nvidia-smi-q-x.xml"))
    fake = tmp_path / "bin" / "nvidia-smi"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\ncat %s\n" % xml_file)
    fake.chmod(0o755)
    script = str(tmp_path / "facts.py")
    subprocess.run([sys.executable, COLLECTOR_PY, "--write-standalone", script], check=True)
    out = subprocess.run([sys.executable, "-I", script, "--sys-root", tree.root, "--proc-root", proc.root],
                         stdout=subprocess.PIPE, env={"PATH": "%s:/usr/bin:/bin" % fake.parent}, check=True).stdout
    facts = json.loads(out)
    assert facts["nvidia_smi"]["used"] is True
    assert facts["gpus"][0]["uuid"] == "GPU-9afc864c-c5d7-6c43-7842-f5e9cfaba8a3"
