# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Supply chain (issue 20 point 6): every default image the collection renders or runs carries a digest, or is on the
documented list of images not pinned yet; digests are accepted wherever an image or version is taken."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import glob
import os
import re

import pytest
import yaml

from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster import node_facts
from ansible_collections.gpudirect.openshift.plugins.module_utils import names
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import releases
from ansible_collections.gpudirect.openshift.plugins.module_utils.render.plan import render_all

from conftest import P, base_variables

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), *([os.pardir] * 5)))
EXAMPLES = sorted(glob.glob(os.path.join(ROOT, "playbooks", "vars", "examples", "*.yml")))
DIGEST = "sha256:" + "ab" * 32


def _repository(reference):
    """registry/path/name of a reference, without tag or digest."""
    name = reference.split("@", 1)[0]
    last = name.rsplit("/", 1)
    if ":" in last[-1]:
        name = name[:len(name) - len(last[-1])] + last[-1].split(":", 1)[0]
    return name


def _unpinned(references):
    return [r for r in references if not names.is_pinned_image(r) and _repository(r) not in releases.UNPINNED_DEFAULT_IMAGES]


def _load(path):
    with open(path) as handle:
        return yaml.safe_load(handle)


def test_examples_are_found():
    assert len(EXAMPLES) >= 6


@pytest.mark.parametrize("path", EXAMPLES, ids=[os.path.basename(p) for p in EXAMPLES])
def test_every_rendered_default_image_of_each_example_is_pinned(path):
    rendered = render_all(_load(path))
    assert rendered["errors"] == []
    images = [entry["image"] for entry in rendered["images"]]
    assert images and _unpinned(images) == []
    # The pinned ones keep their tag for reading: repository/image:tag@sha256:<64 hex>.
    for image in images:
        if names.is_pinned_image(image):
            assert re.match(r"^[^@]+:[A-Za-z0-9_][A-Za-z0-9_.\-]*@sha256:[a-f0-9]{64}$", image), image


@pytest.mark.parametrize("release", sorted(releases.NETWORK_OPERATOR_RELEASES), ids=lambda key: "%d.%d" % key)
def test_every_network_operator_release_pins_its_component_images(release):
    variables = base_variables("shared_device", "infiniband", network_operator_version="%d.%d.0" % release)
    images = [entry["image"] for entry in render_all(variables)["images"]]
    assert len(images) == 3 and _unpinned(images) == []


def test_the_facts_and_verify_images_are_versioned_and_pinned_or_listed():
    facts_default = _load(os.path.join(ROOT, "roles", "hardware_facts", "defaults", "main.yml"))["hardware_facts_image"]
    verify_default = _load(os.path.join(ROOT, "roles", "verify", "defaults", "main.yml"))["verify_image"]
    assert facts_default == node_facts.DEFAULT_IMAGE
    assert names.is_pinned_image(facts_default) and re.search(r"/ubi9/python-312:9\.\d+-\d+@", facts_default)
    assert _unpinned([facts_default, verify_default]) == []
    for reference in (facts_default, verify_default):
        assert names.is_image_reference(reference) and ":" in reference.rsplit("/", 1)[-1], "untagged: %s" % reference


def test_the_not_yet_pinned_images_are_documented():
    with open(os.path.join(ROOT, "docs", "upgrades.md")) as handle:
        text = handle.read()
    for repository in releases.UNPINNED_DEFAULT_IMAGES:
        assert repository in text


@pytest.mark.parametrize("reference", [
    "registry.example.com/ns/image", "registry.example.com:5000/ns/image:1.0", "image@" + DIGEST,
    "registry.example.com/ns/image:1.0@" + DIGEST, "quay.io/a/b-c_d.e:v1.2.3-rc1",
])
def test_image_references_with_tags_and_digests_are_accepted(reference):
    assert names.is_image_reference(reference)


@pytest.mark.parametrize("reference", [
    "", "image@sha256:abc", "image:tag@" + DIGEST + "x", "a b", 'img"x', "img\n", "-img", "image:ta g", "x@y",
])
def test_malformed_image_references_are_refused(reference):
    assert not names.is_image_reference(reference)


def test_digests_are_accepted_in_every_version_input():
    pinned = "v1.5.3@" + DIGEST
    variables = base_variables("shared_device", "infiniband", gpu_driver_version="570.124.06@" + DIGEST,
                               gpu_driver_repository="nvcr.io/nvidia", gpu_driver_image="driver",
                               nfd_operand_image="registry.redhat.io/openshift4/ose-node-feature-discovery-rhel9:v4.16@" + DIGEST,
                               image_overrides={"rdma_shared_device_plugin": {"version": pinned}, "ipoib_cni": {"version": DIGEST}},
                               doca_driver_version=DIGEST)
    rendered = render_all(variables)
    assert rendered["errors"] == []
    images = dict((entry["field"], entry["image"]) for entry in rendered["images"])
    assert images["spec.rdmaSharedDevicePlugin"].endswith("/k8s-rdma-shared-dev-plugin:" + pinned)
    assert images["spec.secondaryNetwork.ipoib"].endswith("/ipoib-cni@" + DIGEST)
    assert images["spec.ofedDriver"].endswith("/doca-driver@" + DIGEST)


def test_the_doca_driver_refuses_tag_and_digest_because_the_operator_appends_the_os():
    variables = base_variables("shared_device", "roce", doca_driver_version="25.04-0.6.1.0-2@" + DIGEST)
    errors = render_all(variables)["errors"]
    assert len(errors) == 1 and errors[0].startswith(P + "doca_driver_version:") and "appends the node's OS" in errors[0]
