"""Misspelt variable names (issue 31 point 8): a name with one of the collection's prefixes, close to a variable the
collection reads, gets a "did you mean"; the collection's own names, documented or used, never do."""

import glob
import os
import re

from ansible_collections.gpudirect.openshift.plugins.module_utils import variable_names
from ansible_collections.gpudirect.openshift.plugins.filter.variables import misspelt_variables, read_roles, role_argument_spec

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
ROLES = os.path.join(ROOT, "roles")


def test_a_misspelt_name_of_every_kind_gets_the_name_it_means():
    messages = misspelt_variables(["teardown_remove_namespace", "gpudirect_rmda_method", "verify_treshold",
                                   "gpudirect_rdma_nic_interface", "hardware_facts_timout"], ROLES)
    assert messages == [
        "gpudirect_rdma_nic_interface is not a variable of gpudirect.openshift and is ignored; did you mean "
        "gpudirect_rdma_nic_interfaces?",
        "gpudirect_rmda_method is not a variable of gpudirect.openshift and is ignored; did you mean gpudirect_rdma_method?",
        "hardware_facts_timout is not a variable of gpudirect.openshift and is ignored; did you mean hardware_facts_timeout?",
        "teardown_remove_namespace is not a variable of gpudirect.openshift and is ignored; did you mean "
        "teardown_remove_namespaces?",
        "verify_treshold is not a variable of gpudirect.openshift and is ignored; did you mean verify_threshold?",
    ]


def test_known_names_other_prefixes_and_far_names_are_left_alone():
    assert misspelt_variables(["teardown_remove_namespaces", "gpudirect_rdma_method", "my_teardown_flag",
                               "verify_something_entirely_different", "team_namespace"], ROLES) == []


def test_no_name_the_collection_documents_or_uses_is_taken_for_a_typo():
    """Every prefixed name in the variable documentation, the role READMEs, the playbooks, the roles and the shipped
    variables files is either known or close to nothing: a correct run never stops on the collection's own names."""
    pages = ("input-model.md", "teardown.md", "verify.md", "node-groups.md", "many-clusters.md", "hardware-facts-role.md",
             "upgrades.md")
    sources = ([os.path.join(ROOT, "docs", page) for page in pages]
               + glob.glob(os.path.join(ROOT, "roles", "*", "README.md"))
               + glob.glob(os.path.join(ROOT, "playbooks", "**", "*.yml"), recursive=True)
               + glob.glob(os.path.join(ROOT, "roles", "**", "*.yml"), recursive=True))
    # Keyword arguments of a Jinja call (name=value) are not variables.
    name = re.compile(variable_names.USED_NAME.pattern + r"(?!=)\b(?!=)")
    used = set()
    for path in sources:
        with open(path, encoding="utf-8") as stream:
            used.update(found for found in name.findall(stream.read()) if not found.endswith("_"))
    used.discard("gpudirect_rdma")  # the prefix, in prose
    argument_specs, defaults = read_roles(ROLES)
    known = variable_names.known_variables(variable_names.role_options(argument_specs, defaults))
    assert len(used) > 200
    assert variable_names.misspelt(used, known) == []


def test_the_merged_specification_has_every_role_option_without_required_or_defaults():
    merged = role_argument_spec(ROLES)
    assert merged["teardown_remove_namespaces"] == {"type": "bool"}
    assert merged["preflight_show_cluster_info"] == {"type": "bool"}
    assert not [name for name, spec in merged.items() if "required" in spec or "default" in spec]
    argument_specs, _defaults = read_roles(ROLES)
    assert set(merged) == set(variable_names.role_options(argument_specs, []))
    assert re.match(r"^\w+$", "".join(merged))
