"""The GitOps tree (render/gitops.py) applied to the simulated cluster the way Argo CD syncs it: built by the system
kubectl's kustomize and applied wave by wave with `kubectl apply`. No ansible-playbook run.

The simulator serves no batch/v1 API, so it runs no Job: the InstallPlan approver's script (taken from the built Job,
unchanged) runs here with /bin/sh and the system kubectl, authenticated as the Job's ServiceAccount, so that the
tree's own Role and RoleBinding decide what it may do."""

import os
import subprocess

import pytest
import yaml
from simulator.controllers.testing import wait

from ansible_collections.gpudirect.openshift.plugins.module_utils import catalogue
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import argocd_health, gitops, olm, plan

from test_olm_operator import OLM_V1A1, get, items, kube

KUBECTL = "/usr/bin/kubectl"
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXAMPLE = "1-shared-device-roce.yml"
NS = "nvidia-gpu-operator"
V25_3_1, V25_3_4 = "gpu-operator-certified.v25.3.1", "gpu-operator-certified.v25.3.4"


def example_variables(example, port="ens1f0np0"):
    """An example's variables (playbooks/vars/examples, or a path) with the simulated lab's first port when ``port`` is
    given (the examples name mixed-lab's ports; ``port=None`` keeps them)."""
    path = example if os.path.isabs(example) else os.path.join(ROOT, "playbooks", "vars", "examples", example)
    with open(path, encoding="utf-8") as stream:
        variables = yaml.safe_load(stream)
    if port:
        variables["gpudirect_rdma_nic_interfaces"] = [port]
    return variables


def render_tree(tmp_path, pin=V25_3_1, example=EXAMPLE, port="ens1f0np0"):
    variables = example_variables(example, port)
    owners = gitops.node_group_owners(variables)
    rendered = plan.render_all(variables)
    operators = catalogue.resolve({})
    for entry in operators:
        if entry["role"] == "nvidia_gpu_operator":
            entry.update(channel="v25.3", install_plan_approval="Manual", starting_csv=pin)
        else:  # every operator defaults to Manual; this test follows the GPU Operator's approver only
            entry.update(install_plan_approval="Automatic")
    entries, errors = olm.olm_manifests(variables, operators)
    assert rendered["errors"] == [] and errors == []
    for item in gitops.gitops_tree(entries, rendered["manifests"], workload=rendered["workload"], cluster="lab", owners=owners):
        path = tmp_path / "tree" / item["path"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(item["manifest"], sort_keys=False))
    built = subprocess.run([KUBECTL, "kustomize", str(tmp_path / "tree" / "overlays" / "lab")], capture_output=True, text=True,
                           timeout=120, check=True).stdout
    return [doc for doc in yaml.safe_load_all(built) if doc]


def kubectl(env, *args, stdin=None):
    return subprocess.run([KUBECTL] + list(args), env=env, input=stdin, capture_output=True, text=True, timeout=120, check=False)


def apply_wave(env, objects, wave):
    """kubectl apply of one wave's objects, Namespaces first as Argo CD orders kinds within a wave (Jobs left out: the
    simulator serves no batch/v1)."""
    chosen = [o for o in objects if o["metadata"]["annotations"][gitops.SYNC_WAVE] == str(wave) and o["kind"] != "Job"]
    chosen.sort(key=lambda o: o["kind"] != "Namespace")
    done = kubectl(env, "apply", "-f", "-", stdin=yaml.safe_dump_all(chosen))
    assert done.returncode == 0, done.stderr
    return chosen


def run_approver(sim, tmp_path, job):
    """The Job's container command and environment, run as its ServiceAccount."""
    pod = job["spec"]["template"]["spec"]
    container = pod["containers"][0]
    kubeconfig = tmp_path / "approver.kubeconfig"
    sim.write_kubeconfig(str(kubeconfig), token=sim.service_account_token(job["metadata"]["namespace"], pod["serviceAccountName"]))
    env = dict((e["name"], e["value"]) for e in container["env"])
    env.update(KUBECONFIG=str(kubeconfig), HOME=str(tmp_path), PATH="/usr/bin:/bin", INTERVAL="1", ATTEMPTS="30")
    return subprocess.run(container["command"], env=env, capture_output=True, text=True, timeout=120, check=False), env


def plans_of(client, csv):
    return [p for p in items(client, OLM_V1A1, "InstallPlan", NS) if csv in p["spec"]["clusterServiceVersionNames"]]


def test_the_approver_approves_only_the_install_plan_of_the_pinned_csv(sim_factory, tmp_path):
    sim = sim_factory(profile="roce-lab@4.17.30", tls=True)
    client = kube(sim)
    objects = render_tree(tmp_path)
    admin = {"KUBECONFIG": sim.kubeconfig, "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    applied = apply_wave(admin, objects, gitops.OLM_WAVE)
    assert {"Namespace", "OperatorGroup", "Subscription", "ServiceAccount", "Role", "RoleBinding"} <= set(o["kind"] for o in applied)
    job = next(o for o in objects if o["kind"] == "Job" and o["metadata"]["name"] == gitops.APPROVER_NAME)

    # OLM plans the pinned CSV and waits for approval; nothing else approves it.
    wait(lambda: plans_of(client, V25_3_1), what="the InstallPlan of the pinned CSV")
    assert [p["spec"]["approved"] for p in plans_of(client, V25_3_1)] == [False]
    done, env = run_approver(sim, tmp_path, job)
    assert done.returncode == 0, done.stderr
    plan_name = plans_of(client, V25_3_1)[0]["metadata"]["name"]
    assert "approved InstallPlan %s of %s" % (plan_name, V25_3_1) in done.stdout
    wait(lambda: (get(client, OLM_V1A1, "ClusterServiceVersion", V25_3_1, NS) or {}).get("status", {}).get("phase") == "Succeeded",
         what="the pinned CSV installed")

    # OLM then offers the channel head in a new plan; the approver (run again, as a Job retry would) leaves it alone.
    wait(lambda: plans_of(client, V25_3_4), what="OLM offers the channel head")
    again = subprocess.run(job["spec"]["template"]["spec"]["containers"][0]["command"], env=env, capture_output=True, text=True, timeout=120, check=False)
    assert again.returncode == 0 and "InstallPlan %s of %s is approved" % (plan_name, V25_3_1) in again.stdout
    assert [p["spec"]["approved"] for p in plans_of(client, V25_3_4)] == [False]
    assert get(client, OLM_V1A1, "Subscription", "gpu-operator-certified", NS)["status"]["installedCSV"] == V25_3_1

    # Least privilege: the ServiceAccount can patch InstallPlans of its namespace only, and nothing else there.
    sa = dict(env)
    assert "Forbidden" in kubectl(sa, "get", "installplans.operators.coreos.com", "-n", "openshift-nfd").stderr
    denied = kubectl(sa, "patch", "subscriptions.operators.coreos.com", "gpu-operator-certified", "-n", NS, "--type=merge",
                     "-p", '{"spec":{"startingCSV":"%s"}}' % V25_3_4)
    assert denied.returncode != 0 and "Forbidden" in denied.stderr
    assert "Forbidden" in kubectl(sa, "delete", "installplans.operators.coreos.com", plans_of(client, V25_3_4)[0]["metadata"]["name"],
                                  "-n", NS).stderr


def test_a_pin_that_never_gets_a_plan_fails_the_approver_without_approving_anything(sim_factory, tmp_path):
    sim = sim_factory(profile="roce-lab@4.17.30", tls=True)
    client = kube(sim)
    objects = render_tree(tmp_path)
    apply_wave({"KUBECONFIG": sim.kubeconfig, "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}, objects, gitops.OLM_WAVE)
    wait(lambda: plans_of(client, V25_3_1), what="the InstallPlan of the pinned CSV")
    job = next(o for o in objects if o["kind"] == "Job" and o["metadata"]["name"] == gitops.APPROVER_NAME)
    job["spec"]["template"]["spec"]["containers"][0]["env"][1]["value"] = V25_3_4  # a CSV no plan lists
    pod = job["spec"]["template"]["spec"]
    kubeconfig = tmp_path / "other.kubeconfig"
    sim.write_kubeconfig(str(kubeconfig), token=sim.service_account_token(NS, pod["serviceAccountName"]))
    env = {"NAMESPACE": NS, "CSV": V25_3_4, "KUBECONFIG": str(kubeconfig), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin",
           "INTERVAL": "0", "ATTEMPTS": "2"}
    done = subprocess.run(pod["containers"][0]["command"], env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1 and "no InstallPlan of %s appeared" % V25_3_4 in done.stderr
    assert [p["spec"]["approved"] for p in items(client, OLM_V1A1, "InstallPlan", NS)] == [False]


def lua_health(check, obj):
    from lupa.lua51 import LuaRuntime  # the tests' Lua 5.1 (requirements-test.txt), as Argo CD's gopher-lua

    lua = LuaRuntime(unpack_returned_tuples=True)
    result = lua.eval("function(obj)\n%s\nend" % check)(lua.table_from(obj, recursive=True))
    return result["status"], result["message"]


CHECKS = dict(("%s/%s" % (group, kind), check) for group, kind, check in argocd_health.CHECKS)


def live(client, manifest):
    return get(client, manifest["apiVersion"], manifest["kind"], manifest["metadata"]["name"], manifest["metadata"].get("namespace"))


def health(client, manifest):
    check = CHECKS.get("%s/%s" % (manifest["apiVersion"].rpartition("/")[0], manifest["kind"]))
    return lua_health(check, live(client, manifest)) if check else ("Healthy", "no health check: Argo CD does not wait")


# The six configurations (issue 35's acceptance; about 8 s each, no ansible-playbook run) and the two-group example on
# the profile it fits. Examples 2-4 keep the mixed-lab ports they name.
GROUPS_EXAMPLE = os.path.join(ROOT, "playbooks", "vars", "simulator", "groups-lab.yml")
CONVERGE = [("1-shared-device-roce.yml", "roce-lab", "ens1f0np0"), ("2-shared-device-infiniband.yml", "mixed-lab", None),
            ("3-host-device-roce.yml", "mixed-lab", None), ("4-host-device-infiniband.yml", "mixed-lab", None),
            ("5-sriov-legacy-roce.yml", "roce-lab", "ens1f0np0"), ("6-sriov-legacy-infiniband.yml", "infiniband-lab", "ibp26s0"),
            (GROUPS_EXAMPLE, "groups-lab", None)]


@pytest.mark.parametrize("example,profile,port", CONVERGE, ids=[os.path.basename(c[0])[:-4] for c in CONVERGE])
def test_the_tree_synced_wave_by_wave_reaches_allocatable_rdma_resources_with_no_manual_step(sim_factory, tmp_path, example, profile, port):
    sim = sim_factory(profile=profile + "@4.17.30", tls=True)
    client = kube(sim)
    objects = render_tree(tmp_path, example=example, port=port)
    admin = {"KUBECONFIG": sim.kubeconfig, "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    apply_wave(admin, objects, gitops.OLM_WAVE)
    job = next(o for o in objects if o["kind"] == "Job" and o["metadata"]["name"] == gitops.APPROVER_NAME)
    assert run_approver(sim, tmp_path, job)[0].returncode == 0
    for sub in (o for o in objects if o["kind"] == "Subscription"):
        namespace = sub["metadata"]["namespace"]
        wait(lambda: ((live(client, sub) or {}).get("status") or {}).get("installedCSV") and
             (get(client, OLM_V1A1, "ClusterServiceVersion", live(client, sub)["status"]["installedCSV"], namespace) or {})
             .get("status", {}).get("phase") == "Succeeded", what="%s installed" % sub["metadata"]["name"], timeout=120, interval=0.5)
    assert all(p["spec"]["approved"] or V25_3_4 in p["spec"]["clusterServiceVersionNames"]
               for o in objects if o["kind"] == "Namespace" for p in items(client, OLM_V1A1, "InstallPlan", o["metadata"]["name"]))
    waves = sorted(set(int(o["metadata"]["annotations"][gitops.SYNC_WAVE]) for o in objects) - {gitops.OLM_WAVE, gitops.VERIFICATION_WAVE})
    seen = {}
    for wave in waves:
        for manifest in apply_wave(admin, objects, wave):
            # Argo CD starts the next wave once every resource of this one is Healthy.
            wait(lambda: health(client, manifest)[0] == "Healthy", what="%s %s Healthy" % (manifest["kind"], manifest["metadata"]["name"]),
                 timeout=300, interval=0.5)
            seen.setdefault(health(client, manifest)[0], []).append(manifest["kind"])
    summary = plan.render_all(example_variables(example, port))["summary"]
    for resource in summary["resources"]:
        wait(lambda: any(int((n["status"].get("allocatable") or {}).get(resource, "0")) > 0 for n in items(client, "v1", "Node")),
             what="%s allocatable" % resource, timeout=300, interval=0.5)

    # The checks of the kinds the operators create (not in the tree) report Healthy on the synced cluster.
    # The config daemons of the other nodes may still be syncing when the first node advertises: wait for them.
    def node_states():
        return items(client, "sriovnetwork.openshift.io/v1", "SriovNetworkNodeState", "openshift-sriov-network-operator")

    check = CHECKS["sriovnetwork.openshift.io/SriovNetworkNodeState"]
    wait(lambda: node_states() and all(lua_health(check, state)[0] == "Healthy" for state in node_states()),
         what="every SriovNetworkNodeState Healthy", timeout=300, interval=0.5)
    for pool in items(client, "machineconfiguration.openshift.io/v1", "MachineConfigPool"):
        assert lua_health(CHECKS["machineconfiguration.openshift.io/MachineConfigPool"], pool)[0] == "Healthy", pool["metadata"]["name"]
