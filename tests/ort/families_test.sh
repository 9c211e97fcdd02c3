#!/usr/bin/env bash
# The layer-family models of make bench section 7 (bench/gen_families.py, reduced sizes: --small) are valid
# and mean the same to qonnx-cc and onnxruntime: each passes `qonnx-cc check`, and crosscheck.sh runs its
# `convert --target qdq` output in onnxruntime against `qonnx-cc exec` of the original, at batch 1 (random
# inputs, seed 1) and batch 3 (the symbolic batch dimension N).
#
# Tolerance: every element within one step of the output's activation quantizer (scale 0.0231, atol
# 0.0232): the two runtimes may divide in different orders (AveragePool), so a value at a rounding tie can
# round to the neighbouring code in one of them. At these sizes every family but pools agrees exactly.
#
#   families_test.sh QONNX_CC [PYTHON]    (PYTHON: one with the onnx and numpy packages; default python3)
#
# Exit 0 when everything passed, 1 on any failure, 77 (ctest SKIP) without onnx/numpy or onnxruntime-node.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
qcc="${1:?usage: families_test.sh QONNX_CC [PYTHON]}"
py="${2:-python3}"
if ! "$py" -c 'import onnx, numpy' 2>/dev/null; then
  echo "SKIP: $py cannot import onnx and numpy (Debian python3-onnx, python3-numpy)" >&2
  exit 77
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/qonnx_families.XXXXXX")"
trap 'rm -rf "$work"' EXIT
if ! "$py" "$repo/bench/gen_families.py" "$work/models" --small >"$work/families.tsv"; then
  echo "FAIL: bench/gen_families.py --small failed"; exit 1
fi

failed=0 checked=0
: >"$work/cases.txt"
while IFS=$'\t' read -r name model _; do
  checked=$((checked + 1))
  if ! "$qcc" check "$model" >"$work/$name.check.log" 2>&1; then
    echo "FAIL $name: qonnx-cc check: $(tail -1 "$work/$name.check.log")"; failed=$((failed + 1)); continue
  fi
  # Batch 3: the same model with its batch dimension at 3, the inputs saved for both runtimes.
  if ! "$qcc" exec "$model" --random-inputs --seed 2 --batch 3 --save-inputs "$work/$name.batch3" >"$work/$name.exec.log" 2>&1; then
    echo "FAIL $name: qonnx-cc exec --batch 3: $(tail -1 "$work/$name.exec.log")"; failed=$((failed + 1)); continue
  fi
  for inputs in random:1 "dir:$work/$name.batch3"; do
    echo "$model $inputs atol=0.0232 -- --target qdq" >>"$work/cases.txt"
  done
done <"$work/families.tsv"
echo "families_test: $checked families from bench/gen_families.py --small, $failed failed qonnx-cc check or exec"
[ "$checked" -gt 0 ] || { echo "FAIL: the generator listed no family"; exit 1; }

bash "$here/crosscheck.sh" --qonnx-cc "$qcc" --cases "$work/cases.txt" --jobs 2
rc=$?
[ "$rc" -eq 77 ] && exit 77
[ "$rc" -eq 0 ] && [ "$failed" -eq 0 ]
