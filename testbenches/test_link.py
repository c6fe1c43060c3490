"""Testbench of `link` (link sender, link model and receiver in one stream): every parameter set
of its shared test (link narrower than, equal to, wider than and not dividing the beat; latency 1
and more; depth at and below the credit round trip), random valid gaps and ready drops,
bit-exact against the component's Rust model (see tb_common.py)."""

import pytest

from tb_common import check_component, param_sets


@pytest.mark.parametrize("index,params", param_sets("link"))
def test_link(index, params):
    check_component("link", index, params)
