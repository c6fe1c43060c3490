//! The shared component test: every registered component, every parameter set of its
//! `test_params()`, random data with random valid gaps and back-pressure, bit-exact against its
//! model; plus the validate-vs-RTL check on `invalid_params()`. Needs Verilator (fails loudly
//! without one). Builds are cached (see `mase_sim::cache`).

use mase_hwlib::{registry, resolve_params, Component, ParamDefault, Params};
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

/// Worker threads for the instance list (`MASE_TEST_THREADS`, default 2: the builds dominate).
fn threads() -> usize {
    std::env::var("MASE_TEST_THREADS").ok().and_then(|v| v.parse().ok()).unwrap_or(2).max(1)
}

/// Runs `f` over `items` on [`threads`] worker threads, collecting the errors.
fn par_map<T: Sync>(items: &[T], f: impl Fn(&T) -> Result<(), String> + Sync) -> Vec<String> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let errors = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|sc| {
        for _ in 0..threads() {
            sc.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                if let Err(e) = f(item) {
                    errors.lock().unwrap_or_else(|e| e.into_inner()).push(e);
                }
            });
        }
    });
    errors.into_inner().unwrap_or_else(|e| e.into_inner())
}

/// The registered components, or only the one `MASE_TEST_COMPONENT=<name>` names.
fn selected_components() -> Vec<&'static dyn Component> {
    let only = std::env::var("MASE_TEST_COMPONENT").ok();
    registry().iter().copied().filter(|c| only.as_deref().is_none_or(|o| o == c.name())).collect()
}

#[test]
fn every_component_bit_exact_under_random_stalls() {
    let mut failures = Vec::new();
    let mut instances: Vec<(&dyn Component, Params, usize)> = Vec::new();
    for c in selected_components() {
        assert!(!c.test_params().is_empty(), "component {} lists no test_params", c.name());
        for (i, ov) in c.test_params().iter().enumerate() {
            match resolve_params(c, ov) {
                Ok(p) => instances.push((c, p, i)),
                Err(e) => failures.push(format!("{} test_params[{i}] invalid: {e}", c.name())),
            }
        }
    }
    assert!(!instances.is_empty(), "no component instance to simulate");
    failures.extend(par_map(&instances, |(c, p, i)| check_instance(*c, p, *i)));
    assert!(failures.is_empty(), "{} failing instance(s):\n{}", failures.len(), failures.join("\n"));
}

/// The message validate() gives must be what the RTL prints when elaborated with the same
/// parameters (the RTL is elaborated from the unchecked parameter set: its checks are
/// elaboration-time `$fatal`s, so no model is built).
/// `MASE_TEST_COMPONENT=<name>` checks one component, as in the test above.
#[test]
fn invalid_params_rejected_by_validate_and_rtl() {
    let mut failures = Vec::new();
    let mut cases: Vec<(&dyn Component, Params, String)> = Vec::new();
    for c in selected_components() {
        for ov in c.invalid_params() {
            // Defaults filled without validation; then validate() must reject.
            let mut p = Params::new();
            for s in c.params() {
                let v =
                    ov.iter().rev().find(|(k, _)| *k == s.name).map(|(_, v)| *v).unwrap_or(match s.default {
                        ParamDefault::Value(v) => v,
                        ParamDefault::SameAs(o) => p[o],
                    });
                p.insert(s.name.to_string(), v);
            }
            match c.validate(&p) {
                Ok(()) => failures.push(format!("{}: validate() accepted {ov:?}", c.name())),
                Err(msg) => {
                    assert!(resolve_params(c, &ov).is_err(), "{}: resolve_params accepted {ov:?}", c.name());
                    cases.push((c, p, msg));
                }
            }
        }
    }
    assert!(!cases.is_empty(), "no invalid parameter set to check");
    failures.extend(par_map(&cases, |(c, p, msg)| match mase_sim::bench::elaborate_component(*c, p) {
        Ok(()) => Err(format!("{}: RTL accepted {p:?} (validate says: {msg})", c.name())),
        Err(SimError::Command { detail, .. }) if detail.contains(msg.as_str()) => Ok(()),
        Err(e) => {
            Err(format!("{}: RTL rejected {p:?} but not with validate()'s message `{msg}`: {e}", c.name()))
        }
    }));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
