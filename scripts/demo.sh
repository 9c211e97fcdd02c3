#!/usr/bin/env bash
# `make run`: shows qonnx-cc on the embedded demo model, or on MODEL=path/to/model.onnx.
set -euo pipefail
bin="$1"
model="${2:-}"
out_dir="$(dirname "$bin")/demo"
mkdir -p "$out_dir"
if [ -z "$model" ]; then
  model="$out_dir/demo_mlp.onnx"
  echo "== qonnx-cc demo-model $model"
  "$bin" demo-model "$model"
fi
echo
echo "== qonnx-cc info $model"
"$bin" info "$model"
echo
echo "== qonnx-cc check $model"
"$bin" check "$model"
echo
echo "== qonnx-cc exec $model --random-inputs --seed 1 --output-dir $out_dir/outputs"
"$bin" exec "$model" --random-inputs --seed 1 --output-dir "$out_dir/outputs"
echo
echo "== qonnx-cc exec $model --random-inputs --seed 1 --expect $out_dir/outputs (same seed, same numbers)"
"$bin" exec "$model" --random-inputs --seed 1 --expect "$out_dir/outputs"
