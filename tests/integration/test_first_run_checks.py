"""Issue 31: what the second run of site.yml catches must stop the first run too, before any configuration write.

A fresh cluster has no SR-IOV node states, so preflight reads the NIC ports with the hardware facts pods (which need
no operator; their pods and cache ConfigMaps in the facts namespace are the only writes) and checks the NIC variables
against them for every method; the memlock pool is checked with NIC selection auto as with NICs given by name."""

import pytest

from simulator.requestlog import QUESTION_GROUPS, WRITE_VERBS
from site_support import ROOT, example, run_playbook

FACTS_NAMESPACE = "gpudirect-facts"  # roles/hardware_facts/defaults/main.yml hardware_facts_namespace


def configuration_writes(sim, since):
    """Writes other than the facts pods' own (pods, ConfigMaps in the facts namespace); the permission check's access
    reviews are questions, not writes."""
    return [(e["verb"], e.get("plural"), e.get("namespace"), e.get("name")) for e in sim.request_log[since:]
            if e["verb"] in WRITE_VERBS and not e.get("dry_run") and e.get("namespace") != FACTS_NAMESPACE
            and e.get("group") not in QUESTION_GROUPS]


@pytest.mark.parametrize("configuration,extra,message", [
    # A name no node has (issue 31 point 3): the message of the second run, with the ports the facts show.
    ("shared_device/roce", '{"gpudirect_rdma_nic_interfaces": ["ens9f0np0"]}',
     "gpudirect_rdma_nic_interfaces: ens9f0np0 is not an interface of any node (the hardware facts show the NVIDIA NIC ports"),
    # Held-out input: an InfiniBand fabric on the Ethernet port, for a method other than SR-IOV.
    ("shared_device/infiniband", '{"gpudirect_rdma_nic_interfaces": ["ens8f0np0"]}',
     "gpudirect_rdma_fabric: infiniband, but ens8f0np0 (0000:a0:00.0) on nvd-srv-32.nvidia.eng.rdu2.dc.redhat.com is an Ethernet port"),
], ids=["wrong-name", "infiniband-on-ethernet"])
def test_nic_variables_that_contradict_the_hardware_stop_a_first_run_before_any_write(sim_factory, configuration, extra, message):
    sim = sim_factory(profile="mixed-lab")
    start = len(sim.request_log)
    run = run_playbook(sim, "-e", "@" + example(configuration), "-e", extra)
    assert run.rc != 0, run.output[-3000:]
    assert message in run.output, run.output[-3000:]
    assert configuration_writes(sim, start) == []
    # Stopped in preflight: no operator, no diagnostics that would call the cluster normal.
    assert "subscriptions" not in {e.get("plural") for e in sim.request_log[start:] if e["verb"] in WRITE_VERBS}
    assert "nothing abnormal" not in run.output


def test_the_memlock_pool_is_checked_with_nic_selection_auto(sim_factory):
    """Issue 31 point 4: with NIC selection auto the memlock pool check ran only after the facts, so the MachineConfig
    was written for a pool that does not exist; now preflight refuses it before the facts and any write."""
    sim = sim_factory(profile="roce-lab")
    memlock = '{"gpudirect_rdma_apply_machineconfigs": true, "gpudirect_rdma_machineconfigs": ["crio_memlock"]}'
    run = run_playbook(sim, "-e", "@%s/playbooks/vars/simulator/roce-lab.yml" % ROOT, "-e", memlock)
    assert run.rc != 0 and run.writes == 0, run.output[-3000:]
    assert "gpudirect_rdma_memlock_pool: MachineConfigPool gpudirect-rdma does not exist" in run.output, run.output[-3000:]


def test_a_value_calling_a_lookup_is_refused_without_running_it(sim_factory, tmp_path):
    """Held-out input of issue 31: site.yml evaluated `{{ lookup('pipe', ...) }}` in a variable on the controller
    before refusing it, and showed its output. Now the raw value is refused before any task evaluates it."""
    sim = sim_factory(profile="mixed-lab")
    marker = tmp_path / "ran"
    command = "touch %s && echo 192.168.2.0/24" % marker
    vars_file = tmp_path / "vars.yml"
    vars_file.write_text('gpudirect_rdma_ipam_range: "{{ lookup(\'pipe\', \'%s\') }}"\n' % command)
    run = run_playbook(sim, "-e", "@" + example("shared_device/roce"), "-e", "@%s" % vars_file)
    assert run.rc != 0 and run.requests == 0, run.output[-3000:]
    assert "gpudirect_rdma_ipam_range: the value holds Jinja that calls a lookup" in run.output, run.output[-3000:]
    assert not marker.exists()
