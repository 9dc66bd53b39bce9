# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Misspelt variable names: a name with one of the collection's prefixes that is not a variable the collection
reads, but is close to one, is most likely a typo that would otherwise be ignored without a word (issue 31
point 8). Pure functions; the known names come from the input model (render/input_fields.py FIELDS), the roles' argument
specifications and defaults, and the few play-level variables below."""


import difflib
import re

from ansible_collections.gpudirect.openshift.plugins.module_utils import names
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import input_fields

# The roles: a variable that starts with "<role>_" belongs to that role (their argument specifications name them).
ROLE_PREFIXES = ("diagnostics_", "hardware_facts_", "nfd_", "nvidia_gpu_operator_", "nvidia_network_operator_",
                 "olm_install_", "preflight_", "rdma_", "sriov_network_operator_", "teardown_", "verify_")
PREFIXES = ("gpudirect_",) + ROLE_PREFIXES
USED_NAME = re.compile(r"\b(?:%s)[a-z0-9_]+" % "|".join(PREFIXES))
# Variables that no role specifies and that users set (AWX credentials, the render playbook, site.yml's switches);
# the filter (plugins/filter/variables.py read_roles) adds every prefixed name the roles' tasks and the playbooks use.
PLAY_VARIABLES = (
    "gpudirect_always_converge", "gpudirect_collect_facts", "gpudirect_password", "gpudirect_render_existing",
    "gpudirect_render_result", "gpudirect_render_variable_names", "gpudirect_target_hosts", "gpudirect_username",
    "preflight_compare",
)
# difflib's ratio from which two names count as the same name mistyped: one or two letters off in a name of about
# 20 (``teardown_remove_namespace`` for ``teardown_remove_namespaces`` is 0.98, ``verify_treshold`` 0.97), while two
# real names stay below (``gpudirect_rdma_mtu`` against ``gpudirect_rdma_vfs`` is 0.83).
CUTOFF = 0.86


def rdma_variables():
    """The gpudirect_rdma_* variables of the input model."""
    return [names.variable(field) for field in input_fields.FIELDS]


def known_variables(role_options=()):
    """Every variable name the collection reads: the input model, the given role options, the play variables."""
    return set(rdma_variables()) | set(role_options or ()) | set(PLAY_VARIABLES)


def misspelt(given, known):
    """(name, suggestion) for each given name with one of the collection's prefixes that is not known but close to a
    known name, sorted. Names with another prefix, or close to nothing, are the user's own and are left alone."""
    known = set(known)
    candidates = sorted(known)
    found = []
    for name in sorted(set(given or ())):
        if not isinstance(name, str) or name in known or not name.startswith(PREFIXES):
            continue
        close = difflib.get_close_matches(name, candidates, n=1, cutoff=CUTOFF)
        if close:
            found.append((name, close[0]))
    return found


def misspelt_messages(given, known):
    """One message per misspelt name: what it is, and the name it most likely means."""
    return ["%s is not a variable of gpudirect.openshift and is ignored; did you mean %s?" % pair
            for pair in misspelt(given, known)]


def role_options(argument_specs=(), defaults=()):
    """The option names of parsed roles' meta/argument_specs.yml documents (every entry point), and the names of
    parsed defaults/main.yml and vars/main.yml documents."""
    found = set()
    for document in argument_specs or ():
        for entry in ((document or {}).get("argument_specs") or {}).values():
            found.update((entry or {}).get("options") or {})
    for document in defaults or ():
        found.update(document or {})
    return found


def merged_options(argument_specs=()):
    """One argument specification of every role option, for checking the types of the variables given before any role
    runs: ``required`` dropped (each role still asks for what it needs), the first definition of a name kept."""
    merged = {}
    for document in argument_specs or ():
        for entry in ((document or {}).get("argument_specs") or {}).values():
            for name, spec in ((entry or {}).get("options") or {}).items():
                if name not in merged:
                    merged[name] = {key: value for key, value in (spec or {}).items()
                                    if key not in ("required", "description", "default")}
    return merged
