"""Testbench of `add` (element-wise sum of two streams): every parameter set of its shared test, random valid gaps
and ready drops, bit-exact against the component's Rust model (see tb_common.py)."""

import pytest

from tb_common import check_component, param_sets


@pytest.mark.parametrize("index,params", param_sets("add"))
def test_add(index, params):
    check_component("add", index, params)
