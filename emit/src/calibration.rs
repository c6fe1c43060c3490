//! Calibration data for the flow's statistics: `.npy` files per graph input, each holding one
//! or more inferences stacked along the batch axis (as `mase sim --input` reads them), split
//! into per-inference samples.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use mase_ir::tensor::DType;
use mase_ir::{Error, MaseGraph, Result, Tensor};

/// One inference's inputs by graph input name.
pub type Sample = HashMap<String, Tensor>;

/// Splits `data` (any shape whose element count is a whole number of inferences of `shape`)
/// into one tensor of `shape` per inference; `what` names the data in errors.
pub fn split_inferences(what: &str, data: &Tensor, shape: &[usize]) -> Result<Vec<Tensor>> {
    let per: usize = shape.iter().product();
    let total = data.len();
    if per == 0 || total == 0 || !total.is_multiple_of(per) {
        return Err(Error::Config(format!(
            "{what}: {total} elements (shape {:?}) is not a whole number of inferences of shape {shape:?}",
            data.shape()
        )));
    }
    // Each inference keeps the file's element type (token ids stay integers).
    Ok((0..total / per)
        .map(|k| {
            mase_ir::each_dtype!(data, a => {
                let chunk: Vec<_> = a.iter().skip(k * per).take(per).cloned().collect();
                ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(shape), chunk).expect("chunk length is the shape's size")
            })
        })
        .collect())
}

/// Reads the files of every graph input and returns the samples in order. Every graph input
/// needs files, every name must be a graph input, and all inputs must hold the same number of
/// inferences; errors name the file or input and list the graph's inputs.
pub fn load_samples(graph: &MaseGraph, inputs: &BTreeMap<String, Vec<PathBuf>>) -> Result<Vec<Sample>> {
    let names: Vec<String> = graph.input_ids().into_iter().map(|i| graph.node(i).name.clone()).collect();
    let listed = names.join(", ");
    // An input may be named as in the ONNX file too (`x.461` for the IR's `x_461`).
    let mut by_input: BTreeMap<&str, Vec<PathBuf>> = BTreeMap::new();
    for (k, files) in inputs {
        let name = graph.input_name_for(k).ok_or_else(|| {
            Error::Config(format!(
                "calibration data for '{k}', which is not a graph input (inputs: {listed})"
            ))
        })?;
        by_input.entry(name).or_default().extend(files.iter().cloned());
    }
    let inputs = by_input;
    let mut per_input: Vec<(String, Vec<Tensor>)> = Vec::new();
    for id in graph.input_ids() {
        let node = graph.node(id);
        let files = inputs.get(node.name.as_str()).filter(|f| !f.is_empty()).ok_or_else(|| {
            Error::Config(format!(
                "no calibration data for graph input '{}' (give every input: {listed})",
                node.name
            ))
        })?;
        let shape = node.out_shape().ok_or_else(|| node.error("graph input has no shape"))?;
        let mut all = Vec::new();
        for f in files {
            let t = mase_ir::npy::read_npy_as(f, graph.input_dtype(&node.name).unwrap_or(DType::F32))?;
            all.extend(split_inferences(&format!("calibration data {}", f.display()), &t, shape)?);
        }
        per_input.push((node.name.clone(), all));
    }
    let n = per_input.first().map_or(0, |p| p.1.len());
    if let Some((name, t)) = per_input.iter().find(|p| p.1.len() != n) {
        return Err(Error::Config(format!(
            "calibration data: graph input '{name}' has {} inferences but '{}' has {n}",
            t.len(),
            per_input[0].0
        )));
    }
    Ok((0..n).map(|k| per_input.iter().map(|(name, t)| (name.clone(), t[k].clone())).collect()).collect())
}
