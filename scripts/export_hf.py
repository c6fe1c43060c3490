#!/usr/bin/env python3
"""Writes the Hugging Face BERT export fixtures of mase-rs into tests/fixtures/hf/.

Needs: pip install torch transformers onnx onnxruntime onnxscript numpy
(made with torch 2.15.0, transformers 5.24.0, onnx 1.23.2, onnxruntime 1.32.0, onnxscript 0.7.2;
tests/fixtures/hf/README.md records the versions of the last run). Kept in a venv outside the
repository, e.g. python3 -m venv /work/venv-export && /work/venv-export/bin/pip install ...

Unlike scripts/make_fixtures.py, which builds graphs node by node, these models come out of the
real exporters: transformers builds a tiny randomly initialised BERT from a BertConfig (no hub
download), torch.onnx.export writes it, and onnxruntime computes the reference outputs, so the
Rust tests see the op patterns, names and shape plumbing that a user's export really has.
Deterministic: torch.manual_seed and numpy seeds fix every weight and input (the same versions
give the same files).

Config: BertConfig(vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
intermediate_size=128, max_position_embeddings=64, type_vocab_size=2, hidden_act="gelu",
attn_implementation="eager"), eval mode. transformers 5.x defaults to "sdpa", which also exports,
but torch's SDPA decomposition adds IsNaN/Where guards around the Softmax; "eager" gives the
classic MatMul / Mul(1/sqrt(d)) / Add(mask) / Softmax / MatMul attention. BertModel is built
with add_pooling_layer=False, so its only output is last_hidden_state. Both models are exported
through thin subclasses whose forward takes exactly (input_ids, attention_mask, token_type_ids)
and returns the one output tensor (the TorchScript exporter cannot call transformers 5's forward
directly, see BertModelExport); a subclass keeps Hugging Face's parameter names (embeddings.*,
encoder.layer.{i}.*, bert.* in the classifier) and node scopes. Seeds: BertModel 0, the
classifier (num_labels=3) 1, the inputs 2024. The classifier has its pooler.dense and classifier
weights redrawn from N(0, 1/hidden) (std 0.125 instead of BERT's 0.02, seeded) so that its logits
are O(1) and differ between sentences. In both, the Linear biases and LayerNorm weights/biases,
which Hugging Face initialises to 0 and 1, are redrawn (seeded, see randomize_affine) so that
they are distinct tensors as in a trained checkpoint (the exporters would otherwise deduplicate
them) and a lost bias shows.

Models (each exported from the same module instance, so the four of a family share weights):
  bert_model_{ts,dynamo}_{static,dynamic}.onnx   BertModel -> last_hidden_state [B, S, 64]
  bert_cls_{ts,dynamo}_{static,dynamic}.onnx     BertForSequenceClassification -> logits [B, 3]
  inputs input_ids, attention_mask, token_type_ids: int64 [B, S]
  ts      torch.onnx.export(..., dynamo=False, opset_version=17)  (TorchScript exporter)
  dynamo  torch.onnx.export(..., dynamo=True, opset_version=17, external_data=False); the
          dynamo exporter builds opset 18 and converts the model down to 17 with onnx's version
          converter (it warns so); the files are opset 17
  static  batch 3 x seq 16 fixed; dynamic: axes 0 and 1 named batch and sequence (dynamic_axes
          for TorchScript, dynamic_shapes with torch.export.Dim("batch"),
          Dim("sequence", max=64) for dynamo); each dynamic model is also checked against torch
          at other shapes
Every file is a single self-contained model (weights embedded, no external data) and passes
onnx.checker.check_model.

Inputs, shared by all models: a padded batch of 3 sentences of lengths 16, 11 and 5 at seq 16:
  batch.input_ids.npy         random ids in 1..999 at real positions, 0 at padding
  batch.attention_mask.npy    1 at real positions, 0 at padding
  batch.token_type_ids.npy    0 for the first ceil(L/2) tokens of a sentence of length L,
                              1 for the rest, 0 at padding
  batch_repad.input_ids.npy   the same, except the padded positions hold other random ids (same
                              mask and token types): outputs at real positions, and the logits,
                              must not change
Outputs: onnxruntime (CPUExecutionProvider) on each model writes <model>.out.<output>.npy for
the batch and <model>.repad.out.<output>.npy for the repad batch (float32); torch's outputs are
checked to agree within 1e-4. The script writes tests/fixtures/hf/README.md with the versions,
opsets and op-type histograms of the run.

Run from anywhere: python3 scripts/export_hf.py
(with the packages in a venv, e.g. /work/venv-export/bin/python scripts/export_hf.py; it takes
about 20 s and rewrites every .onnx/.npy file in tests/fixtures/hf/)

Option --minilm6 OUT_DIR writes, instead of the fixtures, MiniLM-sized 6-layer models (hidden
384, 12 heads, FFN 1536, vocab 1000, max_position 64; about 44 MB each) exported with the
TorchScript exporter at static batch 2 x seq 16 (sentence lengths 16 and 9):
OUT_DIR/minilm6_model_ts_static.onnx (last_hidden_state), OUT_DIR/minilm6_cls_ts_static.onnx
(logits), the inputs OUT_DIR/batch.<input>.npy and batch_repad.input_ids.npy, and
onnxruntime's outputs OUT_DIR/<model>.out.<output>.npy and <model>.repad.out.<output>.npy
(seeds 10, 11, inputs 2025; same init adjustments); tests/fixtures is left alone. For
benchmarks (not committed), e.g.
  /work/venv-export/bin/python scripts/export_hf.py --minilm6 /tmp/minilm6
"""

import argparse
import collections
import os
import sys
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import torch
import transformers
from transformers import BertConfig, BertForSequenceClassification, BertModel

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(REPO, "tests", "fixtures", "hf")

OPSET = 17
INPUTS = ["input_ids", "attention_mask", "token_type_ids"]
TOLERANCE = 1e-4

# The TorchScript exporter is deprecated (it says so on every call) and its tracer warns about
# Python conditions it freezes; the dynamic models are checked at other shapes below instead.
warnings.filterwarnings("ignore", category=DeprecationWarning)
warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
warnings.filterwarnings("ignore", message=".*axis name.*will not be used.*")


def bert_config(hidden, layers, heads, ffn, num_labels=None):
    kwargs = dict(
        vocab_size=1000,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=ffn,
        max_position_embeddings=64,
        type_vocab_size=2,
        hidden_act="gelu",
        attn_implementation="eager",
    )
    if num_labels is not None:
        kwargs["num_labels"] = num_labels
    return BertConfig(**kwargs)


class BertModelExport(BertModel):
    """BertModel whose forward takes exactly the three inputs and returns last_hidden_state.

    The TorchScript exporter fills every defaulted forward parameter positionally (None for
    use_cache too), and transformers 5's @merge_with_config_defaults then also passes use_cache
    as a keyword: "forward() got multiple values for argument 'use_cache'". A subclass keeps the
    module tree, so the parameter names (embeddings.*, encoder.layer.{i}.*) and the node scopes
    (/encoder/layer.{i}/...) are Hugging Face's own, as with a wrapper they would not be.
    """

    def forward(self, input_ids, attention_mask, token_type_ids):
        out = super().forward(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
        return out.last_hidden_state


class BertForSequenceClassificationExport(BertForSequenceClassification):
    """BertForSequenceClassification taking the three inputs and returning logits (see above)."""

    def forward(self, input_ids, attention_mask, token_type_ids):
        out = super().forward(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
        return out.logits


def randomize_affine(model, seed):
    """Seeded non-trivial biases and LayerNorm parameters.

    Hugging Face's init sets every Linear bias to 0 and every LayerNorm to weight 1 / bias 0. The
    exporters then deduplicate those identical tensors (the TorchScript exporter with Identity
    nodes, the dynamo one by sharing one initializer), which no trained checkpoint shows, and a
    lost or misplaced bias would go unnoticed. Linear biases ~ N(0, 0.02^2), LayerNorm weights
    ~ 1 + N(0, 0.1^2), LayerNorm biases ~ N(0, 0.05^2).
    """
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.Linear) and module.bias is not None:
                module.bias.copy_(torch.randn(module.bias.shape, generator=gen) * 0.02)
            elif isinstance(module, torch.nn.LayerNorm):
                module.weight.copy_(1 + torch.randn(module.weight.shape, generator=gen) * 0.1)
                module.bias.copy_(torch.randn(module.bias.shape, generator=gen) * 0.05)


def build_model(config, seed):
    """BertModel without pooler (only output last_hidden_state), eval mode."""
    torch.manual_seed(seed)
    model = BertModelExport(config, add_pooling_layer=False).eval()
    assert model.config._attn_implementation == "eager", model.config._attn_implementation
    randomize_affine(model, seed + 50)
    return model


def build_classifier(config, seed):
    """BertForSequenceClassification, eval mode, pooler and classifier weights ~ N(0, 1/hidden)."""
    torch.manual_seed(seed)
    model = BertForSequenceClassificationExport(config).eval()
    assert model.config._attn_implementation == "eager", model.config._attn_implementation
    randomize_affine(model, seed + 50)
    gen = torch.Generator().manual_seed(seed + 100)
    std = config.hidden_size ** -0.5
    with torch.no_grad():
        for linear in (model.bert.pooler.dense, model.classifier):
            linear.weight.copy_(torch.randn(linear.weight.shape, generator=gen) * std)
    return model


def make_batch(lengths, seq, seed):
    """Padded batch (input_ids, attention_mask, token_type_ids) and the repadded input_ids."""
    rng = np.random.default_rng(seed)
    batch = len(lengths)
    input_ids = np.zeros((batch, seq), dtype=np.int64)
    attention_mask = np.zeros((batch, seq), dtype=np.int64)
    token_type_ids = np.zeros((batch, seq), dtype=np.int64)
    for b, length in enumerate(lengths):
        input_ids[b, :length] = rng.integers(1, 1000, size=length)
        attention_mask[b, :length] = 1
        token_type_ids[b, (length + 1) // 2 : length] = 1
    repad_ids = input_ids.copy()
    pad = attention_mask == 0
    repad_ids[pad] = rng.integers(1, 1000, size=int(pad.sum()))
    feeds = {"input_ids": input_ids, "attention_mask": attention_mask, "token_type_ids": token_type_ids}
    return feeds, repad_ids


def torch_outputs(model, feeds):
    with torch.no_grad():
        out = model(**{k: torch.from_numpy(v) for k, v in feeds.items()})
    return out.numpy().astype(np.float32)


def export(model, path, exporter, dynamic, example, output_name):
    args = tuple(torch.from_numpy(example[k]) for k in INPUTS)
    options = dict(opset_version=OPSET, input_names=INPUTS, output_names=[output_name])
    if exporter == "ts":
        options["dynamo"] = False
        if dynamic:
            axes = {k: {0: "batch", 1: "sequence"} for k in INPUTS}
            axes[output_name] = {0: "batch", 1: "sequence"} if output_name == "last_hidden_state" else {0: "batch"}
            options["dynamic_axes"] = axes
    elif exporter == "dynamo":
        options.update(dynamo=True, external_data=False, verbose=False)
        if dynamic:
            batch = torch.export.Dim("batch")
            sequence = torch.export.Dim("sequence", max=64)
            options["dynamic_shapes"] = {k: {0: batch, 1: sequence} for k in INPUTS}
    else:
        raise ValueError(exporter)
    torch.onnx.export(model, args, path, **options)


def check_onnx(path, output_name):
    """check_model, single file, opset, names; returns the loaded model."""
    directory = os.path.dirname(path)
    stray = [f for f in os.listdir(directory) if f.endswith(".data") or f.endswith(".onnx_data")]
    if stray:
        sys.exit(f"external data files written next to {path}: {stray}")
    model = onnx.load(path, load_external_data=False)
    onnx.checker.check_model(model, full_check=True)
    for init in model.graph.initializer:
        if init.data_location == onnx.TensorProto.EXTERNAL:
            sys.exit(f"{path}: initializer {init.name} uses external data")
    opset = {o.domain: o.version for o in model.opset_import}
    if opset.get("", opset.get("ai.onnx")) != OPSET:
        sys.exit(f"{path}: opset {opset}, expected {OPSET}")
    if [i.name for i in model.graph.input] != INPUTS:
        sys.exit(f"{path}: inputs {[i.name for i in model.graph.input]}")
    if [o.name for o in model.graph.output] != [output_name]:
        sys.exit(f"{path}: outputs {[o.name for o in model.graph.output]}")
    return model


def run_ort(path, feeds, output_name):
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    (out,) = sess.run([output_name], feeds)
    return out.astype(np.float32)


def max_diff(a, b):
    assert a.shape == b.shape, (a.shape, b.shape)
    return float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))))


def dims(value_info):
    return [d.dim_param or d.dim_value for d in value_info.type.tensor_type.shape.dim]


def histogram(model):
    return dict(sorted(collections.Counter(n.op_type for n in model.graph.node).items()))


def real_positions_diff(a, b, mask):
    """Max |a - b| over the real (unpadded) positions of [B, S, H] outputs, or all of [B, C]."""
    if a.ndim == 3:
        keep = mask.astype(bool)
        return max_diff(a[keep], b[keep])
    return max_diff(a, b)


def export_family(prefix, model, output_name, exporters, variants, feeds, repad_feeds, out_dir, extra_shapes):
    """Exports `model` in every exporter x variant, writes ORT outputs, returns per-file info."""
    ref = torch_outputs(model, feeds)
    ref_repad = torch_outputs(model, repad_feeds)
    diff = real_positions_diff(ref, ref_repad, feeds["attention_mask"])
    print(f"{prefix}: torch batch vs repad at real positions: max diff {diff:.3g}")
    if diff > TOLERANCE:
        sys.exit(f"{prefix}: torch outputs depend on padded ids ({diff})")
    infos = []
    for exporter in exporters:
        for variant in variants:
            name = f"{prefix}_{exporter}_{variant}"
            path = os.path.join(out_dir, name + ".onnx")
            print(f"exporting {name} ...", flush=True)
            export(model, path, exporter, variant == "dynamic", feeds, output_name)
            onnx_model = check_onnx(path, output_name)
            out = run_ort(path, feeds, output_name)
            out_repad = run_ort(path, repad_feeds, output_name)
            d = max_diff(ref, out)
            d_repad = max_diff(ref_repad, out_repad)
            d_pad = real_positions_diff(out, out_repad, feeds["attention_mask"])
            print(f"  torch vs onnxruntime: batch {d:.3g}, repad {d_repad:.3g}; ort batch vs repad (real positions) {d_pad:.3g}")
            if max(d, d_repad, d_pad) > TOLERANCE:
                sys.exit(f"{name}: differs from torch by more than {TOLERANCE}")
            if variant == "dynamic":
                for batch, seq, seed in extra_shapes:
                    lengths = [seq] + [max(1, seq - 3 * i) for i in range(1, batch)]
                    other, _ = make_batch(lengths, seq, seed)
                    d_other = max_diff(torch_outputs(model, other), run_ort(path, other, output_name))
                    print(f"  dynamic at batch {batch} x seq {seq}: torch vs onnxruntime {d_other:.3g}")
                    if d_other > TOLERANCE:
                        sys.exit(f"{name}: at batch {batch} x seq {seq} differs from torch by {d_other}")
            np.save(os.path.join(out_dir, f"{name}.out.{output_name}.npy"), out)
            if repad_feeds is not None:
                np.save(os.path.join(out_dir, f"{name}.repad.out.{output_name}.npy"), out_repad)
            infos.append(
                dict(
                    name=name,
                    exporter=exporter,
                    variant=variant,
                    opset=OPSET,
                    ir_version=onnx_model.ir_version,
                    nodes=len(onnx_model.graph.node),
                    initializers=len(onnx_model.graph.initializer),
                    size=os.path.getsize(path),
                    inputs=[(i.name, dims(i)) for i in onnx_model.graph.input],
                    outputs=[(o.name, dims(o)) for o in onnx_model.graph.output],
                    histogram=histogram(onnx_model),
                    diff=max(d, d_repad),
                )
            )
    return infos


def print_histograms(infos):
    for info in infos:
        hist = ", ".join(f"{op} {n}" for op, n in info["histogram"].items())
        print(f"{info['name']} (opset {info['opset']}, {info['nodes']} nodes): {hist}")


def versions():
    return {
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "onnx": onnx.__version__,
        "onnxruntime": ort.__version__,
        "onnxscript": __import__("onnxscript").__version__,
        "numpy": np.__version__,
    }


def write_readme(infos, out_dir):
    v = versions()
    lines = [
        "# Hugging Face BERT export fixtures",
        "",
        "Generated by `scripts/export_hf.py` (its docstring describes every file); do not edit by hand.",
        "Tiny randomly initialised BERTs (hidden 64, 4 heads, FFN 128, 2 layers, vocab 1000,",
        "eager attention) exported by the real PyTorch ONNX exporters, with onnxruntime's outputs.",
        "",
        "- `bert_model_*.onnx`: `BertModel` (no pooler) -> `last_hidden_state`;",
        "  `bert_cls_*.onnx`: `BertForSequenceClassification` (3 labels) -> `logits`.",
        "- `*_ts_*`: TorchScript exporter (`dynamo=False`); `*_dynamo_*`: `dynamo=True`",
        "  (built at opset 18 and converted down to 17 by the exporter).",
        "- `*_static`: batch 3 x seq 16; `*_dynamic`: axes `batch` and `sequence`.",
        "- `batch.{input_ids,attention_mask,token_type_ids}.npy`: int64 [3, 16], sentences of",
        "  lengths 16, 11, 5 right-padded with id 0; `batch_repad.input_ids.npy`: the same with other",
        "  random ids at the padded positions (same mask and token types).",
        "- `<model>.out.<output>.npy` / `<model>.repad.out.<output>.npy`: onnxruntime",
        "  (CPUExecutionProvider) outputs, float32, for the batch / the repad batch; torch agrees",
        f"  within {TOLERANCE:.0e}. The logits and `last_hidden_state` at real positions (mask 1) do not",
        "  depend on the padded ids; `last_hidden_state` at padded positions does (a padded query row",
        "  still attends to the real keys), so compare only real positions there.",
        "- The dynamic models take any batch and any sequence up to 64 (`max_position_embeddings`).",
        "  All models add the attention mask as 0 / float32 min (-3.4028235e38), not -10000.",
        "",
        "Regenerate (needs `pip install torch transformers onnx onnxruntime onnxscript numpy`):",
        "",
        "```",
        "python3 scripts/export_hf.py",
        "```",
        "",
        "Versions of this run: " + ", ".join(f"{k} {val}" for k, val in v.items()) + ".",
        "",
        "## Models",
        "",
        "| file | opset | IR | nodes | initializers | bytes | inputs | output | max torch diff |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for info in infos:
        ins = ", ".join(str(d) for d in info["inputs"][0][1])
        (oname, odims) = info["outputs"][0]
        outs = f"{oname} [{', '.join(str(d) for d in odims)}]"
        lines.append(
            f"| {info['name']}.onnx | {info['opset']} | {info['ir_version']} | {info['nodes']} | "
            f"{info['initializers']} | {info['size']} | 3 x int64 [{ins}] | {outs} | {info['diff']:.1e} |"
        )
    ops = sorted({op for info in infos for op in info["histogram"]})
    short = [info["name"].replace("bert_", "").replace("_static", "_st").replace("_dynamic", "_dyn") for info in infos]
    lines += [
        "",
        "## Op-type histograms",
        "",
        "Count of each `op_type` among the graph's nodes (0 = absent).",
        "",
        "| op | " + " | ".join(short) + " |",
        "| --- | " + " | ".join("---" for _ in infos) + " |",
    ]
    for op in ops:
        lines.append(f"| {op} | " + " | ".join(str(info["histogram"].get(op, 0)) for info in infos) + " |")
    lines.append("| **total** | " + " | ".join(str(info["nodes"]) for info in infos) + " |")
    lines.append("")
    with open(os.path.join(out_dir, "README.md"), "w") as f:
        f.write("\n".join(lines))


def write_fixtures():
    os.makedirs(FIXTURES, exist_ok=True)
    for f in os.listdir(FIXTURES):
        if f.endswith((".onnx", ".npy", ".data", ".onnx_data")):
            os.remove(os.path.join(FIXTURES, f))
    feeds, repad_ids = make_batch([16, 11, 5], 16, seed=2024)
    repad = dict(feeds, input_ids=repad_ids)
    for k, v in feeds.items():
        np.save(os.path.join(FIXTURES, f"batch.{k}.npy"), v)
    np.save(os.path.join(FIXTURES, "batch_repad.input_ids.npy"), repad_ids)

    exporters = ["ts", "dynamo"]
    variants = ["static", "dynamic"]
    extra = [(2, 7, 7), (1, 16, 8), (5, 40, 9)]
    model = build_model(bert_config(64, 2, 4, 128), seed=0)
    infos = export_family("bert_model", model, "last_hidden_state", exporters, variants, feeds, repad, FIXTURES, extra)
    cls = build_classifier(bert_config(64, 2, 4, 128, num_labels=3), seed=1)
    logits = torch_outputs(cls, feeds)
    print("classifier logits (torch):\n", np.array2string(logits, precision=4))
    infos += export_family("bert_cls", cls, "logits", exporters, variants, feeds, repad, FIXTURES, extra)

    # The four exports of a family share weights: they must agree with each other as well.
    for prefix, out_name in (("bert_model", "last_hidden_state"), ("bert_cls", "logits")):
        outs = [np.load(os.path.join(FIXTURES, f"{i['name']}.out.{out_name}.npy")) for i in infos if i["name"].startswith(prefix)]
        print(f"{prefix}: max diff between its exports {max(max_diff(outs[0], o) for o in outs):.3g}")

    print()
    print_histograms(infos)
    write_readme(infos, FIXTURES)
    total = sum(os.path.getsize(os.path.join(FIXTURES, f)) for f in os.listdir(FIXTURES))
    print(f"\nwrote {len(os.listdir(FIXTURES))} files, {total} bytes, into {FIXTURES}")


def write_minilm6(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    feeds, repad_ids = make_batch([16, 9], 16, seed=2025)
    repad = dict(feeds, input_ids=repad_ids)
    for k, v in feeds.items():
        np.save(os.path.join(out_dir, f"batch.{k}.npy"), v)
    np.save(os.path.join(out_dir, "batch_repad.input_ids.npy"), repad_ids)
    model = build_model(bert_config(384, 6, 12, 1536), seed=10)
    infos = export_family("minilm6_model", model, "last_hidden_state", ["ts"], ["static"], feeds, repad, out_dir, [])
    cls = build_classifier(bert_config(384, 6, 12, 1536, num_labels=3), seed=11)
    infos += export_family("minilm6_cls", cls, "logits", ["ts"], ["static"], feeds, repad, out_dir, [])
    print()
    print_histograms(infos)
    for f in sorted(os.listdir(out_dir)):
        print(f"{os.path.getsize(os.path.join(out_dir, f)):>10}  {f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minilm6", metavar="OUT_DIR", help="write the 6-layer MiniLM-sized models into OUT_DIR instead")
    args = parser.parse_args()
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    if args.minilm6:
        write_minilm6(args.minilm6)
    else:
        write_fixtures()


if __name__ == "__main__":
    main()
