#!/usr/bin/env python3
"""Writes the quantized-model fixtures of mase-rs into tests/fixtures/quant/: models quantized by
the real tools (Brevitas QAT exported to QONNX, onnxruntime's static QDQ quantization), each with
inputs and the reference tool's own outputs.

Needs: pip install torch brevitas qonnx onnx onnxoptimizer onnxruntime numpy
(made with torch 2.15.0, brevitas 0.13.4, qonnx 1.0.0, onnx 1.23.2, onnxoptimizer 0.4.2,
onnxruntime 1.32.0;
tests/fixtures/quant/README.md records the versions of the last run). Kept in a venv outside the
repository, e.g. /work/venv-export (see scripts/export_hf.py). Run from anywhere:
  /work/venv-export/bin/python scripts/export_quantized.py

Deterministic: numpy and torch seeds fix the data, the initial weights and the training batches
(the same versions give the same files; training runs on the CPU, single-threaded).

The task is the one of tests/fixtures/mlp_classifier.onnx (scripts/make_fixtures.py,
mlp_classifier): 10 seeded Gaussian clusters in 16 dimensions, 4000 training rows and 360
held-out evaluation rows, regenerated here from the same seed (the script checks that the
evaluation rows equal mlp_classifier.eval.x.npy).

Models (batch 4, input x [4, 16], output y [4, 10]):
  brevitas_mlp_po2.onnx     Brevitas QAT of QuantIdentity (int8) -> QuantLinear 16->32 (4-bit
                            weights) -> QuantReLU (uint8) -> QuantLinear 32->10 (4-bit weights)
                            -> QuantIdentity (int8), every quantizer a power-of-two
                            (FixedPoint) scale: Int8WeightPerTensorFixedPoint at bit width 4,
                            Int8ActPerTensorFixedPoint / Uint8ActPerTensorFixedPoint; biases float
  brevitas_mlp_float.onnx   the same network with float scales: Int8WeightPerChannelFloat at bit
                            width 4 (per output channel), Int8ActPerTensorFloat /
                            Uint8ActPerTensorFloat
                            both trained 400 steps of Adam (lr 0.01, batch 256, torch seed 0)
                            from the same float initialisation, exported with
                            brevitas.export.export_qonnx (torch's dynamo exporter, the default
                            with torch >= 2.9: opset 20, qonnx.custom_op.general opset 2) and
                            written as exported (no cleanup), weights embedded in the file
  ort_qdq_mlp.onnx          onnxruntime.quantization.quantize_static of the float
                            tests/fixtures/mlp_classifier.onnx: QDQ format, per-channel int8
                            weights (QInt8), uint8 activations (QUInt8), MinMax calibration on
                            mlp_classifier.calib.x.npy (64 rows, 16 batches of 4)
  ort_dynamic_mlp.onnx      onnxruntime.quantization.quantize_dynamic of the same float model
                            (int8 weights, activation scales computed at run time by
                            DynamicQuantizeLinear: the case mase refuses, see the README)

Data, per model <m>:
  <m>.in.x.npy              the first 4 evaluation rows (one inference)
  <m>.out.y.npy             the reference tool's output for them
  <m>.eval.out.y.npy        the reference tool's outputs for all 360 evaluation rows (90
                            inferences of 4, concatenated along the batch axis)
  eval.x.npy, eval.labels.npy (shared): the 360 evaluation rows and their labels (the same as
                            ../mlp_classifier.eval.*.npy)
Reference tools:
  QONNX  qonnx.core.onnx_exec.execute_onnx on the model as exported (it needs no cleanup; the
         script checks that qonnx.util.cleanup.cleanup_model's version, which renames the input
         to global_in, gives the same outputs)
  QDQ    onnxruntime with graph optimizations disabled (ORT_DISABLE_ALL), so that every
         QuantizeLinear / DequantizeLinear runs as written, in float32: <m>.out.y.npy and
         <m>.eval.out.y.npy. With the default optimizations onnxruntime fuses the QDQ pairs into
         integer kernels (QGemm / QLinearMatMul); their outputs are written as
         <m>.ort_fused.eval.out.y.npy only when they differ (the README gives the difference).
The script writes tests/fixtures/quant/README.md with the versions, opsets, op-type histograms
and accuracies of the run.
"""

import collections
import importlib.metadata
import os
import tempfile

import numpy as np
import onnx
import onnxruntime as ort

from make_fixtures import classifier_task

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(HERE, "..", "tests", "fixtures")
OUT = os.path.join(FIX, "quant")
BATCH = 4


def task_data():
    """The mlp_classifier task of scripts/make_fixtures.py (its own generator, same seed)."""
    _, x_train, y_train, x_eval, y_eval = classifier_task()
    committed = np.load(os.path.join(FIX, "mlp_classifier.eval.x.npy"))
    assert np.array_equal(committed, x_eval), "task data differs from mlp_classifier.eval.x.npy"
    return x_train, y_train, x_eval, y_eval.astype(np.int64)


def brevitas_mlp(po2):
    import brevitas.nn as qnn
    import torch
    from brevitas.quant import (Int8ActPerTensorFixedPoint, Int8ActPerTensorFloat,
                                Int8WeightPerChannelFloat, Int8WeightPerTensorFixedPoint,
                                Uint8ActPerTensorFixedPoint, Uint8ActPerTensorFloat)

    if po2:
        wq, aq, uq = Int8WeightPerTensorFixedPoint, Int8ActPerTensorFixedPoint, Uint8ActPerTensorFixedPoint
    else:
        wq, aq, uq = Int8WeightPerChannelFloat, Int8ActPerTensorFloat, Uint8ActPerTensorFloat

    class QMLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = qnn.QuantIdentity(act_quant=aq, bit_width=8, return_quant_tensor=True)
            self.fc1 = qnn.QuantLinear(16, 32, bias=True, weight_quant=wq, weight_bit_width=4)
            self.relu = qnn.QuantReLU(act_quant=uq, bit_width=8, return_quant_tensor=True)
            self.fc2 = qnn.QuantLinear(32, 10, bias=True, weight_quant=wq, weight_bit_width=4)
            self.out = qnn.QuantIdentity(act_quant=aq, bit_width=8, return_quant_tensor=False)

        def forward(self, x):
            return self.out(self.fc2(self.relu(self.fc1(self.inp(x)))))

    return QMLP()


def train_and_export(name, po2, data):
    import torch
    from brevitas.export import export_qonnx

    x_train, y_train, x_eval, y_eval = data
    torch.manual_seed(0)
    model = brevitas_mlp(po2)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    xt, yt = torch.from_numpy(x_train), torch.from_numpy(y_train)
    gen = torch.Generator().manual_seed(1)
    model.train()
    for _ in range(400):
        idx = torch.randint(0, len(xt), (256,), generator=gen)
        loss = torch.nn.functional.cross_entropy(model(xt[idx]), yt[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    path = os.path.join(OUT, f"{name}.onnx")
    with torch.no_grad():
        export_qonnx(model, torch.from_numpy(x_eval[:BATCH]), export_path=path)
        # The dynamo exporter writes the weights to path + ".data"; keep one self-contained file.
        onnx.save(onnx.load(path), path, save_as_external_data=False)
        if os.path.exists(path + ".data"):
            os.remove(path + ".data")
        torch_eval = np.concatenate([model(torch.from_numpy(x_eval[i:i + BATCH])).numpy()
                                     for i in range(0, len(x_eval), BATCH)])
    return path, torch_eval


def qonnx_outputs(path, x_eval):
    from qonnx.core.modelwrapper import ModelWrapper
    from qonnx.core.onnx_exec import execute_onnx
    from qonnx.util.cleanup import cleanup_model

    def run(model):
        iname, oname = model.graph.input[0].name, model.graph.output[0].name
        outs = [execute_onnx(model, {iname: x_eval[i:i + BATCH]})[oname] for i in range(0, len(x_eval), BATCH)]
        return np.concatenate(outs).astype(np.float32)

    raw = run(ModelWrapper(path))
    cleaned = run(cleanup_model(ModelWrapper(path)))
    assert np.array_equal(raw, cleaned), "qonnx: the export and its cleanup_model differ"
    return raw


def ort_outputs(path, x_eval, level):
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    iname = sess.get_inputs()[0].name
    return np.concatenate([sess.run(None, {iname: x_eval[i:i + BATCH]})[0] for i in range(0, len(x_eval), BATCH)])


def ort_qdq(name):
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_static)

    calib = np.load(os.path.join(FIX, "mlp_classifier.calib.x.npy"))

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.batches = iter([{"x": calib[i:i + BATCH]} for i in range(0, len(calib), BATCH)])

        def get_next(self):
            return next(self.batches, None)

    path = os.path.join(OUT, f"{name}.onnx")
    quantize_static(os.path.join(FIX, "mlp_classifier.onnx"), path, Reader(), quant_format=QuantFormat.QDQ,
                    per_channel=True, activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    return path


def ort_dynamic(name):
    from onnxruntime.quantization import QuantType, quantize_dynamic

    path = os.path.join(OUT, f"{name}.onnx")
    quantize_dynamic(os.path.join(FIX, "mlp_classifier.onnx"), path, weight_type=QuantType.QInt8)
    return path


def describe(path):
    m = onnx.load(path)
    ops = collections.Counter(f"{n.domain + ':' if n.domain else ''}{n.op_type}" for n in m.graph.node)
    opsets = ", ".join(f"{o.domain or 'ai.onnx'} {o.version}" for o in m.opset_import)
    hist = ", ".join(f"{k} x{v}" for k, v in sorted(ops.items()))
    return opsets, hist, os.path.getsize(path)


def main():
    import brevitas
    import torch

    torch.set_num_threads(1)
    os.makedirs(OUT, exist_ok=True)
    data = task_data()
    x_eval, y_eval = data[2], data[3]
    np.save(os.path.join(OUT, "eval.x.npy"), x_eval)
    np.save(os.path.join(OUT, "eval.labels.npy"), y_eval)
    rows = []

    def save(name, ref_eval, note):
        np.save(os.path.join(OUT, f"{name}.in.x.npy"), x_eval[:BATCH])
        np.save(os.path.join(OUT, f"{name}.out.y.npy"), ref_eval[:BATCH])
        np.save(os.path.join(OUT, f"{name}.eval.out.y.npy"), ref_eval)
        acc = (ref_eval.argmax(axis=1) == y_eval).mean()
        rows.append((name, acc, note) + describe(os.path.join(OUT, f"{name}.onnx")))
        print(f"{name}: accuracy {acc:.4f} ({note})")

    for name, po2 in [("brevitas_mlp_po2", True), ("brevitas_mlp_float", False)]:
        path, torch_eval = train_and_export(name, po2, data)
        ref = qonnx_outputs(path, x_eval)
        diff = float(np.abs(ref - torch_eval).max())
        save(name, ref, f"qonnx execute_onnx; max abs(qonnx - brevitas) = {diff:.3g}")

    path = ort_qdq("ort_qdq_mlp")
    ref = ort_outputs(path, x_eval, ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    fused = ort_outputs(path, x_eval, ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
    if not np.array_equal(fused, ref):
        np.save(os.path.join(OUT, "ort_qdq_mlp.ort_fused.eval.out.y.npy"), fused)
    float_ref = ort_outputs(os.path.join(FIX, "mlp_classifier.onnx"), x_eval,
                            ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
    save("ort_qdq_mlp", ref, f"onnxruntime, optimizations off; fused kernels: accuracy "
         f"{(fused.argmax(axis=1) == y_eval).mean():.4f}, max abs(fused - as written) = {np.abs(fused - ref).max():.3g}; "
         f"float model accuracy {(float_ref.argmax(axis=1) == y_eval).mean():.4f}")

    path = ort_dynamic("ort_dynamic_mlp")
    ref = ort_outputs(path, x_eval, ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    save("ort_dynamic_mlp", ref, "onnxruntime, optimizations off")

    with open(os.path.join(OUT, "README.md"), "w") as f:
        f.write("# Quantized-model fixtures\n\n")
        f.write("Written by `scripts/export_quantized.py` (its docstring says what each file is); do not edit.\n\n")
        f.write(f"Versions: torch {torch.__version__}, brevitas {brevitas.__version__}, "
                f"qonnx {importlib.metadata.version('qonnx')}, onnx {onnx.__version__}, "
                f"onnxoptimizer {importlib.metadata.version('onnxoptimizer')}, "
                f"onnxruntime {ort.__version__}, numpy {np.__version__}.\n\n")
        f.write("| model | reference accuracy (360 rows) | reference | opsets | ops | bytes |\n|---|---|---|---|---|---|\n")
        for name, acc, note, opsets, hist, size in rows:
            f.write(f"| `{name}.onnx` | {acc:.4f} | {note} | {opsets} | {hist} | {size} |\n")


if __name__ == "__main__":
    main()
