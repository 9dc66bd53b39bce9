"""Each module hands its options to module_utils as named arguments (issue 37): every option the module passes on
is an argument there, and every argument is an option, so a new option cannot be dropped or fail with a TypeError."""

import dataclasses
import inspect

import pytest

from ansible_collections.gpudirect.openshift.plugins.module_utils.verify import bandwidth_plan
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster import nccl_run
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.facts_nodes import FactsSettings
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.operator_installer import OperatorInstaller
from ansible_collections.gpudirect.openshift.plugins.module_utils.rules.olm_install import OPERATOR_OPTIONS
from ansible_collections.gpudirect.openshift.plugins.modules import gather_node_hardware, nccl_allreduce
from ansible_collections.gpudirect.openshift.plugins.modules import olm_operator, rdma_bandwidth

# Arguments that are not the module's options: what the installer needs besides them.
NOT_OPTIONS = {"self", "cluster", "operator", "check_mode", "warn", "clock"}


def _arguments(callable_):
    return set(inspect.signature(callable_).parameters) - NOT_OPTIONS


@pytest.mark.parametrize("options, arguments", [
    # the options the module keeps for itself (reports, the pairing of ranks and NICs) are left out
    (set(rdma_bandwidth.argument_spec()) - {"artifacts_dir", "cluster_name"}, _arguments(bandwidth_plan.settings_from)),
    (set(nccl_allreduce.argument_spec()) - {"nic_ports", "gpu_nic_affinity"}, _arguments(nccl_run.settings_from)),
    (set(olm_operator.argument_spec()) - set(OPERATOR_OPTIONS), _arguments(OperatorInstaller)),
], ids=["rdma_bandwidth", "nccl_allreduce", "olm_operator"])
def test_the_options_a_module_passes_on_are_the_arguments(options, arguments):
    assert options == arguments


def test_every_facts_setting_is_an_option_of_gather_node_hardware():
    assert set(field.name for field in dataclasses.fields(FactsSettings)) <= set(gather_node_hardware.argument_spec())
