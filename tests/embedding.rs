//! The embedding component's binding on a real graph: an ONNX `Gather` of a float table at int64
//! token ids, imported (raised to `embedding`) and quantized, bound to `embedding`; the instance
//! its binding gives, filled with the memories its binding gives, run under Verilator with
//! random stalls on the graph's token ids equals the quantized execution of the graph, element
//! by element. The component is not part of the flow yet (the stitcher does not stream integer
//! graph inputs), so this test drives the instance directly.

mod common;

use std::collections::HashMap;
use std::path::Path;

use common::{onnx_model, onnx_node, value_info};
use mase_emit::flow::{quantized_graph, FlowOptions};
use mase_emit::FlowConfig;
use mase_hwlib::{lookup, param, Par, Stimulus};
use mase_ir::quant::exec::{run_quantized_values, QValue};
use mase_ir::Tensor;
use mase_sim::{simulate_component, RunConfig};

/// `ids [2, 3]` (int64) → `Gather(table [rows, dim], ids)` → `[2, 3, dim]`, as ONNX bytes.
fn embedding_onnx(rows: usize, dim: usize) -> Vec<u8> {
    use mase_ir::onnx::proto::*;
    onnx_model(
        "emb",
        vec![onnx_node("Gather", "Gather_y", &["table", "ids"], "y")],
        vec![TensorProto {
            name: "table".into(),
            dims: vec![rows as i64, dim as i64],
            data_type: 1,
            float_data: (0..rows * dim).map(|i| ((i * 29 % 23) as f32 - 11.0) / 7.0).collect(),
            ..Default::default()
        }],
        vec![value_info("ids", 7, Some(&[2, 3]))],
        vec![value_info("y", 1, None)],
    )
}

/// 8-bit table (s8.5, rounded to nearest even) and output (s8.3, truncated and saturated): the
/// output cast drops two fraction bits. A quantize config, so no calibration of the integer input.
const CONFIG: &str = "[passes.quantize.default.config]\nname = \"integer\"\n\
    weight_width = 8\nweight_frac_width = 5\ndata_in_width = 8\ndata_in_frac_width = 3\n\
    data_out_width = 8\ndata_out_frac_width = 3\n";

#[test]
fn embedding_binding_gives_an_instance_equal_to_quantized_execution() {
    let (rows, dim) = (10, 8);
    let bytes = embedding_onnx(rows, dim);
    let dir = tempfile::tempdir().unwrap();
    let mut opts = FlowOptions::new("emb", Path::new(dir.path()));
    opts.config = FlowConfig::from_table(&CONFIG.parse().unwrap(), "emb", None).unwrap();
    let (_, graph, _, _) = quantized_graph(&bytes, &opts).unwrap();
    let bound = mase_emit::bind::bind_graph(&graph, None).unwrap();
    let (id, node) = graph.nodes().find(|(_, n)| n.op.mase_op() == "embedding").expect("an embedding node");
    let c = bound.library(id).unwrap();
    assert_eq!(c.name(), "embedding");
    // Candidates: one index per beat in, every divisor of the row out.
    let cands = c.candidates(&bound.view(id)).unwrap();
    assert_eq!(cands.iter().map(|p| (p.p_in, p.p_out)).collect::<Vec<_>>(), [(1, 1), (1, 2), (1, 4), (1, 8)]);

    let ids: Vec<i64> = vec![3, 0, 9, 9, 5, 1];
    let inputs = HashMap::from([("ids".to_string(), Tensor::from_i64(&[2, 3], ids.clone()).unwrap())]);
    let values = run_quantized_values(&graph, &inputs).unwrap();
    let QValue::Fixed { codes, format } = &values[id.0] else {
        panic!("{}: not a fixed-point value", node.name)
    };
    let want: Vec<i64> = codes.iter().copied().collect();
    assert_eq!(want.len(), ids.len() * dim);

    for lanes in [2, 8] {
        let p = bound.params(id, Par::io(1, lanes)).unwrap();
        let q = &graph.qweights[match &node.op {
            mase_ir::Op::Embedding { table } => table,
            _ => unreachable!(),
        }];
        assert_eq!(param(&p, "IDX_WIDTH"), 4);
        assert_eq!((param(&p, "WEIGHT_TENSOR_SIZE_DIM_1"), param(&p, "WEIGHT_TENSOR_SIZE_DIM_0")), (10, 8));
        assert_eq!((param(&p, "WEIGHT_PRECISION_0"), param(&p, "WEIGHT_PRECISION_1")), (8, 5));
        assert_eq!(q.format.frac, 5);
        assert_eq!((param(&p, "DATA_OUT_0_PRECISION_0"), param(&p, "DATA_OUT_0_PRECISION_1")), (8, 3));
        assert_eq!((format.width, format.frac), (8, 3));
        assert_eq!(param(&p, "DATA_OUT_0_TENSOR_SIZE_DIM_1"), 6);
        assert_eq!(param(&p, "DATA_OUT_0_PARALLELISM_DIM_0"), lanes as i64);
        let mems = bound.memories(id, &p).unwrap();
        assert_eq!(mems.len(), 1);
        assert_eq!(mems[0].1, q.codes.iter().copied().collect::<Vec<_>>());

        let mut stim = Stimulus::default();
        stim.inputs.insert("data_in_0".into(), ids.clone());
        stim.memories.insert(mems[0].0.clone(), mems[0].1.clone());
        let cfg = RunConfig { seed: 3 + lanes as u64, stall_prob: 0.3, ..RunConfig::default() };
        let r = simulate_component(lookup("embedding").unwrap(), &p, &stim, &cfg).unwrap();
        assert_eq!(r.run.mismatch_count, 0, "{:?}", r.run.mismatches);
        assert_eq!(r.expected["data_out_0"], want, "model against quantized execution");
        assert_eq!(r.run.outputs["data_out_0"], want, "RTL against quantized execution");
    }
}
