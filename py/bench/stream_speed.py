"""Speed of the Python harness on `linear` 64x64 P4x4 (the component's defaults), to compare with
`cargo run --release -- bench component linear --rows ROWS` (its `sim_cycles_per_s`).

Prints simulated cycles per second of a stream-level test (drive/collect, no stalls and 20 %
random stalls, bit-exact against the model through the Rust scoreboard) and of per-cycle port
access (one `await dut.cycles(1)` plus a port read and a write per cycle).

    python py/bench/stream_speed.py [ROWS]
"""

import sys
import time

import numpy as np

from mase_rs import sim


def stream_level(dut, rows, stall):
    stim = sim.stimulus("linear", rows=rows, seed=5)["data_in_0"]
    exp = dut.golden({"data_in_0": stim}, codes=True)["data_out_0"]

    async def test(dut):
        await dut.reset()
        dut.data_in_0.drive(stim, stall_prob=stall, codes=True)
        dut.data_out_0.monitor(stall)
        dut.data_out_0.expect(exp, codes=True)
        t = time.perf_counter()
        out = await dut.data_out_0.collect(rows, codes=True)
        return out, time.perf_counter() - t, dut.cycle

    out, wall, cycles = sim.run(test, dut)
    assert np.array_equal(out, exp)
    return cycles / wall


def per_cycle(dut, n):
    async def test(dut):
        await dut.reset()
        ready = dut.data_out_0_ready
        valid = dut.data_in_0_valid
        t = time.perf_counter()
        for i in range(n):
            valid.value = 0
            ready.value
            await dut.cycles(1)
        return time.perf_counter() - t

    return n / sim.run(test, dut)


def main():
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    dut = sim.Component.build("linear", seed=5, rows=rows)
    print(f"build_s {dut.build_s:.2f} cache_hit {dut.cache_hit}")
    for stall in (0.0, 0.2):
        print(f"stream-level stall {stall}: {stream_level(dut, rows, stall):,.0f} cycles/s")
    print(f"per-cycle access: {per_cycle(dut, 100000):,.0f} cycles/s")


if __name__ == "__main__":
    main()
