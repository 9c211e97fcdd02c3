#!/usr/bin/env bash
# Installs onnxruntime-node (pinned in tools/ort/package-lock.json) into tools/ort/node_modules for the
# independent-runtime cross-check (tests/ort/crosscheck.sh). Installs Debian's nodejs and npm first when
# node is missing. Does nothing when the pinned version is already installed and loads.
# The npm tarball ships the prebuilt CPU binaries, so no install script runs (--ignore-scripts).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="$root/tools/ort"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  missing=()
  for p in nodejs npm; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "installing: ${missing[*]}" >&2
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
  for c in node npm; do
    command -v "$c" >/dev/null 2>&1 || { echo "install-ort.sh: '$c' is not on PATH (Debian packages nodejs, npm)" >&2; exit 1; }
  done
fi

# Complete = the version package.json pins is installed, its native binding loads, and the lock file has
# not changed since the last install (stamp).
stamp="$dir/node_modules/.qonnx-ort-stamp"
want_stamp="$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)"
installed() {
  [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want_stamp" ] &&
    (cd "$dir" && node -e '
      const want = require("./package.json").dependencies["onnxruntime-node"];
      if (require("onnxruntime-node/package.json").version !== want) process.exit(1);
      require("onnxruntime-node");' >/dev/null 2>&1)
}
installed && exit 0

echo "installing onnxruntime-node into $dir/node_modules (npm ci --ignore-scripts)" >&2
(cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
echo "$want_stamp" > "$stamp"
if ! installed; then
  echo "install-ort.sh: onnxruntime-node was installed but does not load:" >&2
  (cd "$dir" && node -e 'require("onnxruntime-node")') >&2 || true
  rm -f "$stamp"
  exit 1
fi
