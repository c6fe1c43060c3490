//! The sweep driver: selects the points (and the shard's slice), takes finished ones from the
//! cache, evaluates the rest in parallel (rayon, `jobs` threads) behind a progress bar, marks
//! the Pareto front and writes the outputs; [`merge`] joins shards' outputs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;

use crate::cache::{point_key, Cache, Entry, Key};
use crate::config::SweepConfig;
use crate::error::{io, Result, SweepError};
use crate::eval::{Context, Data};
use crate::output::{
    base_table, front_sorted, mark_front, write_all, write_csvs, write_point_config, Document, Meta,
    PointResult,
};
use crate::pnr::place_and_route;
use crate::point::{selected, Shard};
use crate::steps::{StepCounts, StepRun, StepTally, Steps};
use crate::synth::synthesize;
use crate::verify::verify;

/// Everything a sweep needs.
#[derive(Debug, Clone)]
pub struct SweepOptions {
    /// The ONNX model.
    pub model: PathBuf,
    /// The parsed `SWEEP.toml`.
    pub config: SweepConfig,
    /// Input shapes, calibration, evaluation and label files.
    pub data: Data,
    /// Worker threads (at least 1).
    pub jobs: usize,
    /// Run only this slice of the points.
    pub shard: Option<Shard>,
    /// Simulate this many Pareto points under Verilator (best accuracy first).
    pub verify: usize,
    /// Synthesize this many Pareto points with Yosys (best accuracy first).
    pub synth: usize,
    /// Place and route this many Pareto points on an ECP5 (best accuracy first): Fmax and
    /// inferences per second in `points.csv`.
    pub pnr: usize,
    /// The output directory.
    pub out_dir: PathBuf,
    /// Show a progress bar on stderr (the CLI sets it when stderr is a terminal).
    pub progress: bool,
    /// The point cache (`out_dir/cache` when `None`); the shards of one sweep may share one.
    pub cache_dir: Option<PathBuf>,
    /// Run only the expensive steps of this front point (0-based, best accuracy first) and
    /// write nothing but their records ([`crate::steps`]): every point must be in the cache
    /// already. A later run without it collects the records (how a cluster spreads the steps).
    pub front_rank: Option<usize>,
}

/// What a sweep did.
#[derive(Debug, Clone)]
pub struct SweepOutcome {
    /// The sweep's description (as written to `points.json`).
    pub meta: Meta,
    /// The points of this run (this shard's, with `--shard`), in index order.
    pub points: Vec<PointResult>,
    /// Points evaluated in this run.
    pub evaluated: usize,
    /// Points taken from the cache.
    pub cached: usize,
    /// The expensive steps' results.
    pub steps: Steps,
}

fn absolute(p: &Path) -> String {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()).to_string_lossy().into_owned()
}

fn specs(m: &BTreeMap<String, Vec<PathBuf>>) -> Vec<String> {
    m.iter().flat_map(|(k, fs)| fs.iter().map(move |f| format!("{k}={}", absolute(f)))).collect()
}

/// The sweep's description and content key (see [`crate::cache`]).
pub fn describe(opts: &SweepOptions, onnx: &[u8], product: usize, selected: usize) -> Result<Meta> {
    let cfg = &opts.config;
    let base_config =
        toml::to_string(&cfg.base_table).map_err(|e| SweepError::Config(format!("{}: {e}", cfg.origin)))?;
    let axes = serde_json::json!({
        "width": cfg.axes.width, "weight_width": cfg.axes.weight_width,
        "weight_granularity": cfg.axes.weight_granularity.as_ref().map(|g| format!("{g:?}")),
        "multiplier_budget": cfg.axes.multiplier_budget, "target_ii": cfg.axes.target_ii,
        "samples": cfg.axes.samples, "seed": cfg.axes.seed,
        "ops": cfg.axes.ops.iter().map(|(k, v)| (k.clone(), v.width.clone())).collect::<BTreeMap<_, _>>(),
    });
    let input_shapes: Vec<String> = opts
        .data
        .input_shapes
        .iter()
        .map(|(k, d)| format!("{k}={}", d.iter().map(|x| x.to_string()).collect::<Vec<_>>().join("x")))
        .collect();
    let mut key = Key::default();
    key.field("mase-sweep").field(env!("CARGO_PKG_VERSION")).field(onnx).field(input_shapes.join(";"));
    key.field(&base_config);
    let calib =
        if opts.data.calibrate.is_empty() { &cfg.base.calibration.inputs } else { &opts.data.calibrate };
    for (k, files) in [("calibrate", calib), ("eval", &opts.data.eval)] {
        key.field(k);
        for (name, fs) in files {
            key.field(name);
            for f in fs {
                key.file(f)?;
            }
        }
    }
    if let Some(l) = &opts.data.labels {
        key.field("labels").file(l)?;
    }
    Ok(Meta {
        model: absolute(&opts.model),
        input_shapes,
        calibrate: specs(&opts.data.calibrate),
        eval: specs(&opts.data.eval),
        labels: opts.data.labels.as_deref().map(absolute),
        base_config,
        axes: axes.to_string(),
        key: key.hex(),
        product,
        selected,
    })
}

/// Runs a sweep and writes its outputs into `opts.out_dir`.
pub fn run_sweep(opts: &SweepOptions) -> Result<SweepOutcome> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.jobs.max(1))
        .build()
        .map_err(|e| SweepError::Config(format!("-j {}: {e}", opts.jobs)))?;
    pool.install(|| sweep_on(opts))
}

/// [`run_sweep`] on the current thread pool.
fn sweep_on(opts: &SweepOptions) -> Result<SweepOutcome> {
    let onnx = std::fs::read(&opts.model).map_err(io("reading", &opts.model))?;
    let all = selected(&opts.config);
    let product = crate::point::product(&opts.config).len();
    let meta = describe(opts, &onnx, product, all.len())?;
    let points = match opts.shard {
        Some(s) => s.slice(all),
        None => all,
    };
    let cache = Cache::new(opts.cache_dir.clone().unwrap_or_else(|| opts.out_dir.join("cache")));
    let keys: Vec<String> = points.iter().map(|p| point_key(&meta.key, p)).collect();
    let mut entries: Vec<Option<Entry>> = keys.iter().map(|k| cache.get(k)).collect();
    let missing: Vec<usize> = (0..points.len()).filter(|&i| entries[i].is_none()).collect();
    if let (Some(r), Some(&i)) = (opts.front_rank, missing.first()) {
        return Err(SweepError::Config(format!(
            "front rank {r}: {} of the sweep's points are not in the cache ({} is the first); run the points first (the sweep without a front rank, or its shards with the same cache)",
            missing.len(),
            points[i].id(product)
        )));
    }
    let ops: Vec<String> = opts.config.axes.ops.keys().cloned().collect();
    let origin = opts.model.display().to_string();
    let mut ctx: Option<Context> = None;
    if !missing.is_empty() {
        let c = Context::prepare(&onnx, &origin, &opts.config.base, &opts.data, &ops)?;
        let bar = progress_bar(missing.len(), opts.progress);
        let best: Mutex<Option<(f64, u64, String)>> = Mutex::new(None);
        let total = product;
        let base = base_table(&meta)?;
        let done: Vec<Result<Entry>> = {
            missing
                .par_iter()
                .map(|&i| {
                    let spec = &points[i];
                    let entry = match c.evaluate(spec) {
                        Ok(m) => Entry { metrics: Some(m), error: None },
                        Err(e) => Entry { metrics: None, error: Some(e.to_string()) },
                    };
                    cache.put(&keys[i], &entry)?;
                    // Each worker writes its points' configurations: file creation runs in
                    // parallel with the other workers' evaluation instead of after it.
                    write_point_config(&opts.out_dir, &base, &spec.id(total), spec)?;
                    if let Some(m) = &entry.metrics {
                        let acc = crate::pareto::accuracy(m);
                        let mut b = best.lock().expect("no panics while holding the lock");
                        let better =
                            b.as_ref().is_none_or(|(a, lut, _)| acc > *a || (acc == *a && m.lut < *lut));
                        if better {
                            *b = Some((acc, m.lut, spec.id(total)));
                            bar.set_message(format!("best {} acc {acc:.4} {} LUT", spec.id(total), m.lut));
                        }
                    }
                    bar.inc(1);
                    Ok(entry)
                })
                .collect()
        };
        bar.finish_and_clear();
        for (&i, e) in missing.iter().zip(done) {
            entries[i] = Some(e?);
        }
        ctx = Some(c);
    }
    let mut results: Vec<PointResult> = points
        .iter()
        .zip(entries)
        .map(|(spec, e)| {
            let e = e.expect("every point evaluated or cached");
            PointResult {
                id: spec.id(product),
                spec: spec.clone(),
                metrics: e.metrics,
                error: e.error,
                pareto: false,
            }
        })
        .collect();
    mark_front(&mut results);
    let collect = opts.front_rank.is_none();
    if collect {
        let written = missing.iter().map(|&i| points[i].index).collect();
        write_all(&opts.out_dir, &meta, &results, &written)?;
    }
    let mut steps = Steps::default();
    let counts = StepCounts { verify: opts.verify, synth: opts.synth, pnr: opts.pnr };
    if counts.ranks() > 0 {
        let c = match ctx {
            Some(c) => c,
            None => Context::prepare(&onnx, &origin, &opts.config.base, &opts.data, &ops)?,
        };
        let front = front_sorted(&results);
        // The first k front points, or with a front rank that point alone if it is among them.
        let take = |k: usize| -> Vec<&PointResult> {
            match opts.front_rank {
                None => front[..front.len().min(k)].to_vec(),
                Some(r) => front.get(r).filter(|_| r < k).into_iter().copied().collect(),
            }
        };
        let mut run = StepRun { out_dir: &opts.out_dir, sweep_key: &meta.key, tally: StepTally::default() };
        if opts.verify > 0 {
            steps.verified = verify(&c, &take(opts.verify), &mut run);
        }
        if opts.synth > 0 {
            steps.synthesized = synthesize(&c, &take(opts.synth), &mut run);
        }
        if opts.pnr > 0 {
            steps.routed = place_and_route(&c, &take(opts.pnr), &mut run);
        }
        steps.tally = run.tally;
        if collect {
            for (on, name, json) in [
                (opts.verify > 0, "verify.json", to_json(&steps.verified)),
                (opts.synth > 0, "synth.json", to_json(&steps.synthesized)),
                (opts.pnr > 0, "pnr.json", to_json(&steps.routed)),
            ] {
                if on {
                    let p = opts.out_dir.join(name);
                    std::fs::write(&p, json).map_err(io("writing", &p))?;
                }
            }
            if opts.pnr > 0 {
                write_csvs(&opts.out_dir, &results, &steps.routed)?;
            }
        }
    }
    Ok(SweepOutcome {
        meta,
        evaluated: missing.len(),
        cached: points.len() - missing.len(),
        points: results,
        steps,
    })
}

fn to_json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string_pretty(v).expect("reports serialize") + "\n"
}

fn progress_bar(n: usize, show: bool) -> ProgressBar {
    let target = if show { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() };
    let bar = ProgressBar::with_draw_target(Some(n as u64), target);
    if let Ok(style) =
        ProgressStyle::with_template("{bar:30} {pos}/{len} points  {per_sec}  eta {eta}  {msg}")
    {
        bar.set_style(style);
    }
    bar
}

/// Merges the outputs of shards (directories a sweep wrote) into `out`: the points of all of
/// them (an index given twice must carry the same result), the front recomputed, the caches
/// joined. Every directory must hold the same sweep (its `points.json` description).
pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<Document> {
    let mut meta: Option<(Meta, &Path)> = None;
    let mut points: BTreeMap<usize, PointResult> = BTreeMap::new();
    if dirs.is_empty() {
        return Err(SweepError::Config("merge: give at least one sweep directory".into()));
    }
    for d in dirs {
        let p = d.join("points.json");
        let text = std::fs::read_to_string(&p).map_err(io("reading", &p))?;
        let doc: Document = serde_json::from_str(&text)
            .map_err(|e| SweepError::Config(format!("{}: not a sweep's points.json: {e}", p.display())))?;
        match &meta {
            None => meta = Some((doc.sweep.clone(), d)),
            Some((m, first)) if *m != doc.sweep => {
                return Err(SweepError::Config(format!(
                    "merge: {} holds a different sweep than {} (model, data, configuration or axes differ)",
                    d.display(),
                    first.display()
                )))
            }
            Some(_) => {}
        }
        for mut pt in doc.points {
            pt.pareto = false;
            if let Some(old) = points.get(&pt.spec.index) {
                if *old != pt {
                    return Err(SweepError::Config(format!(
                        "merge: point {} differs between the directories (one of them is stale)",
                        pt.id
                    )));
                }
            }
            points.insert(pt.spec.index, pt);
        }
    }
    let (meta, _) = meta.expect("at least one directory");
    let mut results: Vec<PointResult> = points.into_values().collect();
    mark_front(&mut results);
    write_all(out, &meta, &results, &Default::default())?;
    let cache = Cache::new(out.join("cache"));
    for d in dirs {
        if d.as_path() != out {
            cache.absorb(&d.join("cache"))?;
        }
    }
    Ok(Document { sweep: meta, points: results })
}
