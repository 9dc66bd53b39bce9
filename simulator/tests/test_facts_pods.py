"""The facts-pod controller at scale: a node's collector output is built once per node state, and a change the
real collector would see (the GPU driver loaded) gives new output."""

from simulator.controllers import facts_pods


def test_output_is_built_once_per_node_state_and_follows_the_cluster(sim_factory, monkeypatch):
    sim = sim_factory(profile="roce-lab")
    built = []
    real_build = facts_pods.build_node_tree

    def counting(*args, **kwargs):
        built.append(args[1].name)
        return real_build(*args, **kwargs)

    monkeypatch.setattr(facts_pods, "build_node_tree", counting)
    first = facts_pods.facts_for(sim, "worker-0")
    assert facts_pods.facts_for(sim, "worker-0") == first and built == ["worker-0"]
    assert first["kernel_modules"]["nvidia"] is False
    client = sim.dynamic_client()
    client.resources.get(api_version="v1", kind="Node").patch(
        name="worker-0", body={"metadata": {"labels": {facts_pods.DRIVER_LABEL: "570.124.06"}}},
        content_type="application/merge-patch+json")
    loaded = facts_pods.facts_for(sim, "worker-0")
    assert built == ["worker-0", "worker-0"] and loaded["kernel_modules"]["nvidia"] is True
