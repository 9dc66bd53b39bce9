"""deploy/rbac/admission-policies.yml bounds what the automation identity writes (issue 34, point 1).

1. The committed file is what hack/gen_admission_policies.py generates from the example configurations, the operator
   catalogue and the release table; --vars adds a configuration's names, pools and mirror repositories.
2. On one simulated cluster (OpenShift 4.20, so admissionregistration.k8s.io/v1 is served) with workloads.yml,
   clusterrole.yml and admission-policies.yml applied as an administrator: site.yml converges with the automation's
   token (configuration 5 with MachineConfigs, as hack/gen_clusterrole.py runs it) and a re-run writes nothing;
   then each of the issue's "root on every node" writes, sent over HTTP with that token, is refused with the
   policy's message, while the administrator (whom the policies do not bind) may still make them.
"""

import json
import os

import pytest
import requests
import yaml

from site_support import run_playbook

from ansible_collections.gpudirect.openshift.tests.hack_scripts import load_hack_script

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ACCOUNT = ("gpudirect-automation", "gpudirect-automation")
MCO = "/apis/machineconfiguration.openshift.io/v1/machineconfigs"
NCP = "/apis/mellanox.com/v1alpha1/nicclusterpolicies/nic-cluster-policy"
CLUSTER_POLICY = "/apis/nvidia.com/v1/clusterpolicies/gpu-cluster-policy"
NFD = "/apis/nfd.openshift.io/v1/namespaces/openshift-nfd/nodefeaturediscoveries/nfd-instance"
OLM = "/apis/operators.coreos.com/v1alpha1/namespaces/%s/subscriptions"
OPERATOR_GROUPS = "/apis/operators.coreos.com/v1/namespaces/%s/operatorgroups"
MERGE = {"Content-Type": "application/merge-patch+json"}
# The two tests on the converged cluster share one worker (--dist loadgroup), so the cluster converges once; neither
# depends on the other's order: the converge test reads what the fixture recorded.
pytestmark = pytest.mark.xdist_group("admission_policies")


def test_committed_policies_are_what_the_generator_writes(tmp_path):
    gen = load_hack_script("gen_admission_policies")
    with open(gen.OUTPUT, encoding="utf-8") as handle:
        assert gen.generate() == handle.read(), "deploy/rbac/admission-policies.yml is out of date: run hack/gen_admission_policies.py"
    items = gen.load_documents()
    policies = [i for i in items if i["kind"] == "ValidatingAdmissionPolicy"]
    bindings = [i for i in items if i["kind"] == "ValidatingAdmissionPolicyBinding"]
    assert {p["metadata"]["name"] for p in policies} == {b["spec"]["policyName"] for b in bindings} == {
        "gpudirect-openshift-machineconfigs", "gpudirect-openshift-operands", "gpudirect-openshift-operators",
        "gpudirect-openshift-pods", "gpudirect-openshift-pod-placement"}
    assert all(b["spec"]["validationActions"] == ["Deny"] for b in bindings)
    assert all(p["spec"]["matchConditions"] == [{"name": "automation-identity", "expression": "request.userInfo.username == "
                                                 "'system:serviceaccount:gpudirect-automation:gpudirect-automation'"}]
               for p in policies)
    # --vars: a mirror registry and another pool's MachineConfig are admitted too.
    mine = tmp_path / "mine.yml"
    with open(os.path.join(ROOT, "playbooks", "vars", "examples", "1-shared-device-roce.yml"), encoding="utf-8") as handle:
        variables = yaml.safe_load(handle)
    mine.write_text(yaml.safe_dump(dict(variables, gpudirect_rdma_doca_driver_repository="mirror.example.com/nvidia",
                                        gpudirect_rdma_machineconfig_pool="gpu")))
    variables = dict(((policy["metadata"]["name"], v["name"]), v["expression"]) for policy in
                     yaml.safe_load(gen.generate(var_files=[str(mine)]))["items"] if policy["kind"] == "ValidatingAdmissionPolicy"
                     for v in policy["spec"].get("variables", []))
    assert "'mirror.example.com/nvidia'" in variables[("gpudirect-openshift-operands", "repositories")]
    assert "'99-gpu-gpudirect-rdma': 'gpu'" in variables[("gpudirect-openshift-machineconfigs", "roles")]
    assert "mirror.example.com" not in gen.generate()
    # hardware_facts_allow_control_plane: the pods may go to control-plane nodes, so no placement check is generated.
    with open(os.path.join(ROOT, "playbooks", "vars", "examples", "1-shared-device-roce.yml"), encoding="utf-8") as handle:
        mine.write_text(yaml.safe_dump(dict(yaml.safe_load(handle), hardware_facts_allow_control_plane=True)))
    allowed = yaml.safe_load(gen.generate(var_files=[str(mine)]))["items"]
    assert "gpudirect-openshift-pod-placement" not in {i["metadata"]["name"] for i in allowed}
    pods = [i for i in allowed if i["metadata"]["name"] == "gpudirect-openshift-pods" and i["kind"] == "ValidatingAdmissionPolicy"][0]
    assert "controlPlane" not in {v["name"] for v in pods["spec"]["variables"]}


@pytest.fixture(scope="module")
def converged(crd_dir):
    """One cluster with the role and the policies, converged and re-run with the automation's token."""
    from simulator import SimulatedCluster

    roles, policies = load_hack_script("gen_clusterrole"), load_hack_script("gen_admission_policies")
    with SimulatedCluster(profile="mixed-lab", crd_dir=crd_dir) as sim:
        roles.prepare_memlock_pool(sim)
        for path in (roles.OUTPUT, policies.OUTPUT):
            sim._server.apply_as_admin(path)  # pylint: disable=protected-access
        token = sim.service_account_token(*ACCOUNT)
        kubeconfig = sim.write_kubeconfig(os.path.join(os.path.dirname(sim.kubeconfig), "automation.kubeconfig"), token=token)
        variables = ["-e", "@" + os.path.join(roles.EXAMPLES, "5-sriov-legacy-roce.yml"), "-e", json.dumps(roles.WITH_MACHINECONFIG)]
        env = {"K8S_AUTH_KUBECONFIG": kubeconfig}
        mark = sim.mark()
        first = run_playbook(sim, *variables, env=env)
        second = run_playbook(sim, *variables, env=env)
        refused = [(e["verb"], e["plural"], e["name"], e["code"]) for e in sim.requests.entries(mark) if e["code"] in (403, 422)]
        yield {"sim": sim, "token": token, "first": first, "second": second, "refused": refused}


def test_the_collection_converges_and_reruns_with_the_policies_installed(converged):
    first, second = converged["first"], converged["second"]
    assert first.rc == 0, first.output[-5000:]
    assert second.rc == 0, second.output[-5000:]
    assert second.changed == 0 and second.writes == 0, second.output[-3000:]
    assert converged["refused"] == []
    sim = converged["sim"]
    policies = sim.store.list(sim.store.find_type("admissionregistration.k8s.io", "v1", "validatingadmissionpolicies"))[0]
    assert len(policies) == 5
    # The automation really wrote the kinds the policies check.
    written = {(e["plural"], e["code"]) for e in sim.requests.entries() if e.get("user") == "system:serviceaccount:%s:%s" % ACCOUNT
               and e["verb"] in ("create", "patch", "update")}
    for plural in ("machineconfigs", "nicclusterpolicies", "clusterpolicies", "nodefeaturediscoveries", "subscriptions", "operatorgroups",
                   "pods"):
        assert any(p == plural and code in (200, 201) for p, code in written), plural


def _denied(resp, policy):
    assert resp.status_code == 422, (resp.status_code, resp.text)
    message = resp.json()["message"]
    assert "is forbidden: ValidatingAdmissionPolicy '%s' with binding '%s' denied request: " % (policy, policy) in message, message
    return message.split("denied request: ", 1)[1]


def test_root_on_every_node_five_ways_is_refused_with_the_policys_message(converged):
    sim = converged["sim"]
    automation, admin = requests.Session(), requests.Session()
    automation.headers["Authorization"] = "Bearer " + converged["token"]
    admin.headers["Authorization"] = "Bearer " + sim.token

    def send(session, method, path, body):
        headers = MERGE if method == "PATCH" else {}
        return session.request(method, sim.url + path, data=json.dumps(body), timeout=10,
                               headers=dict(headers, **{"Content-Type": headers.get("Content-Type", "application/json")}))

    # 1. A MachineConfig for the master pool.
    master = {"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig",
              "metadata": {"name": "99-master-gpudirect-rdma", "labels": {"machineconfiguration.openshift.io/role": "master",
                                                                          "app.kubernetes.io/managed-by": "gpudirect.openshift"}},
              "spec": {"config": {"ignition": {"version": "3.2.0"}}, "kernelArguments": ["module_blacklist=irdma"]}}
    message = _denied(send(automation, "POST", MCO, master), "gpudirect-openshift-machineconfigs")
    assert message.startswith("MachineConfig 99-master-gpudirect-rdma is not one the collection renders")
    # Even under the collection's own name, the master role label is refused.
    renamed = dict(master, metadata=dict(master["metadata"], name="99-worker-gpudirect-rdma"))
    current = automation.get(sim.url + MCO + "/99-worker-gpudirect-rdma", timeout=10).json()
    renamed["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
    message = _denied(send(automation, "PUT", MCO + "/99-worker-gpudirect-rdma", renamed), "gpudirect-openshift-machineconfigs")
    assert "must carry the role label of the pool the collection renders it for (worker)" in message
    # 2. A systemd unit in the collection's worker MachineConfig.
    unit = {"spec": {"config": {"systemd": {"units": [{"name": "evil.service", "enabled": True,
                                                       "contents": "[Service]\nExecStart=/bin/sh -c id\n"}]}}}}
    message = _denied(send(automation, "PATCH", MCO + "/99-worker-gpudirect-rdma", unit), "gpudirect-openshift-machineconfigs")
    assert message.startswith("the collection's MachineConfigs carry no systemd units")
    files = {"spec": {"config": {"storage": {"files": [{"path": "/etc/cron.d/evil", "mode": 420,
                                                        "contents": {"source": "data:,*%20*%20*%20*%20*%20root%20id"}}]}}}}
    message = _denied(send(automation, "PATCH", MCO + "/99-worker-gpudirect-rdma", files), "gpudirect-openshift-machineconfigs")
    assert message.startswith("the collection writes only /etc/udev/rules.d/70-gpudirect-rdma-persistent-net.rules")
    arguments = {"spec": {"kernelArguments": ["module_blacklist=irdma", "init=/bin/sh"]}}
    message = _denied(send(automation, "PATCH", MCO + "/99-worker-gpudirect-rdma", arguments), "gpudirect-openshift-machineconfigs")
    assert message == "the collection sets only the kernel arguments module_blacklist=irdma"
    # 3. The NicClusterPolicy with another image, then with a node affinity on masters and tolerations for everything.
    image = {"spec": {"ofedDriver": {"repository": "evil.example.com/x"}}}
    message = _denied(send(automation, "PATCH", NCP, image), "gpudirect-openshift-operands")
    assert message.startswith("NicClusterPolicy nic-cluster-policy: images only from the configured repositories")
    # An image the release table pins by digest (issue 34, LOW: images by digest), from its own repository by tag only.
    tag_only = {"spec": {"rdmaSharedDevicePlugin": {"repository": "nvcr.io/nvidia/mellanox", "image": "k8s-rdma-shared-dev-plugin",
                                                    "version": "network-operator-v26.4.1"}}}
    message = _denied(send(automation, "PATCH", NCP, tag_only), "gpudirect-openshift-operands")
    assert message.startswith("NicClusterPolicy nic-cluster-policy: these images only by digest (@sha256:), as the release table "
                              "pins them: ghcr.io/k8snetworkplumbingwg/sriov-network-device-plugin"), message
    full = {"spec": {"rdmaSharedDevicePlugin": {"image": "nvcr.io/nvidia/mellanox/k8s-rdma-shared-dev-plugin:latest"}}}
    assert _denied(send(automation, "PATCH", NCP, full), "gpudirect-openshift-operands").startswith(
        "NicClusterPolicy nic-cluster-policy: these images only by digest")
    affinity = {"spec": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "node-role.kubernetes.io/master", "operator": "Exists"}]}]}},
        "tolerations": [{"operator": "Exists"}]}}
    message = _denied(send(automation, "PATCH", NCP, affinity), "gpudirect-openshift-operands")
    assert message.startswith("NicClusterPolicy nic-cluster-policy: no node affinity and no toleration of the control-plane taints")
    tolerate = {"spec": {"tolerations": [{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}]}}
    _denied(send(automation, "PATCH", NCP, tolerate), "gpudirect-openshift-operands")
    # 4. The ClusterPolicy's driver image.
    driver = {"spec": {"driver": {"repository": "evil.example.com/x", "image": "driver", "version": "1"}}}
    message = _denied(send(automation, "PATCH", CLUSTER_POLICY, driver), "gpudirect-openshift-operands")
    assert message.startswith("ClusterPolicy gpu-cluster-policy: images only from the configured repositories")
    # 5. The NFD operand image.
    operand = {"spec": {"operand": {"image": "evil.example.com/x/nfd:1"}}}
    message = _denied(send(automation, "PATCH", NFD, operand), "gpudirect-openshift-operands")
    assert message.startswith("NodeFeatureDiscovery nfd-instance: images only from the configured repositories")
    # 6. A Subscription for another catalog package, and an OperatorGroup widened to other namespaces.
    subscription = {"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
                    "metadata": {"name": "other", "namespace": "nvidia-gpu-operator"},
                    "spec": {"name": "cluster-logging", "source": "redhat-operators", "sourceNamespace": "openshift-marketplace",
                             "channel": "stable"}}
    message = _denied(send(automation, "POST", OLM % "nvidia-gpu-operator", subscription), "gpudirect-openshift-operators")
    assert message == "namespace nvidia-gpu-operator subscribes only to gpu-operator-certified"
    source = dict(subscription, spec=dict(subscription["spec"], name="gpu-operator-certified", source="evil-catalog"))
    message = _denied(send(automation, "POST", OLM % "nvidia-gpu-operator", source), "gpudirect-openshift-operators")
    assert message.startswith("a Subscription comes from its operator's CatalogSource")
    config = {"spec": {"config": {"nodeSelector": {"node-role.kubernetes.io/master": ""}}}}
    message = _denied(send(automation, "PATCH", OLM % "nvidia-gpu-operator" + "/gpu-operator-certified", config),
                      "gpudirect-openshift-operators")
    assert message.startswith("no Subscription spec.config")
    group = automation.get(sim.url + OPERATOR_GROUPS % "nvidia-gpu-operator", timeout=10).json()["items"][0]
    widened = {"spec": {"targetNamespaces": ["nvidia-gpu-operator", "default"]}}
    message = _denied(send(automation, "PATCH", OPERATOR_GROUPS % "nvidia-gpu-operator" + "/" + group["metadata"]["name"], widened),
                      "gpudirect-openshift-operators")
    assert message.startswith("an OperatorGroup of the automation targets its own namespace or all namespaces")
    # Nothing of it landed; the administrator, whom the policies do not bind, may still write such objects.
    assert automation.get(sim.url + MCO + "/99-worker-gpudirect-rdma", timeout=10).json()["spec"] == current["spec"]
    assert send(admin, "PATCH", NCP, image).status_code == 200


def test_pods_mount_only_the_facts_host_paths_and_only_read_only(converged):
    """An SCC allows hostPath volumes or not; it cannot limit their paths or make them read-only (issue 34: the facts SCC
    admitted a writable hostPath /). The pods policy does, for the automation's pods, and the facts pods of the
    converge above passed it."""
    sim = converged["sim"]
    facts_pods = [e for e in sim.request_log if e["verb"] == "create" and e["plural"] == "pods"
                  and e["namespace"] == "gpudirect-facts" and e["code"] == 201]
    assert facts_pods, "the converge started no facts pod: the policy was not tried on the collection's own pods"
    automation = requests.Session()
    automation.headers["Authorization"] = "Bearer " + converged["token"]

    def facts_pod(name, path, read_only):
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {
            "serviceAccountName": "gpudirect-facts", "automountServiceAccountToken": False,
            "volumes": [{"name": "host", "hostPath": {"path": path}}],
            "containers": [{"name": "c", "image": "registry.example/x:1",
                            "volumeMounts": [{"name": "host", "mountPath": "/host", "readOnly": read_only}]}]}}

    pods = "/api/v1/namespaces/gpudirect-facts/pods"
    for name, path, read_only, expected in (
            ("root-writable", "/", False, ": host paths only /sys, /proc/modules"),
            ("root-read-only", "/", True, ": host paths only /sys, /proc/modules"),
            ("sys-writable", "/sys", False, ": host paths are mounted read-only")):
        resp = automation.post(sim.url + pods, json=facts_pod(name, path, read_only), timeout=10)
        assert "pod %s%s" % (name, expected) in _denied(resp, "gpudirect-openshift-pods")
    resp = automation.post(sim.url + pods, json=facts_pod("sys-read-only", "/sys", True), timeout=10)
    assert resp.status_code == 201, resp.text


def test_pods_of_the_automation_stay_off_control_plane_nodes(converged):
    """Issue 34 (MEDIUM, point 3): a facts pod was admitted on a control-plane node. With the automation's token, a pod
    naming a control-plane node (spec.nodeName, a kubernetes.io/hostname nodeSelector), selecting the control-plane
    role labels (nodeSelector, node affinity) or tolerating their taint is refused with the policy's message; the same
    pod on a worker is admitted, and so were the converge's facts and verify pods."""
    sim = converged["sim"]
    automation = requests.Session()
    automation.headers["Authorization"] = "Bearer " + converged["token"]
    nodes = sim.store.list(sim.store.find_type("", "v1", "nodes"))[0]
    masters = [n for n in nodes if "node-role.kubernetes.io/master" in (n["metadata"].get("labels") or {})]
    workers = [n for n in nodes if n not in masters]
    assert masters and workers, "the profile has no control-plane node: the policy was not tried"
    master, worker = masters[0]["metadata"], workers[0]["metadata"]

    def pod(name, **spec):
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": dict({
            "serviceAccountName": "gpudirect-facts", "automountServiceAccountToken": False,
            "containers": [{"name": "c", "image": "registry.example/x:1"}]}, **spec)}

    pods = "/api/v1/namespaces/gpudirect-facts/pods"
    on_master_role = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists"}]}]}}
    for body, policy, expected in (
            (pod("by-name", nodeName=master["name"]), "gpudirect-openshift-pod-placement",
             "pod by-name names the control-plane node %s; set hardware_facts_allow_control_plane" % master["name"]),
            (pod("by-hostname", nodeSelector={"kubernetes.io/hostname": master["labels"]["kubernetes.io/hostname"]}),
             "gpudirect-openshift-pod-placement", "pod by-hostname selects the control-plane node %s" % master["name"]),
            (pod("by-role", nodeSelector={"node-role.kubernetes.io/master": ""}), "gpudirect-openshift-pods",
             "pod by-role: no nodeSelector on the control-plane labels"),
            (pod("by-affinity", affinity={"nodeAffinity": on_master_role}), "gpudirect-openshift-pods",
             "pod by-affinity: no node affinity onto control-plane nodes"),
            (pod("by-toleration", tolerations=[{"key": "node-role.kubernetes.io/master", "operator": "Exists",
                                                "effect": "NoSchedule"}]), "gpudirect-openshift-pods",
             "pod by-toleration: no toleration of the control-plane taints")):
        resp = automation.post(sim.url + pods, json=body, timeout=10)
        message = resp.json().get("message", "") if resp.status_code == 422 else resp.text
        binding = policy if policy != "gpudirect-openshift-pod-placement" else None
        assert resp.status_code == 422, (resp.status_code, resp.text)
        assert "ValidatingAdmissionPolicy '%s' with binding '%s" % (policy, binding or policy) in message, message
        assert expected in message, message
    keep_off = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "node-role.kubernetes.io/master", "operator": "DoesNotExist"}]}]}}
    resp = automation.post(sim.url + pods, json=pod("on-worker", nodeName=worker["name"], affinity={"nodeAffinity": keep_off},
                                                    tolerations=[{"operator": "Exists"}]), timeout=10)
    assert resp.status_code == 201, resp.text
