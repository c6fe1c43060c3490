"""MaseGraph and passes with MASE's shapes: import, metadata as MASE reads it, run, quantize,
save/load, draw, errors carrying the Rust messages."""

import numpy as np
import pytest

import mase_rs
from mase_rs import MaseError, MaseGraph, passes

INT8 = {
    "name": "integer",
    "data_in_width": 8,
    "data_in_frac_width": 4,
    "weight_width": 8,
    "weight_frac_width": 6,
    "bias_width": 8,
    "bias_frac_width": 6,
    "data_out_width": 8,
    "data_out_frac_width": 4,
}


def mlp(fixtures):
    mg = MaseGraph.from_onnx(fixtures / "mlp_gemm_relu.onnx", input_shapes={"x": [4, 16]})
    mg, _ = passes.init_metadata_analysis_pass(mg)
    mg, _ = passes.add_common_metadata_analysis_pass(mg)
    return mg


def linear_nodes(mg):
    return [n for n in mg.nodes.values() if n.op == "linear"]


def test_import_and_float_run_match_onnxruntime(fixtures):
    mg = mlp(fixtures)
    assert mg.inputs == ["x"]
    x = np.load(fixtures / "mlp_gemm_relu.in.x.npy")
    y = mg.run(x=x)
    ref = np.load(fixtures / "mlp_gemm_relu.out.0.npy")
    assert y.shape == ref.shape and y.dtype == np.float32
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)


def test_a_whole_hugging_face_export_runs_on_int64_token_ids(fixtures):
    hf = fixtures / "hf"
    names = ["input_ids", "attention_mask", "token_type_ids"]
    mg = MaseGraph.from_onnx(hf / "bert_cls_ts_dynamic.onnx", input_shapes={n: [3, 16] for n in names})
    feeds = {n: np.load(hf / f"batch.{n}.npy") for n in names}
    assert feeds["input_ids"].dtype == np.int64
    logits = mg.run(**feeds)
    ref = np.load(hf / "bert_cls_ts_dynamic.out.logits.npy")
    np.testing.assert_allclose(logits, ref, rtol=1e-5, atol=1e-5)
    # Token ids as floats are refused by name rather than truncated.
    with pytest.raises(MaseError, match="input_ids"):
        mg.run(**dict(feeds, input_ids=feeds["input_ids"].astype(np.float32)))


def test_metadata_reads_as_in_mase(fixtures):
    mg = mlp(fixtures)
    fc = linear_nodes(mg)
    assert len(fc) == 2
    meta = fc[0].meta["mase"]
    common = meta.parameters["common"]
    assert common["mase_op"] == "linear"
    assert common["args"]["data_in_0"]["shape"] == [4, 16]
    assert common["args"]["data_in_0"]["precision"] == [32]
    assert meta["common"]["results"]["data_out_0"]["shape"] == [4, 32]
    assert set(meta.parameters) == {"common", "software", "hardware"}


def test_quantize_with_mase_dict_sets_precision(fixtures):
    mg = mlp(fixtures)
    mg2, info = passes.quantize_transform_pass(mg, {"by": "type", "default": {"config": INT8}})
    assert mg2 is mg and isinstance(info, dict)
    for n in linear_nodes(mg):
        args = n.meta["mase"].parameters["common"]["args"]
        assert args["data_in_0"]["precision"] == [8, 4]
        assert args["data_in_0"]["type"] == "fixed"
        assert args["weight"]["precision"] == [8, 6]
    x = np.load(fixtures / "mlp_gemm_relu.in.x.npy")
    yq = mg.run_quantized(x=x)
    # Outputs are codes of fixed<8,4>: integral multiples of 2^-4 within the 8-bit range.
    codes = yq * 16
    assert np.array_equal(codes, np.round(codes)) and codes.min() >= -128 and codes.max() <= 127
    assert np.abs(yq - mg.run(x=x)).max() < 1.0


def test_software_metadata_from_arrays_and_auto_precision(fixtures):
    mg = mlp(fixtures)
    x = np.load(fixtures / "mlp_gemm_relu.in.x.npy")
    mg, info = passes.add_software_metadata_analysis_pass(mg, {"inputs": {"x": [x, 2 * x]}})
    assert info["samples"] == 2
    stat = mg.nodes["x"].meta["mase"].parameters["software"]["results"]["data_out_0"]["stat"]
    assert stat["range_min_max"]["min"] == pytest.approx(float(min(x.min(), (2 * x).min())))
    assert stat["range_min_max"]["max"] == pytest.approx(float(max(x.max(), (2 * x).max())))
    mg, info = passes.auto_precision_transform_pass(mg, {"width": 8})
    fc = linear_nodes(mg)[0]
    assert fc.meta["mase"].parameters["common"]["args"]["data_in_0"]["precision"][0] == 8


def test_every_registered_pass_has_a_mase_name():
    registered = {name for name, _ in passes.pass_list()}
    assert registered == set(passes.PASSES.values())
    for mase_name in passes.PASSES:
        assert callable(getattr(passes, mase_name))


def test_save_load_and_draw(fixtures, tmp_path):
    mg = mlp(fixtures)
    passes.quantize_transform_pass(mg, {"by": "type", "default": {"config": INT8}})
    mg.save(tmp_path / "m")
    back = MaseGraph.load(tmp_path / "m")
    assert back.to_dict() == mg.to_dict()
    x = np.load(fixtures / "mlp_gemm_relu.in.x.npy")
    assert np.array_equal(back.run_quantized(x=x), mg.run_quantized(x=x))
    mg.draw(tmp_path / "g.svg")
    assert "<svg" in (tmp_path / "g.svg").read_text()
    mg.draw(tmp_path / "g.dot")
    assert (tmp_path / "g.dot").read_text().startswith("digraph")


def test_errors_carry_the_rust_messages(fixtures):
    with pytest.raises(MaseError, match="Unknown|unknown|not supported"):
        MaseGraph.from_onnx(fixtures / "bad_unknown_op.onnx")
    mg = mlp(fixtures)
    before = mg.to_dict()
    with pytest.raises(MaseError, match="data_in_widht"):
        passes.quantize_transform_pass(mg, {"by": "type", "default": {"config": dict(INT8, data_in_widht=8)}})
    assert mg.to_dict() == before, "a failing pass must leave the graph unchanged"
    with pytest.raises(MaseError, match="unknown pass 'no_such_pass'"):
        passes.run_pass(mg, "no_such_pass")
    with pytest.raises(MaseError, match=r"graph input 'x' was given shape \[3, 3\]"):
        mg.run(x=np.zeros((3, 3), dtype=np.float32))


def test_flow_returns_plain_data(fixtures, tmp_path):
    out = mase_rs.flow(
        fixtures / "mlp_gemm_relu.onnx",
        tmp_path / "hw",
        config={"passes": {"auto_precision": {"width": 8}}, "hardware": {"lanes": 2}},
        calibrate={"x": np.load(fixtures / "mlp_gemm_relu.in.x.npy")},
    )
    assert (tmp_path / "hw" / "top.sv").exists() and "top.sv" in out["files"]
    assert out["report"]["top"] == "top"
    assert out["info"]["calibration"]["source"] == "data" and out["warnings"] == []
    assert isinstance(out["graph"], MaseGraph)
    with pytest.raises(MaseError, match="lanez"):
        mase_rs.flow(fixtures / "mlp_gemm_relu.onnx", tmp_path / "hw2", config={"hardware": {"lanez": 2}})


def test_flow_reads_a_flow_toml(fixtures, root, tmp_path):
    out = mase_rs.flow(fixtures / "mlp_gemm_relu.onnx", tmp_path / "hw", config=root / "examples" / "flow_mlp_int8.toml")
    assert out["report"]["top"] == "mlp_top"
    assert out["info"]["calibration"]["source"] == "data"
    fc = [n for n in out["graph"].nodes.values() if n.op == "linear"][0]
    assert fc.meta["mase"].parameters["common"]["args"]["data_in_0"]["precision"][0] == 8
    assert fc.meta["mase"].parameters["hardware"]["toolchain"] == "INTERNAL"


def test_partition_over_devices_and_emit_the_system(fixtures, tmp_path):
    single = mase_rs.flow(fixtures / "mlp_gemm_relu.onnx", tmp_path / "one", config={"passes": {"auto_precision": {"width": 8}}})
    memory = single["report"]["memory_bits"]
    devices = [
        {"name": "a", "multipliers": 64, "memory_bits": memory * 6 // 10, "link_bits_per_cycle": 16, "link_latency_cycles": 4},
        {"name": "b", "multipliers": 64, "memory_bits": memory * 6 // 10},
    ]
    mg = mlp(fixtures)
    passes.quantize_transform_pass(mg, {"by": "type", "default": {"config": INT8}})
    mg, info = passes.partition_devices_analysis_pass(mg, {"devices": devices})
    assert [d["device"] for d in info["devices"]] == ["a", "b"] and len(info["links"]) == 1
    ids = [n.meta["mase"].parameters["hardware"]["device_id"] for n in linear_nodes(mg)]
    assert ids == sorted(ids) and set(ids) == {0, 1}
    mg, out = passes.emit_verilog_top_transform_pass(mg, {"project_dir": tmp_path / "sys", "devices": devices})
    assert (tmp_path / "sys" / "system" / "top.sv").exists()
    assert (tmp_path / "sys" / "device_1" / "top_device_1.sv").exists()
    with pytest.raises(MaseError, match="link_bits_per_cycle"):
        passes.partition_devices_analysis_pass(mlp(fixtures), {"devices": [devices[1], devices[1] | {"name": "c"}]})
