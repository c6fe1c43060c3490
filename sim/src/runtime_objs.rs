//! Verilator's runtime objects (`verilated.o`, `verilated_threads.o`, and the tracing ones when
//! traced), compiled once per toolchain and flag set and reused by every build.
//!
//! They take about 5.6 s of a small component's 7.4 s cold build (no ccache), and they do not
//! depend on the design: only on Verilator, the compiler, the flags and the runtime header every
//! file is compiled with. The first build saves its objects under `runtime/<key>/` in the cache;
//! later builds link those instead of compiling their own ([`link_args`]).

use std::path::{Path, PathBuf};

use crate::cache::{self, Hasher};
use crate::error::{Result, SimError};
use crate::shim;

/// Whether `name` is one of Verilator's runtime objects (not the design's or the shim's).
fn is_runtime_object(name: &str) -> bool {
    name.starts_with("verilated") && name.ends_with(".o")
}

/// The cache key of the runtime objects: the toolchain and every build argument that is not
/// about the design (`--top-module`, `-G` parameters and the design's sources are left out).
pub fn key(verilator: &str, verilator_bin: &Path, cxx_version: &str, args: &[String]) -> String {
    let mut h = Hasher::default();
    h.field("verilator runtime objects v1").field(shim::RUNTIME_H);
    h.field(verilator).field(verilator_bin.to_string_lossy().as_bytes()).field(cxx_version);
    let mut skip_next = false;
    for a in args {
        if std::mem::take(&mut skip_next) {
            continue;
        }
        if a == "--top-module" {
            skip_next = true;
        } else if !a.starts_with("-G") {
            h.field(a);
        }
    }
    h.hex()
}

/// Where the objects of `key` live once saved.
fn dir(key: &str) -> Result<PathBuf> {
    Ok(cache::cache_dir()?.join("runtime").join(key))
}

/// The saved objects of `key`, sorted (empty when none are saved yet).
pub fn saved(key: &str) -> Result<Vec<PathBuf>> {
    let Ok(entries) = std::fs::read_dir(dir(key)?) else { return Ok(Vec::new()) };
    let mut objs: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| is_runtime_object(&e.file_name().to_string_lossy()))
        .map(|e| e.path())
        .collect();
    objs.sort();
    Ok(objs)
}

/// Verilator arguments that link `objs` instead of compiling the runtime: make's list of runtime
/// objects emptied on its command line (which overrides the generated makefile), and the saved
/// objects passed to the link. No arguments when `objs` is empty (the build compiles its own).
pub fn link_args(objs: &[PathBuf]) -> Vec<String> {
    if objs.is_empty() {
        return Vec::new();
    }
    let mut a = vec!["-MAKEFLAGS".to_string(), "VK_GLOBAL_OBJS=".to_string()];
    for o in objs {
        a.extend(["-LDFLAGS".to_string(), o.display().to_string()]);
    }
    a
}

/// Saves the runtime objects a finished build left in `obj` under `key`, unless saved already.
/// Written into a temp dir and renamed, so a reader never sees a partial set and two builds
/// saving at once leave one complete set.
pub fn save(key: &str, obj: &Path) -> Result<()> {
    let saved = dir(key)?;
    if saved.is_dir() {
        return Ok(());
    }
    let entries = std::fs::read_dir(obj).map_err(SimError::io("listing", obj))?;
    let objs: Vec<_> =
        entries.flatten().filter(|e| is_runtime_object(&e.file_name().to_string_lossy())).collect();
    if objs.is_empty() {
        return Ok(());
    }
    // Losing the race to another build is fine: its set is as good as ours.
    cache::publish_dir(&saved, |tmp| {
        for e in &objs {
            std::fs::copy(e.path(), tmp.join(e.file_name())).map_err(SimError::io("copying", e.path()))?;
        }
        Ok(())
    })
}
