"""Issue 34 (LOW): name checks accepted a trailing newline, because Python's ``$`` also matches just before a final
"\\n". A newline in a name ends up in text that nodes read (udev rules, CNI JSON, MachineConfig files), so every check
of untrusted text anchors its end with ``\\Z`` (or uses fullmatch)."""

import ast
import pathlib

import pytest

from ansible_collections.gpudirect.openshift.plugins.module_utils import catalogue, vocabulary
from ansible_collections.gpudirect.openshift.plugins.module_utils import names
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import model

ROOT = pathlib.Path(__file__).resolve().parents[3]
# Modules whose regular expressions judge input (variables, facts from pods, catalogue entries). The output parsers
# (perftest, nccl-tests, nvidia-smi, sysfs) work line by line on text they split themselves and are not listed.
VALIDATING_MODULES = [
    "plugins/module_utils/names.py",
    "plugins/module_utils/render/model.py",
    "plugins/module_utils/render/machineconfigs.py",
    "plugins/module_utils/vocabulary.py",
    "plugins/module_utils/catalogue.py",
    "plugins/module_utils/verify/table_numbers.py",
    "plugins/module_utils/cluster/snapshot.py",
]


@pytest.mark.parametrize("path", VALIDATING_MODULES)
def test_no_validator_pattern_ends_with_dollar(path):
    tree = ast.parse((ROOT / path).read_text())
    offenders = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) in ("compile", "match", "search", "fullmatch"):
            first = node.args[0] if node.args else None
            if isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value.endswith("$"):
                offenders.append("line %d: %r" % (node.lineno, first.value))
    assert not offenders, "anchor the end with \\Z, not $ (which matches before a trailing newline): %s" % offenders


@pytest.mark.parametrize("check,good", [
    (names.is_dns1123_label, "gpu-operator"),
    (names.is_dns1123_subdomain, "gpudirect.rdma"),
    (names.is_resource_name, "rdma_shared_device_a"),
    (names.is_resource_prefix, "rdma"),
    (names.is_ifname, "ens8f0np0"),
    (names.is_rdma_device, "mlx5_0"),
    (names.is_label_value, "worker"),
])
def test_name_checks_refuse_a_trailing_newline(check, good):
    assert check(good)
    assert not check(good + "\n")


def test_normalisers_strip_but_do_not_accept_inner_newlines():
    assert vocabulary.normalise_pci_address("0000:0d:00.0") == "0000:0d:00.0"
    assert vocabulary.normalise_pci_address("0000:0d:00.0\nx") is None
    assert vocabulary.hex_id("101b\nx") is None


def test_model_never_keeps_a_newline_in_a_name():
    """The model strips surrounding white space; a newline inside a name is refused, naming the variable."""
    values, _provided, _errors = model.normalise({"gpudirect_rdma_network_namespaces": ["default\n"]})
    assert values["network_namespaces"] == ["default"]
    variables = {"gpudirect_rdma_method": "shared_device", "gpudirect_rdma_fabric": "roce",
                 "gpudirect_rdma_network_namespaces": ["de\nfault"]}
    _model, errors, _warnings = model.build(variables, require_facts=False)
    assert any("network_namespaces" in error and "DNS-1123" in error for error in errors), errors


def test_catalogue_refuses_a_role_with_a_trailing_newline():
    entry = {"role": "fifth\n", "package": "fifth-operator", "namespace": "fifth-operator"}
    with pytest.raises(ValueError, match=r"gpudirect_extra_operators\[0\]\.role"):
        catalogue.entries([entry])
