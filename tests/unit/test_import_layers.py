# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The layering of plugins/ (docs/architecture.md, docs/modules-design.md), enforced on the import statements.

Every import under plugins/ is read with ``ast`` (module level, inside functions and try blocks, absolute and
relative) and resolved to a dotted name; each rule below names the files it covers and the imports they must not
make. A new import across a layer fails here with the file, the line and the import.
"""

import ast
import functools
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PLUGINS = os.path.join(ROOT, "plugins")
COLLECTION = "ansible_collections.gpudirect.openshift.plugins"
MODULE_UTILS = COLLECTION + ".module_utils"

# What talks to the API: the Kubernetes client, its HTTP library and kubernetes.core's module_utils.
API_CLIENTS = ("kubernetes", "urllib3", "ansible_collections.kubernetes.core")
CLUSTER = MODULE_UTILS + ".cluster"
RENDER = MODULE_UTILS + ".render"
HARDWARE = MODULE_UTILS + ".hardware"
RULES = MODULE_UTILS + ".rules"
VERIFY = MODULE_UTILS + ".verify"
REPORTS = MODULE_UTILS + ".reports"
# The shared vocabulary that every layer may import: standard library and each other only.
SHARED = tuple(MODULE_UTILS + "." + name for name in ("names", "vocabulary", "catalogue"))


def python_files(folder=""):
    base = os.path.join(PLUGINS, folder)
    if base.endswith(".py"):
        return [os.path.relpath(base, ROOT)]
    found = []
    for directory, _dirs, files in os.walk(base):
        found.extend(os.path.relpath(os.path.join(directory, name), ROOT) for name in files if name.endswith(".py"))
    return sorted(found)


def module_name(path):
    """The dotted name a file of plugins/ is imported as (a package's __init__.py is the package)."""
    parts = os.path.splitext(path)[0].split(os.sep)[1:]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join([COLLECTION] + parts)


@functools.lru_cache(maxsize=None)
def imports(path):
    """[(line, dotted name)] of every import in ``path``; ``from x import y`` gives x.y (y may be a module or a name
    in x: either way it lies under x for the rules)."""
    with open(os.path.join(ROOT, path)) as handle:
        tree = ast.parse(handle.read(), path)
    package = module_name(path).rsplit(".", 0 if path.endswith("__init__.py") else 1)[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            found.extend((node.lineno, base if alias.name == "*" else "%s.%s" % (base, alias.name)) for alias in node.names)
    return tuple(found)


def under(name, prefixes):
    return any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)


def offenders(files, forbidden, allowed=()):
    """'file:line imports name' for each import of ``files`` under one of ``forbidden`` and not under ``allowed``."""
    return sorted(set("%s:%d imports %s" % (path, line, name) for path in files for line, name in imports(path)
                      if under(name, forbidden) and not under(name, allowed)))


def standard_library(name):
    return name.split(".")[0] in sys.stdlib_module_names or name == "__future__"


RULES_TABLE = {
    # Hardware readers are standard library only: the collector runs alone in a pod (docs/architecture.md).
    # Run alone as a script, the collector imports its siblings by their bare names.
    "hardware readers import nothing but the standard library and hardware/": (
        python_files("module_utils/hardware"), None,
        (HARDWARE,) + tuple(module_name(f).rsplit(".", 1)[1] for f in python_files("module_utils/hardware"))),
    "renderers import no cluster layer and no API client": (
        python_files("module_utils/render"), (CLUSTER,) + API_CLIENTS, ()),
    "rules import no cluster layer and no API client": (
        python_files("module_utils/rules"), (CLUSTER,) + API_CLIENTS, ()),
    "verification logic imports no cluster layer, no report writer and no API client": (
        python_files("module_utils/verify"), (CLUSTER, REPORTS) + API_CLIENTS, ()),
    "report writers import no cluster layer, no renderer and no API client": (
        python_files("module_utils/reports"), (CLUSTER, RENDER) + API_CLIENTS, ()),
    "the cluster layer imports no renderer": (
        python_files("module_utils/cluster"), (RENDER,), ()),
    "the shared vocabulary imports no layer": (
        [f for f in python_files("module_utils") if module_name(f) in SHARED], (MODULE_UTILS,), SHARED),
    "only the cluster layer imports an API client (module_utils)": (
        [f for f in python_files("module_utils") if not module_name(f).startswith(CLUSTER + ".")], API_CLIENTS, ()),
    "nothing under plugins/ imports the simulator": (python_files(), ("simulator",), ()),
}


@pytest.mark.parametrize("rule", sorted(RULES_TABLE))
def test_layer_rule(rule):
    files, forbidden, allowed = RULES_TABLE[rule]
    assert files, "the rule covers no file: %s" % rule
    if forbidden is None:  # standard library plus ``allowed`` only
        bad = sorted("%s:%d imports %s" % (path, line, name) for path in files for line, name in imports(path)
                     if not standard_library(name) and not under(name, allowed))
    else:
        bad = offenders(files, forbidden, allowed)
    assert bad == [], "%s:\n%s" % (rule, "\n".join(bad))


def test_the_walker_sees_absolute_relative_and_nested_imports(tmp_path, monkeypatch):
    """The rules above hold only if every kind of import is seen: a file with each kind is read back."""
    folder = tmp_path / "plugins" / "module_utils" / "render"
    folder.mkdir(parents=True)
    (folder / "sample.py").write_text(
        "from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster import client\n"
        "from ..cluster.waiter import wait_for\n"
        "def later():\n"
        "    try:\n"
        "        import kubernetes.dynamic\n"
        "    except ImportError:\n"
        "        from simulator import SimulatedCluster\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", str(tmp_path))
    found = [name for _line, name in imports(os.path.join("plugins", "module_utils", "render", "sample.py"))]
    assert CLUSTER + ".client" in found
    assert CLUSTER + ".waiter.wait_for" in found
    assert "kubernetes.dynamic" in found and "simulator.SimulatedCluster" in found
    sample = os.path.join("plugins", "module_utils", "render", "sample.py")
    assert offenders([sample], (CLUSTER,)) == ["%s:1 imports %s.client" % (sample, CLUSTER), "%s:2 imports %s.waiter.wait_for" % (sample, CLUSTER)]
