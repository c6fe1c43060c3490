//! A precompiled header of the force-included runtime header and `verilated.h`, made once per
//! toolchain and flag set and used by every later build without ccache.
//!
//! Every translation unit of a build (the model's and the shim's) starts by parsing
//! `verilated.h`: about 1.2 s of a small component's 2.1 s compile of its model and 1.1 s of
//! the shim's 1.7 s, at `-O1` with GCC. The header does not depend on the design, so the first
//! build of a key leaves a GCC precompiled header (`pch/<key>/mase_pch.h.gch`) and the builds after
//! it force-include `pch/<key>/mase_pch.h` instead of parsing the headers again.
//!
//! The header is compiled with the flags make reports for the model's own compile rules (asked
//! through `--eval` of the generated makefile), so GCC accepts it; builds pass `-Winvalid-pch`,
//! so a header GCC rejects is named in the build log (GCC then reads the text, and the result is
//! the same). `MASE_NO_PCH` turns it off. Not used with ccache (which serves repeated compiles itself and caches a compile
//! that reads a precompiled header only under extra sloppiness settings) nor with a compiler
//! that is not GCC (Clang names and loads precompiled headers differently).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cache;
use crate::error::{Result, SimError};
use crate::shim;
use crate::tool;

/// The force-included header's file name (beside it, the runtime header it includes first).
pub const HEADER: &str = "mase_pch.h";

/// The force-included header: the shim's runtime header first (it redirects `VL_PRINTF` before
/// `verilated.h` is read), then `verilated.h`.
const HEADER_TEXT: &str = "#include \"mase_sim_runtime.h\"\n#include \"verilated.h\"\n";

/// Writes the force-included header and the runtime header it includes into `dir`; returns the
/// header's path.
pub fn write_header(dir: &Path) -> Result<PathBuf> {
    let runtime = dir.join("mase_sim_runtime.h");
    std::fs::write(&runtime, shim::RUNTIME_H).map_err(SimError::io("writing", &runtime))?;
    let header = dir.join(HEADER);
    std::fs::write(&header, HEADER_TEXT).map_err(SimError::io("writing", &header))?;
    Ok(header)
}

/// Whether builds use precompiled headers: not under ccache, only with GCC, and not when
/// `MASE_NO_PCH` is set (every file then parses the headers itself, as with ccache).
pub fn enabled(cxx_version: &str) -> bool {
    std::env::var_os("MASE_NO_PCH").is_none() && !tool::ccache() && !cxx_version.contains("clang")
}

/// Where the header of `key` lives once saved.
fn dir(key: &str) -> Result<PathBuf> {
    Ok(cache::cache_dir()?.join("pch").join(key))
}

/// The saved header of `key` (its precompiled form beside it), if the first build made one.
pub fn saved(key: &str) -> Result<Option<PathBuf>> {
    let d = dir(key)?;
    let header = d.join(HEADER);
    Ok((header.is_file() && d.join(format!("{HEADER}.gch")).is_file()).then_some(header))
}

/// The compile flags make uses for the model's files in the finished build directory `obj`
/// (`make_vars`: the `NAME=value` assignments the build passed to make), without the
/// force-include (the header compiled here is the one force-included) and dependency output.
fn model_flags(obj: &Path, make_vars: &[String]) -> Result<Vec<String>> {
    let v = tool::verilator()?;
    let make = tool::make()?;
    // A recipe line's `$(info)` is expanded once every makefile has been read, and prints
    // without a shell, so no flag is re-quoted on the way.
    let rule = "mase-pch-flags:\n\t$(info MASE_PCH_FLAGS $(OPT_FAST) $(CXXFLAGS) $(CPPFLAGS))\n\t@:";
    let mut cmd = Command::new(&make);
    cmd.current_dir(obj).args(["-f", "Vmase.mk"]).args(make_vars).arg(format!("--eval={rule}"));
    cmd.arg("mase-pch-flags");
    if let Some(root) = &v.root {
        cmd.env("VERILATOR_ROOT", root);
    }
    let out = cmd.output().map_err(|e| SimError::Command { cmd: make.clone(), detail: e.to_string() })?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line =
        text.lines().find_map(|l| l.strip_prefix("MASE_PCH_FLAGS ")).ok_or_else(|| SimError::Command {
            cmd: format!("{make} -f Vmase.mk mase-pch-flags (in {})", obj.display()),
            detail: format!("{}\n{}", out.status, String::from_utf8_lossy(&out.stderr)),
        })?;
    let mut flags = Vec::new();
    let mut words = line.split_whitespace();
    while let Some(w) = words.next() {
        match w {
            "-include" => {
                words.next();
            }
            "-MMD" | "-MD" | "-MP" => {}
            _ => flags.push(w.to_string()),
        }
    }
    Ok(flags)
}

/// Precompiles the header for `key` with the flags of the finished build in `obj`, unless it is
/// saved already. Built in a temp dir and renamed, so a build never sees a partial header, and
/// a second build saving at once keeps the first one's.
pub fn save(key: &str, obj: &Path, make_vars: &[String]) -> Result<()> {
    let saved_dir = dir(key)?;
    if saved_dir.is_dir() {
        return Ok(());
    }
    let parent = saved_dir.parent().expect("pch dir has a parent");
    std::fs::create_dir_all(parent).map_err(SimError::io("creating", parent))?;
    let _lock = cache::lock(&parent.join(format!("{key}.lock")))?;
    if saved_dir.is_dir() {
        return Ok(());
    }
    let flags = model_flags(obj, make_vars)?;
    let (cxx, _) = tool::compiler()?;
    cache::publish_dir(&saved_dir, |tmp| {
        let header = write_header(tmp)?;
        let out = Command::new(cxx)
            .current_dir(obj)
            .args(&flags)
            .args(["-x", "c++-header"])
            .arg(&header)
            .arg("-o")
            .arg(tmp.join(format!("{HEADER}.gch")))
            .output()
            .map_err(|e| SimError::Command { cmd: cxx.clone(), detail: e.to_string() })?;
        if out.status.success() {
            return Ok(());
        }
        Err(SimError::Command {
            cmd: format!("{cxx} -x c++-header {HEADER} (the precompiled header)"),
            detail: format!("{}\n{}", out.status, tool::tail(&String::from_utf8_lossy(&out.stderr), 4000)),
        })
    })
}
