#!/usr/bin/env python3
"""bench/gen_families.py builds what it promises: Brevitas-style QONNX models (ctest gen_families).

For every family, full and reduced (--small) sizes, without running anything: each weight of a Conv,
ConvTranspose, MatMul or Gemm is a float initializer behind a narrow-range signed Quant of the family's bit
width with zero point 0 and one scale per output channel (the scales make the largest weight of each
channel the largest code); every other Quant is an 8-bit activation quantizer with a scalar scale and zero
point 0; the inputs have the batch dimension "N"; the same seed gives the same bytes, another seed other
weights. Usage: gen_families_test.py (python3 with onnx and numpy; exit 77 without them).
"""

from __future__ import annotations

import contextlib
import io
import pathlib
import sys
import unittest
from typing import Dict, List

try:
    import numpy as np
    import onnx
    from onnx import numpy_helper
except ImportError as missing:  # ctest SKIP_RETURN_CODE
    print(f"SKIP: {missing}")
    sys.exit(77)

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "bench"))
import gen_families  # noqa: E402

WEIGHT_LAYERS = {"Conv": 0, "ConvTranspose": 1, "MatMul": 1, "Gemm": 0}  # op -> output-channel axis of the weight


def consts(model: onnx.ModelProto) -> Dict[str, np.ndarray]:
    return {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}


def producers(model: onnx.ModelProto) -> Dict[str, onnx.NodeProto]:
    return {out: n for n in model.graph.node for out in n.output}


def attrs(node: onnx.NodeProto) -> Dict[str, object]:
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


class GeneratedFamilies(unittest.TestCase):
    def models(self) -> List[tuple]:
        # The full matmul4096 has 2 x 64 MiB of weights: checked at its reduced size only.
        return [(f, small, gen_families.build_model(f, small, seed=1)) for f in gen_families.FAMILIES
                for small in (True, False) if small or f.name != "matmul4096"]

    def test_weights_are_per_channel_narrow_signed_quants(self) -> None:
        for family, small, model in self.models():
            with self.subTest(family=family.name, small=small):
                c, made_by = consts(model), producers(model)
                layers = [n for n in model.graph.node if n.op_type in WEIGHT_LAYERS and n.input[1] in made_by
                          and made_by[n.input[1]].op_type == "Quant" and made_by[n.input[1]].input[0] in c]
                self.assertTrue(layers, "no layer with a quantized constant weight")
                for layer in layers:
                    q = made_by[layer.input[1]]
                    w, scale, zero, bits = (c[name] for name in q.input)
                    self.assertEqual(w.dtype, np.float32)
                    self.assertEqual((float(bits), float(zero)), (family.weight_bits, 0.0))
                    self.assertEqual((attrs(q)["signed"], attrs(q)["narrow"]), (1, 1))
                    axis = WEIGHT_LAYERS[layer.op_type]
                    expected_shape = [w.shape[a] if a == axis else 1 for a in range(w.ndim)]
                    self.assertEqual(list(scale.shape), expected_shape, layer.name)
                    codes = np.round(w / scale)
                    qmax = 2 ** (family.weight_bits - 1) - 1
                    self.assertEqual(np.abs(codes).max(), qmax)
                    channel_max = np.abs(codes).max(axis=tuple(a for a in range(w.ndim) if a != axis))
                    np.testing.assert_array_equal(channel_max, qmax)

    def test_activation_quants_are_8_bit_scalar(self) -> None:
        for family, small, model in self.models():
            with self.subTest(family=family.name, small=small):
                c = consts(model)
                activation = [n for n in model.graph.node if n.op_type == "Quant" and n.input[0] not in c]
                self.assertGreaterEqual(len(activation), 2)
                for q in activation:
                    self.assertEqual(q.domain, gen_families.QONNX_DOMAIN)
                    self.assertEqual(c[q.input[1]].shape, ())
                    self.assertEqual((float(c[q.input[2]]), float(c[q.input[3]])), (0.0, 8.0))
                    self.assertEqual(attrs(q)["narrow"], 0)
                first = [n for n in model.graph.node if model.graph.input[0].name in n.input]
                self.assertEqual([n.op_type for n in first], ["Quant"], "the input goes to one Quant")

    def test_inputs_have_a_symbolic_batch(self) -> None:
        for family, small, model in self.models():
            with self.subTest(family=family.name, small=small):
                for value in list(model.graph.input) + list(model.graph.output):
                    self.assertEqual(value.type.tensor_type.shape.dim[0].dim_param, "N")

    def test_seeded(self) -> None:
        for family in gen_families.FAMILIES:
            with self.subTest(family=family.name):
                a = gen_families.build_model(family, True, seed=1)
                self.assertEqual(a.SerializeToString(), gen_families.build_model(family, True, seed=1).SerializeToString())
                other = gen_families.build_model(family, True, seed=2)
                self.assertNotEqual(a.SerializeToString(), other.SerializeToString())
                self.assertEqual([n.op_type for n in a.graph.node], [n.op_type for n in other.graph.node])

    def test_listing_names_every_family_and_its_bits(self) -> None:
        out_dir = pathlib.Path("/nonexistent-families")
        listing = io.StringIO()
        with contextlib.redirect_stdout(listing):
            self.assertEqual(gen_families.main([str(out_dir), "--list"]), 0)
        rows = [line.split("\t") for line in listing.getvalue().splitlines()]
        self.assertEqual([r[0] for r in rows], [f.name for f in gen_families.FAMILIES])
        self.assertEqual([int(r[2]) for r in rows], [f.weight_bits for f in gen_families.FAMILIES])
        self.assertTrue(all(r[1] == str(out_dir / f"{r[0]}.onnx") and r[3] for r in rows))
        self.assertFalse(out_dir.exists())

if __name__ == "__main__":
    unittest.main()
