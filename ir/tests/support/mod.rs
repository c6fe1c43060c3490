//! Test support shared by the integration tests of `tests/quantize.rs` and
//! `tests/saturation.rs`: random tensors and the small MLP both quantize.

use mase_ir::metadata::TensorMeta;
use mase_ir::passes::add_common_metadata::add_common_metadata;
use mase_ir::{MaseGraph, Op, Tensor};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A tensor of `shape` with elements uniform in `[-scale, scale)`.
pub fn rand_tensor(rng: &mut ChaCha8Rng, shape: &[usize], scale: f32) -> Tensor {
    let n = shape.iter().product();
    Tensor::from_f32(shape, (0..n).map(|_| rng.gen_range(-1.0f32..1.0) * scale).collect()).unwrap()
}

/// x[4,16] → fc1 (8) → relu → reshape → fc2 (5) → output, with common metadata.
pub fn mlp(seed: u64) -> MaseGraph {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut g = MaseGraph::new("mlp");
    g.weights.insert("fc1.weight".into(), rand_tensor(&mut rng, &[8, 16], 0.5));
    g.weights.insert("fc1.bias".into(), rand_tensor(&mut rng, &[8], 0.2));
    g.weights.insert("fc2.weight".into(), rand_tensor(&mut rng, &[5, 8], 0.5));
    g.weights.insert("fc2.bias".into(), rand_tensor(&mut rng, &[5], 0.2));
    let x = g.add_node("x", Op::Placeholder, vec![]).unwrap();
    g.node_mut(x).meta.common.results.insert(
        "data_out_0".into(),
        TensorMeta { shape: vec![4, 16], precision: vec![32], ..Default::default() },
    );
    let h = g
        .add_node("fc1", Op::Linear { weight: "fc1.weight".into(), bias: Some("fc1.bias".into()) }, vec![x])
        .unwrap();
    let r = g.add_node("relu", Op::Relu, vec![h]).unwrap();
    let t = g.add_node("view", Op::Reshape { shape: vec![4, 8] }, vec![r]).unwrap();
    let y = g
        .add_node("fc2", Op::Linear { weight: "fc2.weight".into(), bias: Some("fc2.bias".into()) }, vec![t])
        .unwrap();
    g.add_node("output", Op::Output, vec![y]).unwrap();
    add_common_metadata(&mut g).unwrap();
    g
}
