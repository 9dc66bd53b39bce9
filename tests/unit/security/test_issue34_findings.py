"""Issue 34 ("secure by default, round two"): one test per finding, named after it (HIGH, MEDIUM, LOW).

Each test checks the fix through the collection's own files and functions: the committed deploy/rbac files (the
admission policies evaluated by the simulator's CEL, simulator/admission_policy.py), the module_utils checks, the
role defaults. Where a finding also has a test elsewhere (an integration test that needs a converged cluster, or a
unit file of its own), the test calls into that check or names it in its docstring:

- HIGH root on every node, five ways: test_high_root_on_every_node_five_ways
  (also integration/test_admission_policies.py::test_root_on_every_node_five_ways_is_refused_with_the_policys_message)
- HIGH the cluster pull secret (list on MachineConfigs): test_high_machineconfigs_cannot_be_listed_or_watched
  (also unit/plugins/module_utils/test_machineconfigs_by_name.py)
- MEDIUM verify namespace: Secrets, tokens, others' pods: test_medium_verify_pods_mount_no_secret_or_token_and_run_in_their_own_namespace
  (also integration/test_least_privilege.py::test_the_automation_identity_cannot_reach_beyond_its_namespaces)
- MEDIUM facts SCC: writable /, group 0, control plane: test_medium_facts_pods_get_no_writable_host_path_no_group_0_no_control_plane_node
  (also integration/test_admission_policies.py (two pod tests))
- MEDIUM a killed facts run leaves its grant: test_medium_a_killed_facts_run_cleans_up_on_sigterm
  (also integration/test_facts_grants.py)
- MEDIUM udev_rules_from_facts: a MAC another node claims: test_medium_udev_rules_from_facts_refuse_a_mac_two_nodes_claim
  (also unit/security/test_udev_rules_from_facts.py)
- MEDIUM must_gather copies credentials and others' networks: test_medium_must_gather_redacts_credentials_and_keeps_only_own_networks
  (also unit/security/test_diagnostics_redaction.py)
- LOW kubeconfig bearer token over http: test_low_kubeconfig_token_over_plain_http
  (also unit/security/test_kubeconfig_http.py)
- LOW name checks accept a trailing newline: test_low_name_checks_refuse_a_trailing_newline
  (also unit/security/test_anchored_names.py)
- LOW survey text becomes the raw Multus annotation: test_low_verify_network_is_one_network_name
  (also unit/security/test_verify_network_text.py)
- LOW verify and DOCA images not pinned by digest: test_low_images_by_digest_where_a_source_gives_one
  (also integration/test_admission_policies.py (tag-only image))
- LOW three operators default to Automatic approval: test_low_every_operator_defaults_to_manual_approval
  (also unit/plugins/module_utils/render/test_gitops.py)
- LOW render.yml deletes files it did not write: test_low_render_removes_only_the_files_it_recorded
  (also integration/test_render_output.py)
- LOW Markdown hardware report not escaped: test_low_markdown_report_is_escaped
  (also unit/security/test_report_escaping.py)
- LOW role rights on namespaces never used: test_low_roles_only_in_the_documented_namespaces
  (also integration/test_least_privilege.py)
- LOW requires_ansible admits vulnerable ansible-core: test_low_requires_ansible_leaves_out_the_template_injection_releases
  (also integration/test_supported_ansible.py)
"""

import copy
import os
import types

import pytest
import yaml

from simulator import admission_policy

from ansible_collections.gpudirect.openshift.plugins.module_utils import catalogue
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import releases

from . import (test_anchored_names, test_diagnostics_redaction, test_kubeconfig_http, test_report_escaping,
               test_udev_rules_from_facts, test_verify_network_text)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
RBAC = os.path.join(ROOT, "deploy", "rbac")
AUTOMATION = types.SimpleNamespace(name="system:serviceaccount:gpudirect-automation:gpudirect-automation",
                                   groups=["system:serviceaccounts", "system:authenticated"])
ADMIN = types.SimpleNamespace(name="system:admin", groups=["system:masters"])
OPERATOR_NAMESPACES = {"openshift-nfd", "openshift-sriov-network-operator", "nvidia-network-operator", "nvidia-gpu-operator"}


def _items(name):
    with open(os.path.join(RBAC, name), encoding="utf-8") as handle:
        return yaml.safe_load(handle)["items"]


POLICIES = dict((i["metadata"]["name"], i) for i in _items("admission-policies.yml") if i["kind"] == "ValidatingAdmissionPolicy")


def _rtype(group, version, kind, plural):
    return types.SimpleNamespace(group=group, version=version, kind=kind, plural=plural)


MC = _rtype("machineconfiguration.openshift.io", "v1", "MachineConfig", "machineconfigs")
NCP = _rtype("mellanox.com", "v1alpha1", "NicClusterPolicy", "nicclusterpolicies")
CLUSTER_POLICY = _rtype("nvidia.com", "v1", "ClusterPolicy", "clusterpolicies")
NFD = _rtype("nfd.openshift.io", "v1", "NodeFeatureDiscovery", "nodefeaturediscoveries")
SUBSCRIPTION = _rtype("operators.coreos.com", "v1alpha1", "Subscription", "subscriptions")
POD = _rtype("", "v1", "Pod", "pods")


def denials(policy, obj, rtype, user=AUTOMATION, params=None):
    """The messages the committed policy denies ``obj`` with (a CREATE by ``user``), as the simulator's CEL decides."""
    attributes = {"operation": "CREATE", "rtype": rtype, "namespace": obj["metadata"].get("namespace"),
                  "name": obj["metadata"]["name"], "object": obj, "user": user}
    # pylint: disable-next=protected-access
    return [message for denied, message, _reason in admission_policy._decisions(POLICIES[policy], attributes, params) if denied]


def _machineconfig(name, role, spec):
    return {"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig",
            "metadata": {"name": name, "labels": {"machineconfiguration.openshift.io/role": role,
                                                  "app.kubernetes.io/managed-by": "gpudirect.openshift"}}, "spec": spec}


def test_high_root_on_every_node_five_ways():
    """A MachineConfig for the master pool, a systemd unit in the collection's MachineConfig, the NicClusterPolicy with
    another image, a master affinity and every toleration, the ClusterPolicy driver image, the NFD operand image, and
    a Subscription to another package: each is denied for the automation and admitted for an administrator."""
    ignition = {"config": {"ignition": {"version": "3.2.0"}}}
    writes = [
        ("gpudirect-openshift-machineconfigs", MC, _machineconfig("99-master-gpudirect-rdma", "master", ignition),
         "MachineConfig 99-master-gpudirect-rdma is not one the collection renders"),
        ("gpudirect-openshift-machineconfigs", MC, _machineconfig("99-worker-gpudirect-rdma", "worker", {"config": {
            "ignition": {"version": "3.2.0"}, "systemd": {"units": [{"name": "x.service", "contents": "[Service]"}]}}}),
         "the collection's MachineConfigs carry no systemd units"),
        ("gpudirect-openshift-operands", NCP, {"metadata": {"name": "nic-cluster-policy"}, "kind": "NicClusterPolicy", "spec": {
            "ofedDriver": {"repository": "evil.example.com/x", "image": "d", "version": "1"}}},
         "NicClusterPolicy nic-cluster-policy: images only from the configured repositories"),
        ("gpudirect-openshift-operands", NCP, {"metadata": {"name": "nic-cluster-policy"}, "kind": "NicClusterPolicy", "spec": {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {}}, "tolerations": [{"operator": "Exists"}]}},
         "NicClusterPolicy nic-cluster-policy: no node affinity"),
        ("gpudirect-openshift-operands", CLUSTER_POLICY, {"metadata": {"name": "gpu-cluster-policy"}, "kind": "ClusterPolicy", "spec": {
            "driver": {"repository": "evil.example.com/x", "image": "driver", "version": "1"}}},
         "ClusterPolicy gpu-cluster-policy: images only from the configured repositories"),
        ("gpudirect-openshift-operands", NFD, {"metadata": {"name": "nfd-instance", "namespace": "openshift-nfd"},
                                               "kind": "NodeFeatureDiscovery", "spec": {"operand": {"image": "evil.example.com/x/nfd:1"}}},
         "NodeFeatureDiscovery nfd-instance: images only from the configured repositories"),
        ("gpudirect-openshift-operators", SUBSCRIPTION, {"metadata": {"name": "x", "namespace": "nvidia-gpu-operator"},
                                                         "kind": "Subscription", "spec": {
            "name": "cluster-logging", "source": "redhat-operators", "sourceNamespace": "openshift-marketplace"}},
         "namespace nvidia-gpu-operator subscribes only to gpu-operator-certified"),
    ]
    for policy, rtype, obj, expected in writes:
        messages = denials(policy, obj, rtype)
        assert any(m.startswith(expected) for m in messages), (expected, messages)
        assert denials(policy, obj, rtype, user=ADMIN) == []


def _rules_for(item, resource):
    return [rule for rule in item.get("rules") or [] if resource in rule.get("resources", []) or "*" in rule.get("resources", [])]


def test_high_machineconfigs_cannot_be_listed_or_watched():
    """`list` on MachineConfigs returned the rendered ones that carry the pull secret. No rule of the committed role
    grants list, watch or every verb on them (docs/least-privilege.md, "MachineConfigs: by name only")."""
    found = [(item["metadata"].get("namespace"), rule) for item in _items("clusterrole.yml") if item["kind"] in ("ClusterRole", "Role")
             for rule in _rules_for(item, "machineconfigs")]
    assert found, "no rule on machineconfigs at all: the test would prove nothing"
    for _namespace, rule in found:
        assert not {"list", "watch", "*"} & set(rule["verbs"]), rule
        assert "create" in rule["verbs"] or rule.get("resourceNames"), rule


def _workload(kind, name):
    return [i for i in _items("workloads.yml") if i["kind"] == kind and i["metadata"]["name"] == name][0]


def test_medium_verify_pods_mount_no_secret_or_token_and_run_in_their_own_namespace():
    """In `default` the token could mount any Secret, take any ServiceAccount's token and delete every pod. Verify now
    runs in gpudirect-verify: its SCC admits no secret or projected volume, its account mounts no token, and the role
    has no rule in `default` nor any pod, Secret or ServiceAccount right across namespaces."""
    scc = _workload("SecurityContextConstraints", "gpudirect-verify")
    assert not {"secret", "projected", "*"} & set(scc["volumes"]), scc["volumes"]
    account = [i for i in _items("workloads.yml") if i["kind"] == "ServiceAccount" and i["metadata"]["name"] == "gpudirect-verify"][0]
    assert account["automountServiceAccountToken"] is False
    roles = _items("clusterrole.yml")
    assert "default" not in {i["metadata"].get("namespace") for i in roles}
    cluster_role = [i for i in roles if i["kind"] == "ClusterRole"][0]
    for resource in ("pods", "secrets", "serviceaccounts"):
        assert _rules_for(cluster_role, resource) == [], resource


def test_medium_facts_pods_get_no_writable_host_path_no_group_0_no_control_plane_node():
    """The facts SCC admitted a writable hostPath /, group 0, on a control-plane node. The SCC takes groups from the
    namespace's range (MustRunAs, so never 0); the pods policy admits only the facts paths, read-only, and no
    control-plane selector or toleration; the placement policy refuses a control-plane node by name."""
    scc = _workload("SecurityContextConstraints", "gpudirect-facts")
    assert scc["fsGroup"]["type"] == scc["supplementalGroups"]["type"] == "MustRunAs"
    assert set(scc["volumes"]) == {"configMap", "hostPath"}

    def pod(**spec):
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "gpudirect-facts"},
                "spec": dict({"containers": [{"name": "c", "image": "x"}]}, **spec)}

    root = pod(volumes=[{"name": "h", "hostPath": {"path": "/"}}],
               containers=[{"name": "c", "image": "x", "volumeMounts": [{"name": "h", "mountPath": "/h"}]}])
    found = [m.split(": ", 1)[1][:15] for m in denials("gpudirect-openshift-pods", root, POD)]
    assert found == ["host paths only", "host paths are "]
    selected = pod(nodeSelector={"node-role.kubernetes.io/master": ""})
    assert denials("gpudirect-openshift-pods", selected, POD) == [
        "pod p: no nodeSelector on the control-plane labels (node-role.kubernetes.io/control-plane, node-role.kubernetes.io/master); "
        "set hardware_facts_allow_control_plane and regenerate with hack/gen_admission_policies.py --vars"]

    def affinity(operator):
        return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "node-role.kubernetes.io/control-plane", "operator": operator}]}]}}}

    assert denials("gpudirect-openshift-pods", pod(affinity=affinity("Exists")), POD) == [
        "pod p: no node affinity onto control-plane nodes (node-role.kubernetes.io/control-plane, node-role.kubernetes.io/master)"]
    assert denials("gpudirect-openshift-pods", pod(affinity=affinity("DoesNotExist")), POD) == []
    master = {"metadata": {"name": "master-0", "labels": {"node-role.kubernetes.io/master": "", "kubernetes.io/hostname": "master-0"}}}
    assert denials("gpudirect-openshift-pod-placement", pod(nodeName="master-0"), POD, params=master)[0].startswith(
        "pod p names the control-plane node master-0")
    assert denials("gpudirect-openshift-pod-placement", pod(nodeName="worker-0"), POD, params=master) == []
    sys_read_only = pod(nodeName="worker-0", tolerations=[{"operator": "Exists"}], volumes=[{"name": "h", "hostPath": {"path": "/sys"}}],
                        containers=[{"name": "c", "image": "x", "volumeMounts": [{"name": "h", "mountPath": "/h", "readOnly": True}]}])
    assert denials("gpudirect-openshift-pods", sys_read_only, POD) == []


def test_medium_a_killed_facts_run_cleans_up_on_sigterm():
    """A facts run killed with hardware_facts_manage_rbac left its hostmount-anyuid RoleBinding. The modules turn
    SIGTERM into SystemExit, so their cleanup (finally) runs; integration/test_facts_grants.py shows the next run
    removing an interrupted run's labelled grant and a SIGTERM'd run removing its own."""
    from ansible_collections.gpudirect.openshift.tests.unit.plugins.module_utils import test_module_base  # pylint: disable=import-outside-toplevel

    test_module_base.test_sigterm_becomes_system_exit_so_finally_blocks_run()


def test_medium_udev_rules_from_facts_refuse_a_mac_two_nodes_claim():
    test_udev_rules_from_facts.test_a_mac_that_two_nodes_report_is_refused_naming_both()
    test_udev_rules_from_facts.test_a_mac_the_sriov_daemon_does_not_report_there_is_refused_naming_the_node()


def test_medium_must_gather_redacts_credentials_and_keeps_only_own_networks():
    test_diagnostics_redaction.test_json_inside_a_string_is_redacted_by_key()
    test_diagnostics_redaction.test_command_lines_with_user_and_password()
    test_diagnostics_redaction.test_environment_variables_named_like_keys()
    test_diagnostics_redaction.test_only_the_collections_network_attachments_are_kept()


def test_low_kubeconfig_token_over_plain_http(tmp_path):
    test_kubeconfig_http.test_a_kubeconfig_token_over_plain_http_is_refused(tmp_path)


def test_low_name_checks_refuse_a_trailing_newline():
    test_anchored_names.test_model_never_keeps_a_newline_in_a_name()
    test_anchored_names.test_catalogue_refuses_a_role_with_a_trailing_newline()


def test_low_verify_network_is_one_network_name():
    for network in ("rdma-net,other-team/their-net", '[{"name": "their-net", "namespace": "other-team"}]', "rdma-net\n"):
        test_verify_network_text.test_anything_else_is_refused_naming_the_form(network)


def test_low_images_by_digest_where_a_source_gives_one():
    """The verify and DOCA driver images were not pinned by digest. No source gives one for them (the DOCA driver tag
    gets the node pool's OS appended; no digest of the nvidia-tools tag is published), so they are listed with that
    reason; every image the release table pins is admitted only by digest (tag only: denied)."""
    assert set(releases.UNPINNED_DEFAULT_IMAGES) == {"nvcr.io/nvidia/mellanox/doca-driver", "quay.io/edge-infrastructure/nvidia-tools"}
    pinned = releases.NETWORK_OPERATOR_RELEASES[(26, 4)]["rdma_shared_device_plugin"]
    assert "@sha256:" in pinned["version"]
    ncp = {"metadata": {"name": "nic-cluster-policy"}, "kind": "NicClusterPolicy", "spec": {"rdmaSharedDevicePlugin": dict(pinned)}}
    assert denials("gpudirect-openshift-operands", ncp, NCP) == []
    tag_only = copy.deepcopy(ncp)
    tag_only["spec"]["rdmaSharedDevicePlugin"]["version"] = pinned["version"].partition("@")[0]
    assert [m.split(": ", 1)[1][:30] for m in denials("gpudirect-openshift-operands", tag_only, NCP)] == ["these images only by digest (@"]


def test_low_every_operator_defaults_to_manual_approval():
    assert {entry["role"]: entry["install_plan_approval"] for entry in catalogue.resolve({})} == {
        "nfd": "Manual", "sriov_network_operator": "Manual", "nvidia_network_operator": "Manual", "nvidia_gpu_operator": "Manual"}
    for role in ("nfd", "sriov_network_operator", "nvidia_network_operator", "nvidia_gpu_operator"):
        with open(os.path.join(ROOT, "roles", role, "defaults", "main.yml"), encoding="utf-8") as handle:
            assert yaml.safe_load(handle)["%s_install_plan_approval" % role] == "Manual", role


def test_low_render_removes_only_the_files_it_recorded():
    """render.yml deleted any NNN-*.yaml of its output folder. It now removes only files its previous run recorded
    (integration/test_render_output.py::test_rerender_removes_its_own_stale_files_and_keeps_foreign_ones)."""
    with open(os.path.join(ROOT, "playbooks", "render.yml"), encoding="utf-8") as handle:
        tasks = [t for play in yaml.safe_load(handle) for t in play.get("tasks") or []]
    removals = [t for t in tasks if (t.get("ansible.builtin.file") or {}).get("state") == "absent"]
    assert len(removals) == 1 and "gpudirect_render_previous_files" in removals[0]["loop"]
    assert not [t for t in tasks if "ansible.builtin.find" in t]


def test_low_markdown_report_is_escaped():
    test_report_escaping.test_markdown_report_turns_facts_text_into_literal_text()


def test_low_roles_only_in_the_documented_namespaces():
    """Role rights on namespaces the documented deployment never uses: the Roles are in the facts and verify
    namespaces, the four operator namespaces and openshift-marketplace (PackageManifests' catalog), nowhere else."""
    namespaces = {i["metadata"]["namespace"] for i in _items("clusterrole.yml") if i["kind"] in ("Role", "RoleBinding")}
    assert namespaces == OPERATOR_NAMESPACES | {"gpudirect-facts", "gpudirect-verify", "openshift-marketplace"}


def test_low_requires_ansible_leaves_out_the_template_injection_releases():
    """CVE-2024-11079 is fixed in 2.16.14, 2.17.7 and 2.18.1: meta/runtime.yml admits none of the releases before."""
    from ansible.module_utils.compat.version import LooseVersion  # pylint: disable=import-outside-toplevel

    with open(os.path.join(ROOT, "meta", "runtime.yml"), encoding="utf-8") as handle:
        spec = yaml.safe_load(handle)["requires_ansible"]
    clauses = [c.strip() for c in spec.split(",")]

    def admitted(version):
        ok = True
        for clause in clauses:
            op, wanted = (clause[:2], clause[2:]) if clause[:2] in (">=", "!=", "<=") else (clause[:1], clause[1:])
            v, w = LooseVersion(version), LooseVersion(wanted)
            ok = ok and {">=": v >= w, "!=": v != w, "<=": v <= w, ">": v > w, "<": v < w}[op]
        return ok

    for vulnerable in ("2.16.13", "2.17.0", "2.17.6", "2.18.0"):
        assert not admitted(vulnerable), vulnerable
    for fixed in ("2.16.14", "2.17.7", "2.18.1", "2.19.0"):
        assert admitted(fixed), fixed


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_every_policy_binds_only_the_automation_identity(name):
    assert POLICIES[name]["spec"]["matchConditions"] == [
        {"name": "automation-identity", "expression": "request.userInfo.username == '%s'" % AUTOMATION.name}]
