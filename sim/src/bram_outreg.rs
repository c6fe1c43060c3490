//! Folding a register that follows an ECP5 block RAM into the block RAM's own output register
//! ([`absorb_output_registers`]), a pass over the Yosys JSON netlist between `synth_ecp5` and
//! nextpnr-ecp5.
//!
//! Why: Yosys 0.23 maps every synchronous-read memory to a `DP16KD` with `REGMODE_x = "NOREG"`.
//! Without the output register the block RAM's clock-to-out is 5.83 ns on speed grade 6 (nextpnr's
//! timing model), which with routing and a flip-flop's setup caps a design near 124 MHz. With
//! `REGMODE_x = "OUTREG"` it is 0.96 ns. The emitted RTL already registers each block-RAM read once
//! more (`r_w <= w` on the same enable as the memory read), the structure a vendor tool folds into
//! the output register; Yosys leaves it in fabric flip-flops, so this pass moves it.
//!
//! The ECP5 flow (`crate::pnr`) runs it on every netlist. What that buys depends on what reads
//! the register. Where it is the only register between the read and a multiplier without input
//! registers, the flip-flops had sat next to the multiplier and the block RAM-to-multiplier
//! routing joins the multiplier's path instead: measured on `mlp_gemm_relu` (LFE5U-85F-6, seed 1)
//! Fmax went from 125.7 to 120.4 MHz. With a second register after the read (the multipliers'
//! input registers, `mase_dot_product`'s stage D) the pass folds the first and the design gains:
//! `mlp_gemm_relu` 203.0 MHz, the linear's weight ROM no longer on any critical path.
//!
//! Semantics relied on (Lattice's DP16KC/DP16KD simulation model and nextpnr-ecp5's handling of
//! `PDPW16KD`; Yosys 0.23's `cells_sim.v` has no behaviour for `DP16KD`):
//! - A read port's data latch loads on its clock edge when `CEx` is high (its output in `NOREG`).
//! - In `OUTREG` the output register loads that latch on the same clock edge when `OCEx` is high,
//!   regardless of `CEx`; `RSTx` clears it (synchronously when `OCEx` is high, or asynchronously
//!   with `RESETMODE = "ASYNC"`); power-up (and the global reset when `GSR = "ENABLED"`) clears it.
//! - In the 36-bit pseudo-dual-port mode (`DATA_WIDTH_A = DATA_WIDTH_B = 36`, as Yosys maps a
//!   `$__ECP5_PDPW16KD_`) all 36 outputs `DOA0..17`, `DOB0..17` belong to the read port B: clock
//!   `CLKB`, `OCEB`, `RSTB`, and `REGMODE_A` selects the register for the `DOA` half, so both
//!   `REGMODE_A` and `REGMODE_B` change together (as nextpnr maps `PDPW16KD`'s single `REGMODE`).
//!
//! So a port's latch followed by flip-flops with enable `e` on every used output bit equals the
//! same port in `OUTREG` with `OCEx = e`, provided the flip-flops are never set or reset, start at
//! 0 like the output register, clock on the port's clock edge and see the same global reset. Any
//! doubt leaves the cell alone.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

/// Folds, in every non-blackbox module of the Yosys JSON `netlist`, each `DP16KD` read port whose
/// used outputs all feed foldable flip-flops into that port's output register, and returns how
/// many ports it changed.
///
/// A port folds when its `REGMODE` is `NOREG`, its reset is tied inactive, and every data-out bit
/// that anything uses drives exactly one sink: the `DI` of a `TRELLIS_FF` (no top-level port, no
/// second cell). Those flip-flops must all have the port's clock net on the same edge, one
/// common enable (a `CE` net, inverted or not, or none), no set/reset in use, `REGSET = "RESET"`
/// (power-up value 0), and, when the module has a `GSR`/`SGSR` cell, the block RAM's `GSR`
/// setting. Then `REGMODE_x` becomes `OUTREG`, `OCEx` takes the flip-flops' enable (with
/// `OCExMUX = "INV"` for an inverted one, which nextpnr-ecp5 writes to the bitstream), each data-out
/// bit drives the flip-flop's `Q` net, the flip-flops go, and the data-out bits' old nets are
/// cleared from `netnames` (set to `"x"`: the unregistered read no longer exists as a net).
pub fn absorb_output_registers(netlist: &mut Value) -> usize {
    let Some(modules) = netlist.get_mut("modules").and_then(Value::as_object_mut) else { return 0 };
    modules.values_mut().filter(|m| !is_blackbox(m)).map(absorb_in_module).sum()
}

/// One bit of a connection: a net id, or a constant (`"x"`/`"z"` are neither 0 nor 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Bit {
    Net(u64),
    Zero,
    One,
    Undef,
}

impl Bit {
    fn of(v: &Value) -> Bit {
        match v {
            Value::Number(n) => n.as_u64().map_or(Bit::Undef, Bit::Net),
            Value::String(s) if s == "0" => Bit::Zero,
            Value::String(s) if s == "1" => Bit::One,
            _ => Bit::Undef,
        }
    }
}

/// A flip-flop's clock enable, or the value an output register's `OCE` gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Enable {
    /// Always (true) or never (false) loads.
    Const(bool),
    /// Loads when the net is high (or low, when inverted).
    Net { net: u64, inverted: bool },
}

/// What folding one read port does.
#[derive(Debug)]
struct Fold {
    /// The `DP16KD` cell.
    bram: String,
    /// `A` or `B`: whose `OCE` and (outside the 36-bit mode) `REGMODE` change.
    port: char,
    /// 36-bit pseudo-dual-port: both `REGMODE`s change.
    pdp: bool,
    /// Each used data-out port, the flip-flop it feeds, that flip-flop's `Q` bit and the
    /// data-out's old net.
    bits: Vec<(String, String, Value, u64)>,
    /// The flip-flops' common enable.
    enable: Enable,
}

fn is_blackbox(module: &Value) -> bool {
    let attr = |k: &str| module.get("attributes").and_then(|a| a.get(k)).is_some_and(truthy);
    attr("blackbox") || attr("whitebox")
}

/// A Yosys JSON attribute or parameter that is a non-zero number (`"00…01"`, or a JSON number).
fn truthy(v: &Value) -> bool {
    match v {
        Value::String(s) => s.chars().any(|c| c == '1'),
        Value::Number(n) => n.as_u64().is_some_and(|n| n != 0),
        _ => false,
    }
}

/// A string parameter, without the trailing space Yosys adds to a string that would otherwise
/// read as a bit vector (`"1 "` is the string `1`).
fn param<'a>(cell: &'a Value, name: &str) -> Option<&'a str> {
    let s = cell.get("parameters")?.get(name)?.as_str()?;
    Some(s.strip_suffix(' ').unwrap_or(s))
}

/// An integer parameter: Yosys writes integers as binary digit strings.
fn int_param(cell: &Value, name: &str) -> Option<u64> {
    match cell.get("parameters")?.get(name)? {
        Value::String(s) => u64::from_str_radix(s.trim(), 2).ok(),
        Value::Number(n) => n.as_u64(),
        _ => None,
    }
}

/// The single bit on `port` (None when the port is absent or not one bit wide).
fn port_bit(cell: &Value, port: &str) -> Option<Bit> {
    match cell.get("connections")?.get(port)?.as_array()?.as_slice() {
        [b] => Some(Bit::of(b)),
        _ => None,
    }
}

fn cell_type(cell: &Value) -> &str {
    cell.get("type").and_then(Value::as_str).unwrap_or_default()
}

/// Every reader of each net: `(cell, port)` for cell inputs (and inouts), `("", port)` for the
/// module's ports of any direction (a module port is visible outside, so it counts as a reader).
fn readers(module: &Value) -> HashMap<u64, Vec<(String, String)>> {
    let mut out: HashMap<u64, Vec<(String, String)>> = HashMap::new();
    let cells = module.get("cells").and_then(Value::as_object);
    for (name, cell) in cells.into_iter().flatten() {
        let dirs = cell.get("port_directions");
        let conns = cell.get("connections").and_then(Value::as_object);
        for (port, bits) in conns.into_iter().flatten() {
            // A port without a direction could be read: count it.
            let dir = dirs.and_then(|d| d.get(port)).and_then(Value::as_str).unwrap_or("input");
            if dir == "output" {
                continue;
            }
            for b in bits.as_array().into_iter().flatten() {
                if let Bit::Net(n) = Bit::of(b) {
                    out.entry(n).or_default().push((name.clone(), port.clone()));
                }
            }
        }
    }
    let ports = module.get("ports").and_then(Value::as_object);
    for (port, p) in ports.into_iter().flatten() {
        for b in p.get("bits").and_then(Value::as_array).into_iter().flatten() {
            if let Bit::Net(n) = Bit::of(b) {
                out.entry(n).or_default().push((String::new(), port.clone()));
            }
        }
    }
    out
}

/// Whether `pin` of `cell`, behind its `<pin>MUX` parameter (`mux_default` when absent), is tied
/// low for good: the constant 0 through the plain mux, or 1 through `INV`. An absent pin with the
/// plain mux also counts (nextpnr leaves it unused).
fn tied_low(cell: &Value, pin: &str, mux: &str, plain: &str) -> bool {
    let m = param(cell, mux).unwrap_or(plain);
    match (port_bit(cell, pin), m) {
        (None | Some(Bit::Zero), m) if m == plain => true,
        (Some(Bit::One), "INV") => true,
        _ => false,
    }
}

/// The clock net and whether it is inverted, behind `mux` (`plain`: not inverted, the default).
fn clock(cell: &Value, pin: &str, mux: &str, plain: &str) -> Option<(u64, bool)> {
    let inverted = match param(cell, mux).unwrap_or(plain) {
        "INV" => true,
        m if m == plain => false,
        _ => return None,
    };
    match port_bit(cell, pin)? {
        Bit::Net(n) => Some((n, inverted)),
        _ => None,
    }
}

/// A `TRELLIS_FF`'s enable. `CEMUX` must be given: its default differs between Yosys's model
/// ("1") and parts of nextpnr ("CE").
fn ff_enable(ff: &Value) -> Option<Enable> {
    let inverted = match param(ff, "CEMUX")? {
        "1" => return Some(Enable::Const(true)),
        "0" => return Some(Enable::Const(false)),
        "CE" => false,
        "INV" => true,
        _ => return None,
    };
    match port_bit(ff, "CE")? {
        Bit::Net(net) => Some(Enable::Net { net, inverted }),
        Bit::Zero => Some(Enable::Const(inverted)),
        Bit::One => Some(Enable::Const(!inverted)),
        Bit::Undef => None,
    }
}

/// The block RAM's or flip-flop's `GSR` when it is one nextpnr understands.
fn gsr(cell: &Value) -> Option<&str> {
    param(cell, "GSR").filter(|g| matches!(*g, "ENABLED" | "DISABLED"))
}

/// Plans folding read port `port` of the `DP16KD` `name` (see [`absorb_output_registers`]).
fn plan(
    module: &Value,
    readers: &HashMap<u64, Vec<(String, String)>>,
    has_gsr: bool,
    name: &str,
    port: char,
) -> Option<Fold> {
    let cells = module.get("cells")?.as_object()?;
    let bram = cells.get(name)?;
    let (wa, wb) = (int_param(bram, "DATA_WIDTH_A"), int_param(bram, "DATA_WIDTH_B"));
    let pdp = match (wa == Some(36), wb == Some(36)) {
        (true, true) => true,
        (false, false) => false,
        // One side 36 bits wide: not a mode Yosys emits; the port roles are unclear.
        _ => return None,
    };
    if pdp && port != 'B' {
        return None;
    }
    let regmodes: &[&str] = if pdp { &["REGMODE_A", "REGMODE_B"] } else { &[] };
    let own = format!("REGMODE_{port}");
    for r in regmodes.iter().copied().chain([own.as_str()]) {
        if param(bram, r).unwrap_or("NOREG") != "NOREG" {
            return None;
        }
    }
    let (clk, rst) = (format!("CLK{port}"), format!("RST{port}"));
    let clk_net = clock(bram, &clk, &format!("{clk}MUX"), &clk)?;
    // A reset would clear the latch and the output register on different cycles than the latch
    // and a plain flip-flop; only a reset that never fires keeps them the same. In the 36-bit mode
    // Lattice's PDPW16KD has one RST driving both RSTA and RSTB: both must be idle.
    let resets: &[&str] = if pdp { &["RSTA", "RSTB"] } else { &[rst.as_str()] };
    if !resets.iter().all(|r| tied_low(bram, r, &format!("{r}MUX"), r)) {
        return None;
    }
    if has_gsr && gsr(bram).is_none() {
        return None;
    }
    let outputs: Vec<String> = if pdp {
        ['A', 'B'].iter().flat_map(|p| (0..18).map(move |i| format!("DO{p}{i}"))).collect()
    } else {
        (0..18).map(|i| format!("DO{port}{i}")).collect()
    };
    let mut bits = Vec::new();
    let mut enable = None;
    for out in outputs {
        let Some(Bit::Net(net)) = port_bit(bram, &out) else { continue };
        let ffs = readers.get(&net).map(Vec::as_slice).unwrap_or_default();
        let ff_name = match ffs {
            [] => continue, // unused bit: it may as well be registered
            [(ff, pin)] if pin == "DI" && !ff.is_empty() => ff,
            _ => return None,
        };
        let ff = cells.get(ff_name)?;
        if cell_type(ff) != "TRELLIS_FF"
            || clock(ff, "CLK", "CLKMUX", "CLK")? != clk_net
            || !tied_low(ff, "LSR", "LSRMUX", "LSR")
            // The output register powers up (and resets on GSR) to 0.
            || param(ff, "REGSET").unwrap_or("RESET") != "RESET"
            || (has_gsr && gsr(ff) != gsr(bram))
        {
            return None;
        }
        let e = ff_enable(ff)?;
        if *enable.get_or_insert(e) != e {
            return None;
        }
        let q = ff.get("connections")?.get("Q")?.as_array()?;
        let [q @ Value::Number(_)] = q.as_slice() else { return None };
        bits.push((out, ff_name.clone(), q.clone(), net));
    }
    Some(Fold { bram: name.to_string(), port, pdp, bits, enable: enable? })
}

/// Plans and applies every fold of one module; the number of ports changed.
fn absorb_in_module(module: &mut Value) -> usize {
    let Some(cells) = module.get("cells").and_then(Value::as_object) else { return 0 };
    let brams: Vec<String> =
        cells.iter().filter(|(_, c)| cell_type(c) == "DP16KD").map(|(n, _)| n.clone()).collect();
    if brams.is_empty() {
        return 0;
    }
    let has_gsr = cells.values().any(|c| matches!(cell_type(c), "GSR" | "SGSR"));
    let readers = readers(module);
    // Plans are independent: each flip-flop reads one net, which one data-out bit drives.
    let folds: Vec<Fold> = brams
        .iter()
        .flat_map(|b| ['A', 'B'].map(|p| plan(module, &readers, has_gsr, b, p)))
        .flatten()
        .collect();
    let mut gone = HashSet::new();
    let cells = module.get_mut("cells").and_then(Value::as_object_mut).expect("cells checked above");
    for f in &folds {
        for (_, ff, _, net) in &f.bits {
            cells.remove(ff);
            gone.insert(*net);
        }
        let bram = cells.get_mut(&f.bram).expect("planned on an existing cell");
        apply(bram, f);
    }
    if let Some(names) = module.get_mut("netnames").and_then(Value::as_object_mut) {
        clear_nets(names, &gone);
    }
    folds.len()
}

/// Rewires the block RAM of `f`.
fn apply(bram: &mut Value, f: &Fold) {
    let (oce, ocemux) = (format!("OCE{}", f.port), format!("OCE{}MUX", f.port));
    let obj = bram.as_object_mut().expect("a cell is an object");
    let params = obj.entry("parameters").or_insert_with(|| Value::Object(Map::new()));
    let params = params.as_object_mut().expect("parameters are an object");
    let regmodes: &[char] = if f.pdp { &['A', 'B'] } else { &[f.port] };
    for p in regmodes {
        params.insert(format!("REGMODE_{p}"), "OUTREG".into());
    }
    let (bit, mux) = match f.enable {
        Enable::Const(b) => (Value::from(if b { "1" } else { "0" }), oce.clone()),
        Enable::Net { net, inverted } => {
            (Value::from(net), if inverted { "INV".into() } else { oce.clone() })
        }
    };
    params.insert(ocemux, mux.into());
    let conns = obj.entry("connections").or_insert_with(|| Value::Object(Map::new()));
    let conns = conns.as_object_mut().expect("connections are an object");
    conns.insert(oce.clone(), Value::Array(vec![bit]));
    for (out, _, q, _) in &f.bits {
        conns.insert(out.clone(), Value::Array(vec![q.clone()]));
    }
    if let Some(dirs) = obj.get_mut("port_directions").and_then(Value::as_object_mut) {
        dirs.insert(oce, "input".into());
    }
}

/// Replaces the nets `gone` with `"x"` in every `netnames` entry.
fn clear_nets(names: &mut Map<String, Value>, gone: &HashSet<u64>) {
    for entry in names.values_mut() {
        for b in entry.get_mut("bits").and_then(Value::as_array_mut).into_iter().flatten() {
            if matches!(Bit::of(b), Bit::Net(n) if gone.contains(&n)) {
                *b = "x".into();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A `DP16KD` in the 18-bit mode reading on port B (clock net 2, read enable net 3), data
    /// out bits 0 and 1 on nets 10 and 11, the others unconnected; port A unused.
    fn bram() -> Value {
        json!({
            "type": "DP16KD",
            "parameters": {
                "DATA_WIDTH_A": "00000000000000000000000000010010",
                "DATA_WIDTH_B": "00000000000000000000000000010010",
                "REGMODE_A": "NOREG", "REGMODE_B": "NOREG", "GSR": "DISABLED", "RESETMODE": "SYNC"
            },
            "port_directions": {
                "CLKA": "input", "CLKB": "input", "CEB": "input", "OCEB": "input", "RSTB": "input",
                "OCEA": "input", "RSTA": "input", "DOB0": "output", "DOB1": "output"
            },
            "connections": {
                "CLKA": ["0"], "CLKB": [2], "CEB": [3], "OCEB": ["1"], "RSTB": ["0"], "OCEA": ["0"],
                "RSTA": ["0"], "DOB0": [10], "DOB1": [11]
            }
        })
    }

    /// A plain enabled flip-flop as Yosys emits it: clock net 2, enable `ce` (inverted),
    /// data `d`, output `q`.
    fn ff(ce: u64, d: u64, q: u64) -> Value {
        json!({
            "type": "TRELLIS_FF",
            "parameters": {"CEMUX": "INV", "CLKMUX": "CLK", "GSR": "DISABLED", "LSRMUX": "LSR", "REGSET": "RESET"},
            "port_directions": {"CE": "input", "CLK": "input", "DI": "input", "LSR": "input", "Q": "output"},
            "connections": {"CE": [ce], "CLK": [2], "DI": [d], "LSR": ["0"], "Q": [q]}
        })
    }

    /// The block RAM, a flip-flop on each of its two used bits (enable net 4 inverted), a LUT
    /// reading the flip-flops, and the nets named.
    fn netlist() -> Value {
        json!({"modules": {
            "LUT4": {"attributes": {"blackbox": "00000000000000000000000000000001"}, "ports": {}, "cells": {}},
            "top": {
                "ports": {"clk": {"direction": "input", "bits": [2]}, "y": {"direction": "output", "bits": [30]}},
                "cells": {
                    "rom": bram(),
                    "r0": ff(4, 10, 20),
                    "r1": ff(4, 11, 21),
                    "use": {"type": "LUT4", "port_directions": {"A": "input", "B": "input", "Z": "output"},
                            "connections": {"A": [20], "B": [21], "Z": [30]}}
                },
                "netnames": {
                    "s1_w": {"hide_name": 0, "bits": [10, 11]},
                    "r_w": {"hide_name": 0, "bits": [20, 21]}
                }
            }
        }})
    }

    fn top(n: &mut Value) -> &mut Value {
        &mut n["modules"]["top"]
    }

    #[test]
    fn a_registered_read_folds_into_the_output_register() {
        let mut n = netlist();
        assert_eq!(absorb_output_registers(&mut n), 1);
        let t = top(&mut n);
        let cells = t["cells"].as_object().unwrap();
        assert!(!cells.contains_key("r0") && !cells.contains_key("r1"), "flip-flops left");
        let rom = &cells["rom"];
        assert_eq!(rom["parameters"]["REGMODE_B"], "OUTREG");
        assert_eq!(rom["parameters"]["REGMODE_A"], "NOREG");
        // The flip-flops loaded when net 4 was low: so does the output register.
        assert_eq!(
            (rom["connections"]["OCEB"].clone(), rom["parameters"]["OCEBMUX"].clone()),
            (json!([4]), json!("INV"))
        );
        assert_eq!(
            (rom["connections"]["DOB0"].clone(), rom["connections"]["DOB1"].clone()),
            (json!([20]), json!([21]))
        );
        assert_eq!(t["netnames"]["s1_w"]["bits"], json!(["x", "x"]));
        assert_eq!(t["netnames"]["r_w"]["bits"], json!([20, 21]));
        // Done once: a second run finds nothing to fold.
        assert_eq!(absorb_output_registers(&mut n), 0);
    }

    #[test]
    fn a_plain_enable_and_no_enable_give_oce_the_net_or_a_constant() {
        let mut n = netlist();
        for r in ["r0", "r1"] {
            top(&mut n)["cells"][r]["parameters"]["CEMUX"] = json!("CE");
        }
        assert_eq!(absorb_output_registers(&mut n), 1);
        let rom = &top(&mut n)["cells"]["rom"];
        assert_eq!(
            (rom["connections"]["OCEB"].clone(), rom["parameters"]["OCEBMUX"].clone()),
            (json!([4]), json!("OCEB"))
        );

        let mut n = netlist();
        for r in ["r0", "r1"] {
            let ff = &mut top(&mut n)["cells"][r];
            ff["parameters"]["CEMUX"] = json!("1 ");
            ff["connections"].as_object_mut().unwrap().remove("CE");
        }
        assert_eq!(absorb_output_registers(&mut n), 1);
        let rom = &top(&mut n)["cells"]["rom"];
        assert_eq!(
            (rom["connections"]["OCEB"].clone(), rom["parameters"]["OCEBMUX"].clone()),
            (json!(["1"]), json!("OCEB"))
        );
    }

    #[test]
    fn the_36_bit_mode_folds_both_halves_on_port_b() {
        let mut n = netlist();
        let t = top(&mut n);
        let rom = &mut t["cells"]["rom"];
        rom["parameters"]["DATA_WIDTH_A"] = json!("00000000000000000000000000100100");
        rom["parameters"]["DATA_WIDTH_B"] = json!("00000000000000000000000000100100");
        rom["connections"]["DOA0"] = json!([12]);
        rom["port_directions"]["DOA0"] = json!("output");
        t["cells"]["r2"] = ff(4, 12, 22);
        t["cells"]["use"]["connections"]["C"] = json!([22]);
        t["cells"]["use"]["port_directions"]["C"] = json!("input");
        assert_eq!(absorb_output_registers(&mut n), 1);
        let rom = &top(&mut n)["cells"]["rom"];
        assert_eq!(
            (rom["parameters"]["REGMODE_A"].clone(), rom["parameters"]["REGMODE_B"].clone()),
            (json!("OUTREG"), json!("OUTREG"))
        );
        assert_eq!(rom["connections"]["DOA0"], json!([22]));
        assert_eq!(rom["connections"]["OCEB"], json!([4]));
    }

    /// `change` makes the netlist unfoldable: nothing may change.
    fn left_alone(what: &str, change: impl FnOnce(&mut Value)) {
        let mut n = netlist();
        change(top(&mut n));
        let before = n.clone();
        assert_eq!(absorb_output_registers(&mut n), 0, "{what}");
        assert_eq!(n, before, "{what}: netlist changed");
    }

    #[test]
    fn unprovable_cases_are_left_alone() {
        left_alone("a data-out bit with a second reader", |t| {
            t["cells"]["use"]["connections"]["C"] = json!([10]);
            t["cells"]["use"]["port_directions"]["C"] = json!("input");
        });
        left_alone("a data-out bit on a module port", |t| {
            t["ports"]["peek"] = json!({"direction": "output", "bits": [11]});
        });
        left_alone("a data-out bit into a LUT, not a flip-flop", |t| {
            t["cells"]["use"]["connections"]["A"] = json!([10]);
            t["cells"].as_object_mut().unwrap().remove("r0");
        });
        left_alone("flip-flops with different enables", |t| {
            t["cells"]["r1"]["connections"]["CE"] = json!([5])
        });
        left_alone("one enable inverted, one not", |t| t["cells"]["r1"]["parameters"]["CEMUX"] = json!("CE"));
        left_alone("a flip-flop with a reset", |t| t["cells"]["r0"]["connections"]["LSR"] = json!([6]));
        left_alone("a flip-flop that powers up set", |t| {
            t["cells"]["r0"]["parameters"]["REGSET"] = json!("SET")
        });
        left_alone("a flip-flop on another clock", |t| t["cells"]["r1"]["connections"]["CLK"] = json!([7]));
        left_alone("a flip-flop on the other edge", |t| {
            t["cells"]["r1"]["parameters"]["CLKMUX"] = json!("INV")
        });
        left_alone("a flip-flop without CEMUX", |t| {
            t["cells"]["r1"]["parameters"].as_object_mut().unwrap().remove("CEMUX");
        });
        left_alone("a block RAM read reset in use", |t| {
            t["cells"]["rom"]["connections"]["RSTB"] = json!([8])
        });
        left_alone("an output register already on", |t| {
            t["cells"]["rom"]["parameters"]["REGMODE_B"] = json!("OUTREG")
        });
        left_alone("a global reset the flip-flops see and the block RAM does not", |t| {
            t["cells"]["gsr"] =
                json!({"type": "GSR", "port_directions": {"GSR": "input"}, "connections": {"GSR": [9]}});
            t["cells"]["r0"]["parameters"]["GSR"] = json!("ENABLED");
            t["cells"]["r1"]["parameters"]["GSR"] = json!("ENABLED");
        });
    }

    #[test]
    fn a_global_reset_both_see_alike_still_folds() {
        let mut n = netlist();
        top(&mut n)["cells"]["gsr"] =
            json!({"type": "GSR", "port_directions": {"GSR": "input"}, "connections": {"GSR": [9]}});
        assert_eq!(absorb_output_registers(&mut n), 1);
    }
}
