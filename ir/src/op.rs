//! The closed set of operations a MaseGraph node can compute.
//!
//! Adding an op means adding a variant here; the compiler then points at every `match` that
//! must handle it (interpreter, shape rules, metadata, emitter). Attributes are typed fields of
//! the variant; tensors an op owns (linear weights, layer-norm affine parameters, constants) are
//! named entries of [`crate::MaseGraph::weights`].
//!
//! Axis attributes follow ONNX: negative values count from the last dimension.

use serde::{Deserialize, Serialize};

use crate::graph::NodeKind;
use crate::metadata::MaseType;
use crate::tensor::DType;

/// Which GELU formula a `gelu` node computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum GeluApprox {
    /// x/2 · (1 + erf(x/√2)).
    #[default]
    None,
    /// x/2 · (1 + tanh(√(2/π) · (x + 0.044715 x³))).
    Tanh,
}

/// An element-wise comparison (ONNX `Equal`, `Less`, `LessOrEqual`, `Greater`,
/// `GreaterOrEqual`): inputs of one element type, boolean result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CmpOp {
    /// a == b.
    Equal,
    /// a < b.
    Less,
    /// a <= b.
    LessOrEqual,
    /// a > b.
    Greater,
    /// a >= b.
    GreaterOrEqual,
}

/// An element-wise boolean connective (ONNX `And`, `Or`, `Xor`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogicOp {
    /// a ∧ b.
    And,
    /// a ∨ b.
    Or,
    /// a ⊕ b.
    Xor,
}

/// How a QONNX quantizer rounds a scaled value to an integer (`rounding_mode`; names
/// case-insensitive, `HALF_EVEN` is a synonym of `ROUND`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum RoundingMode {
    /// To nearest, ties to even (numpy `round`).
    #[default]
    Round,
    /// Toward +∞.
    Ceil,
    /// Toward −∞.
    Floor,
    /// Away from zero: sign(x) · ⌈|x|⌉.
    Up,
    /// Toward zero (numpy `fix`).
    Down,
    /// To nearest, ties away from zero: sign(x) · ⌊|x| + 0.5⌋.
    HalfUp,
    /// To nearest, ties toward zero: sign(x) · ⌈|x| − 0.5⌉.
    HalfDown,
}

impl RoundingMode {
    /// Every mode, in declaration order.
    pub const ALL: [RoundingMode; 7] = [
        RoundingMode::Round,
        RoundingMode::Ceil,
        RoundingMode::Floor,
        RoundingMode::Up,
        RoundingMode::Down,
        RoundingMode::HalfUp,
        RoundingMode::HalfDown,
    ];

    /// The QONNX attribute value: `ROUND`, `CEIL`, `FLOOR`, `UP`, `DOWN`, `HALF_UP`, `HALF_DOWN`.
    pub fn qonnx_name(self) -> &'static str {
        match self {
            RoundingMode::Round => "ROUND",
            RoundingMode::Ceil => "CEIL",
            RoundingMode::Floor => "FLOOR",
            RoundingMode::Up => "UP",
            RoundingMode::Down => "DOWN",
            RoundingMode::HalfUp => "HALF_UP",
            RoundingMode::HalfDown => "HALF_DOWN",
        }
    }

    /// The mode a QONNX `rounding_mode` string names (any case; `HALF_EVEN` is `ROUND`).
    pub fn from_qonnx(s: &str) -> Option<Self> {
        let up = s.to_ascii_uppercase();
        if up == "HALF_EVEN" {
            return Some(RoundingMode::Round);
        }
        RoundingMode::ALL.into_iter().find(|m| m.qonnx_name() == up)
    }
}

/// The integer type of ONNX quantized codes: `QuantizeLinear`'s output and `DequantizeLinear`'s
/// input (the type of their zero point). Int32 only as `DequantizeLinear` input (biases).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QuantIntType {
    /// int8, −128..=127.
    Int8,
    /// uint8, 0..=255.
    Uint8,
    /// int32 (quantized biases).
    Int32,
}

impl QuantIntType {
    /// The smallest and largest code.
    pub fn range(self) -> (i64, i64) {
        match self {
            QuantIntType::Int8 => (-128, 127),
            QuantIntType::Uint8 => (0, 255),
            QuantIntType::Int32 => (i64::from(i32::MIN), i64::from(i32::MAX)),
        }
    }

    /// The numpy / ONNX-style name: `int8`, `uint8`, `int32`.
    pub fn name(self) -> &'static str {
        match self {
            QuantIntType::Int8 => "int8",
            QuantIntType::Uint8 => "uint8",
            QuantIntType::Int32 => "int32",
        }
    }
}

/// Defines [`Op`] as written and, from the same variant list, [`OpKind`] (the variant without its
/// attributes), [`OpKind::ALL`] and [`Op::kind`]: lists of ops elsewhere (e.g. the mase op names a
/// quantization config may use) derive from here instead of being kept by hand.
macro_rules! op_enum {
    (
        $(#[$em:meta])*
        pub enum Op {
            $(
                $(#[$vm:meta])*
                $v:ident $({ $($fields:tt)* })?
            ),* $(,)?
        }
    ) => {
        $(#[$em])*
        pub enum Op {
            $( $(#[$vm])* $v $({ $($fields)* })? ),*
        }

        /// The variant of an [`Op`] without its attributes.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum OpKind {
            $( #[doc = concat!("[`Op::", stringify!($v), "`].")] $v ),*
        }

        impl OpKind {
            /// Every variant of [`Op`], in declaration order.
            pub const ALL: &'static [OpKind] = &[$(OpKind::$v),*];
        }

        impl Op {
            /// The variant of this op.
            pub fn kind(&self) -> OpKind {
                match self {
                    $( Op::$v { .. } => OpKind::$v ),*
                }
            }
        }
    };
}

op_enum! {
    /// One operation with its typed attributes. Serialized with the mase op name as tag `op`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(tag = "op", rename_all = "snake_case")]
    pub enum Op {
        /// A graph input; its shape is in the node's `common.results` metadata.
        Placeholder,
        /// The graph output; its inputs are the values the graph returns.
        Output,
        /// Reads the named entry of the graph's weights (a torch.fx `get_attr`).
        Constant {
            /// Key in [`crate::MaseGraph::weights`].
            tensor: String,
        },
        /// y = x · Wᵀ + b over the innermost dimension; W is `[out, in]`, b is `[out]`.
        Linear {
            /// Key of the `[out, in]` weight.
            weight: String,
            /// Key of the `[out]` bias, if any.
            bias: Option<String>,
        },
        /// Matrix product of two activations with numpy broadcasting of batch dimensions.
        Matmul,
        /// max(x, 0).
        Relu,
        /// Gaussian error linear unit.
        Gelu {
            /// The formula.
            approximate: GeluApprox,
        },
        /// Softmax along one axis. An optional second input is a boolean keep mask that
        /// broadcasts to the first (an attention mask, raised by `raise_masked_softmax`):
        /// masked positions output exactly 0 and take no part in the maximum or the sum.
        Softmax {
            /// The axis.
            axis: i64,
        },
        /// Layer normalization over the dimensions from `axis` to the last.
        LayerNorm {
            /// First normalized axis.
            axis: i64,
            /// Added to the variance before the square root.
            epsilon: f32,
            /// Key of the scale (gamma), if any.
            weight: Option<String>,
            /// Key of the shift (beta), if any.
            bias: Option<String>,
        },
        /// Element-wise sum with broadcasting.
        Add,
        /// Element-wise difference with broadcasting.
        Sub,
        /// Element-wise product of two tensors with broadcasting.
        Mul,
        /// Element-wise quotient with broadcasting.
        Div,
        /// Element-wise power with broadcasting.
        Pow,
        /// Multiplication by a scalar constant (raised from Mul/Div by a constant).
        MulScalar {
            /// The factor.
            scalar: f32,
        },
        /// Element-wise square root.
        Sqrt,
        /// Element-wise error function.
        Erf,
        /// Element-wise hyperbolic tangent.
        Tanh,
        /// Mean over the given axes.
        ReduceMean {
            /// Reduced axes (empty = all).
            axes: Vec<i64>,
            /// Keep reduced axes as size 1.
            keepdims: bool,
        },
        /// Reshape with ONNX semantics (0 copies a dimension unless `allowzero`, -1 is inferred).
        Reshape {
            /// The target shape.
            shape: Vec<i64>,
        },
        /// Permutes dimensions.
        Transpose {
            /// The permutation.
            perm: Vec<usize>,
        },
        /// Flattens to 2-D at `axis`.
        Flatten {
            /// Dimensions before `axis` form the first output dimension.
            axis: i64,
        },
        /// Identity at inference (kept until `remove_dropout` removes it).
        Dropout {
            /// Training-time drop probability.
            ratio: f32,
        },
        /// Passes its input through.
        Identity,
        /// Inserts size-1 dimensions.
        Unsqueeze {
            /// Positions in the output.
            axes: Vec<i64>,
        },
        /// Removes size-1 dimensions.
        Squeeze {
            /// Axes to remove (empty = all of size 1).
            axes: Vec<i64>,
        },
        /// Concatenates its inputs along an axis.
        Concat {
            /// The axis.
            axis: i64,
        },
        /// Takes a strided slice.
        Slice {
            /// Start per sliced axis.
            starts: Vec<i64>,
            /// End (exclusive) per sliced axis.
            ends: Vec<i64>,
            /// The sliced axes.
            axes: Vec<i64>,
            /// Step per sliced axis.
            steps: Vec<i64>,
        },
        /// Gathers input 0 along `axis` at the integer indices of input 1 (ONNX Gather; negative
        /// indices count from the end).
        Gather {
            /// The axis.
            axis: i64,
        },
        /// Looks up rows of a table at the integer indices of its input (a Gather on axis 0 of a
        /// constant 2-D table, raised by `raise_embedding`): `[..., n] → [..., n, dim]`.
        Embedding {
            /// Key of the `[rows, dim]` table.
            table: String,
        },
        /// ONNX GatherND: slices of input 0 at the index tuples of input 1.
        GatherNd {
            /// Leading dimensions shared by data and indices.
            batch_dims: i64,
        },
        /// Element-wise comparison with broadcasting; boolean result.
        Compare {
            /// The comparison.
            cmp: CmpOp,
        },
        /// Element-wise boolean connective with broadcasting.
        Logic {
            /// The connective.
            logic: LogicOp,
        },
        /// Element-wise boolean negation.
        Not,
        /// Element-wise choice: input 1 where input 0 is true, else input 2 (broadcasting).
        Where,
        /// Element-wise maximum of any number of inputs with broadcasting.
        Max,
        /// Element-wise minimum of any number of inputs with broadcasting.
        Min,
        /// Sum over the given axes.
        ReduceSum {
            /// Reduced axes (empty = all).
            axes: Vec<i64>,
            /// Keep reduced axes as size 1.
            keepdims: bool,
        },
        /// Broadcasts the input to a shape (ONNX Expand: the shape and the input's shape
        /// broadcast together).
        Expand {
            /// The target shape.
            shape: Vec<i64>,
        },
        /// The 1-D sequence start, start + delta, … below limit (inputs: start, limit, delta).
        Range,
        /// A tensor of the shape given by its 1-D integer input, filled with one value.
        ConstantOfShape {
            /// The fill value.
            value: f64,
            /// Its element type.
            dtype: DType,
        },
        /// Converts the element type.
        Cast {
            /// Target element type.
            to: DType,
        },
        /// The shape of the input as a 1-D i64 tensor (dimensions `start..end`).
        Shape {
            /// First dimension.
            start: i64,
            /// One past the last dimension (`None` = rank).
            end: Option<i64>,
        },
        /// QONNX `Quant` (IntQuant): q = clamp(x / scale + zero_point) to the integer range of
        /// `bit_width` bits (`signed`, `narrow`), rounded by `rounding`, and y = (q − zero_point)
        /// · scale; scale and zero point broadcast to x (per tensor or per channel). A signed
        /// 1-bit quantizer gives ±1 (x / scale + zero_point ≥ 0 → +1) without clamping or
        /// rounding, as qonnx computes it. All in float32, in qonnx's order of operations.
        Quant {
            /// Key of the float scale.
            scale: String,
            /// Key of the float zero point (same shape rules as the scale).
            zero_point: String,
            /// Key of the one-element float bit width.
            bit_width: String,
            /// Signed integer range.
            signed: bool,
            /// Narrow range: no most negative code (signed), no largest code (unsigned).
            narrow: bool,
            /// How scaled values round.
            rounding: RoundingMode,
        },
        /// QONNX `BipolarQuant`: y = (x ≥ 0 ? 1 : −1) · scale.
        BipolarQuant {
            /// Key of the float scale (broadcasts to x).
            scale: String,
        },
        /// QONNX `Trunc` (version 2): q = round_half_even(x / scale + zero_point) / t with
        /// t = 2^round(log2(output_scale / scale)), clamped to the `output_bit_width` range
        /// (`signed`, `narrow`), rounded by `rounding`, and y = (q − zero_point / t) ·
        /// output_scale; float32, in qonnx's order of operations.
        Trunc {
            /// Key of the input scale.
            scale: String,
            /// Key of the input zero point.
            zero_point: String,
            /// Key of the input bit width (recorded; the computation does not use it).
            input_bit_width: String,
            /// Key of the output scale.
            output_scale: String,
            /// Key of the one-element output bit width.
            output_bit_width: String,
            /// Signed output range.
            signed: bool,
            /// Narrow output range.
            narrow: bool,
            /// How the truncated value rounds.
            rounding: RoundingMode,
        },
        /// ONNX `QuantizeLinear`: codes = saturate(round_half_even(x / scale) + zero_point) in
        /// the range of `to`, per tensor (one-element scale) or per axis (1-D scale along
        /// `axis`); the codes are an int64 tensor.
        QuantizeLinear {
            /// Key of the float scale.
            scale: String,
            /// Key of the integer zero point (same shape as the scale); none is 0.
            zero_point: Option<String>,
            /// The axis of a per-axis scale.
            axis: i64,
            /// The codes' integer type (saturation range).
            to: QuantIntType,
        },
        /// A linear layer on integer codes with real scales, raised from a quantized model's
        /// `DequantizeLinear → linear → [Relu] → QuantizeLinear` (`raise_qdq`): the input codes
        /// `x` mean `(x − x_zero_point) · x_scale`, the output codes
        /// `saturate(round_half_even(v / y_scale) + y_zero_point)` in the range of `y_type`, where
        /// `v` is the linear (then relu) of the real input. Interpreted as exactly that in
        /// float32; quantized execution and hardware compute it in integers
        /// ([`crate::quant::requant`]). Codes in and out are integer tensors.
        Qlinear {
            /// Key of the real `[out, in]` weight (its codes and per-channel grid are its
            /// [`crate::MaseGraph::qweights`] entry).
            weight: String,
            /// Key of the real `[out]` bias, if any (codes on the sum's grid in `qweights` when the
            /// model quantized it).
            bias: Option<String>,
            /// The input codes' integer type.
            x_type: QuantIntType,
            /// The input codes' scale.
            x_scale: f32,
            /// The input codes' zero point.
            x_zero_point: i64,
            /// The output codes' scale.
            y_scale: f32,
            /// The output codes' zero point.
            y_zero_point: i64,
            /// The output codes' integer type (saturation range).
            y_type: QuantIntType,
            /// Relu before the output quantizer.
            relu: bool,
        },
        /// ONNX `DequantizeLinear`: y = (codes − zero_point) · scale in float32, per tensor or
        /// per axis; the codes are an integer tensor.
        DequantizeLinear {
            /// The codes' integer type in the model (ONNX export writes it).
            codes: QuantIntType,
            /// Key of the float scale.
            scale: String,
            /// Key of the integer zero point (same shape as the scale); none is 0.
            zero_point: Option<String>,
            /// The axis of a per-axis scale.
            axis: i64,
        },
    }
}

impl OpKind {
    /// The fixed facts of an op kind: its MASE name (`common.mase_op`), the torch.fx node kind
    /// and the MASE type (`common.mase_type`) of a node with it. One line per op, so a new op is
    /// one line here.
    fn facts(self) -> (&'static str, NodeKind, MaseType) {
        use MaseType::{BuiltinFunc as B, ImplicitFunc as I, Module as M, ModuleRelatedFunc as R};
        use NodeKind::{CallFunction as F, CallMethod as Me, CallModule as Mo};
        match self {
            OpKind::Placeholder => ("placeholder", NodeKind::Placeholder, MaseType::Placeholder),
            OpKind::Output => ("output", NodeKind::Output, MaseType::Output),
            OpKind::Constant => ("constant", NodeKind::GetAttr, MaseType::GetAttr),
            OpKind::Linear => ("linear", Mo, M),
            OpKind::Matmul => ("matmul", F, B),
            OpKind::Relu => ("relu", F, R),
            OpKind::Gelu => ("gelu", F, R),
            OpKind::Softmax => ("softmax", F, R),
            OpKind::LayerNorm => ("layer_norm", Mo, M),
            OpKind::Add => ("add", F, B),
            OpKind::Sub => ("sub", F, B),
            OpKind::Mul | OpKind::MulScalar => ("mul", F, B),
            OpKind::Div => ("div", F, B),
            OpKind::Pow => ("pow", F, B),
            OpKind::Sqrt => ("sqrt", F, B),
            OpKind::Erf => ("erf", F, B),
            OpKind::Tanh => ("tanh", F, B),
            OpKind::ReduceMean => ("mean", F, B),
            OpKind::Reshape => ("reshape", Me, I),
            OpKind::Transpose => ("transpose", Me, I),
            OpKind::Flatten => ("flatten", Me, I),
            OpKind::Dropout => ("dropout", F, R),
            OpKind::Identity => ("identity", F, I),
            OpKind::Unsqueeze => ("unsqueeze", Me, I),
            OpKind::Squeeze => ("squeeze", Me, I),
            OpKind::Concat => ("cat", F, I),
            OpKind::Slice => ("slice", F, I),
            OpKind::Gather => ("gather", F, I),
            OpKind::Embedding => ("embedding", Mo, M),
            OpKind::GatherNd => ("gather_nd", F, I),
            OpKind::Compare => ("compare", F, B),
            OpKind::Logic => ("logical", F, B),
            OpKind::Not => ("not", F, B),
            OpKind::Where => ("where", F, B),
            OpKind::Max => ("max", F, B),
            OpKind::Min => ("min", F, B),
            OpKind::ReduceSum => ("sum", F, B),
            OpKind::Expand => ("expand", Me, I),
            OpKind::Range => ("range", F, B),
            OpKind::ConstantOfShape => ("constant_of_shape", F, B),
            OpKind::Cast => ("cast", Me, I),
            OpKind::Shape => ("shape", Me, I),
            OpKind::Quant => ("quant", F, B),
            OpKind::BipolarQuant => ("bipolar_quant", F, B),
            OpKind::Trunc => ("trunc", F, B),
            OpKind::QuantizeLinear => ("quantize_linear", F, B),
            OpKind::DequantizeLinear => ("dequantize_linear", F, B),
            OpKind::Qlinear => ("qlinear", Mo, M),
        }
    }

    /// The MASE op name (`common.mase_op`), e.g. `linear`, `layer_norm`.
    pub fn mase_op(self) -> &'static str {
        self.facts().0
    }

    /// Every distinct MASE op name, in [`Op`] declaration order (`mul` once: it names both
    /// [`Op::Mul`] and [`Op::MulScalar`]).
    pub fn mase_ops() -> Vec<&'static str> {
        let mut v: Vec<&'static str> = Vec::new();
        for k in OpKind::ALL {
            if !v.contains(&k.mase_op()) {
                v.push(k.mase_op());
            }
        }
        v
    }
}

impl Op {
    /// The MASE op name (`common.mase_op`), e.g. `linear`, `layer_norm`.
    pub fn mase_op(&self) -> &'static str {
        self.kind().mase_op()
    }

    /// The torch.fx node kind a node with this op has.
    pub fn node_kind(&self) -> NodeKind {
        self.kind().facts().1
    }

    /// The MASE type (`common.mase_type`) of a node with this op.
    pub fn mase_type(&self) -> MaseType {
        self.kind().facts().2
    }

    /// Names of the weights this op owns (keys of [`crate::MaseGraph::weights`]), in the order
    /// MASE names its parameters (`weight`, then `bias`).
    pub fn weight_names(&self) -> Vec<(&'static str, &str)> {
        match self {
            Op::Constant { tensor } => vec![("value", tensor.as_str())],
            Op::Linear { weight, bias }
            | Op::Qlinear { weight, bias, .. }
            | Op::LayerNorm { weight: Some(weight), bias, .. } => {
                let mut v = vec![("weight", weight.as_str())];
                if let Some(b) = bias {
                    v.push(("bias", b.as_str()));
                }
                v
            }
            Op::LayerNorm { weight: None, bias: Some(b), .. } => vec![("bias", b.as_str())],
            Op::Embedding { table } => vec![("weight", table.as_str())],
            Op::Quant { scale, zero_point, bit_width, .. } => {
                vec![
                    ("scale", scale.as_str()),
                    ("zero_point", zero_point.as_str()),
                    ("bit_width", bit_width.as_str()),
                ]
            }
            Op::BipolarQuant { scale } => vec![("scale", scale.as_str())],
            Op::Trunc { scale, zero_point, input_bit_width, output_scale, output_bit_width, .. } => vec![
                ("scale", scale.as_str()),
                ("zero_point", zero_point.as_str()),
                ("input_bit_width", input_bit_width.as_str()),
                ("output_scale", output_scale.as_str()),
                ("output_bit_width", output_bit_width.as_str()),
            ],
            Op::QuantizeLinear { scale, zero_point, .. } | Op::DequantizeLinear { scale, zero_point, .. } => {
                let mut v = vec![("scale", scale.as_str())];
                if let Some(z) = zero_point {
                    v.push(("zero_point", z.as_str()));
                }
                v
            }
            // Every other op owns no tensor: ops name their weights in fields, matched above.
            _ => vec![],
        }
    }
}
