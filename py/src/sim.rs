//! The native half of `mase_rs.sim`: a Verilated design (an emitted project's top or one library
//! component) behind [`mase_sim::harness::Stepper`], with each stream's element format and
//! per-inference shape, value ↔ code conversion and the golden model. The Python half
//! (`python/mase_rs/sim.py`) holds the coroutine scheduler and the cocotb-style objects.

use std::path::PathBuf;

use mase_hwlib::{Component, Direction, Params, Stimulus, StreamValues};
use mase_ir::fixed::{from_f64, to_f64, FixedFormat};
use mase_sim::harness::{Stepper, Wait};
use mase_sim::{Model, Project};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::convert::{f64_array, i64_array, i64_from_py, tensor_from_py, to_py};
use crate::error::{mase_err, sim_err, IntoPy};

/// What the golden model of a simulation is.
enum Golden {
    /// An emitted project: the design executed with every instance's model.
    Design(Box<Project>),
    /// One library component with its parameters and memory contents.
    Component(&'static dyn Component, Params, StreamValues),
}

/// One stream as the front end sees it.
struct StreamInfo {
    /// Port name.
    name: String,
    /// Input or output.
    input: bool,
    /// Element format.
    format: FixedFormat,
    /// Shape of one inference (a design port's tensor; a component's row).
    shape: Vec<usize>,
    /// Elements per beat.
    lanes: usize,
    /// The graph tensor it carries (designs), else the port name.
    tensor: String,
}

impl StreamInfo {
    fn numel(&self) -> usize {
        self.shape.iter().product()
    }
}

/// A built, loaded design with a steppable harness.
#[pyclass(name = "NativeSim", module = "mase_rs._native", unsendable)]
pub struct NativeSim {
    stepper: Stepper,
    streams: Vec<StreamInfo>,
    golden: Golden,
    /// Seconds the build (or the cache lookup) took.
    #[pyo3(get)]
    build_s: f64,
    /// Whether the build came from the cache.
    #[pyo3(get)]
    cache_hit: bool,
    words: Vec<u32>,
}

/// Builds (cached) the top of the project in `project_dir` and loads it.
#[pyfunction]
#[pyo3(signature = (project_dir, seed=1))]
pub fn sim_build_design(project_dir: PathBuf, seed: u64) -> PyResult<NativeSim> {
    let p = mase_sim::load_project(&project_dir).py()?;
    let b = mase_sim::build(&mase_sim::design_sim::project_build_spec(&p, false).py()?).py()?;
    let specs = mase_sim::design_sim::top_streams(&p.design);
    let streams = p
        .design
        .ports
        .iter()
        .map(|port| StreamInfo {
            name: port.name.clone(),
            input: port.dir == mase_emit::design::PortDir::Input,
            format: port.format,
            shape: port.shape.clone(),
            lanes: port.lanes,
            tensor: port.tensor.clone(),
        })
        .collect();
    let watchdog = mase_sim::design_sim::watchdog_cycles(&p.design);
    let mut sim = NativeSim::load(&b, &specs, streams, Golden::Design(Box::new(p)), seed)?;
    sim.stepper.watchdog_cycles = sim.stepper.watchdog_cycles.max(watchdog);
    Ok(sim)
}

/// Builds (cached) library component `name` with parameter overrides `params` (SystemVerilog
/// names; the others take their defaults) and loads it. Memories (weights) hold `memories`
/// (logical order, codes) or the contents of the component's own random stimulus of `rows` rows
/// with `seed` (the stimulus `component_stimulus` returns for the same arguments).
#[pyfunction]
#[pyo3(signature = (name, params=None, memories=None, seed=1, rows=1))]
pub fn sim_build_component(
    name: &str,
    params: Option<Vec<(String, i64)>>,
    memories: Option<&Bound<'_, PyDict>>,
    seed: u64,
    rows: usize,
) -> PyResult<NativeSim> {
    let c = mase_hwlib::lookup(name).map_err(mase_err)?;
    let p = mase_hwlib::resolve_params(c, &params.unwrap_or_default()).map_err(mase_err)?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mult = c.row_multiple(&p).max(1);
    let mut stim = c.random_stimulus(&p, rows.max(1).div_ceil(mult) * mult, &mut rng);
    if let Some(m) = memories {
        for (k, v) in m.iter() {
            let k: String = k.extract()?;
            let spec = c.memories(&p).into_iter().find(|s| s.name == k).ok_or_else(|| {
                let names: Vec<String> = c.memories(&p).into_iter().map(|s| s.name).collect();
                mase_err(format!("component `{name}` has no memory `{k}`; memories: {}", names.join(", ")))
            })?;
            let (_, codes) = i64_from_py(&v, &format!("memory `{k}`"))?;
            if codes.len() != spec.values {
                return Err(mase_err(format!(
                    "memory `{k}`: {} values given, it holds {}",
                    codes.len(),
                    spec.values
                )));
            }
            stim.memories.insert(k, codes);
        }
    }
    let b = mase_sim::build(&mase_sim::component_build_spec(c, &p, &stim, false).py()?).py()?;
    let specs = c.streams(&p);
    let streams = specs
        .iter()
        .map(|s| {
            let frac = p.get(&format!("{}_PRECISION_1", s.name.to_uppercase())).copied().unwrap_or(0) as i32;
            let format = if s.signed {
                FixedFormat::signed(s.width, frac)
            } else {
                FixedFormat::unsigned(s.width, frac)
            };
            StreamInfo {
                name: s.name.clone(),
                input: s.dir == Direction::In,
                format,
                shape: vec![s.beats_per_row * s.lanes],
                lanes: s.lanes,
                tensor: s.name.clone(),
            }
        })
        .collect();
    NativeSim::load(&b, &specs, streams, Golden::Component(c, p, stim.memories), seed)
}

/// Named tensors as a dict of numpy arrays.
fn named_to_py<'py>(py: Python<'py>, named: &mase_sim::host_run::Named) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let mut keys: Vec<&String> = named.keys().collect();
    keys.sort();
    for k in keys {
        d.set_item(k, crate::convert::tensor_to_py(py, &named[k])?)?;
    }
    Ok(d)
}

impl NativeSim {
    /// The host parts of a whole-model design.
    fn host(&self) -> Option<&mase_sim::host_run::Host> {
        match &self.golden {
            Golden::Design(p) => p.host.as_ref(),
            Golden::Component(..) => None,
        }
    }

    /// Loads build `b` behind a stepping harness over its stream ports `specs`.
    fn load(
        b: &mase_sim::Build,
        specs: &[mase_hwlib::StreamSpec],
        streams: Vec<StreamInfo>,
        golden: Golden,
        seed: u64,
    ) -> PyResult<NativeSim> {
        let stepper = Stepper::new(Model::new(b).py()?, specs, seed).py()?;
        Ok(NativeSim {
            stepper,
            streams,
            golden,
            build_s: b.build_s,
            cache_hit: b.cache_hit,
            words: Vec::new(),
        })
    }

    fn info(&self, k: usize) -> PyResult<&StreamInfo> {
        self.streams.get(k).ok_or_else(|| mase_err(format!("no stream {k}")))
    }

    /// Codes of `array` for stream `k`: quantized into its format, or taken as codes.
    fn codes_of(&self, k: usize, array: &Bound<'_, PyAny>, codes: bool) -> PyResult<Vec<i64>> {
        let s = self.info(k)?;
        let what = format!("stream `{}`", s.name);
        let flat: Vec<i64> = if codes {
            i64_from_py(array, &what)?.1
        } else {
            let t = tensor_from_py(array, &what)?;
            t.to_f32().iter().map(|x| from_f64(f64::from(*x), &s.format)).collect()
        };
        let n = s.numel();
        if flat.is_empty() || !flat.len().is_multiple_of(n) {
            return Err(mase_err(format!(
                "stream `{}`: {} elements is not a whole number of inferences of shape {:?}",
                s.name,
                flat.len(),
                s.shape
            )));
        }
        Ok(flat)
    }

    /// `(values, codes)` arrays of `codes` of stream `k`, shape `[inferences, *shape]`.
    fn arrays<'py>(&self, py: Python<'py>, k: usize, codes: Vec<i64>) -> PyResult<Bound<'py, PyTuple>> {
        let s = self.info(k)?;
        let mut shape = vec![codes.len() / s.numel().max(1)];
        shape.extend(&s.shape);
        let vals: Vec<f64> = codes.iter().map(|c| to_f64(*c, &s.format)).collect();
        PyTuple::new(py, [f64_array(py, &shape, vals)?, i64_array(py, &shape, codes)?])
    }
}

#[pymethods]
impl NativeSim {
    /// The streams: dicts with `name`, `input`, `shape` (one inference), `lanes`, `width`,
    /// `frac`, `signed`, `tensor`.
    fn streams<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let l = PyList::empty(py);
        for s in &self.streams {
            let d = PyDict::new(py);
            d.set_item("name", &s.name)?;
            d.set_item("input", s.input)?;
            d.set_item("shape", s.shape.clone())?;
            d.set_item("lanes", s.lanes)?;
            d.set_item("width", s.format.width)?;
            d.set_item("frac", s.format.frac)?;
            d.set_item("signed", s.format.signed)?;
            d.set_item("tensor", &s.tensor)?;
            l.append(d)?;
        }
        Ok(l)
    }

    /// Every port name (clk, rst and the stream ports).
    fn port_names(&self) -> Vec<String> {
        let mut names = vec!["clk".to_string(), "rst".to_string()];
        for s in &self.streams {
            names.extend([s.name.clone(), format!("{}_valid", s.name), format!("{}_ready", s.name)]);
        }
        names
    }

    /// Cycles since the last reset.
    #[getter]
    fn cycle(&self) -> u64 {
        self.stepper.cycle()
    }

    /// Resets (see `Stepper::reset`).
    fn reset(&mut self) -> PyResult<()> {
        self.stepper.reset().py()
    }

    /// Queues `array` (values, quantized into the stream's format; or codes) on input stream `k`.
    #[pyo3(signature = (k, array, stall_prob=0.0, codes=false))]
    fn drive(&mut self, k: usize, array: &Bound<'_, PyAny>, stall_prob: f64, codes: bool) -> PyResult<usize> {
        let c = self.codes_of(k, array, codes)?;
        self.stepper.drive(k, &c, stall_prob).py()?;
        Ok(c.len() / self.info(k)?.numel())
    }

    /// Starts monitoring output stream `k` with ready drops of probability `stall_prob`.
    #[pyo3(signature = (k, stall_prob=0.0))]
    fn monitor(&mut self, k: usize, stall_prob: f64) -> PyResult<()> {
        self.stepper.monitor(k, stall_prob).py()
    }

    /// Queues expected elements (values quantized, or codes) for output stream `k`'s scoreboard.
    #[pyo3(signature = (k, array, codes=false))]
    fn expect(&mut self, k: usize, array: &Bound<'_, PyAny>, codes: bool) -> PyResult<()> {
        let c = self.codes_of(k, array, codes)?;
        self.stepper.expect(k, &c).py()
    }

    /// Steps until one of `waits` holds; returns its index. A wait is `("cycle", c)`,
    /// `("inferences", k, n)` (output `k` holds n uncollected inferences) or `("drained", k)`.
    fn run_until(&mut self, waits: Vec<Bound<'_, PyTuple>>) -> PyResult<usize> {
        let mut ws = Vec::with_capacity(waits.len());
        for w in &waits {
            let kind: String = w.get_item(0)?.extract()?;
            ws.push(match kind.as_str() {
                "cycle" => Wait::Cycle(w.get_item(1)?.extract()?),
                "inferences" => {
                    let k: usize = w.get_item(1)?.extract()?;
                    let n: usize = w.get_item(2)?.extract()?;
                    Wait::Elements(k, n * self.info(k)?.numel())
                }
                "drained" => Wait::Drained(w.get_item(1)?.extract()?),
                other => return Err(mase_err(format!("unknown wait `{other}`"))),
            });
        }
        self.stepper.run_until(&ws).py()
    }

    /// Beats queued on input `k` and not taken yet.
    fn pending(&self, k: usize) -> usize {
        self.stepper.pending_beats(k)
    }

    /// Inferences received on output `k` and not collected yet.
    fn available(&self, k: usize) -> PyResult<usize> {
        Ok(self.stepper.available(k) / self.info(k)?.numel().max(1))
    }

    /// Takes `n` received inferences of output `k`: `(values, codes)`, shape `[n, *shape]`.
    fn take<'py>(&mut self, py: Python<'py>, k: usize, n: usize) -> PyResult<Bound<'py, PyTuple>> {
        let m = n * self.info(k)?.numel();
        let codes = self.stepper.take(k, m).py()?;
        self.arrays(py, k, codes)
    }

    /// `(values, codes)` of `array` quantized into stream `k`'s format, shape `[n, *shape]`.
    fn quantize<'py>(
        &self,
        py: Python<'py>,
        k: usize,
        array: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let c = self.codes_of(k, array, false)?;
        self.arrays(py, k, c)
    }

    /// Scoreboard mismatches so far: `(count, [dicts of the first ones])`.
    fn mismatches<'py>(&self, py: Python<'py>) -> PyResult<(usize, Bound<'py, PyAny>)> {
        Ok((self.stepper.mismatch_count, to_py(py, &self.stepper.mismatches)?))
    }

    /// Index of port `name`.
    fn port_index(&self, name: &str) -> PyResult<usize> {
        self.stepper.port_index(name).py()
    }

    /// Reads port `idx` as an unsigned integer (any width).
    fn peek(&mut self, py: Python<'_>, idx: usize) -> PyResult<Py<PyAny>> {
        self.stepper.peek(idx, &mut self.words);
        if self.words.len() <= 2 {
            let v = self.words.first().copied().unwrap_or(0) as u64
                | (self.words.get(1).copied().unwrap_or(0) as u64) << 32;
            return Ok(v.into_pyobject(py)?.into_any().unbind());
        }
        let bytes: Vec<u8> = self.words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let int = py.import("builtins")?.getattr("int")?;
        Ok(int.call_method1("from_bytes", (bytes, "little"))?.unbind())
    }

    /// Writes port `idx` from a non-negative integer (masked to the port width).
    fn poke(&mut self, idx: usize, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let width = self.stepper.port_width(idx);
        let n = width.div_ceil(32).max(1);
        let words: Vec<u32> = if let Ok(v) = value.extract::<u64>() {
            vec![v as u32, (v >> 32) as u32]
        } else {
            let py = value.py();
            let mask = 1u8.into_pyobject(py)?.lshift(n * 32)?.sub(1u8)?;
            let bytes: Vec<u8> =
                value.bitand(&mask)?.call_method1("to_bytes", (n * 4, "little"))?.extract()?;
            bytes.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
        };
        self.stepper.poke(idx, &words);
        Ok(())
    }

    /// The golden model's outputs for inputs given by stream name (`codes=False`: values,
    /// quantized into the input formats). Designs: the stitched design on its components'
    /// models; components: the component's bit-exact model (with this build's memories).
    /// Returns `{output name: (values, codes)}`.
    #[pyo3(signature = (inputs, codes=false))]
    fn golden<'py>(
        &self,
        py: Python<'py>,
        inputs: &Bound<'py, PyDict>,
        codes: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let mut given = Vec::new();
        for (k, s) in self.streams.iter().enumerate().filter(|(_, s)| s.input) {
            let v = inputs
                .get_item(&s.name)?
                .ok_or_else(|| mase_err(format!("golden: no value for input `{}`", s.name)))?;
            given.push((k, self.codes_of(k, &v, codes)?));
        }
        let outs: Vec<Vec<i64>> = match &self.golden {
            Golden::Design(p) => {
                let ins: Vec<Vec<i64>> = given.into_iter().map(|(_, c)| c).collect();
                mase_emit::golden::run(&p.design, &ins).py()?
            }
            Golden::Component(c, p, mem) => {
                let mut stim = Stimulus { inputs: StreamValues::new(), memories: mem.clone() };
                for (k, codes) in given {
                    stim.inputs.insert(self.streams[k].name.clone(), codes);
                }
                let out = c.model(p, &stim).map_err(|e| sim_err(format!("{} model: {e}", c.name())))?;
                self.streams
                    .iter()
                    .filter(|s| !s.input)
                    .map(|s| out.get(&s.name).cloned().unwrap_or_default())
                    .collect()
            }
        };
        let d = PyDict::new(py);
        for ((k, s), codes) in self.streams.iter().enumerate().filter(|(_, s)| !s.input).zip(outs) {
            d.set_item(&s.name, self.arrays(py, k, codes)?)?;
        }
        Ok(d)
    }

    /// Memory contents of a component build (name → codes, logical order); empty for designs.
    fn memories<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        if let Golden::Component(_, _, mem) = &self.golden {
            for (k, v) in mem {
                d.set_item(k, i64_array(py, &[v.len()], v.clone())?)?;
            }
        }
        Ok(d)
    }

    /// The model's input names of a whole-model design (its host pre part's inputs); empty
    /// for a design without host parts and for components.
    fn host_inputs(&self) -> Vec<String> {
        self.host().map(|h| h.inputs().into_iter().map(|(n, _, _)| n).collect()).unwrap_or_default()
    }

    /// The model's output names of a whole-model design (its host post part's outputs).
    fn host_outputs(&self) -> Vec<String> {
        self.host().map(|h| h.output_names()).unwrap_or_default()
    }

    /// Runs the host pre part on one inference of the model's inputs (`{name: array}`, each
    /// converted to its input's element type): every value it computes by tensor name (the
    /// device's inputs and what it hands to the post part), with the inputs.
    fn host_pre<'py>(&self, py: Python<'py>, inputs: &Bound<'py, PyDict>) -> PyResult<Bound<'py, PyDict>> {
        let h = self.host().ok_or_else(|| mase_err("host_pre: the design has no host parts"))?;
        let named = crate::convert::named_tensors(&h.pre, Some(inputs))?;
        named_to_py(py, &h.run_pre(&named).py()?)
    }

    /// Runs the host post part on one inference's values by tensor name (the device's outputs
    /// and the pre part's values): the model's outputs by name.
    fn host_post<'py>(&self, py: Python<'py>, values: &Bound<'py, PyDict>) -> PyResult<Bound<'py, PyDict>> {
        let h = self.host().ok_or_else(|| mase_err("host_post: the design has no host parts"))?;
        let named = crate::convert::named_tensors(&h.post, Some(values))?;
        let outs = h.run_post(&named).py()?;
        let d = PyDict::new(py);
        for (name, t) in h.output_names().into_iter().zip(outs) {
            d.set_item(name, crate::convert::tensor_to_py(py, &t)?)?;
        }
        Ok(d)
    }

    /// Resolved parameters of a component build (empty for designs).
    fn params(&self) -> Vec<(String, i64)> {
        match &self.golden {
            Golden::Component(_, p, _) => p.iter().map(|(k, v)| (k.clone(), *v)).collect(),
            Golden::Design(_) => Vec::new(),
        }
    }
}

/// Seeded random input codes of a component for `rows` rows (its own stimulus generator):
/// `{stream name: codes}`.
#[pyfunction]
#[pyo3(signature = (name, params=None, rows=4, seed=1))]
pub fn component_stimulus<'py>(
    py: Python<'py>,
    name: &str,
    params: Option<Vec<(String, i64)>>,
    rows: usize,
    seed: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let c = mase_hwlib::lookup(name).map_err(mase_err)?;
    let p = mase_hwlib::resolve_params(c, &params.unwrap_or_default()).map_err(mase_err)?;
    let mult = c.row_multiple(&p).max(1);
    let rows = rows.max(1).div_ceil(mult) * mult;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let stim = c.random_stimulus(&p, rows, &mut rng);
    let d = PyDict::new(py);
    for (k, v) in stim.inputs {
        d.set_item(k, i64_array(py, &[v.len()], v)?)?;
    }
    Ok(d)
}

/// One registry entry: name, description, parameters `(name, default, doc)` and the parameter
/// overrides of each instance of its shared test.
pub type ComponentEntry = (String, String, Vec<(String, String, String)>, Vec<Vec<(String, i64)>>);

/// The registry, one [`ComponentEntry`] per component.
#[pyfunction]
pub fn component_list() -> Vec<ComponentEntry> {
    mase_sim::components()
        .into_iter()
        .map(|c| {
            let comp = mase_hwlib::lookup(&c.name).expect("listed by the registry");
            let tests = comp
                .test_params()
                .into_iter()
                .map(|t| t.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
                .collect();
            (c.name, c.description, c.params, tests)
        })
        .collect()
}
