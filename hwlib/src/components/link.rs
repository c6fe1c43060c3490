//! `link`: an inter-device link (`rtl/mase_link.sv`): the sender `mase_link_tx` serialises beats of
//! `LANES` × `DATA_WIDTH` bits onto `LINK_WIDTH` bits per cycle, the simulation model
//! `mase_link_model` delays flits and credits by `LATENCY` cycles each way, the receiver
//! `mase_link_rx` reassembles the beats into a buffer of `DEPTH` beats and returns one credit per
//! beat that leaves it. The registered component is the three in one streaming module, so the
//! shared harness tests them together under random stalls; a multi-device system instantiates tx
//! and rx in the two device tops (parameters from [`tx_params`], [`rx_params`]) and the model
//! between them ([`model_params`]).
//!
//! Timing (derived from the RTL, checked by `sim/tests/link.rs`): a beat is `F` =
//! [`flits_per_beat`] flits; a beat taken in cycle `t` shows its first flit in `t + 1` and its
//! last in `t + F`, reaches the receiver `LATENCY` cycles later, is valid at the output 2 cycles
//! after its last flit arrives, and its credit (sent the cycle after the beat leaves, `LATENCY`
//! cycles back, counted on arrival) lets the sender take another beat `F + 2·LATENCY + 4` cycles
//! after `t`. So `DEPTH` credits carry `DEPTH` beats per `max(DEPTH·F, F + 2·LATENCY + 4)` cycles:
//! full rate (`F` cycles per beat) from [`full_rate_depth`] on.

use crate::component::{Component, Cost, Info, ParamSpec, Params, Stimulus, StreamSpec, StreamValues};
use crate::components::skid_buffer::{check_lanes, passthrough_model, passthrough_streams};
use crate::{check_range, param};

/// The link component (sender, link model and receiver in one streaming module).
pub struct Link;

/// SV module of the sending end (device side of the producer).
pub const TX_MODULE: &str = "mase_link_tx";
/// SV module of the receiving end (device side of the consumer).
pub const RX_MODULE: &str = "mase_link_rx";
/// SV module of the simulation model of the wire between the two.
pub const MODEL_MODULE: &str = "mase_link_model";

/// RTL files (in `rtl/`, dependencies first) a device top needs for a `mase_link_tx`.
pub const TX_FILES: &[&str] = &["mase_assert.svh", "mase_link_tx.sv"];
/// RTL files (in `rtl/`, dependencies first) a device top needs for a `mase_link_rx`.
pub const RX_FILES: &[&str] = &["mase_assert.svh", "mase_fifo.sv", "mase_wide_fifo.sv", "mase_link_rx.sv"];
/// RTL files (in `rtl/`, dependencies first) a system simulation top needs for a `mase_link_model`.
pub const MODEL_FILES: &[&str] = &["mase_assert.svh", "mase_link_model.sv"];

/// Largest `LINK_WIDTH` (bits per link cycle) the RTL accepts.
pub const MAX_LINK_WIDTH: usize = 65536;
/// Largest `DEPTH` / `CREDITS` (beats) the RTL accepts.
pub const MAX_DEPTH: usize = 65536;
/// Largest `LATENCY` (cycles one way) the link model accepts.
pub const MAX_LATENCY: usize = 4096;

/// Cycles of the credit loop beyond the flits and the two link crossings: the sender's output
/// register (1), the receiver's buffer (2), the receiver's credit register (1).
const LOOP_OVERHEAD: usize = 4;

/// Name, description, RTL dependencies and parameters.
const INFO: Info = Info {
    name: "link",
    description: "inter-device link: beats serialised to LINK_WIDTH-bit flits with credit flow control, \
                  a LATENCY-cycle link model, reassembled into a DEPTH-beat buffer",
    dependencies: &[
        "mase_assert.svh",
        "mase_fifo.sv",
        "mase_wide_fifo.sv",
        "mase_link_tx.sv",
        "mase_link_rx.sv",
        "mase_link_model.sv",
    ],
    keeps_input_format: true,
    params: crate::param_list![
        crate::components::skid_buffer::WORD_PARAMS,
        [
            ParamSpec::value("LINK_WIDTH", 8, "bits the link carries per cycle (1..65536)"),
            ParamSpec::value("LATENCY", 1, "cycles a flit or credit takes across the link, each way (1..4096)"),
            ParamSpec::value("DEPTH", 8, "beats the receiver buffers = the sender's credits (1..65536)"),
        ],
    ],
    ..Info::DEFAULT
};

/// Flits (link cycles) one beat of `beat_bits` bits takes on a link of `link_width` bits per
/// cycle: `ceil(beat_bits / link_width)` (the last flit zero-padded). A `link_width` of 0 counts
/// as 1.
pub fn flits_per_beat(beat_bits: usize, link_width: usize) -> usize {
    beat_bits.div_ceil(link_width.max(1))
}

/// The smallest receiver `DEPTH` (= sender credits) that keeps a link of `latency` cycles each
/// way busy with one flit per cycle when a beat is `flits` flits: a credit comes back
/// `flits + 2·latency + 4` cycles after its beat was taken (see the module documentation), and
/// the other `DEPTH - 1` credits must cover that time at `flits` cycles per beat:
/// `1 + ceil((2·latency + 4) / flits)`.
pub fn full_rate_depth(latency: usize, flits: usize) -> usize {
    1 + (2 * latency + LOOP_OVERHEAD).div_ceil(flits.max(1))
}

/// Cycles the link needs for `beats` beats of `beat_bits` bits at `link_width` bits per cycle
/// (one flit per cycle, credits never binding): `beats × flits_per_beat`. The link's share of a
/// system's initiation interval.
pub fn link_cycles(beats: u64, beat_bits: usize, link_width: usize) -> u64 {
    beats * flits_per_beat(beat_bits, link_width) as u64
}

/// Widths (bits per cycle) of the links that share one device boundary of `link_width` bits per
/// cycle, one per stream, the stream `i` carrying `bits[i]` bits per inference (beats × beat
/// bits; 0 counts as 1).
///
/// A multi-device system puts one link on every stream crossing a boundary and splits the
/// boundary's bits among them in proportion to what each carries per inference, so that the
/// links finish an inference at about the same time (the boundary's time is the slowest link's).
/// The rule, exact in integers and so deterministic:
/// - a lone stream takes the whole width;
/// - every stream gets at least one bit: a stream whose proportional share is below one bit is
///   given one, and the rest of the width is shared again among the others (repeated until every
///   remaining share is at least one bit);
/// - the remaining streams get `floor(rest × bits_i / Σ bits)` each, and the bits left over by
///   the rounding go one each to the largest remainders (ties: the earlier stream).
///
/// The widths sum to exactly `link_width` (so at most it) and are each at least 1. Fewer bits
/// than streams is an error saying so. A share wider than a stream's beat still sends one flit
/// per beat (the surplus idles), as a lone stream's link does today.
pub fn share_width(bits: &[u64], link_width: usize) -> Result<Vec<usize>, String> {
    let n = bits.len();
    if link_width < n {
        return Err(format!(
            "{n} streams share a link of {link_width} bits per cycle; each stream needs at least one bit"
        ));
    }
    let bits: Vec<u128> = bits.iter().map(|&b| u128::from(b.max(1))).collect();
    let mut one_bit = vec![false; n];
    loop {
        let rest = (link_width - one_bit.iter().filter(|&&f| f).count()) as u128;
        let total: u128 = (0..n).filter(|&i| !one_bit[i]).map(|i| bits[i]).sum();
        let below: Vec<usize> = (0..n).filter(|&i| !one_bit[i] && rest * bits[i] < total).collect();
        if below.is_empty() {
            break;
        }
        for i in below {
            one_bit[i] = true;
        }
    }
    let rest = (link_width - one_bit.iter().filter(|&&f| f).count()) as u128;
    let total: u128 = (0..n).filter(|&i| !one_bit[i]).map(|i| bits[i]).sum();
    let mut widths: Vec<usize> = (0..n)
        .map(|i| if one_bit[i] { 1 } else { (rest * bits[i] / total) as usize })
        .collect();
    let given: usize = (0..n).filter(|&i| !one_bit[i]).map(|i| widths[i]).sum();
    let mut by_remainder: Vec<usize> = (0..n).filter(|&i| !one_bit[i]).collect();
    // Largest remainder first; the sort is stable, so ties keep the stream order.
    by_remainder.sort_by_key(|&i| std::cmp::Reverse(rest * bits[i] % total));
    for &i in by_remainder.iter().take(rest as usize - given) {
        widths[i] += 1;
    }
    Ok(widths)
}

/// Cycles per beat of a link with `depth` credits: `max(depth·F, F + 2·latency + 4) / depth`, as
/// a fraction `(cycles, beats)` over one credit period of `depth` beats.
pub fn cycles_per_depth_beats(latency: usize, flits: usize, depth: usize) -> (u64, u64) {
    let depth = depth.max(1);
    let round_trip = flits + 2 * latency + LOOP_OVERHEAD;
    ((depth * flits).max(round_trip) as u64, depth as u64)
}

/// Validated parameters in the given order (names as the SV parameters).
fn checked(values: &[(&str, i64)], check: impl Fn(&Params) -> Result<(), String>) -> Result<Params, String> {
    let p: Params = values.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    check(&p)?;
    Ok(p)
}

/// Checks `DATA_WIDTH`, `LANES` and `LINK_WIDTH` (the order every link module checks them in).
fn check_beat_and_link(p: &Params) -> Result<(), String> {
    check_lanes(p)?;
    check_range(p, "LINK_WIDTH", 1, MAX_LINK_WIDTH as i64)
}

/// Parameters of either end of a link (`module`): beats of `lanes` lanes of `width` bits over
/// `link_width` bits per cycle, then the end's own beat count `beats` = (name, value); an error
/// names the module and the parameter out of range.
fn end_params(
    module: &str,
    width: u32,
    lanes: usize,
    link_width: usize,
    beats: (&str, usize),
) -> Result<Params, String> {
    let values = [
        ("DATA_WIDTH", width as i64),
        ("LANES", lanes as i64),
        ("LINK_WIDTH", link_width as i64),
        (beats.0, beats.1 as i64),
    ];
    checked(&values, |p| {
        check_beat_and_link(p)?;
        check_range(p, beats.0, 1, MAX_DEPTH as i64)
    })
    .map_err(|e| format!("{module}: invalid parameters: {e}"))
}

/// Parameters of a `mase_link_tx` ([`TX_MODULE`]) sending beats of `lanes` lanes of `width` bits
/// over `link_width` bits per cycle to a receiver that buffers `credits` beats; an error names
/// the parameter out of range.
pub fn tx_params(width: u32, lanes: usize, link_width: usize, credits: usize) -> Result<Params, String> {
    end_params(TX_MODULE, width, lanes, link_width, ("CREDITS", credits))
}

/// Parameters of a `mase_link_rx` ([`RX_MODULE`]) receiving beats of `lanes` lanes of `width`
/// bits over `link_width` bits per cycle into a buffer of `depth` beats (the sender's credits);
/// an error names the parameter out of range.
pub fn rx_params(width: u32, lanes: usize, link_width: usize, depth: usize) -> Result<Params, String> {
    end_params(RX_MODULE, width, lanes, link_width, ("DEPTH", depth))
}

/// Parameters of a `mase_link_model` ([`MODEL_MODULE`]) of `link_width` bits per cycle and
/// `latency` cycles each way; an error names the parameter out of range.
pub fn model_params(link_width: usize, latency: usize) -> Result<Params, String> {
    let values = [("LINK_WIDTH", link_width as i64), ("LATENCY", latency as i64)];
    checked(&values, |p| {
        check_range(p, "LINK_WIDTH", 1, MAX_LINK_WIDTH as i64)?;
        check_range(p, "LATENCY", 1, MAX_LATENCY as i64)
    })
    .map_err(|e| format!("{MODEL_MODULE}: invalid parameters: {e}"))
}

/// Resolved parameters of a `link` instance: the sender, a link of `link_width` bits per cycle
/// and `latency` cycles, and a receiver of `depth` beats, as one streaming instance (how a
/// multi-device system's design carries each link, for its cost, latency and golden models).
pub fn instance(
    width: u32,
    lanes: usize,
    link_width: usize,
    latency: usize,
    depth: usize,
) -> Result<Params, String> {
    crate::resolve_params(
        &Link,
        &[
            ("DATA_WIDTH", width as i64),
            ("LANES", lanes as i64),
            ("LINK_WIDTH", link_width as i64),
            ("LATENCY", latency as i64),
            ("DEPTH", depth as i64),
        ],
    )
}

/// The figures of a resolved `link` instance: (beat bits, link width, flits, latency, depth).
fn figures(p: &Params) -> (usize, usize, usize, usize, usize) {
    let beat = (param(p, "DATA_WIDTH") * param(p, "LANES")) as usize;
    let lw = param(p, "LINK_WIDTH") as usize;
    (beat, lw, flits_per_beat(beat, lw), param(p, "LATENCY") as usize, param(p, "DEPTH") as usize)
}

/// Beats the receiver's buffer holds: a FIFO of `max(depth - 1, 2)` memory words plus its output
/// register (`mase_fifo` needs two words at least).
fn buffer_beats(depth: usize) -> usize {
    depth.max(3)
}

impl Component for Link {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn validate(&self, p: &Params) -> Result<(), String> {
        check_beat_and_link(p)?;
        check_range(p, "LATENCY", 1, MAX_LATENCY as i64)?;
        check_range(p, "DEPTH", 1, MAX_DEPTH as i64)
    }

    fn streams(&self, p: &Params) -> Vec<StreamSpec> {
        passthrough_streams(p)
    }

    fn model(&self, _p: &Params, stim: &Stimulus) -> Result<StreamValues, String> {
        passthrough_model("link", stim)
    }

    /// One beat per row: latency `F + LATENCY + 2`; ii per row the credit-limited rate
    /// [`cycles_per_depth_beats`] rounded up (exact when `DEPTH` divides the credit period,
    /// always at full rate); memory the receiver's buffer.
    fn cost(&self, p: &Params) -> Cost {
        let (beat, _, flits, latency, depth) = figures(p);
        let (cycles, beats) = cycles_per_depth_beats(latency, flits, depth);
        Cost {
            latency_cycles: (flits + latency + 2) as u64,
            ii_cycles: cycles.div_ceil(beats),
            multipliers: 0,
            memory_bits: (beat * buffer_beats(depth)) as u64,
        }
    }

    /// The sender ([`tx_resources`]), the receiver ([`rx_resources`]) and the link model's
    /// registers (simulation only: a real link replaces it).
    fn resources(&self, p: &Params) -> crate::Resources {
        let (beat, lw, flits, latency, depth) = figures(p);
        let (width, lanes) = (param(p, "DATA_WIDTH") as u32, beat / param(p, "DATA_WIDTH") as usize);
        // A single flit's padding above the beat is constant zero on the wire and folds away.
        let wire = if flits == 1 { beat } else { lw };
        tx_resources(width, lanes, lw, depth)
            + rx_resources(width, lanes, lw, depth)
            + model_resources(wire, latency)
    }

    fn test_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        let set = |w: i64, l: i64, lw: i64, lat: i64, d: i64| {
            vec![("DATA_WIDTH", w), ("LANES", l), ("LINK_WIDTH", lw), ("LATENCY", lat), ("DEPTH", d)]
        };
        vec![
            // Link as wide as the beat (1 flit), default depth above the round trip (7).
            vec![],
            // Link a quarter of the beat, depth exactly the round trip's (1 + ceil(10/4) = 4).
            set(16, 4, 16, 3, 4),
            // Link not dividing the beat (15 bits in 4 flits of 4), depth exactly 1 + ceil(6/4).
            set(5, 3, 4, 1, 3),
            // Link wider than the beat (39 bits on 64), depth 3 of the 9 the round trip needs.
            set(13, 3, 64, 2, 3),
            // One credit: every beat waits for the previous one's round trip (18 cycles).
            set(8, 2, 3, 4, 1),
            // Two flits per beat, half the depth the round trip needs (4 of 8).
            set(64, 2, 64, 5, 4),
            // A 1024-bit beat (the widest port Verilator 5.006 simulates under --assert: its
            // sampled copies of wider ports for `$stable` do not compile), 3 flits of 384.
            set(64, 16, 384, 2, 4),
        ]
    }

    fn invalid_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![vec![("DATA_WIDTH", 65)], vec![("LATENCY", 0)], vec![("DEPTH", 0)], vec![("LINK_WIDTH", 65537)]]
    }
}

/// Resources of a `mase_link_tx` (see [`tx_params`]), fitted to Yosys 0.23 `synth_xilinx` over
/// nine instances: FFs exact: the shift register (whole flits when it rotates, the beat alone
/// when one flit holds it), flit and credit counters, valid and ready; LUTs: one load-or-rotate
/// mux per shift-register bit (none for a single flit: it only loads) plus the control.
pub fn tx_resources(width: u32, lanes: usize, link_width: usize, credits: usize) -> crate::Resources {
    use crate::resources::{clog2, linear};
    let beat = width as usize * lanes;
    let flits = flits_per_beat(beat, link_width);
    let (fw, cw) = (clog2(flits as u64), clog2(credits as u64 + 1));
    let rotating = if flits > 1 { (flits * link_width) as u64 } else { 0 };
    crate::Resources {
        lut: linear(6.0, &[(1.0, rotating), (2.0, fw)]),
        ff: if flits > 1 { rotating } else { beat as u64 } + fw + cw + 2,
        ..Default::default()
    }
}

/// Resources of a `mase_link_rx` (see [`rx_params`]), fitted to Yosys 0.23 `synth_xilinx` over
/// twelve instances: FFs exact: the `flits - 1` flits held while a beat assembles, the flit
/// counter, the credit register, and the buffer FIFO's output register, pointers, count and
/// valid; LUTs: the FIFO's pointer logic (grows with its address bits); the FIFO's memory of
/// `max(depth - 1, 2)` words in LUT RAM up to 64 words (Yosys maps even the two-word memory there)
/// and by [`crate::resources::ram`] beyond.
pub fn rx_resources(width: u32, lanes: usize, link_width: usize, depth: usize) -> crate::Resources {
    use crate::resources::{clog2, linear, lutram, ram};
    let beat = (width as usize * lanes) as u64;
    let flits = flits_per_beat(beat as usize, link_width);
    let words = buffer_beats(depth) as u64 - 1;
    let abits = clog2(words);
    let (bram18, lutram) = if words <= 64 { (0, lutram(words, beat)) } else { ram(words, beat) };
    crate::Resources {
        lut: linear(6.0, &[(5.0, abits)]),
        ff: ((flits - 1) * link_width) as u64
            + clog2(flits as u64)
            + 1
            + beat
            + 2 * abits
            + clog2(words + 1)
            + 1,
        dsp: 0,
        bram18,
        lutram,
    }
}

/// Resources of a `mase_link_model` of `link_width` bits and `latency` cycles, as its RTL maps
/// (checked against Yosys 0.23 at latencies 1, 2, 3, 5, 40 and 100): one word of `{credit,
/// valid, flit}` per cycle in flight; latency 1 is the output register, 2 adds one register
/// word, beyond that a ring of `latency - 1` words in distributed RAM (read into the output
/// register) with its pointer.
fn model_resources(link_width: usize, latency: usize) -> crate::Resources {
    use crate::resources::{clog2, lutram};
    let w = link_width as u64 + 2;
    match latency as u64 {
        0 | 1 => crate::Resources { ff: w, ..Default::default() },
        2 => crate::Resources { ff: 2 * w + 2, lut: 2, ..Default::default() },
        n => {
            let d = n - 1;
            // Beyond 64 words the RAM128X1D banks need a read multiplexer per bit.
            let mux = if d > 64 { w } else { 0 };
            crate::Resources {
                ff: w + clog2(d) + 1,
                lut: 2 + mux,
                lutram: lutram(d, w),
                ..Default::default()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The helpers validate with the RTL's words and agree with the component's own checks.
    #[test]
    fn helpers_validate_like_the_rtl() {
        assert_eq!(tx_params(8, 4, 16, 5).unwrap()["CREDITS"], 5);
        assert_eq!(rx_params(8, 4, 16, 5).unwrap()["DEPTH"], 5);
        assert_eq!(model_params(16, 3).unwrap()["LATENCY"], 3);
        let e = tx_params(8, 4, 16, 0).unwrap_err();
        assert!(e.contains("CREDITS must be between 1 and 65536, got 0"), "{e}");
        let e = rx_params(65, 4, 16, 5).unwrap_err();
        assert!(e.contains("DATA_WIDTH must be between 1 and 64, got 65"), "{e}");
        let e = model_params(16, 0).unwrap_err();
        assert!(e.contains("LATENCY must be between 1 and 4096, got 0"), "{e}");
    }

    /// Each piece's file list exists in `rtl/`, starts with the shared header, ends with the
    /// piece's own module, and keeps the component's dependency order.
    #[test]
    fn piece_file_lists_follow_the_dependencies() {
        let deps = INFO.dependencies;
        for (module, files) in [(TX_MODULE, TX_FILES), (RX_MODULE, RX_FILES), (MODEL_MODULE, MODEL_FILES)] {
            assert_eq!(files.first(), Some(&"mase_assert.svh"), "{module}");
            assert_eq!(files.last().copied(), Some(format!("{module}.sv").as_str()), "{module}");
            let at: Vec<usize> = files
                .iter()
                .map(|f| {
                    deps.iter()
                        .position(|d| d == f)
                        .unwrap_or_else(|| panic!("{module}: {f} not a dependency"))
                })
                .collect();
            assert!(at.windows(2).all(|w| w[0] < w[1]), "{module}: {files:?} out of dependency order");
            for f in files.iter() {
                let path = crate::rtl_dir().join(f);
                let text =
                    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                if f.ends_with(".sv") {
                    let stem = f.trim_end_matches(".sv");
                    assert!(text.contains(&format!("module {stem}")), "{f} declares no module {stem}");
                }
            }
        }
    }

    /// Sharing a boundary: a lone stream takes everything; the widths sum to the link's, are at
    /// least one bit each, follow the bits (within one bit of the exact proportional share when
    /// every share is at least one bit, and never a smaller width for more bits); too few bits is
    /// an error; the same input gives the same widths.
    #[test]
    fn share_width_is_proportional_at_least_one_bit_and_sums_to_the_link() {
        use rand::{Rng, SeedableRng};
        use rand_chacha::ChaCha8Rng;
        assert_eq!(share_width(&[5000], 7).unwrap(), vec![7]);
        assert_eq!(share_width(&[], 7).unwrap(), Vec::<usize>::new());
        // 2:1 over 12 bits splits exactly; over 10 bits 6.67 / 3.33 round to 7 / 3.
        assert_eq!(share_width(&[2048, 1024], 12).unwrap(), vec![8, 4]);
        assert_eq!(share_width(&[2048, 1024], 10).unwrap(), vec![7, 3]);
        // A tiny stream (a 1-bit mask) gets one bit; the rest goes to the others.
        assert_eq!(share_width(&[100_000, 10, 50_000], 16).unwrap(), vec![10, 1, 5]);
        // Equal remainders: the earlier stream gets the leftover bit.
        assert_eq!(share_width(&[1, 1], 3).unwrap(), vec![2, 1]);
        let e = share_width(&[1, 2, 3], 2).unwrap_err();
        assert!(e.contains("3 streams") && e.contains("2 bits per cycle") && e.contains("at least one bit"), "{e}");

        let mut rng = ChaCha8Rng::seed_from_u64(11);
        for _ in 0..2000 {
            let n = rng.gen_range(1..6);
            let bits: Vec<u64> = (0..n)
                .map(|_| {
                    let magnitude = rng.gen_range(1..40);
                    rng.gen_range(0..1u64 << magnitude)
                })
                .collect();
            let width = rng.gen_range(n..300);
            let w = share_width(&bits, width).unwrap();
            assert_eq!(w, share_width(&bits, width).unwrap(), "deterministic");
            assert_eq!(w.len(), n);
            assert_eq!(w.iter().sum::<usize>(), width, "{bits:?} over {width}: {w:?}");
            assert!(w.iter().all(|&x| x >= 1), "{bits:?} over {width}: {w:?}");
            let b: Vec<f64> = bits.iter().map(|&x| x.max(1) as f64).collect();
            let total: f64 = b.iter().sum();
            if b.iter().all(|x| width as f64 * x / total >= 1.0) {
                for (x, wi) in b.iter().zip(&w) {
                    let exact = width as f64 * x / total;
                    assert!((*wi as f64 - exact).abs() < 1.0, "{bits:?} over {width}: {w:?}, exact {exact}");
                }
            }
            for i in 0..n {
                for j in 0..n {
                    if bits[i].max(1) > bits[j].max(1) {
                        assert!(w[i] >= w[j], "{bits:?} over {width}: {w:?}");
                    }
                }
            }
        }
    }

    /// Flits round up; link cycles are beats × flits; the full-rate depth covers the round trip
    /// and one less does not.
    #[test]
    fn link_arithmetic() {
        assert_eq!(flits_per_beat(15, 4), 4);
        assert_eq!(flits_per_beat(16, 4), 4);
        assert_eq!(flits_per_beat(39, 64), 1);
        assert_eq!(link_cycles(10, 15, 4), 40);
        for latency in 1..20 {
            for flits in 1..40 {
                let d = full_rate_depth(latency, flits);
                let (c, b) = cycles_per_depth_beats(latency, flits, d);
                assert_eq!(c, (d * flits) as u64, "latency {latency} flits {flits}: depth {d} binds");
                assert_eq!(b, d as u64);
                if d > 1 {
                    let (c, b) = cycles_per_depth_beats(latency, flits, d - 1);
                    assert!(c > flits as u64 * b, "depth {} already full rate", d - 1);
                }
            }
        }
    }
}
