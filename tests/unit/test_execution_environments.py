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
