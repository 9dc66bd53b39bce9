# -*- coding: utf-8 -*-
# Copyright (c) 2026 gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one definition of a table cell's number that the perftest and nccl-tests parsers share."""

import pytest

from ansible_collections.gpudirect.openshift.plugins.module_utils.verify import table_numbers as tt


@pytest.mark.parametrize("token,kwargs,value", [("52.5", {}, 52.5), ("0", {}, 0.0), ("1e3", {}, 1000.0), ("65536", {"whole": True}, 65536),
                                                ("-1", {"whole": True, "signed": True}, -1)])
def test_numbers(token, kwargs, value):
    assert tt.cell_number(token, **kwargs) == value


@pytest.mark.parametrize("token,kwargs,problem", [("52.5x", {}, tt.NOT_A_NUMBER), ("nan", {}, tt.NOT_FINITE), ("inf", {}, tt.NOT_FINITE),
                                                  ("-0.5", {}, tt.NEGATIVE), ("5.0", {"whole": True}, tt.NOT_WHOLE),
                                                  ("-1", {"whole": True}, tt.NOT_WHOLE), ("+5", {"whole": True}, tt.NOT_WHOLE),
                                                  ("1" * 21, {"whole": True}, tt.NOT_WHOLE)])
def test_garbage_is_refused_with_the_reason(token, kwargs, problem):
    with pytest.raises(tt.CellError) as caught:
        tt.cell_number(token, **kwargs)
    assert caught.value.problem == problem and caught.value.token == token and problem in str(caught.value)
