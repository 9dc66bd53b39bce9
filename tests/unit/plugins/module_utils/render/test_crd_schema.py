# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every rendered object validates against its upstream CRD schema and uses no pruned field."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import json

import jsonschema
import pytest

from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.schema import manifest_unknown_fields, unknown_fields
from ansible_collections.gpudirect.openshift.plugins.module_utils.render.plan import render_all

from conftest import variants

CASES = variants()


def to_json_schema(schema):
    """Turn a structural Kubernetes schema into plain JSON Schema (draft 7)."""
    schema = copy.deepcopy(schema)

    def convert(node):
        if isinstance(node, list):
            return [convert(item) for item in node]
        if not isinstance(node, dict):
            return node
        node = dict((key, convert(value)) for key, value in node.items())
        if node.pop("x-kubernetes-int-or-string", False):
            node.pop("type", None)
            node["anyOf"] = [{"type": "integer"}, {"type": "string"}]
        if node.pop("nullable", False) and "type" in node:
            node["type"] = [node["type"], "null"]
        return node

    return convert(schema)


def rendered(variables):
    result = render_all(variables)
    assert result["errors"] == []
    return result["manifests"]


def test_every_configuration_variant_renders():
    kinds = set()
    for _name, variables in CASES:
        for entry in rendered(variables):
            kinds.add(entry["manifest"]["kind"])
    assert kinds == {"MachineConfig", "NodeFeatureDiscovery", "SriovOperatorConfig", "NicClusterPolicy", "ClusterPolicy",
                     "SriovNetworkPoolConfig", "SriovNetworkNodePolicy", "MacvlanNetwork", "IPoIBNetwork", "HostDeviceNetwork",
                     "SriovNetwork", "SriovIBNetwork"}


@pytest.mark.parametrize("name,variables", CASES, ids=[c[0] for c in CASES])
def test_objects_validate_against_crd(name, variables, crd_schemas):
    for entry in rendered(variables):
        manifest = entry["manifest"]
        group, version = manifest["apiVersion"].split("/")
        key = (group, version, manifest["kind"])
        assert key in crd_schemas, "no CRD for %s" % (key,)
        scope, schema = crd_schemas[key]
        jsonschema.validate(manifest, to_json_schema(schema), cls=jsonschema.Draft7Validator)
        spec_schema = schema["properties"]["spec"]
        assert unknown_fields(manifest["spec"], spec_schema, "spec") == [], entry["file"]
        assert set(manifest) <= {"apiVersion", "kind", "metadata", "spec"}
        # Namespaced kinds carry a namespace, cluster-scoped ones must not.
        assert ("namespace" in manifest["metadata"]) == (scope == "Namespaced"), entry["file"]


@pytest.mark.parametrize("name,variables", CASES, ids=[c[0] for c in CASES])
def test_embedded_json_strings_parse(name, variables):
    for entry in rendered(variables):
        spec = entry["manifest"]["spec"]
        if "ipam" in spec:
            ipam = json.loads(spec["ipam"])
            second = variables.get("gpudirect_rdma_second_fabric") or {}
            assert ipam["type"] == "whereabouts" and ipam["range"] in ("192.168.3.225/28", second.get("ipam_range"))
        for key in ("rdmaSharedDevicePlugin", "sriovDevicePlugin"):
            if key in spec:
                config = json.loads(spec[key]["config"])
                assert config.get("configList") or config.get("resourceList")


def test_unknown_field_check_catches_pruned_fields(crd_schemas):
    """The checker itself: a misspelt field and a field under a closed object are both reported."""
    _scope, schema = crd_schemas[("mellanox.com", "v1alpha1", "MacvlanNetwork")]
    spec = {"master": "ens8f0np0", "mastr": "x"}
    assert unknown_fields(spec, schema["properties"]["spec"], "spec") == ["spec.mastr"]
    _scope, schema = crd_schemas[("sriovnetwork.openshift.io", "v1", "SriovNetworkNodePolicy")]
    spec = {"nicSelector": {"vendor": "15b3", "pfName": ["a"]}}
    assert unknown_fields(spec, schema["properties"]["spec"], "spec") == ["spec.nicSelector.pfName"]


def test_schema_conversion_rejects_bad_int_or_string(crd_schemas):
    _scope, schema = crd_schemas[("sriovnetwork.openshift.io", "v1", "SriovNetworkPoolConfig")]
    converted = to_json_schema(schema)
    good = {"apiVersion": "sriovnetwork.openshift.io/v1", "kind": "SriovNetworkPoolConfig", "metadata": {"name": "w"},
            "spec": {"maxUnavailable": "10%"}}
    jsonschema.validate(good, converted)
    bad = copy.deepcopy(good)
    bad["spec"]["maxUnavailable"] = [1]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, converted)


def _versioned_crd(source, ref, kind):
    from simulator.crds import DEFAULT_CRD_DIR, source_crd_documents

    return next(c for c in source_crd_documents(DEFAULT_CRD_DIR, source, ref) if c["spec"]["names"]["kind"] == kind)


@pytest.mark.parametrize("name,variables", CASES, ids=[c[0] for c in CASES])
def test_objects_fit_the_oldest_supported_operator_versions(name, variables):
    """Rendered for GPU Operator v24.9 (gpudirect_rdma_gpu_operator_version), every object fits the CRDs of the oldest
    supported GPU and Network Operator versions; rendered for the newest, the ClusterPolicy would not."""
    old_gpu = _versioned_crd("gpu-operator", "v24.9.2", "ClusterPolicy")
    old_network = _versioned_crd("network-operator", "v25.1.0", "NicClusterPolicy")
    for entry in rendered(dict(variables, gpudirect_rdma_gpu_operator_version="24.9.2", gpudirect_rdma_network_operator_version="25.1.0")):
        manifest = entry["manifest"]
        crd = {"ClusterPolicy": old_gpu, "NicClusterPolicy": old_network}.get(manifest["kind"])
        if crd:
            assert manifest_unknown_fields(manifest, crd) == [], entry["file"]
    newest = [e["manifest"] for e in rendered(variables) if e["manifest"]["kind"] == "ClusterPolicy"]
    assert manifest_unknown_fields(newest[0], old_gpu) == ["spec.driver.kernelModuleType"]


@pytest.mark.parametrize("version, mode, kind, expected", [
    ("", "dmabuf", "open", {"kernelModuleType": "open"}),
    ("25.3.0", "peermem", "auto", {"kernelModuleType": "auto"}),
    ("24.9.2", "dmabuf", "open", {"useOpenKernelModules": True}),
    ("24.9", "dmabuf", "auto", {"useOpenKernelModules": True}),
    ("v24.9.0", "peermem", "auto", {"useOpenKernelModules": False}),
    ("24.9.2", "peermem", "proprietary", {"useOpenKernelModules": False}),
])
def test_kernel_module_fields_follow_the_gpu_operator_version(version, mode, kind, expected):
    from ansible_collections.gpudirect.openshift.plugins.module_utils.render.operators import kernel_module_fields

    assert kernel_module_fields({"gpu_operator_version": version, "gpu_rdma_mode": mode, "gpu_kernel_module_type": kind}) == expected


def test_unknown_fields_respects_preserved_and_embedded_objects():
    schema = {"type": "object", "properties": {
        "open": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        "map": {"type": "object", "additionalProperties": {"type": "object", "properties": {"a": {"type": "string"}}}},
        "list": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
        "quantity": {"x-kubernetes-int-or-string": True},
    }}
    value = {"open": {"anything": 1}, "map": {"k": {"a": "x", "b": "y"}}, "list": [{"name": "n", "extra": 1}],
             "quantity": "1Gi", "missing": True}
    assert unknown_fields(value, schema) == ["map.k.b", "list[0].extra", "missing"]


@pytest.mark.parametrize("name,variables", CASES, ids=[c[0] for c in CASES])
def test_image_pull_secrets_reach_every_nic_cluster_policy_component(name, variables, crd_schemas):
    manifests = [e["manifest"] for e in rendered(dict(variables, gpudirect_rdma_image_pull_secrets=["mirror-pull"]))
                 if e["manifest"]["kind"] == "NicClusterPolicy"]
    for manifest in manifests:
        spec = manifest["spec"]
        sections = [v for k, v in spec.items() if k != "secondaryNetwork"] + list((spec.get("secondaryNetwork") or {}).values())
        assert sections and all(s["imagePullSecrets"] == ["mirror-pull"] for s in sections)
        _scope, schema = crd_schemas[("mellanox.com", "v1alpha1", "NicClusterPolicy")]
        assert manifest_unknown_fields(manifest, {"spec": {"versions": [{"name": "v1alpha1", "schema": {"openAPIV3Schema": schema}}]}}) == []
    result = render_all(dict(variables, gpudirect_rdma_image_pull_secrets=["Bad Name"]))
    assert any("gpudirect_rdma_image_pull_secrets" in e for e in result["errors"])


@pytest.mark.parametrize("variable, value, message", [
    ("gpudirect_rdma_gpu_operator_version", "latest", "gpudirect_rdma_gpu_operator_version: 'latest' is not a GPU Operator version"),
    ("gpudirect_rdma_network_operator_version", "v25", "gpudirect_rdma_network_operator_version: 'v25' is not a Network Operator version"),
    ("gpudirect_rdma_driver_upgrade_max_parallel", 0, "gpudirect_rdma_driver_upgrade_max_parallel: must be 1 or more"),
])
def test_bad_version_and_parallelism_inputs_name_the_variable(variable, value, message):
    _name, variables = CASES[0]
    result = render_all(dict(variables, **{variable: value}))
    assert result["manifests"] == [] and any(e.startswith(message) for e in result["errors"]), result["errors"]


def test_driver_upgrade_max_parallel_bounds_both_driver_rollouts():
    _name, variables = CASES[0]
    manifests = dict((e["manifest"]["kind"], e["manifest"]) for e in rendered(dict(variables, gpudirect_rdma_driver_upgrade_max_parallel=2)))
    gpu_policy = manifests["ClusterPolicy"]["spec"]["driver"]["upgradePolicy"]
    assert gpu_policy["maxParallelUpgrades"] == 2 and gpu_policy["maxUnavailable"] == 2
    assert manifests["NicClusterPolicy"]["spec"]["ofedDriver"]["upgradePolicy"]["maxParallelUpgrades"] == 2
