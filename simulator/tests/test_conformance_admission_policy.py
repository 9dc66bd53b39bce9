"""ValidatingAdmissionPolicy as kube-apiserver evaluates it (sources in simulator/admission_policy.py).

The cases follow the examples of the Kubernetes documentation's "Validating Admission Policy" page
(kubernetes.io/docs/reference/access-authn-authz/validating-admission-policy/): a replicas limit bound to namespaces by
label, the limit read from a parameter object with a messageExpression, matchConditions that leave some requests
alone, variables that read the namespace, and the Warn and Audit actions."""

import pytest

from .test_conformance_rbac import As, grant

API = "/apis/admissionregistration.k8s.io/v1"
DEPLOYMENTS = "/apis/apps/v1/namespaces/%s/deployments"


def deployment(name, replicas, image="nginx", labels=None):
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "labels": labels or {}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": image}]}}}}


def on_deployments(operations=("CREATE", "UPDATE")):
    return {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": list(operations),
                               "resources": ["deployments"]}]}


def install(http, name, spec, binding_spec=None, binding="binding"):
    policy = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
              "metadata": {"name": name}, "spec": spec}
    assert http.post(API + "/validatingadmissionpolicies", policy).status_code == 201
    body = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": binding}, "spec": dict({"policyName": name, "validationActions": ["Deny"]}, **(binding_spec or {}))}
    assert http.post(API + "/validatingadmissionpolicybindings", body).status_code == 201


def namespace(http, name, labels=None):
    assert http.post("/api/v1/namespaces", {"metadata": {"name": name, "labels": labels or {}}}).status_code == 201


def test_a_replicas_limit_bound_to_labelled_namespaces_denies_with_the_api_servers_text(http):
    namespace(http, "test", {"environment": "test"})
    namespace(http, "prod", {"environment": "prod"})
    install(http, "demo-policy.example.com", {"failurePolicy": "Fail", "matchConstraints": on_deployments(),
                                              "validations": [{"expression": "object.spec.replicas <= 5"}]},
            {"matchResources": {"namespaceSelector": {"matchLabels": {"environment": "test"}}}},
            binding="demo-binding-test.example.com")
    resp = http.post(DEPLOYMENTS % "test", deployment("nginx", 6))
    assert resp.status_code == 422, resp.text
    status = resp.json()
    expected = ("ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding-test.example.com' "
                "denied request: failed expression: object.spec.replicas <= 5")
    assert status["reason"] == "Invalid"
    assert status["message"] == 'deployments.apps "nginx" is forbidden: ' + expected
    assert status["details"]["causes"] == [{"message": expected}]
    assert status["details"]["name"] == "nginx" and status["details"]["kind"] == "deployments"
    assert http.post(DEPLOYMENTS % "test", deployment("nginx", 5)).status_code == 201
    # The binding selects namespaces by label: the same object elsewhere is not checked.
    assert http.post(DEPLOYMENTS % "prod", deployment("nginx", 6)).status_code == 201
    # An update is checked too (UPDATE is in the rule's operations), a patch included.
    resp = http.patch(DEPLOYMENTS % "test" + "/nginx", {"spec": {"replicas": 7}})
    assert resp.status_code == 422 and expected in resp.json()["message"]
    assert http.get(DEPLOYMENTS % "test" + "/nginx").json()["spec"]["replicas"] == 5


def test_params_and_message_expression(http):
    namespace(http, "test", {"environment": "test"})
    limits = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "replica-limit-test.example.com", "namespace": "default"},
              "data": {"maxReplicas": "3"}}
    assert http.post("/api/v1/namespaces/default/configmaps", limits).status_code == 201
    policy = {"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"}, "matchConstraints": on_deployments(),
              "validations": [{"expression": "object.spec.replicas <= int(params.data.maxReplicas)",
                               "messageExpression": "'object.spec.replicas must be no greater than ' + params.data.maxReplicas",
                               "reason": "Forbidden"}]}
    binding = {"paramRef": {"name": "replica-limit-test.example.com", "namespace": "default", "parameterNotFoundAction": "Deny"}}
    install(http, "replicalimit-policy.example.com", policy, binding)
    resp = http.post(DEPLOYMENTS % "test", deployment("web", 4))
    # The validation's reason gives the status reason and code (Forbidden: 403).
    assert resp.status_code == 403 and resp.json()["reason"] == "Forbidden"
    assert resp.json()["message"].endswith("denied request: object.spec.replicas must be no greater than 3")
    assert http.post(DEPLOYMENTS % "test", deployment("web", 3)).status_code == 201
    # Without the parameter object, a Deny parameterNotFoundAction refuses every matching request.
    assert http.delete("/api/v1/namespaces/default/configmaps/replica-limit-test.example.com").status_code == 200
    resp = http.post(DEPLOYMENTS % "test", deployment("other", 1))
    assert resp.status_code == 422
    assert resp.json()["message"].endswith(
        "denied request: failed to configure binding: no params found for policy binding with Deny parameterNotFoundAction")


def test_match_conditions_leave_other_requests_alone_and_a_failing_message_expression_falls_back(api, http):
    namespace(http, "demo")
    namespace(http, "other")
    install(http, "demo-names", {
        "matchConstraints": on_deployments(),
        "matchConditions": [{"name": "exclude-system-users", "expression": "!request.userInfo.username.startsWith('system:admin')"}],
        "validations": [{"expression": "!object.metadata.name.contains('demo') || object.metadata.namespace == 'demo'",
                         "message": "demo objects belong in namespace demo",
                         "messageExpression": "object.metadata.missing + ' is not there'"}]})
    # The administrator (system:admin) is left alone by the match condition.
    assert http.post(DEPLOYMENTS % "other", deployment("demo-admin", 1)).status_code == 201
    grant(http, "other", "deployer", [{"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["create"]}])
    bot = As(api, "default", "bot")
    resp = bot.post(DEPLOYMENTS % "other", deployment("demo-app", 1))
    assert resp.status_code == 422
    # The messageExpression fails to evaluate: the static message is used.
    assert resp.json()["message"].endswith("denied request: demo objects belong in namespace demo")
    assert bot.post(DEPLOYMENTS % "other", deployment("app", 1)).status_code == 201


def test_variables_read_the_namespace_and_the_object(http):
    namespace(http, "staging", {"environment": "staging"})
    install(http, "image-matches-namespace-environment.policy.example.com", {
        "matchConstraints": on_deployments(),
        "variables": [
            {"name": "environment", "expression": "'environment' in namespaceObject.metadata.labels ? "
                                                  "namespaceObject.metadata.labels['environment'] : 'prod'"},
            {"name": "exempt", "expression": "has(object.metadata.labels) && 'exempt' in object.metadata.labels && "
                                             "object.metadata.labels['exempt'] == 'true'"},
            {"name": "containers", "expression": "object.spec.template.spec.containers"},
            {"name": "containersToCheck", "expression": "variables.containers.filter(c, c.image.contains('example.com/'))"}],
        "validations": [{"expression": "variables.exempt || variables.containersToCheck.all(c, c.image.startsWith(variables.environment + '.'))",
                         "messageExpression": "'only ' + variables.environment + ' images are allowed in namespace ' + namespaceObject.metadata.name"}]})
    resp = http.post(DEPLOYMENTS % "staging", deployment("a", 1, image="prod.example.com/app:1"))
    assert resp.status_code == 422
    assert resp.json()["message"].endswith("denied request: only staging images are allowed in namespace staging")
    assert http.post(DEPLOYMENTS % "staging", deployment("b", 1, image="staging.example.com/app:1")).status_code == 201
    assert http.post(DEPLOYMENTS % "staging", deployment("c", 1, image="prod.example.com/app:1", labels={"exempt": "true"})).status_code == 201
    assert http.post(DEPLOYMENTS % "staging", deployment("d", 1, image="quay.io/app:1")).status_code == 201


def test_warn_and_audit_admit_with_a_warning(http):
    install(http, "demo-policy.example.com", {"matchConstraints": on_deployments(),
                                              "validations": [{"expression": "object.spec.replicas <= 5"}]},
            {"validationActions": ["Warn", "Audit"]}, binding="demo-binding-test.example.com")
    resp = http.post(DEPLOYMENTS % "default", deployment("nginx", 6))
    assert resp.status_code == 201
    assert resp.headers["Warning"] == ('299 - "Validation failed for ValidatingAdmissionPolicy \'demo-policy.example.com\' '
                                       'with binding \'demo-binding-test.example.com\': failed expression: object.spec.replicas <= 5"')


@pytest.mark.parametrize("failure_policy, code", [("Fail", 422), ("Ignore", 201)])
def test_an_expression_error_follows_the_failure_policy(http, failure_policy, code):
    install(http, "broken", {"failurePolicy": failure_policy, "matchConstraints": on_deployments(),
                             "validations": [{"expression": "object.spec.nothing > 1"}]})
    resp = http.post(DEPLOYMENTS % "default", deployment("x", 1))
    assert resp.status_code == code, resp.text
    if code == 422:
        assert "denied request: expression 'object.spec.nothing > 1' resulted in error" in resp.json()["message"]


def test_delete_excluded_rules_and_resource_names(http):
    install(http, "keep", {"matchConstraints": {
        "resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["*"], "operations": ["DELETE"], "resources": ["deployments"],
                           "resourceNames": ["keep-me", "keep-too"]}],
        "excludeResourceRules": [{"apiGroups": ["apps"], "apiVersions": ["*"], "operations": ["*"], "resources": ["deployments"],
                                  "resourceNames": ["keep-too"]}]},
        "validations": [{"expression": "oldObject.metadata.name != 'keep-me' && object == null", "message": "kept"}]})
    for name in ("keep-me", "keep-too", "other"):
        assert http.post(DEPLOYMENTS % "default", deployment(name, 1)).status_code == 201
    resp = http.delete(DEPLOYMENTS % "default" + "/keep-me")
    assert resp.status_code == 422 and resp.json()["message"].endswith("denied request: kept")
    assert http.delete(DEPLOYMENTS % "default" + "/keep-too").status_code == 200
    assert http.delete(DEPLOYMENTS % "default" + "/other").status_code == 200


def test_served_from_kubernetes_1_30(sim_factory):
    """OpenShift 4.16 is Kubernetes 1.29: no admissionregistration.k8s.io/v1 policies; 4.17 (1.30) has them."""
    import requests

    for version, served in (("4.16.20", False), ("4.17.10", True)):
        cluster = sim_factory(profile="roce-lab@%s" % version, controllers=False)
        resp = requests.get(cluster.url + API, headers={"Authorization": "Bearer " + cluster.token}, timeout=10)
        names = [r["name"] for r in resp.json().get("resources", [])] if resp.status_code == 200 else []
        assert ("validatingadmissionpolicies" in names) is served, (version, resp.status_code, names)
