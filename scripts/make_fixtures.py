#!/usr/bin/env python3
"""Writes the ONNX test fixtures of mase-ir into tests/fixtures/.

Needs: pip install onnx onnxruntime numpy

Every model is built node by node with onnx.helper from seeded random weights (deterministic:
the same script gives the same files). For each valid model the script writes the model, its
inputs as `<name>.in.<input>.npy` and the outputs onnxruntime computes as `<name>.out.<k>.npy`
(float32). The Rust tests import the models, run the float interpreter on the inputs and compare
with the onnxruntime outputs, so the tests need no Python.

Models:
  mlp_gemm_relu            Gemm / Relu / Gemm (16 -> 32 -> 10, batch 4)
  mlp_classifier           the same shape trained on a seeded 10-class task, with calibration
                           inputs, 360 held-out evaluation rows and their labels (for sweeps;
                           --mlp-classifier writes only these files)
  mlp_matmul_gelu          MatMul+Add, Erf-form GELU, MatMul+Add
  mlp_two_outputs          Gemm / Relu / Gemm / Reshape with the ReLU features as a second output
  encoder_layer            BERT-tiny-shaped encoder layer (hidden 128, 2 heads, FFN 512, seq 8)
                           in the op sequence PyTorch's exporter emits, LayerNormalization op
                           (opset 17)
  encoder_layer_decomposed_ln
                           the same at opset 13 with layer norm decomposed into
                           ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add and a dynamic
                           sequence dimension 'seq'
  encoder_2layer           two such layers stacked (opset 17, other seeded weights), named as a
                           Hugging Face BERT export names its encoder's layers: initializers
                           encoder.layer.{i}.*, node scopes /encoder/layer.{i}/*
  one small model per raising pattern (pat_*) and lookalikes that must not be raised (neg_*)
  misc_ops                 the remaining supported ops, with three graph outputs
  bad_* files that the importer must reject with a clear error
Run from anywhere: python3 scripts/make_fixtures.py

Option --minilm OUT.onnx writes only a MiniLM-sized encoder layer (hidden 384, 12 heads of 32,
FFN 1536, seq 16; same structure and opset 17 export style as encoder_layer, seeded weights) to
OUT.onnx, for the flow speed benchmark (cargo run --release --example flow_speed), and leaves
tests/fixtures alone. With --layers N it writes N such layers stacked (named like encoder_2layer;
N = 1 is the single layer), with --seq S at sequence length S, e.g. a two-layer MiniLM-sized
encoder at a sentence's length (about 14 MB):
  python3 scripts/make_fixtures.py --minilm minilm2.onnx --layers 2 --seq 7

Option --minilm-real DIR writes the same layer at seq 7 with real-model activation statistics
(a few hidden channels ~10x the others, inputs reaching ±6, carried through by the LayerNorm
gammas and the residual-writing projections) as DIR/minilm_real.onnx, with calibration inputs
DIR/minilm_real.calib.hidden_states.npy (8 inferences stacked on the batch axis), evaluation
inputs DIR/minilm_real.eval.hidden_states.npy (4 more, another seed) and onnxruntime's outputs
for them, DIR/minilm_real.eval.out.npy; tests/fixtures is left alone. Then e.g.
  cargo run --release -- flow DIR/minilm_real.onnx --calibrate hidden_states=DIR/minilm_real.calib.hidden_states.npy -o PROJ
  cargo run --release -- sim PROJ --golden --input hidden_states=DIR/minilm_real.eval.hidden_states.npy --json
"""

import argparse
import math
import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures")
F = TensorProto.FLOAT


class Builder:
    """Collects nodes and initializers; names every node and value deterministically."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes = []
        self.inits = []
        self.count = {}
        # Module path of the nodes being made, as PyTorch names them ("/attention/self").
        self.scope = ""

    def _name(self, op):
        key = (self.scope, op)
        k = self.count.get(key, 0)
        self.count[key] = k + 1
        return f"{self.scope}/{op}" + (f"_{k}" if k else "")

    def node(self, op, inputs, n_out=1, **attrs):
        name = self._name(op)
        outs = [f"{name}_output_{i}" for i in range(n_out)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=name, **attrs))
        return outs[0] if n_out == 1 else outs

    def init(self, name, array):
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def weight(self, name, shape, scale):
        return self.init(name, (self.rng.standard_normal(shape) * scale).astype(np.float32))

    def scalar(self, name, value):
        return self.init(name, np.array(value, dtype=np.float32))

    def ints(self, name, values):
        return self.init(name, np.array(values, dtype=np.int64))

    def model(self, name, inputs, outputs, opset):
        graph = helper.make_graph(self.nodes, name, inputs, outputs, self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="mase-rs make_fixtures.py")
        m.ir_version = 8
        return m


def save(name, model, feeds, check=True):
    """Writes the model, its inputs and onnxruntime's outputs."""
    if check:
        onnx.checker.check_model(model, full_check=True)
    path = os.path.join(OUT, f"{name}.onnx")
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    outs = sess.run(None, feeds)
    for k, v in feeds.items():
        np.save(os.path.join(OUT, f"{name}.in.{k}.npy"), v.astype(np.float32))
    for k, v in enumerate(outs):
        np.save(os.path.join(OUT, f"{name}.out.{k}.npy"), np.asarray(v, dtype=np.float32))


def rand_input(seed, shape):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def vi(name, shape):
    return helper.make_tensor_value_info(name, F, shape)


# ---------------------------------------------------------------- MLPs

def gemm_relu_layer(b):
    """The MLPs' weights (fc1 16 -> 32, fc2 32 -> 10, drawn in this order) and their first
    layer Relu(Gemm(x)); returns fc2's weight and bias and the ReLU output."""
    w1 = b.weight("fc1.weight", (32, 16), 0.25)
    b1 = b.weight("fc1.bias", (32,), 0.1)
    w2 = b.weight("fc2.weight", (10, 32), 0.2)
    b2 = b.weight("fc2.bias", (10,), 0.1)
    h = b.node("Gemm", ["x", w1, b1], alpha=1.0, beta=1.0, transB=1)
    return w2, b2, b.node("Relu", [h])


def mlp_gemm_relu():
    b = Builder(1)
    w2, b2, h = gemm_relu_layer(b)
    y = b.node("Gemm", [h, w2, b2], alpha=1.0, beta=1.0, transB=1)
    b.nodes[-1].output[0] = "y"
    m = b.model("mlp_gemm_relu", [vi("x", [4, 16])], [vi("y", [4, 10])], 13)
    save("mlp_gemm_relu", m, {"x": rand_input(101, (4, 16))})
    return y


def classifier_task():
    """mlp_classifier's task: 10 seeded Gaussian clusters in 16 dimensions, 4000 training and 360
    held-out rows. Returns the generator (its later draws initialise the network) and the data;
    scripts/export_quantized.py trains its quantized models on the same task."""
    rng = np.random.default_rng(300)
    means = rng.standard_normal((10, 16)) * 1.1

    def draw(n):
        y = rng.integers(0, 10, size=n)
        return (means[y] + rng.standard_normal((n, 16))).astype(np.float32), y

    x_train, y_train = draw(4000)
    x_eval, y_eval = draw(360)
    return rng, x_train, y_train, x_eval, y_eval


def mlp_classifier():
    """A trained classifier of the fixture MLP's shape (Gemm / Relu / Gemm, 16 -> 32 -> 10,
    batch 4) with labelled data, for sweeps: the task is 10 seeded Gaussian clusters in 16
    dimensions (overlapping, so the float model is not perfect); the network is trained by
    full-batch gradient descent on softmax cross-entropy (numpy, seeded). Writes the model,
    calibration inputs (64 training rows stacked on the batch axis), held-out evaluation inputs
    (360 rows) and their true class labels."""
    rng, x_train, y_train, x_eval, y_eval = classifier_task()
    w1 = rng.standard_normal((32, 16)) * 0.25
    b1 = np.zeros(32)
    w2 = rng.standard_normal((10, 32)) * 0.2
    b2 = np.zeros(10)
    onehot = np.eye(10)[y_train]
    for _ in range(600):
        h = np.maximum(x_train @ w1.T + b1, 0.0)
        z = h @ w2.T + b2
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        dz = (p - onehot) / len(x_train)
        dh = (dz @ w2) * (h > 0)
        w2 -= 0.5 * dz.T @ h
        b2 -= 0.5 * dz.sum(axis=0)
        w1 -= 0.5 * dh.T @ x_train
        b1 -= 0.5 * dh.sum(axis=0)
    b = Builder(0)
    w1n = b.init("fc1.weight", w1.astype(np.float32))
    b1n = b.init("fc1.bias", b1.astype(np.float32))
    w2n = b.init("fc2.weight", w2.astype(np.float32))
    b2n = b.init("fc2.bias", b2.astype(np.float32))
    h = b.node("Gemm", ["x", w1n, b1n], alpha=1.0, beta=1.0, transB=1)
    h = b.node("Relu", [h])
    b.node("Gemm", [h, w2n, b2n], alpha=1.0, beta=1.0, transB=1)
    b.nodes[-1].output[0] = "y"
    m = b.model("mlp_classifier", [vi("x", [4, 16])], [vi("y", [4, 10])], 13)
    save("mlp_classifier", m, {"x": x_eval[:4]})
    sess = ort.InferenceSession(os.path.join(OUT, "mlp_classifier.onnx"), providers=["CPUExecutionProvider"])
    y = np.concatenate([sess.run(None, {"x": x_eval[i:i + 4]})[0] for i in range(0, len(x_eval), 4)])
    np.save(os.path.join(OUT, "mlp_classifier.calib.x.npy"), x_train[:64])
    np.save(os.path.join(OUT, "mlp_classifier.eval.x.npy"), x_eval)
    np.save(os.path.join(OUT, "mlp_classifier.eval.labels.npy"), y_eval.astype(np.int64))
    top2 = np.sort(y, axis=1)[:, -2:]
    print(f"mlp_classifier: float accuracy {(y.argmax(axis=1) == y_eval).mean():.4f} on {len(y_eval)} held-out rows "
          f"(train {(np.argmax(z, axis=1) == y_train).mean():.4f}); median top-2 logit margin "
          f"{np.median(top2[:, 1] - top2[:, 0]):.3f}")


def mlp_two_outputs():
    """Two graph outputs: the hidden ReLU features (also used inside) and the logits reshaped."""
    b = Builder(5)
    w2, b2, h = gemm_relu_layer(b)
    b.nodes[-1].output[0] = "features"
    y = b.node("Gemm", ["features", w2, b2], alpha=1.0, beta=1.0, transB=1)
    b.node("Reshape", [y, b.ints("shape_2x20", [2, 20])])
    b.nodes[-1].output[0] = "y"
    m = b.model("mlp_two_outputs", [vi("x", [4, 16])], [vi("features", [4, 32]), vi("y", [2, 20])], 13)
    save("mlp_two_outputs", m, {"x": rand_input(105, (4, 16))})


def gelu_erf(b, x, variant="div"):
    """GELU in the Erf form, as PyTorch exports it: Div(x, sqrt2), Erf, Add(1), Mul(x), Mul(0.5).
    Variant 'mul' multiplies by 1/sqrt2 instead of dividing, 'half_first' computes (x*0.5)*(...)."""
    if variant == "mul":
        t = b.node("Mul", [x, b.scalar(f"inv_sqrt2_{len(b.nodes)}", 1.0 / math.sqrt(2.0))])
    else:
        t = b.node("Div", [x, b.scalar(f"sqrt2_{len(b.nodes)}", math.sqrt(2.0))])
    e = b.node("Erf", [t])
    a = b.node("Add", [e, b.scalar(f"one_{len(b.nodes)}", 1.0)])
    half = b.scalar(f"half_{len(b.nodes)}", 0.5)
    if variant == "half_first":
        h = b.node("Mul", [x, half])
        return b.node("Mul", [h, a])
    m = b.node("Mul", [x, a])
    return b.node("Mul", [m, half])


def mlp_matmul_gelu():
    b = Builder(2)
    w1 = b.weight("fc1.weight_t", (16, 32), 0.25)
    b1 = b.weight("fc1.bias", (32,), 0.1)
    w2 = b.weight("fc2.weight_t", (32, 10), 0.2)
    b2 = b.weight("fc2.bias", (10,), 0.1)
    h = b.node("MatMul", ["x", w1])
    h = b.node("Add", [b1, h])
    h = gelu_erf(b, h)
    y = b.node("MatMul", [h, w2])
    b.node("Add", [y, b2])
    b.nodes[-1].output[0] = "y"
    m = b.model("mlp_matmul_gelu", [vi("x", [4, 16])], [vi("y", [4, 10])], 13)
    save("mlp_matmul_gelu", m, {"x": rand_input(102, (4, 16))})


# ---------------------------------------------------------------- encoder layer

HIDDEN, HEADS, HEAD_DIM, FFN, SEQ = 128, 2, 64, 512, 8
# MiniLM-L12-sized layer for --minilm (hidden = heads * head_dim).
MINILM = dict(hidden=384, heads=12, head_dim=32, ffn=1536, seq=16)
# The committed two-layer stack (encoder_2layer): each layer the size of encoder_layer.
ENC2 = dict(hidden=HIDDEN, heads=HEADS, head_dim=HEAD_DIM, ffn=FFN, seq=SEQ)


def module_prefixes(module):
    """The initializer-name prefix and the node-scope prefix of a PyTorch module path, as its
    exporter writes them: "encoder.layer.1" gives "encoder.layer.1." and "/encoder/layer.1" (a
    ModuleList index stays attached to its list's name); the empty path gives two empty
    prefixes."""
    if not module:
        return "", ""
    parts = []
    for p in module.split("."):
        if p.isdigit() and parts:
            parts[-1] += "." + p
        else:
            parts.append(p)
    return module + ".", "/" + "/".join(parts)


def dense(b, x, name, n_in, n_out, module=""):
    """nn.Linear as PyTorch exports it for 3-D inputs: MatMul by the transposed weight, then
    Add(bias, product). module is the enclosing module's path (see module_prefixes)."""
    names, scope = module_prefixes(module)
    b.scope = scope + "/" + name.replace(".", "/")
    w = b.weight(f"{names}{name}.weight_t", (n_in, n_out), 1.0 / math.sqrt(n_in))
    bias = b.weight(f"{names}{name}.bias", (n_out,), 0.05)
    y = b.node("MatMul", [x, w])
    return b.node("Add", [bias, y])


def dim_of(b, x, i):
    """x.size(i) as the exporter emits it: Shape, Gather(scalar index), Unsqueeze(axes=[0])."""
    s = b.node("Shape", [x])
    g = b.node("Gather", [s, b.init(f"idx{i}_{len(b.nodes)}", np.array(i, dtype=np.int64))], axis=0)
    return b.node("Unsqueeze", [g, b.ints(f"axes0_{len(b.nodes)}", [0])])


def split_heads(b, x, heads=HEADS, head_dim=HEAD_DIM):
    """view(batch, seq, heads, head_dim) through a Shape/Gather/Unsqueeze/Concat shape graph."""
    d0 = dim_of(b, x, 0)
    d1 = dim_of(b, x, 1)
    shape = b.node("Concat", [d0, d1, b.ints(f"heads_{len(b.nodes)}", [heads]),
                              b.ints(f"hd_{len(b.nodes)}", [head_dim])], axis=0)
    return b.node("Reshape", [x, shape])


def layer_norm(b, x, name, decomposed, hidden=HIDDEN, module=""):
    names, scope = module_prefixes(module)
    b.scope = scope + "/" + name.replace(".", "/")
    gamma = b.init(f"{names}{name}.weight", (1.0 + 0.1 * b.rng.standard_normal(hidden)).astype(np.float32))
    beta = b.weight(f"{names}{name}.bias", (hidden,), 0.1)
    if not decomposed:
        return b.node("LayerNormalization", [x, gamma, beta], axis=-1, epsilon=1e-12)
    # Opset 13: ReduceMean takes axes as an attribute.
    mean = b.node("ReduceMean", [x], axes=[-1], keepdims=1)
    d = b.node("Sub", [x, mean])
    p = b.node("Pow", [d, b.scalar(f"two_{len(b.nodes)}", 2.0)])
    var = b.node("ReduceMean", [p], axes=[-1], keepdims=1)
    ve = b.node("Add", [var, b.scalar(f"eps_{len(b.nodes)}", 1e-12)])
    s = b.node("Sqrt", [ve])
    n = b.node("Div", [d, s])
    g = b.node("Mul", [n, gamma])
    return b.node("Add", [g, beta])


def encoder_block(b, x, module, decomposed, hidden, heads, head_dim, ffn):
    """One BERT encoder layer reading tensor x; returns the name of its output. module is the
    layer's module path: "" for a lone layer (initializers "attention.self.query.weight_t", node
    scopes "/attention/self/query"), "encoder.layer.{i}" for layer i of a stack (initializers
    "encoder.layer.{i}.attention.self.query.weight_t", scopes
    "/encoder/layer.{i}/attention/self/query"), as a Hugging Face BERT export names them."""
    names, scope = module_prefixes(module)
    q = split_heads(b, dense(b, x, "attention.self.query", hidden, hidden, module), heads, head_dim)
    k = split_heads(b, dense(b, x, "attention.self.key", hidden, hidden, module), heads, head_dim)
    v = split_heads(b, dense(b, x, "attention.self.value", hidden, hidden, module), heads, head_dim)
    b.scope = scope + "/attention/self"
    q = b.node("Transpose", [q], perm=[0, 2, 1, 3])
    kt = b.node("Transpose", [k], perm=[0, 2, 3, 1])
    v = b.node("Transpose", [v], perm=[0, 2, 1, 3])
    scores = b.node("MatMul", [q, kt])
    scores = b.node("Div", [scores, b.scalar(f"{names}sqrt_head_dim", math.sqrt(head_dim))])
    probs = b.node("Softmax", [scores], axis=-1)
    ctx = b.node("MatMul", [probs, v])
    ctx = b.node("Transpose", [ctx], perm=[0, 2, 1, 3])
    d0 = dim_of(b, ctx, 0)
    d1 = dim_of(b, ctx, 1)
    shape = b.node("Concat", [d0, d1, b.ints(f"{names}all_head_size", [hidden])], axis=0)
    ctx = b.node("Reshape", [ctx, shape])
    attn = dense(b, ctx, "attention.output.dense", hidden, hidden, module)
    b.scope = scope + "/attention/output"
    attn = b.node("Add", [attn, x])
    attn = layer_norm(b, attn, "attention.output.LayerNorm", decomposed, hidden, module)
    h = dense(b, attn, "intermediate.dense", hidden, ffn, module)
    b.scope = scope + "/intermediate/intermediate_act_fn"
    h = gelu_erf(b, h)
    h = dense(b, h, "output.dense", ffn, hidden, module)
    b.scope = scope + "/output"
    h = b.node("Add", [h, attn])
    return layer_norm(b, h, "output.LayerNorm", decomposed, hidden, module)


def encoder_layer(name, opset, decomposed, seq_dim, hidden=HIDDEN, heads=HEADS, head_dim=HEAD_DIM,
                  ffn=FFN, seq=SEQ, layers=1, seed=3, input_seed=103, out_path=None):
    """Builds an encoder of `layers` stacked layers with the given sizes (one BERT-tiny-sized
    layer by default) from hidden_states to last_hidden_state. A lone layer is named as a
    layer module exported by itself, a stack as BertEncoder's layers (encoder.layer.{i}); the
    weights are drawn layer after layer from one seeded generator. With out_path, only checks
    the model and writes it there (no inputs/outputs); otherwise saves it as fixture name."""
    b = Builder(seed)
    x = "hidden_states"
    h = x
    for i in range(layers):
        h = encoder_block(b, h, "" if layers == 1 else f"encoder.layer.{i}", decomposed, hidden, heads,
                          head_dim, ffn)
    b.nodes[-1].output[0] = "last_hidden_state"
    m = b.model(name, [vi(x, [1, seq_dim, hidden])], [vi("last_hidden_state", [1, seq_dim, hidden])],
                opset)
    if out_path is not None:
        onnx.checker.check_model(m, full_check=True)
        with open(out_path, "wb") as f:
            f.write(m.SerializeToString())
        return
    save(name, m, {x: rand_input(input_seed, (1, seq, hidden))})


# ---------------------------------------------------------------- one model per pattern

def single(name, shape, opset, body, out_shape=None, seed=10):
    b = Builder(seed)
    body(b, "x")
    b.nodes[-1].output[0] = "y"
    m = b.model(name, [vi("x", shape)], [vi("y", out_shape or shape)], opset)
    save(name, m, {"x": rand_input(seed + 100, shape)})


def patterns():
    def tanh_gelu(b, x):
        x3 = b.node("Pow", [x, b.scalar("three", 3.0)])
        t = b.node("Mul", [x3, b.scalar("c0", 0.044715)])
        s = b.node("Add", [x, t])
        u = b.node("Mul", [s, b.scalar("c1", math.sqrt(2.0 / math.pi))])
        th = b.node("Tanh", [u])
        a = b.node("Add", [th, b.scalar("one", 1.0)])
        m = b.node("Mul", [x, a])
        b.node("Mul", [m, b.scalar("half", 0.5)])

    single("pat_gelu_tanh", [2, 16], 13, tanh_gelu)
    single("pat_gelu_erf_mul", [2, 16], 13, lambda b, x: gelu_erf(b, x, "mul"))
    single("pat_gelu_erf_half_first", [2, 16], 13, lambda b, x: gelu_erf(b, x, "half_first"))
    single("pat_gelu_op", [2, 16], 20, lambda b, x: b.node("Gelu", [x], approximate="none"))
    single("pat_gelu_op_tanh", [2, 16], 20, lambda b, x: b.node("Gelu", [x], approximate="tanh"))

    def gemm_t0(b, x):
        w = b.weight("w", (16, 8), 0.3)  # [in, out]: transB = 0
        c = b.weight("c", (1, 8), 0.1)
        b.node("Gemm", [x, w, c], alpha=0.5, beta=2.0, transB=0)

    single("pat_gemm_transb0", [4, 16], 13, gemm_t0, [4, 8])

    def gemm_nobias(b, x):
        w = b.weight("w", (8, 16), 0.3)
        b.node("Gemm", [x, w], transB=1)

    single("pat_gemm_nobias", [4, 16], 13, gemm_nobias, [4, 8])
    single("pat_mul_scalar", [2, 16], 13,
           lambda b, x: b.node("Mul", [b.scalar("k", 0.125), x]))
    single("pat_div_scalar", [2, 16], 13,
           lambda b, x: b.node("Div", [x, b.init("k", np.array([8.0], dtype=np.float32))]))
    # Sub of two streams (x forks into the relu and the sub's first operand): the sub component.
    single("pat_sub", [2, 16], 13, lambda b, x: b.node("Sub", [x, b.node("Relu", [x])]))

    def ln_op(b, x):
        g = b.weight("g", (16,), 1.0)
        be = b.weight("b", (16,), 0.1)
        b.node("LayerNormalization", [x, g, be], axis=-1, epsilon=1e-5)

    single("pat_layer_norm_op", [2, 3, 16], 17, ln_op)

    def ln_dec18(b, x):
        # Opset 18: ReduceMean takes axes as an input.
        ax = b.ints("axes", [-1])
        mean = b.node("ReduceMean", [x, ax], keepdims=1)
        d = b.node("Sub", [x, mean])
        p = b.node("Pow", [d, b.scalar("two", 2.0)])
        var = b.node("ReduceMean", [p, ax], keepdims=1)
        ve = b.node("Add", [var, b.scalar("eps", 1e-5)])
        s = b.node("Sqrt", [ve])
        b.node("Div", [d, s])

    single("pat_layer_norm_decomposed_noaffine", [2, 3, 16], 18, ln_dec18)

    # Lookalikes that must not be raised.
    def gelu_wrong_const(b, x):
        t = b.node("Div", [x, b.scalar("not_sqrt2", 1.5)])
        e = b.node("Erf", [t])
        a = b.node("Add", [e, b.scalar("one", 1.0)])
        m = b.node("Mul", [x, a])
        b.node("Mul", [m, b.scalar("half", 0.5)])

    single("neg_gelu_wrong_const", [2, 16], 13, gelu_wrong_const)

    def gelu_shared_erf(b, x):
        # The Erf output has a second user, so the chain is not a private GELU.
        t = b.node("Div", [x, b.scalar("sqrt2", math.sqrt(2.0))])
        e = b.node("Erf", [t])
        a = b.node("Add", [e, b.scalar("one", 1.0)])
        m = b.node("Mul", [x, a])
        g = b.node("Mul", [m, b.scalar("half", 0.5)])
        b.node("Add", [g, e])

    single("neg_gelu_shared", [2, 16], 13, gelu_shared_erf)

    def ln_wrong_axis(b, x):
        mean = b.node("ReduceMean", [x], axes=[1], keepdims=1)
        d = b.node("Sub", [x, mean])
        p = b.node("Pow", [d, b.scalar("two", 2.0)])
        var = b.node("ReduceMean", [p], axes=[1], keepdims=1)
        ve = b.node("Add", [var, b.scalar("eps", 1e-5)])
        s = b.node("Sqrt", [ve])
        b.node("Div", [d, s])

    single("neg_layer_norm_axis", [2, 3, 16], 13, ln_wrong_axis)

    def mul_tensor(b, x):
        b.node("Mul", [x, b.weight("k", (16,), 1.0)])

    single("neg_mul_tensor", [2, 16], 13, mul_tensor)

    def bias_2d(b, x):
        # The added constant varies over rows: not a linear bias.
        w = b.weight("w", (16, 8), 0.3)
        y = b.node("MatMul", [x, w])
        b.node("Add", [y, b.weight("c", (4, 8), 0.1)])

    single("neg_linear_bias_2d", [4, 16], 13, bias_2d, [4, 8])


# ---------------------------------------------------------------- the other ops, several outputs

def misc_ops():
    """Constant, Dropout, Identity, Slice (PyTorch-style huge end), Unsqueeze/Squeeze, Flatten,
    Cast, Shape (folded into a scale), Gather, Concat, Transpose without perm, Pow/Sqrt/Sub,
    ReduceMean without keepdims, and three graph outputs."""
    b = Builder(30)
    c = b.rng.standard_normal(8).astype(np.float32)
    cst = b.node("Constant", [], value=numpy_helper.from_array(c, "c"))
    a = b.node("Add", ["x", cst])
    d = b.node("Dropout", [a, b.scalar("ratio", 0.1)])
    i = b.node("Identity", [d])
    s = b.node("Slice", [i, b.ints("starts", [1]), b.ints("ends", [2**63 - 1]), b.ints("axes", [2]),
                         b.ints("steps", [2])])
    u = b.node("Unsqueeze", [s, b.ints("uaxes", [1])])
    q = b.node("Squeeze", [u, b.ints("saxes", [1])])
    f = b.node("Flatten", [q], axis=1)
    f = b.node("Cast", [f], to=TensorProto.FLOAT)
    sh = b.node("Shape", ["x"], start=1)
    n = b.node("Gather", [sh, b.init("last", np.array(1, dtype=np.int64))], axis=0)
    n = b.node("Cast", [n], to=TensorProto.FLOAT)
    f = b.node("Div", [f, n])
    p = b.node("Pow", [f, b.scalar("two", 2.0)])
    r = b.node("Sqrt", [p])
    b.node("Sub", [r, f])
    b.nodes[-1].output[0] = "y0"
    b.node("ReduceMean", [b.node("Tanh", ["x"])], axes=[1], keepdims=0)
    b.nodes[-1].output[0] = "y1"
    g = b.node("Gather", ["x", b.ints("rows", [0, 2])], axis=1)
    cc = b.node("Concat", [g, g], axis=2)
    b.node("Transpose", [cc])
    b.nodes[-1].output[0] = "y2"
    m = b.model("misc_ops", [vi("x", [2, 4, 8])], [vi("y0", [2, 16]), vi("y1", [2, 8]), vi("y2", [16, 2, 2])], 15)
    save("misc_ops", m, {"x": rand_input(130, (2, 4, 8))})


# ---------------------------------------------------------------- bad files

def bad_files():
    with open(os.path.join(OUT, "mlp_gemm_relu.onnx"), "rb") as f:
        good = f.read()
    with open(os.path.join(OUT, "bad_truncated.onnx"), "wb") as f:
        f.write(good[: len(good) // 2])

    def write(name, model):
        with open(os.path.join(OUT, f"{name}.onnx"), "wb") as f:
            f.write(model.SerializeToString())

    b = Builder(20)
    b.node("FooBar", ["x"])
    b.nodes[-1].output[0] = "y"
    write("bad_unknown_op", b.model("bad_unknown_op", [vi("x", [2, 4])], [vi("y", [2, 4])], 13))

    b = Builder(21)
    b.node("MatMul", ["x", "missing_weight"])
    b.nodes[-1].output[0] = "y"
    write("bad_missing_initializer",
          b.model("bad_missing_initializer", [vi("x", [2, 4])], [vi("y", [2, 4])], 13))

    b = Builder(22)
    b.node("Relu", ["x"])
    b.nodes[-1].output[0] = "y"
    write("bad_opset", b.model("bad_opset", [vi("x", [2, 4])], [vi("y", [2, 4])], 9))

    b = Builder(23)
    b.nodes.append(helper.make_node("FusedThing", ["x"], ["y"], name="custom_node",
                                    domain="com.example"))
    m = b.model("bad_domain", [vi("x", [2, 4])], [vi("y", [2, 4])], 13)
    m.opset_import.append(helper.make_opsetid("com.example", 1))
    write("bad_domain", m)


# ---------------------------------------------------------------- MiniLM-sized layer, real statistics

# The --minilm-real layer: MiniLM's sizes at a sentence's length, 3 outlier channels.
MINILM_REAL = dict(MINILM, seq=7)
OUTLIERS = 3
CALIB_INFERENCES, EVAL_INFERENCES = 8, 4


def hidden_states(rng, n, channels, signs, seq, hidden):
    """n inferences [n, seq, hidden] with the statistics of a pretrained encoder's residual
    stream: ordinary channels N(0, 0.4²) (|x| ≲ 1.7), and the outlier channels an order of
    magnitude larger with a fixed sign per channel (as such channels have), reaching ±6."""
    x = rng.normal(0.0, 0.4, (n, seq, hidden))
    mag = np.clip(rng.normal(4.5, 0.8, (n, seq, len(channels))), 2.5, 6.2)
    x[:, :, channels] = signs * mag
    return x.astype(np.float32)


def minilm_real(out_dir):
    """--minilm-real: the MiniLM-sized layer of --minilm at seq 7 (encoder_layer's structure and
    seeded weights), with real-model activation statistics: OUTLIERS hidden channels are about
    10x the others in the input hidden states, and the weights carry them through as pretrained
    layers do: the residual-writing projections (attention.output.dense, output.dense) write
    into them, and the LayerNorm gammas and betas keep the normalised outliers near ±6, so they
    survive each residual add and normalisation. Writes minilm_real.onnx, the calibration inputs
    (CALIB_INFERENCES inferences stacked on the batch axis), separate evaluation inputs
    (EVAL_INFERENCES, another seed) and onnxruntime's outputs for them."""
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "minilm_real.onnx")
    encoder_layer("minilm_real", 17, False, MINILM_REAL["seq"], out_path=path, **MINILM_REAL)
    m = onnx.load(path)
    hidden, seq = MINILM_REAL["hidden"], MINILM_REAL["seq"]
    rng = np.random.default_rng(11)
    channels = np.sort(rng.choice(hidden, OUTLIERS, replace=False))
    signs = rng.choice([-1.0, 1.0], OUTLIERS)
    inits = {t.name: t for t in m.graph.initializer}

    def outlier_channels(name, scale, shift):
        """Scales the tensor's outlier channels (its last axis: gamma, beta, bias, and the output
        columns of a [in, out] weight) and shifts them along each channel's sign."""
        a = numpy_helper.to_array(inits[name]).copy()
        a[..., channels] = a[..., channels] * scale + shift * signs
        inits[name].CopyFrom(numpy_helper.from_array(a.astype(np.float32), name))

    for ln in ["attention.output.LayerNorm", "output.LayerNorm"]:
        # A normalised outlier is already ~8 sigma (it dominates the variance): gamma ~0.7 and a
        # shift along the channel's sign keep it near ±6 while the others stay within ~±4.
        outlier_channels(f"{ln}.weight", 0.7, 0.0)
        outlier_channels(f"{ln}.bias", 1.0, 0.5)
    for dense_name in ["attention.output.dense", "output.dense"]:
        # The outlier channels' weight columns (output channels) ten times as large and a bias
        # along the channel's sign: each residual branch writes into them, and these columns set
        # a per-tensor weight scale that is coarse for every other output channel.
        outlier_channels(f"{dense_name}.weight_t", 10.0, 0.0)
        outlier_channels(f"{dense_name}.bias", 1.0, 1.0)
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, path)

    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    written = [path]
    for split, n, seed in [("calib", CALIB_INFERENCES, 12), ("eval", EVAL_INFERENCES, 13)]:
        x = hidden_states(np.random.default_rng(seed), n, channels, signs, seq, hidden)
        xp = os.path.join(out_dir, f"minilm_real.{split}.hidden_states.npy")
        np.save(xp, x)
        written.append(xp)
        if split == "eval":
            y = np.concatenate([sess.run(None, {"hidden_states": x[i:i + 1]})[0] for i in range(n)])
            yp = os.path.join(out_dir, "minilm_real.eval.out.npy")
            np.save(yp, y.astype(np.float32))
            written.append(yp)
            rest = np.delete(np.arange(hidden), channels)
            print(f"outlier channels {channels.tolist()}: |input| max {np.abs(x[..., channels]).max():.2f} "
                  f"(others {np.abs(x[..., rest]).max():.2f}); |output| max {np.abs(y[..., channels]).max():.2f} "
                  f"(others {np.abs(y[..., rest]).max():.2f})")
    for w in written:
        print(f"wrote {w}, {os.path.getsize(w)} bytes")


def main():
    ap = argparse.ArgumentParser(description="Writes the ONNX test fixtures into tests/fixtures/.")
    ap.add_argument("--minilm", metavar="OUT.onnx",
                    help="write only a MiniLM-sized encoder layer to OUT.onnx and exit")
    ap.add_argument("--layers", type=int, metavar="N",
                    help="with --minilm: stack N encoder layers (default 1, the single layer)")
    ap.add_argument("--seq", type=int, metavar="S",
                    help=f"with --minilm: sequence length (default {MINILM['seq']})")
    ap.add_argument("--mlp-classifier", action="store_true",
                    help="write only the trained mlp_classifier fixture and its labelled data "
                         "(tests/fixtures/mlp_classifier.*) and exit")
    ap.add_argument("--minilm-real", metavar="DIR",
                    help="write only the MiniLM-sized layer with real-model activation statistics "
                         "(outlier channels) and its calibration / evaluation inputs to DIR and exit")
    args = ap.parse_args()
    if (args.layers is not None or args.seq is not None) and not args.minilm:
        ap.error("--layers and --seq apply to --minilm OUT.onnx only")
    if args.layers is not None and args.layers < 1:
        ap.error(f"--layers {args.layers}: an encoder has at least one layer")
    if args.seq is not None and args.seq < 1:
        ap.error(f"--seq {args.seq}: the sequence length is at least 1")
    if args.mlp_classifier:
        os.makedirs(OUT, exist_ok=True)
        mlp_classifier()
        return
    if args.minilm_real:
        minilm_real(args.minilm_real)
        return
    if args.minilm:
        layers = args.layers or 1
        sizes = dict(MINILM, seq=args.seq or MINILM["seq"])
        name = "encoder_layer_minilm" if layers == 1 else f"encoder_{layers}layer_minilm"
        encoder_layer(name, 17, False, sizes["seq"], layers=layers, out_path=args.minilm, **sizes)
        print(f"wrote {args.minilm}, {os.path.getsize(args.minilm)} bytes")
        return
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        if f.endswith(".onnx") or f.endswith(".npy"):
            os.remove(os.path.join(OUT, f))
    mlp_gemm_relu()
    mlp_classifier()
    mlp_matmul_gelu()
    mlp_two_outputs()
    encoder_layer("encoder_layer", 17, False, SEQ)
    encoder_layer("encoder_layer_decomposed_ln", 13, True, "seq")
    encoder_layer("encoder_2layer", 17, False, ENC2["seq"], layers=2, seed=4, input_seed=104, **ENC2)
    patterns()
    misc_ops()
    bad_files()
    total = sum(os.path.getsize(os.path.join(OUT, f)) for f in os.listdir(OUT))
    print(f"wrote {len(os.listdir(OUT))} files, {total} bytes, to {os.path.normpath(OUT)}")


if __name__ == "__main__":
    main()
