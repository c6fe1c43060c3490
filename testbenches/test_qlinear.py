"""Testbench of `qlinear` (a linear layer on integer codes with real scales: zero points, exact
sum, per-channel requantisation): every parameter set of its shared test, random valid gaps and
ready drops, bit-exact against the component's Rust model (see tb_common.py)."""

import pytest

from tb_common import check_component, param_sets


@pytest.mark.parametrize("index,params", param_sets("qlinear"))
def test_qlinear(index, params):
    check_component("qlinear", index, params)
