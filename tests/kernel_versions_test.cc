// Kernels with one registry entry per range of ONNX op versions (issue 12 item 5): each version
// behaves per its own spec, versions before the op's first have no kernel, and attributes are
// parsed and checked once at plan time with errors naming the node and the attribute.
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <onnx/defs/schema.h>

#include "qonnx/exec/kernel.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {

// Resize-10: scales as input #1, asymmetric coordinates; 11..17: roi/scales/sizes, half_pixel by default.
TEST(KernelVersions, ResizeTenAndElevenTransformCoordinatesPerTheirSpecs) {
  const Tensor x = f32({1, 2}, {0, 10});
  const Tensor scales = f32({2}, {1, 2});
  const Attrs linear = [](io::NodeBuilder& n) { n.attr("mode", "linear"); };
  EXPECT_EQ(values_f32(run_ok("Resize", {x, scales}, linear, 10)), (std::vector<float>{0, 5, 10, 10}));
  EXPECT_EQ(values_f32(run_ok("Resize", {x, Tensor(), scales}, linear, 11)), (std::vector<float>{0, 2.5, 7.5, 10}));
  EXPECT_EQ(values_f32(run_ok("Resize", {x, Tensor(), scales}, linear, 13)), (std::vector<float>{0, 2.5, 7.5, 10}));
  expect_error(run_op("Resize", {x, scales}, linear, 9), Code::kUnsupported, "Resize");
  // Cubic exists from 11.
  const Attrs cubic = [](io::NodeBuilder& n) { n.attr("mode", "cubic"); };
  expect_error(run_op("Resize", {x, scales}, cubic, 10), Code::kInvalidModel, "attribute 'mode': 'cubic' is not one of nearest, linear");
  EXPECT_EQ(run_ok("Resize", {x, Tensor(), scales}, cubic, 11).numel(), 4);
}

// Resize-18 adds antialias, axes and keep_aspect_ratio_policy; before 18 they are not read.
TEST(KernelVersions, ResizeEighteenReadsItsNewAttributes) {
  const Tensor x = f32({2, 2}, {1, 2, 3, 4});
  const Tensor sizes = i64({2}, {4, 2});
  const Attrs not_larger = [](io::NodeBuilder& n) { n.attr("keep_aspect_ratio_policy", "not_larger"); };
  EXPECT_EQ(run_ok("Resize", {x, Tensor(), Tensor(), sizes}, not_larger, 17).dims(), (Dims{4, 2}));
  EXPECT_EQ(run_ok("Resize", {x, Tensor(), Tensor(), sizes}, not_larger, 18).dims(), (Dims{2, 2}));
  const Attrs axes = [](io::NodeBuilder& n) { n.attr("axes", std::vector<int64_t>{1}); };
  EXPECT_EQ(run_ok("Resize", {x, Tensor(), Tensor(), i64({1}, {4})}, axes, 18).dims(), (Dims{2, 4}));
  expect_error(run_op("Resize", {x, Tensor(), Tensor(), i64({1}, {4})}, axes, 17), Code::kInvalidModel, "sizes");
  const Attrs antialias = [](io::NodeBuilder& n) { n.attr("antialias", 1); };
  EXPECT_EQ(run_ok("Resize", {x, Tensor(), Tensor(), sizes}, antialias, 17).dims(), (Dims{4, 2}));
  expect_error(run_op("Resize", {x, Tensor(), Tensor(), sizes}, antialias, 18), Code::kUnsupported, "antialias");
  const Attrs bad_policy = [](io::NodeBuilder& n) { n.attr("keep_aspect_ratio_policy", "fit"); };
  expect_error(run_op("Resize", {x, Tensor(), Tensor(), sizes}, bad_policy, 18), Code::kInvalidModel,
               "attribute 'keep_aspect_ratio_policy': 'fit' is not one of stretch, not_larger, not_smaller");
}

// half_pixel_symmetric is a coordinate mode from Resize-19 only.
TEST(KernelVersions, ResizeNineteenAddsHalfPixelSymmetric) {
  const Tensor x = f32({1, 4}, {0, 1, 2, 3});
  const Tensor scales = f32({2}, {1, 0.5f});
  const Attrs symmetric = [](io::NodeBuilder& n) {
    n.attr("mode", "linear").attr("coordinate_transformation_mode", "half_pixel_symmetric");
  };
  EXPECT_EQ(values_f32(run_ok("Resize", {x, Tensor(), scales}, symmetric, 19)), (std::vector<float>{0.5, 2.5}));
  expect_error(run_op("Resize", {x, Tensor(), scales}, symmetric, 18), Code::kInvalidModel,
               "attribute 'coordinate_transformation_mode': 'half_pixel_symmetric' is not one of");
}

// A bad attribute value fails at plan time naming the node and the attribute.
TEST(KernelVersions, BadAttributeNamesNodeAndAttribute) {
  const Attrs bad_mode = [](io::NodeBuilder& n) { n.attr("mode", "foo"); };
  expect_error(run_op("Resize", {f32({1, 2}, {0, 10}), Tensor(), f32({2}, {1, 2})}, bad_mode, 13), Code::kInvalidModel,
               "node 'Resize_0' (ai.onnx::Resize): attribute 'mode': 'foo' is not one of nearest, linear, cubic");
  // No INT <-> FLOAT coercion: an attribute of the wrong type is an error naming it.
  const Attrs float_axis = [](io::NodeBuilder& n) { n.attr("axis", 1.0f); };
  expect_error(run_op("Gather", {f32({2, 2}, {1, 2, 3, 4}), i64({1}, {0})}, float_axis, 13), Code::kInvalidModel,
               "node 'Gather_0' (ai.onnx::Gather): attribute 'axis' must be INT, got FLOAT");
  const Attrs int_mode = [](io::NodeBuilder& n) { n.attr("mode", 1); };
  expect_error(run_op("Resize", {f32({1, 2}, {0, 10}), Tensor(), f32({2}, {1, 2})}, int_mode, 13), Code::kInvalidModel,
               "attribute 'mode' must be STRING, got INT");
  const Attrs int_extrapolation = [](io::NodeBuilder& n) { n.attr("extrapolation_value", 0); };
  expect_error(run_op("Resize", {f32({1, 2}, {0, 10}), Tensor(), f32({2}, {1, 2})}, int_extrapolation, 13),
               Code::kInvalidModel, "attribute 'extrapolation_value' must be FLOAT, got INT");
  const Attrs int_alpha = [](io::NodeBuilder& n) { n.attr("alpha", 1); };
  expect_error(run_op("LeakyRelu", {f32({1}, {-1})}, int_alpha, 13), Code::kInvalidModel, "attribute 'alpha' must be FLOAT, got INT");
  const Attrs float_to = [](io::NodeBuilder& n) { n.attr("to", 1.0f); };
  expect_error(run_op("Cast", {f32({1}, {-1})}, float_to, 13), Code::kInvalidModel, "attribute 'to' must be INT, got FLOAT");
}

// Upsample-7 takes scales as an attribute, Upsample-9 as input #1; there is no Upsample-1 kernel.
TEST(KernelVersions, UpsampleScalesAttributeThenInput) {
  const Tensor x = f32({1, 2}, {1, 2});
  const Attrs scales_attr = [](io::NodeBuilder& n) { n.attr("scales", std::vector<float>{1, 2}); };
  EXPECT_EQ(values_f32(run_ok("Upsample", {x}, scales_attr, 7)), (std::vector<float>{1, 1, 2, 2}));
  EXPECT_EQ(values_f32(run_ok("Upsample", {x, f32({2}, {1, 2})}, nullptr, 9)), (std::vector<float>{1, 1, 2, 2}));
  expect_error(run_op("Upsample", {x}, scales_attr, 9), Code::kInvalidModel, "scales");
  expect_error(run_op("Upsample", {x}, scales_attr, 6), Code::kUnsupported, "Upsample");
  const Attrs cubic = [](io::NodeBuilder& n) { n.attr("mode", "cubic").attr("scales", std::vector<float>{1, 2}); };
  expect_error(run_op("Upsample", {x}, cubic, 7), Code::kInvalidModel, "attribute 'mode'");
}

// GatherND-11 has no batch dimensions (batch_dims is not read); GatherND-12 has.
TEST(KernelVersions, GatherNdBatchDimsFromTwelve) {
  const Tensor data = f32({2, 2}, {1, 2, 3, 4});
  const Tensor indices = i64({2, 1}, {1, 0});
  const Attrs batch = [](io::NodeBuilder& n) { n.attr("batch_dims", 1); };
  EXPECT_EQ(values_f32(run_ok("GatherND", {data, indices}, batch, 11)), (std::vector<float>{3, 4, 1, 2}));
  EXPECT_EQ(values_f32(run_ok("GatherND", {data, indices}, batch, 12)), (std::vector<float>{2, 3}));
  expect_error(run_op("GatherND", {data, indices}, nullptr, 10), Code::kUnsupported, "GatherND");
  expect_error(run_op("GatherElements", {data, i64({2, 2}, {0, 0, 0, 0})}, nullptr, 10), Code::kUnsupported, "GatherElements");
}

// Scatter reductions: none before 16, add/mul from 16, max/min from 18.
TEST(KernelVersions, ScatterReductionsPerVersion) {
  const Tensor data = f32({3}, {1, 1, 1});
  const Tensor indices = i64({2}, {2, 2});
  const Tensor updates = f32({2}, {5, 7});
  const Attrs add = [](io::NodeBuilder& n) { n.attr("reduction", "add"); };
  const Attrs max = [](io::NodeBuilder& n) { n.attr("reduction", "max"); };
  EXPECT_EQ(values_f32(run_ok("ScatterElements", {data, indices, updates}, add, 15)), (std::vector<float>{1, 1, 7}));
  EXPECT_EQ(values_f32(run_ok("ScatterElements", {data, indices, updates}, add, 16)), (std::vector<float>{1, 1, 13}));
  expect_error(run_op("ScatterElements", {data, indices, updates}, max, 17), Code::kInvalidModel,
               "attribute 'reduction': 'max' is not one of none, add, mul");
  EXPECT_EQ(values_f32(run_ok("ScatterElements", {data, indices, updates}, max, 18)), (std::vector<float>{1, 1, 7}));
  const Tensor nd_indices = i64({2, 1}, {0, 0});
  EXPECT_EQ(values_f32(run_ok("ScatterND", {data, nd_indices, updates}, add, 13)), (std::vector<float>{7, 1, 1}));
  EXPECT_EQ(values_f32(run_ok("ScatterND", {data, nd_indices, updates}, add, 16)), (std::vector<float>{13, 1, 1}));
  expect_error(run_op("ScatterND", {data, nd_indices, updates}, max, 16), Code::kInvalidModel, "attribute 'reduction'");
  EXPECT_EQ(values_f32(run_ok("ScatterND", {data, nd_indices, updates}, max, 18)), (std::vector<float>{7, 1, 1}));
  expect_error(run_op("ScatterElements", {data, indices, updates}, nullptr, 10), Code::kUnsupported, "ScatterElements");
}

// Reshape: the shape attribute (1..4), input #1 (5..13), allowzero (14 on).
TEST(KernelVersions, ReshapeFormsPerVersion) {
  const Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  const Attrs shape_attr = [](io::NodeBuilder& n) { n.attr("shape", std::vector<int64_t>{3, 2}); };
  EXPECT_EQ(run_ok("Reshape", {x}, shape_attr, 4).dims(), (Dims{3, 2}));
  expect_error(run_op("Reshape", {x}, nullptr, 4), Code::kInvalidModel, "node 'Reshape_0' (ai.onnx::Reshape): attribute 'shape' is required");
  EXPECT_EQ(run_ok("Reshape", {x, i64({2}, {3, 2})}, shape_attr, 5).dims(), (Dims{3, 2}));
  const Tensor empty = f32({0, 3}, {});
  const Attrs allow_zero = [](io::NodeBuilder& n) { n.attr("allowzero", 1); };
  expect_error(run_op("Reshape", {empty, i64({2}, {3, 0})}, allow_zero, 13), Code::kInvalidModel, "cannot reshape");
  EXPECT_EQ(run_ok("Reshape", {empty, i64({2}, {3, 0})}, allow_zero, 14).dims(), (Dims{3, 0}));
}

// Squeeze/Unsqueeze: axes as attribute (1..12), as input #1 (13 on; the attribute is not read).
TEST(KernelVersions, SqueezeUnsqueezeAxesAttributeThenInput) {
  const Tensor x = f32({1, 2, 1}, {1, 2});
  const Attrs axes0 = [](io::NodeBuilder& n) { n.attr("axes", std::vector<int64_t>{0}); };
  EXPECT_EQ(run_ok("Squeeze", {x}, axes0, 12).dims(), (Dims{2, 1}));
  EXPECT_EQ(run_ok("Squeeze", {x}, axes0, 13).dims(), (Dims{2}));
  EXPECT_EQ(run_ok("Squeeze", {x, i64({1}, {2})}, nullptr, 13).dims(), (Dims{1, 2}));
  EXPECT_EQ(run_ok("Unsqueeze", {x}, axes0, 12).dims(), (Dims{1, 1, 2, 1}));
  expect_error(run_op("Unsqueeze", {x}, axes0, 13), Code::kInvalidModel, "axes are required");
  EXPECT_EQ(run_ok("Unsqueeze", {x, i64({1}, {3})}, nullptr, 13).dims(), (Dims{1, 2, 1, 1}));
}

// Concat's axis defaults to 1 before 4 and is required from 4; Shape slices by start/end from 15.
TEST(KernelVersions, ConcatAxisAndShapeSlicePerVersion) {
  const Tensor a = f32({1, 2}, {1, 2});
  EXPECT_EQ(run_ok("Concat", {a, a}, nullptr, 3).dims(), (Dims{1, 4}));
  expect_error(run_op("Concat", {a, a}, nullptr, 4), Code::kInvalidModel, "attribute 'axis' is required");
  const Attrs start = [](io::NodeBuilder& n) { n.attr("start", 1); };
  const Tensor x = f32({2, 3, 4}, {});
  EXPECT_EQ(values<int64_t>(run_ok("Shape", {x}, start, 14)), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(values<int64_t>(run_ok("Shape", {x}, start, 15)), (std::vector<int64_t>{3, 4}));
  const Attrs end = [](io::NodeBuilder& n) { n.attr("end", -1); };
  EXPECT_EQ(values<int64_t>(run_ok("Shape", {x}, end, 15)), (std::vector<int64_t>{2, 3}));
  expect_error(run_op("Expand", {a, i64({2}, {2, 2})}, nullptr, 7), Code::kUnsupported, "Expand");
  expect_error(run_op("Tile", {a, i64({2}, {1, 2})}, nullptr, 5), Code::kUnsupported, "Tile");
}

// DepthToSpace reads `mode` from 11 (DCR before); blocksize must be positive.
TEST(KernelVersions, DepthToSpaceModeFromEleven) {
  const Tensor x = f32({1, 8, 1, 1}, {0, 1, 2, 3, 4, 5, 6, 7});
  const Attrs crd = [](io::NodeBuilder& n) { n.attr("blocksize", 2).attr("mode", "CRD"); };
  const std::vector<float> dcr_values = {0, 2, 4, 6, 1, 3, 5, 7};
  EXPECT_EQ(values_f32(run_ok("DepthToSpace", {x}, crd, 10)), dcr_values);
  EXPECT_EQ(values_f32(run_ok("DepthToSpace", {x}, crd, 11)), (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7}));
  const Attrs bad = [](io::NodeBuilder& n) { n.attr("blocksize", 2).attr("mode", "RCD"); };
  expect_error(run_op("DepthToSpace", {x}, bad, 11), Code::kInvalidModel, "attribute 'mode': 'RCD' is not one of DCR, CRD");
  const Attrs zero = [](io::NodeBuilder& n) { n.attr("blocksize", 0); };
  expect_error(run_op("SpaceToDepth", {x}, zero, 13), Code::kInvalidModel, "attribute 'blocksize' must be positive");
}

// ArgMax/ArgMin read select_last_index from 12; TopK takes k as attribute before 10 and reads
// `largest` from 11; CumSum exists from 11.
TEST(KernelVersions, ArgTopKCumSumPerVersion) {
  const Tensor x = f32({4}, {1, 3, 3, 0});
  const Attrs last = [](io::NodeBuilder& n) { n.attr("select_last_index", 1); };
  EXPECT_EQ(values<int64_t>(run_ok("ArgMax", {x}, last, 11)), (std::vector<int64_t>{1}));
  EXPECT_EQ(values<int64_t>(run_ok("ArgMax", {x}, last, 12)), (std::vector<int64_t>{2}));
  EXPECT_EQ(values<int64_t>(run_ok("ArgMin", {f32({3}, {0, 1, 0})}, last, 11)), (std::vector<int64_t>{0}));
  EXPECT_EQ(values<int64_t>(run_ok("ArgMin", {f32({3}, {0, 1, 0})}, last, 12)), (std::vector<int64_t>{2}));

  const Attrs k2 = [](io::NodeBuilder& n) { n.attr("k", 2); };
  EXPECT_EQ(values_f32(run_ok("TopK", {x}, k2, 9)), (std::vector<float>{3, 3}));
  const Attrs smallest = [](io::NodeBuilder& n) { n.attr("largest", 0); };
  EXPECT_EQ(values_f32(run_ok("TopK", {x, i64({1}, {2})}, smallest, 10)), (std::vector<float>{3, 3}));
  EXPECT_EQ(values_f32(run_ok("TopK", {x, i64({1}, {2})}, smallest, 11)), (std::vector<float>{0, 1}));

  const Attrs reverse = [](io::NodeBuilder& n) { n.attr("reverse", 1); };
  EXPECT_EQ(values_f32(run_ok("CumSum", {x, i64({}, {0})}, reverse, 11)), (std::vector<float>{7, 6, 3, 0}));
  expect_error(run_op("CumSum", {x, i64({}, {0})}, reverse, 10), Code::kUnsupported, "CumSum");
}

// Binary ops 1..6 align B at attribute `axis` when broadcast=1; from 7 they broadcast as numpy and
// the attributes are not read.
TEST(KernelVersions, LegacyBroadcastBeforeSeven) {
  const Tensor a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor b = f32({2}, {10, 20});
  const Attrs at_axis0 = [](io::NodeBuilder& n) { n.attr("broadcast", 1).attr("axis", 0); };
  EXPECT_EQ(values_f32(run_ok("Add", {a, b}, at_axis0, 6)), (std::vector<float>{11, 12, 13, 24, 25, 26}));
  EXPECT_EQ(values_f32(run_ok("Sub", {a, b}, at_axis0, 1)), (std::vector<float>{-9, -8, -7, -16, -15, -14}));
  expect_error(run_op("Add", {a, b}, at_axis0, 7), Code::kInvalidModel, "");
  EXPECT_EQ(bools(run_ok("Less", {a, f32({2}, {2, 5})}, at_axis0, 6)),
            (std::vector<bool>{true, false, false, true, false, false}));
  expect_error(run_op("Less", {a, f32({2}, {2, 5})}, at_axis0, 9), Code::kInvalidModel, "");
  const Attrs bad_axis = [](io::NodeBuilder& n) { n.attr("broadcast", 1).attr("axis", 1); };
  expect_error(run_op("Mul", {a, a}, bad_axis, 6), Code::kInvalidModel, "does not fit");
}

// Mod exists from 10 and reads fmod.
TEST(KernelVersions, ModFromTen) {
  const Tensor a = i32({2}, {-7, 7});
  const Tensor b = i32({2}, {3, -3});
  EXPECT_EQ(values<int32_t>(run_ok("Mod", {a, b}, nullptr, 10)), (std::vector<int32_t>{2, -2}));
  const Attrs fmod = [](io::NodeBuilder& n) { n.attr("fmod", 1); };
  EXPECT_EQ(values<int32_t>(run_ok("Mod", {a, b}, fmod, 13)), (std::vector<int32_t>{-1, 1}));
  expect_error(run_op("Mod", {a, b}, nullptr, 9), Code::kUnsupported, "Mod");
}

// Constant's value_float/value_int(s)/value_string(s) exist from 12; before, only `value`.
TEST(KernelVersions, ConstantScalarAttributesFromTwelve) {
  const Attrs value_float = [](io::NodeBuilder& n) { n.attr("value_float", 2.5f); };
  expect_error(run_op("Constant", {}, value_float, 11), Code::kInvalidModel, "exactly one value attribute, got 0");
  const Tensor c = run_ok("Constant", {}, value_float, 12);
  EXPECT_EQ(c.dims(), Dims{});
  EXPECT_EQ(values_f32(c), (std::vector<float>{2.5f}));
  const Attrs value = [](io::NodeBuilder& n) { n.attr("value", i64({2}, {4, 5})); };
  EXPECT_EQ(values<int64_t>(run_ok("Constant", {}, value, 1)), (std::vector<int64_t>{4, 5}));
}

// Einsum exists from 12; its equation is checked at plan time.
TEST(KernelVersions, EinsumEquationAtPlanTime) {
  const Tensor a = f32({2, 2}, {1, 2, 3, 4});
  const Attrs trace = [](io::NodeBuilder& n) { n.attr("equation", "i i ->"); };
  EXPECT_EQ(values_f32(run_ok("Einsum", {a}, trace, 12)), (std::vector<float>{5}));
  expect_error(run_op("Einsum", {a}, trace, 11), Code::kUnsupported, "Einsum");
  expect_error(run_op("Einsum", {a}, nullptr, 12), Code::kInvalidModel,
               "node 'Einsum_0' (ai.onnx::Einsum): attribute equation is required");
}

// Ops whose version 1 differs from 6 only by `consumed_inputs` run from opset 1.
TEST(KernelVersions, VersionOneOpsRunFromOpsetOne) {
  const Tensor x = f32({3}, {-1, 0, 4});
  EXPECT_EQ(values_f32(run_ok("Relu", {x}, nullptr, 1)), (std::vector<float>{0, 0, 4}));
  EXPECT_EQ(values_f32(run_ok("Neg", {x}, nullptr, 5)), (std::vector<float>{1, -0.0f, -4}));
  EXPECT_EQ(values_f32(run_ok("Sqrt", {f32({2}, {4, 9})}, nullptr, 1)), (std::vector<float>{2, 3}));
  EXPECT_EQ(values_f32(run_ok("Sum", {x, x}, nullptr, 5)), (std::vector<float>{-2, 0, 8}));
  EXPECT_EQ(values_f32(run_ok("Max", {x, f32({3}, {0, 1, 2})}, nullptr, 1)), (std::vector<float>{0, 1, 4}));
}

// Slice-1..9 take starts/ends/axes as attributes; from 10 they (and steps) are inputs.
TEST(KernelVersions, SliceAttributesThenInputs) {
  const Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  const Attrs attrs = [](io::NodeBuilder& n) {
    n.attr("starts", std::vector<int64_t>{1}).attr("ends", std::vector<int64_t>{3}).attr("axes", std::vector<int64_t>{1});
  };
  EXPECT_EQ(values_f32(run_ok("Slice", {x}, attrs, 9)), (std::vector<float>{2, 3, 5, 6}));
  expect_error(run_op("Slice", {x}, attrs, 10), Code::kInvalidModel, "starts");
  EXPECT_EQ(values_f32(run_ok("Slice", {x, i64({1}, {0}), i64({1}, {1})}, nullptr, 10)), (std::vector<float>{1, 2, 3}));
}

// Every default-domain op of these kernel files: its ranges are contiguous from its first version
// with a kernel (the op's first ONNX version unless noted) to the newest opset.
TEST(KernelVersions, RangesAreContiguousFromTheFirstVersionToTheNewest) {
  const std::vector<std::pair<const char*, int>> first_versions = {
      {"Resize", 10}, {"Upsample", 7} /* Upsample-1: height_scale/width_scale */, {"Gather", 1},
      {"GatherElements", 11}, {"GatherND", 11}, {"Scatter", 9}, {"ScatterElements", 11}, {"ScatterND", 11},
      {"OneHot", 9}, {"Compress", 9}, {"NonZero", 9}, {"Reshape", 1}, {"Flatten", 1}, {"Squeeze", 1},
      {"Unsqueeze", 1}, {"Concat", 1}, {"Split", 2} /* Split-1: sizes as attribute or input */, {"Shape", 1},
      {"Size", 1}, {"Expand", 8}, {"Tile", 6} /* Tile-1: tiles and axis inputs */, {"DepthToSpace", 1},
      {"SpaceToDepth", 1}, {"Slice", 1}, {"Pad", 2} /* Pad-1: `paddings` */, {"Trilu", 14}, {"ReverseSequence", 10},
      {"Constant", 1}, {"ConstantOfShape", 9}, {"Range", 11}, {"EyeLike", 9}, {"ArgMax", 1}, {"ArgMin", 1},
      {"CumSum", 11}, {"TopK", 1}, {"Einsum", 12}, {"Transpose", 1}, {"Equal", 1}, {"Less", 1}, {"Greater", 1},
      {"And", 1}, {"Or", 1}, {"Xor", 1}, {"LessOrEqual", 12}, {"GreaterOrEqual", 12}, {"Not", 1}, {"BitShift", 11},
      {"BitwiseAnd", 18}, {"BitwiseOr", 18}, {"BitwiseXor", 18}, {"BitwiseNot", 18}, {"IsNaN", 9}, {"IsInf", 10},
      {"Add", 1}, {"Sub", 1}, {"Mul", 1}, {"Div", 1}, {"Pow", 1}, {"Mod", 10}, {"Max", 1}, {"Min", 1}, {"Sum", 1},
      {"Mean", 1}, {"Where", 9}, {"Neg", 1}, {"Abs", 1}, {"Sign", 9}, {"Sqrt", 1}, {"Reciprocal", 1}, {"Exp", 1},
      {"Log", 1}, {"Erf", 9}, {"Floor", 1}, {"Ceil", 1}, {"Round", 11}, {"Sin", 7}, {"Cos", 7}, {"Tan", 7},
      {"Asin", 7}, {"Acos", 7}, {"Atan", 7}, {"Sinh", 9}, {"Cosh", 9}, {"Asinh", 9}, {"Acosh", 9}, {"Atanh", 9},
      {"If", 1}, {"Loop", 1}, {"Scan", 8}, {"Det", 11}, {"Identity", 1}, {"Softmax", 1}, {"LogSoftmax", 1},
      {"Hardmax", 1}, {"Cast", 6} /* Cast-1: `to` as a string */, {"CastLike", 15}, {"QuantizeLinear", 10},
      {"DequantizeLinear", 10}, {"DynamicQuantizeLinear", 11}, {"Relu", 1}, {"Sigmoid", 1}, {"Tanh", 1},
      {"HardSwish", 14}, {"Softplus", 1}, {"Softsign", 1}, {"Mish", 18}, {"Gelu", 20}, {"Celu", 12},
      {"ThresholdedRelu", 10}, {"Shrink", 9}, {"ReduceSum", 1}, {"ReduceMax", 1}, {"ReduceMean", 1},
      // RNN-1/GRU-1,3/LSTM-1 had `output_sequence`; from 7.
      {"RNN", 7}, {"GRU", 7}, {"LSTM", 7}, {"DFT", 17}, {"STFT", 17}, {"HannWindow", 17}, {"HammingWindow", 17},
      {"BlackmanWindow", 17}, {"MelWeightMatrix", 17}, {"TfIdfVectorizer", 9}, {"StringNormalizer", 10},
      {"SequenceEmpty", 11}, {"SequenceConstruct", 11}, {"SequenceInsert", 11}, {"SequenceAt", 11},
      {"SequenceErase", 11}, {"SequenceLength", 11}, {"ConcatFromSequence", 11}, {"SplitToSequence", 11},
      {"SequenceMap", 17}, {"Optional", 15}, {"OptionalHasElement", 15}, {"OptionalGetElement", 15}, {"Bernoulli", 15}};
  const exec::KernelRegistry& r = exec::KernelRegistry::global();
  for (const auto& [op, first] : first_versions) {
    const std::vector<exec::VersionRange> ranges = r.version_ranges("", op);
    ASSERT_FALSE(ranges.empty()) << op;
    EXPECT_EQ(ranges.front().since, first) << op;
    for (size_t i = 1; i < ranges.size(); ++i) EXPECT_EQ(ranges[i].since, ranges[i - 1].until + 1) << op << " range " << i;
    EXPECT_EQ(ranges.back().until, exec::kNoUpperVersion) << op;
  }
}

// The version of the ONNX schema in force at `version`, or 0 when the op does not exist yet.
int schema_since(const std::string& op, int version) {
  const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(op, version, "");
  return s ? s->SinceVersion() : 0;
}

int library_newest_opset() { return onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at("").second; }

// Every default-domain range starts where ONNX defines a version of the op and ends where a later
// version changes it (or stays open), and no two ranges overlap: checked against the installed ONNX
// library's schemas (up to its newest opset; qonnx-cc's own 18..21 entries for overlap only).
TEST(KernelVersions, DefaultDomainRangesFollowOnnxVersions) {
  const exec::KernelRegistry& registry = exec::KernelRegistry::global();
  const int newest = library_newest_opset();
  int checked_ops = 0, checked_ranges = 0;
  for (const std::string& op : registry.ops_in_domain("")) {
    const std::vector<exec::VersionRange> ranges = registry.version_ranges("", op);
    ASSERT_FALSE(ranges.empty()) << op;
    for (size_t k = 0; k + 1 < ranges.size(); ++k)
      EXPECT_LT(ranges[k].until, ranges[k + 1].since) << op << ": ranges starting at " << ranges[k].since << " and "
                                                      << ranges[k + 1].since << " overlap";
    if (schema_since(op, newest) == 0) continue;  // not an ONNX op (QONNX ops allowed in the default domain)
    ++checked_ops;
    for (const exec::VersionRange& r : ranges) {
      ++checked_ranges;
      if (r.since <= newest) {
        EXPECT_EQ(schema_since(op, r.since), r.since)
            << op << ": a kernel range starts at " << r.since << ", which is not a version of the op in ONNX";
      }
      if (r.until < exec::kNoUpperVersion && r.until < newest) {
        EXPECT_EQ(schema_since(op, r.until + 1), r.until + 1)
            << op << ": a kernel range ends at " << r.until << " but ONNX changes the op only later";
      }
    }
  }
  std::printf("kernel version ranges: %d ONNX ops, %d ranges checked against ONNX opset <= %d\n", checked_ops,
              checked_ranges, newest);
  EXPECT_GE(checked_ops, 140);
}

}  // namespace
}  // namespace qonnx::test
