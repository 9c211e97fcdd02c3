#!/usr/bin/env bash
# Shows that check_layers.sh's kernel-map rule fails where it should: runs it on small fake trees.
# Usage: check_layers_selftest.sh PATH/TO/check_layers.sh
set -uo pipefail
check=$1
table="support:;exec:support;kernels:exec,support;passes:kernels,exec,support;analysis:kernels,support"
failures=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A tree that passes: each family includes its own, common/ and isa/ headers; a pass the public ones.
make_tree() {
  rm -rf "$tmp/root"
  mkdir -p "$tmp/root"/src/{kernels/{onnx,qonnx,common,isa},passes,analysis} "$tmp/root/include/qonnx/kernels"
  local r=$tmp/root
  printf '#include "kernels/onnx/onnx_kernels.h"\n#include "kernels/common/gemm_core.h"\n#include "kernels/isa/isa.h"\n' > "$r/src/kernels/onnx/gemm.cc"
  printf '#include "kernels/qonnx/fast_kernels.h"\n#include "kernels/common/attr_check.h"\n' > "$r/src/kernels/qonnx/quant.cc"
  printf '#include "kernels/isa/isa.h"\n' > "$r/src/kernels/common/gemm_core.cc"
  printf '#include "qonnx/kernels/transpose.h"\n' > "$r/src/passes/fold.cc"
  printf '#include "qonnx/quant/params.h"\n' > "$r/src/analysis/validate.cc"
}

expect() {  # expect pass|fail LABEL [grep pattern the output must hold]
  local want=$1 label=$2 pattern=${3:-}
  local out rc
  out=$(bash "$check" "$table" "$tmp/root" 2>&1)
  rc=$?
  if { [ "$want" = pass ] && [ $rc -ne 0 ]; } || { [ "$want" = fail ] && [ $rc -eq 0 ]; }; then
    echo "FAILED: $label: expected $want, exit $rc"; echo "$out"; failures=$((failures + 1)); return
  fi
  if [ -n "$pattern" ] && ! grep -q -- "$pattern" <<< "$out"; then
    echo "FAILED: $label: output lacks '$pattern'"; echo "$out"; failures=$((failures + 1)); return
  fi
  echo "ok: $label"
}

make_tree
expect pass "clean tree" "0 failed"
make_tree
printf '#include "kernels/qonnx/fast_kernels.h"\n' >> "$tmp/root/src/kernels/onnx/gemm.cc"
expect fail "onnx includes a qonnx header" "family 'onnx' includes family 'qonnx'"
make_tree
printf '#include "kernels/onnx/transpose.h"\n' >> "$tmp/root/src/kernels/qonnx/quant.cc"
expect fail "qonnx includes an onnx header" "family 'qonnx' includes family 'onnx'"
make_tree
printf '#include "kernels/common/transpose.h"\n' >> "$tmp/root/src/passes/fold.cc"
expect fail "a pass includes a common/ header" "included outside src/kernels/"
make_tree
printf '#include "kernels/onnx/gemm_core.h"\n' > "$tmp/root/include/qonnx/kernels/public.h"
expect fail "a public header includes a family header" "include/qonnx/kernels/public.h"
make_tree
printf '#include "kernels/qonnx/fast_kernels.h"\n' >> "$tmp/root/src/analysis/validate.cc"
expect fail "an analysis includes a family header" "src/analysis/validate.cc"
make_tree
printf 'bool q(const Node& n) { return n.op_type() == "BipolarQuant"; }\n' >> "$tmp/root/src/passes/fold.cc"
expect fail "a QONNX op name compared outside dialect/" "QONNX op name outside dialect/: src/passes/fold.cc"
make_tree
mkdir -p "$tmp/root/src/dialect"
printf 'bool q(const Node& n) { return n.op_type() == "BipolarQuant"; }\n' > "$tmp/root/src/dialect/dialect.cc"
expect pass "a QONNX op name inside dialect/" "0 failed"

echo "$failures failed"
[ "$failures" -eq 0 ]
