# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The install plan (catalogue.install_plan): the order respects every dependency, a cycle is refused naming the
operators in it, and site.yml imports the roles in an order that respects INSTALL_AFTER."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import itertools
import os

import pytest
import yaml

from ansible_collections.gpudirect.openshift.plugins.module_utils import catalogue

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
SITE_STEPS = [entry["role"] for entry in catalogue.OPERATORS] + ["rdma"]
OPERATOR_ROLES = [entry["role"] for entry in catalogue.OPERATORS]


def respects(order, after):
    position = dict((role, index) for index, role in enumerate(order))
    return [(role, need) for role, needs in after.items() for need in needs if position[need] > position[role]]


def test_the_catalogue_plan_orders_every_edge_and_subscribes_every_operator_together():
    plan = catalogue.install_plan(SITE_STEPS, operators=OPERATOR_ROLES)
    assert respects(plan["order"], catalogue.INSTALL_AFTER) == []
    assert sorted(plan["order"]) == sorted(SITE_STEPS)
    assert plan["subscribe_together"] == ["nfd", "sriov_network_operator", "nvidia_network_operator", "nvidia_gpu_operator"]
    # The edges the chapter needs (NFD labels before the driver policies, NIC driver before GPU driver, SR-IOV
    # operator before its node policies) are data, not an accident of the listing.
    assert "nfd" in plan["after"]["nvidia_network_operator"] and "nfd" in plan["after"]["nvidia_gpu_operator"]
    assert "nvidia_network_operator" in plan["after"]["nvidia_gpu_operator"]
    assert "sriov_network_operator" in plan["after"]["rdma"]


def test_sequential_subscribes_nothing_ahead_and_keeps_the_same_order():
    overlapped = catalogue.install_plan(SITE_STEPS, operators=OPERATOR_ROLES)
    sequential = catalogue.install_plan(SITE_STEPS, order="sequential", operators=OPERATOR_ROLES)
    assert sequential["subscribe_together"] == []
    assert sequential["order"] == overlapped["order"]


@pytest.mark.parametrize("listing", list(itertools.permutations(SITE_STEPS)))
def test_any_listing_gives_an_order_that_respects_every_edge(listing):
    plan = catalogue.install_plan(listing)
    assert respects(plan["order"], catalogue.INSTALL_AFTER) == []


def test_independent_roles_keep_their_listed_order():
    assert catalogue.install_plan(["b", "a", "c"], after={"c": ["a"]})["order"] == ["b", "a", "c"]
    # c waits for a, then comes first again among those ready.
    assert catalogue.install_plan(["c", "a", "b"], after={"c": ["a"]})["order"] == ["a", "c", "b"]


def test_a_cycle_is_refused_naming_the_operators_in_it():
    after = dict(catalogue.INSTALL_AFTER, nfd=("nvidia_gpu_operator",))
    with pytest.raises(ValueError) as err:
        catalogue.install_plan(SITE_STEPS, after=after)
    message = str(err.value)
    assert "cycle" in message
    for role in ("nfd", "nvidia_gpu_operator"):
        assert role in message
    assert "sriov_network_operator" not in message


def test_a_role_after_itself_is_a_cycle():
    with pytest.raises(ValueError, match="cycle among a, a"):
        catalogue.install_plan(["a", "b"], after={"a": ["a"]})


def test_a_dependency_on_a_missing_role_and_an_unknown_order_are_refused():
    with pytest.raises(ValueError, match="nfd comes after nope"):
        catalogue.install_plan(["nfd"], after={"nfd": ["nope"]})
    with pytest.raises(ValueError, match="gpudirect_install_order: 'parallel'"):
        catalogue.install_plan(SITE_STEPS, order="parallel")


def _site_role_order():
    with open(os.path.join(ROOT, "playbooks", "site.yml")) as handle:
        play = yaml.safe_load(handle)[0]
    roles = []

    def walk(tasks):
        for task in tasks:
            walk(task.get("block") or [])
            role = (task.get("ansible.builtin.import_role") or {})
            name = (role.get("name") or "").replace("gpudirect.openshift.", "")
            if name in SITE_STEPS and not role.get("tasks_from") and name not in roles:
                roles.append(name)
    walk(play["tasks"])
    return roles


def test_site_yml_imports_the_roles_in_an_order_that_respects_every_dependency():
    order = _site_role_order()
    assert sorted(order) == sorted(SITE_STEPS), order
    assert respects(order, catalogue.INSTALL_AFTER) == []


def test_subscribe_together_takes_the_extra_operators_and_nothing_under_sequential():
    extra = [{"role": "fake_operator", "package": "fake-operator", "namespace": "fake-operator"}]
    operators = catalogue.resolve({}, extra)
    together = catalogue.subscribe_together(operators)
    assert [o["role"] for o in together] == OPERATOR_ROLES + ["fake_operator"]
    assert together[0]["namespace"] == "openshift-nfd" and together[-1]["package"] == "fake-operator"
    assert catalogue.subscribe_together(operators, "sequential") == []
