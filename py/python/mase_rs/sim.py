"""A cocotb-style harness whose clock runs in Rust.

Tests are coroutines::

    async def test(dut):
        await dut.reset()
        dut.data_in_0.drive(x, stall_prob=0.2)      # background driver (Rust), values quantized
        y = await dut.data_out_0.collect(len(x))    # Python sleeps until n inferences arrived
        await dut.cycles(100)
        dut.data_out_0_ready.value                  # any port, read or written between cycles

    mase_rs.sim.run(test, mase_rs.sim.Design.build("mlp_hw"))

``drive`` queues the leading axis of an array as consecutive inferences on an input stream;
``collect(n)`` returns the next ``n`` inferences of an output stream as one array of the
format's float values (``codes=True``: the integer codes; ``stream.last_codes`` keeps the codes
of the last collect). Drivers (valid gaps), monitors (ready drops, the stream rule), the
scoreboard (``expect``) and the deadlock watchdog are Rust's: between two awaited events Python
does not run. ``dut.golden(...)`` is the golden model (a design's stitched component models, or
a component's bit-exact model).

A stream is harness-owned once it has work (``drive`` / ``monitor`` / ``collect`` /
``expect``); before that its ports keep what the test writes (``dut.data_in_0_valid.value = 1``),
so tests can also drive ports by hand, cycle by cycle (each ``await dut.cycles(1)`` is one
rising edge).
"""

from os import PathLike
from typing import Any, Callable, Coroutine, Dict, Generator, List, Optional, Tuple, Union

import numpy as np

from . import _native
from ._native import MaseError, SimulationError

__all__ = ["Component", "Design", "SimulationError", "Signal", "Stream", "run", "start_soon"]


class _Trigger:
    """Something a test awaits; the scheduler arms it (turns it into a Rust wait) and resumes the
    coroutine with its result once it holds."""

    def __await__(self) -> Generator["_Trigger", Any, Any]:
        return (yield self)

    def arm(self, sim: "_native.NativeSim") -> Tuple:
        raise NotImplementedError

    def holds(self, sim: "_native.NativeSim") -> bool:
        raise NotImplementedError

    def result(self, sim: "_native.NativeSim") -> Any:
        return None


class _Cycles(_Trigger):
    def __init__(self, n: int):
        if n < 0:
            raise MaseError(f"cycles({n}): the count must be >= 0")
        self.n = n
        self.target: Optional[int] = None

    def arm(self, sim):
        if self.target is None:
            self.target = sim.cycle + self.n
        return ("cycle", self.target)

    def holds(self, sim):
        return sim.cycle >= self.target


class _Collect(_Trigger):
    def __init__(self, stream: "Stream", n: int, codes: bool):
        self.stream, self.n, self.codes = stream, n, codes

    def arm(self, sim):
        return ("inferences", self.stream.index, self.n)

    def holds(self, sim):
        return sim.available(self.stream.index) >= self.n

    def result(self, sim):
        values, codes = sim.take(self.stream.index, self.n)
        self.stream.last_codes = codes
        return codes if self.codes else values


class _Drained(_Trigger):
    def __init__(self, stream: "Stream"):
        self.stream = stream

    def arm(self, sim):
        return ("drained", self.stream.index)

    def holds(self, sim):
        return sim.pending(self.stream.index) == 0


class Signal:
    """One port, read or written as an unsigned integer at cycle granularity (``.value``)."""

    __slots__ = ("_sim", "_idx", "name")

    def __init__(self, sim: "_native.NativeSim", name: str):
        self._sim, self.name = sim, name
        self._idx = sim.port_index(name)

    @property
    def value(self) -> int:
        """The port's bits now (after the last rising edge and settle)."""
        return self._sim.peek(self._idx)

    @value.setter
    def value(self, v: int) -> None:
        self._sim.poke(self._idx, int(v))

    def __repr__(self) -> str:
        return f"Signal({self.name!r})"


class Stream:
    """A valid/ready stream of the design: ``drive`` (inputs), ``collect`` / ``monitor`` /
    ``expect`` (outputs), its format (``width``, ``frac``, ``signed``), ``shape`` of one
    inference, and its ports (``value`` = the data port, ``valid``, ``ready``)."""

    def __init__(self, sim: "_native.NativeSim", index: int, info: Dict[str, Any]):
        self._sim, self.index = sim, index
        self.name: str = info["name"]
        self.is_input: bool = info["input"]
        self.shape: Tuple[int, ...] = tuple(info["shape"])
        self.lanes: int = info["lanes"]
        self.width: int = info["width"]
        self.frac: int = info["frac"]
        self.signed: bool = info["signed"]
        self.tensor: str = info["tensor"]
        self.last_codes: Optional[np.ndarray] = None
        self._data = Signal(sim, self.name)
        self.valid = Signal(sim, self.name + "_valid")
        self.ready = Signal(sim, self.name + "_ready")
        self._monitored = False

    @property
    def value(self) -> int:
        """The data port's bits now (all lanes packed, lane 0 least significant)."""
        return self._data.value

    @value.setter
    def value(self, v: int) -> None:
        self._data.value = v

    def drive(self, array: Any, stall_prob: float = 0.0, codes: bool = False) -> _Trigger:
        """Queues the inferences of ``array`` (leading axis; values quantized into the stream's
        format, or integer codes with ``codes=True``) behind anything already queued, offered
        with random valid gaps of probability ``stall_prob``. Returns an awaitable that completes
        when every queued beat has been taken."""
        if not self.is_input:
            raise MaseError(f"stream `{self.name}` is an output; drive an input")
        self._sim.drive(self.index, array, stall_prob, codes)
        return _Drained(self)

    def monitor(self, stall_prob: float = 0.0) -> None:
        """Starts taking beats (ready dropped with probability ``stall_prob`` in a cycle)."""
        if self.is_input:
            raise MaseError(f"stream `{self.name}` is an input; monitor an output")
        self._sim.monitor(self.index, stall_prob)
        self._monitored = True

    def collect(self, n: int, stall_prob: Optional[float] = None, codes: bool = False) -> _Trigger:
        """Awaitable: the next ``n`` inferences as one array ``[n, *shape]`` of float values
        (``codes=True``: int64 codes). Starts the monitor when it is not running (``stall_prob``
        sets its ready drops, default 0)."""
        if stall_prob is not None or not self._monitored:
            self.monitor(stall_prob or 0.0)
        return _Collect(self, n, codes)

    def expect(self, array: Any, codes: bool = False) -> None:
        """Queues expected inferences for the Rust scoreboard: every element received from now
        on is compared with them in order; ``run`` raises on any mismatch."""
        if self.is_input:
            raise MaseError(f"stream `{self.name}` is an input; expect on an output")
        self._sim.expect(self.index, array, codes)

    def quantize(self, array: Any) -> Tuple[np.ndarray, np.ndarray]:
        """``(values, codes)`` of ``array`` in this stream's format."""
        return self._sim.quantize(self.index, array)

    def __repr__(self) -> str:
        kind = "input" if self.is_input else "output"
        return f"Stream({self.name!r}, {kind}, shape={self.shape}, fixed<{self.width},{self.frac}>)"


class _Dut:
    """A built design: streams and ports as attributes, ``reset``, ``cycles``, ``golden``."""

    def __init__(self, sim: "_native.NativeSim"):
        self._native = sim
        self.streams: List[Stream] = [Stream(sim, k, info) for k, info in enumerate(sim.streams())]
        self._by_name = {s.name: s for s in self.streams}
        self._signals: Dict[str, Signal] = {}
        #: Seconds the Verilator build (or cache lookup) took, and whether it was cached.
        self.build_s: float = sim.build_s
        self.cache_hit: bool = sim.cache_hit

    @property
    def inputs(self) -> List[Stream]:
        """Input streams, in port order."""
        return [s for s in self.streams if s.is_input]

    @property
    def outputs(self) -> List[Stream]:
        """Output streams, in port order."""
        return [s for s in self.streams if not s.is_input]

    @property
    def cycle(self) -> int:
        """Cycles since the last reset."""
        return self._native.cycle

    def __getattr__(self, name: str) -> Union[Stream, Signal]:
        if name.startswith("_"):
            raise AttributeError(name)
        return self[name]

    def __getitem__(self, name: str) -> Union[Stream, Signal]:
        """A stream by port name (``data_in_0``) or graph tensor name, else a port as a Signal."""
        if name in self._by_name:
            return self._by_name[name]
        for s in self.streams:
            if s.tensor == name:
                return s
        if name not in self._signals:
            try:
                self._signals[name] = Signal(self._native, name)
            except MaseError:
                raise AttributeError(f"no stream or port `{name}`; ports: {', '.join(self._native.port_names())}") from None
        return self._signals[name]

    async def reset(self) -> None:
        """Holds ``rst`` for 3 cycles with every valid and ready low; clears queued beats,
        received values and expectations; the cycle counter restarts at 0."""
        self._native.reset()
        for s in self.streams:
            s._monitored = False

    def cycles(self, n: int) -> _Trigger:
        """Awaitable: ``n`` rising edges from when it is awaited."""
        return _Cycles(n)

    def golden(self, inputs: Dict[str, Any], codes: bool = False) -> Dict[str, np.ndarray]:
        """The golden model's outputs (float values; ``codes=True``: int64 codes in and out) for
        ``inputs`` by stream or tensor name, each ``[n, *shape]``.

        A whole-model design (with host parts) also takes the model's own inputs (one inference,
        e.g. ``input_ids``, ``attention_mask``, ``token_type_ids``; never codes): the host pre
        part computes the device's inputs, and the result holds the model's outputs by their
        names (e.g. ``logits``) next to the device's output streams (codes with ``codes=True``)."""
        model_inputs = set(self._native.host_inputs())
        if model_inputs and set(inputs) <= model_inputs:
            pre = self.host_pre(inputs)
            # The pre part gives values, so the device takes them as values; ``codes`` picks
            # what the device's outputs are returned as.
            raw = self._native.golden({s.name: pre[s.tensor] for s in self.inputs}, False)
            out = {k: (c if codes else v) for k, (v, c) in raw.items()}
            out.update(self.host_post(pre, {k: v for k, (v, _) in raw.items()}))
            return out
        named = {}
        for k, v in inputs.items():
            named[self[k].name] = v
        out = self._native.golden(named, codes)
        return {k: (c if codes else v) for k, (v, c) in out.items()}

    def host_pre(self, inputs: Dict[str, Any]) -> Dict[str, np.ndarray]:
        """A whole-model design's host pre part on one inference of the model's inputs: every
        value it computes by tensor name (``dut[name]`` is the device input stream of that
        tensor), with the inputs."""
        return self._native.host_pre(inputs)

    def host_post(self, pre: Dict[str, Any], device_outputs: Dict[str, Any]) -> Dict[str, np.ndarray]:
        """A whole-model design's host post part: the model's outputs by name, from the pre
        part's values (``host_pre``) and the device's output values of one inference by stream or
        tensor name."""
        values = dict(pre)
        for k, v in device_outputs.items():
            values[self[k].tensor] = np.asarray(v, dtype=np.float32).reshape(self[k].shape)
        return self._native.host_post(values)

    def mismatches(self) -> Tuple[int, List[Dict[str, Any]]]:
        """Scoreboard mismatches so far: the count and the first ones."""
        return self._native.mismatches()


class Design(_Dut):
    """The top of an emitted project (``emit_verilog_top_transform_pass`` / ``mase_rs.flow``)."""

    @classmethod
    def build(cls, project_dir: Union[str, PathLike], seed: int = 1) -> "Design":
        """Builds (Verilator, cached under ``MASE_CACHE_DIR``) the project's top and loads it;
        refuses a ``top.sv`` that no longer matches the graph kept in the project. ``seed``
        seeds the stall choices."""
        return cls(_native.sim_build_design(project_dir, seed))


class Component(_Dut):
    """One library component (``mase components`` lists them), with its bit-exact model as
    ``golden``. One inference is one row: ``shape`` is the elements of a row in stream order."""

    @classmethod
    def build(
        cls,
        name: str,
        params: Optional[Dict[str, int]] = None,
        memories: Optional[Dict[str, Any]] = None,
        seed: int = 1,
        rows: int = 1,
    ) -> "Component":
        """Builds (cached) component ``name`` with SystemVerilog parameter overrides ``params``.
        Memories (weights, tables) hold ``memories`` (codes, logical order) or the contents of
        the component's own random stimulus of ``rows`` rows and ``seed``."""
        return cls(_native.sim_build_component(name, list((params or {}).items()), memories, seed, rows))

    @property
    def params(self) -> Dict[str, int]:
        """Every parameter, resolved."""
        return dict(self._native.params())

    @property
    def memories(self) -> Dict[str, np.ndarray]:
        """Memory contents of this build (codes, logical order)."""
        return self._native.memories()


def stimulus(name: str, params: Optional[Dict[str, int]] = None, rows: int = 4, seed: int = 1) -> Dict[str, np.ndarray]:
    """Seeded random input codes of a component (its own generator), by stream name."""
    return _native.component_stimulus(name, list((params or {}).items()), rows, seed)


def components() -> List[Dict[str, Any]]:
    """The component registry: name, description, parameters ``(name, default, doc)`` and the
    parameter sets of its shared test."""
    return [
        {"name": n, "description": d, "params": p, "test_params": [dict(t) for t in tests]}
        for n, d, p, tests in _native.component_list()
    ]


class _Task:
    def __init__(self, coro: Coroutine):
        self.coro = coro
        self.trigger: Optional[_Trigger] = None
        self.done = False
        self.value: Any = None


_current: List[List[_Task]] = []


def start_soon(coro: Coroutine) -> None:
    """Runs another coroutine concurrently with the test (inside ``run``)."""
    if not _current:
        raise MaseError("start_soon: no simulation is running (call it from a test run by mase_rs.sim.run)")
    _current[-1].append(_Task(coro))


def _advance(task: _Task, value: Any, sim) -> None:
    """Resumes ``task`` with ``value`` until it awaits a trigger that does not hold yet."""
    while True:
        try:
            trig = task.coro.send(value)
        except StopIteration as stop:
            task.done, task.value = True, stop.value
            return
        if not isinstance(trig, _Trigger):
            raise MaseError(f"a test awaited {trig!r}; await dut.cycles(n), stream.collect(n), drive(...) or dut.reset()")
        trig.arm(sim)
        if trig.holds(sim):
            value = trig.result(sim)
            continue
        task.trigger = trig
        return


def run(test: Union[Callable[[Any], Coroutine], Coroutine], dut: _Dut, check: bool = True) -> Any:
    """Runs the test coroutine (``test(dut)``, or a coroutine object) to completion, with the
    tasks it starts (``start_soon``); returns its result. The clock advances in Rust until the
    next awaited event. With ``check``, any scoreboard mismatch raises ``SimulationError``."""
    sim = dut._native
    main = _Task(test(dut) if callable(test) else test)
    tasks = [main]
    _current.append(tasks)
    try:
        _advance(main, None, sim)
        while not main.done:
            pending = [t for t in tasks if not t.done and t.trigger is not None]
            for t in [t for t in tasks if not t.done and t.trigger is None]:
                _advance(t, None, sim)
            pending = [t for t in tasks if not t.done and t.trigger is not None]
            if main.done:
                break
            sim.run_until([t.trigger.arm(sim) for t in pending])
            for t in pending:
                if t.trigger is not None and t.trigger.holds(sim):
                    trig, t.trigger = t.trigger, None
                    _advance(t, trig.result(sim), sim)
    finally:
        _current.pop()
        for t in tasks:
            if not t.done:
                t.coro.close()
    if check:
        count, first = sim.mismatches()
        if count:
            shown = "; ".join(
                f"{m['stream']}[{m['index']}] (beat {m['beat']}, lane {m['lane']}) at cycle {m['cycle']}: expected {m['expected']}, got {m['actual']}"
                for m in first[:5]
            )
            raise SimulationError(f"{count} output elements differ from the expectation; first: {shown}")
    return main.value
