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


def unknown_fields(value, schema, path=""):
    """Paths the API server would prune: fields not declared where unknown fields are not preserved."""
    if schema.get("x-kubernetes-preserve-unknown-fields"):
        return []
    found = []
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        for key, item in value.items():
            where = "%s.%s" % (path, key) if path else key
            if key in properties:
                found.extend(unknown_fields(item, properties[key], where))
            elif isinstance(additional, dict):
                found.extend(unknown_fields(item, additional, where))
            elif additional is True:
                continue
            else:
                found.append(where)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            found.extend(unknown_fields(item, schema["items"], "%s[%d]" % (path, index)))
    return found


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
            assert ipam["type"] == "whereabouts" and ipam["range"] == "192.168.3.225/28"
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
