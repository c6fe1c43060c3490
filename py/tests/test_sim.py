"""The cocotb-style harness: drive/collect with stalls against the golden model, the Rust
scoreboard, per-cycle port access, concurrent tasks, deadlock reports."""

import numpy as np
import pytest

from mase_rs import MaseError, sim
from mase_rs.sim import SimulationError

RELU = {"DATA_IN_0_PRECISION_0": 8, "DATA_IN_0_TENSOR_SIZE_DIM_0": 8, "DATA_IN_0_PARALLELISM_DIM_0": 2}


def relu():
    return sim.Component.build("relu", RELU)


def test_drive_collect_values_against_the_model():
    dut = relu()
    (x,) = dut.inputs
    (y,) = dut.outputs
    assert x.shape == (8,) and x.lanes == 2
    rng = np.random.default_rng(3)
    data = rng.uniform(-4, 4, size=(20, 8))

    async def test(dut):
        await dut.reset()
        done = dut.data_in_0.drive(data, stall_prob=0.3)
        out = await dut.data_out_0.collect(20, stall_prob=0.3)
        await done
        return out

    out = sim.run(test, dut)
    exp = dut.golden({"data_in_0": data})["data_out_0"]
    assert out.shape == (20, 8) and np.array_equal(out, exp)
    values, codes = x.quantize(data)
    assert np.array_equal(np.maximum(values, 0), out)
    assert np.array_equal(y.last_codes, np.maximum(codes, 0))


def test_scoreboard_reports_mismatches():
    dut = relu()
    stim = sim.stimulus("relu", RELU, rows=6, seed=2)["data_in_0"]
    wrong = dut.golden({"data_in_0": stim}, codes=True)["data_out_0"].copy()
    wrong[2, 3] += 1

    async def test(dut):
        await dut.reset()
        dut.data_in_0.drive(stim, codes=True, stall_prob=0.2)
        dut.data_out_0.expect(wrong, codes=True)
        await dut.data_out_0.collect(6)

    with pytest.raises(SimulationError, match=r"1 output elements differ.*data_out_0\[19\]"):
        sim.run(test, dut)


def test_ports_by_hand_cycle_by_cycle():
    dut = relu()

    async def test(dut):
        await dut.reset()
        dut.data_out_0_ready.value = 1
        # lanes (-3, 5) as 8-bit codes, lane 0 least significant
        dut.data_in_0.value = (5 << 8) | (0x100 - 3)
        dut.data_in_0_valid.value = 1
        seen = None
        for _ in range(10):
            # A beat moves at the rising edge when valid and ready are both high before it.
            taken = dut.data_in_0_valid.value and dut.data_in_0_ready.value
            await dut.cycles(1)
            if taken:
                dut.data_in_0_valid.value = 0
            if dut.data_out_0_valid.value:
                seen = dut.data_out_0.value
                break
        return seen

    assert sim.run(test, dut) == (5 << 8) | 0


def test_concurrent_tasks_and_cycles():
    dut = relu()
    data = np.arange(-16, 16, dtype=np.float64).reshape(4, 8) / 4
    log = []

    async def watcher(dut):
        await dut.cycles(5)
        log.append(dut.cycle)

    async def test(dut):
        await dut.reset()
        sim.start_soon(watcher(dut))
        dut.data_in_0.drive(data)
        out = await dut.data_out_0.collect(4)
        await dut.cycles(10)
        return out

    out = sim.run(test, dut)
    assert log == [5]
    assert np.array_equal(out, np.maximum(data, 0))


def test_deadlock_names_the_stream():
    dut = relu()

    async def test(dut):
        await dut.reset()
        dut.data_in_0.drive(np.zeros((1, 8)))
        await dut.data_out_0.collect(2)

    with pytest.raises(SimulationError, match="deadlock.*data_out_0"):
        sim.run(test, dut)


def test_bad_use_is_a_clear_error():
    dut = relu()
    with pytest.raises(MaseError, match="not a whole number of inferences"):
        dut.data_in_0.drive(np.zeros(5))
    with pytest.raises(MaseError, match="is an output"):
        dut.data_out_0.drive(np.zeros(8))
    with pytest.raises(AttributeError, match="no stream or port `data_in_9`"):
        dut.data_in_9
    with pytest.raises(MaseError, match="has no parameter `NOPE`"):
        sim.Component.build("relu", {"NOPE": 1})
