#!/usr/bin/env python3
"""QONNX models, one per layer family, as Brevitas exports them (make bench, section 7; issue 26 item 5).

Every model: a float input with a symbolic batch dimension "N" -> an 8-bit activation Quant (scalar scale,
zero point 0) -> layers whose weights are float initializers behind a per-output-channel Quant (4- or 8-bit,
narrow-range signed, zero point 0), with a float bias where Brevitas has one -> ReLU -> an unsigned 8-bit
Quant as the next layer's input. The weights are seeded random (He-normal), so the same seed gives the same
bytes.

Usage: gen_families.py OUT_DIR [--small] [--only NAME,...] [--seed S] [--list]
  Writes OUT_DIR/NAME.onnx for every family and prints one line per family:
  NAME <TAB> FILE <TAB> WEIGHT_BITS <TAB> DESCRIPTION.
  --small: reduced sizes (channels and spatial sizes cut, same graph structure) for the tests.
  --list: print the lines without writing models.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

QONNX_DOMAIN = "qonnx.custom_op.general"
OPSET = 13


class Builder:
    """Accumulates nodes and initializers of one QONNX graph; every helper returns its output's name."""

    def __init__(self, rng: np.random.Generator, weight_bits: int) -> None:
        self.rng = rng
        self.weight_bits = weight_bits
        self.nodes: List[onnx.NodeProto] = []
        self.initializers: List[TensorProto] = []
        self.inputs: List[onnx.ValueInfoProto] = []
        self.outputs: List[onnx.ValueInfoProto] = []
        self._count = 0

    def _name(self, stem: str) -> str:
        self._count += 1
        return f"{stem}_{self._count}"

    def const(self, stem: str, value: np.ndarray) -> str:
        name = self._name(stem)
        self.initializers.append(numpy_helper.from_array(value, name))
        return name

    def node(self, op: str, inputs: Sequence[str], domain: str = "", **attrs: object) -> str:
        out = self._name(op.lower())
        self.nodes.append(helper.make_node(op, list(inputs), [out], name=out, domain=domain, **attrs))
        return out

    def input(self, shape: Sequence[int]) -> str:
        """A float graph input of the given per-sample shape, batch dimension "N" in front."""
        name = f"x{len(self.inputs)}"
        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, ["N", *shape]))
        return name

    def output(self, name: str, rank: int = 4) -> None:
        # The batch dimension "N" and the rank; the sizes follow from the graph (qonnx-cc and onnxruntime
        # infer them).
        shape = ["N"] + [None] * (rank - 1)
        self.outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, shape))

    def quant(self, x: str, scale: np.ndarray, bits: int, signed: bool, narrow: bool) -> str:
        """A QONNX Quant with zero point 0 and round-half-even, as Brevitas exports it."""
        return self.node("Quant", [x, self.const("scale", scale.astype(np.float32)),
                                   self.const("zeropt", np.zeros((), np.float32)),
                                   self.const("bitwidth", np.array(bits, np.float32))],
                         domain=QONNX_DOMAIN, signed=int(signed), narrow=int(narrow), rounding_mode="ROUND")

    def act_quant(self, x: str, signed: bool, scale: float) -> str:
        """An 8-bit activation quantizer with a scalar scale."""
        return self.quant(x, np.array(scale, np.float32), 8, signed, narrow=False)

    def relu_quant(self, x: str, scale: float = 0.0231) -> str:
        """ReLU then an unsigned 8-bit Quant: Brevitas' QuantReLU, the next layer's input."""
        return self.act_quant(self.node("Relu", [x]), signed=False, scale=scale)

    def quant_weight(self, shape: Sequence[int], fan_in: int, channel_axis: int) -> str:
        """He-normal float weights behind a per-output-channel narrow-range signed Quant."""
        w = (self.rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)
        reduce_axes = tuple(a for a in range(len(shape)) if a != channel_axis)
        qmax = 2 ** (self.weight_bits - 1) - 1
        scale = (np.abs(w).max(axis=reduce_axes, keepdims=True) / qmax).astype(np.float32)
        return self.quant(self.const("weight", w), scale, self.weight_bits, signed=True, narrow=True)

    def bias(self, n: int) -> str:
        return self.const("bias", (self.rng.standard_normal(n) * 0.05).astype(np.float32))

    def conv(self, x: str, cin: int, cout: int, kernel: Sequence[int], stride: int = 1, dilation: int = 1,
             group: int = 1, pad: Optional[int] = None) -> str:
        """Conv over 1, 2 or 3 spatial dims with a float bias; 'same' padding unless pad is given."""
        spatial = len(kernel)
        if pad is None:
            pad = dilation * (kernel[0] - 1) // 2
        w = self.quant_weight([cout, cin // group, *kernel], fan_in=cin // group * int(np.prod(kernel)), channel_axis=0)
        return self.node("Conv", [x, w, self.bias(cout)], kernel_shape=list(kernel), strides=[stride] * spatial,
                         dilations=[dilation] * spatial, pads=[pad] * (2 * spatial), group=group)

    def conv_transpose(self, x: str, cin: int, cout: int, kernel: int, stride: int, pad: int) -> str:
        w = self.quant_weight([cin, cout, kernel, kernel], fan_in=cin * kernel * kernel // (stride * stride),
                              channel_axis=1)
        return self.node("ConvTranspose", [x, w, self.bias(cout)], kernel_shape=[kernel, kernel],
                         strides=[stride, stride], pads=[pad] * 4)

    def matmul(self, x: str, k: int, n: int, bias: bool = True) -> str:
        """x @ W (+ b): Brevitas' QuantLinear on an input of rank 3 or more (torch exports MatMul + Add)."""
        y = self.node("MatMul", [x, self.quant_weight([k, n], fan_in=k, channel_axis=1)])
        return self.node("Add", [y, self.bias(n)]) if bias else y

    def gemm(self, x: str, k: int, n: int) -> str:
        """QuantLinear on a 2-D input: Gemm with the weight [n, k] (transB)."""
        return self.node("Gemm", [x, self.quant_weight([n, k], fan_in=k, channel_axis=0), self.bias(n)], transB=1)

    def model(self, name: str) -> onnx.ModelProto:
        graph = helper.make_graph(self.nodes, name, self.inputs, self.outputs, self.initializers)
        model = helper.make_model(graph, producer_name="qonnx-cc bench/gen_families.py",
                                  opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid(QONNX_DOMAIN, 1)])
        model.ir_version = 8
        return model


def conv_stack(b: Builder, x: str, channels: int, layers: int, **conv_args: int) -> str:
    """layers x (3x3 Conv channels -> channels, ReLU, Quant)."""
    for _ in range(layers):
        x = b.relu_quant(b.conv(x, channels, channels, [3, 3], **conv_args))
    return x


# Each family: (b, small) -> None; builds the graph into b. Sizes in comments are the full ones.

def conv1d(b: Builder, small: bool) -> None:
    """RadioML VGG-like: I/Q frames [2, 1024], Conv1d k3 to 64 ch, then 3 x (Conv1d 64 -> 64, MaxPool 2)."""
    ch, length = (16, 128) if small else (64, 1024)
    x = b.act_quant(b.input([2, length]), signed=True, scale=0.0157)
    x = b.relu_quant(b.conv(x, 2, ch, [3]))
    for _ in range(3):
        x = b.relu_quant(b.conv(x, ch, ch, [3]))
        x = b.node("MaxPool", [x], kernel_shape=[2], strides=[2])
    b.output(x, rank=3)


def spatial_input(b: Builder, ch: int, size: int) -> str:
    return b.act_quant(b.input([ch, size, size]), signed=True, scale=0.0157)


def conv3x3(b: Builder, small: bool) -> None:
    """Two 3x3 Conv 64 -> 64 at 56x56."""
    ch, size = (16, 14) if small else (64, 56)
    b.output(conv_stack(b, spatial_input(b, ch, size), ch, 2))


def conv_stride2(b: Builder, small: bool) -> None:
    """3x3 Conv stride 2, 64 -> 128 at 56x56, then 128 -> 128 stride 2 at 28x28."""
    ch, size = (16, 16) if small else (64, 56)
    x = b.relu_quant(b.conv(spatial_input(b, ch, size), ch, 2 * ch, [3, 3], stride=2))
    b.output(b.relu_quant(b.conv(x, 2 * ch, 2 * ch, [3, 3], stride=2)))


def conv_dilated2(b: Builder, small: bool) -> None:
    """Two 3x3 Conv dilation 2, 64 -> 64 at 56x56."""
    ch, size = (16, 14) if small else (64, 56)
    b.output(conv_stack(b, spatial_input(b, ch, size), ch, 2, dilation=2))


def conv_grouped4(b: Builder, small: bool) -> None:
    """Two 3x3 Conv with 4 groups, 128 -> 128 at 56x56."""
    ch, size = (16, 14) if small else (128, 56)
    b.output(conv_stack(b, spatial_input(b, ch, size), ch, 2, group=4))


def mobilenet(b: Builder, small: bool) -> None:
    """Two MobileNet blocks at 28x28, 128 ch: depthwise 3x3 + pointwise 1x1."""
    ch, size = (16, 14) if small else (128, 28)
    x = spatial_input(b, ch, size)
    for _ in range(2):
        x = b.relu_quant(b.conv(x, ch, ch, [3, 3], group=ch))
        x = b.relu_quant(b.conv(x, ch, ch, [1, 1]))
    b.output(x)


def conv1x1(b: Builder, small: bool) -> None:
    """Two 1x1 Conv 256 -> 256 at 28x28."""
    ch, size = (32, 14) if small else (256, 28)
    x = spatial_input(b, ch, size)
    for _ in range(2):
        x = b.relu_quant(b.conv(x, ch, ch, [1, 1]))
    b.output(x)


def conv5x5(b: Builder, small: bool) -> None:
    """Two 5x5 Conv 64 -> 64 at 28x28."""
    ch, size = (16, 14) if small else (64, 28)
    x = spatial_input(b, ch, size)
    for _ in range(2):
        x = b.relu_quant(b.conv(x, ch, ch, [5, 5]))
    b.output(x)


def stem7x7(b: Builder, small: bool) -> None:
    """ResNet stem: 7x7 Conv stride 2, 3 -> 64 at 224x224, then MaxPool 3x3 stride 2 (to 56x56)."""
    ch, size = (16, 32) if small else (64, 224)
    x = b.relu_quant(b.conv(spatial_input(b, 3, size), 3, ch, [7, 7], stride=2))
    b.output(b.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))


def pools(b: Builder, small: bool) -> None:
    """Pooling on 64 ch at 56x56: MaxPool 3x3/2, 1x1 Conv, AveragePool 3x3/1, AveragePool 2x2/2."""
    ch, size = (16, 28) if small else (64, 56)
    x = spatial_input(b, ch, size)
    x = b.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    x = b.relu_quant(b.conv(x, ch, ch, [1, 1]))
    x = b.node("AveragePool", [x], kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1], count_include_pad=0)
    x = b.act_quant(x, signed=False, scale=0.0231)
    b.output(b.node("AveragePool", [x], kernel_shape=[2, 2], strides=[2, 2]))


def matmul4096(b: Builder, small: bool) -> None:
    """Two 4096 x 4096 MatMul + bias layers on [N, 1, 4096] (memory-bound at batch 1)."""
    width = 256 if small else 4096
    x = b.act_quant(b.input([1, width]), signed=True, scale=0.0157)
    for _ in range(2):
        x = b.relu_quant(b.matmul(x, width, width))
    b.output(x, rank=3)


def gap_head(b: Builder, small: bool) -> None:
    """3x3 Conv 256 -> 256 at 14x14, GlobalAveragePool, Flatten, 256 x 1000 Gemm head (float logits)."""
    ch, size, classes = (32, 7, 100) if small else (256, 14, 1000)
    x = b.relu_quant(b.conv(spatial_input(b, ch, size), ch, ch, [3, 3]))
    x = b.act_quant(b.node("GlobalAveragePool", [x]), signed=False, scale=0.0231)
    b.output(b.gemm(b.node("Flatten", [x], axis=1), ch, classes), rank=2)


def conv_transpose(b: Builder, small: bool) -> None:
    """Decoder: ConvTranspose 4x4 stride 2, 64 -> 64 from 28x28 to 56x56, then a 3x3 Conv 64 -> 32."""
    ch, size = (16, 14) if small else (64, 28)
    x = b.relu_quant(b.conv_transpose(spatial_input(b, ch, size), ch, ch, 4, 2, 1))
    b.output(b.relu_quant(b.conv(x, ch, ch // 2, [3, 3])))


def conv3d(b: Builder, small: bool) -> None:
    """3x3x3 Conv3d 16 -> 32 at 8x28x28, then 32 -> 32 stride 2."""
    cin, ch, depth, size = (4, 8, 4, 10) if small else (16, 32, 8, 28)
    x = b.act_quant(b.input([cin, depth, size, size]), signed=True, scale=0.0157)
    x = b.relu_quant(b.conv(x, cin, ch, [3, 3, 3]))
    b.output(b.relu_quant(b.conv(x, ch, ch, [3, 3, 3], stride=2)), rank=5)


def attention(b: Builder, small: bool) -> None:
    """Self-attention over 128 tokens of 256 (4 heads of 64): Q/K/V projections, then two activation x
    activation MatMuls (Q K^T and softmax(.) V), both operands behind Quants."""
    tokens, width, heads = (16, 32, 2) if small else (128, 256, 4)
    x = b.act_quant(b.input([tokens, width]), signed=True, scale=0.0157)
    split = b.const("heads_shape", np.array([0, tokens, heads, width // heads], np.int64))

    def heads_of(perm: List[int]) -> str:
        y = b.act_quant(b.matmul(x, width, width), signed=True, scale=0.0313)
        return b.node("Transpose", [b.node("Reshape", [y, split])], perm=perm)

    q, k, v = heads_of([0, 2, 1, 3]), heads_of([0, 2, 3, 1]), heads_of([0, 2, 1, 3])
    scores = b.node("Mul", [b.node("MatMul", [q, k]), b.const("inv_sqrt_d", np.array(1 / 8, np.float32))])
    probs = b.act_quant(b.node("Softmax", [scores], axis=-1), signed=False, scale=1 / 255)
    ctx = b.act_quant(b.node("MatMul", [probs, v]), signed=True, scale=0.0313)
    merged = b.node("Reshape", [b.node("Transpose", [ctx], perm=[0, 2, 1, 3]),
                                b.const("tokens_shape", np.array([0, tokens, width], np.int64))])
    b.output(b.matmul(merged, width, width), rank=3)


def resnet_block(b: Builder, small: bool) -> None:
    """ResNet basic block, 64 ch at 56x56: two 3x3 Conv, the second's signed Quant added to the input's."""
    ch, size = (16, 14) if small else (64, 56)
    x = spatial_input(b, ch, size)
    y = b.relu_quant(b.conv(x, ch, ch, [3, 3]))
    y = b.act_quant(b.conv(y, ch, ch, [3, 3]), signed=True, scale=0.0313)
    b.output(b.relu_quant(b.node("Add", [x, y])))


def resize(b: Builder, small: bool) -> None:
    """Upsampling: nearest Resize x2 (28 -> 56) and a 3x3 Conv 64 -> 32, bilinear x2 and a 3x3 Conv 32 -> 16."""
    ch, size = (16, 7) if small else (64, 28)
    twice = b.const("scales", np.array([1, 1, 2, 2], np.float32))
    x = spatial_input(b, ch, size)
    x = b.node("Resize", [x, "", twice], mode="nearest")
    x = b.relu_quant(b.conv(x, ch, ch // 2, [3, 3]))
    x = b.node("Resize", [x, "", twice], mode="linear")
    b.output(b.relu_quant(b.conv(x, ch // 2, ch // 4, [3, 3])))


def concat(b: Builder, small: bool) -> None:
    """DenseNet block at 28x28: 4 layers of growth 32 from 64 ch, each a 3x3 Conv over the Concat of all
    earlier outputs (Quants with their own scales), then a 1x1 transition Conv to 96 ch."""
    ch, growth, size = (8, 8, 10) if small else (64, 32, 28)
    features = [spatial_input(b, ch, size)]
    for _ in range(4):
        inputs = b.node("Concat", features, axis=1) if len(features) > 1 else features[0]
        cin = ch + growth * (len(features) - 1)
        features.append(b.relu_quant(b.conv(inputs, cin, growth, [3, 3]), scale=0.0231 * len(features)))
    all_features = b.node("Concat", features, axis=1)
    b.output(b.relu_quant(b.conv(all_features, ch + 4 * growth, 3 * growth, [1, 1])))


@dataclass(frozen=True)
class Family:
    name: str
    build: Callable[[Builder, bool], None]
    weight_bits: int


FAMILIES: List[Family] = [
    Family("conv1d", conv1d, 4),
    Family("conv3x3", conv3x3, 8),
    Family("conv_stride2", conv_stride2, 4),
    Family("conv_dilated2", conv_dilated2, 8),
    Family("conv_grouped4", conv_grouped4, 4),
    Family("mobilenet", mobilenet, 8),
    Family("matmul4096", matmul4096, 4),
    Family("gap_head", gap_head, 8),
    Family("conv_transpose", conv_transpose, 8),
    Family("conv3d", conv3d, 4),
    Family("attention", attention, 8),
    Family("resnet_block", resnet_block, 4),
    Family("conv1x1", conv1x1, 8),
    Family("conv5x5", conv5x5, 4),
    Family("stem7x7", stem7x7, 8),
    Family("pools", pools, 8),
    Family("resize", resize, 4),
    Family("concat", concat, 8),
]


def describe(family: Family) -> str:
    """The family's docstring as one line."""
    return " ".join((family.build.__doc__ or family.name).split())


def build_model(family: Family, small: bool, seed: int) -> onnx.ModelProto:
    """The family's model; the weights depend on the seed and the family only."""
    family_seed = seed * 1000 + [f.name for f in FAMILIES].index(family.name)
    b = Builder(np.random.default_rng(family_seed), family.weight_bits)
    family.build(b, small)
    model = b.model(family.name)
    model.doc_string = describe(family) + (" (reduced sizes: --small)" if small else "")
    onnx.checker.check_model(model)
    return model


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", type=pathlib.Path)
    parser.add_argument("--small", action="store_true", help="reduced sizes, for the tests")
    parser.add_argument("--only", default="", help="comma-separated family names (default: all)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--list", action="store_true", help="print the families without writing models")
    args = parser.parse_args(argv)
    by_name: Dict[str, Family] = {f.name: f for f in FAMILIES}
    wanted = [n for n in args.only.split(",") if n] or list(by_name)
    unknown = [n for n in wanted if n not in by_name]
    if unknown:
        parser.error(f"unknown families {', '.join(unknown)}; known: {', '.join(by_name)}")
    if not args.list:
        args.out_dir.mkdir(parents=True, exist_ok=True)
    for name in wanted:
        family = by_name[name]
        path = args.out_dir / f"{name}.onnx"
        if not args.list:
            onnx.save(build_model(family, args.small, args.seed), str(path))
        print(f"{name}\t{path}\t{family.weight_bits}\t{describe(family)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
