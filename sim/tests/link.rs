//! The link's rate against its model under Verilator (no stalls): at
//! [`full_rate_depth`] credits every beat leaves exactly `flits` cycles after the previous one (the
//! link never idles, so `beats` beats take `link_cycles` cycles); with one credit fewer, whenever
//! the round trip binds, every beat leaves exactly one credit round trip after the beat `DEPTH`
//! before it ([`cycles_per_depth_beats`]), which is slower. Needs Verilator.

use mase_hwlib::components::link::{
    cycles_per_depth_beats, flits_per_beat, full_rate_depth, link_cycles, Link,
};
use mase_hwlib::{resolve_params, Component};
use mase_sim::{simulate_component, RunConfig};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Output-beat completion cycles of a stall-free run of `link` with these parameters (one beat per
/// row), after checking the data bit-exact.
fn beat_cycles(width: i64, lanes: i64, link_width: i64, latency: i64, depth: i64, beats: usize) -> Vec<u64> {
    let ov = [
        ("DATA_WIDTH", width),
        ("LANES", lanes),
        ("LINK_WIDTH", link_width),
        ("LATENCY", latency),
        ("DEPTH", depth),
    ];
    let p = resolve_params(&Link, &ov).unwrap_or_else(|e| panic!("{ov:?}: {e}"));
    let stim = Link.random_stimulus(&p, beats, &mut ChaCha8Rng::seed_from_u64(depth as u64));
    let r =
        simulate_component(&Link, &p, &stim, &RunConfig::default()).unwrap_or_else(|e| panic!("{ov:?}: {e}"));
    assert_eq!(r.run.mismatch_count, 0, "{ov:?}: {:?}", r.run.mismatches);
    assert_eq!(r.run.row_done_cycles.len(), beats, "{ov:?}: beats received");
    r.run.row_done_cycles
}

#[test]
fn full_rate_depth_is_the_smallest_depth_at_one_flit_per_cycle() {
    // (lane bits, lanes, link bits, latency): one flit per beat, four, four of a beat the link
    // does not divide, six, two with a long link.
    let cases = [(8, 1, 8, 1), (8, 4, 8, 3), (5, 3, 4, 2), (8, 2, 3, 5), (16, 1, 8, 6)];
    for (w, lanes, lw, latency) in cases {
        let beat_bits = (w * lanes) as usize;
        let flits = flits_per_beat(beat_bits, lw as usize);
        let depth = full_rate_depth(latency as usize, flits);
        let beats = 4 * depth + 16;
        let at = beat_cycles(w, lanes, lw, latency, depth as i64, beats);
        let case = format!("{beat_bits}-bit beats on {lw} bits, latency {latency}, depth {depth}");
        for k in 1..beats {
            assert_eq!(
                at[k] - at[k - 1],
                flits as u64,
                "{case}: beat {k} not {flits} cycles after the previous"
            );
        }
        let span = at[beats - 1] - at[0];
        assert_eq!(span, link_cycles(beats as u64 - 1, beat_bits, lw as usize), "{case}");

        // One credit fewer: the round trip binds, each beat waits for the credit of the beat
        // depth - 1 before it.
        let fewer = depth - 1;
        if fewer == 0 {
            continue;
        }
        let (period, per) = cycles_per_depth_beats(latency as usize, flits, fewer);
        assert_eq!(per as usize, fewer);
        assert!(period > (fewer * flits) as u64, "{case}: round trip does not bind at depth {fewer}");
        let at = beat_cycles(w, lanes, lw, latency, fewer as i64, beats);
        for k in fewer..beats {
            assert_eq!(at[k] - at[k - fewer], period, "{case}, depth {fewer}: beat {k}");
        }
        assert!(at[beats - 1] - at[0] > span, "{case}: depth {fewer} is not slower");
    }
}

/// The cost model's ii (per one-beat row) is the measured beat spacing when the credit period
/// divides evenly, and its latency is the measured one (the shared test checks latency too).
#[test]
fn cost_matches_measured_rate() {
    // (lane bits, lanes, link bits, latency, depth): full rate, and credit-bound 18 / 1 and
    // 16 / 4 cycles per beat.
    for (w, lanes, lw, latency, depth) in [(8, 4, 8, 3, 4), (8, 2, 3, 4, 1), (64, 2, 64, 5, 4)] {
        let p = resolve_params(
            &Link,
            &[
                ("DATA_WIDTH", w),
                ("LANES", lanes),
                ("LINK_WIDTH", lw),
                ("LATENCY", latency),
                ("DEPTH", depth),
            ],
        )
        .unwrap();
        let beats = 8 * depth as usize + 8;
        let at = beat_cycles(w, lanes, lw, latency, depth, beats);
        let d = depth as usize;
        let measured = (at[beats - 1] - at[beats - 1 - 4 * d]) as f64 / (4 * d) as f64;
        assert_eq!(measured, Link.cost(&p).ii_cycles as f64, "{p:?}");
    }
}
