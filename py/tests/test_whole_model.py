"""A whole Hugging Face export from Python: ``mase_rs.flow`` on token ids, then ``sim.Design``
driven with the host pre part's device inputs under stalls, checked against the golden model,
the host post part giving ``logits`` compared with onnxruntime's."""

import numpy as np

import mase_rs
from mase_rs import sim

INPUTS = ("input_ids", "attention_mask", "token_type_ids")
CONFIG = {"passes": {"auto_precision": {"width": 16, "weight_width": 8, "weight_granularity": "per_channel"}}}


def test_classifier_export_from_token_ids_to_logits(fixtures, tmp_path):
    hf = fixtures / "hf"
    batch = {k: np.load(hf / f"batch.{k}.npy") for k in INPUTS}
    out = mase_rs.flow(hf / "bert_cls_ts_static.onnx", tmp_path / "cls", config=CONFIG, calibrate=batch)
    assert "host/pre.onnx" in out["files"] and "host/post.onnx" in out["files"]
    dut = sim.Design.build(tmp_path / "cls")
    pre = dut.host_pre(batch)
    ins = dut.inputs
    outs = dut.outputs

    async def test(dut):
        await dut.reset()
        done = [s.drive(pre[s.tensor][None], stall_prob=0.3) for s in ins]
        got = {}
        for s in outs:
            got[s.name] = await s.collect(1, stall_prob=0.3)
        for d in done:
            await d
        return got

    got = sim.run(test, dut)
    golden = dut.golden(batch)
    for s in outs:
        assert np.array_equal(got[s.name], golden[s.name]), s.name
    logits = dut.host_post(pre, got)["logits"]
    assert np.array_equal(logits, golden["logits"])
    # With codes=True the device's outputs come back as codes, the model's outputs as values.
    golden_codes = dut.golden(batch, codes=True)
    for s in outs:
        values, codes = s.quantize(golden[s.name])
        assert np.array_equal(golden_codes[s.name], codes), s.name
    assert np.array_equal(golden_codes["logits"], golden["logits"])
    ort = np.load(hf / "bert_cls_ts_static.out.logits.npy")
    cos = float(np.dot(logits.ravel(), ort.ravel()) / (np.linalg.norm(logits) * np.linalg.norm(ort)))
    assert cos >= 0.999, cos
    assert np.array_equal(logits.argmax(-1), ort.argmax(-1))


def test_host_parts_and_the_device_graph_compose_to_the_model_under_onnxruntime(fixtures, tmp_path):
    """The project's host parts are ONNX that onnxruntime runs: its pre part, mase's float run of
    the device's graph, and its post part give the whole model's logits (as onnxruntime computed
    them on the original export)."""
    import onnxruntime as ort

    hf = fixtures / "hf"
    batch = {k: np.load(hf / f"batch.{k}.npy") for k in INPUTS}
    out = mase_rs.flow(hf / "bert_cls_dynamo_static.onnx", tmp_path / "cls", config=CONFIG, calibrate=batch)
    host = tmp_path / "cls" / "host"
    pre = ort.InferenceSession(str(host / "pre.onnx"), providers=["CPUExecutionProvider"])
    assert sorted(i.name for i in pre.get_inputs()) == sorted(INPUTS)
    values = dict(zip([o.name for o in pre.get_outputs()], pre.run(None, batch)))
    device = out["graph"]
    got = device.run(**{name: values[name] for name in device.inputs})
    outputs = got if isinstance(got, tuple) else (got,)
    (out_node,) = [n for n in device.nodes.values() if n.op == "output"]
    values.update(zip(out_node.inputs, outputs))
    post = ort.InferenceSession(str(host / "post.onnx"), providers=["CPUExecutionProvider"])
    feeds = {i.name: values[i.name] for i in post.get_inputs()}
    (logits,) = post.run(None, feeds)
    ref = np.load(hf / "bert_cls_dynamo_static.out.logits.npy")
    np.testing.assert_allclose(logits, ref, rtol=1e-4, atol=1e-5)
