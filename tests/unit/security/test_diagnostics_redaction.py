"""Issue 34 (MEDIUM): must_gather copied credentials inside JSON text, curl -u user:pass command lines, environment
variables such as NGC_KEY or AWS_ACCESS_KEY_ID, and other teams' NetworkAttachmentDefinition configs."""

import json

from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster import diagnostics as d

R = d.REDACTED


def test_json_inside_a_string_is_redacted_by_key():
    config = json.dumps({"cniVersion": "0.3.1", "type": "thirdparty", "password": "hunter22", "apiKey": "abcd1234",
                         "nested": {"client_token": "tok-5678"}, "ipam": {"type": "whereabouts"}})
    out = d.redact({"spec": {"config": config}})["spec"]["config"]
    for secret in ("hunter22", "abcd1234", "tok-5678"):
        assert secret not in out
    assert '"type": "whereabouts"' in out and '"cniVersion": "0.3.1"' in out


def test_command_lines_with_user_and_password():
    for line, secret in (("curl -u admin:s3cretpw https://registry.example/v2/", "s3cretpw"),
                         ("curl --user admin:s3cretpw https://x", "s3cretpw"),
                         ("wget --password s3cretpw https://x", "s3cretpw"),
                         ("sh -c 'NGC_KEY=nvapi-abc123 ./pull.sh'", "nvapi-abc123")):
        out = d.scrub_text(line, ())
        assert secret not in out and R in out, out
    assert "admin:" in d.scrub_text("curl -u admin:s3cretpw https://x", ())


def test_environment_variables_named_like_keys():
    env = [{"name": "NGC_KEY", "value": "nvapi-abc"}, {"name": "AWS_ACCESS_KEY_ID", "value": "AKIAEXAMPLE"},
           {"name": "AWS_SECRET_ACCESS_KEY", "value": "wJalrEXAMPLE"}, {"name": "HF_TOKEN", "value": "hf_x"},
           {"name": "NODE_NAME", "value": "worker-0"}]
    out = d.redact({"env": env})["env"]
    assert [e["value"] for e in out] == [R, R, R, R, "worker-0"]


def test_kubernetes_fields_named_key_stay_visible():
    taint = {"key": "nvidia.com/gpu", "effect": "NoSchedule", "value": "present"}
    selector = {"matchExpressions": [{"key": "node-role.kubernetes.io/worker", "operator": "Exists"}]}
    assert d.redact(taint) == taint and d.redact(selector) == selector


def nad(name, namespace, config="{}"):
    return {"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition",
            "metadata": {"name": name, "namespace": namespace}, "spec": {"config": config}}


def test_only_the_collections_network_attachments_are_kept():
    groups = {
        ("IPoIBNetwork", "ipoibnetworks", None): [{"metadata": {"name": "rdma-ipoib"}}],
        ("NetworkAttachmentDefinition", "network-attachment-definitions", "default"): [nad("rdma-ipoib", "default")],
        ("NetworkAttachmentDefinition", "network-attachment-definitions", "team-b"): [nad("their-net", "team-b")],
    }
    d._keep_own_attachments(groups)
    kept = [item["metadata"]["name"] for key, items in groups.items() if key[0] == "NetworkAttachmentDefinition" for item in items]
    assert kept == ["rdma-ipoib"]
    assert ("NetworkAttachmentDefinition", "network-attachment-definitions", "team-b") not in groups


def test_the_collections_networks_are_listed_by_its_label():
    requests = d.plan_requests(["nvidia-network-operator"], "openshift-marketplace", "app.kubernetes.io/managed-by=x")
    selectors = {r["kind"]: r["label_selector"] for r in requests}
    for kind in d.NETWORK_KINDS:
        assert selectors[kind] == "app.kubernetes.io/managed-by=x", kind
