"""Testbench of `fork` (one stream to two consumers): every parameter set of its shared test, random valid gaps
and ready drops, bit-exact against the component's Rust model (see tb_common.py)."""

import pytest

from tb_common import check_component, param_sets


@pytest.mark.parametrize("index,params", param_sets("fork"))
def test_fork(index, params):
    check_component("fork", index, params)
