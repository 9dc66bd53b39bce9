"""Issue 34 (LOW): a free-text survey answer (verify_network) became the test pods' raw Multus networks annotation:
a comma-separated list or JSON there attaches any network of the namespace, with any interface name or IP request."""

import pytest

from ansible_collections.gpudirect.openshift.plugins.module_utils.verify import bandwidth_plan

CONFIGURATION = {"method": "shared_device", "fabric": "roce", "pod_resources": {"rdma/rdma_shared_device_a": 1},
                 "networks": [{"name": "rdma-net", "namespace": "default", "annotation": "default/rdma-net"}]}


@pytest.mark.parametrize("network", ["rdma-net", "default/rdma-net", "default/rdma-net@net1"])
def test_one_network_name_is_accepted(network):
    settings = bandwidth_plan.settings_from(**{"configuration": CONFIGURATION, "network": network})
    assert settings["network"] == network


@pytest.mark.parametrize("network", [
    "rdma-net,other-team/their-net",
    '[{"name": "their-net", "namespace": "other-team", "ips": ["10.0.0.5/24"]}]',
    "default/rdma-net@eth0@x", "Default/rdma_net", "rdma-net\n",
])
def test_anything_else_is_refused_naming_the_form(network):
    with pytest.raises(bandwidth_plan.SettingsError, match=r"is not a network name: give \[namespace/\]name\[@interface\]"):
        bandwidth_plan.settings_from(**{"configuration": CONFIGURATION, "network": network})
