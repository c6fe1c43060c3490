//! The cocotb testbench of an emitted project (`tb/test_top.py`, `tb/Makefile`), and the
//! design digest that ties golden vectors to the project files they were computed for.
//!
//! The testbench is a fixed body (`cocotb/test_top.py`) headed by the design's port list, so a
//! team with a cocotb flow (cocotb ≥ 2.0, Verilator ≥ 5.036) can run the emitted top against
//! the vectors `mase sim --write-vectors` writes; the Makefile includes cocotb's own makefiles
//! and reads the sources from `files.f`.

use std::fmt::Write as _;
use std::path::Path;

use mase_ir::{Error, Result};
use sha2::{Digest, Sha256};

use crate::design::{Design, PortDir};
use crate::report::Report;

/// The testbench body; `# @DESIGN@` is replaced by the design's constants.
const TEST_BODY: &str = include_str!("cocotb/test_top.py");
/// The Makefile; `@TOP@` is replaced by the top module's name.
const MAKEFILE: &str = include_str!("cocotb/Makefile");

/// `"input"` / `"output"`: how the testbench and `vectors.json` name a direction.
pub fn direction_name(d: PortDir) -> &'static str {
    match d {
        PortDir::Input => "input",
        PortDir::Output => "output",
    }
}

/// A Python string literal (JSON's escapes are Python's too).
fn py_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("{s:?}"))
}

/// `tb/test_top.py` for design `d` with report `r` (its rate bounds the cycle budget).
pub fn test_top_py(d: &Design, r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "TOP = {}", py_str(&d.top));
    let _ = writeln!(
        s,
        "# Stream ports of the top: element format (width, fraction bits, signedness), elements per\n\
         # beat and tensor shape per inference (streamed row-major, last dimension fastest)."
    );
    let _ = writeln!(s, "PORTS = {{");
    for p in &d.ports {
        let shape: Vec<String> = p.shape.iter().map(|x| x.to_string()).collect();
        let _ = writeln!(
            s,
            "    {}: {{\"tensor\": {}, \"direction\": \"{}\", \"width\": {}, \"frac\": {}, \"signed\": {}, \
             \"lanes\": {}, \"shape\": [{}]}},",
            py_str(&p.name),
            py_str(&p.tensor),
            direction_name(p.dir),
            p.format.width,
            p.format.frac,
            if p.format.signed { "True" } else { "False" },
            p.lanes,
            shape.join(", ")
        );
    }
    let _ = writeln!(s, "}}");
    let _ = write!(
        s,
        "# Cycles per inference of the slowest instance (cost model).\nMODEL_II_CYCLES = {}",
        r.ii_cycles
    );
    TEST_BODY.replacen("# @DESIGN@", &s, 1)
}

/// `tb/Makefile` for design `d`.
pub fn makefile(d: &Design) -> String {
    MAKEFILE.replacen("@TOP@", &d.top, 1)
}

/// SHA-256 (hex) over the files a simulation of the project reads: the sources `files.f` lists,
/// in its order, then `mem/*.mem` by name. Each file adds its relative path, a NUL byte, its
/// length in decimal, a NUL byte and its bytes. `tb/test_top.py` computes the same to refuse
/// vectors written for another emit.
pub fn design_digest(dir: &Path) -> Result<String> {
    let list_path = dir.join("files.f");
    let list = std::fs::read_to_string(&list_path).map_err(|e| Error::io(&list_path, e))?;
    let mut names: Vec<String> =
        list.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_string).collect();
    let mem = dir.join("mem");
    if mem.is_dir() {
        let mut mems = Vec::new();
        for entry in std::fs::read_dir(&mem).map_err(|e| Error::io(&mem, e))? {
            let entry = entry.map_err(|e| Error::io(&mem, e))?;
            let name = entry.file_name().to_string_lossy().to_string();
            if name.ends_with(".mem") {
                mems.push(format!("mem/{name}"));
            }
        }
        mems.sort();
        names.extend(mems);
    }
    let mut h = Sha256::new();
    for name in &names {
        let path = dir.join(name);
        let data = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
        h.update(name.as_bytes());
        h.update([0]);
        h.update(data.len().to_string().as_bytes());
        h.update([0]);
        h.update(&data);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::design_digest;

    #[test]
    fn digest_covers_the_sources_and_memories_only() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("rtl")).unwrap();
        std::fs::create_dir_all(d.join("mem")).unwrap();
        std::fs::write(d.join("files.f"), "rtl/a.sv\ntop.sv\n").unwrap();
        std::fs::write(d.join("rtl/a.sv"), "module a; endmodule\n").unwrap();
        std::fs::write(d.join("top.sv"), "module top; endmodule\n").unwrap();
        std::fs::write(d.join("mem/w.mem"), "01\n").unwrap();
        let base = design_digest(d).unwrap();
        assert_eq!(base.len(), 64);
        std::fs::write(d.join("README.md"), "not simulated\n").unwrap();
        std::fs::write(d.join("mem/notes.txt"), "not a memory\n").unwrap();
        assert_eq!(design_digest(d).unwrap(), base);
        std::fs::write(d.join("mem/w.mem"), "02\n").unwrap();
        let changed = design_digest(d).unwrap();
        assert_ne!(changed, base);
        std::fs::write(d.join("mem/w.mem"), "01\n").unwrap();
        std::fs::write(d.join("top.sv"), "module top; wire x; endmodule\n").unwrap();
        assert_ne!(design_digest(d).unwrap(), base);
        std::fs::remove_file(d.join("rtl/a.sv")).unwrap();
        assert!(design_digest(d).unwrap_err().to_string().contains("a.sv"));
    }
}
