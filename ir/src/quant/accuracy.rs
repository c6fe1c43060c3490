//! Accuracy of quantized against float outputs.
//!
//! Errors and cosine similarity are over all elements of all outputs together (in f64).
//! Argmax is taken over the **last axis** of each output (each row is one prediction; ties
//! go to the first maximum, as numpy's `argmax`). With labels (class indices, shaped like the
//! first output without its last axis, or flat with one entry per row), the accuracy of each
//! run on the first output is reported too.

use serde::Serialize;

use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// Accuracy figures (serialized with these key names by `mase accuracy --json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AccuracyReport {
    /// Largest |quantized - float| over all elements.
    pub max_abs_error: f64,
    /// Mean |quantized - float|.
    pub mean_abs_error: f64,
    /// Cosine similarity of the flattened outputs (1 when both are all zeros).
    pub cosine: f64,
    /// Fraction of rows whose argmax over the last axis agrees.
    pub argmax_agreement: f64,
    /// Fraction of rows the float run classifies as the label says (with labels).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub float_accuracy: Option<f64>,
    /// Fraction of rows the quantized run classifies as the label says (with labels).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quantized_accuracy: Option<f64>,
    /// Number of elements compared.
    pub elements: usize,
    /// Number of rows (argmax decisions) compared.
    pub rows: usize,
}

/// Argmax over the last axis of each row.
fn argmax_rows(data: &[f32], row: usize) -> Vec<usize> {
    data.chunks(row.max(1))
        .map(|r| {
            let mut best = 0;
            for (i, &v) in r.iter().enumerate() {
                if v > r[best] {
                    best = i;
                }
            }
            best
        })
        .collect()
}

/// Compares outputs (see the module documentation). Errors on a different number of outputs,
/// different shapes, or labels that do not fit the first output.
pub fn accuracy(
    float_outs: &[Tensor],
    quant_outs: &[Tensor],
    labels: Option<&Tensor>,
) -> Result<AccuracyReport> {
    if float_outs.len() != quant_outs.len() || float_outs.is_empty() {
        return Err(Error::Invalid(format!(
            "accuracy: {} float outputs and {} quantized outputs; they must be the same non-zero number",
            float_outs.len(),
            quant_outs.len()
        )));
    }
    let (mut max_abs, mut sum_abs, mut dot, mut na, mut nb) = (0.0f64, 0.0f64, 0.0f64, 0.0f64, 0.0f64);
    let (mut elements, mut rows, mut agree) = (0usize, 0usize, 0usize);
    let mut first_argmax = None;
    for (k, (f, q)) in float_outs.iter().zip(quant_outs).enumerate() {
        if f.shape() != q.shape() {
            return Err(Error::Invalid(format!(
                "accuracy: output {k} has shape {:?} in float and {:?} quantized",
                f.shape(),
                q.shape()
            )));
        }
        let (fa, qa) = (f.to_f32(), q.to_f32());
        let fv: Vec<f32> = fa.iter().copied().collect();
        let qv: Vec<f32> = qa.iter().copied().collect();
        for (&a, &b) in fv.iter().zip(&qv) {
            let (a, b) = (f64::from(a), f64::from(b));
            let d = (b - a).abs();
            max_abs = max_abs.max(d);
            sum_abs += d;
            dot += a * b;
            na += a * a;
            nb += b * b;
        }
        elements += fv.len();
        let row = f.shape().last().copied().unwrap_or(1);
        let (af, aq) = (argmax_rows(&fv, row), argmax_rows(&qv, row));
        rows += af.len();
        agree += af.iter().zip(&aq).filter(|(x, y)| x == y).count();
        if k == 0 {
            first_argmax = Some((af, aq, f.shape().to_vec()));
        }
    }
    let cosine = if na == 0.0 && nb == 0.0 {
        1.0
    } else if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    };
    let mut report = AccuracyReport {
        max_abs_error: max_abs,
        mean_abs_error: if elements == 0 { 0.0 } else { sum_abs / elements as f64 },
        cosine,
        argmax_agreement: if rows == 0 { 1.0 } else { agree as f64 / rows as f64 },
        float_accuracy: None,
        quantized_accuracy: None,
        elements,
        rows,
    };
    if let (Some(l), Some((af, aq, shape))) = (labels, first_argmax) {
        let lv: Vec<i64> = match l {
            Tensor::I64(_) | Tensor::I32(_) | Tensor::Bool(_) => l.to_i64().iter().copied().collect(),
            Tensor::F32(a) => {
                let mut v = Vec::with_capacity(a.len());
                for &x in a {
                    if x.fract() != 0.0 || !x.is_finite() {
                        return Err(Error::Invalid(format!("accuracy: label {x} is not a class index")));
                    }
                    v.push(x as i64);
                }
                v
            }
        };
        if lv.len() != af.len() {
            return Err(Error::Invalid(format!(
                "accuracy: {} labels for {} rows (output shape {shape:?}; labels are one class index per row of the last axis)",
                lv.len(),
                af.len()
            )));
        }
        let classes = shape.last().copied().unwrap_or(1) as i64;
        if let Some(bad) = lv.iter().find(|&&c| c < 0 || c >= classes) {
            return Err(Error::Invalid(format!(
                "accuracy: label {bad} is not a class index in 0..{classes}"
            )));
        }
        let hits = |p: &[usize]| {
            p.iter().zip(&lv).filter(|(p, l)| **p as i64 == **l).count() as f64 / lv.len() as f64
        };
        report.float_accuracy = Some(hits(&af));
        report.quantized_accuracy = Some(hits(&aq));
    }
    Ok(report)
}
