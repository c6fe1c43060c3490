//! Verilator's runtime objects are compiled by the first build into an empty cache and linked,
//! not recompiled, by the next one; the first build also leaves the precompiled runtime header
//! that the next one force-includes, and GCC accepts it; both designs stay bit-exact under
//! stalls. One test in this binary, so pointing `MASE_CACHE_DIR` at a temp dir cannot race
//! another test.

use std::path::{Path, PathBuf};

use mase_sim::bench_component;

/// The build logs in the cache, keyed by nothing but arrival: the builds directory's entries.
fn build_logs(cache: &Path) -> Vec<PathBuf> {
    let builds = cache.join("builds");
    let entries = std::fs::read_dir(&builds).unwrap_or_else(|e| panic!("{}: {e}", builds.display()));
    entries.flatten().map(|e| e.path().join("build.log")).filter(|l| l.is_file()).collect()
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("reading {}: {e}", p.display()))
}

#[test]
fn second_build_links_the_first_builds_runtime_objects() {
    let cache = tempfile::tempdir().expect("temp cache");
    std::env::set_var("MASE_CACHE_DIR", cache.path());
    // Without ccache the first build really compiles the runtime, whatever the machine's ccache holds.
    std::env::set_var("MASE_NO_CCACHE", "1");

    let first = bench_component("add", &[], 4, 1, 0.3).unwrap_or_else(|e| panic!("{e}"));
    let first_logs = build_logs(cache.path());
    assert_eq!(first_logs.len(), 1, "one build so far");
    let second = bench_component("mul", &[], 4, 1, 0.3).unwrap_or_else(|e| panic!("{e}"));
    for r in [&first, &second] {
        assert!(!r.cache_hit, "{}: the cache was empty", r.component);
        assert!(r.bit_exact && r.mismatches == 0, "{}: not bit-exact", r.component);
    }

    let first_log = read(&first_logs[0]);
    assert!(first_log.contains("verilated.cpp"), "the first build compiles the runtime:\n{first_log}");
    let saved = cache.path().join("runtime");
    let sets: Vec<_> = std::fs::read_dir(&saved).expect("runtime objects saved").flatten().collect();
    assert_eq!(sets.len(), 1, "one toolchain and flag set, one saved set");
    let verilated_o = sets[0].path().join("verilated.o");
    assert!(verilated_o.is_file(), "{} missing", verilated_o.display());

    let second_log =
        build_logs(cache.path()).into_iter().find(|l| *l != first_logs[0]).expect("a second build");
    let second_log = read(&second_log);
    assert!(!second_log.contains("verilated.cpp"), "the second build recompiled the runtime:\n{second_log}");
    assert!(
        second_log.contains(&verilated_o.display().to_string()),
        "the second build does not link the saved objects:\n{second_log}"
    );

    let cxx = mase_sim::tool::compiler().unwrap_or_else(|e| panic!("{e}"));
    if mase_sim::pch::enabled(&cxx.1) {
        let header = sets[0]
            .path()
            .parent()
            .unwrap()
            .parent()
            .unwrap()
            .join("pch")
            .join(sets[0].file_name())
            .join(mase_sim::pch::HEADER);
        assert!(
            header.with_extension("h.gch").is_file(),
            "no precompiled header at {}.gch",
            header.display()
        );
        assert!(
            !first_log.contains(&header.display().to_string()),
            "the first build cannot have used a header made after it:\n{first_log}"
        );
        assert!(
            second_log.contains(&format!("-include {}", header.display())),
            "the second build does not force-include the precompiled header:\n{second_log}"
        );
        // GCC names a precompiled header it finds but cannot use under -Winvalid-pch.
        assert!(
            !second_log.contains("[-Winvalid-pch]"),
            "GCC rejected the precompiled header:\n{second_log}"
        );
    }
}
