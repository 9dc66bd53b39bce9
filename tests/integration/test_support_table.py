"""The support table (OpenShift x GPU / Network Operator versions): defined once in plugins/module_utils/catalogue.py,
shown in docs/support.md, modelled by the simulator's catalogs, and enforced by preflight before any write."""

import json
import re
from pathlib import Path

import pytest

from ansible_collections.gpudirect.openshift.plugins.module_utils.catalogue import SUPPORT_TABLE as TABLE
from simulator.catalog import Catalog, csv_version
from simulator.profiles import OPENSHIFT_RELEASES
from site_support import ROOT, run_playbook

COLUMNS = ("gpu-operator-certified", "nvidia-network-operator")
ROCE_LAB_VARS = "@" + str(Path(ROOT) / "playbooks" / "vars" / "simulator" / "roce-lab.yml")
# For preflight-only runs: a roce-lab port named, so that no hardware-facts pods run first.
PREFLIGHT_VARS = json.dumps({"gpudirect_rdma_method": "shared_device", "gpudirect_rdma_fabric": "roce",
                             "gpudirect_rdma_nic_interfaces": ["ens1f0np0"], "gpudirect_rdma_ipam_range": "192.168.2.0/24"})


def docs_table():
    """{minor: {package: [versions]}} from the "OpenShift × operator versions" table of docs/support.md."""
    text = (Path(ROOT) / "docs" / "support.md").read_text()
    section = text.split("## OpenShift × operator versions", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and re.fullmatch(r"\d+\.\d+", cells[0]):
            rows[cells[0]] = {package: [v.strip() for v in cell.split(",")] for package, cell in zip(COLUMNS, cells[1:3])}
    return rows


def test_docs_show_the_table_preflight_enforces():
    assert docs_table() == TABLE
    assert all(set(row) == set(COLUMNS) for row in TABLE.values())


def test_no_role_readme_claims_another_openshift_range():
    oldest = min(TABLE, key=lambda v: tuple(map(int, v.split("."))))
    for readme in sorted((Path(ROOT) / "roles").glob("*/README.md")):
        for claimed in re.findall(r"OpenShift (\d+\.\d+) or newer", readme.read_text()):
            assert claimed == oldest, (readme, claimed)


@pytest.mark.parametrize("minor", sorted(TABLE))
def test_the_simulated_catalog_of_each_row_holds_exactly_its_versions(minor):
    """The simulator models every row (profile@<minor>.z) and its catalog, built from the bundles' OpenShift labels,
    offers exactly the versions of the row."""
    assert minor in OPENSHIFT_RELEASES
    catalog = Catalog(openshift_minor=minor)
    for package in COLUMNS:
        entries = {e for entries in catalog.package(package)["channels"].values() for e in entries}
        assert sorted("v" + csv_version(e).lstrip("v") for e in entries) == sorted(TABLE[minor][package]), (minor, package)


def row_profile(minor):
    return "roce-lab@%s.0" % minor


def test_the_default_profile_runs_the_newest_row():
    """So test_site_sh.py (hack/site.sh on the default profile) converges on the newest row."""
    from simulator.profiles import load_profile

    newest = max(TABLE, key=lambda v: tuple(map(int, v.split("."))))
    assert re.match(r"%s\.\d+$" % re.escape(newest), load_profile("roce-lab").cluster.version)


def test_site_converges_on_the_oldest_row(sim_factory):
    minor = min(TABLE, key=lambda v: tuple(map(int, v.split("."))))
    sim = sim_factory(profile=row_profile(minor))
    run = run_playbook(sim, "-e", ROCE_LAB_VARS)
    assert run.rc == 0, run.output[-4000:]
    assert "OpenShift %s.0" % minor in run.output
    assert "not in the support table" not in run.output and "is not supported on OpenShift" not in run.output


def test_preflight_refuses_an_openshift_version_outside_the_table_before_any_write(sim_factory):
    outside = "4.21"
    assert outside not in TABLE and outside in OPENSHIFT_RELEASES
    sim = sim_factory(profile=row_profile(outside))
    run = run_playbook(sim, "-e", PREFLIGHT_VARS, "--tags", "preflight")
    text = " ".join(run.output.split())
    assert run.rc != 0 and run.writes == 0 and run.dry_run_writes == 0
    assert "OpenShift 4.21.0 is not in the support table (OpenShift %s, docs/support.md)" % ", ".join(TABLE) in text
    assert "preflight_allow_unsupported_versions: true" in text
    allowed = run_playbook(sim, "-e", PREFLIGHT_VARS, "-e", "preflight_allow_unsupported_versions=true", "--tags", "preflight")
    assert "not in the support table" not in allowed.output


def test_preflight_refuses_an_operator_version_the_row_does_not_list(sim_factory):
    """The catalog of a 4.17 cluster gains GPU Operator v25.10.0 on channel v25.10 (as test_olm_pins publishes it):
    asking for that channel is refused, naming the variable, until the opt-out accepts it."""
    sim = sim_factory(profile="roce-lab@4.17.30")
    sim.update_catalog(publish=[{"package": "gpu-operator-certified", "channel": "v25.10", "csv": "gpu-operator-certified.v25.10.0"}])
    channel = json.dumps({"nvidia_gpu_operator_channel": "v25.10"})
    run = run_playbook(sim, "-e", PREFLIGHT_VARS, "-e", channel, "--tags", "preflight")
    text = " ".join(run.output.split())
    assert run.rc != 0 and run.writes == 0 and run.dry_run_writes == 0, run.output[-3000:]
    assert ("gpu-operator-certified v25.10.0 (head of channel v25.10) is not supported on OpenShift 4.17: the support table "
            "(docs/support.md) lists %s. Set nvidia_gpu_operator_channel or nvidia_gpu_operator_starting_csv" %
            ", ".join(TABLE["4.17"]["gpu-operator-certified"])) in text, text[-3000:]
    allowed = run_playbook(sim, "-e", PREFLIGHT_VARS, "-e", channel, "-e", "preflight_allow_unsupported_versions=true",
                           "--tags", "preflight")
    assert allowed.rc == 0 and allowed.writes == 0, allowed.output[-3000:]
