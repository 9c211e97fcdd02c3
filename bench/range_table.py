#!/usr/bin/env python3
"""The accumulator table of docs/range.md: `qonnx-cc range MODEL --json --per-channel` on every shared
model that loads, without input ranges (float inputs: any value).

Per model with an accumulator: the layers (MatMul / Gemm / Conv over integer-valued inputs), the signed
accumulator width of each, the widest, the total accumulator bits with one accumulator per output channel
(the layer's width times its output channels, and the same with each channel's own width), and the wall
time of the whole command (best of 3). Models without an accumulator, and those the command refuses, are
listed after the table.

Usage: bench/range_table.py QONNX_CC MODELS_DIR  (prints Markdown)
"""
import json
import os
import subprocess
import sys
import time


def signed_bits(lo, hi):
    bits = 1
    while not (-(1 << (bits - 1)) <= lo and hi <= (1 << (bits - 1)) - 1):
        bits += 1
    return bits


def run(qc, path):
    best, out = None, None
    for _ in range(3):
        t0 = time.perf_counter()
        p = subprocess.run([qc, "range", path, "--json", "--per-channel"], capture_output=True, text=True)
        dt = time.perf_counter() - t0
        if p.returncode != 0:
            return None, p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "exit %d" % p.returncode
        best = dt if best is None else min(best, dt)
        out = p.stdout
    return (json.loads(out), best), None


def main():
    qc, models = sys.argv[1], sys.argv[2]
    paths = sorted(
        os.path.join(d, f) for d, _, files in os.walk(models) for f in files if f.endswith(".onnx"))
    rows, without, refused = [], [], []
    for path in paths:
        name = os.path.relpath(path, models)
        result, err = run(qc, path)
        if result is None:
            refused.append((name, err))
            continue
        report, secs = result
        accs = report["@qonnx-cc"]["accumulators"]
        if not accs:
            without.append(name)
            continue
        widths = [a["signed_bits"] for a in accs]
        total = sum(a["signed_bits"] * len(a["channels"]) for a in accs)
        per_channel = sum(signed_bits(lo, hi) for a in accs for lo, hi in a["channels"])
        rows.append((name, len(accs), ", ".join(map(str, widths)), max(widths), total, per_channel, secs * 1000))
    print("| model | layers | signed accumulator bits per layer | widest | total bits | total bits, per-channel widths | ms |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %s | %d | %s | %d | %d | %d | %.0f |" % r)
    if without:
        print("\nNo accumulator (float inputs to every layer, or no MatMul / Gemm / Conv): " + ", ".join(without) + ".")
    for name, err in refused:
        print("\nNot analysed: %s (%s)" % (name, err))


if __name__ == "__main__":
    main()
