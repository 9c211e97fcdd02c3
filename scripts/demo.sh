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
stem="${model%.onnx}"
echo
echo "== qonnx-cc convert $model --target fold --check 8 (Quant on weights precomputed)"
"$bin" convert "$model" --target fold --check 8 -o "$stem.fold.onnx" --stats
echo
echo "== qonnx-cc convert $model --target qdq --check 8 (QuantizeLinear/Clip/DequantizeLinear, exact)"
"$bin" convert "$model" --target qdq --check 8 -o "$stem.qdq.onnx" --report "$stem.qdq.report.json"
"$bin" info "$stem.qdq.onnx" | sed -n '/^nodes:/,/^initializers:/p'
echo
echo "== what happened to each quantizer ($stem.qdq.report.json)"
sed -n 's/.*"quantizers": \[\(.*\)\], "diagnostics".*/\1/p' "$stem.qdq.report.json" | sed 's/}, {/}\n{/g'
