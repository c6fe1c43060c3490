"""Shared pieces of the component testbenches (`test_<component>.py`).

Each testbench builds its component for every parameter set of the component's shared test
(`test_params`), streams seeded random rows with random valid gaps and ready drops, and holds
every output element to the component's bit-exact Rust model, through the Rust scoreboard
(`expect`) and by comparing the collected codes. Rows and seeds are those of
`sim/tests/components.rs`, so the builds (parameters and memory contents) are the same and share
the Verilator cache.
"""

import numpy as np

from mase_rs import sim

#: Rows per instance, as the Rust shared test.
ROWS = 12


def param_sets(name):
    """`(index, params)` of every parameter set of the component's shared test."""
    for c in sim.components():
        if c["name"] == name:
            return list(enumerate(c["test_params"]))
    raise KeyError(name)


async def stream_rows(dut, stim, expected, stall_prob):
    """Drives every input (codes), collects every output with back-pressure; returns the codes."""
    await dut.reset()
    for s in dut.inputs:
        s.drive(stim[s.name], stall_prob=stall_prob, codes=True)
    for s in dut.outputs:
        s.monitor(stall_prob)
        s.expect(expected[s.name], codes=True)
    got = {}
    for s in dut.outputs:
        got[s.name] = await s.collect(len(expected[s.name]), codes=True)
    return got


def check_component(name, index, params, stall_prob=0.3):
    """One instance: random stimulus, random stalls, bit-exact against the model."""
    seed = 1000 * index + 7
    dut = sim.Component.build(name, params, seed=seed, rows=ROWS)
    stim = sim.stimulus(name, params, rows=ROWS, seed=seed)
    expected = dut.golden(stim, codes=True)
    assert expected and all(len(v) > 0 for v in expected.values()), f"{name}: the model produced no rows"
    got = sim.run(lambda d: stream_rows(d, stim, expected, stall_prob), dut)
    for k, exp in expected.items():
        assert got[k].shape == exp.shape, f"{name} {params}: stream {k}: shape {got[k].shape} != {exp.shape}"
        bad = np.flatnonzero(got[k].ravel() != exp.ravel())
        assert bad.size == 0, f"{name} {params}: stream {k}: {bad.size} elements differ, first at {bad[0]}"
