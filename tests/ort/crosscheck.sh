#!/usr/bin/env bash
# Independent-runtime cross-check: runs every case of the case list(s) with qonnx-cc and with onnxruntime
# (tools/ort/run_ort.js, npm package onnxruntime-node) on the same inputs and compares the outputs.
# The case-list format is described in tests/ort/README.md and at the top of tests/ort/cases.txt.
#
#   crosscheck.sh --qonnx-cc BIN [--cases FILE]... [--work DIR] [--filter SUBSTR] [--jobs N]
#                 [--atol A] [--rtol R] [--keep] [--verbose]
#
# Environment: QONNX_SHARED_MODELS (../shared/qonnx_models), QONNX_ONNX_TESTDATA
# (/usr/share/libonnx-testdata/data). Exit 0 when nothing failed, 1 on any failure, 2 on usage errors,
# 77 (ctest SKIP_RETURN_CODE) when node/onnxruntime-node cannot be installed.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
run_ort="$repo/tools/ort/run_ort.js"
qcc=""
case_files=()
work=""
filter=""
jobs=1
def_atol=1e-5
def_rtol=1e-4
keep=0
verbose=0
export QONNX_SHARED_MODELS="${QONNX_SHARED_MODELS:-$repo/../shared/qonnx_models}"
export QONNX_ONNX_TESTDATA="${QONNX_ONNX_TESTDATA:-/usr/share/libonnx-testdata/data}"

usage() { sed -n '2,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --qonnx-cc) qcc="${2:-}"; shift 2 ;;
    --cases) case_files+=("${2:-}"); shift 2 ;;
    --work) work="${2:-}"; shift 2 ;;
    --filter) filter="${2:-}"; shift 2 ;;
    --jobs|-j) jobs="${2:-}"; shift 2 ;;
    --atol) def_atol="${2:-}"; shift 2 ;;
    --rtol) def_rtol="${2:-}"; shift 2 ;;
    --keep) keep=1; shift ;;
    --verbose|-v) verbose=1; shift ;;
    -h|--help) usage ;;
    *) echo "crosscheck: unknown argument '$1'" >&2; usage ;;
  esac
done
[ -n "$qcc" ] || { echo "crosscheck: --qonnx-cc BIN is required" >&2; usage; }
[ -x "$qcc" ] || { echo "crosscheck: qonnx-cc binary '$qcc' is not executable" >&2; exit 2; }
qcc="$(cd "$(dirname "$qcc")" && pwd)/$(basename "$qcc")"
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "crosscheck: --jobs needs a positive integer" >&2; exit 2; }
[ ${#case_files[@]} -gt 0 ] || case_files=("$here/cases.txt")
for f in "${case_files[@]}"; do [ -r "$f" ] || { echo "crosscheck: cannot read case list '$f'" >&2; exit 2; }; done

# onnxruntime-node: install it if it is missing; skip only when that is impossible.
ort_loads() { command -v node >/dev/null 2>&1 && (cd "$repo/tools/ort" && node -e 'require("onnxruntime-node")') >/dev/null 2>&1; }
if ! ort_loads; then
  echo "crosscheck: onnxruntime-node is not installed; running scripts/install-ort.sh" >&2
  bash "$repo/scripts/install-ort.sh" </dev/null >&2 || true
  if ! ort_loads; then
    echo "SKIP: node or onnxruntime-node cannot be installed on this machine (scripts/install-ort.sh failed);" \
         "the onnxruntime cross-check did not run" >&2
    exit 77
  fi
fi

if [ -z "$work" ]; then
  work="$(mktemp -d "${TMPDIR:-/tmp}/qonnx_ort_crosscheck.XXXXXX")"
  [ "$keep" -eq 1 ] || trap 'rm -rf "$work"' EXIT
else
  rm -rf "$work" && mkdir -p "$work"
fi
echo "crosscheck: $(node --version), onnxruntime-node $(cd "$repo/tools/ort" && node -p 'require("onnxruntime-node/package.json").version'), $("$qcc" --version 2>&1 | head -1)"

# Expands ${QONNX_SHARED_MODELS}, ${QONNX_ONNX_TESTDATA} and ${REPO} (nothing else: no eval).
expand() {
  local s="$1"
  s="${s//\$\{QONNX_SHARED_MODELS\}/$QONNX_SHARED_MODELS}"
  s="${s//\$\{QONNX_ONNX_TESTDATA\}/$QONNX_ONNX_TESTDATA}"
  s="${s//\$\{REPO\}/$repo}"
  printf '%s' "$s"
}

# run_case DIR LINE: runs one case and writes DIR/result: "STATUS<TAB>NAME<TAB>DETAIL" with STATUS one of
# PASS, FAIL, SKIP (the model or its data is absent, or ort=cannot-run and onnxruntime rejects the model)
# and XFAIL (xfail=TAG and the outputs differ).
run_case() {
  local d="$1" line="$2"
  local -a tok conv=()
  read -r -a tok <<<"$line"
  local name="$line" model_spec="${tok[0]}" inputs_spec="${tok[1]:-}" atol="$def_atol" rtol="$def_rtol"
  local opt="disabled" ort_cannot_run=0 xfail="" mismatch=0 ref_dataset=0 i
  result() { printf '%s\t%s\t%s\n' "$1" "$name" "$2" >"$d/result"; }
  for ((i = 2; i < ${#tok[@]}; ++i)); do
    case "${tok[i]}" in
      --) conv=("${tok[@]:i+1}"); break ;;
      atol=*) atol="${tok[i]#atol=}" ;;
      rtol=*) rtol="${tok[i]#rtol=}" ;;
      opt=*) opt="${tok[i]#opt=}" ;;
      mismatch=*) mismatch="${tok[i]#mismatch=}" ;;
      ort=cannot-run) ort_cannot_run=1 ;;
      ref=dataset) ref_dataset=1 ;;
      xfail=*) xfail="${tok[i]#xfail=}" ;;
      *) result FAIL "case list: unknown option '${tok[i]}'"; return ;;
    esac
  done
  [ -n "$inputs_spec" ] || { result FAIL "case list: no inputs given (dataset, dataset:N, random:SEED or dir:PATH)"; return; }

  # The model.
  local model model_dir
  case "$model_spec" in
    onnx-node:*)
      model_dir="$QONNX_ONNX_TESTDATA/node/${model_spec#onnx-node:}"
      model="$model_dir/model.onnx"
      [ -f "$model" ] || { result SKIP "$model is absent (Debian package libonnx-testdata)"; return; } ;;
    @demo)
      model="$d/demo.onnx"; model_dir="$d"
      "$qcc" demo-model "$model" -q >"$d/demo.log" 2>&1 || { result FAIL "qonnx-cc demo-model failed: $(tail -1 "$d/demo.log")"; return; } ;;
    *)
      model="$(expand "$model_spec")"
      [[ "$model" = /* ]] || model="$repo/$model"
      model_dir="$(dirname "$model")"
      if [ ! -f "$model" ]; then
        if [[ "$model_spec" == *'${QONNX_SHARED_MODELS}'* ]]; then
          result SKIP "$model is absent (QONNX_SHARED_MODELS=$QONNX_SHARED_MODELS)"
        else
          result FAIL "model $model does not exist"
        fi
        return
      fi ;;
  esac

  # The inputs, as qonnx-cc exec arguments.
  local -a in_args
  case "$inputs_spec" in
    dataset) in_args=(--input-dir "$model_dir/test_data_set_0") ;;
    dataset:*) in_args=(--input-dir "$model_dir/test_data_set_${inputs_spec#dataset:}") ;;
    random:*) in_args=(--random-inputs --seed "${inputs_spec#random:}") ;;
    dir:*) in_args=(--input-dir "$(expand "${inputs_spec#dir:}")") ;;
    *) result FAIL "case list: bad inputs '$inputs_spec' (dataset, dataset:N, random:SEED or dir:PATH)"; return ;;
  esac

  # ref=dataset: the data set's own outputs are the reference (ops qonnx-cc has no kernel for).
  if [ "$ref_dataset" -eq 1 ]; then
    [[ "$inputs_spec" == dataset* ]] || { result FAIL "case list: ref=dataset needs dataset inputs"; return; }
    mkdir -p "$d/inputs" "$d/qonnx"
    cp "${in_args[1]}"/input_*.pb "$d/inputs/" && cp "${in_args[1]}"/output_*.pb "$d/qonnx/" ||
      { result FAIL "cannot copy the data set ${in_args[1]}"; return; }
  # qonnx-cc on the original model: the reference outputs, and the exact inputs it fed.
  elif ! "$qcc" exec "$model" "${in_args[@]}" --save-inputs "$d/inputs" --output-dir "$d/qonnx" -q >"$d/qonnx.log" 2>&1; then
    result FAIL "qonnx-cc exec failed: $(grep -m1 'error' "$d/qonnx.log" || tail -1 "$d/qonnx.log")"; return
  fi

  # The model onnxruntime runs: the original, or its conversion.
  local ort_model="$model"
  if [ ${#conv[@]} -gt 0 ]; then
    ort_model="$d/converted.onnx"
    if ! "$qcc" convert "$model" -o "$ort_model" "${conv[@]}" -q >"$d/convert.log" 2>&1; then
      result FAIL "qonnx-cc convert ${conv[*]} failed: $(grep -m1 'error' "$d/convert.log" || tail -1 "$d/convert.log")"; return
    fi
  fi

  node "$run_ort" "$ort_model" --input-dir "$d/inputs" --output-dir "$d/ort" --expect "$d/qonnx" \
    --atol "$atol" --rtol "$rtol" --max-mismatch "$mismatch" --opt-level "$opt" --threads 1 -q >"$d/ort.log" 2>&1
  local rc=$?
  local summary
  summary="$(grep '^expect output' "$d/ort.log" | sed -E "s/^expect output ([0-9]+) '([^']*)': (match|MISMATCH) \(/out \1 '\2' \3 (/" | paste -sd';' -)"
  local err
  err="$(grep -m1 '^run_ort: error' "$d/ort.log" | sed 's/^run_ort: error: //' | sed "s|$d/||g" | cut -c1-400)"
  if [ -n "$xfail" ]; then
    case $rc in
      7) result XFAIL "known difference '$xfail': $summary" ;;
      0) result FAIL "xfail=$xfail but the outputs now agree (remove the xfail): $summary" ;;
      *) result FAIL "run_ort exit $rc: $err" ;;
    esac
    return
  fi
  case $rc in
    0) result PASS "$summary" ;;
    6) if [ "$ort_cannot_run" -eq 1 ]; then result SKIP "onnxruntime cannot run it (expected): $err"
       else result FAIL "onnxruntime cannot load the model: $err"; fi ;;
    7) result FAIL "outputs differ: $summary" ;;
    *) result FAIL "run_ort exit $rc: $err" ;;
  esac
}

# Collect the cases: one per non-blank, non-comment line.
cases=()
for f in "${case_files[@]}"; do
  while IFS= read -r raw || [ -n "$raw" ]; do
    line="${raw%%#*}"
    line="$(echo "$line" | tr -s ' \t' ' ' | sed 's/^ //; s/ $//')"
    [ -n "$line" ] || continue
    [ -z "$filter" ] || [[ "$line" == *"$filter"* ]] || continue
    cases+=("$line")
  done <"$f"
done
[ ${#cases[@]} -gt 0 ] || { echo "crosscheck: no cases${filter:+ match '$filter'}" >&2; exit 2; }

running=0
for i in "${!cases[@]}"; do
  d="$work/$(printf '%04d' "$i")"
  mkdir -p "$d"
  run_case "$d" "${cases[i]}" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
done
wait

pass=0 fail=0 skip=0 xfail=0
for i in "${!cases[@]}"; do
  d="$work/$(printf '%04d' "$i")"
  if [ -f "$d/result" ]; then IFS=$'\t' read -r status name detail <"$d/result"
  else status=FAIL name="${cases[i]}" detail="the case did not finish"; fi
  case "$status" in
    PASS) pass=$((pass + 1)) ;;
    FAIL) fail=$((fail + 1)) ;;
    SKIP) skip=$((skip + 1)) ;;
    XFAIL) xfail=$((xfail + 1)) ;;
  esac
  printf '%-5s %s: %s\n' "$status" "$name" "$detail"
  if [ "$status" = FAIL ] && [ "$verbose" -eq 1 ]; then
    for log in qonnx.log convert.log ort.log; do [ -f "$d/$log" ] && sed "s/^/      $log: /" "$d/$log"; done
  fi
done
echo
echo "crosscheck: ${#cases[@]} cases: $skip skipped, $xfail known differences (xfail)"
[ "$keep" -eq 1 ] && echo "crosscheck: work files kept in $work"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
