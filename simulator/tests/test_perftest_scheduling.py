"""The simulated scheduler of the verification pods, through the API: it reads the node a pod selects and counts the
verification pods already bound there (issue 21: no list of every pod and node per pod, same decisions)."""

from simulator.controllers.testing import Kube, wait

RESOURCE = "rdma/rdma_shared_device_eth"


def verify_pod(name, node):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": name, "namespace": "default", "labels": {"app.kubernetes.io/component": "gpudirect-verify"}},
        "spec": {"restartPolicy": "Never", "nodeSelector": {"kubernetes.io/hostname": node}, "containers": [{
            "name": "perftest", "image": "registry.example/perftest:1", "command": ["sleep", "3600"],
            "resources": {"requests": {RESOURCE: "1"}, "limits": {RESOURCE: "1"}}}]}}


def test_a_verify_pod_counts_the_verify_pods_already_bound_to_its_node(sim_factory, tmp_path):
    sim = sim_factory(profile="roce-lab", config={"perftest_start_seconds": 0.02})
    kube = Kube(sim, str(tmp_path / "discovery.json"))
    node = next(n.name for n in sim.profile.nodes if n.is_worker)

    def one_device(obj):
        for key in ("capacity", "allocatable"):
            obj["status"][key][RESOURCE] = "1"
    sim.store.mutate(sim.type("v1", "Node"), None, node, one_device)

    kube.create(verify_pod("first", node))
    wait(lambda: (kube.get("v1", "Pod", "first", "default").get("spec") or {}).get("nodeName") == node, what="first bound")
    kube.create(verify_pod("second", node))

    def refused():
        conditions = (kube.get("v1", "Pod", "second", "default").get("status") or {}).get("conditions") or []
        return next((c["message"] for c in conditions if c.get("type") == "PodScheduled" and c.get("status") == "False"), None)
    message = wait(refused, what="second refused")
    nodes = len(sim.profile.nodes)
    assert message.startswith("0/%d nodes are available: 1 Insufficient %s, %d node(s) didn't match" % (nodes, RESOURCE, nodes - 1))
    assert not (kube.get("v1", "Pod", "second", "default").get("spec") or {}).get("nodeName")
