// gemm-to-matmul: the rewrite computes the Gemm kernel's bits wherever the pass says so (generated cases
// over alpha, beta, transA/transB, every C shape, short and long K, edge values), the one documented
// departure (alpha not 0 or +-2^e, with C) is warned and counted, and what is left is left with a warning.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "qonnx/exec/executor.h"
#include "qonnx/io/model_builder.h"
#include "qonnx/pass/pass.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {

enum class CShape { kNone, kFull, kRow, kRowMatrix, kColumn, kScalar };

struct GemmCase {
  int64_t m = 1, k = 1, n = 1;
  bool trans_a = false, trans_b = false;
  float alpha = 1, beta = 1;
  CShape c = CShape::kNone;
  bool b_constant = false;  // B an initializer (the kernel's prepacked transB path) or a graph input
  DType dtype = DType::kFloat;
};

Dims c_dims(const GemmCase& g) {
  switch (g.c) {
    case CShape::kFull: return {g.m, g.n};
    case CShape::kRow: return {g.n};
    case CShape::kRowMatrix: return {1, g.n};
    case CShape::kColumn: return {g.m, 1};
    case CShape::kScalar: return {};
    case CShape::kNone: break;
  }
  return {};
}

template <typename T>
Tensor filled(DType dtype, const Dims& dims, const std::function<T()>& next) {
  Tensor t(dtype, dims);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<T>()[i] = next();
  return t;
}

struct Built {
  ir::Model model;
  std::map<std::string, Tensor> feeds;
};

template <typename T>
Built build(const GemmCase& g, const std::function<T()>& value, int64_t opset = 13) {
  io::ModelBuilder b(opset);
  const Dims a_dims = g.trans_a ? Dims{g.k, g.m} : Dims{g.m, g.k};
  const Dims b_dims = g.trans_b ? Dims{g.n, g.k} : Dims{g.k, g.n};
  Built out;
  b.input("a", g.dtype, a_dims);
  out.feeds["a"] = filled<T>(g.dtype, a_dims, value);
  Tensor bt = filled<T>(g.dtype, b_dims, value);
  if (g.b_constant) {
    b.initializer("b", bt);
  } else {
    b.input("b", g.dtype, b_dims);
    out.feeds["b"] = bt;
  }
  std::vector<std::string> inputs = {"a", "b"};
  if (g.c != CShape::kNone) {
    b.input("c", g.dtype, c_dims(g));
    out.feeds["c"] = filled<T>(g.dtype, c_dims(g), value);
    inputs.push_back("c");
  }
  b.output("y", g.dtype, {g.m, g.n});
  b.node("Gemm", inputs, {"y"}).attr("alpha", g.alpha).attr("beta", g.beta).attr("transA", int64_t{g.trans_a}).attr("transB", int64_t{g.trans_b});
  out.model = b.build().value();
  return out;
}

// "" when both outputs hold the same bits (any NaN equals any NaN), else the first difference.
template <typename T>
std::string bits_differ(const Tensor& x, const Tensor& y) {
  if (x.dims() != y.dims() || x.dtype() != y.dtype()) return "dims or types differ";
  for (int64_t i = 0; i < x.numel(); ++i) {
    const T p = x.data<T>()[i], q = y.data<T>()[i];
    if (std::isnan(p) && std::isnan(q)) continue;
    if (std::memcmp(&p, &q, sizeof(T)) != 0) return fmt::format("element {}: {} vs {}", i, p, q);
  }
  return "";
}

Tensor run(const ir::Model& m, const std::map<std::string, Tensor>& feeds) {
  auto ex = exec::Executor::create(m);
  EXPECT_TRUE(ex.is_ok()) << ex.status().to_string();
  auto r = ex.value().run(feeds);
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  return r.value().outputs[0];
}

int64_t counter(const pass::PassContext& ctx, const std::string& name) {
  auto p = ctx.counters().find("gemm-to-matmul");
  if (p == ctx.counters().end()) return 0;
  auto c = p->second.find(name);
  return c == p->second.end() ? 0 : c->second;
}

bool has_op(const ir::Model& m, const std::string& op) {
  for (const auto& n : m.graph().nodes())
    if (n->op_type() == op) return true;
  return false;
}

// Rewrites `built` and returns the difference of the outputs ("" when bit-identical); the pass must
// rewrite the Gemm (counted) and warn exactly when `rounded_twice`.
template <typename T>
std::string rewrite_and_compare(const Built& built, bool rounded_twice, const std::string& label) {
  ir::Model rewritten = built.model.clone();
  pass::PassContext ctx;
  auto changed = run_passes(rewritten, "gemm-to-matmul", ctx);
  EXPECT_TRUE(changed.is_ok() && changed.value()) << label;
  EXPECT_FALSE(has_op(rewritten, "Gemm")) << label;
  EXPECT_EQ(counter(ctx, "rewritten"), 1) << label;
  EXPECT_EQ(counter(ctx, "rounded-twice"), rounded_twice ? 1 : 0) << label;
  EXPECT_EQ(ctx.diagnostics().size(), rounded_twice ? 1u : 0u) << label;
  return bits_differ<T>(run(built.model, built.feeds), run(rewritten, built.feeds));
}

const CShape kCShapes[] = {CShape::kNone, CShape::kFull, CShape::kRow, CShape::kRowMatrix, CShape::kColumn, CShape::kScalar};
// K of 1 up to 1100: below and above every blocking of the float product (and of onnxruntime's MLAS).
const int64_t kKs[] = {1, 3, 17, 64, 129, 300, 1100};

// Any float: wide magnitudes, zeros of both signs, infinities, NaN, subnormals, the largest finite.
template <typename T>
std::function<T()> any_values(std::mt19937& rng) {
  return [&rng]() -> T {
    using L = std::numeric_limits<T>;
    const T edges[] = {T(0), -T(0), L::infinity(), -L::infinity(), L::quiet_NaN(), L::denorm_min(), -L::denorm_min() * 37,
                       L::min(), -L::min(), L::max(), -L::max(), T(1.5), T(-3)};
    if (rng() % 8 == 0) return edges[rng() % (sizeof(edges) / sizeof(edges[0]))];
    const T mantissa = std::uniform_real_distribution<T>(-2, 2)(rng);
    return std::ldexp(mantissa, static_cast<int>(rng() % 61) - 30);
  };
}

// Floats whose products and sums stay far inside the normal range (for alpha = +-2^e).
template <typename T>
std::function<T()> moderate_values(std::mt19937& rng) {
  return [&rng]() -> T {
    const T mantissa = std::uniform_real_distribution<T>(-2, 2)(rng);
    return std::ldexp(mantissa, static_cast<int>(rng() % 21) - 10);
  };
}

// Every alpha/beta/transA/transB/C combination, each with a K from kKs in turn and a B that is an
// initializer every other case: the rewrite gives the Gemm kernel's bits. alpha 1, -1, 0 (and any alpha
// without C or with beta = 0) on any values; alpha +-2^e on values that keep alpha * A * B normal.
template <typename T>
void expect_exact_over_the_class(DType dtype, int64_t ms, int64_t ns) {
  std::mt19937 rng(20240524);
  int cases = 0;
  size_t k_index = 0;
  for (float alpha : {1.0f, -1.0f, 0.0f, 0.5f, 4.0f, -0.25f, 0.3f})
    for (float beta : {1.0f, 0.0f, 0.3f, -2.0f})
      for (CShape c : kCShapes)
        for (int trans = 0; trans < 4; ++trans) {
          GemmCase g;
          g.dtype = dtype;
          g.m = 1 + static_cast<int64_t>(rng() % ms), g.n = 1 + static_cast<int64_t>(rng() % ns);
          g.k = kKs[k_index++ % (sizeof(kKs) / sizeof(kKs[0]))];
          g.trans_a = trans & 1, g.trans_b = trans & 2;
          g.alpha = alpha, g.beta = beta, g.c = c;
          g.b_constant = cases % 2 == 1;
          const bool reads_c = c != CShape::kNone && beta != 0.0f;
          const bool power_of_two = alpha == 0.5f || alpha == 4.0f || alpha == -0.25f;
          if (alpha == 0.3f && reads_c) continue;  // rounds twice: RoundedTwiceIsWarnedAndCounted
          const std::string label = fmt::format("m {} k {} n {} transA {} transB {} alpha {} beta {} C {} B {}", g.m, g.k,
                                                g.n, g.trans_a, g.trans_b, alpha, beta, static_cast<int>(c),
                                                g.b_constant ? "constant" : "input");
          Built built = power_of_two && reads_c ? build<T>(g, moderate_values<T>(rng)) : build<T>(g, any_values<T>(rng));
          EXPECT_EQ(rewrite_and_compare<T>(built, false, label), "") << label;
          ++cases;
        }
  EXPECT_GT(cases, 600);
}

TEST(GemmToMatMul, BitIdenticalToTheGemmKernelFloat32) { expect_exact_over_the_class<float>(DType::kFloat, 6, 40); }

TEST(GemmToMatMul, BitIdenticalToTheGemmKernelFloat64) { expect_exact_over_the_class<double>(DType::kDouble, 3, 9); }

// alpha 0.3 with C: Mul rounds alpha * A * B, then Add rounds the sum, where the kernel's fma rounds once.
// The pass warns and counts it; some elements differ in the last bit; exact-only=1 leaves the Gemm.
TEST(GemmToMatMul, RoundedTwiceIsWarnedAndCounted) {
  std::mt19937 rng(7);
  GemmCase g;
  g.m = 8, g.k = 5, g.n = 64, g.alpha = 0.3f, g.beta = 1.0f, g.c = CShape::kFull;
  Built built = build<float>(g, moderate_values<float>(rng));
  const std::string diff = rewrite_and_compare<float>(built, true, "alpha 0.3");
  EXPECT_NE(diff, "") << "expected at least one element rounded differently";

  ir::Model kept = built.model.clone();
  pass::PassContext ctx;
  ASSERT_TRUE(run_passes(kept, "gemm-to-matmul{exact-only=1}", ctx).is_ok());
  EXPECT_TRUE(has_op(kept, "Gemm"));
  EXPECT_EQ(counter(ctx, "left"), 1);
  ASSERT_EQ(ctx.diagnostics().size(), 1u);
  EXPECT_NE(ctx.diagnostics()[0].message.find("exact-only"), std::string::npos) << ctx.diagnostics()[0].message;
}

// alpha = 2^e is exact only while alpha * A * B stays finite and normal: here A * B = 2^127, alpha 2 and
// C = -2^127. The kernel's fma gives 2^127; Mul overflows to inf first.
TEST(GemmToMatMul, PowerOfTwoAlphaDepartsOnlyOutsideTheNormalRange) {
  GemmCase g;
  g.alpha = 2.0f, g.c = CShape::kFull;
  const float big = std::ldexp(1.0f, 127);
  const float a_b_c[] = {big, 1.0f, -big};  // filled in the order A, B, C
  size_t next = 0;
  Built built = build<float>(g, std::function<float()>([&] { return a_b_c[next++]; }));
  EXPECT_EQ(values_f32(run(built.model, built.feeds)), std::vector<float>{big});
  EXPECT_EQ(rewrite_and_compare<float>(built, false, "overflow"), "element 0: 1.7014118e+38 vs inf");
}

TEST(GemmToMatMul, LeavesWhatItCannotRewriteExactly) {
  std::mt19937 rng(3);
  auto expect_left = [](ir::Model m, const std::string& why) {
    pass::PassContext ctx;
    auto changed = run_passes(m, "gemm-to-matmul", ctx);
    ASSERT_TRUE(changed.is_ok()) << changed.status().to_string();
    EXPECT_FALSE(changed.value());
    EXPECT_TRUE(has_op(m, "Gemm"));
    EXPECT_EQ(counter(ctx, "left"), 1);
    ASSERT_EQ(ctx.diagnostics().size(), 1u);
    EXPECT_NE(ctx.diagnostics()[0].message.find(why), std::string::npos) << ctx.diagnostics()[0].message;
  };
  GemmCase g;
  g.m = 2, g.k = 3, g.n = 4, g.c = CShape::kRow;
  expect_left(build<float>(g, moderate_values<float>(rng), 6).model, "opset 6 is below 7");
  g.dtype = DType::kInt32;
  expect_left(build<int32_t>(g, [&]() { return static_cast<int32_t>(rng() % 100); }).model, "int32 is not rewritten");
}

// A chain of Gemms whose intermediate values have no declared type: the type comes from B.
TEST(GemmToMatMul, RewritesAChainWithoutValueInfo) {
  io::ModelBuilder b(13);
  b.input("x", DType::kFloat, {2, 3}).output("y", DType::kFloat, {2, 2});
  b.initializer("w1", f32({3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})).initializer("w2", f32({2, 4}, {1, 0, -1, 2, 0.5f, 1, 0, -2}));
  b.node("Gemm", {"x", "w1"}, {"h"});
  b.node("Gemm", {"h", "w2"}, {"y"}).attr("transB", int64_t{1});
  ir::Model m = b.build().value();
  const ir::Model original = m.clone();
  pass::PassContext ctx;
  ASSERT_TRUE(run_passes(m, "gemm-to-matmul", ctx).is_ok());
  EXPECT_FALSE(has_op(m, "Gemm"));
  EXPECT_EQ(counter(ctx, "rewritten"), 2);
  const std::map<std::string, Tensor> feeds = {{"x", f32({2, 3}, {0.5f, -1, 2, 3, 0.25f, -4})}};
  EXPECT_EQ(bits_differ<float>(run(original, feeds), run(m, feeds)), "");
}

}  // namespace
}  // namespace qonnx::test
