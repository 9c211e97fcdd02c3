#!/usr/bin/env bash
# Makes `import qonnx_cc` find BUILD/python: a qonnx_cc-build.pth file in the user site-packages of the
# Python the package was built for (CMake's Python_EXECUTABLE). --unlink removes it.
# Usage: scripts/python-develop.sh BUILD_DIR [--unlink]
set -euo pipefail
build=$(cd "$1" && pwd)
python=$(sed -n 's/^Python_EXECUTABLE:FILEPATH=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
[ -n "$python" ] && [ -d "$build/python/qonnx_cc" ] || exit 0  # the package is not built (QONNX_PYTHON=OFF)
site=$("$python" -c 'import site; print(site.getusersitepackages())')
pth="$site/qonnx_cc-build.pth"
if [ "${2:-}" = --unlink ]; then
  rm -f "$pth" && echo "qonnx_cc: removed $pth"
  exit 0
fi
if [ "$(cat "$pth" 2>/dev/null)" != "$build/python" ]; then
  mkdir -p "$site"
  echo "$build/python" > "$pth"
  echo "qonnx_cc: $python imports the package from $build/python (via $pth; make python-unlink removes it)"
fi
