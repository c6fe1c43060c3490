//! Module headers read with sv-parser: every library file agrees with the component registry,
//! a user module with comments, macros, `ifdef, an include, a package import and a non-ANSI port
//! list parses to the right parameters and ports, and malformed files give errors naming the file
//! and line.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use mase_emit::sv::{find_module, parse_file, HeaderDir, ParsedHeader};
use mase_hwlib::{module_name, registry, resolve_params, rtl_dir, Direction};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/external")
}

fn read(p: &Path) -> (PathBuf, String) {
    (p.to_path_buf(), std::fs::read_to_string(p).unwrap())
}

#[test]
fn every_library_header_agrees_with_the_registry() {
    let t0 = std::time::Instant::now();
    let mut n = 0;
    for c in registry() {
        let module = module_name(*c);
        let file = rtl_dir().join(format!("{module}.sv"));
        let (_, h) = find_module(&[read(&file)], &module)
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
            .unwrap_or_else(|| panic!("{} does not declare {module}", file.display()));
        n += 1;
        for p in c.params() {
            assert!(h.params.iter().any(|q| q.name == p.name), "{module}: parameter {} missing", p.name);
        }
        let params = resolve_params(*c, &[] as &[(&str, i64)]).unwrap();
        let port = |name: &str| h.ports.iter().find(|p| p.name == name).map(|p| p.dir);
        assert_eq!(port("clk"), Some(HeaderDir::Input), "{module}: clk");
        assert_eq!(port("rst"), Some(HeaderDir::Input), "{module}: rst");
        for s in c.streams(&params) {
            let (fwd, back) = match s.dir {
                Direction::In => (HeaderDir::Input, HeaderDir::Output),
                Direction::Out => (HeaderDir::Output, HeaderDir::Input),
            };
            assert_eq!(port(&s.name), Some(fwd), "{module}: {}", s.name);
            assert!(
                h.ports.iter().any(|p| p.name == s.name && p.width.is_some()),
                "{module}: {} has no width",
                s.name
            );
            assert_eq!(port(&format!("{}_valid", s.name)), Some(fwd), "{module}: {}_valid", s.name);
            assert_eq!(port(&format!("{}_ready", s.name)), Some(back), "{module}: {}_ready", s.name);
        }
    }
    assert_eq!(n, registry().len());
    eprintln!("parsed {n} library headers in {:?}", t0.elapsed());
}

fn nonansi(defines: &[(&str, &str)]) -> ParsedHeader {
    let files = [read(&fixtures().join("user_pkg.sv")), read(&fixtures().join("user_nonansi.sv"))];
    let mut defs = HashMap::new();
    for (k, v) in defines {
        defs.insert(
            k.to_string(),
            Some(sv_parser::Define::new(
                k.to_string(),
                vec![],
                Some(sv_parser::DefineText::new(v.to_string(), None)),
            )),
        );
    }
    // Same compilation-unit order as an EXTERNAL manifest's `sources` (package first).
    let mut out = None;
    for (p, t) in &files {
        let (hs, d) = parse_file(p, t, &defs, &mase_emit::sv::include_dirs(p)).unwrap();
        defs = d;
        out = out.or(hs.into_iter().find(|h| h.name == "user_nonansi"));
    }
    out.unwrap()
}

#[test]
fn user_module_with_macros_ifdef_import_and_nonansi_ports() {
    let h = nonansi(&[]);
    let params: Vec<(&str, Option<&str>)> =
        h.params.iter().map(|p| (p.name.as_str(), p.default.as_deref())).collect();
    assert_eq!(params, [("DATA_WIDTH", Some("(LaneBits * 2)")), ("LANES", Some("4")), ("ROWS", Some("2"))]);
    let ports: Vec<(&str, HeaderDir, Option<&str>)> =
        h.ports.iter().map(|p| (p.name.as_str(), p.dir, p.width.as_deref())).collect();
    use HeaderDir::{Input as I, Output as O};
    assert_eq!(
        ports,
        [
            ("clk", I, None),
            ("rst", I, None),
            ("data_in_0", I, Some("[Bits-1:0]")),
            ("data_in_0_valid", I, None),
            ("data_in_0_ready", O, None),
            ("data_out_0", O, Some("[LANES*DATA_WIDTH-1:0]")),
            ("data_out_0_valid", O, None),
            ("data_out_0_ready", I, None),
        ]
    );
    // The `ifdef branch follows the defines given.
    let h = nonansi(&[("USER_WITH_DEPTH", "1")]);
    let names: Vec<&str> = h.params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["DATA_WIDTH", "LANES", "DEPTH"]);
}

#[test]
fn the_existing_external_fixture_parses() {
    let (_, h) = find_module(&[read(&fixtures().join("user_relu.sv"))], "user_relu").unwrap().unwrap();
    let names: Vec<&str> = h.ports.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names.len(), 8);
    assert_eq!(h.ports[2].width.as_deref(), Some("[LANES*DATA_WIDTH-1:0]"));
    assert_eq!(
        mase_emit::sv::module_header(
            &std::fs::read_to_string(fixtures().join("user_relu.sv")).unwrap(),
            "user_relu"
        )
        .unwrap()
        .params
        .len(),
        2
    );
}

#[test]
/// The error points at the port line that lacks its comma (line 5 of the fixture).
fn syntax_error_names_file_and_line() {
    let f = fixtures().join("user_broken.sv");
    let e = find_module(&[read(&f)], "user_broken").unwrap_err().to_string();
    assert!(e.contains("user_broken.sv") && e.contains("syntax error") && e.contains(":5"), "{e}");
}

#[test]
fn missing_include_names_file_line_and_include() {
    let f = fixtures().join("user_missing_include.sv");
    let e = find_module(&[read(&f)], "user_missing_include").unwrap_err().to_string();
    assert!(
        e.contains("user_missing_include.sv") && e.contains("no_such_file.svh") && e.contains("line 2"),
        "{e}"
    );
}
