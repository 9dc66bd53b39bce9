# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Golden files of the renderer: every file render.yml would write for each configuration, compared byte for byte.

The model is NVIDIA/gpu-operator's internal/state/driver_test.go, which renders fixed inputs and compares the YAML
with internal/state/testdata/golden/<case>.yaml. Here each case is a directory tests/unit/golden/<case>/ holding one
file per rendered object (named as render.yml names it), the rail job's pod template and images.txt, or the whole
GitOps tree (render_format=gitops). The inputs are fixed: the example variables files, the simulator profiles' hardware
facts (what the collection's collector reads from their sysfs, frozen in tests/unit/fixtures/facts; no cluster) and the
catalogue's defaults.

A change of the renderer shows as a diff of these files in review. To accept one, rewrite them with
``pytest tests/unit/plugins/module_utils/render/test_golden.py --update-golden`` (or GPUDIRECT_UPDATE_GOLDEN=1) and
commit the files with the change (docs/contributing.md).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import difflib
import json
import os

import pytest
import yaml

from ansible.plugins.filter.core import to_nice_yaml

from ansible_collections.gpudirect.openshift.plugins.module_utils import catalogue
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import gitops, olm, plan
from ansible_collections.gpudirect.openshift.tests.configurations import EXAMPLE_FILES, EXAMPLES, ROOT

GOLDEN = os.path.join(ROOT, "tests", "unit", "golden")
SIMULATOR_VARS = os.path.join(ROOT, "playbooks", "vars", "simulator")
FACTS = os.path.join(ROOT, "tests", "unit", "fixtures", "facts")
# The pin a GitOps tree needs for the GPU Operator's Manual approval (its InstallPlan approver Job names it).
GPU_OPERATOR_PIN = "gpu-operator-certified.v25.3.4"
PINS = {"nfd": "nfd.4.20.0-202511041207", "sriov_network_operator": "sriov-network-operator.v4.20.0-202511041207",
        "nvidia_network_operator": "nvidia-network-operator.v26.4.1", "nvidia_gpu_operator": GPU_OPERATOR_PIN}


def _load(path):
    with open(path, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def _rail_variables(profile):
    """A rail profile's variables (what hack/site.sh uses on it) with the facts its nodes' collector reports, frozen in
    tests/unit/fixtures/facts (SOURCES.md there)."""
    variables = _load(os.path.join(SIMULATOR_VARS, profile + ".yml"))
    with open(os.path.join(FACTS, profile + ".json"), encoding="utf-8") as handle:
        facts = json.load(handle)
    variables.update(gpudirect_rdma_nic_facts=facts["nic_ports"], gpudirect_rdma_gpu_nic_affinity=facts["gpu_nic_affinity"])
    return variables


# case -> a function giving its gpudirect_rdma_* variables.
CASES = dict((name[:-len(".yml")], (lambda name=name: _load(os.path.join(EXAMPLES, name)))) for name in EXAMPLE_FILES)
CASES.update({
    "node-groups": lambda: _load(os.path.join(SIMULATOR_VARS, "groups-lab.yml")),
    "rails-infiniband": lambda: _rail_variables("rail-ib-lab"),
    "rails-roce": lambda: _rail_variables("rail-roce-lab"),
})
GITOPS_CASES = ("1-shared-device-roce", "node-groups")


def _text(manifest):
    # render.yml writes every file with this filter and these arguments.
    return to_nice_yaml(manifest, indent=2, sort_keys=False)


def _operators(pinned):
    operators = catalogue.resolve({})
    if pinned:
        # Every operator defaults to Manual approval, so the GitOps tree pins each (the simulated catalog's heads).
        for entry in operators:
            entry["starting_csv"] = PINS[entry["role"]]
    return operators


def rendered_files(case, gitops_tree=False):
    """{relative path: text} of what render.yml writes for the case (without its record of written files)."""
    variables = CASES[case]()
    result = plan.render_all(copy.deepcopy(variables))
    assert result["errors"] == [], result["errors"]
    olm_entries, errors = olm.olm_manifests(variables, _operators(gitops_tree))
    assert errors == []
    if gitops_tree:
        tree = gitops.gitops_tree(olm_entries, result["manifests"], workload=result["workload"],
                                  owners=gitops.node_group_owners(variables))
        files = dict((item["path"], _text(item["manifest"])) for item in tree)
    else:
        files = dict((entry["file"], _text(entry["manifest"])) for entry in olm_entries + result["manifests"])
    files[result["workload"]["file"]] = _text(result["workload"]["manifest"])
    files["images.txt"] = "".join("%s\n" % image for image in sorted(set(item["image"] for item in result["images"])))
    assert len(files) == len(olm_entries) + len(result["manifests"]) + 2 or gitops_tree, "two objects share a file name"
    return files


def golden_files(directory):
    found = {}
    for parent, _dirs, names in os.walk(directory):
        for name in names:
            path = os.path.join(parent, name)
            with open(path, encoding="utf-8") as handle:
                found[os.path.relpath(path, directory)] = handle.read()
    return found


def write_golden(directory, files):
    for stale in set(golden_files(directory)) - set(files):
        os.remove(os.path.join(directory, stale))
    for path, text in files.items():
        target = os.path.join(directory, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(text)
    for parent, dirs, names in sorted(os.walk(directory), reverse=True):
        if not dirs and not names and parent != directory:
            os.rmdir(parent)


def differences(expected, actual, directory):
    """Unified diffs of every file that differs, plus the files only one side has (empty when they agree)."""
    lines = []
    for path in sorted(set(expected) | set(actual)):
        if expected.get(path) == actual.get(path):
            continue
        lines.extend(difflib.unified_diff(
            (expected.get(path) or "").splitlines(True), (actual.get(path) or "").splitlines(True),
            fromfile=os.path.join(directory, path) + ("" if path in expected else " (missing)"),
            tofile="rendered/" + path + ("" if path in actual else " (not rendered any more)")))
    return "".join(lines)


def compare(directory, files, update):
    """Assert that ``directory`` holds exactly ``files``; with ``update``, make it so first."""
    if update:
        write_golden(directory, files)
    expected = golden_files(directory) if os.path.isdir(directory) else {}
    where = os.path.relpath(directory, ROOT)
    assert sorted(expected) == sorted(files) and not differences(expected, files, where), (
        "the render differs from %s; if the change is intended, rewrite the golden files with "
        "pytest %s --update-golden and commit them:\n%s" % (where, os.path.relpath(__file__, ROOT), differences(expected, files, where)))


@pytest.mark.parametrize("case", sorted(CASES))
def test_render_matches_its_golden_files(case, update_golden):
    compare(os.path.join(GOLDEN, case), rendered_files(case), update_golden)


@pytest.mark.parametrize("case", GITOPS_CASES)
def test_gitops_tree_matches_its_golden_files(case, update_golden):
    compare(os.path.join(GOLDEN, "gitops-" + case), rendered_files(case, gitops_tree=True), update_golden)


def test_every_golden_directory_is_a_case():
    # a renamed or removed case must take its golden files with it
    cases = set(CASES) | set("gitops-" + case for case in GITOPS_CASES)
    assert sorted(os.listdir(GOLDEN)) == sorted(cases)


def test_a_changed_render_fails_with_a_diff_and_update_rewrites(tmp_path):
    directory = str(tmp_path / "case")
    files = rendered_files("1-shared-device-roce")
    compare(directory, files, update=True)
    compare(directory, files, update=False)
    changed = dict(files)
    network = next(path for path in sorted(changed) if "-macvlannetwork-" in path)
    changed[network] = changed[network].replace("192.168.2.0/24", "192.168.9.0/24")
    changed["9999-extra.yaml"] = "kind: Extra\n"
    with pytest.raises(AssertionError) as failure:
        compare(directory, changed, update=False)
    message = str(failure.value)
    assert "--update-golden" in message and "9999-extra.yaml" in message
    assert "-" in message and "192.168.2.0/24" in message and "+" in message and "192.168.9.0/24" in message
    assert "--- %s/%s" % (os.path.relpath(directory, ROOT), network) in message
    removed = dict(changed)
    del removed[network]
    compare(directory, removed, update=True)
    assert sorted(golden_files(directory)) == sorted(removed)
