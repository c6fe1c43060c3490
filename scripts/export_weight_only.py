#!/usr/bin/env python3
"""Writes the weight-only int8 BERT fixtures of mase-rs into tests/fixtures/weight_only/.

Needs: pip install torch transformers onnx onnxruntime onnxscript numpy (the packages of
scripts/export_hf.py, whose model builders and batch this script reuses). Run from anywhere:
python3 scripts/export_weight_only.py (about 15 s).

The model is the classifier of tests/fixtures/hf/ (BertForSequenceClassification, hidden 64, 2
layers, 4 heads, FFN 128, 3 labels, seed 1, built by export_hf.build_classifier), with every
nn.Linear (the attention projections, both FFN layers, the pooler and the classifier head)
replaced by a weight-only int8 linear, the form a PyTorch model quantized for weight-only
inference has:

  weight codes  q[o, i] = clamp(round(w[o, i] / s[o]), -127, 127), int8 buffer
  scales        s[o] = max_i |w[o, i]| / 127, float32 buffer of shape [out, 1]
  forward       F.linear(x, q.to(float32) * s, bias)

so the export carries each weight as an INT8 initializer -> Cast(FLOAT) -> Mul(scale), the
pattern mase-rs raises onto its weight-only hardware. The TorchScript exporter's constant
folding would fold that pattern into a float initializer (and lose the codes), so the model is
exported with do_constant_folding=False; every other constant subgraph is left for the
importer's folding, as it is in such an export.

Files (static batch 3 x seq 16; the batch is tests/fixtures/hf/batch.*.npy):
  bert_cls_w8_ts_static.onnx                 the weight-only export, opset 17, INT8 initializers
  bert_cls_w8_ts_static.out.logits.npy       onnxruntime (CPUExecutionProvider) on the batch
  bert_cls_w8_ts_static.codes.<name>.npy     each int8 weight, [out, in], as the model stores it
                                             (<name> the linear's module path, dots as '_')
  README.md                                  versions, op histogram, accuracy against the float model

The script checks that torch and onnxruntime agree within 1e-4 and that the export contains one
INT8 initializer per linear, each consumed by a Cast.
"""

import collections
import os
import sys

import numpy as np
import onnx
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_hf  # noqa: E402  (the shared model builders and batch)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO, "tests", "fixtures", "weight_only")
NAME = "bert_cls_w8_ts_static"
OUTPUT = "logits"


class WeightOnlyLinear(torch.nn.Module):
    """A linear layer with int8 weight codes and one float scale per output channel."""

    def __init__(self, linear):
        super().__init__()
        w = linear.weight.detach()
        scale = w.abs().amax(dim=1, keepdim=True) / 127.0
        codes = torch.clamp(torch.round(w / scale), -127, 127).to(torch.int8)
        self.register_buffer("weight_int8", codes)
        self.register_buffer("weight_scale", scale.to(torch.float32))
        self.bias = linear.bias

    def forward(self, x):
        return torch.nn.functional.linear(x, self.weight_int8.to(x.dtype) * self.weight_scale, self.bias)


def quantize_linears(model):
    """Replaces every nn.Linear by a WeightOnlyLinear; returns {module path: int8 codes}."""
    codes = {}
    for path, module in list(model.named_modules()):
        for child_name, child in list(module.named_children()):
            if isinstance(child, torch.nn.Linear):
                q = WeightOnlyLinear(child)
                setattr(module, child_name, q)
                full = f"{path}.{child_name}" if path else child_name
                codes[full] = q.weight_int8.numpy().copy()
    return codes


def main():
    os.makedirs(OUT, exist_ok=True)
    config = export_hf.bert_config(64, 2, 4, 128, num_labels=3)
    model = export_hf.build_classifier(config, seed=1)
    feeds = {k: np.load(os.path.join(export_hf.FIXTURES, f"batch.{k}.npy")) for k in export_hf.INPUTS}
    float_logits = export_hf.torch_outputs(model, feeds)
    codes = quantize_linears(model)
    w8_logits = export_hf.torch_outputs(model, feeds)

    path = os.path.join(OUT, NAME + ".onnx")
    args = tuple(torch.from_numpy(feeds[k]) for k in export_hf.INPUTS)
    torch.onnx.export(
        model,
        args,
        path,
        dynamo=False,
        opset_version=export_hf.OPSET,
        input_names=export_hf.INPUTS,
        output_names=[OUTPUT],
        do_constant_folding=False,
    )
    onnx_model = export_hf.check_onnx(path, OUTPUT)
    int8 = [i.name for i in onnx_model.graph.initializer if i.data_type == onnx.TensorProto.INT8]
    cast_inputs = {n.input[0] for n in onnx_model.graph.node if n.op_type == "Cast"}
    if len(int8) != len(codes) or not set(int8) <= cast_inputs:
        sys.exit(f"{path}: {len(int8)} INT8 initializers for {len(codes)} linears, not all cast: {int8}")

    out = export_hf.run_ort(path, feeds, OUTPUT)
    diff = export_hf.max_diff(w8_logits, out)
    print(f"{NAME}: torch vs onnxruntime {diff:.3g}")
    if diff > export_hf.TOLERANCE:
        sys.exit(f"{NAME}: differs from torch by more than {export_hf.TOLERANCE}")
    np.save(os.path.join(OUT, f"{NAME}.out.{OUTPUT}.npy"), out)
    for module_path, q in codes.items():
        np.save(os.path.join(OUT, f"{NAME}.codes.{module_path.replace('.', '_')}.npy"), q)

    cos = float(
        np.dot(out.ravel().astype(np.float64), float_logits.ravel())
        / (np.linalg.norm(out.astype(np.float64)) * np.linalg.norm(float_logits.astype(np.float64)))
    )
    histogram = dict(sorted(collections.Counter(n.op_type for n in onnx_model.graph.node).items()))
    versions = export_hf.versions()
    lines = [
        "# Weight-only int8 BERT fixtures",
        "",
        "Written by `scripts/export_weight_only.py` (its docstring says what each file is); do not edit.",
        "",
        "The classifier of `tests/fixtures/hf/` (`BertForSequenceClassification`, hidden 64, 2 layers,",
        "seed 1) with every linear's weight stored as int8 codes and a float32 scale per output channel",
        "(symmetric, max |w| / 127), exported by the TorchScript exporter without constant folding:",
        "each weight is an INT8 initializer -> Cast -> Mul(scale). The inputs are",
        "`tests/fixtures/hf/batch.*.npy`.",
        "",
        f"- {len(codes)} quantized linears; {len(onnx_model.graph.node)} nodes; {os.path.getsize(path)} bytes.",
        f"- onnxruntime vs torch (the same int8 model): max abs diff {diff:.1e}.",
        f"- cosine of the int8 model's logits against the float model's: {cos:.6f}.",
        "- ops: " + ", ".join(f"{op} {n}" for op, n in histogram.items()) + ".",
        "",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()) + ".",
        "",
    ]
    with open(os.path.join(OUT, "README.md"), "w") as f:
        f.write("\n".join(lines))
    print(f"wrote {path}: {len(codes)} int8 linears, cosine to float {cos:.6f}")


if __name__ == "__main__":
    main()
