# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Names of plugins/ files (issue 37): no production file is named like a test (pytest collects ``*_test.py`` by
default), and the modules renamed for that keep their old names working through meta/runtime.yml's plugin_routing,
as ansible-core resolves them (ansible-doc goes through the same plugin loader as a task)."""

import json
import os
import subprocess

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# old name -> new name, until the removal_version of meta/runtime.yml
RENAMED = {"rdma_bandwidth_test": "rdma_bandwidth", "nccl_allreduce_test": "nccl_allreduce"}


def test_no_production_file_is_named_like_a_test():
    found = [os.path.relpath(os.path.join(folder, name), ROOT) for folder, _dirs, files in os.walk(os.path.join(ROOT, "plugins"))
             for name in files if name.endswith("_test.py") or name.startswith("test_")]
    assert found == []


def test_old_module_names_redirect_to_the_new_ones_with_a_deprecation():
    with open(os.path.join(ROOT, "meta", "runtime.yml")) as handle:
        runtime = yaml.safe_load(handle)
    routing = runtime["plugin_routing"]["modules"]
    galaxy_major = int(yaml.safe_load(open(os.path.join(ROOT, "galaxy.yml")))["version"].split(".")[0])
    for old, new in RENAMED.items():
        assert routing[old]["redirect"] == "gpudirect.openshift.%s" % new
        # removed in the next major release, never in a minor one
        assert routing[old]["deprecation"]["removal_version"] == "%d.0.0" % (galaxy_major + 1)
        assert not os.path.exists(os.path.join(ROOT, "plugins", "modules", old + ".py"))
        assert new in runtime["action_groups"]["cluster"]
    proc = subprocess.run(["ansible-doc", "--json", "-t", "module"] + ["gpudirect.openshift." + old for old in RENAMED],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    docs = json.loads(proc.stdout)
    for old, new in RENAMED.items():
        # the old name is found and documents the new module
        assert docs["gpudirect.openshift." + old]["doc"]["module"] == new
        assert "gpudirect.openshift.%s has been deprecated" % old in " ".join(proc.stderr.split())
