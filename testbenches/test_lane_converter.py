"""Testbench of `lane_converter` (lanes-per-beat conversion): every parameter set of its shared test, random valid gaps
and ready drops, bit-exact against the component's Rust model (see tb_common.py)."""

import pytest

from tb_common import check_component, param_sets


@pytest.mark.parametrize("index,params", param_sets("lane_converter"))
def test_lane_converter(index, params):
    check_component("lane_converter", index, params)
