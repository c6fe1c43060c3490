"""Testbench of `linear` (fully connected layer y = x W^T + b with ROM weights): every parameter set of its shared test, random valid gaps
and ready drops, bit-exact against the component's Rust model (see tb_common.py)."""

import pytest

from tb_common import check_component, param_sets


@pytest.mark.parametrize("index,params", param_sets("linear"))
def test_linear(index, params):
    check_component("linear", index, params)
