//! Module headers read with sv-parser (preprocessor and IEEE 1800-2017 parser), so library files
//! and users' EXTERNAL modules may use comments, `define/`ifdef, `include, package imports and
//! non-ANSI port lists. Only the header facts the emitter checks are kept: parameter names with
//! their default text, port names with direction and packed width text.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use mase_ir::{Error, Result};
use sv_parser::{parse_sv_str, Defines, NodeEvent, RefNode, SyntaxTree};

/// One overridable parameter (`localparam`s are not listed: an instance cannot set them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderParam {
    /// Parameter name.
    pub name: String,
    /// Default value as written (macros expanded, whitespace and comments collapsed), if any.
    pub default: Option<String>,
}

/// Direction of a port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderDir {
    /// `input`.
    Input,
    /// `output`.
    Output,
    /// `inout` (also the LRM default of a first ANSI port without a direction).
    Inout,
    /// `ref`.
    Ref,
    /// An interface port (`intf.modport name`): its direction lives in the modport.
    Interface,
}

/// One port in header order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderPort {
    /// Port name.
    pub name: String,
    /// Direction.
    pub dir: HeaderDir,
    /// Packed dimensions as written (e.g. `[W-1:0]`); `None` for a scalar.
    pub width: Option<String>,
}

/// The parsed header of one module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedHeader {
    /// Module name.
    pub name: String,
    /// Overridable parameters in declaration order.
    pub params: Vec<HeaderParam>,
    /// Ports in header order.
    pub ports: Vec<HeaderPort>,
}

/// Parses the SystemVerilog `text` of file `path` (one compilation unit, after the `defines`
/// of the files before it) with `include_dirs` searched for `include files. Returns the headers of
/// every module in it and the macros defined at its end.
pub fn parse_file(
    path: &Path,
    text: &str,
    defines: &Defines,
    include_dirs: &[PathBuf],
) -> Result<(Vec<ParsedHeader>, Defines)> {
    let (tree, defs) =
        parse_sv_str(text, path, defines, include_dirs, false, false).map_err(|e| describe(path, text, e))?;
    let mut out = Vec::new();
    for node in &tree {
        match node {
            RefNode::ModuleDeclarationAnsi(m) => out.push(ansi(&tree, m)),
            RefNode::ModuleDeclarationNonansi(m) => out.push(nonansi(&tree, path, m)?),
            _ => {}
        }
    }
    Ok((out, defs))
}

/// The include directories of a source file: its own directory first, then `rtl/`.
pub fn include_dirs(file: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    if let Some(d) = file.parent() {
        v.push(if d.as_os_str().is_empty() { PathBuf::from(".") } else { d.to_path_buf() });
    }
    v.push(mase_hwlib::rtl_dir());
    v
}

/// Reads the header of `module` from the files `sources` (path, text) taken in order as one
/// compilation unit (macros of earlier files visible in later ones).
pub fn find_module(sources: &[(PathBuf, String)], module: &str) -> Result<Option<(PathBuf, ParsedHeader)>> {
    let mut defines: Defines = HashMap::new();
    for (path, text) in sources {
        let (headers, defs) = parse_file(path, text, &defines, &include_dirs(path))?;
        if let Some(h) = headers.into_iter().find(|h| h.name == module) {
            return Ok(Some((path.clone(), h)));
        }
        defines = defs;
    }
    Ok(None)
}

/// Headers of the library modules read so far in this process, by file path, module and text.
///
/// sv-parser takes tens of milliseconds per library file, and a design instantiates the same few
/// modules many times (every FIFO, fork and lane converter, each layer's linears), so parsing a
/// file once per instance made header checks most of emit's time. The text is part of the key, so
/// an edited file is parsed again; the library headers it `include`s (`rtl/*.svh`) are taken as
/// unchanged while the process runs. Only successful parses are kept: a failing file is parsed
/// again and fails with the same error.
static LIBRARY_HEADERS: Mutex<BTreeMap<(PathBuf, String, String), Option<ParsedHeader>>> =
    Mutex::new(BTreeMap::new());

/// The header of `module` in library file `path` with text `text` (one compilation unit on its
/// own, as [`find_module`] reads it), parsed at most once per process ([`LIBRARY_HEADERS`]) and
/// from the header alone where [`from_header_alone`] can.
pub(crate) fn library_module(path: &Path, text: &str, module: &str) -> Result<Option<ParsedHeader>> {
    let key = (path.to_path_buf(), module.to_string(), text.to_string());
    // A poisoned lock only means another thread panicked mid-insert; the map is still valid.
    let cache = || LIBRARY_HEADERS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(h) = cache().get(&key) {
        return Ok(h.clone());
    }
    let h = match from_header_alone(path, text, module) {
        Some(h) => Some(h),
        None => parse_file(path, text, &HashMap::new(), &include_dirs(path))?
            .0
            .into_iter()
            .find(|h| h.name == module),
    };
    cache().insert(key, h.clone());
    Ok(h)
}

/// The header of `module` read from the start of `text` alone: the lines through the first line
/// `);` (in the first column, where the library closes a header; body lines are indented) after
/// the line that opens the module as `module NAME #(`, closed with `endmodule`. `None` when the
/// file is not laid out so, the cut does not parse, or it may read differently from the whole file.
///
/// Why: sv-parser spends nearly all its time in module bodies (a library file's header alone,
/// most of it the included `mase_assert.svh`, parses 3 to 15 times as fast as the whole file), and
/// a header with a parameter port list holds every fact [`ParsedHeader`] keeps: the body declares
/// no overridable parameter, nor, in an ANSI header, any port. The cut text is a prefix of the
/// file, so if it parses, its module header is the file's own, read the same way, with one
/// exception: a non-ANSI port list of bare names, `(a, b)`, whose body declares the directions,
/// reads as an ANSI list of `inout` ports once the body is gone; so a header with an `inout` port
/// is not taken (a non-ANSI header the parser sees as such has its ports undeclared in the cut,
/// an error). On `None` [`library_module`] parses the whole file, which reports any error as
/// before. What the cut gives up is sv-parser's syntax check of a library file's body at emit
/// time; the tests still parse every whole library file (`emit/tests/sv_headers.rs`) and lint it
/// (`sim/tests/lint.rs`).
fn from_header_alone(path: &Path, text: &str, module: &str) -> Option<ParsedHeader> {
    let open = format!("module {module} #(");
    let mut end = 0;
    let mut in_header = false;
    let mut cut = None;
    for line in text.split_inclusive('\n') {
        end += line.len();
        if !in_header {
            in_header = line.starts_with(&open);
        } else if line.trim_end() == ");" {
            cut = Some(format!("{}\nendmodule\n", &text[..end]));
            break;
        }
    }
    let (headers, _) = parse_file(path, &cut?, &HashMap::new(), &include_dirs(path)).ok()?;
    headers.into_iter().find(|h| h.name == module && h.ports.iter().all(|p| p.dir != HeaderDir::Inout))
}

/// Line (1-based) of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())].iter().filter(|&&b| b == b'\n').count() + 1
}

/// Turns an sv-parser error into one naming the file, the line and what failed.
fn describe(path: &Path, text: &str, e: sv_parser::Error) -> Error {
    use sv_parser::Error as E;
    let at = |p: &Path, off: usize| {
        let line = if p == path {
            line_of(text, off)
        } else {
            std::fs::read_to_string(p).map(|t| line_of(&t, off)).unwrap_or(0)
        };
        format!("{}:{line}", p.display())
    };
    let msg = match e {
        E::Parse(Some((p, off))) => format!("SystemVerilog syntax error at {}", at(&p, off)),
        E::Parse(None) => "SystemVerilog syntax error (unexpected end of file)".to_string(),
        E::Preprocess(Some((p, off))) => format!("preprocessor error at {}", at(&p, off)),
        E::Preprocess(None) => "preprocessor error (unexpected end of file)".to_string(),
        E::Include { source } => {
            let missing = match source.as_ref() {
                E::File { path: p, .. } => p.clone(),
                other => return Error::file(path, format!("in an `include: {}", describe_inner(other))),
            };
            let name = missing.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let line = text.lines().position(|l| l.contains("`include") && l.contains(&name)).map(|i| i + 1);
            format!(
                "`include \"{name}\"{}: file not found in the file's directory or rtl/",
                line.map(|l| format!(" (line {l})")).unwrap_or_default()
            )
        }
        E::DefineNotFound(m) => {
            format!("macro `{m} is used but not defined (line {})", find_line(text, &format!("`{m}")))
        }
        E::DefineArgNotFound(m) => format!("macro argument {m} not given"),
        E::DefineNoArgs(m) => {
            format!("macro `{m} needs arguments (line {})", find_line(text, &format!("`{m}")))
        }
        other => describe_inner(&other),
    };
    Error::file(path, msg)
}

fn describe_inner(e: &sv_parser::Error) -> String {
    e.to_string()
}

fn find_line(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).map(|i| i + 1).unwrap_or(0)
}

/// Text of a node's tokens, comments and whitespace collapsed to one space.
fn text_of<'a>(tree: &SyntaxTree, node: impl Into<sv_parser::RefNodes<'a>>) -> String {
    let mut s = String::new();
    let mut end: Option<usize> = None;
    let mut in_ws = 0usize;
    for ev in sv_parser::Iter::new(node.into()).event() {
        match ev {
            NodeEvent::Enter(RefNode::WhiteSpace(_)) => in_ws += 1,
            NodeEvent::Leave(RefNode::WhiteSpace(_)) => in_ws -= 1,
            NodeEvent::Enter(RefNode::Locate(l)) if in_ws == 0 => {
                if end.is_some_and(|e| l.offset > e) {
                    s.push(' ');
                }
                s.push_str(tree.get_str(l).unwrap_or(""));
                end = Some(l.offset + l.len);
            }
            _ => {}
        }
    }
    s
}

/// Packed dimensions inside a port type, or `None` for a scalar.
fn packed<'a>(tree: &SyntaxTree, node: impl Into<sv_parser::RefNodes<'a>>) -> Option<String> {
    let dims: Vec<String> = sv_parser::Iter::new(node.into())
        .filter_map(|n| match n {
            RefNode::PackedDimension(d) => Some(text_of(tree, d)),
            _ => None,
        })
        .collect();
    (!dims.is_empty()).then(|| dims.concat())
}

fn dir_of(d: &sv_parser::PortDirection) -> HeaderDir {
    match d {
        sv_parser::PortDirection::Input(_) => HeaderDir::Input,
        sv_parser::PortDirection::Output(_) => HeaderDir::Output,
        sv_parser::PortDirection::Inout(_) => HeaderDir::Inout,
        sv_parser::PortDirection::Ref(_) => HeaderDir::Ref,
    }
}

/// Parameters of a `#(...)` list, or of a body's `parameter` items when there is no list.
fn params<'a>(
    tree: &SyntaxTree,
    node: impl Into<sv_parser::RefNodes<'a>>,
    top_level_only: bool,
) -> Vec<HeaderParam> {
    let mut out = Vec::new();
    let (mut local, mut nested) = (0usize, 0usize);
    for ev in sv_parser::Iter::new(node.into()).event() {
        let (enter, n) = match ev {
            NodeEvent::Enter(n) => (true, n),
            NodeEvent::Leave(n) => (false, n),
        };
        let step = |c: &mut usize| if enter { *c += 1 } else { *c -= 1 };
        match n {
            RefNode::LocalParameterDeclaration(_) => step(&mut local),
            RefNode::GenerateRegion(_)
            | RefNode::LoopGenerateConstruct(_)
            | RefNode::ConditionalGenerateConstruct(_)
            | RefNode::FunctionDeclaration(_)
            | RefNode::TaskDeclaration(_)
            | RefNode::ClassDeclaration(_)
            | RefNode::ModuleDeclaration(_)
            | RefNode::InterfaceDeclaration(_) => step(&mut nested),
            RefNode::ParamAssignment(p) if enter && local == 0 && (!top_level_only || nested == 0) => out
                .push(HeaderParam {
                    name: text_of(tree, &p.nodes.0),
                    default: p.nodes.2.as_ref().map(|(_, e)| text_of(tree, e)),
                }),
            RefNode::TypeAssignment(p) if enter && local == 0 && (!top_level_only || nested == 0) => out
                .push(HeaderParam {
                    name: text_of(tree, &p.nodes.0),
                    default: p.nodes.1.as_ref().map(|(_, e)| text_of(tree, e)),
                }),
            _ => {}
        }
    }
    out
}

fn ansi(tree: &SyntaxTree, m: &sv_parser::ModuleDeclarationAnsi) -> ParsedHeader {
    let h = &m.nodes.0;
    let name = text_of(tree, &h.nodes.3);
    let mut ps = h.nodes.5.as_ref().map(|l| params(tree, l, false)).unwrap_or_default();
    if h.nodes.5.is_none() {
        ps = params(tree, &m.nodes.2, true);
    }
    let mut ports = Vec::new();
    // A port without direction or type inherits both from the one before (IEEE 1800-2017 23.2.2.3).
    let (mut dir, mut width) = (HeaderDir::Inout, None);
    for n in h.nodes.6.iter().flat_map(|l| sv_parser::Iter::new(l.into())) {
        match n {
            RefNode::AnsiPortDeclarationNet(p) => {
                match &p.nodes.0 {
                    Some(sv_parser::NetPortHeaderOrInterfacePortHeader::NetPortHeader(nh)) => {
                        if let Some(d) = &nh.nodes.0 {
                            dir = dir_of(d);
                        }
                        width = packed(tree, &nh.nodes.1);
                    }
                    Some(sv_parser::NetPortHeaderOrInterfacePortHeader::InterfacePortHeader(_)) => {
                        dir = HeaderDir::Interface;
                        width = None;
                    }
                    None => {}
                }
                ports.push(HeaderPort { name: text_of(tree, &p.nodes.1), dir, width: width.clone() });
            }
            RefNode::AnsiPortDeclarationVariable(p) => {
                if let Some(vh) = &p.nodes.0 {
                    if let Some(d) = &vh.nodes.0 {
                        dir = dir_of(d);
                    }
                    width = packed(tree, &vh.nodes.1);
                }
                ports.push(HeaderPort { name: text_of(tree, &p.nodes.1), dir, width: width.clone() });
            }
            RefNode::AnsiPortDeclarationParen(p) => {
                if let Some(d) = &p.nodes.0 {
                    dir = dir_of(d);
                }
                ports.push(HeaderPort { name: text_of(tree, &p.nodes.2), dir, width: None });
            }
            _ => {}
        }
    }
    ParsedHeader { name, params: ps, ports }
}

fn nonansi(tree: &SyntaxTree, path: &Path, m: &sv_parser::ModuleDeclarationNonansi) -> Result<ParsedHeader> {
    let h = &m.nodes.0;
    let name = text_of(tree, &h.nodes.3);
    let ps = match &h.nodes.5 {
        Some(l) => params(tree, l, false),
        None => params(tree, &m.nodes.2, true),
    };
    // Port names in header order: `.name(expr)` gives `name`, a plain reference its identifier.
    let mut names = Vec::new();
    for n in sv_parser::Iter::new((&h.nodes.6).into()) {
        match n {
            RefNode::PortNamed(p) => names.push(text_of(tree, &p.nodes.1)),
            RefNode::PortNonNamed(p) => {
                if let Some(r) = sv_parser::Iter::new(p.into()).find_map(|n| match n {
                    RefNode::PortIdentifier(i) => Some(text_of(tree, i)),
                    _ => None,
                }) {
                    names.push(r);
                }
            }
            _ => {}
        }
    }
    // Directions and widths from the body's port declarations.
    let mut decl: HashMap<String, (HeaderDir, Option<String>)> = HashMap::new();
    for item in &m.nodes.2 {
        let sv_parser::ModuleItem::PortDeclaration(pd) = item else { continue };
        let pd = &pd.0;
        let dir = match pd {
            sv_parser::PortDeclaration::Input(_) => HeaderDir::Input,
            sv_parser::PortDeclaration::Output(_) => HeaderDir::Output,
            sv_parser::PortDeclaration::Inout(_) => HeaderDir::Inout,
            sv_parser::PortDeclaration::Ref(_) => HeaderDir::Ref,
            sv_parser::PortDeclaration::Interface(_) => HeaderDir::Interface,
        };
        let mut width = None;
        let mut ids = Vec::new();
        for n in sv_parser::Iter::new(pd.into()) {
            match n {
                RefNode::NetPortType(t) => width = packed(tree, t),
                RefNode::VariablePortType(t) => width = packed(tree, t),
                RefNode::PortIdentifier(i) => ids.push(text_of(tree, i)),
                RefNode::VariableIdentifier(i) => ids.push(text_of(tree, i)),
                _ => {}
            }
        }
        for id in ids {
            decl.insert(id, (dir, width.clone()));
        }
    }
    let mut ports = Vec::new();
    for n in names {
        let (dir, width) = decl.get(&n).cloned().ok_or_else(|| {
            Error::file(path, format!("module {name}: port {n} is listed in the header but has no input/output/inout declaration in the body"))
        })?;
        ports.push(HeaderPort { name: n, dir, width });
    }
    Ok(ParsedHeader { name, params: ps, ports })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The header of `module` as [`find_module`] reads the one file.
    fn read(path: &Path, text: &str, module: &str) -> Result<Option<ParsedHeader>> {
        find_module(&[(path.to_path_buf(), text.to_string())], module).map(|f| f.map(|(_, h)| h))
    }

    /// Every library module is read from its header alone, with the same result as the whole file
    /// (the layout [`from_header_alone`] relies on holds; a file that drifted from it would still
    /// read right, only slower).
    #[test]
    fn every_library_header_is_read_from_the_header_alone_as_from_the_whole_file() {
        for c in mase_hwlib::registry() {
            let module = mase_hwlib::module_name(*c);
            let path = mase_hwlib::rtl_dir().join(format!("{module}.sv"));
            let text = std::fs::read_to_string(&path).unwrap();
            let whole = read(&path, &text, &module).unwrap();
            assert!(whole.is_some(), "{module}");
            assert_eq!(from_header_alone(&path, &text, &module), whole, "{module}");
            assert_eq!(library_module(&path, &text, &module).unwrap(), whole, "{module}");
        }
    }

    /// A non-ANSI header of bare port names reads as `inout` ports without its body, so the whole
    /// file is read; an error in the header is the whole file's error.
    #[test]
    fn a_header_the_cut_cannot_read_is_read_from_the_whole_file() {
        let path = mase_hwlib::rtl_dir().join("m.sv");
        let nonansi =
            "module m #(\n  parameter A = 1\n) (a,\n  b\n);\n  input a;\n  output [A-1:0] b;\nendmodule\n";
        assert_eq!(from_header_alone(&path, nonansi, "m"), None);
        let h = library_module(&path, nonansi, "m").unwrap().unwrap();
        assert_eq!(
            h.ports.iter().map(|p| (p.name.as_str(), p.dir)).collect::<Vec<_>>(),
            [("a", HeaderDir::Input), ("b", HeaderDir::Output)]
        );
        assert_eq!(Some(h), read(&path, nonansi, "m").unwrap());
        let broken = "module m #(\n  parameter A = = 1\n) (\n  input a\n);\nendmodule\n";
        assert_eq!(from_header_alone(&path, broken, "m"), None);
        let e = library_module(&path, broken, "m").unwrap_err().to_string();
        assert_eq!(e, read(&path, broken, "m").unwrap_err().to_string());
        assert!(e.contains("syntax error at") && e.contains("m.sv:1"), "{e}");
    }
}
