#!/usr/bin/env bash
# Installs the Debian packages qonnx-cc builds and tests with, only those missing.
set -euo pipefail
packages=(cmake ninja-build g++ ccache pkg-config libonnx-dev libprotobuf-dev protobuf-compiler
          libcli11-dev libspdlog-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev
          libonnx-testdata clang libclang-rt-14-dev
          chromium
          python3-dev pybind11-dev python3-numpy python3-onnx python3-pytest python3-setuptools python3-pip python3-venv)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing: ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
