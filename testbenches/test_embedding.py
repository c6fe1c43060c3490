"""Testbench of `embedding` (table lookup: an unsigned index in, the table's row out, a zero row for
an index past the table): every parameter set of its shared test, random valid gaps and ready
drops, bit-exact against the component's Rust model (see tb_common.py)."""

import pytest

from tb_common import check_component, param_sets


@pytest.mark.parametrize("index,params", param_sets("embedding"))
def test_embedding(index, params):
    check_component("embedding", index, params)
