//! Yosys figures of a component instance, cached by content: a synthesis of the same script over
//! the same sources with the same Yosys gives the same netlist, and the provisioned WebAssembly
//! Yosys takes seconds to minutes per instance.
//!
//! The key hashes the Yosys (its version line and path), the script (which names the sources and the
//! content-addressed memory images, [`cache::mem_file`]) and every source's contents, so an edit
//! to the RTL or a different Yosys is a miss. Entries are `synth/<key>.stat`: the `stat` output
//! the report is read from, written whole (temp file, then rename) under a per-key lock, so two
//! processes synthesizing one instance run Yosys once.

use std::path::{Path, PathBuf};

use crate::cache::{self, Hasher};
use crate::error::{Result, SimError};
use crate::yowasp::Yosys;

/// The `stat` output of `script` (a Yosys script reading `sources`) under `yosys`, from the
/// cache's `synth/` or from `run` (see [`stat_in`]).
pub fn stat_of(
    yosys: &Yosys,
    script: &str,
    sources: &[PathBuf],
    run: impl FnOnce(&str) -> Result<String>,
) -> Result<(String, bool)> {
    let tool = format!("{}\n{}", yosys.version, yosys.path.display());
    stat_in(&cache::cache_dir()?.join("synth"), &tool, script, sources, run)
}

/// The `stat` output of `script` (reading `sources`) under the Yosys `tool` (its identity: version
/// and path), from `dir` or from `run` (which runs Yosys on the script and returns its `stat`
/// output), then stored in `dir`. The flag is whether it came from `dir`.
pub fn stat_in(
    dir: &Path,
    tool: &str,
    script: &str,
    sources: &[PathBuf],
    run: impl FnOnce(&str) -> Result<String>,
) -> Result<(String, bool)> {
    let mut h = Hasher::default();
    h.field("yosys stat v1").field(tool).field(script);
    for src in sources {
        let text = std::fs::read(src).map_err(SimError::io("reading source", src))?;
        h.field(src.to_string_lossy().as_bytes()).field(text);
    }
    let key = h.hex();
    std::fs::create_dir_all(dir).map_err(SimError::io("creating", dir))?;
    let entry = dir.join(format!("{key}.stat"));
    if let Ok(text) = std::fs::read_to_string(&entry) {
        return Ok((text, true));
    }
    let _lock = cache::lock(&dir.join(format!("{key}.lock")))?;
    if let Ok(text) = std::fs::read_to_string(&entry) {
        return Ok((text, true));
    }
    let text = run(script)?;
    cache::write_whole(&entry, text.as_bytes())?;
    Ok((text, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeat_is_served_from_the_cache_and_an_edit_or_another_yosys_is_not() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let src = dir.path().join("m.sv");
        std::fs::write(&src, "module m; endmodule\n").expect("writing a source");
        let script = format!("read_verilog -sv {}\nsynth_xilinx -top m\n", src.display());
        let runs = std::cell::Cell::new(0);
        let cache = dir.path().join("synth");
        let stat = |tool: &str| {
            stat_in(&cache, tool, &script, std::slice::from_ref(&src), |s| {
                runs.set(runs.get() + 1);
                Ok(format!("run {} of {} bytes", runs.get(), s.len()))
            })
            .unwrap()
        };
        let (first, hit) = stat("yosys 0.23");
        assert!(!hit && runs.get() == 1, "an empty cache runs Yosys");
        assert_eq!(stat("yosys 0.23"), (first.clone(), true), "a repeat is the stored output");
        assert_eq!(runs.get(), 1);
        assert!(!stat("yosys 0.40").1, "another Yosys is another entry");
        std::fs::write(&src, "module m; wire w; endmodule\n").unwrap();
        let (edited, hit) = stat("yosys 0.23");
        assert!(!hit && edited != first && runs.get() == 3, "an edited source runs Yosys again");
    }
}
