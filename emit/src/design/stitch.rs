//! [`stitch`]: the design built in three named phases over the graph's bound nodes —
//! [`place`] (ports and one instance per hardware node), [`size_fifos`] (buffering on joins) and
//! [`connect`] (forks, FIFOs, casts and lane converters between each producer and its consumers).

use super::*;

/// Builds the design of a bound graph with the given parallelism per hardware node.
pub fn stitch(bound: &Bindings, par: &BTreeMap<NodeId, Par>, top: &str) -> Result<Design> {
    let mut b = Builder {
        d: Design {
            top: top.to_string(),
            graph: bound.graph.name.clone(),
            ports: Vec::new(),
            instances: Vec::new(),
            wires: Vec::new(),
        },
        names: BTreeMap::new(),
    };
    let mut placed = place(&mut b, bound, par)?;
    size_fifos(&mut placed);
    connect(&mut b, bound, placed)?;
    Ok(b.d)
}

/// What placing the nodes leaves to the later phases of [`stitch`].
struct Placement {
    /// The stream each graph input and hardware node produces (after its output cast).
    srcs: BTreeMap<NodeId, Src>,
    /// What each consumer of a stream needs (format, lanes, shape, FIFO depth), per producer.
    demands: BTreeMap<NodeId, Vec<Demand>>,
    /// Instances joining several streams, with when each input's data arrives.
    joins: Vec<(usize, Vec<JoinInput>)>,
    /// Graph outputs: (stream source, the output tensor's node, its shape).
    outputs: Vec<(NodeId, NodeId, Vec<usize>)>,
}

/// Phase 1 (place): the top's input ports and one instance per hardware node (with its output
/// cast); records what each consumer needs of its streams.
fn place(b: &mut Builder, bound: &Bindings, par: &BTreeMap<NodeId, Par>) -> Result<Placement> {
    let graph = bound.graph;
    let mut srcs: BTreeMap<NodeId, Src> = BTreeMap::new();
    let mut demands: BTreeMap<NodeId, Vec<Demand>> = BTreeMap::new();
    let mut joins: Vec<(usize, Vec<JoinInput>)> = Vec::new();
    // Graph outputs: (stream source, the output tensor's node, its shape).
    let mut outputs: Vec<(NodeId, NodeId, Vec<usize>)> = Vec::new();
    let mut n_in = 0;
    for (id, nb) in bound.iter() {
        let node = graph.node(id);
        let v = bound.view(id);
        let implementation = match (nb.role, &nb.implementation) {
            (Role::Input, _) => {
                let fmt = v.out_format()?;
                let shape = v.out_shape()?;
                let lanes = input_lanes(bound, id, par, &shape)?;
                b.d.ports.push(TopPort {
                    name: format!("data_in_{n_in}"),
                    tensor: node.name.clone(),
                    dir: PortDir::Input,
                    format: fmt,
                    lanes,
                    shape: shape.clone(),
                });
                n_in += 1;
                srcs.insert(id, Src { ep: Endpoint::Top(b.d.ports.len() - 1), fmt, lanes, shape, hold: 0.0 });
                continue;
            }
            (Role::Output, _) => {
                for (&tensor, src) in node.inputs.iter().zip(&nb.sources) {
                    outputs.push((*src, tensor, result_shape(graph.node(tensor))?));
                }
                continue;
            }
            (Role::Implicit | Role::Constant, _) | (Role::Hardware, None) => continue,
            (Role::Hardware, Some(i)) => i,
        };
        let (cname, p, ext, lib) = match implementation {
            Implementation::External(e) => ("external", e.params.clone(), Some(e.clone()), None),
            Implementation::Library(c) => {
                let pp = *par
                    .get(&id)
                    .ok_or_else(|| node.error("has no parallelism; run add_hardware_metadata first"))?;
                (c.name(), bound.params(id, pp)?, None, Some(*c))
            }
        };
        let numel: usize = v.in_shape(0)?.iter().product();
        let inst = b.add(&node.name, cname, p.clone(), &node.name, InstKind::Node, numel);
        if lib.is_some() {
            b.d.instances[inst].memories = bound.memories(id, &p)?;
        }
        b.d.instances[inst].external = ext.clone();
        let mut hold_in = 0f64;
        let mut join = Vec::new();
        let mut in_fmt0 = None;
        for (k, s) in nb.sources.iter().enumerate() {
            let port = format!("data_in_{k}");
            let prefix = port.to_uppercase();
            let declared = v.in_format(k)?;
            let fmt = if ext.is_some() { declared } else { component_input(&p, &prefix, &declared) };
            in_fmt0.get_or_insert(fmt);
            let src = srcs
                .get(s)
                .ok_or_else(|| node.error(format!("input {k} has no stream (producer not bound)")))?;
            hold_in = hold_in.max(src.hold);
            let lead = match lib {
                Some(c) => c.input_lead(&v, k)?,
                None => 0.0,
            };
            join.push((*s, k, src.hold + lead));
            let lanes = match (&ext, lib) {
                (Some(e), _) => e.manifest.lanes,
                (None, Some(c)) => declared_lanes(c, &p, &port),
                (None, None) => stream_lanes(&p, &prefix),
            };
            demands.entry(*s).or_default().push(Demand {
                inst,
                port,
                fmt,
                lanes,
                shape: stream_shape(graph, graph.node(node.inputs[k]))?,
                fifo_depth: 0,
            });
        }
        if join.len() > 1 {
            joins.push((inst, join));
        }
        let produced = match &ext {
            Some(e) => e.output,
            None => produced_format(&b.d.instances[inst], &in_fmt0.map_or_else(|| v.out_format(), Ok)?),
        };
        let src = Src {
            ep: Endpoint::Inst(inst, "data_out_0".into()),
            fmt: produced,
            lanes: ext.as_ref().map_or_else(|| stream_lanes(&p, "DATA_OUT_0"), |e| e.manifest.lanes),
            shape: stream_shape(graph, node)?,
            hold: hold_in + hold(&b.d.instances[inst]),
        };
        let src = b.cast(&node.name, src, &v.out_format()?)?;
        srcs.insert(id, src);
    }
    Ok(Placement { srcs, demands, joins, outputs })
}

/// Elements per beat of a library instance's input `port`, as its stream specification says
/// (a masked softmax's keep bits have no parameters of their own).
fn declared_lanes(c: &dyn mase_hwlib::Binding, p: &Params, port: &str) -> usize {
    c.streams(p)
        .into_iter()
        .find(|s| s.name == port)
        .map_or_else(|| stream_lanes(p, &port.to_uppercase()), |s| s.lanes)
}

/// The format a library instance takes on input `prefix` for a declared format: the declared
/// one when the instance's `<prefix>_PRECISION_*` say so (a component that only moves elements
/// takes either signedness), otherwise the signed view the binding chose (one bit wider).
fn component_input(p: &Params, prefix: &str, declared: &FixedFormat) -> FixedFormat {
    match (p.get(&format!("{prefix}_PRECISION_0")), p.get(&format!("{prefix}_PRECISION_1"))) {
        (Some(&w), Some(&f)) if w != declared.width as i64 || f != declared.frac as i64 => {
            FixedFormat { signed: true, width: w as u32, frac: f as i32, ..*declared }
        }
        _ => *declared,
    }
}

/// Phase 2 (size FIFOs): on each join, the inputs whose data arrives earlier get a FIFO deep
/// enough to hold the difference.
fn size_fifos(p: &mut Placement) {
    let Placement { srcs, demands, joins, .. } = p;
    for (inst, join) in joins.iter() {
        let start = join.iter().map(|j| j.2).fold(0f64, f64::max);
        for (s, k, h) in join {
            let slack = start - h;
            if slack <= 1e-9 {
                continue;
            }
            let src = &srcs[s];
            let beats = src.shape.iter().product::<usize>() as f64 / src.lanes as f64;
            let port = format!("data_in_{k}");
            if let Some(d) =
                demands.get_mut(s).and_then(|v| v.iter_mut().find(|d| d.inst == *inst && d.port == port))
            {
                d.fifo_depth = (slack * beats).ceil() as usize + 2;
            }
        }
    }
}

/// Phase 3 (connect): the top's output ports, then every stream wired to its consumers through
/// forks, FIFOs, casts and lane converters.
fn connect(b: &mut Builder, bound: &Bindings, p: Placement) -> Result<()> {
    let graph = bound.graph;
    let Placement { srcs, mut demands, outputs, .. } = p;
    // Top outputs.
    let mut out_demands: Vec<(NodeId, usize)> = Vec::new();
    for (k, (s, tensor, shape)) in outputs.iter().enumerate() {
        let src = srcs.get(s).ok_or_else(|| graph_error("the graph output has no stream"))?.clone();
        b.d.ports.push(TopPort {
            name: format!("data_out_{k}"),
            tensor: graph.node(*tensor).name.clone(),
            dir: PortDir::Output,
            format: src.fmt,
            lanes: src.lanes,
            shape: shape.clone(),
        });
        out_demands.push((*s, b.d.ports.len() - 1));
    }
    // Pass 2: connect every stream to its consumers.
    for (id, src) in srcs.clone() {
        let mut legs: Vec<(Option<Demand>, Option<usize>)> =
            demands.remove(&id).unwrap_or_default().into_iter().map(|d| (Some(d), None)).collect();
        legs.extend(out_demands.iter().filter(|(s, _)| *s == id).map(|(_, port)| (None, Some(*port))));
        if legs.is_empty() {
            return Err(graph.node(id).error("its result is not used by any hardware node or output"));
        }
        let name = graph.node(id).name.clone();
        let mut cur = src;
        let n = legs.len();
        for (i, (demand, port)) in legs.into_iter().enumerate() {
            let leg = if i + 1 < n {
                // Fork: leg i takes data_out_0, the rest continue from data_out_1.
                let (rows, cols) = cur.rows_cols();
                let numel = rows * cols;
                let o = fork::instance(&cur.fmt, rows, cols, cur.lanes);
                let f = b.glue(&name, "fork", "fork", o, InstKind::Fork, numel)?;
                b.wire(cur.ep.clone(), Endpoint::Inst(f, "data_in_0".into()), cur.lanes, cur.fmt);
                let leg = Src { ep: Endpoint::Inst(f, "data_out_0".into()), ..cur.clone() };
                cur = Src { ep: Endpoint::Inst(f, "data_out_1".into()), ..cur.clone() };
                leg
            } else {
                cur.clone()
            };
            match (demand, port) {
                (Some(d), _) => {
                    let consumer = b.d.instances[d.inst].name.clone();
                    let mut s = leg;
                    if d.fifo_depth > 0 {
                        let o = fifo::instance(s.fmt.width, s.lanes, d.fifo_depth);
                        let numel: usize = s.shape.iter().product();
                        let f = b.glue(
                            &format!("{consumer}_{}", d.port),
                            "fifo",
                            "fifo",
                            o,
                            InstKind::Fifo,
                            numel,
                        )?;
                        let (fmt, lanes) = (s.fmt, s.lanes);
                        s = b.chain(s, f, fmt, lanes);
                    }
                    s = b.cast(&format!("{consumer}_{}", d.port), s, &d.fmt)?;
                    s.shape = d.shape.clone();
                    s = b.convert_lanes(&consumer, s, d.lanes)?;
                    b.wire(s.ep, Endpoint::Inst(d.inst, d.port.clone()), s.lanes, s.fmt);
                }
                (None, Some(port)) => b.wire(leg.ep, Endpoint::Top(port), leg.lanes, leg.fmt),
                (None, None) => unreachable!("every leg is a consumer or a port"),
            }
        }
    }
    Ok(())
}

/// Elements per beat of a graph input: what its first consumer takes, if that divides the
/// input's rows; otherwise the largest divisor of the row length not above it.
fn input_lanes(bound: &Bindings, id: NodeId, par: &BTreeMap<NodeId, Par>, shape: &[usize]) -> Result<usize> {
    let cols = *shape.last().unwrap_or(&1);
    let want = bound
        .iter()
        .filter(|(u, _)| par.contains_key(u))
        .find(|(_, u)| u.sources.contains(&id))
        .map(|(u, _)| u)
        .map(|u| par[&u].p_in)
        .unwrap_or(1);
    Ok((1..=want.min(cols)).rev().find(|d| cols.is_multiple_of(*d)).unwrap_or(1))
}
