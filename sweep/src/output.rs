//! The files a sweep writes: `points.csv`, `points.json`, `pareto.csv`, `pareto.svg`,
//! `README.md` and one flow configuration per point (`configs/<id>.toml`). Everything is a
//! function of the sweep's description ([`Meta`]) and its points in index order, so a sweep
//! merged from shards writes the same bytes as the unsharded one.

use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::config::Rate;
use crate::error::{io, Result, SweepError};
use crate::eval::Metrics;
use crate::pareto;
use crate::point::PointSpec;

/// What a sweep is: the same for every shard of it (checked by merge).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Meta {
    /// The model (absolute path).
    pub model: String,
    /// `--input-shape` values.
    pub input_shapes: Vec<String>,
    /// `--calibrate` values (absolute paths).
    pub calibrate: Vec<String>,
    /// `--eval` values (absolute paths); empty = seeded evaluation inputs.
    pub eval: Vec<String>,
    /// `--labels` (absolute path).
    pub labels: Option<String>,
    /// The flow configuration every point starts from (SWEEP.toml without `[sweep]`, paths
    /// absolute), as TOML.
    pub base_config: String,
    /// The `[sweep]` table as given, as TOML.
    pub axes: String,
    /// Content hash of the model, data and configuration (points are cached under it).
    pub key: String,
    /// Points in the whole product.
    pub product: usize,
    /// Points selected (all, or `samples` of them).
    pub selected: usize,
}

/// One evaluated point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointResult {
    /// Its name (`p` + index).
    pub id: String,
    /// Its settings.
    #[serde(flatten)]
    pub spec: PointSpec,
    /// Figures, when the point could be built.
    pub metrics: Option<Metrics>,
    /// Why it could not (e.g. a multiplier budget below the design's minimum).
    pub error: Option<String>,
    /// On the Pareto front.
    pub pareto: bool,
}

/// The `points.json` document.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Document {
    /// The sweep.
    pub sweep: Meta,
    /// Its points in index order.
    pub points: Vec<PointResult>,
}

/// Sets the `pareto` flags of points.
pub fn mark_front(points: &mut [PointResult]) {
    let flags = pareto::front(&points.iter().map(|p| p.metrics.as_ref()).collect::<Vec<_>>());
    for (p, f) in points.iter_mut().zip(flags) {
        p.pareto = f;
    }
}

/// The front, best accuracy first (then fewer LUTs, fewer DSPs, lower ii, index).
pub fn front_sorted(points: &[PointResult]) -> Vec<&PointResult> {
    let mut f: Vec<&PointResult> = points.iter().filter(|p| p.pareto).collect();
    f.sort_by(|a, b| {
        let (ma, mb) =
            (a.metrics.as_ref().expect("front points have metrics"), b.metrics.as_ref().expect("same"));
        pareto::accuracy(mb)
            .total_cmp(&pareto::accuracy(ma))
            .then(ma.lut.cmp(&mb.lut))
            .then(ma.dsp.cmp(&mb.dsp))
            .then(ma.ii_cycles.cmp(&mb.ii_cycles))
            .then(a.spec.index.cmp(&b.spec.index))
    });
    f
}

fn rate_column(points: &[PointResult]) -> Option<&'static str> {
    points.iter().find_map(|p| p.spec.rate).map(|r| match r {
        Rate::MultiplierBudget(_) => "multiplier_budget",
        Rate::TargetIi(_) => "target_ii",
    })
}

fn op_columns(points: &[PointResult]) -> Vec<String> {
    let mut ops: Vec<String> = points.iter().flat_map(|p| p.spec.ops.keys().cloned()).collect();
    ops.sort();
    ops.dedup();
    ops
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

/// The CSV of points (every column of [`Metrics`], the settings and the flags; with `routed`
/// not empty, `fmax_mhz` and `inferences_per_s` of the points `mase sweep --pnr` placed and
/// routed, empty for the others and for those that failed).
pub fn csv(points: &[PointResult], rows: &[&PointResult], routed: &[crate::pnr::Routed]) -> String {
    let rate = rate_column(points);
    let ops = op_columns(points);
    let mut head = vec![
        "index".to_string(),
        "id".into(),
        "width".into(),
        "weight_width".into(),
        "weight_granularity".into(),
    ];
    head.extend(rate.map(String::from));
    head.extend(ops.iter().map(|o| format!("{o}_width")));
    head.extend(
        [
            "top1",
            "float_top1",
            "cosine",
            "max_abs_error",
            "mean_abs_error",
            "argmax_agreement",
            "ii_cycles",
            "latency_cycles",
            "multipliers",
            "memory_bits",
            "lut",
            "ff",
            "dsp",
            "bram18",
            "lutram",
        ]
        .map(String::from),
    );
    if !routed.is_empty() {
        head.extend(["fmax_mhz".to_string(), "inferences_per_s".into()]);
    }
    head.extend(["pareto".to_string(), "error".into()]);
    let mut out = head.join(",") + "\n";
    for p in rows {
        let mut f = vec![
            p.spec.index.to_string(),
            p.id.clone(),
            p.spec.width.to_string(),
            p.spec.weight_width.to_string(),
            p.spec.weight_granularity.clone(),
        ];
        if rate.is_some() {
            f.push(opt(p.spec.rate.map(|r| match r {
                Rate::MultiplierBudget(v) | Rate::TargetIi(v) => v,
            })));
        }
        f.extend(ops.iter().map(|o| opt(p.spec.ops.get(o))));
        match &p.metrics {
            Some(m) => {
                f.extend([opt(m.top1), opt(m.float_top1)]);
                f.extend(
                    [m.cosine, m.max_abs_error, m.mean_abs_error, m.argmax_agreement].map(|x| x.to_string()),
                );
                let counts = [m.ii_cycles, m.latency_cycles, m.multipliers, m.memory_bits];
                let resources = [m.lut, m.ff, m.dsp, m.bram18, m.lutram];
                f.extend(counts.iter().chain(&resources).map(u64::to_string));
            }
            None => f.extend(std::iter::repeat_n(String::new(), 15)),
        }
        if !routed.is_empty() {
            // A point whose place and route failed has no figures (its error is in pnr.json).
            let r = routed.iter().find(|r| r.id == p.id && r.error.is_none());
            f.push(opt(r.map(|r| format!("{:.3}", r.fmax_mhz))));
            f.push(opt(r.map(|r| format!("{:.1}", r.inferences_per_s))));
        }
        f.push(p.pareto.to_string());
        f.push(csv_field(p.error.as_deref().unwrap_or("")));
        out += &(f.join(",") + "\n");
    }
    out
}

/// The sweep's base flow configuration as a table (what [`point_config`] completes).
pub fn base_table(meta: &Meta) -> Result<toml::Table> {
    meta.base_config.parse().map_err(|e| SweepError::Config(format!("base configuration: {e}")))
}

/// The flow configuration of a point: the `base` ([`base_table`]) with the point's widths
/// (per-op widths as `[passes.auto_precision.ops.<op>]`) and rate.
pub fn point_config(base: &toml::Table, spec: &PointSpec) -> Result<String> {
    let mut t = base.clone();
    let table = |t: &mut toml::Table, k: &str| -> Result<toml::Table> {
        match t.remove(k) {
            None => Ok(toml::Table::new()),
            Some(toml::Value::Table(x)) => Ok(x),
            Some(v) => Err(SweepError::Config(format!("base configuration: [{k}] is a {}", v.type_str()))),
        }
    };
    let mut passes = table(&mut t, "passes")?;
    let mut auto = table(&mut passes, "auto_precision")?;
    auto.insert("width".into(), i64::from(spec.width).into());
    auto.insert("weight_width".into(), i64::from(spec.weight_width).into());
    auto.insert("weight_granularity".into(), spec.weight_granularity.clone().into());
    if !spec.ops.is_empty() {
        let mut ops = table(&mut auto, "ops")?;
        for (op, w) in &spec.ops {
            let mut o = toml::Table::new();
            o.insert("width".into(), i64::from(*w).into());
            ops.insert(op.clone(), o.into());
        }
        auto.insert("ops".into(), ops.into());
    }
    passes.insert("auto_precision".into(), auto.into());
    t.insert("passes".into(), passes.into());
    if let Some(rate) = spec.rate {
        let mut hw = table(&mut t, "hardware")?;
        for k in ["target_ii", "target_ii_per_row", "multiplier_budget"] {
            hw.remove(k);
        }
        let (k, v) = match rate {
            Rate::MultiplierBudget(v) => ("multiplier_budget", v),
            Rate::TargetIi(v) => ("target_ii", v),
        };
        hw.insert(k.into(), (v as i64).into());
        t.insert("hardware".into(), hw.into());
    }
    toml::to_string(&t).map_err(|e| SweepError::Config(format!("point configuration: {e}")))
}

/// The `mase flow` command line that emits a point (run in the sweep's directory).
pub fn flow_command(meta: &Meta, p: &PointResult) -> String {
    let mut c = format!("mase flow {} --config configs/{}.toml", meta.model, p.id);
    for s in &meta.input_shapes {
        let _ = write!(c, " --input-shape {s}");
    }
    for s in &meta.calibrate {
        let _ = write!(c, " --calibrate {s}");
    }
    let _ = write!(c, " -o {}", p.id);
    c
}

fn settings(p: &PointResult) -> String {
    let mut s = format!("w{} ww{}", p.spec.width, p.spec.weight_width);
    if p.spec.weight_granularity == "per_channel" {
        s.push_str(" per-channel");
    }
    match p.spec.rate {
        Some(Rate::MultiplierBudget(b)) => {
            let _ = write!(s, " budget {b}");
        }
        Some(Rate::TargetIi(t)) => {
            let _ = write!(s, " ii≤{t}");
        }
        None => {}
    }
    for (op, w) in &p.spec.ops {
        let _ = write!(s, " {op}:w{w}");
    }
    s
}

/// `README.md`: the sweep, its front, and how to emit any point.
pub fn readme(meta: &Meta, points: &[PointResult]) -> String {
    let front = front_sorted(points);
    let ok = points.iter().filter(|p| p.metrics.is_some()).count();
    let labelled = meta.labels.is_some();
    let metric =
        if labelled { "top-1 accuracy on the labels" } else { "cosine similarity to the float model" };
    let mut s = String::new();
    let _ = writeln!(s, "# Design-space sweep of {}\n", meta.model);
    let _ = writeln!(
        s,
        "{} points ({} of a product of {}); {} built, {} failed (see the `error` column of points.csv). \
         Accuracy is the golden model's (the bit-exact model of the RTL) on {}, as {metric}; \
         rate, multipliers and memory are the cost model's, LUT/FF/DSP/BRAM the resource model's \
         estimates (`mase sweep --synth K` measures front points with Yosys). The Pareto front \
         maximises accuracy and minimises LUTs, DSPs and ii.\n",
        points.len(),
        meta.selected,
        meta.product,
        ok,
        points.len() - ok,
        if meta.eval.is_empty() { "seeded random inputs".to_string() } else { meta.eval.join(", ") },
    );
    if let Some(f) = points.iter().find_map(|p| p.metrics.as_ref().and_then(|m| m.float_top1)) {
        let _ = writeln!(s, "Float model top-1 accuracy: {f:.4}\n");
    }
    let _ = writeln!(s, "## Pareto front ({} points, best accuracy first)\n", front.len());
    let _ = writeln!(
        s,
        "| point | settings | {} | cosine | max abs error | ii (cycles) | latency (cycles) | LUT | FF | DSP | BRAM18 | multipliers |",
        if labelled { "top-1" } else { "accuracy" }
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|---|---|---|");
    for p in &front {
        let m = p.metrics.as_ref().expect("front points have metrics");
        let _ = writeln!(
            s,
            "| {} | {} | {:.4} | {:.6} | {:.3e} | {} | {} | {} | {} | {} | {} | {} |",
            p.id,
            settings(p),
            pareto::accuracy(m),
            m.cosine,
            m.max_abs_error,
            m.ii_cycles,
            m.latency_cycles,
            m.lut,
            m.ff,
            m.dsp,
            m.bram18,
            m.multipliers
        );
    }
    let _ = writeln!(s, "\n## Emitting a point\n");
    let _ = writeln!(
        s,
        "Every point's flow configuration is `configs/<id>.toml`; from this directory, e.g.:\n\n```sh"
    );
    for p in &front {
        let _ = writeln!(s, "{}", flow_command(meta, p));
    }
    let _ = writeln!(s, "```\n\nThen `mase sim <id>` simulates it under Verilator against the golden model.");
    s
}

/// Writes `dir/configs/<id>.toml`, the flow configuration of one point (see [`point_config`];
/// `base` from [`base_table`]), creating the directory if needed.
pub fn write_point_config(dir: &Path, base: &toml::Table, id: &str, spec: &PointSpec) -> Result<()> {
    let configs = dir.join("configs");
    std::fs::create_dir_all(&configs).map_err(io("creating", &configs))?;
    let p = configs.join(format!("{id}.toml"));
    std::fs::write(&p, point_config(base, spec)?).map_err(io("writing", &p))
}

/// Writes `points.csv` and `pareto.csv` into `dir` (see [`csv`] for `routed`).
pub fn write_csvs(dir: &Path, points: &[PointResult], routed: &[crate::pnr::Routed]) -> Result<()> {
    let all: Vec<&PointResult> = points.iter().collect();
    for (name, rows) in [("points.csv", all), ("pareto.csv", front_sorted(points))] {
        let p = dir.join(name);
        std::fs::write(&p, csv(points, &rows, routed)).map_err(io("writing", &p))?;
    }
    Ok(())
}

/// Writes every output file into `dir` (created if needed); the configurations of the points
/// whose index is in `configs_written` are already there ([`write_point_config`]).
pub fn write_all(
    dir: &Path,
    meta: &Meta,
    points: &[PointResult],
    configs_written: &std::collections::BTreeSet<usize>,
) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(io("creating", dir))?;
    let write = |name: &str, text: &str| -> Result<()> {
        let p = dir.join(name);
        std::fs::write(&p, text).map_err(io("writing", &p))
    };
    write_csvs(dir, points, &[])?;
    let doc = Document { sweep: meta.clone(), points: points.to_vec() };
    let json =
        serde_json::to_string_pretty(&doc).map_err(|e| SweepError::Config(format!("points.json: {e}")))?;
    write("points.json", &(json + "\n"))?;
    write("pareto.svg", &crate::svg::plot(points, meta.labels.is_some()))?;
    write("README.md", &readme(meta, points))?;
    let base = base_table(meta)?;
    for p in points.iter().filter(|p| !configs_written.contains(&p.spec.index)) {
        write_point_config(dir, &base, &p.id, &p.spec)?;
    }
    Ok(())
}
