// The range analysis (qonnx/analysis/range.h): soundness of every tensor's interval against the executor
// on generated MLPs and CNNs (random and adversarial inputs, intermediates exposed), exactness of the
// accumulator ranges by brute force over every input of small 2..4-bit layers, and the witness: the
// input that takes each bound the weight's sign selects reaches the accumulator bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "qonnx/analysis/range.h"
#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/exec/executor.h"
#include "qonnx/io/model_builder.h"
#include "qonnx/io/model_io.h"
#include "qonnx/pass/pass.h"
#include "support/cli.h"
#include "support/range_check.h"
#include "support/temp_dir.h"
#include "support/test_util.h"

namespace qonnx {
namespace {

using analysis::Interval;
using analysis::RangeAnalysis;
using test::all_values;
using test::expect_inside;
using test::random_tensor;
using test::with_shapes;

constexpr const char* kQ = dialect::kGeneralDomain;

Tensor scalar_f(float v) { return test::f32s(v); }

// Quant(in) -> out with scalar parameters given as initializers named after `out`.
void add_quant(io::ModelBuilder& b, const std::string& in, const std::string& out, float scale, int bits,
               bool is_signed, bool narrow = false, const std::string& mode = "ROUND") {
  b.initializer(out + "_s", scalar_f(scale)).initializer(out + "_z", scalar_f(0)).initializer(out + "_b", scalar_f(bits));
  b.node("Quant", {in, out + "_s", out + "_z", out + "_b"}, {out}, kQ)
      .attr("signed", is_signed ? 1 : 0)
      .attr("narrow", narrow ? 1 : 0)
      .attr("rounding_mode", mode);
}

// Inputs: uniform random, all at one end, each element at a random end, and values at the rounding
// boundaries of a quantizer with `scale` (k + 1/2 steps, and one float on either side of them).
std::vector<Tensor> probe_inputs(std::mt19937& rng, const Dims& dims, float lo, float hi, float scale) {
  std::vector<Tensor> inputs;
  for (int i = 0; i < 40; ++i) inputs.push_back(random_tensor(rng, dims, lo, hi, false));
  for (float end : {lo, hi}) {
    Tensor t(DType::kFloat, dims);
    std::fill(t.data<float>(), t.data<float>() + t.numel(), end);
    inputs.push_back(t);
  }
  std::bernoulli_distribution coin(0.5);
  for (int i = 0; i < 20; ++i) {
    Tensor t(DType::kFloat, dims);
    for (int64_t e = 0; e < t.numel(); ++e) t.data<float>()[e] = coin(rng) ? lo : hi;
    inputs.push_back(t);
  }
  std::uniform_int_distribution<int> step(static_cast<int>(lo / scale) - 1, static_cast<int>(hi / scale) + 1);
  for (int i = 0; i < 20; ++i) {
    Tensor t(DType::kFloat, dims);
    for (int64_t e = 0; e < t.numel(); ++e) {
      float v = (static_cast<float>(step(rng)) + 0.5f) * scale;
      if (coin(rng)) v = std::nextafter(v, coin(rng) ? INFINITY : -INFINITY);
      t.data<float>()[e] = std::min(std::max(v, lo), hi);
    }
    inputs.push_back(t);
  }
  return inputs;
}

void check_sound(const ir::Model& model, const Dims& dims, float lo, float hi, float scale, unsigned seed) {
  analysis::RangeOptions options;
  options.input_ranges["x"] = {lo, hi};
  auto a = analysis::analyze_ranges(model, options);
  ASSERT_TRUE(a.is_ok()) << a.status().message();
  auto ex = exec::Executor::create(model);
  ASSERT_TRUE(ex.is_ok()) << ex.status().message();
  ASSERT_TRUE(ex->expose(all_values(model)).is_ok());
  std::mt19937 rng(seed);
  for (const Tensor& x : probe_inputs(rng, dims, lo, hi, scale)) {
    auto run = ex->run({{"x", x}});
    ASSERT_TRUE(run.is_ok()) << run.status().message();
    expect_inside(a.value(), run.value(), "seed " + std::to_string(seed));
  }
}

// x [2, K] -> Quant (signed 4 bits, 0.25) -> MatMul (Quant weights [C, K] with a per-output-channel
// scale, transposed as Brevitas exports them) -> Add
// bias -> Relu -> Quant (unsigned 3 bits) -> MatMul (integral weights) -> Mul 0.125 -> Clip.
io::ModelBuilder mlp(std::mt19937& rng, int64_t k, int64_t c1, int64_t c2) {
  io::ModelBuilder b;
  b.import(kQ, 1).input("x", DType::kFloat, {2, k}).output("y", DType::kFloat);
  add_quant(b, "x", "xq", 0.25f, 4, true);
  b.initializer("w1", random_tensor(rng, {c1, k}, -1.0f, 1.0f, false));
  b.initializer("w1_s", random_tensor(rng, {c1, 1}, 0.05f, 0.2f, false));
  b.initializer("w1_z", scalar_f(0)).initializer("w1_b", scalar_f(3));
  b.node("Quant", {"w1", "w1_s", "w1_z", "w1_b"}, {"w1q"}, kQ).attr("signed", 1).attr("narrow", 1).attr("rounding_mode", "ROUND");
  b.node("Transpose", {"w1q"}, {"w1t"}).attr("perm", std::vector<int64_t>{1, 0});
  b.node("MatMul", {"xq", "w1t"}, {"h1"});
  b.initializer("bias1", random_tensor(rng, {c1}, -0.5f, 0.5f, false));
  b.node("Add", {"h1", "bias1"}, {"h1b"});
  b.node("Relu", {"h1b"}, {"h1r"});
  add_quant(b, "h1r", "h1q", 0.5f, 3, false);
  b.initializer("w2", random_tensor(rng, {c1, c2}, -3.0f, 3.0f, true));
  b.node("MatMul", {"h1q", "w2"}, {"h2"});
  b.initializer("m", scalar_f(0.125f));
  b.node("Mul", {"h2", "m"}, {"h2m"});
  b.initializer("clip_lo", scalar_f(-1.0f)).initializer("clip_hi", scalar_f(2.0f));
  b.node("Clip", {"h2m", "clip_lo", "clip_hi"}, {"y"});
  return b;
}

// x [2, 2, 6, 6] -> Quant -> Conv 3x3 pad 1 (Quant weights, per-channel scale, bias) ->
// BatchNormalization -> Relu -> MaxPool
// 2x2 -> Quant (unsigned 2 bits) -> Conv 2x2 no pad (integral weights, 2 groups) -> Flatten -> Quant ->
// Gemm (transB, integral weights, bias) -> MultiThreshold.
io::ModelBuilder cnn(std::mt19937& rng) {
  io::ModelBuilder b;
  b.import(kQ, 1).input("x", DType::kFloat, {2, 2, 6, 6}).output("y", DType::kFloat);
  add_quant(b, "x", "xq", 0.5f, 3, true);
  b.initializer("w1", random_tensor(rng, {4, 2, 3, 3}, -1.0f, 1.0f, false));
  b.initializer("w1_s", random_tensor(rng, {4, 1, 1, 1}, 0.1f, 0.3f, false));
  b.initializer("w1_z", scalar_f(0)).initializer("w1_b", scalar_f(4));
  b.node("Quant", {"w1", "w1_s", "w1_z", "w1_b"}, {"w1q"}, kQ).attr("signed", 1).attr("narrow", 0).attr("rounding_mode", "ROUND");
  b.initializer("b1", random_tensor(rng, {4}, -0.5f, 0.5f, false));
  b.node("Conv", {"xq", "w1q", "b1"}, {"c1"}).attr("kernel_shape", std::vector<int64_t>{3, 3}).attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  b.initializer("bn_scale", random_tensor(rng, {4}, -2.0f, 2.0f, false));
  b.initializer("bn_bias", random_tensor(rng, {4}, -1.0f, 1.0f, false));
  b.initializer("bn_mean", random_tensor(rng, {4}, -0.5f, 0.5f, false));
  b.initializer("bn_var", random_tensor(rng, {4}, 0.1f, 2.0f, false));
  b.node("BatchNormalization", {"c1", "bn_scale", "bn_bias", "bn_mean", "bn_var"}, {"c1n"});
  b.node("Relu", {"c1n"}, {"c1r"});
  b.node("MaxPool", {"c1r"}, {"p1"}).attr("kernel_shape", std::vector<int64_t>{2, 2}).attr("strides", std::vector<int64_t>{2, 2});
  add_quant(b, "p1", "p1q", 0.25f, 2, false);
  b.initializer("w2", random_tensor(rng, {4, 2, 2, 2}, -4.0f, 4.0f, true));
  b.node("Conv", {"p1q", "w2"}, {"c2"}).attr("kernel_shape", std::vector<int64_t>{2, 2}).attr("group", 2);
  b.node("Flatten", {"c2"}, {"f"});
  add_quant(b, "f", "fq", 1.0f, 4, true);
  b.initializer("w3", random_tensor(rng, {3, 16}, -2.0f, 2.0f, true));
  b.initializer("b3", random_tensor(rng, {3}, -1.0f, 1.0f, false));
  b.node("Gemm", {"fq", "w3", "b3"}, {"g"}).attr("transB", 1);
  b.initializer("thr", Tensor(random_tensor(rng, {3, 4}, -2.0f, 2.0f, false)));
  b.node("MultiThreshold", {"g", "thr"}, {"y"}, kQ).attr("out_dtype", "UINT3").attr("out_scale", 0.5f).attr("out_bias", -1.0f);
  return b;
}

TEST(RangeAnalysis, MlpIntervalsHoldEveryObservedValue) {
  for (unsigned seed = 1; seed <= 6; ++seed) {
    std::mt19937 rng(seed);
    auto model = with_shapes(mlp(rng, 5, 4, 3));
    ASSERT_TRUE(model.is_ok()) << model.status().message();
    check_sound(model.value(), {2, 5}, -2.5f, 1.75f, 0.25f, seed);
  }
}

// Both MatMuls have integer inputs and integer weight codes (the first through Quant -> Transpose).
TEST(RangeAnalysis, MlpAccumulatorsSeeThroughTransposedQuantWeights) {
  std::mt19937 rng(2);
  auto model = with_shapes(mlp(rng, 5, 4, 3));
  ASSERT_TRUE(model.is_ok());
  auto a = analysis::analyze_ranges(model.value(), {});
  ASSERT_TRUE(a.is_ok());
  ASSERT_EQ(a->accumulators.size(), 2u);
  EXPECT_EQ(a->accumulators[0].reduction, 5);
  // Input codes [-8, 7], weight codes in [-3, 3] (3 bits, narrow): at most 5 * 8 * 3 in magnitude.
  EXPECT_LE(a->accumulators[0].max, 120);
  EXPECT_GE(a->accumulators[0].min, -120);
  EXPECT_EQ(a->accumulators[1].reduction, 4);
}

TEST(RangeAnalysis, CnnIntervalsHoldEveryObservedValue) {
  for (unsigned seed = 1; seed <= 4; ++seed) {
    std::mt19937 rng(seed);
    auto model = with_shapes(cnn(rng));
    ASSERT_TRUE(model.is_ok()) << model.status().message();
    check_sound(model.value(), {2, 2, 6, 6}, -2.0f, 1.5f, 0.5f, seed);
  }
}

TEST(RangeAnalysis, PerChannelRangesAreReportedAfterShapeInference) {
  std::mt19937 rng(3);
  auto model = with_shapes(cnn(rng));
  ASSERT_TRUE(model.is_ok());
  auto a = analysis::analyze_ranges(model.value(), {});
  ASSERT_TRUE(a.is_ok());
  EXPECT_EQ(a->tensors.at("c1").channels.size(), 4u);
  EXPECT_EQ(a->tensors.at("c1n").channels.size(), 4u);
  EXPECT_TRUE(std::isfinite(a->tensors.at("c1n").all.lo) && std::isfinite(a->tensors.at("c1n").all.hi));
  EXPECT_EQ(a->tensors.at("p1q").channels.size(), 4u);
  ASSERT_TRUE(a->tensors.at("p1q").scaled_int.has_value());
  // No input range given: the float input's range is everything, and the quantizer clamps it.
  EXPECT_EQ(a->tensors.at("xq").all.lo, -2.0);
  EXPECT_EQ(a->tensors.at("xq").all.hi, 1.5);
}

TEST(RangeAnalysis, UnhandledOpGetsTheWholeRangeAndANote) {
  io::ModelBuilder b;
  b.import(kQ, 1).input("x", DType::kFloat, {1, 1, 4}).output("y", DType::kFloat);
  add_quant(b, "x", "xq", 1.0f, 4, true);
  // InstanceNormalization divides by a data-dependent deviation: not bounded by the analysis.
  b.initializer("scale", test::f32({1}, {1.0f})).initializer("bias", test::f32({1}, {0.0f}));
  b.node("InstanceNormalization", {"xq", "scale", "bias"}, {"y"});
  auto model = b.build();
  ASSERT_TRUE(model.is_ok());
  auto a = analysis::analyze_ranges(model.value(), {});
  ASSERT_TRUE(a.is_ok());
  const analysis::TensorRange& y = a->tensors.at("y");
  EXPECT_TRUE(std::isinf(y.all.lo) && std::isinf(y.all.hi));
  EXPECT_NE(y.note.find("InstanceNormalization"), std::string::npos) << y.note;
}

// A single linear layer over every input of a quantizer: Quant(x) with scale 1 -> MatMul or Conv with
// integral weights. Returns the model; `n_inputs` elements per sample.
struct Layer {
  io::ModelBuilder builder;
  Dims x_dims;       // one sample
  int64_t channels;  // output channels (axis 1)
};

Layer matmul_layer(std::mt19937& rng, int64_t k, int64_t c, int bits, bool is_signed, bool narrow, int64_t batch) {
  Layer l{io::ModelBuilder(), {k}, c};
  l.builder.import(kQ, 1).input("x", DType::kFloat, {batch, k}).output("y", DType::kFloat);
  add_quant(l.builder, "x", "xq", 1.0f, bits, is_signed, narrow);
  l.builder.initializer("w", random_tensor(rng, {k, c}, -7.0f, 7.0f, true));
  l.builder.node("MatMul", {"xq", "w"}, {"y"});
  return l;
}

Layer conv_layer(std::mt19937& rng, int64_t c, int bits, bool is_signed, int64_t batch) {
  // x [N, 2, 2, 1], weights [C, 2, 2, 1]: one output position summing 4 inputs.
  Layer l{io::ModelBuilder(), {2, 2, 1}, c};
  l.builder.import(kQ, 1).input("x", DType::kFloat, {batch, 2, 2, 1}).output("y", DType::kFloat);
  add_quant(l.builder, "x", "xq", 1.0f, bits, is_signed);
  l.builder.initializer("w", random_tensor(rng, {c, 2, 2, 1}, -7.0f, 7.0f, true));
  l.builder.node("Conv", {"xq", "w"}, {"y"}).attr("kernel_shape", std::vector<int64_t>{2, 1});
  return l;
}

int64_t code_min(int bits, bool is_signed, bool narrow) {
  return is_signed ? -(int64_t{1} << (bits - 1)) + (narrow ? 1 : 0) : 0;
}
int64_t code_max(int bits, bool is_signed, bool narrow) {
  return is_signed ? (int64_t{1} << (bits - 1)) - 1 : (int64_t{1} << bits) - 1 - (narrow ? 1 : 0);
}

// Every combination of codes as a batch (x = code, scale 1), the observed min/max per output channel.
void brute_force(const std::string& what, std::mt19937& rng, bool conv, int bits, bool is_signed, bool narrow) {
  const int64_t lo = code_min(bits, is_signed, narrow), hi = code_max(bits, is_signed, narrow);
  const int64_t levels = hi - lo + 1;
  const int64_t k = conv ? 4 : (levels <= 4 ? 4 : 3);
  int64_t combos = 1;
  for (int64_t i = 0; i < k; ++i) combos *= levels;
  Layer l = conv ? conv_layer(rng, 3, bits, is_signed, combos) : matmul_layer(rng, k, 3, bits, is_signed, narrow, combos);
  auto model = l.builder.build();
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  Dims dims = l.x_dims;
  dims.insert(dims.begin(), combos);
  Tensor x(DType::kFloat, dims);
  for (int64_t n = 0; n < combos; ++n) {
    int64_t rest = n;
    for (int64_t e = 0; e < k; ++e, rest /= levels) x.data<float>()[n * k + e] = static_cast<float>(lo + rest % levels);
  }
  analysis::RangeOptions options;
  options.input_ranges["x"] = {-100, 100};
  auto a = analysis::analyze_ranges(model.value(), options);
  ASSERT_TRUE(a.is_ok());
  ASSERT_EQ(a->accumulators.size(), 1u) << what;
  ASSERT_TRUE(analysis::check_witnesses(model.value(), a.value(), "").is_ok());
  const analysis::Accumulator& acc = a->accumulators[0];
  auto ex = exec::Executor::create(model.value());
  ASSERT_TRUE(ex.is_ok());
  auto run = ex->run({{"x", x}});
  ASSERT_TRUE(run.is_ok()) << run.status().message();
  const Tensor& y = run->outputs[0];
  int64_t all_min = INT64_MAX, all_max = INT64_MIN;
  for (int64_t c = 0; c < l.channels; ++c) {
    int64_t mn = INT64_MAX, mx = INT64_MIN;
    for (int64_t n = 0; n < combos; ++n) {
      const int64_t v = static_cast<int64_t>(y.data<float>()[n * l.channels + c]);
      mn = std::min(mn, v);
      mx = std::max(mx, v);
    }
    EXPECT_EQ(acc.lo[static_cast<size_t>(c)], mn) << what << " channel " << c;
    EXPECT_EQ(acc.hi[static_cast<size_t>(c)], mx) << what << " channel " << c;
    all_min = std::min(all_min, mn);
    all_max = std::max(all_max, mx);
  }
  EXPECT_EQ(acc.signed_bits, analysis::signed_bits_for(all_min, all_max)) << what;
  EXPECT_TRUE(acc.attained) << what;
}

TEST(RangeAnalysis, AccumulatorRangesEqualBruteForceOverEveryInput) {
  std::mt19937 rng(7);
  for (int bits = 2; bits <= 4; ++bits)
    for (bool is_signed : {false, true})
      for (bool narrow : {false, true})
        for (bool conv : {false, true})
          for (int rep = 0; rep < 3; ++rep)
            brute_force(fmt::format("{} bits {} narrow {} {} rep {}", bits, is_signed ? "signed" : "unsigned", narrow,
                                    conv ? "Conv" : "MatMul", rep),
                        rng, conv, bits, is_signed, narrow && !conv);
}

TEST(RangeAnalysis, BitWidthsAreTheSmallestHoldingTheRange) {
  EXPECT_EQ(analysis::signed_bits_for(-128, 127), 8);
  EXPECT_EQ(analysis::signed_bits_for(-129, 0), 9);
  EXPECT_EQ(analysis::signed_bits_for(0, 128), 9);
  EXPECT_EQ(analysis::signed_bits_for(-1, 0), 1);
  EXPECT_EQ(analysis::signed_bits_for(0, 0), 1);
  EXPECT_EQ(analysis::unsigned_bits_for(0, 255), 8);
  EXPECT_EQ(analysis::unsigned_bits_for(0, 256), 9);
  EXPECT_EQ(analysis::unsigned_bits_for(0, 0), 1);
  EXPECT_EQ(analysis::unsigned_bits_for(-1, 3), 0);
  EXPECT_EQ(analysis::signed_bits_for(INT64_MIN, INT64_MAX), 64);
}

// A layer too wide to enumerate: the input that takes each element's bound by the weight's sign
// reaches the accumulator's max (and the opposite choice its min), per output channel.
TEST(RangeAnalysis, WitnessInputsReachEveryAccumulatorBound) {
  for (unsigned seed = 1; seed <= 5; ++seed) {
    std::mt19937 rng(seed);
    const int64_t k = 64, c = 8;
    const int bits = 4;
    Layer l = matmul_layer(rng, k, c, bits, true, false, 2 * c);
    auto model = l.builder.build();
    ASSERT_TRUE(model.is_ok());
    auto a = analysis::analyze_ranges(model.value(), {});
    ASSERT_TRUE(a.is_ok());
    ASSERT_EQ(a->accumulators.size(), 1u);
    ASSERT_TRUE(analysis::check_witnesses(model.value(), a.value(), "").is_ok());
    const analysis::Accumulator& acc = a->accumulators[0];
    EXPECT_TRUE(acc.attained) << acc.not_attained;
    auto w = model->graph().initializer_tensor(model->graph().find_value("w"));
    ASSERT_TRUE(w.is_ok());
    const float* wp = w->data<float>();
    const float lo = static_cast<float>(code_min(bits, true, false)), hi = static_cast<float>(code_max(bits, true, false));
    Tensor x(DType::kFloat, {2 * c, k});
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t e = 0; e < k; ++e) {
        const bool positive = wp[e * c + ch] > 0;
        x.data<float>()[(2 * ch) * k + e] = positive ? hi : lo;      // row 2ch: the max of channel ch
        x.data<float>()[(2 * ch + 1) * k + e] = positive ? lo : hi;  // row 2ch+1: its min
      }
    auto ex = exec::Executor::create(model.value());
    ASSERT_TRUE(ex.is_ok());
    auto run = ex->run({{"x", x}});
    ASSERT_TRUE(run.is_ok());
    const float* y = run->outputs[0].data<float>();
    // Integer inputs and weights: every partial sum is an exact float32, so the value range is the
    // accumulator range itself.
    const analysis::TensorRange& yr = a->tensors.at("y");
    ASSERT_EQ(yr.channels.size(), static_cast<size_t>(c));
    for (int64_t ch = 0; ch < c; ++ch) {
      EXPECT_EQ(yr.channels[static_cast<size_t>(ch)].lo, static_cast<double>(acc.lo[static_cast<size_t>(ch)]));
      EXPECT_EQ(yr.channels[static_cast<size_t>(ch)].hi, static_cast<double>(acc.hi[static_cast<size_t>(ch)]));
      EXPECT_EQ(static_cast<int64_t>(y[(2 * ch) * c + ch]), acc.hi[static_cast<size_t>(ch)]) << "seed " << seed;
      EXPECT_EQ(static_cast<int64_t>(y[(2 * ch + 1) * c + ch]), acc.lo[static_cast<size_t>(ch)]) << "seed " << seed;
    }
  }
}

// Padding reads zeros: the first Conv's input codes hold 0, so with or without the input's spatial
// dims its bound is attained (a witness reaches it in the executor). The later layers read pooled and
// summed values, whose elements cannot be set one by one: bounds, not attained.
TEST(RangeAnalysis, PaddedConvAccumulatorIsAttainedWhenTheGeometryIsKnown) {
  std::mt19937 rng(11);
  auto unshaped = cnn(rng).build();
  ASSERT_TRUE(unshaped.is_ok());
  auto b = analysis::analyze_ranges(unshaped.value(), {});
  ASSERT_TRUE(b.is_ok());
  ASSERT_GE(b->accumulators.size(), 1u);
  ASSERT_TRUE(analysis::check_witnesses(unshaped.value(), b.value(), "").is_ok());
  EXPECT_TRUE(b->accumulators[0].attained) << b->accumulators[0].not_attained;  // pads 1, dims unknown
  rng.seed(11);
  auto model = with_shapes(cnn(rng));
  ASSERT_TRUE(model.is_ok());
  auto a = analysis::analyze_ranges(model.value(), {});
  ASSERT_TRUE(a.is_ok());
  ASSERT_EQ(a->accumulators.size(), 3u);
  ASSERT_TRUE(analysis::check_witnesses(model.value(), a.value(), "").is_ok());
  EXPECT_TRUE(a->accumulators[0].attained) << a->accumulators[0].not_attained;  // Conv with pads 1
  EXPECT_NE(a->accumulators[1].not_attained.find("MaxPool"), std::string::npos) << a->accumulators[1].not_attained;
  EXPECT_NE(a->accumulators[2].not_attained.find("(Conv)"), std::string::npos) << a->accumulators[2].not_attained;
  EXPECT_EQ(a->accumulators[1].reduction, 2 * 2 * 2);
}

// An input range without 0 next to zero padding, every input (3^9 of them): without shapes every sum
// of every position lies in the accumulator range (border positions, which read zeros, included);
// with shapes the per-channel extremes over all positions are the accumulator range exactly.
void padded_conv_border_sums(bool shapes) {
  std::mt19937 rng(5);
  const int64_t combos = 19683;  // 3^9
  io::ModelBuilder b;
  b.import(kQ, 1).input("x", DType::kFloat, {combos, 1, 3, 3}).output("y", DType::kFloat);
  add_quant(b, "x", "xq", 1.0f, 4, true);
  b.initializer("w", random_tensor(rng, {2, 1, 3, 3}, -7.0f, 7.0f, true));
  b.node("Conv", {"xq", "w"}, {"y"}).attr("kernel_shape", std::vector<int64_t>{3, 3}).attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  auto model = shapes ? with_shapes(b) : b.build();
  ASSERT_TRUE(model.is_ok());
  analysis::RangeOptions options;
  options.input_ranges["x"] = {1, 3};
  auto a = analysis::analyze_ranges(model.value(), options);
  ASSERT_TRUE(a.is_ok());
  ASSERT_EQ(a->accumulators.size(), 1u);
  ASSERT_TRUE(analysis::check_witnesses(model.value(), a.value(), "").is_ok());
  const analysis::Accumulator& acc = a->accumulators[0];
  EXPECT_EQ(acc.attained, shapes) << acc.not_attained;
  Tensor x(DType::kFloat, {combos, 1, 3, 3});
  for (int64_t n = 0; n < combos; ++n) {
    int64_t rest = n;
    for (int64_t e = 0; e < 9; ++e, rest /= 3) x.data<float>()[n * 9 + e] = static_cast<float>(1 + rest % 3);
  }
  auto ex = exec::Executor::create(model.value());
  ASSERT_TRUE(ex.is_ok());
  auto run = ex->run({{"x", x}});
  ASSERT_TRUE(run.is_ok());
  const Tensor& y = run->outputs[0];
  const float* p = y.data<float>();
  std::vector<int64_t> lo(2, INT64_MAX), hi(2, INT64_MIN);
  for (int64_t i = 0; i < y.numel(); ++i) {
    const size_t c = static_cast<size_t>((i / 9) % 2);
    ASSERT_GE(static_cast<int64_t>(p[i]), acc.lo[c]) << i;
    ASSERT_LE(static_cast<int64_t>(p[i]), acc.hi[c]) << i;
    lo[c] = std::min(lo[c], static_cast<int64_t>(p[i]));
    hi[c] = std::max(hi[c], static_cast<int64_t>(p[i]));
  }
  if (shapes) {
    EXPECT_EQ(lo, acc.lo);
    EXPECT_EQ(hi, acc.hi);
    const analysis::TensorRange& yr = a->tensors.at("y");
    ASSERT_EQ(yr.channels.size(), 2u);
    for (size_t c = 0; c < 2; ++c) {
      EXPECT_EQ(yr.channels[c].lo, static_cast<double>(lo[c]));
      EXPECT_EQ(yr.channels[c].hi, static_cast<double>(hi[c]));
    }
  }
}

TEST(RangeAnalysis, PaddedConvAccumulatorHoldsTheBorderSums) { padded_conv_border_sums(false); }
TEST(RangeAnalysis, PaddedConvAccumulatorIsExactOverEveryInputWithShapes) { padded_conv_border_sums(true); }

// Every shared model the executor runs: with each float input in [-1, 1], random inputs and the two
// ends keep every exposed value inside its interval. Inputs beyond kMaxInputElements (a batch of
// 789444, a 256x256 image) would take the test past its time budget and are left out.
constexpr int64_t kMaxInputElements = 1 << 16;
// Checks one model file; false when it is not usable here (not loadable, non-float or large inputs,
// the executor refuses it).
bool model_file_is_sound(const std::filesystem::path& path) {
  auto loaded = io::load_model(path.string());
  if (!loaded.is_ok()) return false;
  ir::Model model = std::move(loaded).value();
  auto items = pass::parse_pipeline("infer-shapes");
  pass::PassContext ctx;
  if (!pass::run_pipeline(model, items.value(), ctx).is_ok()) return false;
  std::map<std::string, Dims> input_dims;
  analysis::RangeOptions options;
  for (const ir::Value* in : model.graph().runtime_inputs()) {
    auto type = model.graph().type_of(in);
    auto dims = model.graph().dims_of(in);
    if (!type || type->dtype != DType::kFloat || !dims) return false;
    for (auto& d : *dims) d = d < 0 ? 1 : d;
    if (checked_numel(*dims) > kMaxInputElements) return false;
    input_dims[in->name()] = *dims;
    options.input_ranges[in->name()] = {-1, 1};
  }
  if (input_dims.empty()) return false;
  auto ex = exec::Executor::create(model);
  if (!ex.is_ok() || !ex->expose(all_values(model)).is_ok()) return false;
  auto a = analysis::analyze_ranges(model, options);
  EXPECT_TRUE(a.is_ok()) << path << ": " << a.status().message();
  if (!a.is_ok()) return false;
  std::mt19937 rng(1);
  bool ran = false;
  for (int trial = 0; trial < 8; ++trial) {
    std::map<std::string, Tensor> feeds;
    for (const auto& [name, dims] : input_dims) {
      Tensor t = random_tensor(rng, dims, -1.0f, 1.0f, false);
      if (trial < 2) std::fill(t.data<float>(), t.data<float>() + t.numel(), trial == 0 ? -1.0f : 1.0f);
      feeds[name] = t;
    }
    auto run = ex->run(feeds);
    if (!run.is_ok()) break;
    ran = true;
    expect_inside(a.value(), run.value(), path.filename().string());
  }
  return ran;
}

TEST(RangeAnalysis, SharedModelIntervalsHoldEveryObservedValue) {
  const auto models = test::shared_models();
  if (models.empty()) GTEST_SKIP() << "no shared models here";
  int checked = 0;
  for (const auto& path : models) checked += model_file_is_sound(path) ? 1 : 0;
  EXPECT_GE(checked, 5);
}

class RangeCli : public test::TempDirTest {};

// The command prints the ranges and the accumulators of a file model, as text and as JSON, and names
// a bad --input-range.
TEST_F(RangeCli, PrintsRangesAndAccumulators) {
  std::mt19937 rng(4);
  Layer l = matmul_layer(rng, 3, 2, 2, true, false, 1);
  const std::string model = path("layer.onnx");
  ASSERT_TRUE(io::write_file_atomic(model, l.builder.serialize()).is_ok());
  auto text = test::run_cli("range " + model + " --input-range x=-1,0.5 --per-channel");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const size_t xq = text.out.find("\n  xq ");
  ASSERT_NE(xq, std::string::npos) << text.out;
  const std::string xq_row = text.out.substr(xq + 1, text.out.find('\n', xq + 1) - xq - 1);
  EXPECT_NE(xq_row.find(" [-1, 0]  "), std::string::npos) << xq_row;
  EXPECT_NE(xq_row.find("  [-1, 0] x 1, zero point 0"), std::string::npos) << xq_row;
  EXPECT_NE(text.out.find("\naccumulators (1):\n  node "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("\n  MatMul_1 "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("    [1] "), std::string::npos) << text.out;
  auto json = test::run_cli("range " + model + " --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"accumulators\""), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"signed_bits\""), std::string::npos) << json.out;
  auto bad = test::run_cli("range " + model + " --input-range y=0,1");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("'y' is not an input"), std::string::npos) << bad.err;
  auto reversed = test::run_cli("range " + model + " --input-range x=1,0");
  EXPECT_NE(reversed.exit_code, 0);
  EXPECT_NE(reversed.err.find("LO <= HI"), std::string::npos) << reversed.err;
}

// An annotated integer input is its own integer form: the accumulator of the layer reading it directly
// uses the annotation's range (UINT2 codes 0..3 against weights -2, 3: [-6, 9]).
TEST(RangeAnalysis, AnnotatedInputGivesTheIntegerRange) {
  io::ModelBuilder b;
  b.input("x", DType::kFloat, {1, 2}).output("y", DType::kFloat).annotate("x", "UINT2");
  b.initializer("w", test::f32({2, 1}, {-2.0f, 3.0f}));
  b.node("MatMul", {"x", "w"}, {"y"});
  auto model = b.build();
  ASSERT_TRUE(model.is_ok());
  auto a = analysis::analyze_ranges(model.value(), {});
  ASSERT_TRUE(a.is_ok());
  ASSERT_EQ(a->accumulators.size(), 1u);
  EXPECT_EQ(a->accumulators[0].min, -6);
  EXPECT_EQ(a->accumulators[0].max, 9);
  EXPECT_EQ(a->accumulators[0].signed_bits, 5);
  EXPECT_EQ(a->accumulators[0].unsigned_bits, 0);
  EXPECT_EQ(a->tensors.at("y").all.lo, -6.0);
  EXPECT_EQ(a->tensors.at("y").all.hi, 9.0);
}

// A quantizer whose scale varies along an axis other than 1 still bounds its output (every code at the
// corners of the scale range), and the executor agrees.
TEST(RangeAnalysis, QuantWithScaleAlongTheLastAxisIsBoundedSoundly) {
  io::ModelBuilder b;
  b.import(kQ, 1).input("x", DType::kFloat, {2, 3, 4}).output("y", DType::kFloat);
  b.initializer("s", test::f32({4}, {0.1f, 0.3f, 0.7f, 1.1f}));
  b.initializer("z", scalar_f(1)).initializer("bw", scalar_f(3));
  b.node("Quant", {"x", "s", "z", "bw"}, {"y"}, kQ).attr("signed", 1).attr("narrow", 0).attr("rounding_mode", "FLOOR");
  auto model = with_shapes(b);
  ASSERT_TRUE(model.is_ok());
  check_sound(model.value(), {2, 3, 4}, -5.0f, 5.0f, 0.1f, 1);
  auto a = analysis::analyze_ranges(model.value(), {});
  ASSERT_TRUE(a.is_ok());
  // Codes -4..3 minus zero point 1: -5..2, times scales up to 1.1.
  EXPECT_LE(a->tensors.at("y").all.lo, -5 * 1.1f);
  EXPECT_GE(a->tensors.at("y").all.hi, 2 * 1.1f);
  EXPECT_FALSE(a->tensors.at("y").note.empty());
}

// Binarized layers as Brevitas exports them: BipolarQuant input, BipolarQuant(W [C, K]) -> Transpose
// weights. Every one of the 2^8 inputs through the executor: the accumulator range is exact.
TEST(RangeAnalysis, BipolarLayerAccumulatorEqualsBruteForce) {
  std::mt19937 rng(9);
  const int64_t k = 8, c = 3, combos = 256;
  io::ModelBuilder b;
  b.import(kQ, 1).input("x", DType::kFloat, {combos, k}).output("y", DType::kFloat);
  b.initializer("one", scalar_f(1.0f)).initializer("w", random_tensor(rng, {c, k}, -1.0f, 1.0f, false));
  b.node("BipolarQuant", {"x", "one"}, {"xq"}, kQ);
  b.node("BipolarQuant", {"w", "one"}, {"wq"}, kQ);
  b.node("Transpose", {"wq"}, {"wt"}).attr("perm", std::vector<int64_t>{1, 0});
  b.node("MatMul", {"xq", "wt"}, {"y"});
  auto model = b.build();
  ASSERT_TRUE(model.is_ok());
  auto a = analysis::analyze_ranges(model.value(), {});
  ASSERT_TRUE(a.is_ok());
  ASSERT_EQ(a->accumulators.size(), 1u);
  Tensor x(DType::kFloat, {combos, k});
  for (int64_t n = 0; n < combos; ++n)
    for (int64_t e = 0; e < k; ++e) x.data<float>()[n * k + e] = (n >> e) & 1 ? 1.0f : -1.0f;
  auto ex = exec::Executor::create(model.value());
  ASSERT_TRUE(ex.is_ok());
  auto run = ex->run({{"x", x}});
  ASSERT_TRUE(run.is_ok());
  const float* y = run->outputs[0].data<float>();
  for (int64_t ch = 0; ch < c; ++ch) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (int64_t n = 0; n < combos; ++n) {
      lo = std::min(lo, static_cast<int64_t>(y[n * c + ch]));
      hi = std::max(hi, static_cast<int64_t>(y[n * c + ch]));
    }
    EXPECT_EQ(a->accumulators[0].lo[static_cast<size_t>(ch)], lo);
    EXPECT_EQ(a->accumulators[0].hi[static_cast<size_t>(ch)], hi);
  }
  EXPECT_EQ(a->accumulators[0].signed_bits, 5);  // [-8, 8]
}

// Near 2^31 float32 cannot tell the sums apart (FINN issue 1517: 32 bits where 33 were needed); the
// integer computation can: INT16 inputs against weights 32767, two terms fit 32 bits, three need 33.
TEST(RangeAnalysis, AccumulatorWidthsAreExactNearTwoToThe31) {
  for (int64_t k : {2, 3}) {
    io::ModelBuilder b;
    b.input("x", DType::kFloat, {1, k}).output("y", DType::kFloat).annotate("x", "INT16");
    b.initializer("w", test::f32({k, 1}, std::vector<float>(static_cast<size_t>(k), 32767.0f)));
    b.node("MatMul", {"x", "w"}, {"y"});
    auto model = b.build();
    ASSERT_TRUE(model.is_ok());
    auto a = analysis::analyze_ranges(model.value(), {});
    ASSERT_TRUE(a.is_ok());
    ASSERT_EQ(a->accumulators.size(), 1u);
    EXPECT_EQ(a->accumulators[0].min, k * 32767 * -32768);
    EXPECT_EQ(a->accumulators[0].max, k * 32767 * 32767);
    EXPECT_EQ(a->accumulators[0].signed_bits, k == 2 ? 32 : 33);
  }
}

}  // namespace
}  // namespace qonnx
