//! Drawing a graph as SVG (laid out here, no Graphviz needed) and as DOT.
//!
//! [`to_svg`] lays the graph out top to bottom in the manner of Sugiyama's method:
//!
//! 1. **Layers**: longest path from the inputs over the arena (topological) order; a node
//!    without inputs other than a placeholder (a constant) is pulled down to the layer just
//!    above its first user.
//! 2. **Dummies**: an edge spanning several layers gets one dummy vertex per layer it crosses,
//!    so it is routed through a reserved lane instead of through boxes.
//! 3. **Ordering**: barycenter heuristic, alternating downward and upward sweeps; the ordering
//!    with the fewest edge crossings seen is kept.
//! 4. **Coordinates**: per layer, each vertex is pulled toward the mean x of its neighbours in
//!    the adjacent layer; the closest positions that keep the order and the minimum spacing are
//!    found exactly (least squares under order constraints, by pool-adjacent-violators).
//!
//! Each node is a rounded box with its name (long names shortened in the middle; the full
//! name is in the box's tooltip), its mase op, and its output shape with a type tag when
//! `common.results["data_out_0"]` records one (`i64` for integer tensors, `fixed<w,f>` for
//! fixed point). Boxes are coloured by mase type (legend at the top). Edges are curves with
//! arrowheads; they enter a box at evenly spaced ports in argument order (`data_in_0` leftmost).
//! All text is XML-escaped. The output is deterministic: same graph, same bytes.
//!
//! [`to_dot`] writes the same nodes and edges for Graphviz users; [`save`] writes either, by
//! file extension.

use std::fmt::Write as _;
use std::path::Path;

use crate::error::{Error, Result};
use crate::graph::{MaseGraph, Node};
use crate::metadata::{MaseType, ValueType};

/// Font size of box text, in pixels.
const FONT: f64 = 11.0;
/// Advance of one character of the monospace font, in pixels.
const CHAR_W: f64 = FONT * 0.62;
/// Height of one text line.
const LINE_H: f64 = 14.0;
/// Horizontal padding inside a box.
const PAD_X: f64 = 8.0;
/// Vertical padding inside a box.
const PAD_Y: f64 = 6.0;
/// Horizontal gap between neighbouring boxes.
const GAP_X: f64 = 22.0;
/// Vertical gap between layers.
const GAP_Y: f64 = 42.0;
/// Width reserved for an edge passing through a layer.
const DUMMY_W: f64 = 6.0;
/// Margin around the drawing.
const MARGIN: f64 = 16.0;
/// Height of the legend row.
const LEGEND_H: f64 = 30.0;
/// Longest node name shown in full.
const MAX_NAME: usize = 44;

/// Fill and stroke colours of a mase type.
fn colors(t: MaseType) -> (&'static str, &'static str) {
    match t {
        MaseType::Module => ("#cfe2ff", "#3d6fb4"),
        MaseType::ModuleRelatedFunc => ("#d4edda", "#3c8a50"),
        MaseType::BuiltinFunc => ("#fff0c2", "#b08a1e"),
        MaseType::ImplicitFunc => ("#eceef1", "#7d8590"),
        MaseType::Placeholder => ("#f8d7da", "#b0444f"),
        MaseType::GetAttr => ("#e6dcf5", "#7a55b0"),
        MaseType::Output => ("#f8d7da", "#b0444f"),
    }
}

/// The name MASE uses for a mase type.
fn type_name(t: MaseType) -> &'static str {
    match t {
        MaseType::Module => "module",
        MaseType::ModuleRelatedFunc => "module_related_func",
        MaseType::BuiltinFunc => "builtin_func",
        MaseType::ImplicitFunc => "implicit_func",
        MaseType::Placeholder => "placeholder",
        MaseType::GetAttr => "get_attr",
        MaseType::Output => "output",
    }
}

/// Every mase type, in legend order.
const ALL_TYPES: [MaseType; 7] = [
    MaseType::Placeholder,
    MaseType::GetAttr,
    MaseType::Module,
    MaseType::ModuleRelatedFunc,
    MaseType::BuiltinFunc,
    MaseType::ImplicitFunc,
    MaseType::Output,
];

/// `s` with every character `escape` maps to a replacement replaced by it.
fn escape_with(s: &str, escape: impl Fn(char) -> Option<&'static str>) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match escape(c) {
            Some(r) => out.push_str(r),
            None => out.push(c),
        }
    }
    out
}

/// Escapes text for XML content and attribute values.
pub fn xml_escape(s: &str) -> String {
    escape_with(s, |c| match c {
        '&' => Some("&amp;"),
        '<' => Some("&lt;"),
        '>' => Some("&gt;"),
        '"' => Some("&quot;"),
        '\'' => Some("&apos;"),
        // Control characters are not allowed in XML 1.0 text.
        c if (c as u32) < 0x20 && c != '\t' && c != '\n' => Some("\u{fffd}"),
        _ => None,
    })
}

/// Escapes text for a double-quoted DOT string.
fn dot_escape(s: &str) -> String {
    escape_with(s, |c| match c {
        '"' => Some("\\\""),
        '\\' => Some("\\\\"),
        '\n' => Some("\\n"),
        c if c.is_control() => Some(" "),
        _ => None,
    })
}

/// The third box line: output shape and a type tag, when metadata records them.
fn shape_line(node: &Node) -> Option<String> {
    let m = node.meta.common.results.get("data_out_0")?;
    let dims: Vec<String> = m.shape.iter().map(|d| d.to_string()).collect();
    let tag = match m.ty {
        ValueType::Float => String::new(),
        ValueType::Integer | ValueType::Bool => format!(" {}", m.dtype().name()),
        ValueType::Fixed => {
            let p: Vec<String> = m.precision.iter().map(|p| p.to_string()).collect();
            format!(" {}fixed<{}>", if m.unsigned { "u" } else { "" }, p.join(","))
        }
    };
    Some(format!("[{}]{tag}", dims.join(", ")))
}

/// A name shortened in the middle to at most [`MAX_NAME`] characters.
fn short_name(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    if chars.len() <= MAX_NAME {
        return name.to_string();
    }
    let keep = MAX_NAME - 1;
    let head: String = chars[..keep / 2].iter().collect();
    let tail: String = chars[chars.len() - (keep - keep / 2)..].iter().collect();
    format!("{head}…{tail}")
}

/// The text lines of a node's box.
fn box_lines(node: &Node) -> Vec<String> {
    let mut lines = vec![short_name(&node.name), node.meta.common.mase_op.clone()];
    if lines[1].is_empty() {
        lines[1] = node.op.mase_op().to_string();
    }
    if let Some(s) = shape_line(node) {
        lines.push(s);
    }
    lines
}

/// One vertex of the layered graph: a node's box or a dummy lane of a long edge.
struct Vertex {
    /// The node, or `None` for a dummy.
    node: Option<usize>,
    layer: usize,
    width: f64,
    /// Center x.
    x: f64,
    /// Links to vertices in the layer above.
    up: Vec<Link>,
    /// Links to vertices in the layer below.
    down: Vec<Link>,
}

/// A connection between vertices of adjacent layers.
#[derive(Clone, Copy)]
struct Link {
    /// The vertex at the other end.
    v: usize,
    /// Where the edge enters the lower vertex, as a fraction of its width from its center
    /// (in -0.5..0.5; 0 for dummies).
    port: f64,
}

/// One edge: the vertex chain from producer to user, and which input of the user it feeds.
struct Edge {
    chain: Vec<usize>,
    port: usize,
    ports: usize,
}

/// A computed layout.
struct Layout {
    verts: Vec<Vertex>,
    edges: Vec<Edge>,
    lines: Vec<Vec<String>>,
    box_h: f64,
    layers: usize,
    width: f64,
    height: f64,
}

impl Layout {
    /// Top y of the boxes of a layer.
    fn layer_top(&self, l: usize) -> f64 {
        MARGIN + LEGEND_H + l as f64 * (self.box_h + GAP_Y)
    }
}

/// Number of crossings between the edges from layer `order_a` to `order_b`.
fn crossings(verts: &[Vertex], pos: &[usize], upper: &[usize]) -> usize {
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    for &u in upper {
        for d in &verts[u].down {
            pairs.push((pos[u], pos[d.v]));
        }
    }
    pairs.sort_unstable();
    let mut c = 0;
    for i in 0..pairs.len() {
        for j in i + 1..pairs.len() {
            if pairs[i].0 < pairs[j].0 && pairs[i].1 > pairs[j].1 {
                c += 1;
            }
        }
    }
    c
}

/// Total crossings of an ordering.
fn total_crossings(verts: &[Vertex], order: &[Vec<usize>]) -> usize {
    let mut pos = vec![0; verts.len()];
    for layer in order {
        for (i, &v) in layer.iter().enumerate() {
            pos[v] = i;
        }
    }
    order.iter().map(|l| crossings(verts, &pos, l)).sum()
}

/// Reorders one layer by the barycenter of each vertex's neighbours (`up` or `down`) in the
/// adjacent layer; vertices without neighbours keep their position.
fn barycenter_pass(verts: &[Vertex], pos: &mut [usize], layer: &mut [usize], use_up: bool) {
    let mut keyed: Vec<(f64, usize, usize)> = layer
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            // A neighbour below that feeds a right-hand port pulls this vertex right, and so on.
            let (nb, sign) = if use_up { (&verts[v].up, -1.0) } else { (&verts[v].down, 1.0) };
            let key = if nb.is_empty() {
                i as f64
            } else {
                nb.iter().map(|l| pos[l.v] as f64 + sign * l.port).sum::<f64>() / nb.len() as f64
            };
            (key, i, v)
        })
        .collect();
    keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    for (i, (_, _, v)) in keyed.into_iter().enumerate() {
        layer[i] = v;
        pos[v] = i;
    }
}

/// Positions closest (weighted least squares) to `desired` with `x[i+1] - x[i] >= sep[i]`
/// (pool-adjacent-violators on the shifted problem).
fn place(desired: &[f64], weight: &[f64], sep: &[f64]) -> Vec<f64> {
    let n = desired.len();
    let mut offset = vec![0.0; n];
    for i in 1..n {
        offset[i] = offset[i - 1] + sep[i - 1];
    }
    // Blocks of (sum of targets, count, length).
    let mut blocks: Vec<(f64, f64, usize)> = Vec::with_capacity(n);
    for i in 0..n {
        blocks.push((weight[i] * (desired[i] - offset[i]), weight[i], 1));
        while blocks.len() > 1 {
            let (s2, c2, l2) = blocks[blocks.len() - 1];
            let (s1, c1, l1) = blocks[blocks.len() - 2];
            if s1 / c1 <= s2 / c2 {
                break;
            }
            blocks.pop();
            *blocks.last_mut().expect("two blocks") = (s1 + s2, c1 + c2, l1 + l2);
        }
    }
    let mut out = Vec::with_capacity(n);
    for (s, c, l) in blocks {
        for _ in 0..l {
            let i = out.len();
            out.push(s / c + offset[i]);
        }
    }
    out
}

/// Lays the graph out (see the module documentation).
fn layout(graph: &MaseGraph) -> Layout {
    let n = graph.len();
    let nodes: Vec<&Node> = graph.nodes().map(|(_, nd)| nd).collect();
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, nd) in nodes.iter().enumerate() {
        for inp in &nd.inputs {
            users[inp.0].push(i);
        }
    }
    // 1. Layers.
    let mut layer = vec![0usize; n];
    for (i, nd) in nodes.iter().enumerate() {
        layer[i] = nd.inputs.iter().map(|p| layer[p.0] + 1).max().unwrap_or(0);
    }
    for (i, nd) in nodes.iter().enumerate() {
        if nd.inputs.is_empty() && !matches!(nd.op, crate::op::Op::Placeholder) {
            if let Some(m) = users[i].iter().map(|&u| layer[u]).min() {
                layer[i] = m.saturating_sub(1);
            }
        }
    }
    let layers = layer.iter().max().map_or(0, |m| m + 1);

    // Box sizes.
    let lines: Vec<Vec<String>> = nodes.iter().map(|nd| box_lines(nd)).collect();
    let max_lines = lines.iter().map(Vec::len).max().unwrap_or(1);
    let box_h = max_lines as f64 * LINE_H + 2.0 * PAD_Y;
    let mut verts: Vec<Vertex> = (0..n)
        .map(|i| {
            let chars = lines[i].iter().map(|l| l.chars().count()).max().unwrap_or(0);
            Vertex {
                node: Some(i),
                layer: layer[i],
                width: (chars as f64 * CHAR_W + 2.0 * PAD_X).max(48.0),
                x: 0.0,
                up: Vec::new(),
                down: Vec::new(),
            }
        })
        .collect();

    // 2. Dummies.
    let mut edges = Vec::new();
    for (v, nd) in nodes.iter().enumerate() {
        for (k, inp) in nd.inputs.iter().enumerate() {
            let u = inp.0;
            let mut chain = vec![u];
            for l in layer[u] + 1..layer[v] {
                let d = verts.len();
                verts.push(Vertex {
                    node: None,
                    layer: l,
                    width: DUMMY_W,
                    x: 0.0,
                    up: Vec::new(),
                    down: Vec::new(),
                });
                chain.push(d);
            }
            chain.push(v);
            let ports = nd.inputs.len() as f64;
            for w in chain.windows(2) {
                let port = if w[1] == v { (k as f64 + 1.0) / (ports + 1.0) - 0.5 } else { 0.0 };
                verts[w[0]].down.push(Link { v: w[1], port });
                verts[w[1]].up.push(Link { v: w[0], port });
            }
            edges.push(Edge { chain, port: k, ports: nd.inputs.len() });
        }
    }

    // 3. Ordering.
    let mut order: Vec<Vec<usize>> = vec![Vec::new(); layers];
    for (i, v) in verts.iter().enumerate() {
        order[v.layer].push(i);
    }
    let mut pos = vec![0usize; verts.len()];
    for l in &order {
        for (i, &v) in l.iter().enumerate() {
            pos[v] = i;
        }
    }
    let mut best = order.clone();
    let mut best_c = total_crossings(&verts, &order);
    for sweep in 0..12 {
        if best_c == 0 {
            break;
        }
        if sweep % 2 == 0 {
            for layer in order.iter_mut().skip(1) {
                barycenter_pass(&verts, &mut pos, layer, true);
            }
        } else {
            let last = layers.saturating_sub(1);
            for layer in order[..last].iter_mut().rev() {
                barycenter_pass(&verts, &mut pos, layer, false);
            }
        }
        let c = total_crossings(&verts, &order);
        if c < best_c {
            best_c = c;
            best = order.clone();
        }
    }
    let order = best;

    // 4. Coordinates: pack, then pull toward neighbours.
    let seps: Vec<Vec<f64>> = order
        .iter()
        .map(|l| l.windows(2).map(|w| (verts[w[0]].width + verts[w[1]].width) / 2.0 + GAP_X).collect())
        .collect();
    for (l, lv) in order.iter().enumerate() {
        let mut x = 0.0;
        for (i, &v) in lv.iter().enumerate() {
            if i > 0 {
                x += seps[l][i - 1];
            }
            verts[v].x = x;
        }
    }
    // Where a neighbour wants a vertex: above, so that the edge leaves straight down into the
    // port; below, likewise.
    let wants = |verts: &[Vertex], v: usize, up: bool| -> Vec<f64> {
        if up {
            verts[v].up.iter().map(|l| verts[l.v].x - l.port * verts[v].width).collect()
        } else {
            verts[v].down.iter().map(|l| verts[l.v].x + l.port * verts[l.v].width).collect()
        }
    };
    // Dummies weigh more, so long edges stay straight and boxes move around them.
    let weights: Vec<Vec<f64>> = order
        .iter()
        .map(|l| l.iter().map(|&v| if verts[v].node.is_some() { 1.0 } else { 2.0 }).collect())
        .collect();
    for sweep in 0..8 {
        let down = sweep % 2 == 0;
        let ls: Vec<usize> = if down { (0..layers).collect() } else { (0..layers).rev().collect() };
        for l in ls {
            let desired: Vec<f64> = order[l]
                .iter()
                .map(|&v| {
                    let nb = if sweep >= 6 {
                        // Last sweeps: balance between both sides.
                        [wants(&verts, v, true), wants(&verts, v, false)].concat()
                    } else {
                        wants(&verts, v, down)
                    };
                    if nb.is_empty() {
                        verts[v].x
                    } else {
                        nb.iter().sum::<f64>() / nb.len() as f64
                    }
                })
                .collect();
            let xs = place(&desired, &weights[l], &seps[l]);
            for (&v, x) in order[l].iter().zip(xs) {
                verts[v].x = x;
            }
        }
    }
    let min_left = verts.iter().map(|v| v.x - v.width / 2.0).fold(f64::INFINITY, f64::min);
    let shift = if min_left.is_finite() { MARGIN - min_left } else { MARGIN };
    for v in &mut verts {
        v.x += shift;
    }
    let max_right = verts.iter().map(|v| v.x + v.width / 2.0).fold(0.0, f64::max);
    let legend_w = MARGIN + ALL_TYPES.iter().map(|t| legend_item_w(*t)).sum::<f64>();
    let width = (max_right + MARGIN).max(legend_w + MARGIN).max(200.0);
    let height = MARGIN + LEGEND_H + layers as f64 * (box_h + GAP_Y) - GAP_Y + MARGIN;
    Layout { verts, edges, lines, box_h, layers, width, height }
}

/// Width of one legend entry.
fn legend_item_w(t: MaseType) -> f64 {
    14.0 + 4.0 + type_name(t).len() as f64 * CHAR_W + 14.0
}

/// Formats a coordinate with one decimal (deterministic, compact).
fn f(v: f64) -> String {
    let s = format!("{v:.1}");
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

/// The graph as a standalone SVG document (see the module documentation).
pub fn to_svg(graph: &MaseGraph) -> String {
    let lay = layout(graph);
    let nodes: Vec<&Node> = graph.nodes().map(|(_, nd)| nd).collect();
    let mut s = String::new();
    let _ = writeln!(s, r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="{FONT}">"#,
        w = f(lay.width),
        h = f(lay.height)
    );
    let _ = writeln!(s, "<title>{}</title>", xml_escape(&graph.name));
    let _ = writeln!(
        s,
        r##"<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>"##
    );
    let _ = writeln!(
        s,
        r#"<rect x="0" y="0" width="{}" height="{}" fill="white"/>"#,
        f(lay.width),
        f(lay.height)
    );

    // Legend: the mase types present.
    let mut lx = MARGIN;
    let ly = MARGIN;
    let _ = writeln!(s, r#"<g class="legend">"#);
    for t in ALL_TYPES {
        if !nodes.iter().any(|nd| nd.meta.common.mase_type == t) {
            continue;
        }
        let (fill, stroke) = colors(t);
        let _ = writeln!(
            s,
            r#"<rect x="{}" y="{}" width="14" height="14" rx="3" fill="{fill}" stroke="{stroke}"/><text x="{}" y="{}">{}</text>"#,
            f(lx),
            f(ly),
            f(lx + 18.0),
            f(ly + 11.0),
            type_name(t)
        );
        lx += legend_item_w(t);
    }
    let _ = writeln!(s, "</g>");

    // Edges.
    let _ = writeln!(s, r##"<g class="edges" fill="none" stroke="#555" stroke-width="1.2">"##);
    for e in &lay.edges {
        let src = &lay.verts[e.chain[0]];
        let dst = &lay.verts[*e.chain.last().expect("an edge has two ends")];
        let mut pts: Vec<(f64, f64)> = vec![(src.x, lay.layer_top(src.layer) + lay.box_h)];
        for &d in &e.chain[1..e.chain.len() - 1] {
            let v = &lay.verts[d];
            pts.push((v.x, lay.layer_top(v.layer)));
            pts.push((v.x, lay.layer_top(v.layer) + lay.box_h));
        }
        let left = dst.x - dst.width / 2.0;
        let port_x = left + dst.width * (e.port + 1) as f64 / (e.ports + 1) as f64;
        pts.push((port_x, lay.layer_top(dst.layer)));
        let mut d = format!("M{},{}", f(pts[0].0), f(pts[0].1));
        for w in pts.windows(2) {
            let ((x0, y0), (x1, y1)) = (w[0], w[1]);
            if x0 == x1 {
                let _ = write!(d, " L{},{}", f(x1), f(y1));
            } else {
                let dy = (y1 - y0) / 2.0;
                let _ = write!(d, " C{},{} {},{} {},{}", f(x0), f(y0 + dy), f(x1), f(y1 - dy), f(x1), f(y1));
            }
        }
        let from = &nodes[src.node.expect("edges start at nodes")].name;
        let to = &nodes[dst.node.expect("edges end at nodes")].name;
        let _ = writeln!(
            s,
            r#"<path d="{d}" marker-end="url(#arrow)"><title>{} → {} (data_in_{})</title></path>"#,
            xml_escape(from),
            xml_escape(to),
            e.port
        );
    }
    let _ = writeln!(s, "</g>");

    // Boxes.
    let _ = writeln!(s, r#"<g class="nodes">"#);
    for v in &lay.verts {
        let Some(i) = v.node else { continue };
        let nd = nodes[i];
        let (fill, stroke) = colors(nd.meta.common.mase_type);
        let top = lay.layer_top(v.layer);
        let left = v.x - v.width / 2.0;
        let _ = writeln!(s, "<g><title>{}</title>", xml_escape(&tooltip(nd)));
        let _ = writeln!(
            s,
            r#"<rect x="{}" y="{}" width="{}" height="{}" rx="6" fill="{fill}" stroke="{stroke}" stroke-width="1.2"/>"#,
            f(left),
            f(top),
            f(v.width),
            f(lay.box_h)
        );
        for (k, line) in lay.lines[i].iter().enumerate() {
            let style = match k {
                0 => r#" font-weight="bold""#,
                1 => "",
                _ => r##" fill="#444""##,
            };
            let _ = writeln!(
                s,
                r#"<text x="{}" y="{}" text-anchor="middle"{style}>{}</text>"#,
                f(v.x),
                f(top + PAD_Y + LINE_H * (k as f64 + 1.0) - 3.0),
                xml_escape(line)
            );
        }
        let _ = writeln!(s, "</g>");
    }
    let _ = writeln!(s, "</g>");
    let _ = writeln!(s, "</svg>");
    debug_assert!(lay.layers == 0 || lay.height > 0.0);
    s
}

/// Tooltip text of a node: full name, op, kind, origin and shape.
fn tooltip(nd: &Node) -> String {
    let mut t = format!(
        "{}\nmase_op: {}\nmase_type: {}",
        nd.name,
        nd.op.mase_op(),
        type_name(nd.meta.common.mase_type)
    );
    if let Some(s) = shape_line(nd) {
        let _ = write!(t, "\nshape: {s}");
    }
    if let Some(o) = &nd.origin {
        let _ = write!(t, "\nONNX node: {o}");
    }
    t
}

/// The graph in Graphviz DOT: one box per node (name, mase op, output shape; filled by mase
/// type) and one edge per input, labelled with its argument index when a node has several.
pub fn to_dot(graph: &MaseGraph) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "digraph \"{}\" {{", dot_escape(&graph.name));
    let _ = writeln!(s, "  rankdir=TB;");
    let _ = writeln!(s, "  node [shape=box, style=\"rounded,filled\", fontname=\"monospace\", fontsize=10];");
    for (_, nd) in graph.nodes() {
        let (fill, stroke) = colors(nd.meta.common.mase_type);
        let mut label = vec![nd.name.clone(), nd.op.mase_op().to_string()];
        if let Some(sh) = shape_line(nd) {
            label.push(sh);
        }
        let _ = writeln!(
            s,
            "  \"{}\" [label=\"{}\", fillcolor=\"{fill}\", color=\"{stroke}\"];",
            dot_escape(&nd.name),
            dot_escape(&label.join("\n"))
        );
    }
    for (_, nd) in graph.nodes() {
        for (k, inp) in nd.inputs.iter().enumerate() {
            let attr = if nd.inputs.len() > 1 { format!(" [label=\"{k}\"]") } else { String::new() };
            let _ = writeln!(
                s,
                "  \"{}\" -> \"{}\"{attr};",
                dot_escape(&graph.node(*inp).name),
                dot_escape(&nd.name)
            );
        }
    }
    let _ = writeln!(s, "}}");
    s
}

/// Writes the drawing to `path`: DOT when it ends in `.dot` or `.gv`, SVG otherwise.
pub fn save(graph: &MaseGraph, path: &Path) -> Result<()> {
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    let text = match ext.as_deref() {
        Some("dot" | "gv") => to_dot(graph),
        Some("svg") | None => to_svg(graph),
        Some(other) => {
            return Err(Error::file(path, format!("cannot draw to a .{other} file; use .svg or .dot")));
        }
    };
    std::fs::write(path, text).map_err(|e| Error::io(path, e))
}
