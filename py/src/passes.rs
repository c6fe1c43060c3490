//! Passes from Python: any registered pass by name with a dict of arguments (the TOML table the
//! CLI reads), `add_software_metadata` on in-memory arrays, and the project emission. Every one
//! updates the graph in place only when it succeeds (it runs on a copy) and returns the info map.

use mase_emit::calibration::{split_inferences, Sample};
use mase_ir::pass::run_step;
use mase_ir::passes::add_software_metadata::{software_stats, StatsOptions};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use crate::convert::{json_to_py, table_from_py, tensor_from_py_as, to_py};
use crate::error::{mase_err, IntoPy};
use crate::graph::PyGraph;

/// Names and descriptions of every registered pass (software and hardware), in order.
#[pyfunction]
pub fn pass_list() -> Vec<(String, String)> {
    mase_emit::pass_manager().passes().map(|p| (p.name().to_string(), p.description().to_string())).collect()
}

/// Runs the registered pass `name` with `args` (a dict shaped like the pass's TOML table) on
/// `mg`, which is updated in place; returns the pass's info map.
#[pyfunction]
#[pyo3(signature = (mg, name, args=None))]
pub fn run_pass<'py>(
    py: Python<'py>,
    mg: &Bound<'py, PyGraph>,
    name: &str,
    args: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let args = table_from_py(args, &format!("arguments of pass '{name}'"))?;
    let pm = mase_emit::pass_manager();
    let pass = pm.find(name).py()?;
    let graph = mg.borrow().graph.clone();
    let (graph, info) = mase_ir::pass::run_pass(pass, graph, &args).py()?;
    mg.borrow_mut().graph = graph;
    json_to_py(py, &serde_json::Value::Object(info))
}

/// The samples of `inputs` (graph input name → one array holding one or more inferences
/// stacked along the batch axis, or a list of such arrays).
pub(crate) fn samples_of(graph: &mase_ir::MaseGraph, inputs: &Bound<'_, PyDict>) -> PyResult<Vec<Sample>> {
    let names: Vec<String> = graph.input_ids().into_iter().map(|i| graph.node(i).name.clone()).collect();
    for k in inputs.keys() {
        let k: String = k.extract()?;
        if !names.contains(&k) {
            return Err(mase_err(format!(
                "add_software_metadata: '{k}' is not a graph input (inputs: {})",
                names.join(", ")
            )));
        }
    }
    let mut per_input: Vec<(String, Vec<mase_ir::Tensor>)> = Vec::new();
    for id in graph.input_ids() {
        let node = graph.node(id);
        let v = inputs.get_item(&node.name)?.ok_or_else(|| {
            mase_err(format!(
                "add_software_metadata: no calibration data for graph input '{}' (give every input: {})",
                node.name,
                names.join(", ")
            ))
        })?;
        let shape =
            node.out_shape().ok_or_else(|| mase_err(node.error("graph input has no shape")))?.to_vec();
        let arrays: Vec<Bound<'_, PyAny>> = if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
            v.try_iter()?.collect::<PyResult<_>>()?
        } else {
            vec![v]
        };
        let mut all = Vec::new();
        for (i, a) in arrays.iter().enumerate() {
            let what = format!("calibration data for '{}' [{i}]", node.name);
            let dtype = graph.input_dtype(&node.name).unwrap_or(mase_ir::tensor::DType::F32);
            let t = tensor_from_py_as(a, &what, dtype)?;
            all.extend(split_inferences(&what, &t, &shape).py()?);
        }
        per_input.push((node.name.clone(), all));
    }
    let n = per_input.first().map_or(0, |p| p.1.len());
    if let Some((name, t)) = per_input.iter().find(|p| p.1.len() != n) {
        return Err(mase_err(format!(
            "add_software_metadata: '{name}' has {} inferences, '{}' has {n}",
            t.len(),
            per_input[0].0
        )));
    }
    Ok((0..n).map(|k| per_input.iter().map(|(name, ts)| (name.clone(), ts[k].clone())).collect()).collect())
}

/// `add_software_metadata` on arrays in memory: `inputs` maps each graph input to calibration
/// data; `quantile`, `n_sigma`, `max_samples` as the pass's TOML arguments.
#[pyfunction]
#[pyo3(signature = (mg, inputs, quantile=None, n_sigma=None, max_samples=None))]
pub fn add_software_metadata<'py>(
    py: Python<'py>,
    mg: &Bound<'py, PyGraph>,
    inputs: &Bound<'py, PyDict>,
    quantile: Option<f64>,
    n_sigma: Option<f64>,
    max_samples: Option<usize>,
) -> PyResult<Bound<'py, PyAny>> {
    let d = StatsOptions::default();
    let opts = StatsOptions {
        quantile: quantile.unwrap_or(d.quantile),
        n_sigma: n_sigma.unwrap_or(d.n_sigma),
        max_samples: max_samples.or(d.max_samples),
    };
    let graph = mg.borrow().graph.clone();
    let samples = samples_of(&graph, inputs)?;
    let count = samples.len();
    let (graph, _) = run_step("add_software_metadata", graph, |g| {
        Ok((software_stats(g, &samples, &opts)?, Default::default()))
    })
    .py()?;
    mg.borrow_mut().graph = graph;
    let info = PyDict::new(py);
    info.set_item("samples", count)?;
    Ok(info.into_any())
}

/// Stitches the design of `mg` (after `add_hardware_metadata`) and writes the project into
/// `project_dir` (`top.sv`, `rtl/`, `mem/`, `files.f`, FuseSoC core, `report.json`, README, and
/// the graph under `mase/`); returns `{"project_dir", "top", "files", "report"}`. With `devices`
/// (the `[[hardware.devices]]` entries `partition_devices` ran with), one project per device and
/// the system simulation top. With `clock_mhz` (`[hardware] clock_mhz`) the report and README
/// also give the figures in inferences per second and µs.
#[pyfunction]
#[pyo3(signature = (mg, project_dir, top="top", devices=None, clock_mhz=None))]
pub fn emit_project<'py>(
    py: Python<'py>,
    mg: &Bound<'py, PyGraph>,
    project_dir: std::path::PathBuf,
    top: &str,
    devices: Option<&Bound<'py, PyAny>>,
    clock_mhz: Option<f64>,
) -> PyResult<Bound<'py, PyAny>> {
    // Checked by the configuration's own rule (positive, finite).
    let clock =
        mase_emit::HwConfig { clock_mhz, ..Default::default() }.checked("emit_project").py()?.clock_mhz;
    let g = mg.borrow();
    let design = mase_emit::design_of(&g.graph, top).py()?;
    let devices = match devices.filter(|d| !d.is_none()) {
        Some(d) => {
            let mut t = toml::Table::new();
            t.insert("devices".into(), crate::convert::toml_from_py(d, "devices")?);
            let hw = mase_emit::HwConfig::from_table(&t, "emit_project devices").py()?;
            Some(mase_emit::system::system_of(&g.graph, &design, &hw.devices).py()?)
        }
        None => None,
    };
    let emitted =
        mase_emit::flow::write_emitted(&g.graph, &design, devices.as_ref(), &project_dir, clock).py()?;
    let info = PyDict::new(py);
    info.set_item("project_dir", project_dir)?;
    info.set_item("top", top)?;
    let files: Vec<String> = emitted.files.iter().map(|f| f.to_string_lossy().into_owned()).collect();
    info.set_item("files", files)?;
    info.set_item("report", to_py(py, &emitted.report)?)?;
    Ok(info.into_any())
}
