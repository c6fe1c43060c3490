//! The hardware component contract: what every entry of the registry tells the rest of the flow.
//!
//! A component is one SystemVerilog module `mase_<name>` in `rtl/mase_<name>.sv` plus one Rust
//! value implementing [`Component`]. The Rust side is the single source of truth for the module's
//! parameters (names exactly as the SV parameters), their validation (the same rules, with the
//! same wording, as the RTL's parameter assertions), its stream ports and on-chip memories, a
//! bit-accurate reference model and a cost model. See the crate documentation for how the pieces
//! fit and how to add a component.

use indexmap::IndexMap;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

/// Resolved parameter values of one instance: SV parameter name → value, in the declaration order
/// of [`Component::params`]. Produced by [`crate::resolve_params`], which fills defaults.
pub type Params = IndexMap<String, i64>;

/// Integer element values per stream (or per memory), keyed by stream/memory name.
///
/// For a stream the values are in *stream order*: beat after beat, lane 0 first within a beat
/// (lane `i` travels in bits `[i*W +: W]`). Each value is the integer code of the element,
/// already sign-interpreted when the stream is signed (so it lies in the stream's range).
pub type StreamValues = IndexMap<String, Vec<i64>>;

/// Default value of a parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ParamDefault {
    /// A fixed value.
    Value(i64),
    /// The value of another parameter declared earlier (e.g. `DATA_OUT_0_TENSOR_SIZE_DIM_0`
    /// defaults to `DATA_IN_0_TENSOR_SIZE_DIM_0`), so overriding one size keeps the rest coherent.
    SameAs(&'static str),
}

/// One SV parameter of a component.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ParamSpec {
    /// The SV parameter name, MASE style: `DATA_IN_0_PRECISION_0`, `WEIGHT_PARALLELISM_DIM_1`, ….
    pub name: &'static str,
    /// Default when the user does not give one.
    pub default: ParamDefault,
    /// One line of documentation (also printed by `mase components`).
    pub doc: &'static str,
}

impl ParamSpec {
    /// A parameter with a fixed default.
    pub const fn value(name: &'static str, default: i64, doc: &'static str) -> Self {
        ParamSpec { name, default: ParamDefault::Value(default), doc }
    }

    /// A parameter whose default is the value of an earlier parameter.
    pub const fn same_as(name: &'static str, other: &'static str, doc: &'static str) -> Self {
        ParamSpec { name, default: ParamDefault::SameAs(other), doc }
    }
}

/// Direction of a stream port, seen from the component.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Direction {
    /// The component consumes the stream (`<name>` and `<name>_valid` are inputs, `<name>_ready`
    /// an output).
    In,
    /// The component produces the stream (`<name>`, `<name>_valid` outputs, `<name>_ready` input).
    Out,
}

/// A valid/ready stream port group: data `<name>` (flat packed, `lanes * width` bits),
/// `<name>_valid` and `<name>_ready`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StreamSpec {
    /// Port base name, MASE style: `data_in_0`, `data_out_0`, `weight`, `bias`.
    pub name: String,
    /// Direction seen from the component.
    pub dir: Direction,
    /// Elements per beat (lane `i` in bits `[i*width +: width]`).
    pub lanes: usize,
    /// Bits per lane, 1..=64.
    pub width: u32,
    /// Whether lane values are two's complement.
    pub signed: bool,
    /// Beats of this stream per row (the unit of [`Cost::ii_cycles`] and of the harness's
    /// stimulus). A row is one tensor row, or one block row of `PARALLELISM_DIM_1` tensor rows when
    /// the component streams 2-D blocks.
    pub beats_per_row: usize,
}

impl StreamSpec {
    /// Width of the flat data port in bits (`lanes * width`).
    pub fn port_width(&self) -> usize {
        self.lanes * self.width as usize
    }

    /// Smallest and largest integer code a lane can hold.
    pub fn range(&self) -> (i64, i64) {
        value_range(self.width, self.signed)
    }
}

/// An on-chip memory (ROM) of the component, initialised from a `.mem` file (`$readmemh`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MemorySpec {
    /// Logical name, e.g. `weight`, `bias`; the key of its contents in [`Stimulus::memories`].
    pub name: String,
    /// The SV `string` parameter that receives the path of the `.mem` file (e.g. `WEIGHT_MEM_FILE`).
    pub param: String,
    /// Number of logical values the memory holds (e.g. OUT × IN weights).
    pub values: usize,
    /// Number of words (rows of the `.mem` file).
    pub depth: usize,
    /// Logical values per word (lane `i` in bits `[i*lane_width +: lane_width]`).
    pub lanes: usize,
    /// Bits per value.
    pub lane_width: u32,
    /// Whether values are two's complement.
    pub signed: bool,
}

impl MemorySpec {
    /// Word width in bits.
    pub fn word_width(&self) -> usize {
        self.lanes * self.lane_width as usize
    }

    /// Total bits (`depth * word_width`).
    pub fn bits(&self) -> u64 {
        (self.depth * self.word_width()) as u64
    }
}

/// Cost model of one instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Cost {
    /// Cycles from the first input beat accepted to the first output beat valid, with no stalls.
    pub latency_cycles: u64,
    /// Steady-state cycles per row with no stalls (initiation interval per row).
    pub ii_cycles: u64,
    /// Hardware multipliers (DSP candidates).
    pub multipliers: u64,
    /// Bits of on-chip memory (weights, buffers, FIFOs).
    pub memory_bits: u64,
}

/// Stimulus of one simulation: input stream values and memory contents (logical order).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Stimulus {
    /// Values per input stream, in stream order (see [`StreamValues`]).
    pub inputs: StreamValues,
    /// Logical contents per memory (order defined by the component, e.g. weight `[out][in]`
    /// row-major as in `torch.nn.Linear`); [`Component::layout_memory`] maps them to words.
    pub memories: StreamValues,
}

/// The fixed facts of a component (those that do not depend on its parameter values), one
/// `const` per component returned by [`Component::info`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Info {
    /// Short name: module `mase_<name>` in `rtl/mase_<name>.sv` (e.g. `linear`).
    pub name: &'static str,
    /// One sentence describing what the component computes.
    pub description: &'static str,
    /// SV parameters in declaration order, each with default and doc (see [`crate::port`] for
    /// the building blocks).
    pub params: &'static [ParamSpec],
    /// Other RTL files this module instantiates directly, as file names in `rtl/` (e.g.
    /// `"mase_skid_buffer.sv"`). [`crate::rtl_files`] resolves them transitively through the
    /// registry.
    pub dependencies: &'static [&'static str],
    /// Whether the component holds a whole unit (row, sequence, tensor) of its input at once:
    /// it takes the unit before its first output beat, or (a reordering component) before the
    /// unit's last output beat; the stitcher sizes the FIFOs of parallel branches from it. False
    /// when output follows input after the pipeline latency.
    pub buffers_whole_unit: bool,
    /// Whether `data_out_0` carries the elements of `data_in_0` in their own format (the
    /// component moves or filters values but never re-quantizes them, so it has no
    /// `DATA_OUT_0_PRECISION_*` parameters). False when the output format is
    /// `DATA_OUT_0_PRECISION_0/1`, signed unless `DATA_OUT_0_SIGNED = 0`.
    pub keeps_input_format: bool,
}

impl Info {
    /// The base the components' `Info`s complete (`..Info::DEFAULT`): no parameters, no
    /// dependencies, both flags false.
    pub const DEFAULT: Info = Info {
        name: "",
        description: "",
        params: &[],
        dependencies: &[],
        buffers_whole_unit: false,
        keeps_input_format: false,
    };
}

impl Stimulus {
    /// The values of input stream `stream`; the error names `component`'s model and the stream.
    pub fn input(&self, component: &str, stream: &str) -> Result<&Vec<i64>, String> {
        self.inputs.get(stream).ok_or_else(|| format!("{component} model: missing input stream {stream}"))
    }
}

/// The result of a model whose one output stream is `data_out_0`.
pub fn data_out_0(values: Vec<i64>) -> StreamValues {
    StreamValues::from([("data_out_0".to_string(), values)])
}

impl Cost {
    /// The cost of a streaming stage with no multipliers and no memory.
    pub fn streaming(latency_cycles: u64, ii_cycles: u64) -> Cost {
        Cost { latency_cycles, ii_cycles, multipliers: 0, memory_bits: 0 }
    }
}

/// A parameterized hardware component: the SV module `mase_<name>` and everything the flow needs
/// to know about it. Implementations are unit structs held in `static`s (see [`crate::registry`]).
pub trait Component: Sync {
    /// The fixed facts of the component ([`Info`]).
    fn info(&self) -> &'static Info;

    /// Short name: module `mase_<name>` in `rtl/mase_<name>.sv` (e.g. `linear`).
    fn name(&self) -> &'static str {
        self.info().name
    }

    /// One sentence describing what the component computes.
    fn description(&self) -> &'static str {
        self.info().description
    }

    /// SV parameters in declaration order, each with default and doc.
    fn params(&self) -> &'static [ParamSpec] {
        self.info().params
    }

    /// Rejects exactly the parameter sets the RTL's parameter assertions reject, with the same
    /// message text (the RTL prints it via `$fatal`). `p` is fully resolved.
    fn validate(&self, p: &Params) -> Result<(), String>;

    /// Stream ports derived from the parameters, inputs first in port order. `p` is valid.
    fn streams(&self, p: &Params) -> Vec<StreamSpec>;

    /// On-chip memories initialised from `.mem` files. Default: none.
    fn memories(&self, _p: &Params) -> Vec<MemorySpec> {
        Vec::new()
    }

    /// Lays out the logical contents of memory `mem` into words in the order the datapath reads
    /// them: result `[word][lane]`, `depth` words of `lanes` values each (pad with 0).
    /// Default: an error (the component has no memories).
    fn layout_memory(&self, _p: &Params, mem: &str, _values: &[i64]) -> Result<Vec<Vec<i64>>, String> {
        Err(format!("component `{}` has no memory `{mem}`", self.name()))
    }

    /// Contents of memory `mem` when the component computes them itself from its parameters
    /// (function tables such as softmax's exp tables or gelu's table), `None` for memories the
    /// user's data fills (weights). The emitter writes these into the project's `.mem` files.
    fn generated_memory(&self, _p: &Params, _mem: &str) -> Option<Vec<i64>> {
        None
    }

    /// Bit-accurate reference model: integer input streams + memory contents → output streams
    /// (every output stream present, stream order). Inputs hold a whole number of rows, a
    /// multiple of [`Component::row_multiple`] rows.
    fn model(&self, p: &Params, stim: &Stimulus) -> Result<StreamValues, String>;

    /// Cost model: latency, II per row, multipliers, memory bits.
    fn cost(&self, p: &Params) -> Cost;

    /// Resource model: LUT, FF, DSP, BRAM and LUTRAM of the instance as Yosys `synth_xilinx`
    /// maps it, a function of the parameters fitted against Yosys (see [`crate::resources`]).
    fn resources(&self, p: &Params) -> crate::Resources;

    /// [`Component::resources`] when the contents of the instance's memories are known
    /// (logical values per memory name, as in [`Stimulus::memories`]; absent names are
    /// unknown): Yosys drops the bit columns of a ROM that hold one value in every word, which
    /// in few-word ROMs happens by chance and in real weights by their range, and only the
    /// contents tell. Default: [`Component::resources`].
    fn resources_with_memories(&self, p: &Params, _memories: &StreamValues) -> crate::Resources {
        self.resources(p)
    }

    /// Other RTL files this module instantiates directly ([`Info::dependencies`]).
    fn dependencies(&self) -> &'static [&'static str] {
        self.info().dependencies
    }

    /// Whether the component takes a whole unit of its input before its first output beat
    /// ([`Info::buffers_whole_unit`]).
    fn buffers_whole_unit(&self) -> bool {
        self.info().buffers_whole_unit
    }

    /// Beats of input stream `port` (per row of the stream, see [`StreamSpec::beats_per_row`])
    /// the component must have taken before its first output beat can leave: what its
    /// algorithm waits for. The design's latency model reads it to tell how long a buffering
    /// instance waits when its producer delivers below full rate. Default: the whole row when
    /// the component [buffers a whole unit](Info::buffers_whole_unit), else one beat.
    fn beats_before_first_output(&self, p: &Params, port: &str) -> usize {
        let row = self.streams(p).iter().find(|s| s.name == port).map_or(1, |s| s.beats_per_row);
        if self.buffers_whole_unit() {
            row
        } else {
            1
        }
    }

    /// For a component that reorders its input: the beats of `data_in_0` (within a row) that
    /// must have arrived before the first `out_beats` beats of `data_out_0` (within the same row)
    /// can leave. The latency model times a consumer's wait through it. `None` (the default):
    /// output beats leave evenly over the row, as they do for every non-reordering component.
    fn input_beats_for_output(&self, _p: &Params, _out_beats: usize) -> Option<usize> {
        None
    }

    /// Whether `data_out_0` carries the elements of `data_in_0` in their own format
    /// ([`Info::keeps_input_format`]).
    fn keeps_input_format(&self) -> bool {
        self.info().keeps_input_format
    }

    /// The number of rows a stimulus must be a multiple of (e.g. `TENSOR_SIZE_DIM_1` for a
    /// component that works on whole tensors). Default 1.
    fn row_multiple(&self, _p: &Params) -> usize {
        1
    }

    /// Parameter overrides for the shared component test: several valid instances covering
    /// P = 1, non-square shapes, widths 2..16 and odd sizes. Each entry is resolved with
    /// [`crate::resolve_params`] (unlisted parameters take their defaults).
    fn test_params(&self) -> Vec<Vec<(&'static str, i64)>>;

    /// Parameter overrides that [`Component::validate`] must reject and the RTL's elaboration
    /// must reject too (checked by the shared validate-vs-RTL test). Default: none.
    fn invalid_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        Vec::new()
    }

    /// Random stimulus of `rows` rows. Default: uniform over each input stream's and memory's
    /// full range ([`uniform_stimulus`]). Override when the component needs structured data.
    fn random_stimulus(&self, p: &Params, rows: usize, rng: &mut ChaCha8Rng) -> Stimulus {
        uniform_stimulus(&self.streams(p), &self.memories(p), rows, rng)
    }
}

/// Checks that memory `mem` of `component` is given `want` logical values (`what` says how they
/// are counted, e.g. `"OUT × IN = 4 × 8"`): an error naming all of it otherwise.
pub fn check_memory_len(
    component: &str,
    mem: &str,
    values: &[i64],
    want: usize,
    what: &str,
) -> Result<(), String> {
    if values.len() == want {
        return Ok(());
    }
    Err(format!("{component}: {mem} memory needs {want} values ({what}), got {}", values.len()))
}

/// Smallest and largest integer code of a `width`-bit lane (1..=64 bits).
pub fn value_range(width: u32, signed: bool) -> (i64, i64) {
    match (signed, width) {
        (true, 64) => (i64::MIN, i64::MAX),
        (true, w) => (-(1i64 << (w - 1)), (1i64 << (w - 1)) - 1),
        (false, w) if w >= 63 => (0, i64::MAX),
        (false, w) => (0, (1i64 << w) - 1),
    }
}

/// Uniform random stimulus: `rows * beats_per_row * lanes` values per input stream and
/// `values` per memory, each uniform over its full range.
pub fn uniform_stimulus(
    streams: &[StreamSpec],
    memories: &[MemorySpec],
    rows: usize,
    rng: &mut ChaCha8Rng,
) -> Stimulus {
    let mut stim = Stimulus::default();
    for s in streams.iter().filter(|s| s.dir == Direction::In) {
        let (lo, hi) = s.range();
        let n = rows * s.beats_per_row * s.lanes;
        stim.inputs.insert(s.name.clone(), (0..n).map(|_| rng.gen_range(lo..=hi)).collect());
    }
    for m in memories {
        let (lo, hi) = value_range(m.lane_width, m.signed);
        stim.memories.insert(m.name.clone(), (0..m.values).map(|_| rng.gen_range(lo..=hi)).collect());
    }
    stim
}
