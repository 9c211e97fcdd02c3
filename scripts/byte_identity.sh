#!/usr/bin/env bash
# Runs every model under MODELS_DIR through `exec` (seeded random inputs, 1 and 2 threads) and every
# `convert --target` (and qdq at --target-opset 21), writing the results under OUT_DIR. Two OUT_DIRs
# made by two binaries are then compared byte for byte with `diff -r`:
#   scripts/byte_identity.sh OLD_BIN /tmp/old ../shared/qonnx_models
#   scripts/byte_identity.sh NEW_BIN /tmp/new ../shared/qonnx_models && diff -r /tmp/old /tmp/new
# A command's exit code and stdout are recorded too, so a changed failure shows as a difference.
set -uo pipefail
bin=$1
out=$2
models=${3:-../shared/qonnx_models}
rm -rf "$out"
mkdir -p "$out"
find "$models" -name '*.onnx' | sort | while read -r model; do
  id=$(echo "${model#$models/}" | tr '/' '_')
  dir="$out/$id"
  mkdir -p "$dir"
  for threads in 1 2; do
    "$bin" exec "$model" --random-inputs --seed 3 --threads "$threads" --output-dir "$dir/exec_t$threads" \
      >"$dir/exec_t$threads.stdout" 2>/dev/null
    echo $? >"$dir/exec_t$threads.rc"
  done
  for target in qdq ngraph ascend fold qonnx qdq@21 fold@21; do
    name=${target%@*}
    opset=""
    [[ $target == *@* ]] && opset=${target#*@}
    args=(--target "$name")
    [ -n "$opset" ] && args+=(--target-opset "$opset")
    "$bin" convert "$model" "${args[@]}" -o "$dir/$name${opset:+_$opset}.onnx" --report "$dir/$target.report.json" \
      >"$dir/$target.stdout" 2>/dev/null
    echo $? >"$dir/$target.rc"
    # The report's timings differ run to run.
    [ -f "$dir/$target.report.json" ] && sed -i -E 's/"seconds": ?[0-9.e+-]+/"seconds": 0/g' "$dir/$target.report.json"
  done
done
echo "wrote $(find "$out" -type f | wc -l) files under $out"
