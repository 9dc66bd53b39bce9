"""The molecule scenarios under extensions/molecule: layout and wiring, checked without running them.

hack/test.sh stage molecule runs four of them in full against the simulator and checks the syntax of the rest (all of
them in full with GPUDIRECT_MOLECULE_ALL=1); these tests catch a scenario that points at the wrong variables file or
profile, or a shared playbook that went missing, in seconds.
"""

import glob
import json
import os
import re

import pytest
import yaml

from ansible_collections.gpudirect.openshift.plugins.module_utils.render.plan import render_all
from ansible_collections.gpudirect.openshift.tests.configurations import NUMBERED

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MOLECULE = os.path.join(ROOT, "extensions", "molecule")
PROFILES = os.path.join(ROOT, "simulator", "profiles")
# scenario <method>_<fabric> -> (number, method, fabric) of each configuration (tests/configurations.py)
SCENARIO_CONFIGURATIONS = dict(("%s_%s" % (method, fabric), (number, method, fabric)) for number, method, fabric, _file in NUMBERED)
SCENARIOS = sorted(SCENARIO_CONFIGURATIONS) + ["operators"]


def load(path):
    with open(path, encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def playbook_args(scenario):
    return load(os.path.join(MOLECULE, scenario, "molecule.yml"))["ansible"]["executor"]["args"]["ansible_playbook"]


def extra_vars_file(scenario):
    """The scenario's @file extra vars, resolved like ansible-playbook does (molecule runs it in the scenario dir)."""
    files = [a.split("@", 1)[1] for a in playbook_args(scenario) if a.startswith("--extra-vars=@")]
    assert len(files) == 1, files
    return os.path.normpath(os.path.join(MOLECULE, scenario, files[0]))


def extra_var(scenario, name):
    for arg in playbook_args(scenario):
        match = re.fullmatch(r"--extra-vars=%s=(\S+)" % re.escape(name), arg)
        if match:
            return match.group(1)
    return None


def test_every_scenario_is_there_and_nothing_else():
    found = sorted(os.path.basename(os.path.dirname(p)) for p in glob.glob(os.path.join(MOLECULE, "*", "molecule.yml")))
    assert found == sorted(SCENARIOS + ["default"])


def test_base_config_points_at_shared_playbooks_that_exist():
    config = load(os.path.join(MOLECULE, "config.yml"))
    playbooks = config["ansible"]["playbooks"]
    assert set(playbooks) == {"create", "converge", "verify", "destroy"}
    for scenario in SCENARIOS + ["default"]:
        for path in playbooks.values():
            assert os.path.isfile(os.path.normpath(os.path.join(MOLECULE, scenario, path))), (scenario, path)
    assert config["scenario"]["test_sequence"] == ["create", "converge", "idempotence", "verify", "destroy"]
    assert config["prerun"] is False and config["dependency"]["enabled"] is False


def test_shared_plays_run_whatever_tags_a_scenario_selects():
    # the operators scenario passes --tags operators to every playbook; the shared plays must still run
    for name in ("create.yml", "verify.yml", "destroy.yml"):
        plays = load(os.path.join(MOLECULE, "default", name))
        assert plays and all("always" in play.get("tags", []) for play in plays), name


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_scenario_only_chooses_profile_and_variables(scenario):
    config = load(os.path.join(MOLECULE, scenario, "molecule.yml"))
    assert set(config) == {"ansible"}
    assert set(config["ansible"]) == {"executor"}
    profile = extra_var(scenario, "molecule_simulator_profile")
    assert profile and os.path.isfile(os.path.join(PROFILES, profile + ".yaml"))


@pytest.mark.parametrize("scenario", sorted(SCENARIO_CONFIGURATIONS))
def test_configuration_scenario_renders_its_configuration(scenario):
    number, method, fabric = SCENARIO_CONFIGURATIONS[scenario]
    path = extra_vars_file(scenario)
    assert os.path.basename(path).startswith("%d-" % number)
    variables = load(path)
    assert (variables["gpudirect_rdma_method"], variables["gpudirect_rdma_fabric"]) == (method, fabric)
    plan = render_all(variables)
    assert plan["errors"] == []
    assert plan["summary"]["configuration_number"] == number
    assert plan["summary"]["resources"] and plan["summary"]["networks"]
    assert "--tags=operators" not in playbook_args(scenario)


def test_configuration_interfaces_exist_in_the_scenario_profile():
    for scenario in SCENARIO_CONFIGURATIONS:
        profile = load(os.path.join(PROFILES, extra_var(scenario, "molecule_simulator_profile") + ".yaml"))
        netdevs = json.dumps(profile)
        variables = load(extra_vars_file(scenario))
        ports = variables.get("gpudirect_rdma_nic_interfaces", []) + variables.get("gpudirect_rdma_nic_pci_addresses", [])
        assert ports, scenario
        for port in ports:  # interface names, or PCI addresses (host device)
            assert '"%s"' % port in netdevs, (scenario, port)


def test_operators_scenario_converges_the_operators_tag_only():
    args = playbook_args("operators")
    assert "--tags=operators" in args
    assert render_all(load(extra_vars_file("operators")))["errors"] == []
