"""Rails of node groups pair only nodes that carry the rail's resource (issue 31 journeys: on groups-lab verify paired
an InfiniBand rail node with an SR-IOV RoCE node, and both rails failed as resource_not_allocatable)."""

from ansible_collections.gpudirect.openshift.plugins.module_utils.verify.bandwidth_plan import nodes_for_rail


def node(name, **allocatable):
    return {"metadata": {"name": name}, "status": {"allocatable": dict((k.replace("__", "/"), v) for k, v in allocatable.items())}}


ITEMS = [node("rail-ib-0", rdma__rail0="1000"), node("rail-ib-1", rdma__rail0="1000"),
         node("roce-0", openshift__sriov_roce="8"), node("roce-1", openshift__sriov_roce="8")]
NODES = [(n["metadata"]["name"], n["metadata"]["name"]) for n in ITEMS]


def test_each_rail_pairs_the_nodes_of_its_group():
    assert [n for n, _host in nodes_for_rail(ITEMS, NODES, {"rdma/rail0": 1})] == ["rail-ib-0", "rail-ib-1"]
    assert [n for n, _host in nodes_for_rail(ITEMS, NODES, {"openshift/sriov_roce": 1})] == ["roce-0", "roce-1"]


def test_fewer_than_two_carrying_nodes_keeps_every_node_so_the_pairs_fail_by_name():
    items = ITEMS[:1] + [node("rail-ib-1", rdma__rail0="0")] + ITEMS[2:]
    assert nodes_for_rail(items, NODES, {"rdma/rail0": 1}) == NODES
