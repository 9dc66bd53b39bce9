# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Business rules are pure Python functions with fixture tests, never Jinja (issue 37; docs/architecture.md).

Roles, playbooks and templates may pass values, show sentences and branch on simple flags; they may not build lists of
problems, take versions apart or compare them, or decide in a ``when:`` anything beyond a flag, an empty or non-empty
list, or a variable against a literal. Like the JMESPath rule (test_one_definition.py), each check reads the files
as text or YAML, so a new rule written in Jinja fails here with the file and the expression."""

import glob
import os
import re

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TASK_FILES = sorted(glob.glob(os.path.join(ROOT, "roles", "*", "tasks", "*.yml"))
                    + glob.glob(os.path.join(ROOT, "roles", "*", "handlers", "*.yml"))
                    + glob.glob(os.path.join(ROOT, "playbooks", "*.yml")))
JINJA_FILES = sorted(TASK_FILES + glob.glob(os.path.join(ROOT, "roles", "*", "templates", "*.j2"))
                     + glob.glob(os.path.join(ROOT, "roles", "*", "vars", "*.yml"))
                     + glob.glob(os.path.join(ROOT, "roles", "*", "defaults", "*.yml")))
# Rules still in Jinja outside the preflight role, each to move into plugins/module_utils/rules/ (issue 37). An entry
# must still be needed: the test fails once the file no longer breaks the rule, so the list only shrinks.
KNOWN = {
    ("roles/nvidia_gpu_operator/tasks/main.yml", "version"):
        "renders the ClusterPolicy again for a GPU Operator older than nvidia_gpu_operator_kernel_module_type_since",
    ("roles/nvidia_gpu_operator/tasks/main.yml", "when"): "the same version comparison, as the task's condition",
    ("roles/preflight/tasks/cached_facts.yml", "when"):
        "the facts cache holds every selected node (gather_node_hardware counts: from_cache == selected)",
}
EXPRESSION = re.compile(r"\{\{.*?\}\}|\{%.*?%\}", re.S)
VERSION_TAKEN_APART = re.compile(r"regex_replace|regex_search|regex_findall|\bis\s+version\b|version_compare|\bis\s+(?:ansible\.builtin\.)?version\(")
COMPARISON = re.compile(r"(==|!=|<=|>=|<|>)\s*(\S+)")
LITERAL = re.compile(r"""^(['"]).*\1\)*$|^\d+\)*$|^(true|false|none|True|False|None)\)*$""")


def relative(path):
    return os.path.relpath(path, ROOT)


def expressions(path):
    """Every Jinja expression of a file; in YAML files also every conditional (bare Jinja)."""
    with open(path) as handle:
        text = handle.read()
    found = [m.group(0) for m in EXPRESSION.finditer(text)]
    if path.endswith(".yml"):
        found += [condition for _key, condition in conditions(yaml.safe_load(text))]
    return found


def conditions(node, keys=("when", "failed_when", "changed_when", "until", "that")):
    if isinstance(node, dict):
        for key, value in node.items():
            if key in keys and not isinstance(value, dict):
                for condition in value if isinstance(value, list) else [value]:
                    yield key, str(condition)
            else:
                yield from conditions(value, keys)
    elif isinstance(node, list):
        for item in node:
            yield from conditions(item, keys)


def when_rule(condition):
    """The part of a when: condition that is more than a flag, or None. Allowed: flags, `is defined`, `| bool`,
    `not`/`and`/`or`, a list's `| length` (or a count's `| int`) against 0, a value against a literal, `in` a list."""
    text = " ".join(condition.split())
    if re.search(r"\bis\s+(not\s+)?(version|match|search|regex)\b|regex_|version_compare", text):
        return text
    for match in COMPARISON.finditer(text):
        operator, right = match.groups()
        before = text[:match.start()].rstrip()
        if operator in ("==", "!=") and LITERAL.match(right):
            continue
        if re.match(r"^0\)*$", right) and re.search(r"\|\s*(length|int)\s*\)*$", before):
            continue
        return text
    return None


def violations(kind):
    found = {}
    for path in JINJA_FILES:
        name = relative(path)
        if kind == "append":
            hits = [e for e in expressions(path) if ".append(" in e]
        elif kind == "version":
            hits = [e for e in expressions(path) if VERSION_TAKEN_APART.search(e) and re.search(r"version|csv", e, re.I)]
        else:
            if path not in TASK_FILES:
                continue
            with open(path) as handle:
                hits = [c for key, c in conditions(yaml.safe_load(handle), ("when",)) if when_rule(c)]
        if hits:
            found[name] = [" ".join(h.split())[:160] for h in hits]
    return found


def unexplained(kind):
    found = violations(kind)
    known = set(path for path, what in KNOWN if what == kind)
    assert known <= set(found), "no longer needed in KNOWN (the rule moved): %s" % sorted(known - set(found))
    return dict((path, hits) for path, hits in found.items() if path not in known)


def test_no_list_of_problems_is_built_in_jinja():
    assert unexplained("append") == {}, "write the rule in plugins/module_utils/rules/ and return its sentences: %s" % (
        unexplained("append"))


def test_no_version_is_taken_apart_or_compared_in_jinja():
    assert unexplained("version") == {}, "compare versions in plugins/module_utils/rules/: %s" % unexplained("version")


def test_when_conditions_are_flags():
    assert unexplained("when") == {}, "decide in plugins/module_utils/rules/ and branch on its answer: %s" % unexplained("when")


def test_the_check_catches_what_the_preflight_role_used_to_do():
    """The rules moved out of roles/preflight/templates/problems.j2 and tasks/upgrade_plan.yml would fail here."""
    assert when_rule("kube_version is ansible.builtin.version(wanted.minKubeVersion, '<')")
    assert when_rule("preflight_cluster.summary.worker_nodes | default(0) < 1")
    assert when_rule("item.installed_csv != item.upgrade_available")
    assert when_rule("(groups_here | length) > 1")
    assert not when_rule("(gpudirect_rdma_nic_selection | default('manual')) == 'auto'")
    assert not when_rule("preflight_upgrade_plan | length > 0")
    assert not when_rule("not (gpudirect_upgrade_approve | default(false) | bool) or not preflight_upgrade_plan")
    assert VERSION_TAKEN_APART.search("{{ version | regex_replace('^v?(\\\\d+\\\\.\\\\d+).*$', '\\\\1') }}")
