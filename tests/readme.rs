//! The README stays true to the code: its component table is the registry's, and it lists every
//! registered pass.

use std::process::Command;

fn readme() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).expect("README.md")
}

#[test]
fn component_table_matches_the_registry() {
    let out = Command::new(env!("CARGO_BIN_EXE_mase")).args(["components", "--markdown"]).output().unwrap();
    assert!(out.status.success());
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(
        readme().contains(&table),
        "README's component table is out of date; regenerate it with `mase components --markdown`:\n{table}"
    );
}

#[test]
fn readme_names_every_pass_and_both_commands() {
    let text = readme();
    for p in mase_emit::pass_manager().passes() {
        assert!(text.contains(p.name()), "README does not mention pass {}", p.name());
    }
    assert!(text.contains("cargo run --release -- demo") && text.contains("cargo test"));
}
