"""Testbench of `masked_softmax` (softmax over a row under a key-padding mask): every parameter set
of its shared test, random keep vectors (one per tensor of MASK_ROWS rows), random valid gaps and
ready drops on both inputs, bit-exact against the component's Rust model (see tb_common.py)."""

import pytest

from tb_common import check_component, param_sets


@pytest.mark.parametrize("index,params", param_sets("masked_softmax"))
def test_masked_softmax(index, params):
    check_component("masked_softmax", index, params)
