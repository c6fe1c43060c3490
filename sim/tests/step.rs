//! The steppable harness ([`mase_sim::harness::Stepper`]) on its own: incremental stimulus with
//! random stalls, waiting for events, the scoreboard and the deadlock report, against a
//! component's model (the Python package's harness is built on it; `py/tests` covers the rest).

use mase_hwlib::{lookup, resolve_params};
use mase_sim::harness::{Stepper, Wait};
use mase_sim::{build, component_build_spec, Model, SimError};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// A built `relu` (8 elements per row, 2 lanes), its stimulus of `rows` rows and the model's
/// output codes.
fn relu(rows: usize) -> (Stepper, Vec<i64>, Vec<i64>) {
    let c = lookup("relu").unwrap();
    let p = resolve_params(
        c,
        &[
            ("DATA_IN_0_PRECISION_0", 8),
            ("DATA_IN_0_TENSOR_SIZE_DIM_0", 8),
            ("DATA_IN_0_PARALLELISM_DIM_0", 2),
        ],
    )
    .unwrap();
    let stim = c.random_stimulus(&p, rows, &mut ChaCha8Rng::seed_from_u64(4));
    let expected = c.model(&p, &stim).unwrap()["data_out_0"].clone();
    let b = build(&component_build_spec(c, &p, &stim, false).unwrap()).unwrap();
    let stepper = Stepper::new(Model::new(&b).unwrap(), &c.streams(&p), 9).unwrap();
    (stepper, stim.inputs["data_in_0"].clone(), expected)
}

#[test]
fn incremental_stimulus_with_stalls_matches_the_model() {
    let (mut s, input, expected) = relu(10);
    let (i, o) = (s.stream_index("data_in_0").unwrap(), s.stream_index("data_out_0").unwrap());
    s.reset().unwrap();
    s.monitor(o, 0.4).unwrap();
    s.expect(o, &expected).unwrap();
    // Half the rows first, the rest once they have been taken.
    s.drive(i, &input[..40], 0.4).unwrap();
    assert_eq!(s.run_until(&[Wait::Drained(i)]).unwrap(), 0);
    s.drive(i, &input[40..], 0.4).unwrap();
    let at = s.cycle();
    assert_eq!(s.run_until(&[Wait::Elements(o, 80), Wait::Cycle(at + 1_000_000)]).unwrap(), 0);
    assert_eq!(s.take(o, 80).unwrap(), expected);
    assert_eq!(s.mismatch_count, 0);
    let at = s.cycle();
    assert_eq!(s.run_until(&[Wait::Cycle(at + 7)]).unwrap(), 0);
    assert_eq!(s.cycle(), at + 7);
}

#[test]
fn scoreboard_and_deadlock_report() {
    let (mut s, input, mut expected) = relu(2);
    let (i, o) = (s.stream_index("data_in_0").unwrap(), s.stream_index("data_out_0").unwrap());
    s.reset().unwrap();
    expected[5] += 1;
    s.expect(o, &expected).unwrap();
    s.drive(i, &input, 0.0).unwrap();
    s.run_until(&[Wait::Elements(o, 16)]).unwrap();
    assert_eq!(s.mismatch_count, 1);
    assert_eq!((s.mismatches[0].index, s.mismatches[0].actual), (5, expected[5] - 1));
    s.watchdog_cycles = 50;
    match s.run_until(&[Wait::Elements(o, 17)]) {
        Err(SimError::Deadlock { detail, .. }) => assert!(detail.contains("data_out_0"), "{detail}"),
        other => panic!("expected a deadlock, got {other:?}"),
    }
}
