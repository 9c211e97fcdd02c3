#!/usr/bin/env bash
# run_ort.js's timed modes (make bench's onnxruntime column): --repeat prints onnxruntime's own time per run
# (its profiler's model_run events) and the session.run() wall time, which contains it; --batch-size prints
# samples/s from the same run times; neither leaves its profile folder behind, on success or failure.
#
#   run_ort_timing_test.sh QONNX_CC
#
# Prints "N passed, N failed"; exit 0 when all passed, 1 otherwise, 77 (ctest SKIP) without onnxruntime-node.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
qcc="${1:?usage: run_ort_timing_test.sh QONNX_CC}"
run_ort="$repo/tools/ort/run_ort.js"
if ! command -v node >/dev/null || { [ ! -d "$repo/tools/ort/node_modules/onnxruntime-node" ] && ! bash "$repo/scripts/install-ort.sh" >&2; }; then
  echo "SKIP: node or onnxruntime-node unavailable (scripts/install-ort.sh)"; exit 77
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/qonnx_run_ort.XXXXXX")"
trap 'rm -rf "$work"' EXIT
export TMPDIR="$work/tmp"  # run_ort.js's profile folders go here
mkdir -p "$TMPDIR"
passed=0 failed=0
check() {  # check NAME CONDITION-EXIT-CODE DETAIL
  if [ "$2" -eq 0 ]; then passed=$((passed + 1)); echo "ok   $1"; else failed=$((failed + 1)); echo "FAIL $1: $3"; fi
}
no_profiles_left() { ! ls -d "$TMPDIR"/run_ort-* >/dev/null 2>&1; }  # (other tools drop their own files there)

"$qcc" demo-model "$work/demo.onnx" >/dev/null &&
  "$qcc" convert "$work/demo.onnx" --target qdq -o "$work/demo.qdq.onnx" >/dev/null &&
  "$qcc" exec "$work/demo.onnx" --random-inputs --seed 1 --batch 4 --save-inputs "$work/in" >/dev/null ||
  { echo "FAIL: could not make the demo model and its inputs"; echo "0 passed, 1 failed"; exit 1; }

err=$(node "$run_ort" "$work/demo.qdq.onnx" --input-dir "$work/in" --opt-level all --repeat 5 --quiet 2>&1 >/dev/null)
rc=$?
check "--repeat exits 0" $rc "exit $rc: $err"
own=$(echo "$err" | sed -n "s/^steady state: 5 runs, threads 1: min \([0-9.]*\) ms, median \([0-9.]*\) ms (onnxruntime's own run time)$/\1 \2/p")
wall=$(echo "$err" | sed -n 's/^session.run wall time: min \([0-9.]*\) ms, median \([0-9.]*\) ms .*/\1 \2/p')
check "--repeat prints onnxruntime's own time per run" "$([ -n "$own" ]; echo $?)" "$err"
check "--repeat prints the session.run wall time" "$([ -n "$wall" ]; echo $?)" "$err"
# model_run lies inside session.run: its fastest run cannot be slower than the fastest call.
if [ -n "$own" ] && [ -n "$wall" ]; then
  read -r own_min _ <<<"$own"; read -r wall_min _ <<<"$wall"
  check "own time ($own_min ms) <= wall time ($wall_min ms)" "$(awk -v a="$own_min" -v b="$wall_min" 'BEGIN { exit !(a > 0 && a <= b) }'; echo $?)" ""
fi
check "--repeat leaves no profile folder" "$(no_profiles_left; echo $?)" "$(ls -d "$TMPDIR"/run_ort-* 2>/dev/null)"

out=$(node "$run_ort" "$work/demo.qdq.onnx" --input-dir "$work/in" --opt-level all --batch-size 3 2>&1)
rc=$?
check "--batch-size exits 0" $rc "exit $rc: $out"
check "--batch-size prints samples/s from onnxruntime's run times" \
  "$(echo "$out" | grep -q "^4 samples in [0-9.]* s: [0-9.]* samples/s (batch size 3, threads 1; onnxruntime's own run times)$"; echo $?)" "$out"
check "--batch-size leaves no profile folder" "$(no_profiles_left; echo $?)" "$(ls -d "$TMPDIR"/run_ort-* 2>/dev/null)"

# A run that fails (an input file of the wrong type) exits with its code and still removes the folder.
mkdir -p "$work/bad" && printf 'not a tensor' >"$work/bad/input_0.pb"
node "$run_ort" "$work/demo.qdq.onnx" --input-dir "$work/bad" --repeat 3 --quiet >/dev/null 2>&1
rc=$?
check "a failing --repeat run exits 5 (invalid tensor file)" "$([ $rc -eq 5 ]; echo $?)" "exit $rc"
check "a failing --repeat run leaves no profile folder" "$(no_profiles_left; echo $?)" "$(ls -d "$TMPDIR"/run_ort-* 2>/dev/null)"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
