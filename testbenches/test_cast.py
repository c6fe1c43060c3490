"""Testbench of `cast` (fixed-point format conversion (every rounding and overflow mode)): every parameter set of its shared test, random valid gaps
and ready drops, bit-exact against the component's Rust model (see tb_common.py)."""

import pytest

from tb_common import check_component, param_sets


@pytest.mark.parametrize("index,params", param_sets("cast"))
def test_cast(index, params):
    check_component("cast", index, params)
