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
    ins = [s for s in dut.streams if s.input]
    outs = [s for s in dut.streams if not s.input]

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
    ort = np.load(hf / "bert_cls_ts_static.out.logits.npy")
    cos = float(np.dot(logits.ravel(), ort.ravel()) / (np.linalg.norm(logits) * np.linalg.norm(ort)))
    assert cos >= 0.999, cos
    assert np.array_equal(logits.argmax(-1), ort.argmax(-1))
