"""Testbench of `row_select` (a gather of one constant index: the rows of one position pass, the
others are dropped): every parameter set of its shared test, random valid gaps and ready drops,
bit-exact against the component's Rust model (see tb_common.py)."""

import pytest

from tb_common import check_component, param_sets


@pytest.mark.parametrize("index,params", param_sets("row_select"))
def test_row_select(index, params):
    check_component("row_select", index, params)
