# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_nic_facts through the module interface (patch_module_args + main) and through `ansible -m`."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import subprocess

import pytest

from ansible.module_utils.testing import patch_module_args
from ansible_collections.gpudirect.openshift.plugins.modules import gpu_nic_facts
from ansible_collections.gpudirect.openshift.tests.unit.fixtures import synthetic_sysfs as synth


def run_module(capsys, args):
    with patch_module_args(args):
        with pytest.raises(SystemExit) as exit_info:
            gpu_nic_facts.main()
    result = json.loads(capsys.readouterr().out)
    return exit_info.value.code, result


@pytest.fixture
def h200(tmp_path):
    tree = synth.build_from_attr_dump(tmp_path, synth.fixture_path("h200-node", "pci-sysfs-attrs"))
    proc = synth.ProcBuilder(tmp_path, modules_text=synth.strip_capture(synth.read_fixture("h200-node", "lsmod.txt")))
    xml_file = tmp_path / "q.xml"
    xml_file.write_text(synth.read_fixture("h200-node", "nvidia-smi-q-x.xml"))
    fake = tmp_path / "nvidia-smi"
    fake.write_text('#!/bin/sh\n[ "$1 $2" = "-q -x" ] || exit 3\ncat %s\n' % xml_file)
    fake.chmod(0o755)
    return tree.root, proc.root, str(fake)


def test_facts_with_nvidia_smi_binary(capsys, h200):
    sys_root, proc_root, fake = h200
    code, result = run_module(capsys, {"sys_root": sys_root, "proc_root": proc_root, "nvidia_smi": fake})
    assert code == 0
    assert result["changed"] is False
    facts = result["ansible_facts"]["gpudirect"]
    assert facts["nvidia_smi"]["used"] is True and facts["nvidia_smi"]["xml_schema"] == "v13"
    assert facts["gpus"][0]["name"] == "NVIDIA H200"
    assert facts["readiness"]["ready"] is False
    assert facts["readiness"]["reason_codes"] == ["no_mellanox_nic", "no_peer_memory_path"]


def test_check_mode_gives_the_same_facts(capsys, h200):
    sys_root, proc_root, fake = h200
    args = {"sys_root": sys_root, "proc_root": proc_root, "nvidia_smi": fake}
    _code, normal = run_module(capsys, args)
    code, checked = run_module(capsys, dict(args, _ansible_check_mode=True))
    assert code == 0 and checked["changed"] is False
    assert checked["ansible_facts"] == normal["ansible_facts"]


def test_skip_and_missing_nvidia_smi(capsys, h200, tmp_path):
    sys_root, proc_root, _fake = h200
    _code, skipped = run_module(capsys, {"sys_root": sys_root, "proc_root": proc_root, "nvidia_smi": "skip"})
    facts = skipped["ansible_facts"]["gpudirect"]
    assert facts["nvidia_smi"]["used"] is False and facts["gpus"][0]["source"] == "sysfs" and facts["warnings"] == []
    missing = str(tmp_path / "no-such-nvidia-smi")
    _code, result = run_module(capsys, {"sys_root": sys_root, "proc_root": proc_root, "nvidia_smi": missing})
    facts = result["ansible_facts"]["gpudirect"]
    assert facts["gpus"][0]["source"] == "sysfs"
    assert any(missing in warning for warning in facts["warnings"])


def test_auto_finds_nvidia_smi_on_path(capsys, h200, monkeypatch):
    sys_root, proc_root, fake = h200
    monkeypatch.setenv("PATH", os.path.dirname(fake) + os.pathsep + os.environ.get("PATH", ""))
    _code, result = run_module(capsys, {"sys_root": sys_root, "proc_root": proc_root})
    assert result["ansible_facts"]["gpudirect"]["nvidia_smi"]["used"] is True


def test_gather_gpus_false_does_not_run_nvidia_smi(capsys, h200, tmp_path):
    sys_root, proc_root, _fake = h200
    marker = tmp_path / "ran"
    spy = tmp_path / "spy-nvidia-smi"
    spy.write_text("#!/bin/sh\ntouch %s\n" % marker)
    spy.chmod(0o755)
    _code, result = run_module(capsys, {"sys_root": sys_root, "proc_root": proc_root, "nvidia_smi": str(spy),
                                        "gather_gpus": False})
    assert result["ansible_facts"]["gpudirect"]["gpus"] == []
    assert not marker.exists()


def test_bad_option_fails(capsys, h200):
    sys_root, proc_root, _fake = h200
    code, result = run_module(capsys, {"sys_root": sys_root, "gather_gpus": "maybe"})
    assert code == 1 and result["failed"] is True and "gather_gpus" in result["msg"]


def test_ansible_adhoc_on_node_exporter_tree():
    root = synth.fixture_path("sysfs", "node-exporter-sys")
    proc = subprocess.run(
        ["ansible", "-m", "gpudirect.openshift.gpu_nic_facts", "-a", "sys_root=%s nvidia_smi=skip" % root,
         "localhost", "-o"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False, env=dict(os.environ, ANSIBLE_LOAD_CALLBACK_PLUGINS="0"))
    out = proc.stdout.decode()
    assert proc.returncode == 0, out + proc.stderr.decode()
    result = json.loads(out.split("=>", 1)[1])
    facts = result["ansible_facts"]["gpudirect"]
    assert sorted(dev["name"] for dev in facts["rdma_devices"]) == ["i40iw0", "mlx4_0"]
    assert facts["readiness"]["ready"] is False and "no_nvidia_gpu" in facts["readiness"]["reason_codes"]
