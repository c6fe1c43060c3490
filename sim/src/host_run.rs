//! Running a whole model around a device: the project's host parts (`host/pre.onnx`,
//! `host/post.onnx`, written by the flow when some node of the model runs on the host) are
//! imported back and executed by the float interpreter, the device in between by the golden
//! model or Verilator ([`crate::design_sim`]).
//!
//! The parts join by tensor name ([`mase_emit::host_project`]): the pre part's outputs are the
//! device's input tensors (and hand-overs to the post part), the post part's inputs the
//! device's output tensors (and those hand-overs).

use std::collections::HashMap;
use std::path::Path;

use mase_ir::onnx::{import_file, ImportOptions};
use mase_ir::quant::AccuracyReport;
use mase_ir::tensor::DType;
use mase_ir::{MaseGraph, Tensor};

use crate::error::{Result, SimError};

/// The host parts of a project.
#[derive(Debug, Clone)]
pub struct Host {
    /// Before the device: the model's inputs → the device's inputs.
    pub pre: MaseGraph,
    /// After the device: the device's outputs → the model's outputs.
    pub post: MaseGraph,
}

/// One inference's tensors by name.
pub type Named = HashMap<String, Tensor>;

fn invalid(msg: impl Into<String>) -> SimError {
    SimError::Invalid(msg.into())
}

/// The host parts of the project in `dir`, when it has them (`host/pre.onnx` and
/// `host/post.onnx`).
pub fn load_host(dir: &Path) -> Result<Option<Host>> {
    let (pre, post) = (dir.join("host").join("pre.onnx"), dir.join("host").join("post.onnx"));
    if !pre.exists() && !post.exists() {
        return Ok(None);
    }
    let load = |p: &Path| import_file(p, &ImportOptions::default()).map_err(|e| invalid(e.to_string()));
    Ok(Some(Host { pre: load(&pre)?, post: load(&post)? }))
}

impl Host {
    /// The model's inputs: name, element type and shape of one inference.
    pub fn inputs(&self) -> Vec<(String, DType, Vec<usize>)> {
        self.pre
            .input_ids()
            .into_iter()
            .map(|i| {
                let n = self.pre.node(i);
                let dtype = self.pre.input_dtype(&n.name).unwrap_or(DType::F32);
                (n.name.clone(), dtype, n.out_shape().map(<[usize]>::to_vec).unwrap_or_default())
            })
            .collect()
    }

    /// The model's output names, in order.
    pub fn output_names(&self) -> Vec<String> {
        (0..self.post.output_values().len()).map(|k| self.post.output_name(k)).collect()
    }

    /// Runs the pre part on one inference of the model's inputs: its outputs by name, with the
    /// model's inputs (the post part may read them too).
    pub fn run_pre(&self, inputs: &Named) -> Result<Named> {
        let outs =
            mase_ir::interp::run_outputs(&self.pre, inputs).map_err(|e| invalid(format!("host pre: {e}")))?;
        let mut named = inputs.clone();
        for (k, t) in outs.into_iter().enumerate() {
            named.insert(self.pre.output_name(k), t);
        }
        Ok(named)
    }

    /// Runs the post part on the named values of one inference (the device's outputs and the
    /// pre part's): the model's outputs, in order.
    pub fn run_post(&self, values: &Named) -> Result<Vec<Tensor>> {
        let needed: Named = self
            .post
            .input_ids()
            .into_iter()
            .map(|i| {
                let name = &self.post.node(i).name;
                values
                    .get(name)
                    .map(|t| (name.clone(), t.clone()))
                    .ok_or_else(|| invalid(format!("host post: no value for its input `{name}`")))
            })
            .collect::<Result<_>>()?;
        mase_ir::interp::run_outputs(&self.post, &needed).map_err(|e| invalid(format!("host post: {e}")))
    }
}

/// The model's outputs of a whole-model run, hardware against float, one entry per inference.
#[derive(Debug, Clone)]
pub struct ModelOutputs {
    /// The model's output names.
    pub names: Vec<String>,
    /// Per inference, the outputs computed from the device's (RTL or golden) outputs.
    pub hardware: Vec<Vec<Tensor>>,
    /// Per inference, the outputs of the float model (pre, the device's float graph, post).
    pub float: Vec<Vec<Tensor>>,
    /// Cosine, errors and argmax agreement of `hardware` against `float`.
    pub accuracy: AccuracyReport,
}

/// Runs the post part on the device's outputs of every inference (`device_out[i]`: the
/// device's output tensors by name, dequantized) and on the float device graph's, and compares.
/// `pre[i]` are the pre part's values of inference `i` ([`Host::run_pre`]).
pub fn model_outputs(
    host: &Host,
    device: &MaseGraph,
    pre: &[Named],
    device_out: &[Named],
) -> Result<ModelOutputs> {
    let mut hardware = Vec::new();
    let mut float = Vec::new();
    for (p, d) in pre.iter().zip(device_out) {
        let mut hw = p.clone();
        hw.extend(d.clone());
        hardware.push(host.run_post(&hw)?);
        let device_inputs: Named = device
            .input_ids()
            .into_iter()
            .filter_map(|i| {
                let name = &device.node(i).name;
                p.get(name).map(|t| (name.clone(), t.clone()))
            })
            .collect();
        let f = mase_ir::interp::run_outputs(device, &device_inputs).map_err(|e| invalid(e.to_string()))?;
        let mut fl = p.clone();
        for (k, t) in f.into_iter().enumerate() {
            fl.insert(device.node(device.output_values()[k]).name.clone(), t);
        }
        float.push(host.run_post(&fl)?);
    }
    let flat = |v: &[Vec<Tensor>]| v.iter().flatten().cloned().collect::<Vec<_>>();
    let accuracy = mase_ir::quant::accuracy(&flat(&float), &flat(&hardware), None)
        .map_err(|e| invalid(e.to_string()))?;
    Ok(ModelOutputs { names: host.output_names(), hardware, float, accuracy })
}
