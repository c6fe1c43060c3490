#!/usr/bin/env bash
# Cosine against the float model of the MiniLM-sized layer with real-model activation statistics,
# per-tensor vs per-channel weights at 16, 8, 6 and 4 bits (16-bit activations, calibrated on
# data), from the golden model (the bit-exact model of the RTL).
#   python3 scripts/make_fixtures.py --minilm-real DIR   (needs onnx, onnxruntime, numpy)
#   scripts/per_channel_report.sh DIR
set -euo pipefail
dir=${1:?usage: scripts/per_channel_report.sh DIR (from make_fixtures.py --minilm-real DIR)}
mase=${MASE:-target/release/mase}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%-12s %-8s %s\n' granularity weights cosine
for g in per_tensor per_channel; do
  for w in 16 8 6 4; do
    cfg="$work/$g.$w.toml"
    printf '[passes.auto_precision]\nwidth = 16\nweight_width = %s\nbias_width = 16\nweight_granularity = "%s"\n' "$w" "$g" > "$cfg"
    "$mase" flow "$dir/minilm_real.onnx" --config "$cfg" \
      --calibrate hidden_states="$dir/minilm_real.calib.hidden_states.npy" -o "$work/$g.$w" > /dev/null 2>&1
    cos=$("$mase" sim "$work/$g.$w" --golden --input hidden_states="$dir/minilm_real.eval.hidden_states.npy" --json 2>/dev/null \
      | python3 -c 'import json,sys; print(json.load(sys.stdin)["cosine_vs_float"])')
    printf '%-12s %-8s %s\n' "$g" "$w" "$cos"
  done
done
