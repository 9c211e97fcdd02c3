#!/usr/bin/env bash
# scripts/check_layers.sh on a throwaway tree: protobuf in a pass (a type, an ONNX header) fails the
# check and is named by file:line; the same tree without it passes. Usage: check_layers_test.sh SCRIPT
set -u
script=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src/ir" "$tmp/src/passes" "$tmp/include/qonnx/passes"
printf '#include "qonnx/ir/model.h"\nnamespace qonnx::passes {}  // qonnx::passes must not count\n' > "$tmp/src/passes/good.cc"
printf '#pragma once\nnamespace qonnx::passes {}\n' > "$tmp/include/qonnx/passes/register.h"
printf '// a pass\n#include <onnx/onnx_pb.h>\nint n;\nconst ::onnx::NodeProto* p = nullptr;\n' > "$tmp/src/passes/bad.cc"
fail() {
  echo "FAIL: $1"
  echo "$out"
  exit 1
}
out=$(bash "$script" "ir:;passes:ir" "$tmp" 2>&1)
rc=$?
[ "$rc" -ne 0 ] || fail "protobuf in src/passes/bad.cc was accepted"
grep -q "src/passes/bad.cc:2: #include <onnx/onnx_pb.h>" <<< "$out" || fail "the ONNX header is not named by file:line"
grep -q "src/passes/bad.cc:4: const ::onnx::NodeProto" <<< "$out" || fail "the onnx:: type is not named by file:line"
grep -q "src/passes/good.cc" <<< "$out" && fail "qonnx::passes was taken for onnx::"
grep -q "passes: 3 files checked" <<< "$out" || fail "the count of checked files is missing"
rm "$tmp/src/passes/bad.cc"
out=$(bash "$script" "ir:;passes:ir" "$tmp" 2>&1) || fail "the tree without protobuf in passes failed"
echo "ok: protobuf in passes rejected with file:line, clean tree accepted"
