//! `add_hardware_metadata` records the seeds' hardware fields on every node of the encoder-layer
//! fixture, and the recorded parallelism rebuilds the same design.

use mase_emit::flow::quantized_graph;
use mase_emit::{add_hardware_metadata, design_of, HwConfig};
use mase_ir::metadata::Toolchain;

#[test]
fn every_node_gets_the_seed_fields() {
    let bytes =
        std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/encoder_layer.onnx")).unwrap();
    let q = quantized_graph(&bytes, &mase_emit::flow::FlowOptions::new("encoder", "")).unwrap().1;
    let (g, info) = add_hardware_metadata(q, &HwConfig::default()).unwrap();
    assert_eq!(info["mode"], "lanes");
    for (_, n) in g.nodes() {
        let hw = &n.meta.hardware;
        assert_eq!(hw.device_id, 0, "{}", n.name);
        match n.op.mase_op() {
            "reshape" => assert!(hw.is_implicit && hw.module.is_none(), "{}", n.name),
            "linear" => {
                assert_eq!(hw.toolchain, Some(Toolchain::Internal));
                assert_eq!(hw.module.as_deref(), Some("mase_linear"));
                assert!(hw.interface["weight"].storage == "BRAM" && hw.interface.contains_key("bias"));
                assert!(hw.dependence_files.contains(&"rtl/mase_linear.sv".to_string()));
                let w = &n.meta.common.args["weight"];
                assert_eq!(hw.verilog_param["WEIGHT_PRECISION_0"], w.precision[0]);
                assert_eq!(hw.verilog_param["DATA_IN_0_TENSOR_SIZE_DIM_0"] as usize, w.shape[1]);
                assert_eq!(
                    hw.parallelism["data_in_0"][0] as i64,
                    hw.verilog_param["DATA_IN_0_PARALLELISM_DIM_0"]
                );
            }
            "softmax" | "layer_norm" | "gelu" | "matmul" | "add" | "mul" => {
                assert_eq!(hw.toolchain, Some(Toolchain::Internal), "{}", n.name);
                assert!(!hw.is_implicit && !hw.verilog_param.is_empty(), "{}", n.name);
            }
            _ => {}
        }
    }
    // Q·Kᵀ reads the head-split K rows as Bᵀ (no element-wise 2-D transpose of K); A·V reads V.
    let tb = |name: &str| g.node(g.find(name).unwrap()).meta.hardware.verilog_param["TRANSPOSE_B"];
    assert_eq!((tb("attention_self_MatMul"), tb("attention_self_MatMul_1")), (1, 0));
    let k_split = &g.node(g.find("attention_self_Transpose_1").unwrap()).meta.hardware.verilog_param;
    assert_eq!(k_split["BLOCK_SIZE"], 64, "K is only split into heads");
    // The metadata alone rebuilds the design, identically, after a checkpoint round trip.
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("g");
    mase_ir::checkpoint::export(&g, &prefix).unwrap();
    let back = mase_ir::checkpoint::load(&prefix).unwrap();
    let (a, b) = (design_of(&g, "top").unwrap(), design_of(&back, "top").unwrap());
    assert_eq!(mase_emit::sv::top_sv(&a), mase_emit::sv::top_sv(&b));
}
