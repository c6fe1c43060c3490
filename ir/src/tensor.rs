//! Tensors: weights, constants and values flowing through the float interpreter.
//!
//! Float data is `f32` (the accuracy reference, as the models are trained in f32); integer data
//! is `i64` (ONNX shape tensors, token ids and indices, and quantized values whose format lives
//! in metadata) or `i32` (models that declare int32 ids); boolean data holds masks and
//! comparison results. All are row-major `ndarray` arrays of dynamic rank.

use ndarray::{ArrayD, IxDyn};
use serde::{Deserialize, Serialize};

use crate::fixed::FixedFormat;

/// Element type of a [`Tensor`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    /// 32-bit IEEE float.
    F32,
    /// 64-bit signed integer.
    I64,
    /// 32-bit signed integer.
    I32,
    /// Boolean.
    Bool,
}

impl DType {
    /// The numpy / ONNX-style name used in messages and in the metadata: `float32`, `int64`,
    /// `int32`, `bool`.
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "float32",
            DType::I64 => "int64",
            DType::I32 => "int32",
            DType::Bool => "bool",
        }
    }

    /// True for the integer types.
    pub fn is_int(self) -> bool {
        matches!(self, DType::I64 | DType::I32)
    }
}

/// A dense tensor of f32, i64, i32 or bool.
#[derive(Debug, Clone, PartialEq)]
pub enum Tensor {
    /// Float data.
    F32(ArrayD<f32>),
    /// 64-bit integer data.
    I64(ArrayD<i64>),
    /// 32-bit integer data.
    I32(ArrayD<i32>),
    /// Boolean data.
    Bool(ArrayD<bool>),
}

/// Applies a generic array expression to a tensor of any element type, keeping the type:
/// `each_dtype!(t, a => a.select(...))`.
#[macro_export]
macro_rules! each_dtype {
    ($t:expr, $a:ident => $body:expr) => {
        match $t {
            $crate::tensor::Tensor::F32($a) => $crate::tensor::Tensor::F32($body),
            $crate::tensor::Tensor::I64($a) => $crate::tensor::Tensor::I64($body),
            $crate::tensor::Tensor::I32($a) => $crate::tensor::Tensor::I32($body),
            $crate::tensor::Tensor::Bool($a) => $crate::tensor::Tensor::Bool($body),
        }
    };
}

impl Tensor {
    /// The shape, outermost dimension first.
    pub fn shape(&self) -> &[usize] {
        match self {
            Tensor::F32(a) => a.shape(),
            Tensor::I64(a) => a.shape(),
            Tensor::I32(a) => a.shape(),
            Tensor::Bool(a) => a.shape(),
        }
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        match self {
            Tensor::F32(_) => DType::F32,
            Tensor::I64(_) => DType::I64,
            Tensor::I32(_) => DType::I32,
            Tensor::Bool(_) => DType::Bool,
        }
    }

    /// A tensor of zeros (false for bool) of the given type.
    pub fn zeros(dtype: DType, shape: &[usize]) -> Self {
        match dtype {
            DType::F32 => Tensor::F32(ArrayD::zeros(IxDyn(shape))),
            DType::I64 => Tensor::I64(ArrayD::zeros(IxDyn(shape))),
            DType::I32 => Tensor::I32(ArrayD::zeros(IxDyn(shape))),
            DType::Bool => Tensor::Bool(ArrayD::from_elem(IxDyn(shape), false)),
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.shape().iter().product()
    }

    /// True when the tensor has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A float tensor of zeros.
    pub fn zeros_f32(shape: &[usize]) -> Self {
        Tensor::F32(ArrayD::zeros(IxDyn(shape)))
    }

    /// A float tensor from a shape and row-major data; `None` if the sizes disagree.
    pub fn from_f32(shape: &[usize], data: Vec<f32>) -> Option<Self> {
        ArrayD::from_shape_vec(IxDyn(shape), data).ok().map(Tensor::F32)
    }

    /// An integer tensor from a shape and row-major data; `None` if the sizes disagree.
    pub fn from_i64(shape: &[usize], data: Vec<i64>) -> Option<Self> {
        ArrayD::from_shape_vec(IxDyn(shape), data).ok().map(Tensor::I64)
    }

    /// The data as f32 (integers are converted, booleans are 0 and 1).
    pub fn to_f32(&self) -> ArrayD<f32> {
        match self {
            Tensor::F32(a) => a.clone(),
            Tensor::I64(a) => a.mapv(|v| v as f32),
            Tensor::I32(a) => a.mapv(|v| v as f32),
            Tensor::Bool(a) => a.mapv(|v| f32::from(u8::from(v))),
        }
    }

    /// The data as f64 (exact for every element type but i64 beyond 2^53).
    pub fn to_f64(&self) -> ArrayD<f64> {
        match self {
            Tensor::F32(a) => a.mapv(f64::from),
            Tensor::I64(a) => a.mapv(|v| v as f64),
            Tensor::I32(a) => a.mapv(f64::from),
            Tensor::Bool(a) => a.mapv(|v| f64::from(u8::from(v))),
        }
    }

    /// The data as i64 (floats are truncated toward zero, as ONNX Cast does; booleans are 0
    /// and 1).
    pub fn to_i64(&self) -> ArrayD<i64> {
        match self {
            Tensor::F32(a) => a.mapv(|v| v as i64),
            Tensor::I64(a) => a.clone(),
            Tensor::I32(a) => a.mapv(i64::from),
            Tensor::Bool(a) => a.mapv(i64::from),
        }
    }

    /// The integer data widened to i64, if this is an integer tensor (i64 or i32).
    pub fn int_values(&self) -> Option<ArrayD<i64>> {
        match self {
            Tensor::I64(a) => Some(a.clone()),
            Tensor::I32(a) => Some(a.mapv(i64::from)),
            Tensor::F32(_) | Tensor::Bool(_) => None,
        }
    }

    /// Borrow the float data, if this is a float tensor.
    pub fn as_f32(&self) -> Option<&ArrayD<f32>> {
        match self {
            Tensor::F32(a) => Some(a),
            _ => None,
        }
    }

    /// Borrow the i64 data, if this is an i64 tensor.
    pub fn as_i64(&self) -> Option<&ArrayD<i64>> {
        match self {
            Tensor::I64(a) => Some(a),
            _ => None,
        }
    }

    /// Borrow the boolean data, if this is a bool tensor.
    pub fn as_bool(&self) -> Option<&ArrayD<bool>> {
        match self {
            Tensor::Bool(a) => Some(a),
            _ => None,
        }
    }

    /// The row-major index of the first NaN or infinity, if any (always `None` for non-float
    /// data).
    pub fn first_non_finite(&self) -> Option<usize> {
        self.as_f32().and_then(|a| a.iter().position(|v| !v.is_finite()))
    }
}

/// A real grid that is not a power of two: codes `q` along `axis` index `i` mean
/// `(q − zero_point[i]) · scale[i]` (one entry each for a per-tensor grid, then `axis` is 0), as
/// ONNX `DequantizeLinear` and QONNX `Quant` with a float scale define them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Affine {
    /// The scale of each index of `axis` (or one for the whole tensor), positive float32.
    pub scale: Vec<f32>,
    /// The zero point of each index of `axis` (or one), a code.
    pub zero_point: Vec<i64>,
    /// The axis the scales run along (0 for one scale).
    pub axis: usize,
}

impl Affine {
    /// The scale and zero point of index `i` of the axis (the only ones of a per-tensor grid).
    pub fn channel(&self, i: usize) -> (f32, i64) {
        let i = if self.scale.len() == 1 { 0 } else { i };
        (self.scale[i], self.zero_point[i])
    }
}

/// A quantized tensor: integer codes and the fixed-point format that gives them meaning
/// (value = code × 2^-frac), or, with [`QuantTensor::affine`], codes of that format (fraction 0)
/// on a real grid.
#[derive(Debug, Clone, PartialEq)]
pub struct QuantTensor {
    /// The format of every element; with per-channel fractions, the finest of them.
    pub format: FixedFormat,
    /// The integer codes, in the same shape as the float tensor they quantize.
    pub codes: ArrayD<i64>,
    /// Per-channel weights: the fraction width of each index of axis 0 (row `o`'s codes mean
    /// `code × 2^-channel_frac[o]`); `None` when every element has `format.frac`. See
    /// [`crate::quant::channel`].
    pub channel_frac: Option<Vec<i32>>,
    /// Codes on a real grid with a scale that is not a power of two and a zero point (the
    /// model's own integer weights of a QDQ or float-scale QONNX export): `format` is then the
    /// codes' integer type at fraction 0, and only [`QuantTensor::dequantize`] gives values.
    pub affine: Option<Affine>,
}

impl QuantTensor {
    /// A tensor whose elements all have `format`.
    pub fn per_tensor(format: FixedFormat, codes: ArrayD<i64>) -> Self {
        QuantTensor { format, codes, channel_frac: None, affine: None }
    }

    /// Codes of the integer type `format` (fraction 0) on the real grid `affine`.
    pub fn on_grid(format: FixedFormat, codes: ArrayD<i64>, affine: Affine) -> Self {
        QuantTensor { format, codes, channel_frac: None, affine: Some(affine) }
    }

    /// The tensor when its codes are fixed point (`code × 2^-frac`), `None` for codes on an
    /// [`Affine`] grid: the guard of every consumer that computes with the codes directly.
    pub fn fixed(&self) -> Option<&Self> {
        self.affine.is_none().then_some(self)
    }

    /// The fraction width of the elements of row `o` (axis 0).
    pub fn frac_of_row(&self, o: usize) -> i32 {
        self.channel_frac.as_ref().map_or(self.format.frac, |f| f[o])
    }

    /// The codes at the one fraction `format.frac` (row `o` shifted left by `frac − frac_o`): the
    /// exact integers the hardware multiplies after its per-channel alignment.
    pub fn aligned_codes(&self) -> ArrayD<i64> {
        let Some(fracs) = &self.channel_frac else { return self.codes.clone() };
        let mut c = self.codes.clone();
        for (o, mut row) in c.axis_iter_mut(ndarray::Axis(0)).enumerate() {
            let s = self.format.frac - fracs[o];
            row.mapv_inplace(|x| x << s);
        }
        c
    }

    /// The real values the codes stand for (on an affine grid `(q − z) · s` in float32, as
    /// `DequantizeLinear` computes them).
    pub fn dequantize(&self) -> ArrayD<f32> {
        if let Some(a) = &self.affine {
            if a.scale.len() == 1 {
                return self.codes.mapv(|q| (q - a.zero_point[0]) as f32 * a.scale[0]);
            }
            let mut v = ArrayD::<f32>::zeros(self.codes.raw_dim());
            let ax = ndarray::Axis(a.axis);
            for (i, (mut out, q)) in v.axis_iter_mut(ax).zip(self.codes.axis_iter(ax)).enumerate() {
                let (s, z) = a.channel(i);
                ndarray::Zip::from(&mut out).and(&q).for_each(|o, &q| *o = (q - z) as f32 * s);
            }
            return v;
        }
        let mut v = crate::quant::dequantize(&self.codes, &self.format);
        if let Some(fracs) = &self.channel_frac {
            for (o, mut row) in v.axis_iter_mut(ndarray::Axis(0)).enumerate() {
                let scale = 2f64.powi(self.format.frac - fracs[o]) as f32;
                row.mapv_inplace(|x| x * scale);
            }
        }
        v
    }
}
