//! Per-node metadata in MASE's tree shape: `common` (op, type, args and results with type,
//! precision and shape), `software` (statistics from calibration data) and `hardware` (what the
//! emitter needs). Typed structs that serialize to JSON in the same shape as MASE's dicts.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use crate::fixed::{Overflow, Rounding};
use crate::tensor::DType;

/// MASE's classification of a node (`common.mase_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum MaseType {
    /// A module with parameters (linear, layer_norm).
    Module,
    /// A function with a module counterpart (relu, gelu, softmax, dropout).
    ModuleRelatedFunc,
    /// An arithmetic built-in (add, mul, matmul, …).
    BuiltinFunc,
    /// A view/reshape-like function that needs no hardware.
    ImplicitFunc,
    /// A graph input.
    #[default]
    Placeholder,
    /// A parameter or constant read.
    GetAttr,
    /// The graph output.
    Output,
}

/// Numeric type of an argument or result (`type` in the metadata tree).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum ValueType {
    /// IEEE float (precision `[32]`).
    #[default]
    #[serde(rename = "float")]
    Float,
    /// Fixed point (precision `[width, frac_width]`).
    #[serde(rename = "fixed")]
    Fixed,
    /// Integer data (token ids, indices, shapes): precision `[64]` or `[32]` (the storage),
    /// never quantized; a device input of token ids adds the bits its code streams with,
    /// `[64, bits]` (`unsigned` set).
    /// Checkpoints written before integer inputs existed call it `NA`.
    #[serde(rename = "integer", alias = "NA")]
    Integer,
    /// Boolean data (masks, comparison results): precision `[1]`, never quantized.
    #[serde(rename = "bool")]
    Bool,
}

impl ValueType {
    /// True for real-valued data (float or fixed point): what quantization gives a format.
    /// Integer and boolean tensors stay exact and have none.
    pub fn is_real(self) -> bool {
        matches!(self, ValueType::Float | ValueType::Fixed)
    }
}

/// Metadata of one argument or result of a node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct TensorMeta {
    /// Float, fixed or NA.
    #[serde(rename = "type")]
    pub ty: ValueType,
    /// `[32]` for float, `[width, frac_width]` for fixed.
    pub precision: Vec<i64>,
    /// Shape, outermost first.
    pub shape: Vec<usize>,
    /// Rounding used when a value is cast into this fixed format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounding: Option<Rounding>,
    /// Overflow handling used when a value is cast into this fixed format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overflow: Option<Overflow>,
    /// True for an unsigned fixed format (absent = signed).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unsigned: bool,
}

impl TensorMeta {
    /// The metadata of a tensor not (yet) quantized: float `[32]` for f32 data, integer `[64]`
    /// or `[32]` for i64 / i32 data (token ids, shapes, indices), bool `[1]` for masks.
    pub fn unquantized(shape: &[usize], dtype: DType) -> Self {
        let (ty, precision) = match dtype {
            DType::F32 => (ValueType::Float, vec![32]),
            DType::I64 => (ValueType::Integer, vec![64]),
            DType::I32 => (ValueType::Integer, vec![32]),
            DType::Bool => (ValueType::Bool, vec![1]),
        };
        TensorMeta { ty, precision, shape: shape.to_vec(), ..Default::default() }
    }

    /// The element type of the unquantized tensor this describes (fixed point is f32 data).
    pub fn dtype(&self) -> DType {
        match self.ty {
            ValueType::Float | ValueType::Fixed => DType::F32,
            ValueType::Integer if self.precision.first() == Some(&32) => DType::I32,
            ValueType::Integer => DType::I64,
            ValueType::Bool => DType::Bool,
        }
    }
}

/// `common` metadata.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct CommonMeta {
    /// MASE type of the node.
    pub mase_type: MaseType,
    /// MASE op name (see [`crate::Op::mase_op`]).
    pub mase_op: String,
    /// Arguments by MASE name (`data_in_0`, `data_in_1`, `weight`, `bias`), in order.
    pub args: IndexMap<String, TensorMeta>,
    /// Results by MASE name (`data_out_0`).
    pub results: IndexMap<String, TensorMeta>,
}

/// A min/max range observed or estimated from calibration data.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RangeStat {
    /// Lower end.
    pub min: f64,
    /// Upper end.
    pub max: f64,
    /// Number of samples it was computed from.
    pub count: u64,
}

/// A variance estimate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct VarianceStat {
    /// Variance.
    pub variance: f64,
    /// Mean.
    pub mean: f64,
    /// Number of samples.
    pub count: u64,
}

/// Statistics of one tensor over calibration inputs (MASE's `stat` dict).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Stats {
    /// Welford running variance over all elements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variance_online: Option<VarianceStat>,
    /// Two-pass variance over all recorded elements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variance_precise: Option<VarianceStat>,
    /// mean ± n·sigma.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range_n_sigma: Option<RangeStat>,
    /// Lower and upper quantiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range_quantile: Option<RangeStat>,
    /// Observed minimum and maximum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range_min_max: Option<RangeStat>,
    /// Elements that held an additive-mask value (see [`crate::quant::is_mask_value`]), left out
    /// of every statistic above; absent when there were none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mask_values: Option<u64>,
}

/// Software metadata of one argument or result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct SoftwareTensorMeta {
    /// The statistics.
    pub stat: Stats,
}

/// `software` metadata.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct SoftwareMeta {
    /// Per argument.
    #[serde(default)]
    pub args: IndexMap<String, SoftwareTensorMeta>,
    /// Per result.
    #[serde(default)]
    pub results: IndexMap<String, SoftwareTensorMeta>,
}

/// Code-generation route of a node (`hardware.toolchain`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Toolchain {
    /// A component of this project's RTL library.
    #[serde(rename = "INTERNAL")]
    Internal,
    /// A user-supplied module described by a manifest.
    #[serde(rename = "EXTERNAL")]
    External,
    /// High-level synthesis (not produced by this tool).
    #[serde(rename = "HLS")]
    Hls,
    /// Runs on the host, before or after the device (see `mase_emit::host_split`).
    #[serde(rename = "HOST")]
    Host,
}

/// How one parameter of a node is presented to the hardware (`hardware.interface.<name>`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Interface {
    /// Storage kind; `BRAM` for on-chip memories.
    pub storage: String,
    /// Whether the data is transposed before it is emitted.
    pub transpose: bool,
}

/// `hardware` metadata.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HardwareMeta {
    /// True when the node needs no hardware (views and reshapes).
    pub is_implicit: bool,
    /// SystemVerilog parameters of the bound module.
    #[serde(default)]
    pub verilog_param: IndexMap<String, i64>,
    /// Device the node is mapped to (-1 = not mapped).
    pub device_id: i64,
    /// Code-generation route.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toolchain: Option<Toolchain>,
    /// Name of the bound module.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module: Option<String>,
    /// Per-parameter interface.
    #[serde(default)]
    pub interface: IndexMap<String, Interface>,
    /// Files the bound module needs.
    #[serde(default)]
    pub dependence_files: Vec<String>,
    /// Parallelism per argument/result, innermost dimension first.
    #[serde(default)]
    pub parallelism: IndexMap<String, Vec<usize>>,
    /// For the EXTERNAL toolchain: path of the manifest describing the user's module (absolute,
    /// or relative to the emitted project that holds the graph).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external: Option<String>,
    /// The implementation form `[hardware.nodes.NAME] form = "…"` asked for (e.g. gelu's
    /// `"table"` or `"interp"`); `None` lets the component choose.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<String>,
}

impl Default for HardwareMeta {
    fn default() -> Self {
        HardwareMeta {
            is_implicit: false,
            verilog_param: IndexMap::new(),
            device_id: -1,
            toolchain: None,
            module: None,
            interface: IndexMap::new(),
            dependence_files: Vec::new(),
            parallelism: IndexMap::new(),
            external: None,
            form: None,
        }
    }
}

/// The whole metadata tree of a node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct NodeMeta {
    /// `common` metadata.
    pub common: CommonMeta,
    /// `software` metadata.
    pub software: SoftwareMeta,
    /// `hardware` metadata.
    pub hardware: HardwareMeta,
}
