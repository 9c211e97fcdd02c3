// MatMul, Gemm, Einsum, Det, MatMulInteger, QLinearMatMul, QuantizeLinear, DequantizeLinear and
// DynamicQuantizeLinear kernels: exact values and error cases.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/test_util.h"

namespace qonnx::test {
namespace {

TEST(MatMulKernel, TwoByThreeTimesThreeByTwo) {
  Tensor y = run_ok("MatMul", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3, 2}, {7, 8, 9, 10, 11, 12})});
  EXPECT_EQ(y.dims(), (Dims{2, 2}));
  EXPECT_EQ(values_f32(y), (std::vector<float>{58, 64, 139, 154}));
}

TEST(MatMulKernel, VectorPromotionAndBatchBroadcast) {
  Tensor v = run_ok("MatMul", {f32({3}, {1, 2, 3}), f32({3, 2}, {1, 0, 0, 1, 1, 1})});
  EXPECT_EQ(v.dims(), (Dims{2}));
  EXPECT_EQ(values_f32(v), (std::vector<float>{4, 5}));
  // (2, 1, 1, 2) x (3, 2, 1) -> (2, 3, 1, 1)
  Tensor b = run_ok("MatMul", {f32({2, 1, 1, 2}, {1, 2, 3, 4}), f32({3, 2, 1}, {1, 1, 0, 1, 2, 0})});
  EXPECT_EQ(b.dims(), (Dims{2, 3, 1, 1}));
  EXPECT_EQ(values_f32(b), (std::vector<float>{3, 2, 2, 7, 4, 6}));
}

TEST(MatMulKernel, IntegersAreExact) {
  Tensor y = run_ok("MatMul", {i32({1, 2}, {2000000, 3}), i32({2, 1}, {1000, -7})});
  EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>{2000000000 - 21}));
}

TEST(MatMulKernel, InnerDimensionMismatch) {
  expect_error(run_op("MatMul", {f32({2, 3}, {}), f32({2, 2}, {})}), Code::kInvalidModel, "inner dimension");
  expect_error(run_op("MatMul", {f32({}, {1}), f32({2}, {})}), Code::kInvalidModel, "rank >= 1");
}

TEST(GemmKernel, TransposesAlphaBetaAndRowBias) {
  // A' = A^T (2x3 -> 3x2 stored as 2x3), B' = B^T.
  Tensor y = run_ok("Gemm", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({2, 2}, {1, 2, 3, 4}), f32({2}, {10, 20})},
                    [](io::NodeBuilder& n) { n.attr("transA", 1).attr("transB", 1).attr("alpha", 2.0f).attr("beta", 0.5f); });
  // A^T = [[1,4],[2,5],[3,6]], B^T = [[1,3],[2,4]]; A^T B^T = [[9,19],[12,26],[15,33]].
  EXPECT_EQ(values_f32(y), (std::vector<float>{23, 48, 29, 62, 35, 76}));
}

TEST(GemmKernel, OptionalCAndBadC) {
  Tensor y = run_ok("Gemm", {f32({1, 2}, {1, 2}), f32({2, 1}, {3, 4})});
  EXPECT_EQ(values_f32(y), (std::vector<float>{11}));
  expect_error(run_op("Gemm", {f32({2, 2}, {}), f32({2, 2}, {}), f32({3}, {})}), Code::kInvalidModel,
               "does not broadcast");
  expect_error(run_op("Gemm", {f32({2, 2, 1}, {}), f32({2, 2}, {})}), Code::kInvalidModel, "must be 2-D");
}

Tensor einsum(const std::string& eq, std::vector<Tensor> ins) {
  return run_ok("Einsum", std::move(ins), [eq](io::NodeBuilder& n) { n.attr("equation", eq); }, 12);
}

TEST(EinsumKernel, ExplicitImplicitDiagonalAndEllipsis) {
  Tensor a = f32({2, 2}, {1, 2, 3, 4}), b = f32({2, 2}, {5, 6, 7, 8});
  EXPECT_EQ(values_f32(einsum("ij,jk->ik", {a, b})), (std::vector<float>{19, 22, 43, 50}));
  // Implicit output: labels seen once, alphabetical ("ki" -> output "ik", a transpose of "ki").
  Tensor t = einsum("ki", {a});
  EXPECT_EQ(values_f32(t), (std::vector<float>{1, 3, 2, 4}));
  EXPECT_EQ(values_f32(einsum("ii->i", {a})), (std::vector<float>{1, 4}));
  Tensor trace = einsum("ii", {a});
  EXPECT_EQ(trace.dims(), Dims{});
  EXPECT_EQ(values_f32(trace), (std::vector<float>{5}));
  EXPECT_EQ(values_f32(einsum("...ij->...ji", {f32({1, 2, 2}, {1, 2, 3, 4})})), (std::vector<float>{1, 3, 2, 4}));
  EXPECT_EQ(values_f32(einsum("i,i,i", {f32({2}, {1, 2}), f32({2}, {3, 4}), f32({2}, {5, 6})})),
            (std::vector<float>{63}));
}

TEST(EinsumKernel, Errors) {
  auto eq = [](const std::string& e) { return [e](io::NodeBuilder& n) { n.attr("equation", e); }; };
  expect_error(run_op("Einsum", {f32({2, 2}, {})}, eq("ij,jk->ik"), 12), Code::kInvalidModel, "operands");
  expect_error(run_op("Einsum", {f32({2, 2}, {})}, eq("ijk"), 12), Code::kInvalidModel, "rank");
  expect_error(run_op("Einsum", {f32({2, 3}, {}), f32({2, 3}, {})}, eq("ij,jk"), 12), Code::kInvalidModel, "size");
  expect_error(run_op("Einsum", {f32({2, 2}, {})}, eq("ij->iz"), 12), Code::kInvalidModel, "unknown or repeated");
  expect_error(run_op("Einsum", {f32({2, 2}, {})}, eq("i-j"), 12), Code::kInvalidModel, "unexpected character");
}

TEST(EinsumKernel, EmptyContractionGivesZeros) {
  Tensor y = einsum("ij,jk->ik", {f32({2, 0}, {}), f32({0, 3}, {})});
  EXPECT_EQ(y.dims(), (Dims{2, 3}));
  EXPECT_EQ(values_f32(y), std::vector<float>(6, 0.0f));
  Tensor m = run_ok("MatMul", {f32({2, 0}, {}), f32({0, 3}, {})});
  EXPECT_EQ(values_f32(m), std::vector<float>(6, 0.0f));
}

TEST(DetKernel, PivotingAndBatches) {
  Tensor d = run_ok("Det", {f32({2, 3, 3}, {0, 1, 2, 1, 0, 3, 4, -3, 8, 2, 0, 0, 0, 3, 0, 0, 0, 4})});
  EXPECT_EQ(d.dims(), (Dims{2}));
  auto v = values_f32(d);
  EXPECT_FLOAT_EQ(v[0], -2.0f);
  EXPECT_FLOAT_EQ(v[1], 24.0f);
  expect_error(run_op("Det", {f32({2, 3}, {})}), Code::kInvalidModel, "square");
}

TEST(QuantizeLinearKernel, RoundsHalfToEvenThenAddsZeroPoint) {
  Tensor x = f32({6}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 1000.0f});
  // rne: 0 2 2 -0 -2 1000; + 1; int8 saturates at 127.
  EXPECT_EQ(values<int8_t>(run_ok("QuantizeLinear", {x, f32s(1.0f), i8({}, {1})})),
            (std::vector<int8_t>{1, 3, 3, 1, -1, 127}));
  // Without a zero point the output is uint8, saturating at 0.
  EXPECT_EQ(values<uint8_t>(run_ok("QuantizeLinear", {x, f32s(1.0f)}, nullptr, 10)),
            (std::vector<uint8_t>{0, 2, 2, 0, 0, 255}));
}

TEST(QuantizeLinearKernel, PerAxis) {
  Tensor x = f32({2, 2}, {2, 2, 4, 4});
  Tensor y = run_ok("QuantizeLinear", {x, f32({2}, {1, 2}), u8({2}, {0, 10})});
  EXPECT_EQ(values<uint8_t>(y), (std::vector<uint8_t>{2, 11, 4, 12}));
  Tensor y0 = run_ok("QuantizeLinear", {x, f32({2}, {1, 2}), u8({2}, {0, 10})}, [](io::NodeBuilder& n) { n.attr("axis", 0); });
  EXPECT_EQ(values<uint8_t>(y0), (std::vector<uint8_t>{2, 2, 12, 12}));
  expect_error(run_op("QuantizeLinear", {x, f32({2}, {1, 2}), u8({2}, {0, 0})}, nullptr, 10), Code::kInvalidModel,
               "scalar before opset 13");
  expect_error(run_op("QuantizeLinear", {x, f32({3}, {1, 2, 3}), u8({3}, {})}), Code::kInvalidModel, "per-axis");
  expect_error(run_op("QuantizeLinear", {x, f32({2}, {1, 2}), u8({1}, {0})}), Code::kInvalidModel, "zero point shape");
}

TEST(DequantizeLinearKernel, ZeroPointScaleAndInt32) {
  EXPECT_EQ(values_f32(run_ok("DequantizeLinear", {u8({3}, {0, 128, 255}), f32s(2.0f), u8({}, {128})})),
            (std::vector<float>{-256, 0, 254}));
  EXPECT_EQ(values_f32(run_ok("DequantizeLinear", {i32({2}, {-1000000, 7}), f32s(0.5f)})),
            (std::vector<float>{-500000, 3.5f}));
  Tensor pa = run_ok("DequantizeLinear", {i8({1, 2, 2}, {1, 1, 1, 1}), f32({2}, {1, 3}), i8({2}, {0, 2})});
  EXPECT_EQ(values_f32(pa), (std::vector<float>{1, 1, -3, -3}));
  expect_error(run_op("DequantizeLinear", {u8({2}, {}), f32s(1.0f), i8({}, {0})}), Code::kInvalidModel, "must be one type");
}

TEST(DynamicQuantizeLinearKernel, SpecExample) {
  auto r = run_op("DynamicQuantizeLinear", {f32({6}, {0, 2, -3, -2.5f, 1.34f, 0.5f})}, nullptr, 11, 3);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<uint8_t>(r.value()[0]), (std::vector<uint8_t>{153, 255, 0, 26, 221, 179}));
  EXPECT_FLOAT_EQ(values_f32(r.value()[1])[0], 5.0f / 255.0f);
  EXPECT_EQ(values<uint8_t>(r.value()[2]), (std::vector<uint8_t>{153}));
}

TEST(MatMulIntegerKernel, ScalarAndPerRowZeroPoints) {
  Tensor a = u8({2, 2}, {11, 12, 13, 14}), b = u8({2, 1}, {1, 2});
  EXPECT_EQ(values<int32_t>(run_ok("MatMulInteger", {a, b, u8({}, {10})})), (std::vector<int32_t>{5, 11}));
  EXPECT_EQ(values<int32_t>(run_ok("MatMulInteger", {a, b, u8({2}, {10, 12}), u8({}, {1})})),
            (std::vector<int32_t>{2, 2}));
  expect_error(run_op("MatMulInteger", {a, b, u8({3}, {1, 2, 3})}), Code::kInvalidModel, "does not fit");
  expect_error(run_op("MatMulInteger", {f32({2, 2}, {}), b}), Code::kInvalidModel, "is float, which MatMulInteger type parameter T1");
}

TEST(QLinearMatMulKernel, RequantizesWithRounding) {
  // (a - 1) x (b - 0) = [[2*1 + 3*1]] = 5; 5 * (0.5 * 1 / 1) = 2.5 -> 2 (ties to even) + 10.
  Tensor y = run_ok("QLinearMatMul", {u8({1, 2}, {3, 4}), f32s(0.5f), u8({}, {1}), u8({2, 1}, {1, 1}), f32s(1.0f),
                                      u8({}, {0}), f32s(1.0f), u8({}, {10})});
  EXPECT_EQ(values<uint8_t>(y), (std::vector<uint8_t>{12}));
  expect_error(run_op("QLinearMatMul", {u8({1, 2}, {}), f32({3}, {}), u8({}, {}), u8({2, 1}, {}), f32s(1.0f), u8({}, {}),
                                     f32s(1.0f), u8({}, {})}),
               Code::kInvalidModel, "scale shape");
}

}  // namespace
}  // namespace qonnx::test
