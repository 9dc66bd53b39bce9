"""One site.yml run configures several clusters in parallel: one inventory host per cluster, each with its own
connection variables (see playbooks/inventory/clusters.example.yml and docs/many-clusters.md)."""

import json

import pytest

from runner_support import (PROFILE_VARIABLES, failure_messages, host_stats, isolate_from_clusters, module_results, private_data_dir,
                            run_site)

# What each cluster is asked for, by simulated profile: the inventory host variables besides the connection
# (method, fabric, NICs, ...). Change them here and extend assert_cluster_as_asked to match.
CLUSTERS = {
    "roce-lab": dict(PROFILE_VARIABLES["roce-lab"]),
    "infiniband-lab": dict(PROFILE_VARIABLES["infiniband-lab"]),
    "mixed-lab": dict(PROFILE_VARIABLES["mixed-lab"], gpudirect_rdma_ipam_range="192.168.4.0/24"),
}


def connection_vars(sim, how):
    if how == "kubeconfig":
        return {"gpudirect_kubeconfig": sim.kubeconfig, "gpudirect_context": "simulated"}
    return {"gpudirect_api_host": sim.url, "gpudirect_api_key": sim.token, "gpudirect_validate_certs": False}


def assert_cluster_as_asked(host, sim, asked, info):
    """The run left `sim` (inventory host `host`) as `asked` asked."""
    assert sorted(n["name"] for n in info["nodes"]) == sorted(n.name for n in sim.profile.nodes), host
    assert info["openshift"]["version"] == sim.profile.cluster.version, host
    client = sim.dynamic_client()
    policy = client.resources.get(api_version="mellanox.com/v1alpha1", kind="NicClusterPolicy").get(
        name="nic-cluster-policy").to_dict()
    plugin = json.dumps(policy["spec"]["rdmaSharedDevicePlugin"])
    assert all(ifname in plugin for ifname in asked["gpudirect_rdma_nic_interfaces"]), (host, plugin)
    network_kind = {"roce": "MacvlanNetwork", "infiniband": "IPoIBNetwork"}[asked["gpudirect_rdma_fabric"]]
    networks = client.resources.get(api_version="mellanox.com/v1alpha1", kind=network_kind).get().to_dict()["items"]
    assert [n["spec"]["ipam"] for n in networks if asked["gpudirect_rdma_ipam_range"] in n["spec"]["ipam"]], \
        (host, network_kind, networks)


def busy_interval(sim, since):
    times = [entry["time"] for entry in sim.requests.entries(since)]
    assert times, "the cluster received no request"
    return min(times), max(times)


@pytest.fixture
def clusters(sim_factory):
    return {profile: sim_factory(profile=profile, tls=True) for profile in CLUSTERS}  # tokens only over https


def test_site_configures_three_clusters_at_once(clusters, tmp_path, monkeypatch):
    isolate_from_clusters(monkeypatch, tmp_path)
    # Both connection styles of the example inventory: kubeconfig (+ context) and API URL + token.
    styles = {"roce-lab": "kubeconfig", "infiniband-lab": "api_key", "mixed-lab": "kubeconfig"}
    hosts = {profile: dict(connection_vars(sim, styles[profile]), **CLUSTERS[profile])
             for profile, sim in clusters.items()}
    pdd = private_data_dir(tmp_path, hosts)
    marks = {profile: sim.mark() for profile, sim in clusters.items()}

    runner = run_site(pdd, forks=len(clusters))

    stdout = runner.stdout.read()
    assert (runner.status, runner.rc) == ("successful", 0), stdout
    stats = host_stats(runner)
    assert sorted(stats) == sorted(clusters)
    for host, counts in stats.items():
        assert counts["failures"] == 0 and counts["dark"] == 0 and counts["ok"] > 0, (host, counts)
    infos = module_results(runner, "gpudirect.openshift.plan_status")
    assert sorted(infos) == sorted(clusters)
    for profile, sim in clusters.items():
        assert_cluster_as_asked(profile, sim, CLUSTERS[profile], infos[profile][-1]["cluster"])
    assert clusters["infiniband-lab"].token not in stdout

    # The clusters were worked on at the same time, not one after the other: every cluster's first request
    # came before any cluster's last one.
    intervals = {profile: busy_interval(sim, marks[profile]) for profile, sim in clusters.items()}
    latest_start = max(start for start, _end in intervals.values())
    earliest_end = min(end for _start, end in intervals.values())
    assert latest_start < earliest_end, intervals


def test_credential_environment_never_redirects_an_inventory_cluster(sim_factory, tmp_path, monkeypatch):
    """kubernetes.core prefers K8S_AUTH_HOST + K8S_AUTH_API_KEY (what an AWX OpenShift credential injects) over a
    kubeconfig given as a module parameter. A host with its own kubeconfig must therefore stop with a message
    instead of silently configuring the credential's cluster."""
    credential_cluster = sim_factory(profile="roce-lab", tls=True)
    own_cluster = sim_factory(profile="mixed-lab")
    isolate_from_clusters(monkeypatch, tmp_path)
    envvars = {"K8S_AUTH_HOST": credential_cluster.url, "K8S_AUTH_API_KEY": credential_cluster.token,
               "K8S_AUTH_VERIFY_SSL": "False"}
    hostvars = dict(connection_vars(own_cluster, "kubeconfig"), **CLUSTERS["mixed-lab"])
    pdd = private_data_dir(tmp_path, {"mixed-lab": hostvars}, envvars=envvars)

    # Only what runs before any write matters here: preflight is tagged `always`, the operator roles are not.
    runner = run_site(pdd, tags="preflight")

    assert runner.status == "failed" and runner.rc != 0
    messages = failure_messages(runner)
    assert messages and "K8S_AUTH_HOST" in messages[0] and "gpudirect_kubeconfig" in messages[0], messages
    assert credential_cluster.count() == 0, "the job talked to the credential's cluster"
