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

/// Every repository path the README and `docs/ARCHITECTURE.md` name in backticks exists, so the
/// docs cannot point a newcomer at a file that moved.
#[test]
fn documented_paths_exist() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let roots =
        ["ir/", "hwlib/", "emit/", "sim/", "src/", "rtl/", "tests/", "examples/", "scripts/", "docs/"];
    for doc in ["README.md", "docs/ARCHITECTURE.md"] {
        let text = std::fs::read_to_string(root.join(doc)).expect(doc);
        for quoted in text.split('`').skip(1).step_by(2) {
            let is_path =
                roots.iter().any(|r| quoted.starts_with(r)) && !quoted.contains(['*', '<', ' ', '{']);
            if is_path {
                assert!(root.join(quoted).exists(), "{doc} names `{quoted}`, which does not exist");
            }
        }
    }
}

/// The "how to add a component" places of the docs are the places the code needs: every
/// registered component has its RTL file and its Rust file under the names the docs give, and
/// its one line in the `registry!` list.
#[test]
fn add_a_component_places_match_the_code() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let list = std::fs::read_to_string(root.join("hwlib/src/components/mod.rs")).unwrap();
    let arch = std::fs::read_to_string(root.join("docs/ARCHITECTURE.md")).unwrap();
    for place in [
        "rtl/mase_<name>.sv",
        "hwlib/src/components/<name>.rs",
        "hwlib/src/components/mod.rs",
        "hwlib/src/binding/ops.rs",
    ] {
        assert!(arch.contains(place) && readme().contains(place), "docs do not name {place}");
    }
    for c in mase_hwlib::registry() {
        let name = c.name();
        assert!(root.join(format!("rtl/mase_{name}.sv")).exists(), "no rtl/mase_{name}.sv");
        assert!(root.join(format!("hwlib/src/components/{name}.rs")).exists(), "no {name}.rs");
        assert!(list.contains(&format!("    {name}::")), "{name} is not in the registry! list");
    }
}
