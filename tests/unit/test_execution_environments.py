"""Both execution environment definitions build what the tests run: the base image by digest, ansible-core,
ansible-runner and the Python libraries at constraints.txt's versions, kubernetes.core at the tested version; the
released one installs the tarball of galaxy.yml's version. (hack/test.sh release runs ansible-builder create.)"""

import os
import re

import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEFINITIONS = ["execution-environment.yml", "execution-environment-dev.yml"]


def _load(name):
    with open(os.path.join(ROOT, name), encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def _constraints():
    with open(os.path.join(ROOT, "constraints.txt"), encoding="utf-8") as handle:
        pins = (line.split("#")[0].strip() for line in handle)
        return {name.lower(): version for name, version in (p.split("==") for p in pins if "==" in p)}


@pytest.mark.parametrize("name", DEFINITIONS)
def test_pinned_to_what_the_tests_run(name):
    ee, constraints = _load(name), _constraints()
    assert re.fullmatch(r"[^@:]+(:[^@]+)?@sha256:[0-9a-f]{64}", ee["images"]["base_image"]["name"])
    deps = ee["dependencies"]
    pins = [deps["ansible_core"]["package_pip"], deps["ansible_runner"]["package_pip"]] + deps["python"]
    for pin in pins:
        package, version = pin.split("==")
        assert constraints[package.lower()] == version, pin
    (kubernetes_core,) = [c for c in deps["galaxy"]["collections"] if c["name"] == "kubernetes.core"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", kubernetes_core["version"])


def test_same_base_and_pins_in_both():
    released, dev = (_load(name) for name in DEFINITIONS)
    assert released["images"] == dev["images"]
    for key in ("python_interpreter", "ansible_core", "ansible_runner", "python"):
        assert released["dependencies"][key] == dev["dependencies"][key], key


def test_released_one_installs_the_tarball_of_this_version():
    ee, version = _load(DEFINITIONS[0]), _load("galaxy.yml")["version"]
    tarball = "gpudirect-openshift-%s.tar.gz" % version
    assert {"name": "collections/" + tarball, "type": "file"} in ee["dependencies"]["galaxy"]["collections"]
    assert {"src": tarball, "dest": "collections"} in ee["additional_build_files"]


def test_kubernetes_core_is_the_version_the_lanes_test_everywhere_it_is_pinned():
    """The execution environments and the README's offline example pin the kubernetes.core that the newest lane
    (hack/compat_env.sh newest) installs from the newest `ansible` package on PyPI."""
    with open(os.path.join(ROOT, "hack", "compat_env.sh"), encoding="utf-8") as handle:
        text = handle.read()
    newest = text[text.index("  newest)"):]
    tested = re.search(r'KUBERNETES_CORE="(\d+\.\d+\.\d+)"', newest).group(1)
    for name in DEFINITIONS:
        (kubernetes_core,) = [c for c in _load(name)["dependencies"]["galaxy"]["collections"] if c["name"] == "kubernetes.core"]
        assert kubernetes_core["version"] == tested, name
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as handle:
        offline = [line for line in handle if "--offline" in line and "kubernetes-core-" in line]
    assert offline and all("kubernetes-core-%s.tar.gz" % tested in line for line in offline), offline
