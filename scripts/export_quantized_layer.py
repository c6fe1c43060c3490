#!/usr/bin/env python3
"""Writes the quantized transformer-layer fixture of mase-rs into tests/fixtures/quant_layer/: a
small transformer encoder layer trained with Brevitas quantizers in the loop (power-of-two
scales) and exported to QONNX, with inputs and qonnx's own outputs.

Needs: pip install torch brevitas qonnx onnx numpy (made with torch 2.15.0, brevitas 0.13.4,
qonnx 1.0.0, onnx 1.23.2; tests/fixtures/quant_layer/README.md records the versions of the last
run). Kept in a venv outside the repository, e.g. /work/venv-export (see scripts/export_hf.py):
  /work/venv-export/bin/python scripts/export_quantized_layer.py

Deterministic: torch seeds fix the teacher, the initial weights, the training batches and the
evaluation inputs (the same versions give the same files; training runs on the CPU,
single-threaded).

Model brevitas_layer_po2.onnx (input x [1, 8, 16]: 8 tokens of 16 features; output [1, 8, 16]):
one head of self-attention and a ReLU feed-forward block of 32, post-norm, as
torch.nn.TransformerEncoderLayer(16, 1, 32, activation="relu") computes it:
  x -> QuantIdentity
  q, k, v = QuantLinear 16->16 (4-bit weights, float bias) -> QuantIdentity each
  s = (q @ k^T) * 0.25 -> QuantIdentity;  p = softmax(s) -> QuantIdentity (uint8)
  c = p @ v -> QuantIdentity;  a = QuantLinear(c) -> QuantIdentity
  h = LayerNorm(x + a) -> QuantIdentity
  f = QuantLinear 16->32 -> QuantReLU (uint8) -> QuantLinear 32->16 -> QuantIdentity
  y = LayerNorm(h + f) -> QuantIdentity
Every quantizer has a power-of-two scale: Int8WeightPerTensorFixedPoint at bit width 4,
Int8ActPerTensorFixedPoint / Uint8ActPerTensorFixedPoint at 8 bits. The layer norms' scales and
shifts stay float, as Brevitas leaves them. Trained 300 steps of Adam (lr 0.005, batches of 32
seeded Gaussian sequences) to reproduce a seeded float torch.nn.TransformerEncoderLayer of the
same shape (mean squared error), then exported with brevitas.export.export_qonnx (torch's dynamo
exporter: opset 20, qonnx.custom_op.general opset 2), weights embedded in the file.

Data:
  brevitas_layer_po2.in.x.npy        one input sequence [1, 8, 16]
  brevitas_layer_po2.out.y.npy       qonnx's output for it
  eval.x.npy                         64 seeded Gaussian sequences [64, 8, 16] (64 inferences)
  brevitas_layer_po2.eval.out.y.npy  qonnx's outputs for them [64, 8, 16]
Reference: qonnx.core.onnx_exec.execute_onnx on the model as exported, one sequence at a time;
the script checks that it equals the Brevitas model's own output.
"""

import importlib.metadata
import os

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "fixtures", "quant_layer")
S, D, F = 8, 16, 32
EVAL = 64


def layer():
    import brevitas.nn as qnn
    import torch
    from brevitas.quant import (Int8ActPerTensorFixedPoint, Int8WeightPerTensorFixedPoint,
                                Uint8ActPerTensorFixedPoint)

    def act(unsigned=False):
        q = Uint8ActPerTensorFixedPoint if unsigned else Int8ActPerTensorFixedPoint
        return qnn.QuantIdentity(act_quant=q, bit_width=8, return_quant_tensor=False)

    def linear(i, o):
        return qnn.QuantLinear(i, o, bias=True, weight_quant=Int8WeightPerTensorFixedPoint, weight_bit_width=4)

    class Layer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = act()
            self.q, self.k, self.v, self.o = linear(D, D), linear(D, D), linear(D, D), linear(D, D)
            self.q_act, self.k_act, self.v_act = act(), act(), act()
            self.scores_act, self.probs_act, self.ctx_act, self.o_act = act(), act(True), act(), act()
            self.norm1, self.norm1_act = torch.nn.LayerNorm(D), act()
            self.ff1, self.ff2 = linear(D, F), linear(F, D)
            self.relu = qnn.QuantReLU(act_quant=Uint8ActPerTensorFixedPoint, bit_width=8,
                                      return_quant_tensor=False)
            self.ff2_act = act()
            self.norm2, self.out = torch.nn.LayerNorm(D), act()

        def forward(self, x):
            x = self.inp(x)
            q, k, v = self.q_act(self.q(x)), self.k_act(self.k(x)), self.v_act(self.v(x))
            s = self.scores_act(torch.matmul(q, k.transpose(-1, -2)) * 0.25)
            p = self.probs_act(torch.softmax(s, dim=-1))
            c = self.ctx_act(torch.matmul(p, v))
            h = self.norm1_act(self.norm1(x + self.o_act(self.o(c))))
            f = self.ff2_act(self.ff2(self.relu(self.ff1(h))))
            return self.out(self.norm2(h + f))

    return Layer()


def main():
    import brevitas
    import torch
    from brevitas.export import export_qonnx
    from qonnx.core.modelwrapper import ModelWrapper
    from qonnx.core.onnx_exec import execute_onnx

    torch.set_num_threads(1)
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(0)
    teacher = torch.nn.TransformerEncoderLayer(D, 1, F, dropout=0.0, batch_first=True, activation="relu")
    model = layer()
    opt = torch.optim.Adam(model.parameters(), lr=0.005)
    gen = torch.Generator().manual_seed(1)
    for _ in range(300):
        x = torch.randn(32, S, D, generator=gen)
        with torch.no_grad():
            y = teacher(x)
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    x_eval = torch.randn(EVAL, 1, S, D, generator=torch.Generator().manual_seed(2))
    path = os.path.join(OUT, "brevitas_layer_po2.onnx")
    with torch.no_grad():
        export_qonnx(model, x_eval[0], export_path=path)
        # The dynamo exporter writes the weights to path + ".data"; keep one self-contained file.
        onnx.save(onnx.load(path), path, save_as_external_data=False)
        if os.path.exists(path + ".data"):
            os.remove(path + ".data")
        brevitas_eval = np.stack([model(x).numpy() for x in x_eval])
        teacher_eval = np.stack([teacher(x).numpy() for x in x_eval])
    mw = ModelWrapper(path)
    iname, oname = mw.graph.input[0].name, mw.graph.output[0].name
    ref = np.stack([execute_onnx(mw, {iname: x.numpy()})[oname] for x in x_eval]).astype(np.float32)
    assert np.array_equal(ref, brevitas_eval), "qonnx's execution differs from the Brevitas model's"
    xs = x_eval.numpy()
    np.save(os.path.join(OUT, "brevitas_layer_po2.in.x.npy"), xs[0])
    np.save(os.path.join(OUT, "brevitas_layer_po2.out.y.npy"), ref[0])
    np.save(os.path.join(OUT, "eval.x.npy"), xs.reshape(EVAL, S, D))
    np.save(os.path.join(OUT, "brevitas_layer_po2.eval.out.y.npy"), ref.reshape(EVAL, S, D))
    err = float(np.abs(ref - teacher_eval).mean())
    with open(os.path.join(OUT, "README.md"), "w") as f:
        f.write("# Quantized transformer-layer fixture\n\n")
        f.write("Written by `scripts/export_quantized_layer.py` (its docstring says what each file is); "
                "do not edit.\n\n")
        f.write(f"Versions: torch {torch.__version__}, brevitas {brevitas.__version__}, "
                f"qonnx {importlib.metadata.version('qonnx')}, onnx {onnx.__version__}, "
                f"numpy {np.__version__}.\n\n")
        f.write(f"Training loss (MSE against the float teacher): {loss.item():.4g}. Mean absolute "
                f"difference of qonnx's outputs from the teacher's on the {EVAL} evaluation sequences: "
                f"{err:.4g}.\n")
    print(f"loss {loss.item():.4g}, mean |qonnx - teacher| {err:.4g}")


if __name__ == "__main__":
    main()
