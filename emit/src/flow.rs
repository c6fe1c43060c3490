//! The whole flow in one call: ONNX import → analysis passes → quantization → hardware passes →
//! stitching → project files. `mase flow` and `mase demo` use it.
//!
//! The flow configuration (FLOW.toml) has three optional parts:
//! - `[passes.quantize]`: a quantize configuration (the `quantize` pass's MASE shape). When it is
//!   absent, `auto_precision` chooses formats from calibration statistics instead, with the
//!   arguments in `[passes.auto_precision]` (defaults: 16-bit activations, 8-bit weights and
//!   biases, min/max range);
//! - `[calibration]`: `samples` (default 4) seeded pseudo-random inputs (sums of uniforms,
//!   roughly unit variance) feed the statistics when no calibration files are given;
//! - `[hardware]`: see [`crate::config`].

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::time::Instant;

use mase_ir::onnx::{import_bytes, ImportOptions};
use mase_ir::pass::{run_step, PassInfo};
use mase_ir::passes::add_software_metadata::{software_stats, StatsOptions};
use mase_ir::passes::auto_precision::{auto_precision, parse_args};
use mase_ir::{Error, MaseGraph, Result, Tensor};
use rand::{Rng, SeedableRng};

use crate::config::HwConfig;
use crate::design::Design;
use crate::project::{write_project, Emitted};

/// What the flow produced.
#[derive(Debug)]
pub struct Flow {
    /// The float graph after the analysis passes.
    pub float_graph: MaseGraph,
    /// The quantized graph with hardware metadata.
    pub graph: MaseGraph,
    /// The stitched design.
    pub design: Design,
    /// What was written.
    pub emitted: Emitted,
    /// Info maps of the passes, by pass name.
    pub info: PassInfo,
    /// Milliseconds per step: import, passes, quantize, hardware, emit.
    pub times_ms: Vec<(&'static str, f64)>,
}

/// Seeded inputs for every graph input: sums of four uniforms scaled to about unit variance.
pub fn seeded_inputs(graph: &MaseGraph, seed: u64) -> Result<HashMap<String, Tensor>> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut inputs = HashMap::new();
    for id in graph.input_ids() {
        let node = graph.node(id);
        let shape = node.out_shape().ok_or_else(|| node.error("graph input has no shape"))?;
        let n: usize = shape.iter().product();
        let data: Vec<f32> =
            (0..n).map(|_| (0..4).map(|_| rng.gen::<f32>() - 0.5).sum::<f32>() * 1.7).collect();
        let t = Tensor::from_f32(shape, data).ok_or_else(|| node.error("input shape"))?;
        inputs.insert(node.name.clone(), t);
    }
    Ok(inputs)
}

fn table<'a>(t: &'a toml::Table, path: &[&str]) -> Result<Option<&'a toml::Table>> {
    let mut cur = t;
    for (i, k) in path.iter().enumerate() {
        match cur.get(*k) {
            None => return Ok(None),
            Some(toml::Value::Table(x)) => cur = x,
            Some(other) => {
                return Err(Error::Config(format!(
                    "[{}] must be a table, got {}",
                    path[..=i].join("."),
                    other.type_str()
                )))
            }
        }
    }
    Ok(Some(cur))
}

/// The float graph, the quantized graph, the pass info maps and the step times (ms).
pub type Quantized = (MaseGraph, MaseGraph, PassInfo, Vec<(&'static str, f64)>);

/// Imports, analyses and quantizes a model as the flow configuration says (no hardware yet).
pub fn quantized_graph(
    onnx: &[u8],
    origin: &str,
    input_shapes: &BTreeMap<String, Vec<usize>>,
    config: &toml::Table,
    calibration: Option<&[HashMap<String, Tensor>]>,
) -> Result<Quantized> {
    for k in config.keys() {
        if !["passes", "calibration", "hardware"].contains(&k.as_str()) {
            return Err(Error::Config(format!("{origin}: unknown section [{k}]; expected [passes.quantize], [passes.auto_precision], [calibration], [hardware]")));
        }
    }
    let mut times = Vec::new();
    let t = Instant::now();
    let opts = ImportOptions { input_shapes: input_shapes.clone(), raise: true };
    let graph = import_bytes(onnx, origin, &opts)?;
    times.push(("import", t.elapsed().as_secs_f64() * 1e3));
    let t = Instant::now();
    let chain = ["init_metadata", "add_common_metadata", "remove_dropout", "validate"];
    let (graph, mut info) = crate::pass_manager().run(graph, &chain, &toml::Table::new())?;
    times.push(("passes", t.elapsed().as_secs_f64() * 1e3));
    let t = Instant::now();
    let qgraph = if let Some(q) = table(config, &["passes", "quantize"])? {
        let (g, i) = run_step("quantize", graph.clone(), |g| mase_ir::passes::quantize::quantize(g, q))?;
        info.insert("quantize".into(), i.into());
        g
    } else {
        let empty = toml::Table::new();
        let args = table(config, &["passes", "auto_precision"])?.unwrap_or(&empty);
        let mut args = args.clone();
        args.entry("width").or_insert(toml::Value::Integer(16));
        args.entry("weight_width").or_insert(toml::Value::Integer(8));
        args.entry("bias_width").or_insert(toml::Value::Integer(8));
        let auto = parse_args(&args)?;
        let samples = match calibration {
            Some(s) => s.to_vec(),
            None => {
                let n = match table(config, &["calibration"])?.and_then(|c| c.get("samples")) {
                    Some(v) => v.as_integer().filter(|n| *n > 0).ok_or_else(|| {
                        Error::Config(format!("{origin}: [calibration] samples must be a positive integer"))
                    })? as u64,
                    None => 4,
                };
                (0..n).map(|s| seeded_inputs(&graph, 10 + s)).collect::<Result<_>>()?
            }
        };
        let (g, i) = run_step("auto_precision", graph.clone(), |g| {
            auto_precision(software_stats(g, &samples, &StatsOptions::default())?, &auto)
        })?;
        info.insert("auto_precision".into(), i.into());
        g
    };
    times.push(("quantize", t.elapsed().as_secs_f64() * 1e3));
    Ok((graph, qgraph, info, times))
}

/// Runs the whole flow and writes the project into `dir`. Relative paths in the configuration
/// (EXTERNAL manifests) start from `config_dir`.
pub fn run_flow(
    onnx: &[u8],
    origin: &str,
    input_shapes: &BTreeMap<String, Vec<usize>>,
    config: &toml::Table,
    calibration: Option<&[HashMap<String, Tensor>]>,
    config_dir: Option<&Path>,
    dir: &Path,
) -> Result<Flow> {
    let mut hw = HwConfig::from_table(
        &table(config, &["hardware"])?.cloned().unwrap_or_default(),
        &format!("{origin} [hardware]"),
    )?;
    hw.base_dir = config_dir.map(Path::to_path_buf);
    let (float_graph, qgraph, mut info, mut times) =
        quantized_graph(onnx, origin, input_shapes, config, calibration)?;
    let t = Instant::now();
    let (graph, hinfo) = run_step("add_hardware_metadata", qgraph, |g| crate::add_hardware_metadata(g, &hw))?;
    info.insert("add_hardware_metadata".into(), hinfo.into());
    let design = crate::design_of(&graph, hw.top_name())?;
    times.push(("hardware", t.elapsed().as_secs_f64() * 1e3));
    let t = Instant::now();
    let emitted = write_project(&graph, &design, dir)?;
    times.push(("emit", t.elapsed().as_secs_f64() * 1e3));
    Ok(Flow { float_graph, graph, design, emitted, info, times_ms: times })
}
