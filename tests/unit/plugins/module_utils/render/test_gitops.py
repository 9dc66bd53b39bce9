# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GitOps tree (render/gitops.py) built by the real kustomize of the system kubectl: for the six configurations
and a two-group node-groups example, `kubectl kustomize overlays/<cluster>` gives exactly the objects of the normal
render (same kinds, names and specs) plus the sync-wave and sync-options annotations, the pinned InstallPlan approver
and the verification Job; waves follow the render's apply order; a second render is identical."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import os
import subprocess

import pytest
import yaml

from ansible_collections.gpudirect.openshift.plugins.module_utils import catalogue
from ansible_collections.gpudirect.openshift.plugins.module_utils import names
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import gitops, olm, plan
from ansible_collections.gpudirect.openshift.tests.configurations import CONFIGURATIONS, example_path

KUBECTL = "/usr/bin/kubectl"
EXAMPLES = [example_path(name) for name in CONFIGURATIONS.values()]
PIN = "gpu-operator-certified.v25.3.4"
LABEL = "example.com/rdma-group"
NODE_GROUPS = {
    "gpudirect_rdma_method": "shared_device", "gpudirect_rdma_fabric": "infiniband",
    "gpudirect_rdma_node_groups": [
        {"name": "ib", "node_selector": {LABEL: "ib"}, "nic_interfaces": ["ibs2f0"], "ipam_range": "192.168.0.0/24"},
        {"name": "roce", "node_selector": {LABEL: "roce"}, "fabric": "roce", "nic_interfaces": ["ens8f0np0"], "ipam_range": "192.168.1.0/24"}],
}
RENDER_CASES = [pytest.param(path, id=os.path.basename(path)[:-4]) for path in EXAMPLES] + [pytest.param(NODE_GROUPS, id="node-groups")]


def operators(approval="Manual", pin=PIN):
    """The catalogue with the GPU Operator's approval and pin; the other three Automatic, so that only the GPU Operator
    gets an approver (every operator defaults to Manual: test_every_operator_defaults_to_manual_and_needs_its_pin)."""
    found = catalogue.resolve({})
    for entry in found:
        if entry["role"] == "nvidia_gpu_operator":
            entry.update(install_plan_approval=approval, starting_csv=pin)
        else:
            entry.update(install_plan_approval="Automatic")
    return found


def test_every_operator_defaults_to_manual_and_needs_its_pin():
    """Issue 34 (LOW): NFD, SR-IOV and the Network Operator defaulted to Automatic. Now all four default to Manual, so
    a GitOps tree without pins names each operator's starting_csv variable."""
    found = catalogue.resolve({})
    assert [(entry["role"], entry["install_plan_approval"]) for entry in found] == [
        ("nfd", "Manual"), ("sriov_network_operator", "Manual"), ("nvidia_network_operator", "Manual"), ("nvidia_gpu_operator", "Manual")]
    entries, _errors = olm.olm_manifests({}, found)
    assert [error.split(":", 1)[0] for error in gitops.approval_errors(entries, found)] == [
        "nfd_starting_csv", "sriov_network_operator_starting_csv", "nvidia_network_operator_starting_csv",
        "nvidia_gpu_operator_starting_csv"]


def render(variables, cluster="lab-a", ops=None):
    if isinstance(variables, str):
        variables = yaml.safe_load(open(variables))
    rendered = plan.render_all(copy.deepcopy(variables))
    assert rendered["errors"] == []
    entries, errors = olm.olm_manifests(variables, ops or operators())
    assert errors == []
    files = gitops.gitops_tree(entries, rendered["manifests"], workload=rendered["workload"], cluster=cluster,
                               owners=gitops.node_group_owners(variables))
    return rendered, entries, files


def write(files, directory):
    for item in files:
        path = os.path.join(str(directory), item["path"])
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as handle:
            yaml.safe_dump(item["manifest"], handle, sort_keys=False)


def kustomize(directory):
    done = subprocess.run([KUBECTL, "kustomize", str(directory)], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


def without_argocd(manifest):
    manifest = copy.deepcopy(manifest)
    annotations = manifest["metadata"].get("annotations") or {}
    annotations.pop(gitops.SYNC_WAVE, None)
    annotations.pop(gitops.SYNC_OPTIONS, None)
    if not annotations:
        manifest["metadata"].pop("annotations", None)
    return manifest


def key(manifest):
    return names.object_key(manifest)


@pytest.mark.parametrize("variables", RENDER_CASES)
def test_kustomize_builds_exactly_the_rendered_objects_with_waves_in_apply_order(variables, tmp_path):
    rendered, entries, files = render(variables)
    write(files, tmp_path)
    built = kustomize(tmp_path / "overlays" / "lab-a")
    built_by_key = dict((key(m), m) for m in built)
    assert len(built_by_key) == len(built)
    expected = [("olm", e["manifest"]) for e in entries] + [(e["phase"], e["manifest"]) for e in rendered["manifests"]]
    added = [m for m in built if key(m) not in set(key(m2) for _p, m2 in expected)]
    # The render's objects, each unchanged but for the two Argo CD annotations.
    for phase, manifest in expected:
        live = built_by_key.pop(key(manifest))
        assert without_argocd(live) == manifest
        annotations = live["metadata"]["annotations"]
        assert annotations[gitops.SYNC_WAVE] == str(gitops.sync_wave(phase))
        operator_cr = manifest["apiVersion"].rpartition("/")[0] in ("nfd.openshift.io", "sriovnetwork.openshift.io", "mellanox.com", "nvidia.com")
        assert (annotations.get(gitops.SYNC_OPTIONS) == "SkipDryRunOnMissingResource=true") == operator_cr, manifest["kind"]
    # Plus only the approver of the pinned GPU Operator and the verification Job.
    assert sorted((m["kind"], m["metadata"]["name"]) for m in added) == sorted(
        [(kind, gitops.APPROVER_NAME) for kind in ("ServiceAccount", "Role", "RoleBinding", "Job")] + [("Job", gitops.VERIFICATION_NAME)])
    # Waves never go against the render's apply order (file order: OLM objects first, then the phases).
    waves = [int(live_wave) for live_wave in (gitops.sync_wave(e["phase"]) for e in rendered["manifests"])]
    assert waves == sorted(waves) and min(waves) > gitops.OLM_WAVE
    assert built_by_key == dict((key(m), m) for m in added)


def test_node_groups_get_an_overlay_each_inside_the_cluster_overlay(tmp_path):
    rendered, _entries, files = render(NODE_GROUPS)
    paths = [f["path"] for f in files]
    write(files, tmp_path)
    for group in rendered["summary"]["node_groups"]:
        directory = "overlays/lab-a/node-groups/%s" % group["name"]
        assert directory + "/kustomization.yaml" in paths
        # A group's overlay holds exactly that group's networks; shared objects (the merged NicClusterPolicy) stay in bases.
        assert sorted(m["metadata"]["name"] for m in kustomize(tmp_path / directory)) == sorted(group["networks"])
    overlay = next(f["manifest"] for f in files if f["path"] == "overlays/lab-a/kustomization.yaml")
    assert overlay["resources"][-2:] == ["node-groups/ib", "node-groups/roce"]
    assert "NicClusterPolicy" in [m["kind"] for m in kustomize(tmp_path / "bases" / "operator-configuration")]
    assert len(kustomize(tmp_path / "overlays" / "lab-a")) == len(rendered["manifests"]) + 12 + 5


def test_a_second_render_is_identical():
    assert render(EXAMPLES[4])[2] == render(EXAMPLES[4])[2]


def test_manual_approval_without_a_pin_is_refused_naming_the_variable_and_the_fix():
    ops = operators(pin="")
    entries, _errors = olm.olm_manifests({}, ops)
    assert gitops.approval_errors(entries, ops) == [
        "nvidia_gpu_operator_starting_csv: Manual approval in the GitOps tree needs the CSV to approve; set it "
        "(e.g. gpu-operator-certified.v<version>) or set nvidia_gpu_operator_install_plan_approval=Automatic"]
    # Automatic approval needs no pin and gets no approver (OLM installs and upgrades on its own).
    automatic = operators(approval="Automatic", pin="")
    entries, _errors = olm.olm_manifests({}, automatic)
    assert gitops.approval_errors(entries, automatic) == [] and gitops.approver_objects(entries, "img") == []


def test_the_approver_role_is_least_privilege_in_the_pinned_operators_namespace():
    entries, _errors = olm.olm_manifests({}, operators())
    objects = gitops.approver_objects(entries, "img")
    assert set(o["metadata"]["namespace"] for o in objects) == {"nvidia-gpu-operator"}
    role = next(o for o in objects if o["kind"] == "Role")
    assert role["rules"] == [{"apiGroups": ["operators.coreos.com"], "resources": ["installplans"], "verbs": ["get", "list", "patch"]}]
    job = next(o for o in objects if o["kind"] == "Job")
    env = dict((e["name"], e["value"]) for e in job["spec"]["template"]["spec"]["containers"][0]["env"])
    assert env == {"NAMESPACE": "nvidia-gpu-operator", "CSV": PIN}
