#!/usr/bin/env bash
# Checks the layering declared in CMakeLists.txt (qonnx_layer): the table must be acyclic, and every
# #include in src/<layer>/ and include/qonnx/<layer>/ must name the layer itself or one it depends on,
# directly or transitively; passes use no protobuf. Usage: check_layers.sh "support:;ir:support;io:ir,support;..." REPO_ROOT
set -euo pipefail
table=$1
root=$2
declare -A deps
layers=()
IFS=';' read -ra entries <<< "$table"
for e in "${entries[@]}"; do
  name=${e%%:*}
  layers+=("$name")
  deps[$name]=${e#*:}
done

# Transitive closure by depth-first search; a layer met again on the current path is a cycle.
declare -A closure state
visit() {
  local l=$1
  [ "${state[$l]:-}" = done ] && return 0
  if [ "${state[$l]:-}" = active ]; then echo "layer cycle through '$l'"; exit 1; fi
  state[$l]=active
  local all="" d
  IFS=',' read -ra ds <<< "${deps[$l]:-}"
  for d in "${ds[@]}"; do
    [ -z "$d" ] && continue
    [ -n "${deps[$d]+x}" ] || { echo "layer '$l' depends on undeclared layer '$d'"; exit 1; }
    visit "$d"
    all+=" $d ${closure[$d]}"
  done
  closure[$l]=$all
  state[$l]=done
}
for l in "${layers[@]}"; do visit "$l"; done

layer_pattern=$(IFS='|'; echo "${layers[*]}")
violations=0
checked=0
for l in "${layers[@]}"; do
  for dir in "$root/src/$l" "$root/include/qonnx/$l"; do
    [ -d "$dir" ] || continue
    while IFS= read -r hit; do
      file=${hit%%:*}
      rest=${hit#*:}
      line=${rest%%:*}
      [[ $rest =~ \#include\ \"(qonnx/)?($layer_pattern)/ ]] || continue
      target=${BASH_REMATCH[2]}
      checked=$((checked + 1))
      [ "$target" = "$l" ] && continue
      if [[ " ${closure[$l]} " != *" $target "* ]]; then
        echo "upward include: ${file#$root/}:$line: layer '$l' includes layer '$target' (allowed: ${closure[$l]:- none})"
        violations=$((violations + 1))
      fi
    done < <(grep -rnE "#include \"(qonnx/)?($layer_pattern)/" "$dir" --include='*.h' --include='*.cc' || true)
  done
done
echo "layers: ${#layers[@]} declared, $checked includes checked"

# The QONNX op names are spelled in dialect/ only (dialect::kQuantOp, ...); everyone else compares
# dialect::classify(node) or uses the constants, so an alias or a new spelling is one edit.
qonnx_ops='"(Quant|IntQuant|BipolarQuant|Trunc|FloatQuant|MultiThreshold)"'
op_files=0
while IFS= read -r f; do
  op_files=$((op_files + 1))
  while IFS= read -r hit; do
    echo "QONNX op name outside dialect/: ${f#$root/}:${hit%%:*}: ${hit#*:}"
    violations=$((violations + 1))
  done < <(grep -nE "$qonnx_ops" "$f" | grep -vE '^[0-9]+:\s*//' || true)
done < <(find "$root/src" "$root/include/qonnx" $(test -d "$root/tools/qonnx-cc" && echo "$root/tools/qonnx-cc") -name '*.h' -o -name '*.cc' 2>/dev/null | grep -vE "/(src|include/qonnx)/dialect/" | sort)
echo "op names: $op_files files checked"
echo "$((checked + op_files - violations)) passed, $violations failed"

# The kernel map: a header under src/kernels/<family>/ (onnx, qonnx, ngraph, ascend, ...) is private to
# that family and may be included only from src/kernels/<family>/; src/kernels/common/ and
# src/kernels/isa/ from any file under src/kernels/; no library or tool file outside src/kernels/
# includes a src/kernels/ header (they use the public ones in include/qonnx/kernels/). Tests, benchmarks
# and fuzz targets are white-box and exempt.
kmap_checked=0
kmap_violations=0
while IFS= read -r hit; do
  file=${hit%%:*}
  rest=${hit#*:}
  line=${rest%%:*}
  [[ $rest =~ \#include\ \"kernels/([A-Za-z0-9_]+)/([^\"]+)\" ]] || continue
  family=${BASH_REMATCH[1]}
  header="kernels/$family/${BASH_REMATCH[2]}"
  rel=${file#$root/}
  kmap_checked=$((kmap_checked + 1))
  if [[ $rel == src/kernels/* ]]; then
    own=${rel#src/kernels/}
    own=${own%%/*}
    [[ $family == common || $family == isa || $family == "$own" ]] && continue
    why="family '$own' includes family '$family''s private header"
  else
    why="included outside src/kernels/: use a public header in include/qonnx/kernels/"
  fi
  echo "private kernel header: $rel:$line: $header: $why"
  kmap_violations=$((kmap_violations + 1))
done < <(grep -rnE '#include "kernels/' "$root/src" "$root/include" "$root/tools" --include='*.h' --include='*.cc' || true)
echo "kernel map: $kmap_checked includes of src/kernels/ headers checked"
echo "$((kmap_checked - kmap_violations)) passed, $kmap_violations failed"

# Passes work on the IR only: no protobuf type (onnx::...) and no ONNX header in src/passes/ or
# include/qonnx/passes/ (the IR's accessors cover attributes, tensors, value infos and the header).
proto_files=0
proto_violations=0
for dir in "$root/src/passes" "$root/include/qonnx/passes"; do
  [ -d "$dir" ] || continue
  while IFS= read -r file; do
    proto_files=$((proto_files + 1))
    while IFS= read -r hit; do
      echo "protobuf in a pass: ${file#$root/}:${hit%%:*}: ${hit#*:}"
      proto_violations=$((proto_violations + 1))
    done < <(grep -nE '(^|[^A-Za-z0-9_])onnx::|#include *<onnx/' "$file" || true)
  done < <(find "$dir" -type f \( -name '*.h' -o -name '*.cc' \) | sort)
done
echo "passes: $proto_files files checked for protobuf (onnx::, <onnx/...>), $proto_violations uses found"
[ "$violations" -eq 0 ] && [ "$kmap_violations" -eq 0 ] && [ "$proto_violations" -eq 0 ]
