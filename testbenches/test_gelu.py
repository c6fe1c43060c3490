"""Testbench of `gelu` (GELU by table lookup): every parameter set of its shared test, random valid gaps
and ready drops, bit-exact against the component's Rust model (see tb_common.py)."""

import pytest

from tb_common import check_component, param_sets


@pytest.mark.parametrize("index,params", param_sets("gelu"))
def test_gelu(index, params):
    check_component("gelu", index, params)
