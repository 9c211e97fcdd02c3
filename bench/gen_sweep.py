#!/usr/bin/env python3
"""Random single-layer QONNX models over the layer classes of issue 26 (make bench, BENCH_ONLY=sweep).

The families of gen_families.py are fixed shapes; a sweep draws its shapes at random so that a speed claim is
checked on layers nobody tuned for: Conv1d/2d/3d (kernel 1-9, stride 1-2, dilation 1-2, grouped and
depthwise, odd and non-square sizes), ConvTranspose, MatMul on weights (rank 2-3), Gemm, and activation x
activation MatMul (attention-like, both operands behind Quants). Weights are 2- to 8-bit, per channel or per
tensor; the input is a signed or unsigned 8-bit activation Quant; the output is float or a ReLU + unsigned
Quant. Each case has its own batch size (1 to 16) and a multiply-add count between 2 M and 1.2 G per
inference, so a case runs in about 0.1-50 ms.

Usage: gen_sweep.py OUT_DIR [--seed S] [--count N] [--list]
  Writes OUT_DIR/NAME.onnx for each case and prints one line per case:
  NAME <TAB> FILE <TAB> WEIGHT_BITS (0: no weights) <TAB> BATCH <TAB> DESCRIPTION. The same seed gives the same cases.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence

import numpy as np
import onnx

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from gen_families import Builder  # noqa: E402

MIN_MACS = 2e6
MAX_MACS = 1.2e9


@dataclass
class Case:
    name: str
    model: onnx.ModelProto
    weight_bits: int
    batch: int
    description: str


def pick(rng: np.random.Generator, values: Sequence[int]) -> int:
    return int(values[rng.integers(len(values))])


def channels(rng: np.random.Generator, low: int = 1, high: int = 512) -> int:
    """A channel count, log-uniform, often not a multiple of 8."""
    return int(np.clip(round(np.exp(rng.uniform(np.log(low), np.log(high)))), low, high))


def weight(b: Builder, rng: np.random.Generator, shape: Sequence[int], fan_in: int, channel_axis: int) -> str:
    """He-normal weights behind a narrow-range signed Quant, per output channel or (1 in 4) per tensor."""
    if rng.random() < 0.75:
        return b.quant_weight(shape, fan_in=fan_in, channel_axis=channel_axis)
    w = (b.rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)
    scale = np.array(np.abs(w).max() / (2 ** (b.weight_bits - 1) - 1), np.float32)
    return b.quant(b.const("weight", w), scale, b.weight_bits, signed=True, narrow=True)


def finish(b: Builder, rng: np.random.Generator, y: str, rank: int) -> None:
    """Float output, or ReLU + unsigned 8-bit Quant (the next layer's input)."""
    b.output(b.relu_quant(y) if rng.random() < 0.6 else y, rank=rank)


def act_input(b: Builder, rng: np.random.Generator, shape: Sequence[int]) -> str:
    signed = bool(rng.random() < 0.5)
    return b.act_quant(b.input(shape), signed=signed, scale=0.0157 if signed else 0.0079)


def conv_case(b: Builder, rng: np.random.Generator, spatial: int) -> tuple:
    """Conv over `spatial` dims; returns (description, multiply-adds per sample)."""
    kernel = pick(rng, [1, 3, 3, 5, 7, 9] if spatial == 1 else ([1, 3, 3, 5, 7] if spatial == 2 else [1, 3, 3]))
    stride = pick(rng, [1, 1, 2])
    dilation = pick(rng, [1, 1, 2]) if kernel > 1 else 1
    sizes = {1: (16, 4096), 2: (5, 112), 3: (4, 32)}[spatial]
    shape = [int(rng.integers(*sizes)) for _ in range(spatial)]
    if spatial == 2 and rng.random() < 0.6:
        shape[1] = shape[0]
    cin, cout = channels(rng), channels(rng)
    style = rng.random()
    group = 1
    if style < 0.2:  # depthwise
        cin = cout = channels(rng, 8, 512)
        group = cin
    elif style < 0.35:  # grouped
        group = pick(rng, [2, 4, 8])
        cin = max(1, cin // group) * group
        cout = max(1, cout // group) * group
    span = dilation * (kernel - 1) + 1
    shape = [max(s, span) for s in shape]
    pad = pick(rng, [0, dilation * (kernel - 1) // 2])
    x = act_input(b, rng, [cin, *shape])
    w = weight(b, rng, [cout, cin // group] + [kernel] * spatial, fan_in=cin // group * kernel ** spatial,
               channel_axis=0)
    inputs = [x, w] + ([b.bias(cout)] if rng.random() < 0.8 else [])
    y = b.node("Conv", inputs, kernel_shape=[kernel] * spatial, strides=[stride] * spatial,
               dilations=[dilation] * spatial, pads=[pad] * (2 * spatial), group=group)
    finish(b, rng, y, spatial + 2)
    out = [(s + 2 * pad - span) // stride + 1 for s in shape]
    macs = cout * (cin // group) * kernel ** spatial * int(np.prod(out))
    kind = "depthwise" if group == cin == cout and group > 1 else (f"grouped {group}" if group > 1 else "")
    desc = (f"Conv{spatial}d {kind} {cin}->{cout} k{kernel} s{stride} d{dilation} p{pad} "
            f"at {'x'.join(map(str, shape))}").replace("  ", " ")
    return desc, macs


def conv_transpose_case(b: Builder, rng: np.random.Generator) -> tuple:
    kernel, stride = pick(rng, [2, 3, 4]), pick(rng, [1, 2, 2])
    cin, cout = channels(rng, 4, 256), channels(rng, 4, 256)
    size = int(rng.integers(4, 57))
    pad = pick(rng, [0, (kernel - 1) // 2])
    x = act_input(b, rng, [cin, size, size])
    w = weight(b, rng, [cin, cout, kernel, kernel], fan_in=cin * kernel * kernel, channel_axis=1)
    inputs = [x, w] + ([b.bias(cout)] if rng.random() < 0.8 else [])
    y = b.node("ConvTranspose", inputs, kernel_shape=[kernel, kernel], strides=[stride, stride], pads=[pad] * 4)
    finish(b, rng, y, 4)
    macs = cin * cout * kernel * kernel * size * size
    return f"ConvTranspose {cin}->{cout} k{kernel} s{stride} p{pad} at {size}x{size}", macs


def matmul_case(b: Builder, rng: np.random.Generator) -> tuple:
    """x @ W (+ b) with x of rank 2 (Gemm, transB) or 3 (MatMul)."""
    k, n = channels(rng, 8, 4096), channels(rng, 8, 4096)
    if rng.random() < 0.35:
        x = act_input(b, rng, [k])
        y = b.node("Gemm", [x, weight(b, rng, [n, k], fan_in=k, channel_axis=0), b.bias(n)], transB=1)
        finish(b, rng, y, 2)
        return f"Gemm {k}->{n}", k * n
    rows = channels(rng, 1, 1024)
    x = act_input(b, rng, [rows, k])
    y = b.node("MatMul", [x, weight(b, rng, [k, n], fan_in=k, channel_axis=1)])
    if rng.random() < 0.7:
        y = b.node("Add", [y, b.bias(n)])
    finish(b, rng, y, 3)
    return f"MatMul [{rows}x{k}] x [{k}x{n}]", rows * k * n


def attention_case(b: Builder, rng: np.random.Generator) -> tuple:
    """Activation x activation MatMul [heads, m, k] x [heads, k, n], both behind 8-bit Quants."""
    heads, m, k, n = pick(rng, [1, 2, 4, 8, 12]), channels(rng, 8, 512), channels(rng, 8, 256), channels(rng, 8, 512)
    a = act_input(b, rng, [heads, m, k])
    c = act_input(b, rng, [heads, k, n])
    finish(b, rng, b.node("MatMul", [a, c]), 4)
    b.weight_bits = 0  # no weights
    return f"MatMul activations {heads} x [{m}x{k}] x [{k}x{n}]", heads * m * k * n


CLASSES: List[Callable[[Builder, np.random.Generator], tuple]] = [
    lambda b, rng: conv_case(b, rng, 1),
    lambda b, rng: conv_case(b, rng, 2),
    lambda b, rng: conv_case(b, rng, 2),
    lambda b, rng: conv_case(b, rng, 3),
    conv_transpose_case,
    matmul_case,
    attention_case,
]


def make_case(index: int, seed: int) -> Case:
    """Case `index` of the sweep `seed`: draws until the multiply-adds per inference are in range."""
    rng = np.random.default_rng([seed, index])
    while True:
        bits = pick(rng, [2, 3, 4, 4, 5, 6, 8, 8])
        batch = pick(rng, [1, 1, 2, 4, 8, 16])
        b = Builder(rng, bits)
        desc, macs = CLASSES[int(rng.integers(len(CLASSES)))](b, rng)
        if MIN_MACS <= macs * batch <= MAX_MACS:
            break
    name = f"case{index:03d}"
    model = b.model(name)
    weights = f", {bits}-bit weights" if b.weight_bits else ""
    model.doc_string = f"{desc}{weights}, batch {batch}"
    onnx.checker.check_model(model)
    return Case(name, model, b.weight_bits, batch, model.doc_string)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", type=pathlib.Path)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=30)
    parser.add_argument("--list", action="store_true", help="print the cases without writing models")
    args = parser.parse_args(argv)
    if not args.list:
        args.out_dir.mkdir(parents=True, exist_ok=True)
    for index in range(args.count):
        case = make_case(index, args.seed)
        path = args.out_dir / f"{case.name}.onnx"
        if not args.list:
            onnx.save(case.model, str(path))
        print(f"{case.name}\t{path}\t{case.weight_bits}\t{case.batch}\t{case.description}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
