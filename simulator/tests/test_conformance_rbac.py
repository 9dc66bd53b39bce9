"""RBAC authorization, RBAC escalation checks and SCC admission, each as OpenShift's API server behaves
(sources in rbac.py and scc.py)."""

import requests

ROLE = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role"}
BINDING = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding"}
RBAC = "/apis/rbac.authorization.k8s.io/v1"


class As:
    """Raw HTTP as a service account of the simulated cluster."""

    def __init__(self, cluster, namespace, name):
        self.base = cluster.url
        self.session = requests.Session()
        self.session.headers["Authorization"] = "Bearer " + cluster.service_account_token(namespace, name)

    def get(self, path):
        return self.session.get(self.base + path, timeout=10)

    def post(self, path, body):
        return self.session.post(self.base + path, json=body, timeout=10)


def grant(http, namespace, name, rules, account=("default", "bot"), cluster_wide=False):
    if cluster_wide:
        assert http.post(RBAC + "/clusterroles", {"metadata": {"name": name}, "rules": rules}).status_code == 201
        body = {"metadata": {"name": name}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
                "subjects": [{"kind": "ServiceAccount", "namespace": account[0], "name": account[1]}]}
        assert http.post(RBAC + "/clusterrolebindings", body).status_code == 201
        return
    assert http.post(RBAC + "/namespaces/%s/roles" % namespace, dict(ROLE, metadata={"name": name}, rules=rules)).status_code == 201
    body = dict(BINDING, metadata={"name": name}, roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
                subjects=[{"kind": "ServiceAccount", "namespace": account[0], "name": account[1]}])
    assert http.post(RBAC + "/namespaces/%s/rolebindings" % namespace, body).status_code == 201


def pod(name, **container_security):
    container = {"name": "c", "image": "registry.example/x:1"}
    if container_security:
        container["securityContext"] = container_security
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"containers": [container]}}


def test_unknown_token_is_401_and_a_service_account_without_rules_gets_403_with_the_apiserver_text(api, http):
    assert requests.get(api.url + "/api/v1/namespaces", headers={"Authorization": "Bearer nope"}, timeout=10).status_code == 401
    bot = As(api, "default", "bot")
    assert bot.get("/api").status_code == 200  # discovery stays open
    resp = bot.get("/api/v1/namespaces/kube-system/pods")
    assert resp.status_code == 403
    body = resp.json()
    assert body["reason"] == "Forbidden" and body["code"] == 403
    assert body["message"] == ('pods is forbidden: User "system:serviceaccount:default:bot" cannot list resource "pods" '
                               'in API group "" in the namespace "kube-system"')
    resp = bot.get("/api/v1/nodes/n1")
    assert resp.json()["message"] == ('nodes "n1" is forbidden: User "system:serviceaccount:default:bot" cannot get resource '
                                      '"nodes" in API group "" at the cluster scope')


def test_a_role_binding_grants_only_its_namespace_verbs_subresources_and_names(api, http):
    grant(http, "default", "reader", [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]},
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"], "resourceNames": ["allowed"]},
    ])
    for name in ("allowed", "other"):
        assert http.post("/api/v1/namespaces/default/configmaps", {"metadata": {"name": name}}).status_code == 201
    bot = As(api, "default", "bot")
    assert bot.get("/api/v1/namespaces/default/pods").status_code == 200
    assert bot.get("/api/v1/namespaces/kube-system/pods").status_code == 403  # another namespace
    assert bot.get("/api/v1/pods").status_code == 403  # all namespaces needs a cluster-wide grant
    assert bot.get("/api/v1/namespaces/default/pods/x/log").status_code == 403  # a subresource is its own resource
    assert bot.get("/api/v1/namespaces/default/configmaps/allowed").status_code == 200
    assert bot.get("/api/v1/namespaces/default/configmaps/other").status_code == 403  # resourceNames
    assert bot.get("/api/v1/namespaces/default/configmaps").status_code == 403  # list is not get


def test_binding_a_role_needs_bind_or_every_permission_it_grants(api, http):
    grant(http, "default", "binder", [
        {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["rolebindings"], "verbs": ["create"]},
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]},
    ])
    bot = As(api, "default", "bot")
    scc_role = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:openshift:scc:hostmount-anyuid"}
    binding = dict(BINDING, metadata={"name": "scc"}, roleRef=scc_role,
                   subjects=[{"kind": "ServiceAccount", "namespace": "default", "name": "facts"}])
    resp = bot.post(RBAC + "/namespaces/default/rolebindings", binding)
    assert resp.status_code == 403
    assert "is attempting to grant RBAC permissions not currently held" in resp.json()["message"]
    assert 'ResourceNames:["hostmount-anyuid"], Verbs:["use"]' in resp.json()["message"]
    # Holding what the role grants is enough (no escalation) ...
    get_pods = dict(ROLE, metadata={"name": "get-pods"}, rules=[{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}])
    assert http.post(RBAC + "/namespaces/default/roles", get_pods).status_code == 201
    small = dict(binding, metadata={"name": "small"}, roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "get-pods"})
    assert bot.post(RBAC + "/namespaces/default/rolebindings", small).status_code == 201
    # ... and so is `bind` on that role.
    may_bind = {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"], "verbs": ["bind"],
                "resourceNames": ["system:openshift:scc:hostmount-anyuid"]}
    grant(http, "default", "may-bind", [may_bind])
    assert bot.post(RBAC + "/namespaces/default/rolebindings", binding).status_code == 201


def test_creating_a_role_with_rules_not_held_needs_escalate(api, http):
    grant(http, "default", "role-writer", [{"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"], "verbs": ["create"]}])
    bot = As(api, "default", "bot")
    resp = bot.post(RBAC + "/namespaces/default/roles", dict(ROLE, metadata={"name": "wide"},
                    rules=[{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]))
    assert resp.status_code == 403 and "not currently held" in resp.json()["message"]


def test_every_namespace_gets_its_uid_range_and_pods_are_admitted_by_the_first_usable_scc_that_fits(api, http):
    assert http.post("/api/v1/namespaces", {"metadata": {"name": "team"}}).status_code == 201
    ns = http.get("/api/v1/namespaces/team").json()
    uid_range = ns["metadata"]["annotations"]["openshift.io/sa.scc.uid-range"]
    start = int(uid_range.split("/")[0])
    grant(http, "team", "pods", [{"apiGroups": [""], "resources": ["pods"], "verbs": ["create"]}], account=("team", "bot"))
    bot = As(api, "team", "bot")
    # restricted-v2 (every authenticated user): UID from the namespace's range, privilege escalation off, RuntimeDefault
    resp = bot.post("/api/v1/namespaces/team/pods", pod("plain"))
    assert resp.status_code == 201, resp.text
    admitted = resp.json()
    assert admitted["metadata"]["annotations"]["openshift.io/scc"] == "restricted-v2"
    context = admitted["spec"]["containers"][0]["securityContext"]
    assert context["runAsUser"] == start and context["allowPrivilegeEscalation"] is False
    assert admitted["spec"]["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    # fsGroup MustRunAs: the first ID of the namespace's supplemental-groups block; supplementalGroups RunAsAny: none.
    groups_start = int(ns["metadata"]["annotations"]["openshift.io/sa.scc.supplemental-groups"].split("/")[0])
    assert admitted["spec"]["securityContext"]["fsGroup"] == groups_start
    assert "supplementalGroups" not in admitted["spec"]["securityContext"]
    zero = pod("zero")
    zero["spec"]["securityContext"] = {"fsGroup": 0}
    resp = bot.post("/api/v1/namespaces/team/pods", zero)
    assert resp.status_code == 403
    assert 'provider "restricted-v2": spec.securityContext.fsGroup: Invalid value: []int64{0}: 0 is not an allowed group' \
        in resp.json()["message"]
    # A capability restricted-v2 does not allow, a hostPath volume, root: refused, with every SCC's reason.
    resp = bot.post("/api/v1/namespaces/team/pods", pod("locked", capabilities={"add": ["IPC_LOCK"]}))
    assert resp.status_code == 403
    message = resp.json()["message"]
    assert message.startswith('pods "locked" is forbidden: unable to validate against any security context constraint: [')
    assert 'provider "privileged": Forbidden: not usable by user or serviceaccount' in message
    assert 'provider "restricted-v2": spec.containers[0].securityContext.capabilities.add: Invalid value: "IPC_LOCK": ' \
           'capability may not be added' in message
    host = pod("host")
    host["spec"]["volumes"] = [{"name": "sys", "hostPath": {"path": "/sys"}}]
    resp = bot.post("/api/v1/namespaces/team/pods", host)
    assert resp.status_code == 403 and "hostPath volumes are not allowed to be used" in resp.json()["message"]
    resp = bot.post("/api/v1/namespaces/team/pods", pod("root", runAsUser=0))
    assert resp.status_code == 403 and "must be in the ranges: [%d, %d]" % (start, start + 9999) in resp.json()["message"]


def test_the_pods_service_account_may_bring_its_own_scc_and_seccomp_is_checked(api, http):
    assert http.post("/api/v1/namespaces", {"metadata": {"name": "facts"}}).status_code == 201
    scc_role = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:openshift:scc:hostmount-anyuid"}
    body = dict(BINDING, metadata={"name": "scc"}, roleRef=scc_role,
                subjects=[{"kind": "ServiceAccount", "namespace": "facts", "name": "collector"}])
    assert http.post(RBAC + "/namespaces/facts/rolebindings", body).status_code == 201
    assert http.post("/api/v1/namespaces/facts/serviceaccounts", {"metadata": {"name": "collector"}}).status_code == 201
    grant(http, "facts", "pods", [{"apiGroups": [""], "resources": ["pods"], "verbs": ["create"]}], account=("facts", "bot"))
    bot = As(api, "facts", "bot")
    host = pod("host")
    host["spec"]["volumes"] = [{"name": "sys", "hostPath": {"path": "/sys"}}]
    host["spec"]["serviceAccountName"] = "collector"
    resp = bot.post("/api/v1/namespaces/facts/pods", host)
    assert resp.status_code == 201, resp.text
    assert resp.json()["metadata"]["annotations"]["openshift.io/scc"] == "hostmount-anyuid"
    # hostmount-anyuid lists no seccomp profile: a pod that sets one is refused there (seccomp/strategy.go).
    host["metadata"]["name"] = "host-seccomp"
    host["spec"]["securityContext"] = {"seccompProfile": {"type": "RuntimeDefault"}}
    resp = bot.post("/api/v1/namespaces/facts/pods", host)
    assert resp.status_code == 403 and 'provider "hostmount-anyuid": pod.metadata.annotations' in resp.json()["message"]
    assert "seccomp may not be set" in resp.json()["message"]


def test_a_pod_whose_service_account_does_not_exist_is_forbidden_even_for_the_administrator(api, http):
    assert http.post("/api/v1/namespaces", {"metadata": {"name": "ml"}}).status_code == 201
    missing = pod("verify")
    missing["spec"]["serviceAccountName"] = "gpudirect-verify"
    resp = http.post("/api/v1/namespaces/ml/pods", missing)
    assert resp.status_code == 403 and resp.json()["reason"] == "Forbidden"
    assert resp.json()["message"] == ('pods "verify" is forbidden: error looking up service account ml/gpudirect-verify: '
                                      'serviceaccount "gpudirect-verify" not found')
    # The namespace's "default" account needs no object (the serviceaccounts controller's); a created account works.
    assert http.post("/api/v1/namespaces/ml/pods", pod("plain")).status_code == 201
    assert http.post("/api/v1/namespaces/ml/serviceaccounts", {"metadata": {"name": "gpudirect-verify"}}).status_code == 201
    assert http.post("/api/v1/namespaces/ml/pods", missing).status_code == 201


def test_the_cluster_administrator_may_do_anything(api, http):
    resp = http.post("/api/v1/namespaces/default/pods", pod("admin", privileged=True))
    assert resp.status_code == 201 and resp.json()["metadata"]["annotations"]["openshift.io/scc"] == "privileged"
    binding = {"metadata": {"name": "x"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
               "subjects": [{"kind": "User", "name": "someone"}]}
    assert http.post(RBAC + "/clusterrolebindings", binding).status_code == 201


def test_the_service_account_token_is_a_projected_volume_unless_automount_is_off(api, http):
    """kubernetes plugin/pkg/admission/serviceaccount/admission.go, before SCC admission: the token comes as a projected
    volume kube-api-access-<5 characters>, which an SCC without "projected" in its volumes refuses (issue 34)."""
    assert http.post("/api/v1/namespaces", {"metadata": {"name": "tokens"}}).status_code == 201
    admitted = http.post("/api/v1/namespaces/tokens/pods", pod("plain")).json()
    volume = admitted["spec"]["volumes"][0]
    assert volume["name"].startswith("kube-api-access-") and len(volume["name"]) == len("kube-api-access-") + 5
    assert {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}} in volume["projected"]["sources"]
    assert admitted["spec"]["containers"][0]["volumeMounts"] == [
        {"name": volume["name"], "readOnly": True, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}]
    off = pod("off")
    off["spec"]["automountServiceAccountToken"] = False
    assert "volumes" not in http.post("/api/v1/namespaces/tokens/pods", off).json()["spec"]
    # The account's automountServiceAccountToken: false holds unless the pod asks for the token itself.
    account = {"metadata": {"name": "quiet"}, "automountServiceAccountToken": False}
    assert http.post("/api/v1/namespaces/tokens/serviceaccounts", account).status_code == 201
    quiet = pod("quiet")
    quiet["spec"]["serviceAccountName"] = "quiet"
    assert "volumes" not in http.post("/api/v1/namespaces/tokens/pods", quiet).json()["spec"]
    quiet["metadata"]["name"] = "loud"
    quiet["spec"]["automountServiceAccountToken"] = True
    assert http.post("/api/v1/namespaces/tokens/pods", quiet).json()["spec"]["volumes"][0]["name"].startswith("kube-api-access-")
