//! Tensors: weights, constants and values flowing through the float interpreter.
//!
//! Float data is `f32` (the accuracy reference, as the models are trained in f32); integer data
//! is `i64` (ONNX shape tensors and indices, and quantized values whose format lives in
//! metadata). Both are row-major `ndarray` arrays of dynamic rank.

use ndarray::{ArrayD, IxDyn};
use serde::{Deserialize, Serialize};

use crate::fixed::FixedFormat;

/// Element type of a [`Tensor`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    /// 32-bit IEEE float.
    F32,
    /// 64-bit signed integer.
    I64,
}

/// A dense tensor of f32 or i64.
#[derive(Debug, Clone, PartialEq)]
pub enum Tensor {
    /// Float data.
    F32(ArrayD<f32>),
    /// Integer data.
    I64(ArrayD<i64>),
}

impl Tensor {
    /// The shape, outermost dimension first.
    pub fn shape(&self) -> &[usize] {
        match self {
            Tensor::F32(a) => a.shape(),
            Tensor::I64(a) => a.shape(),
        }
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        match self {
            Tensor::F32(_) => DType::F32,
            Tensor::I64(_) => DType::I64,
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

    /// The data as f32 (integers are converted).
    pub fn to_f32(&self) -> ArrayD<f32> {
        match self {
            Tensor::F32(a) => a.clone(),
            Tensor::I64(a) => a.mapv(|v| v as f32),
        }
    }

    /// The data as i64 (floats are truncated toward zero, as ONNX Cast does).
    pub fn to_i64(&self) -> ArrayD<i64> {
        match self {
            Tensor::F32(a) => a.mapv(|v| v as i64),
            Tensor::I64(a) => a.clone(),
        }
    }

    /// Borrow the float data, if this is a float tensor.
    pub fn as_f32(&self) -> Option<&ArrayD<f32>> {
        match self {
            Tensor::F32(a) => Some(a),
            Tensor::I64(_) => None,
        }
    }

    /// Borrow the integer data, if this is an integer tensor.
    pub fn as_i64(&self) -> Option<&ArrayD<i64>> {
        match self {
            Tensor::I64(a) => Some(a),
            Tensor::F32(_) => None,
        }
    }
}

/// A quantized tensor: integer codes and the fixed-point format that gives them meaning
/// (value = code × 2^-frac).
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
}

impl QuantTensor {
    /// A tensor whose elements all have `format`.
    pub fn per_tensor(format: FixedFormat, codes: ArrayD<i64>) -> Self {
        QuantTensor { format, codes, channel_frac: None }
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

    /// The real values the codes stand for.
    pub fn dequantize(&self) -> ArrayD<f32> {
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
