//! The shared component test: every registered component, every parameter set of its
//! `test_params()`, random data with random valid gaps and back-pressure, bit-exact against its
//! model; plus the validate-vs-RTL check on `invalid_params()`. Needs Verilator (fails loudly
//! without one). Builds are cached (see `mase_sim::cache`).

use mase_hwlib::{registry, resolve_params, Component, Params};
use mase_sim::{simulate_component, RunConfig, SimError};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Rows per instance: enough for several rows through every pipeline, small enough to stay fast.
const ROWS: usize = 12;

fn check_instance(c: &dyn Component, p: &Params, set: usize) -> Result<(), String> {
    let rows = ROWS.div_ceil(c.row_multiple(p).max(1)) * c.row_multiple(p).max(1);
    for (k, stall) in [0.0, 0.35].into_iter().enumerate() {
        let seed = 1000 * set as u64 + k as u64 + 7;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let stim = c.random_stimulus(p, rows, &mut rng);
        let cfg = RunConfig { seed, stall_prob: stall, ..RunConfig::default() };
        let r = simulate_component(c, p, &stim, &cfg).map_err(|e| format!("{}: {e}", c.name()))?;
        if r.run.mismatch_count != 0 {
            let shown: Vec<String> = r.run.mismatches.iter().map(|m| m.to_string()).collect();
            return Err(format!(
                "{} {:?} stall {stall}: {} mismatches; first: {}",
                c.name(),
                p,
                r.run.mismatch_count,
                shown.join("; ")
            ));
        }
        for (name, exp) in &r.expected {
            assert_eq!(exp.len(), r.run.outputs[name].len(), "{}: stream {name} length", c.name());
        }
        assert!(r.run.first_input_cycle.is_some(), "{}: no input beat moved", c.name());
        if stall == 0.0 {
            // The cost model's latency is what the RTL does without stalls.
            let cost = c.cost(p);
            let lat = r.run.latency_cycles().unwrap_or(0);
            if lat != cost.latency_cycles {
                return Err(format!(
                    "{} {:?}: measured latency {lat} cycles, cost model says {}",
                    c.name(),
                    p,
                    cost.latency_cycles
                ));
            }
        }
    }
    Ok(())
}

#[test]
fn every_component_bit_exact_under_random_stalls() {
    let only = std::env::var("MASE_TEST_COMPONENT").ok();
    let mut failures = Vec::new();
    let mut instances = 0;
    for c in registry().iter().copied() {
        if only.as_deref().is_some_and(|o| o != c.name()) {
            continue;
        }
        assert!(!c.test_params().is_empty(), "component {} lists no test_params", c.name());
        for (i, ov) in c.test_params().iter().enumerate() {
            let p = match resolve_params(c, ov) {
                Ok(p) => p,
                Err(e) => {
                    failures.push(format!("{} test_params[{i}] invalid: {e}", c.name()));
                    continue;
                }
            };
            instances += 1;
            if let Err(e) = check_instance(c, &p, i) {
                failures.push(e);
            }
        }
    }
    assert!(instances > 0, "no component instance simulated");
    assert!(failures.is_empty(), "{} failing instance(s):\n{}", failures.len(), failures.join("\n"));
}

/// The message validate() gives must be what the RTL prints when elaborated with the same
/// parameters (the RTL is built from the unchecked parameter set and run through reset).
#[test]
fn invalid_params_rejected_by_validate_and_rtl() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for c in registry().iter().copied() {
        for ov in c.invalid_params() {
            // Resolve without validation: defaults filled, then validate() must reject.
            let mut p = Params::new();
            for s in c.params() {
                let v =
                    ov.iter().rev().find(|(k, _)| *k == s.name).map(|(_, v)| *v).unwrap_or(match s.default {
                        mase_hwlib::ParamDefault::Value(v) => v,
                        mase_hwlib::ParamDefault::SameAs(o) => p[o],
                    });
                p.insert(s.name.to_string(), v);
            }
            let Err(msg) = c.validate(&p) else {
                failures.push(format!("{}: validate() accepted {ov:?}", c.name()));
                continue;
            };
            assert!(resolve_params(c, &ov).is_err());
            checked += 1;
            match mase_sim::bench::elaborate_component(c, &p) {
                Ok(()) => failures.push(format!("{}: RTL accepted {ov:?} (validate says: {msg})", c.name())),
                Err(SimError::Stopped { log, .. }) if log.contains(&msg) => {}
                Err(SimError::Command { detail, .. }) if detail.contains(&msg) => {}
                Err(e) => failures.push(format!(
                    "{}: RTL rejected {ov:?} but not with validate()'s message `{msg}`: {e}",
                    c.name()
                )),
            }
        }
    }
    assert!(checked > 0, "no invalid parameter set checked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
