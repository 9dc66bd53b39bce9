# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tests/configurations.py, the one definition of the configurations every test names: what it reads from the example
files' names is what the files hold and what the renderer numbers them."""

import yaml

from ansible_collections.gpudirect.openshift.plugins.module_utils.render.rdma import MATRIX
from ansible_collections.gpudirect.openshift.tests.configurations import CONFIGURATIONS, EXAMPLE_FILES, METHOD_FABRICS, NUMBERED, example_path


def test_each_numbered_example_holds_the_configuration_its_name_says():
    assert [number for number, _method, _fabric, _name in NUMBERED] == list(range(1, len(MATRIX) + 1))
    assert sorted(METHOD_FABRICS) == sorted(MATRIX)
    for number, method, fabric, name in NUMBERED:
        with open(example_path(name), encoding="utf-8") as handle:
            variables = yaml.safe_load(handle)
        assert (variables["gpudirect_rdma_method"], variables["gpudirect_rdma_fabric"]) == (method, fabric), name
        assert MATRIX[(method, fabric)].number == number, name
        assert example_path("%s/%s" % (method, fabric)) == example_path(name)
    assert list(CONFIGURATIONS.values()) == [name for _n, _m, _f, name in NUMBERED]
    assert set(CONFIGURATIONS.values()) < set(EXAMPLE_FILES)  # the examples also hold variants without a number
