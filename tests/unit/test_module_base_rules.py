# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Two rules of issue 37, enforced on the source of plugins/ with ``ast`` (as test_import_layers.py does for imports).

1. Every module that imports from module_utils/cluster is a ``ClusterModule`` (cluster/module_base.py): it makes no
   AnsibleModule itself, never calls ``connect``, and holds no try/except around cluster work (the base's ``run``
   fails the task, with the module's own handlers).
2. module_utils takes explicit arguments: no function or method there has a parameter named ``params`` or reads an
   attribute ``.params`` (a module's option dictionary), so option names do not leak below the modules.

Each test reads the files next to this one (ROOT is two folders up), so it can be run on another checkout's plugins/
by copying this file into that checkout's tests/unit/.
"""

import ast
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PLUGINS = os.path.join(ROOT, "plugins")
CLUSTER = "ansible_collections.gpudirect.openshift.plugins.module_utils.cluster"
BASE = CLUSTER + ".module_base"
# What the base builds and calls for a module: a module that names one of these goes around it.
AROUND_THE_BASE = {"AnsibleModule", "AnsibleK8SModule", "connect", "get_api_client", "check_connection", "ClusterClient"}
# Errors of cluster work: catching one (or everything) in a module is failing without the base.
CLUSTER_ERRORS = {"Exception", "BaseException", "CoreException", "ClusterError", "ApiException", "WaitFailed",
                  "ResourceTimeout"}


def _files(folder):
    base = os.path.join(PLUGINS, folder)
    return sorted(os.path.relpath(os.path.join(directory, name), ROOT)
                  for directory, _dirs, names in os.walk(base) for name in names if name.endswith(".py"))


def _tree(path):
    with open(os.path.join(ROOT, path)) as handle:
        return ast.parse(handle.read(), path)


def _imported_from(tree):
    """{dotted module: [names imported from it]} of every ``from x import y`` in the file."""
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.setdefault(node.module, []).extend(alias.name for alias in node.names)
    return found


def cluster_modules():
    return [path for path in _files("modules")
            if any(name == CLUSTER or name.startswith(CLUSTER + ".") for name in _imported_from(_tree(path)))]


def _caught(handler):
    """The names of the exception classes an except clause catches; {"Exception"} for a bare except."""
    if handler.type is None:
        return {"Exception"}
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return {t.attr if isinstance(t, ast.Attribute) else getattr(t, "id", "") for t in types}


def _touches_the_cluster(nodes):
    for node in nodes:
        for inner in ast.walk(node):
            if isinstance(inner, ast.Attribute) and inner.attr == "cluster" or isinstance(inner, ast.Name) and inner.id == "cluster":
                return True
    return False


def base_problems(path):
    """Why the module at ``path`` goes around ClusterModule: [(line, what)]."""
    tree = _tree(path)
    problems = []
    if "ClusterModule" not in _imported_from(tree).get(BASE, []):
        problems.append((1, "does not import ClusterModule from %s" % BASE))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            problems.extend((node.lineno, "imports %s" % alias.name) for alias in node.names if alias.name in AROUND_THE_BASE)
        elif isinstance(node, ast.Call):
            called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if called in AROUND_THE_BASE:
                problems.append((node.lineno, "calls %s()" % called))
        elif isinstance(node, ast.Try):
            caught = set().union(*[_caught(handler) for handler in node.handlers]) if node.handlers else set()
            if caught & CLUSTER_ERRORS:
                problems.append((node.lineno, "catches %s" % ", ".join(sorted(caught & CLUSTER_ERRORS))))
            elif node.handlers and _touches_the_cluster(node.body):
                problems.append((node.lineno, "wraps cluster work in try/except"))
    return problems


def params_problems(path):
    """Where a function of module_utils takes ``params`` or reads ``.params``: [(line, what)]."""
    problems = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            arguments = node.args
            names = [a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs]
            names += [a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None]
            if "params" in names:
                problems.append((node.lineno, "%s takes a parameter named params" % getattr(node, "name", "a lambda")))
        elif isinstance(node, ast.Attribute) and node.attr == "params":
            problems.append((node.lineno, "reads .params"))
    return problems


def test_the_cluster_modules_are_found():
    # A rule over nothing proves nothing: the modules that talk to the cluster (not the renderer and the node reader).
    found = set(os.path.basename(path) for path in cluster_modules())
    assert {"apply_manifests.py", "olm_operator.py", "collect_diagnostics.py", "plan_status.py"} <= found
    assert not {"gpudirect_manifests.py", "gpu_nic_facts.py"} & found


@pytest.mark.parametrize("path", cluster_modules())
def test_every_cluster_module_uses_the_base(path):
    assert base_problems(path) == []


# The base is where a module's options are read (AnsibleModule.params) and handed on as arguments.
OPTIONS_READER = os.path.join("plugins", "module_utils", "cluster", "module_base.py")


@pytest.mark.parametrize("path", [path for path in _files("module_utils") if path != OPTIONS_READER])
def test_module_utils_takes_explicit_arguments_not_params(path):
    assert params_problems(path) == []


def test_the_rules_see_what_they_forbid(tmp_path):
    """Each check finds the patterns issue 37 removed (as written on main before it)."""
    module = tmp_path / "module.py"
    module.write_text(
        "from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.connection import connect\n"
        "def main():\n"
        "    module = AnsibleK8SModule(argument_spec={})\n"
        "    try:\n"
        "        cluster = connect(module)\n"
        "    except CoreException as exc:\n"
        "        module.fail_from_exception(exc)\n"
        "    try:\n"
        "        module.cluster.get()\n"
        "    except (IOError, OSError):\n"
        "        pass\n")
    found = sorted(what for _line, what in base_problems(str(module)))
    assert found == ["calls AnsibleK8SModule()", "calls connect()", "catches CoreException",
                     "does not import ClusterModule from %s" % BASE, "imports connect", "wraps cluster work in try/except"]
    helper = tmp_path / "helper.py"
    helper.write_text("class Run:\n    def __init__(self, cluster, params):\n        self.timeout = module.params['timeout']\n")
    assert sorted(what for _line, what in params_problems(str(helper))) == ["__init__ takes a parameter named params",
                                                                            "reads .params"]
