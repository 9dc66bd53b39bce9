# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpudirect_manifests module through its real entry point (AnsibleModule argument parsing)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import subprocess
import sys

import pytest

from ansible.module_utils.testing import patch_module_args

from ansible_collections.gpudirect.openshift.plugins.modules import gpudirect_manifests


def run_module(args, capsys):
    with patch_module_args(args):
        with pytest.raises(SystemExit) as exit_info:
            gpudirect_manifests.main()
    output = json.loads(capsys.readouterr().out)
    return exit_info.value.code, output


SHARED_ROCE = {
    "gpudirect_rdma_method": "shared_device",
    "gpudirect_rdma_fabric": "roce",
    "gpudirect_rdma_nic_interfaces": ["ens8f0np0"],
    "gpudirect_rdma_ipam_range": "192.168.2.0/24",
    "gpudirect_rdma_ipam_gateway": "192.168.2.1",
}


def test_renders_and_reports_no_change(capsys):
    code, output = run_module({"variables": SHARED_ROCE}, capsys)
    assert code == 0
    assert output["changed"] is False and output["errors"] == []
    assert [m["manifest"]["kind"] for m in output["manifests"]] == [
        "NodeFeatureDiscovery", "SriovOperatorConfig", "NicClusterPolicy", "ClusterPolicy", "MacvlanNetwork"]
    (network_file,) = output["phases"]["network"]
    assert network_file.endswith("-macvlannetwork-rdmashared-net.yaml")
    assert output["summary"]["pod_resources"] == {"rdma/rdma_shared_device_eth": 1}
    assert output["teardown_order"][0]["manifest"]["kind"] == "MacvlanNetwork"
    assert "stale_objects" not in output


def test_check_mode_gives_the_same_result(capsys):
    _code, normal = run_module({"variables": SHARED_ROCE}, capsys)
    code, checked = run_module({"variables": SHARED_ROCE, "_ansible_check_mode": True}, capsys)
    assert code == 0
    assert checked["manifests"] == normal["manifests"]


def test_invalid_variables_fail_with_every_error(capsys):
    variables = dict(SHARED_ROCE, gpudirect_rdma_ipam_range="192.168.2.0/33", gpudirect_rdma_rdma_hca_max=0)
    code, output = run_module({"variables": variables}, capsys)
    assert code == 1 and output["failed"] is True
    assert "gpudirect_rdma_ipam_range: 192.168.2.0/33 is not a valid CIDR" in output["errors"]
    assert any(e.startswith("gpudirect_rdma_rdma_hca_max:") for e in output["errors"])
    assert output["msg"].startswith("%d invalid gpudirect_rdma variable(s)" % len(output["errors"]))
    assert output["manifests"] == []


def test_errors_returned_without_failing_when_asked(capsys):
    code, output = run_module({"variables": {"gpudirect_rdma_method": "shared_device"}, "fail_on_errors": False}, capsys)
    assert code == 0 and "failed" not in output
    assert "gpudirect_rdma_fabric: required, one of roce, infiniband" in output["errors"]


def test_previous_manifests_give_stale_objects(capsys):
    previous = dict(SHARED_ROCE, gpudirect_rdma_method="sriov_legacy", gpudirect_rdma_num_vfs=8)
    del previous["gpudirect_rdma_ipam_gateway"]
    _code, before = run_module({"variables": previous}, capsys)
    code, output = run_module({"variables": SHARED_ROCE, "previous_manifests": before["manifests"]}, capsys)
    assert code == 0
    assert [(s["action"], s["manifest"]["kind"]) for s in output["stale_objects"]] == [
        ("delete", "SriovNetwork"), ("delete", "SriovNetworkNodePolicy"), ("replace", "NicClusterPolicy")]


def test_input_warnings_become_task_warnings(tmp_path):
    """Run as Ansible runs a module: a separate process (in-process runs share ansible-core's warning state
    with whatever controller code other tests imported)."""
    variables = dict(SHARED_ROCE, gpudirect_rdma_nic_interfaces=["ens1f0np0", "ens2f0np0"])
    args = tmp_path / "args.json"
    args.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": {"variables": variables}}))
    proc = subprocess.run([sys.executable, gpudirect_manifests.__file__, str(args)], capture_output=True, text=True, check=False)
    output = json.loads(proc.stdout)
    assert proc.returncode == 0, proc.stderr
    assert output["input_warnings"]
    # ansible-core 2.19 wraps warnings in WarningSummary objects; older versions give plain strings.
    emitted = [w["event"]["msg"] if isinstance(w, dict) else w for w in output["warnings"]]
    assert emitted == output["input_warnings"]


def test_gitops_output_is_the_tree_and_a_manual_operator_without_its_pin_fails_naming_the_variable(capsys):
    code, output = run_module({"variables": SHARED_ROCE, "olm_manifests": True, "output_format": "gitops"}, capsys)
    # The catalogue installs every operator with Manual approval; the tree cannot approve an unpinned plan.
    assert code == 1 and "gitops_files" not in output
    assert output["msg"].startswith("nfd_starting_csv: Manual approval in the GitOps tree needs the CSV")
    assert "nvidia_gpu_operator_starting_csv: Manual approval in the GitOps tree needs the CSV" in output["msg"]
    code, output = run_module({"variables": SHARED_ROCE, "olm_manifests": True, "output_format": "gitops", "gitops_cluster": "lab-a",
                               "operators": [{"role": "nvidia_gpu_operator", "package": "gpu-operator-certified",
                                              "namespace": "nvidia-gpu-operator", "catalog_source": "certified-operators",
                                              "install_plan_approval": "Manual", "starting_csv": "gpu-operator-certified.v25.3.4"}]},
                              capsys)
    assert code == 0 and output["changed"] is False
    paths = [f["path"] for f in output["gitops_files"]]
    assert [p for p in paths if p.startswith("bases/operators/") and p.endswith("-job-gpudirect-installplan-approver.yaml")]
    assert "overlays/lab-a/kustomization.yaml" in paths
    assert [p for p in paths if p.startswith("bases/rdma-networks/") and p.endswith("-macvlannetwork-rdmashared-net.yaml")]
    code, output = run_module({"variables": SHARED_ROCE, "output_format": "gitops"}, capsys)
    assert code == 1 and output["msg"] == "olm_manifests: the GitOps tree holds the operators; set olm_manifests: true"
