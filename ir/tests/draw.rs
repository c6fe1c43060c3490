//! Drawing tests: the SVG is well-formed (balanced tags, escaped text), names every node,
//! has no overlapping boxes on an encoder-sized graph; the DOT lists every edge; both are
//! deterministic.

use mase_ir::draw::{save, to_dot, to_svg};
use mase_ir::metadata::{TensorMeta, ValueType};
use mase_ir::tensor::Tensor;
use mase_ir::{MaseGraph, NodeId, Op};

/// Checks that `s` is XML-ish well-formed: tags balance, attribute values are quoted, and
/// every `&` starts an entity. Returns the element names in document order.
fn check_xml(s: &str) -> Vec<String> {
    let mut stack: Vec<String> = Vec::new();
    let mut names = Vec::new();
    let mut rest = s;
    while let Some(i) = rest.find(['<', '&']) {
        let text = &rest[..i];
        assert!(!text.contains('>'), "stray '>' in text: {text:?}");
        rest = &rest[i..];
        if rest.starts_with('&') {
            let end = rest.find(';').expect("entity without ';'");
            let ent = &rest[1..end];
            assert!(["amp", "lt", "gt", "quot", "apos"].contains(&ent), "unknown entity &{ent};");
            rest = &rest[end + 1..];
            continue;
        }
        let end = rest.find('>').expect("unterminated tag");
        let tag = &rest[1..end];
        rest = &rest[end + 1..];
        if tag.starts_with('?') {
            continue;
        }
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(stack.pop().as_deref(), Some(name), "mismatched closing tag </{name}>");
            continue;
        }
        let self_closing = tag.ends_with('/');
        let body = tag.trim_end_matches('/');
        let name = body.split_whitespace().next().expect("empty tag").to_string();
        // Attribute values are double-quoted and contain no raw '<' or '"'.
        assert_eq!(body.matches('"').count() % 2, 0, "unbalanced quotes in <{body}>");
        names.push(name.clone());
        if !self_closing {
            stack.push(name);
        }
    }
    assert!(stack.is_empty(), "unclosed tags: {stack:?}");
    names
}

fn input(g: &mut MaseGraph, name: &str, shape: &[usize]) -> NodeId {
    let id = g.add_node(name, Op::Placeholder, vec![]).unwrap();
    g.node_mut(id).meta.common.results.insert(
        "data_out_0".into(),
        TensorMeta { ty: ValueType::Float, precision: vec![32], shape: shape.to_vec(), ..Default::default() },
    );
    id
}

/// A small graph whose names need escaping in both XML and DOT.
fn tricky() -> MaseGraph {
    let mut g = MaseGraph::new("a<b>&\"c\"");
    let x = input(&mut g, "in<0>&'x'", &[2, 3]);
    let y = input(&mut g, "back\\slash \"q\"", &[2, 3]);
    let s = g.add_node("sum&more", Op::Add, vec![x, y]).unwrap();
    let r = g.add_node("relu", Op::Relu, vec![s]).unwrap();
    let m = g.add_node("skip", Op::Mul, vec![r, x]).unwrap();
    g.add_node("output", Op::Output, vec![m]).unwrap();
    g
}

/// An encoder layer built by hand, the way the importer raises one: about 60 nodes with
/// parallel Q/K/V branches, long residual edges and constants.
fn encoder() -> MaseGraph {
    let (s, h, heads, ffn) = (8usize, 16usize, 2usize, 32usize);
    let dh = h / heads;
    let mut g = MaseGraph::new("encoder");
    let lin = |g: &mut MaseGraph, name: &str, inp: NodeId, i: usize, o: usize| {
        g.weights.insert(format!("{name}.weight"), Tensor::zeros_f32(&[o, i]));
        g.weights.insert(format!("{name}.bias"), Tensor::zeros_f32(&[o]));
        g.add_node(
            name,
            Op::Linear { weight: format!("{name}.weight"), bias: Some(format!("{name}.bias")) },
            vec![inp],
        )
        .unwrap()
    };
    let x = input(&mut g, "hidden_states", &[1, s, h]);
    let heads_of = |g: &mut MaseGraph, which: &str, perm: Vec<usize>| {
        let p = lin(g, &format!("/encoder/layer.0/attention/self/{which}/MatMul"), x, h, h);
        let r = g
            .add_node(
                format!("{which}_reshape"),
                Op::Reshape { shape: vec![1, s as i64, heads as i64, dh as i64] },
                vec![p],
            )
            .unwrap();
        g.add_node(format!("{which}_transpose"), Op::Transpose { perm }, vec![r]).unwrap()
    };
    let q = heads_of(&mut g, "query", vec![0, 2, 1, 3]);
    let k = heads_of(&mut g, "key", vec![0, 2, 3, 1]);
    let v = heads_of(&mut g, "value", vec![0, 2, 1, 3]);
    let scores = g.add_node("scores", Op::Matmul, vec![q, k]).unwrap();
    let scaled =
        g.add_node("scale", Op::MulScalar { scalar: 1.0 / (dh as f32).sqrt() }, vec![scores]).unwrap();
    g.weights.insert("mask".into(), Tensor::zeros_f32(&[1, 1, 1, s]));
    let mask = g.add_node("attention_mask", Op::Constant { tensor: "mask".into() }, vec![]).unwrap();
    let masked = g.add_node("add_mask", Op::Add, vec![scaled, mask]).unwrap();
    let probs = g.add_node("softmax", Op::Softmax { axis: -1 }, vec![masked]).unwrap();
    let probs = g.add_node("attn_dropout", Op::Dropout { ratio: 0.1 }, vec![probs]).unwrap();
    let ctx = g.add_node("context", Op::Matmul, vec![probs, v]).unwrap();
    let ctx = g.add_node("context_transpose", Op::Transpose { perm: vec![0, 2, 1, 3] }, vec![ctx]).unwrap();
    let ctx =
        g.add_node("context_reshape", Op::Reshape { shape: vec![1, s as i64, h as i64] }, vec![ctx]).unwrap();
    let o = lin(&mut g, "/encoder/layer.0/attention/output/dense/MatMul", ctx, h, h);
    let o = g.add_node("out_dropout", Op::Dropout { ratio: 0.1 }, vec![o]).unwrap();
    let res1 = g.add_node("residual_1", Op::Add, vec![o, x]).unwrap();
    // A decomposed layer norm (as some exporters write it): ~10 nodes.
    let ln = |g: &mut MaseGraph, tag: &str, inp: NodeId| {
        let mean = g
            .add_node(format!("{tag}_mean"), Op::ReduceMean { axes: vec![-1], keepdims: true }, vec![inp])
            .unwrap();
        let d = g.add_node(format!("{tag}_sub"), Op::Sub, vec![inp, mean]).unwrap();
        g.weights.insert(format!("{tag}_two"), Tensor::from_f32(&[], vec![2.0]).unwrap());
        let two =
            g.add_node(format!("{tag}_two"), Op::Constant { tensor: format!("{tag}_two") }, vec![]).unwrap();
        let sq = g.add_node(format!("{tag}_pow"), Op::Pow, vec![d, two]).unwrap();
        let var = g
            .add_node(format!("{tag}_var"), Op::ReduceMean { axes: vec![-1], keepdims: true }, vec![sq])
            .unwrap();
        g.weights.insert(format!("{tag}_eps"), Tensor::from_f32(&[], vec![1e-12]).unwrap());
        let eps =
            g.add_node(format!("{tag}_eps"), Op::Constant { tensor: format!("{tag}_eps") }, vec![]).unwrap();
        let ve = g.add_node(format!("{tag}_add_eps"), Op::Add, vec![var, eps]).unwrap();
        let sd = g.add_node(format!("{tag}_sqrt"), Op::Sqrt, vec![ve]).unwrap();
        let n = g.add_node(format!("{tag}_div"), Op::Div, vec![d, sd]).unwrap();
        g.weights.insert(format!("{tag}_gamma"), Tensor::zeros_f32(&[h]));
        let gamma = g
            .add_node(format!("{tag}_gamma"), Op::Constant { tensor: format!("{tag}_gamma") }, vec![])
            .unwrap();
        let scaled = g.add_node(format!("{tag}_scale"), Op::Mul, vec![n, gamma]).unwrap();
        g.weights.insert(format!("{tag}_beta"), Tensor::zeros_f32(&[h]));
        let beta = g
            .add_node(format!("{tag}_beta"), Op::Constant { tensor: format!("{tag}_beta") }, vec![])
            .unwrap();
        g.add_node(format!("{tag}_shift"), Op::Add, vec![scaled, beta]).unwrap()
    };
    let ln1 = ln(&mut g, "ln1", res1);
    let f1 = lin(&mut g, "/encoder/layer.0/intermediate/dense/MatMul", ln1, h, ffn);
    // Erf-form GELU, decomposed: x · (1 + erf(x / √2)) · 0.5.
    let scalar = |g: &mut MaseGraph, name: &str, v: f32| {
        g.weights.insert(name.into(), Tensor::from_f32(&[], vec![v]).unwrap());
        g.add_node(name, Op::Constant { tensor: name.into() }, vec![]).unwrap()
    };
    let sqrt2 = scalar(&mut g, "gelu_sqrt2", std::f32::consts::SQRT_2);
    let one = scalar(&mut g, "gelu_one", 1.0);
    let half = scalar(&mut g, "gelu_half", 0.5);
    let t = g.add_node("gelu_div", Op::Div, vec![f1, sqrt2]).unwrap();
    let t = g.add_node("gelu_erf", Op::Erf, vec![t]).unwrap();
    let t = g.add_node("gelu_add", Op::Add, vec![t, one]).unwrap();
    let t = g.add_node("gelu_mul", Op::Mul, vec![f1, t]).unwrap();
    let act = g.add_node("gelu", Op::Mul, vec![t, half]).unwrap();
    let f2 = lin(&mut g, "/encoder/layer.0/output/dense/MatMul", act, ffn, h);
    let f2 = g.add_node("ffn_dropout", Op::Dropout { ratio: 0.1 }, vec![f2]).unwrap();
    let res2 = g.add_node("residual_2", Op::Add, vec![f2, ln1]).unwrap();
    let ln2 = ln(&mut g, "ln2", res2);
    let id = g.add_node("identity", Op::Identity, vec![ln2]).unwrap();
    g.add_node("output", Op::Output, vec![id]).unwrap();
    g.validate().unwrap();
    g
}

#[test]
fn svg_is_well_formed_and_names_every_node() {
    for g in [tricky(), encoder()] {
        let svg = to_svg(&g);
        assert!(svg.starts_with("<?xml"));
        let elems = check_xml(&svg);
        assert_eq!(elems.first().map(String::as_str), Some("svg"));
        for (_, n) in g.nodes() {
            let esc = mase_ir::draw::xml_escape(&n.name);
            assert!(svg.contains(&format!(">{esc}\n")), "tooltip of {} missing", n.name);
        }
        // One arrow per edge.
        let edges: usize = g.nodes().map(|(_, n)| n.inputs.len()).sum();
        assert_eq!(svg.matches("marker-end=\"url(#arrow)\"").count(), edges);
    }
}

#[test]
fn svg_escapes_text() {
    let svg = to_svg(&tricky());
    assert!(svg.contains("in&lt;0&gt;&amp;&apos;x&apos;"), "{svg}");
    assert!(svg.contains("sum&amp;more"));
    assert!(!svg.contains("in<0>"));
    assert!(svg.contains("<title>a&lt;b&gt;&amp;&quot;c&quot;</title>"));
}

#[test]
fn svg_shows_op_and_shape() {
    let g = encoder();
    let mut g2 = g.clone();
    let id = g2.find("gelu").unwrap();
    g2.node_mut(id).meta.common.results.insert(
        "data_out_0".into(),
        TensorMeta {
            ty: ValueType::Fixed,
            precision: vec![8, 3],
            shape: vec![1, 8, 32],
            ..Default::default()
        },
    );
    let svg = to_svg(&g2);
    assert!(svg.contains(">[1, 8, 32] fixed&lt;8,3&gt;</text>"), "fixed format shown");
    assert!(svg.contains(">softmax</text>"));
    assert!(svg.contains(">[1, 8, 16]</text>"), "input shape shown");
    // Long names are shortened in the box but complete in the tooltip.
    let long = "/encoder/layer.0/attention/output/dense/MatMul";
    assert!(svg.contains(&format!("<title>{long}\n")));
}

/// The node boxes of an SVG as (x, y, w, h).
fn boxes(svg: &str) -> Vec<(f64, f64, f64, f64)> {
    let nodes = &svg[svg.find("<g class=\"nodes\">").unwrap()..];
    let attr = |tag: &str, a: &str| -> f64 {
        let i = tag.find(&format!(" {a}=\"")).unwrap() + a.len() + 3;
        tag[i..i + tag[i..].find('"').unwrap()].parse().unwrap()
    };
    nodes
        .match_indices("<rect ")
        .map(|(i, _)| {
            let tag = &nodes[i..i + nodes[i..].find('>').unwrap()];
            (attr(tag, "x"), attr(tag, "y"), attr(tag, "width"), attr(tag, "height"))
        })
        .collect()
}

#[test]
fn encoder_layout_has_no_overlapping_boxes() {
    let g = encoder();
    assert!(g.len() >= 55, "the encoder has {} nodes", g.len());
    let svg = to_svg(&g);
    let b = boxes(&svg);
    assert_eq!(b.len(), g.len());
    for i in 0..b.len() {
        for j in i + 1..b.len() {
            let (p, q) = (b[i], b[j]);
            let apart = p.0 + p.2 <= q.0 || q.0 + q.2 <= p.0 || p.1 + p.3 <= q.1 || q.1 + q.3 <= p.1;
            assert!(apart, "boxes {i} and {j} overlap: {p:?} {q:?}");
        }
    }
    // Every box lies inside the canvas.
    let dim = |a: &str| -> f64 {
        let i = svg.find(&format!(" {a}=\"")).unwrap() + a.len() + 3;
        svg[i..i + svg[i..].find('"').unwrap()].parse().unwrap()
    };
    let (w, h) = (dim("width"), dim("height"));
    assert!(b.iter().all(|r| r.0 >= 0.0 && r.1 >= 0.0 && r.0 + r.2 <= w && r.1 + r.3 <= h));
}

#[test]
fn dot_lists_every_node_and_edge() {
    for g in [tricky(), encoder()] {
        let dot = to_dot(&g);
        let q = |s: &str| s.replace('\\', "\\\\").replace('"', "\\\"");
        for (_, n) in g.nodes() {
            assert!(dot.contains(&format!("  \"{}\" [label=", q(&n.name))), "{}", n.name);
            for &i in &n.inputs {
                let edge = format!("  \"{}\" -> \"{}\"", q(&g.node(i).name), q(&n.name));
                assert!(dot.contains(&edge), "missing {edge}");
            }
        }
        let edges: usize = g.nodes().map(|(_, n)| n.inputs.len()).sum();
        assert_eq!(dot.matches(" -> ").count(), edges);
        assert!(dot.starts_with("digraph ") && dot.trim_end().ends_with('}'));
    }
}

#[test]
fn drawings_are_deterministic() {
    assert_eq!(to_svg(&encoder()), to_svg(&encoder()));
    assert_eq!(to_dot(&encoder()), to_dot(&encoder()));
}

#[test]
fn save_picks_the_format_by_extension() {
    let dir = tempfile::tempdir().unwrap();
    let g = tricky();
    save(&g, &dir.path().join("g.svg")).unwrap();
    save(&g, &dir.path().join("g.dot")).unwrap();
    assert_eq!(std::fs::read_to_string(dir.path().join("g.svg")).unwrap(), to_svg(&g));
    assert_eq!(std::fs::read_to_string(dir.path().join("g.dot")).unwrap(), to_dot(&g));
    let e = save(&g, &dir.path().join("g.png")).unwrap_err().to_string();
    assert!(e.contains(".png") && e.contains(".svg"), "{e}");
}

#[test]
fn empty_graph_draws() {
    let g = MaseGraph::new("empty");
    check_xml(&to_svg(&g));
    assert!(to_dot(&g).contains("digraph"));
}
