"""deploy/rbac is what the collection really uses, enough for it, and no more.

1. Regenerating deploy/rbac/clusterrole.yml from the simulator's request log (hack/gen_clusterrole.py) gives the
   committed file, so a change that uses a new verb, resource or namespace fails here until it is regenerated.
2. With deploy/rbac/workloads.yml and clusterrole.yml applied as an administrator would, every playbook of the
   scenario (site.yml twice and in check mode, facts.yml, verify.yml, must_gather.yml, teardown.yml) passes with the
   gpudirect-automation service account's token, under the simulator's RBAC, escalation checks and SCC admission,
   without a single refused request.
3. That identity cannot create a pod in kube-system, read pod logs outside the collection's namespaces, read Secrets,
   grant itself an SCC, run a pod that mounts host paths, or list or watch MachineConfigs (issue 34); it creates and
   deletes pods only in gpudirect-facts and gpudirect-verify, where the SCCs refuse group 0, Secret, token and host
   path volumes for the verify pods (issue 34); without one permission, site.yml fails with the API server's Forbidden
   message when its permission check is off.
4. Without one rule of the role (a cluster-wide one, a namespace's one), site.yml stops in preflight, before any
   write, naming the verb, resource, namespace and the rule to add (issue 33; every rule in turn is in
   tests/unit/plugins/module_utils/test_permissions.py).
"""

import copy
import io
import os
import subprocess

import requests

from ansible_collections.gpudirect.openshift.tests.hack_scripts import load_hack_script

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "playbooks", "vars", "examples", "1-shared-device-roce.yml")
ACCOUNT = ("gpudirect-automation", "gpudirect-automation")


def provision(sim, gen):
    """What a cluster administrator does once (workloads.yml is applied by the simulator itself by default)."""
    sim._server.apply_as_admin(gen.OUTPUT)  # pylint: disable=protected-access
    return sim.service_account_token(*ACCOUNT)


def refused(sim, since=0):
    return [(e["verb"], e["group"], e["plural"], e["subresource"], e["namespace"]) for e in sim.requests.entries(since)
            if e["code"] == 403]


def test_committed_roles_are_what_the_playbooks_use():
    gen = load_hack_script("gen_clusterrole")
    with open(gen.OUTPUT, encoding="utf-8") as handle:
        committed = handle.read()
    generated = gen.generate(log=io.StringIO())
    assert generated == committed, "deploy/rbac/clusterrole.yml is out of date: run `python hack/gen_clusterrole.py`"
    items = gen.load_documents()
    cluster_rules = gen.load_rules()
    assert all("*" not in r["verbs"] and "*" not in r["resources"] and "*" not in r["apiGroups"] for r in cluster_rules)
    # Nothing that reads workloads is cluster-wide; changing or deleting cluster-scoped objects is by name only.
    for rule in cluster_rules:
        assert not set(rule["resources"]) & {"pods", "pods/log", "configmaps", "secrets", "serviceaccounts", "rolebindings", "events"}, rule
        if set(rule["verbs"]) & {"get", "update", "patch", "delete"}:
            assert rule.get("resourceNames"), rule
    # MachineConfigs by name only (issue 34): a list or watch would return the controller's rendered MachineConfigs,
    # which carry the cluster pull secret; nothing but create is granted without resourceNames.
    machineconfig_rules = [r for r in cluster_rules if "machineconfigs" in r["resources"]]
    assert machineconfig_rules and all(not set(r["verbs"]) & {"list", "watch", "deletecollection"} for r in machineconfig_rules), machineconfig_rules
    assert all(r.get("resourceNames") for r in machineconfig_rules if set(r["verbs"]) - {"create"}), machineconfig_rules
    roles = dict((i["metadata"]["namespace"], i["rules"]) for i in items if i["kind"] == "Role")
    assert "kube-system" not in roles and {"gpudirect-verify", "gpudirect-facts", "openshift-marketplace", "nvidia-network-operator"} <= set(roles)
    assert all(r["resources"] != ["secrets"] for rules in roles.values() for r in rules)
    # Issue 34: pods are created and deleted only in the collection's own namespaces (where nothing else runs), and no
    # Role anywhere reads Secrets or mints service account tokens.
    pod_writes = {"create", "delete", "deletecollection"}
    pod_namespaces = sorted(ns for ns, rules in roles.items() if any("pods" in r["resources"] and set(r["verbs"]) & pod_writes for r in rules))
    assert pod_namespaces == ["gpudirect-facts", "gpudirect-verify"], pod_namespaces
    assert "default" not in roles, roles.get("default")
    assert not [r for rules in roles.values() for r in rules if set(r["resources"]) & {"secrets", "serviceaccounts/token"}]


def test_every_playbook_runs_under_the_generated_roles():
    gen = load_hack_script("gen_clusterrole")
    holder = {}

    def setup(sim):
        holder["sim"] = sim
        holder["token"] = provision(sim, gen)
        # With the admission policies too (issue 34): converge, method switch, check, facts, verify, must_gather and
        # teardown pass within what the policies admit.
        sim._server.apply_as_admin(os.path.join(ROOT, "deploy", "rbac", "admission-policies.yml"))  # pylint: disable=protected-access
        holder["mark"] = sim.mark()
        return holder["token"]

    entries, _types, _crds = gen.run_scenario(log=io.StringIO(), setup=setup)
    sim = holder["sim"]
    ran = entries[holder["mark"]:] if isinstance(holder["mark"], int) else entries
    assert [e for e in ran if e["code"] in (403, 422)] == []
    assert len(sim.store.list(sim.store.find_type("admissionregistration.k8s.io", "v1", "validatingadmissionpolicies"))[0]) == 5
    assert sum(1 for e in ran if e.get("user") == "system:serviceaccount:gpudirect-automation:gpudirect-automation") > 200
    assert any(e["verb"] == "create" and e["plural"] == "pods" and e["namespace"] == "gpudirect-facts" and e["code"] == 201
               for e in ran), "facts pods ran under the SCC deploy/rbac/workloads.yml provides"


def test_the_automation_identity_cannot_reach_beyond_its_namespaces(sim_factory):
    gen = load_hack_script("gen_clusterrole")
    sim = sim_factory(profile="mixed-lab")
    token = provision(sim, gen)
    session = requests.Session()
    session.headers["Authorization"] = "Bearer " + token

    def post(path, body):
        return session.post(sim.url + path, json=body, timeout=10)

    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "probe"},
           "spec": {"containers": [{"name": "c", "image": "registry.example/x:1"}]}}
    assert post("/api/v1/namespaces/kube-system/pods", pod).status_code == 403
    admin = requests.Session()
    admin.headers["Authorization"] = "Bearer " + sim.token
    assert admin.post(sim.url + "/api/v1/namespaces/kube-system/pods", json=dict(pod, metadata={"name": "etcd-x"}), timeout=10).status_code == 201
    for namespace in ("kube-system", "openshift-marketplace"):
        resp = session.get(sim.url + "/api/v1/namespaces/%s/pods/etcd-x/log" % namespace, timeout=10)
        assert resp.status_code == 403, (namespace, resp.text)
        assert 'cannot get resource "pods/log"' in resp.json()["message"]
    assert session.get(sim.url + "/api/v1/namespaces/default/secrets", timeout=10).status_code == 403
    assert session.get(sim.url + "/api/v1/pods", timeout=10).status_code == 403
    # No self-service SCC: no RoleBinding create anywhere, and a hostPath pod where it may create pods is refused.
    role_ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:openshift:scc:privileged"}
    binding = {"metadata": {"name": "mine"}, "roleRef": role_ref,
               "subjects": [{"kind": "ServiceAccount", "namespace": ACCOUNT[0], "name": ACCOUNT[1]}]}
    assert post("/apis/rbac.authorization.k8s.io/v1/namespaces/gpudirect-facts/rolebindings", binding).status_code == 403
    host = dict(pod, spec=dict(pod["spec"], volumes=[{"name": "root", "hostPath": {"path": "/"}}]))
    resp = post("/api/v1/namespaces/gpudirect-verify/pods", host)
    assert resp.status_code == 403 and "hostPath volumes are not allowed to be used" in resp.json()["message"]
    # Pods only in the collection's own namespaces (issue 34): none in default (the networks' namespace), where a pod
    # could mount another team's Secret or run as its service account, and no deleting pods it did not create there.
    secret_pod = dict(pod, metadata={"name": "secret-probe"}, spec=dict(pod["spec"], volumes=[{"name": "s", "secret": {"secretName": "any"}}]))
    for namespace in ("default", "kube-system"):
        resp = post("/api/v1/namespaces/%s/pods" % namespace, secret_pod)
        assert resp.status_code == 403 and 'cannot create resource "pods" in API group "" in the namespace "%s"' % namespace \
            in resp.json()["message"], resp.text
    assert admin.post(sim.url + "/api/v1/namespaces/default/pods", json=dict(pod, metadata={"name": "theirs"}), timeout=10).status_code == 201
    for path in ("/api/v1/namespaces/default/pods/theirs", "/api/v1/namespaces/default/pods", "/api/v1/namespaces/kube-system/pods/etcd-x"):
        resp = session.delete(sim.url + path, timeout=10)
        assert resp.status_code == 403 and 'cannot delete' in resp.json()["message"], (path, resp.text)
    # In gpudirect-verify, the verify SCC (IPC_LOCK) admits no Secret, no projected service account token, no host
    # path; restricted-v2 (every authenticated user's) no IPC_LOCK: a verify-like pod carrying any of them is refused.
    verify = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "verify-probe", "labels": {"probe": "verify"}}, "spec": {
        "serviceAccountName": "gpudirect-verify", "automountServiceAccountToken": False,
        "containers": [{"name": "c", "image": "registry.example/x:1", "securityContext": {"capabilities": {"drop": ["ALL"], "add": ["IPC_LOCK"]}}}]}}
    token = {"name": "t", "projected": {"sources": [{"serviceAccountToken": {"path": "token", "expirationSeconds": 3600}}]}}
    for extra, kind in (({"volumes": [{"name": "s", "secret": {"secretName": "any"}}]}, "secret"), ({"volumes": [token]}, "projected"),
                        ({"automountServiceAccountToken": True}, "projected"),
                        ({"volumes": [{"name": "root", "hostPath": {"path": "/"}}]}, "hostPath")):
        resp = post("/api/v1/namespaces/gpudirect-verify/pods", dict(verify, spec=dict(verify["spec"], **extra)))
        assert resp.status_code == 403, (extra, resp.text)
        message = resp.json()["message"]
        assert 'provider "gpudirect-verify": spec.volumes[0]: Invalid value: "%s": %s volumes are not allowed to be used' % (kind, kind) \
            in message, message
        assert 'provider "restricted-v2": spec.containers[0].securityContext.capabilities.add: Invalid value: "IPC_LOCK"' in message
    resp = post("/api/v1/namespaces/gpudirect-verify/pods", verify)
    assert resp.status_code == 201 and resp.json()["metadata"]["annotations"]["openshift.io/scc"] == "gpudirect-verify", resp.text
    # There it removes its pods by label (deletecollection), as verify does; RBAC cannot limit that to its own pods.
    resp = session.delete(sim.url + "/api/v1/namespaces/gpudirect-verify/pods", params={"labelSelector": "probe=verify"}, timeout=10)
    assert resp.status_code == 200, resp.text
    # The facts SCC (deploy/rbac/workloads.yml) admits a facts pod with a UID and groups from the namespace's ranges,
    # and refuses group 0, as fsGroup or as a supplemental group (issue 34).
    facts = dict(pod, metadata={"name": "facts-probe"}, spec=dict(
        pod["spec"], serviceAccountName="gpudirect-facts", automountServiceAccountToken=False,
        volumes=[{"name": "sys", "hostPath": {"path": "/sys", "type": "Directory"}}],
        containers=[dict(pod["spec"]["containers"][0], volumeMounts=[{"name": "sys", "mountPath": "/host/sys", "readOnly": True}])]))
    groups = int(admin.get(sim.url + "/api/v1/namespaces/gpudirect-facts", timeout=10).json()["metadata"]["annotations"][
        "openshift.io/sa.scc.supplemental-groups"].split("/")[0])
    for field, value in (("fsGroup", 0), ("supplementalGroups", [0])):
        refused_pod = dict(facts, spec=dict(facts["spec"], securityContext={field: value}))
        resp = post("/api/v1/namespaces/gpudirect-facts/pods", refused_pod)
        assert resp.status_code == 403, (field, resp.text)
        assert 'provider "gpudirect-facts": spec.securityContext.%s: Invalid value: []int64{0}: 0 is not an allowed group' % field \
            in resp.json()["message"], resp.json()["message"]
    # ... and a facts-like pod (host paths) that also mounts a Secret or the service account's token: gpudirect-facts
    # allows only hostPath and configMap volumes, restricted-v2 no hostPath.
    for extra in ({"volumes": facts["spec"]["volumes"] + [{"name": "s", "secret": {"secretName": "any"}}]},
                  {"automountServiceAccountToken": True}):
        resp = post("/api/v1/namespaces/gpudirect-facts/pods", dict(facts, spec=dict(facts["spec"], **extra)))
        assert resp.status_code == 403, (extra, resp.text)
        assert 'provider "gpudirect-facts": spec.volumes[1]: Invalid value: "%s"' % ("secret" if "volumes" in extra else "projected") \
            in resp.json()["message"], resp.json()["message"]
        assert 'provider "restricted-v2": spec.volumes[0]: Invalid value: "hostPath"' in resp.json()["message"]
    resp = post("/api/v1/namespaces/gpudirect-facts/pods", facts)
    assert resp.status_code == 201, resp.text
    admitted = resp.json()
    assert admitted["metadata"]["annotations"]["openshift.io/scc"] == "gpudirect-facts"
    assert admitted["spec"]["securityContext"]["fsGroup"] == groups and admitted["spec"]["securityContext"]["supplementalGroups"] == [groups]
    # Cluster-scoped objects it did not create: not even readable by name.
    assert session.get(sim.url + "/apis/machineconfiguration.openshift.io/v1/machineconfigs/00-master", timeout=10).status_code == 403
    # No list or watch of MachineConfigs, with or without a label selector: the rendered ones hold the pull secret.
    for params in ({}, {"labelSelector": "app.kubernetes.io/managed-by=gpudirect.openshift"}, {"watch": "true"}):
        resp = session.get(sim.url + "/apis/machineconfiguration.openshift.io/v1/machineconfigs", params=params, timeout=10)
        assert resp.status_code == 403, (params, resp.text)
        verb = "watch" if params.get("watch") else "list"
        assert 'cannot %s resource "machineconfigs" in API group "machineconfiguration.openshift.io"' % verb in resp.json()["message"]
    assert admin.get(sim.url + "/apis/machineconfiguration.openshift.io/v1/machineconfigs", timeout=10).status_code == 200


def test_a_missing_permission_fails_with_forbidden(sim_factory):
    gen = load_hack_script("gen_clusterrole")
    sim = sim_factory(profile="mixed-lab")
    token = provision(sim, gen)
    rtype = sim.store.find_type("rbac.authorization.k8s.io", "v1", "clusterroles")
    role = sim.store.get(rtype, None, gen.ROLE_NAME)
    for rule in role["rules"]:
        if "nicclusterpolicies" in rule["resources"] and "create" in rule["verbs"]:
            rule["verbs"] = [v for v in rule["verbs"] if v != "create"]
    sim.store.update(rtype, role)
    kubeconfig = sim.write_kubeconfig(os.path.join(os.path.dirname(sim.kubeconfig), "automation"), token=token)
    env = dict(os.environ, K8S_AUTH_KUBECONFIG=kubeconfig, ANSIBLE_NOCOLOR="1")
    mark = sim.mark()
    proc = subprocess.run(["ansible-playbook", os.path.join(ROOT, "playbooks", "site.yml"), "-e", "@" + EXAMPLE,
                           "--tags", "nvidia_network_operator", "-e", "preflight_check_permissions=false"], cwd=ROOT,
                          env=env, capture_output=True, text=True, check=False, timeout=600)
    assert proc.returncode != 0
    assert 'cannot create resource \\"nicclusterpolicies\\" in API group \\"mellanox.com\\"' in proc.stdout or \
        'cannot create resource "nicclusterpolicies" in API group "mellanox.com"' in proc.stdout, proc.stdout[-4000:]
    # The server-side apply that would create it is authorized as a create too, and refused as one.
    assert refused(sim, mark) == [("patch", "mellanox.com", "nicclusterpolicies", None, None)]


def _without(sim, kind, namespace, name, resource, verb):
    """Remove verb on resource from one rule of the role (the rule goes when no verb is left); returns the original."""
    rtype = sim.store.find_type("rbac.authorization.k8s.io", "v1", "clusterroles" if kind == "ClusterRole" else "roles")
    role = sim.store.get(rtype, namespace, name)
    original = copy.deepcopy(role)
    rule = next(r for r in role["rules"] if resource in r["resources"] and verb in r["verbs"])
    rule["verbs"] = [v for v in rule["verbs"] if v != verb]
    role["rules"] = [r for r in role["rules"] if r["verbs"]]
    sim.store.update(rtype, role)
    return rtype, original


def test_a_role_missing_one_rule_stops_site_before_any_write(sim_factory):
    gen = load_hack_script("gen_clusterrole")
    sim = sim_factory(profile="mixed-lab")
    token = provision(sim, gen)
    kubeconfig = sim.write_kubeconfig(os.path.join(os.path.dirname(sim.kubeconfig), "automation"), token=token)
    env = dict(os.environ, K8S_AUTH_KUBECONFIG=kubeconfig, ANSIBLE_NOCOLOR="1")
    cases = [
        (("ClusterRole", None, gen.ROLE_NAME, "nicclusterpolicies", "create"),
         "create on nicclusterpolicies.mellanox.com cluster-wide: add to the ClusterRole %s the rule "
         '{apiGroups: ["mellanox.com"], resources: ["nicclusterpolicies"], verbs: [create]}' % gen.ROLE_NAME),
        (("Role", "gpudirect-facts", gen.ROLE_NAME, "pods", "create"),
         "create on pods in namespace gpudirect-facts: add to the Role %s in gpudirect-facts the rule "
         '{apiGroups: [""], resources: ["pods"], verbs: [create]}' % gen.ROLE_NAME),
    ]
    for (kind, namespace, name, resource, verb), expected in cases:
        rtype, original = _without(sim, kind, namespace, name, resource, verb)
        mark = sim.mark()
        proc = subprocess.run(["ansible-playbook", os.path.join(ROOT, "playbooks", "site.yml"), "-e", "@" + EXAMPLE],
                              cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=600)
        assert proc.returncode != 0
        text = proc.stdout.replace("\\n", "\n").replace('\\"', '"')
        assert expected in text, proc.stdout[-4000:]
        assert "Stop before any write when the identity lacks a permission" in proc.stdout
        assert sim.count(writes_only=True, since=mark) == 0, sim.request_log[mark:]
        reviews = [e for e in sim.request_log[mark:] if e["group"] == "authorization.k8s.io"]
        # One access review (not everything), then one rules review per namespace of the Roles and one cluster-wide.
        namespaces = {i["metadata"]["namespace"] for i in gen.load_documents() if i["kind"] == "Role"}
        assert len(reviews) == 2 + len(namespaces), [(e["plural"], e["code"]) for e in reviews]
        current = sim.store.get(rtype, namespace, name)
        original["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
        sim.store.update(rtype, original)
