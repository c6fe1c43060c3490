"""Testbench of `skid_buffer` (two-entry register slice): every parameter set of its shared test, random valid gaps
and ready drops, bit-exact against the component's Rust model (see tb_common.py)."""

import pytest

from tb_common import check_component, param_sets


@pytest.mark.parametrize("index,params", param_sets("skid_buffer"))
def test_skid_buffer(index, params):
    check_component("skid_buffer", index, params)
