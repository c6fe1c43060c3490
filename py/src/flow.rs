//! `mase_rs.flow`: import → passes → quantize → hardware passes → project in one call
//! ([`mase_emit::flow::run_flow`]), returning plain Python data.

use std::collections::BTreeMap;
use std::path::PathBuf;

use mase_emit::config::FlowConfig;
use mase_emit::flow::{run_flow, FlowOptions};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::{json_to_py, table_from_py, to_py};
use crate::error::{mase_err, IntoPy};
use crate::graph::PyGraph;

/// Runs the whole flow on an ONNX file and writes the project into `project_dir`. `config` is
/// the flow configuration as a dict (the FLOW.toml shape: `passes.quantize`,
/// `passes.auto_precision`, `calibration`, `hardware`) or a path to a FLOW.toml; `calibrate`
/// maps graph inputs to calibration arrays (one or more inferences stacked along the batch
/// axis, or a list of arrays). Returns `{"project_dir", "files", "report", "info", "warnings",
/// "times_ms", "graph"}` (`graph`: the quantized MaseGraph with hardware metadata).
#[pyfunction]
#[pyo3(signature = (model, project_dir, input_shapes=None, config=None, calibrate=None))]
pub fn flow<'py>(
    py: Python<'py>,
    model: PathBuf,
    project_dir: PathBuf,
    input_shapes: Option<BTreeMap<String, Vec<usize>>>,
    config: Option<&Bound<'py, PyAny>>,
    calibrate: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let origin = model.display().to_string();
    let mut opts = FlowOptions::new(origin.clone(), project_dir.clone());
    opts.input_shapes = input_shapes.unwrap_or_default();
    opts.config = match config {
        Some(c) if c.extract::<PathBuf>().is_ok() && !c.is_instance_of::<PyDict>() => {
            FlowConfig::from_file(&c.extract::<PathBuf>()?).py()?
        }
        other => FlowConfig::from_table(&table_from_py(other, "flow config")?, "flow config", None).py()?,
    };
    let bytes = std::fs::read(&model).map_err(|e| mase_err(format!("reading {origin}: {e}")))?;
    if let Some(cal) = calibrate {
        let import =
            mase_ir::onnx::ImportOptions { input_shapes: opts.input_shapes.clone(), ..Default::default() };
        let mut g = mase_ir::onnx::import_bytes(&bytes, &origin, &import).py()?;
        mase_ir::passes::add_common_metadata::add_common_metadata(&mut g).py()?;
        opts.calibration = Some(crate::passes::samples_of(&g, cal)?);
    }
    let f = run_flow(&bytes, &opts).py()?;
    let out = PyDict::new(py);
    out.set_item("project_dir", project_dir)?;
    let files: Vec<String> = f.emitted.files.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    out.set_item("files", files)?;
    out.set_item("report", to_py(py, &f.emitted.report)?)?;
    out.set_item("info", json_to_py(py, &serde_json::Value::Object(f.info))?)?;
    out.set_item("warnings", f.warnings)?;
    let times = PyDict::new(py);
    for (k, v) in f.times_ms {
        times.set_item(k, v)?;
    }
    out.set_item("times_ms", times)?;
    out.set_item("graph", Py::new(py, PyGraph { graph: f.graph })?)?;
    Ok(out.into_any())
}
