// qonnx-cc range: witnesses of accumulator bounds (checked by running them), --annotate, and the
// widths MultiThreshold thresholds need (issue 25).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <regex>

#include "qonnx/analysis/datatypes.h"
#include "qonnx/analysis/range.h"
#include "qonnx/analysis/range_report.h"
#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/exec/executor.h"
#include "qonnx/io/model_builder.h"
#include "qonnx/io/model_io.h"
#include "qonnx/io/tensor_file.h"
#include "qonnx/pass/pass.h"
#include "support/range_check.h"
#include "support/cli.h"
#include "support/temp_dir.h"
#include "support/test_util.h"

namespace qonnx {
namespace {
using test::random_tensor;
using test::with_shapes;

namespace fs = std::filesystem;
using analysis::Accumulator;
using analysis::RangeAnalysis;

constexpr const char* kQ = dialect::kGeneralDomain;

// Quant(in) -> out; scale a scalar or a tensor.
void add_quant(io::ModelBuilder& b, const std::string& in, const std::string& out, const Tensor& scale, int bits,
               bool is_signed, bool narrow = false) {
  b.initializer(out + "_s", scale).initializer(out + "_z", test::f32s(0)).initializer(out + "_b", test::f32s(static_cast<float>(bits)));
  b.node("Quant", {in, out + "_s", out + "_z", out + "_b"}, {out}, kQ)
      .attr("signed", is_signed ? 1 : 0)
      .attr("narrow", narrow ? 1 : 0)
      .attr("rounding_mode", "ROUND");
}

// A generated first layer: its output `y`, the scale of the input integers and the weight scale of each
// output channel (powers of two, so the executor's sums are exact and y / scales is the accumulator),
// and a bias per channel (on the same grid) or none.
struct Case {
  std::string what;
  io::ModelBuilder builder;
  std::string input = "x";
  Dims input_dims;
  analysis::Interval input_range;
  float x_scale = 1;
  std::vector<float> w_scale;
  std::vector<float> bias;
  bool conv = false;
  bool expect_attained = true;
};

float power_of_two(std::mt19937& rng, int lo, int hi) {
  return std::ldexp(1.0f, std::uniform_int_distribution<int>(lo, hi)(rng));
}

// Quant weights [rows, cols] (or the Conv's dims) with a per-output-channel power-of-two scale along
// `axis`, named w; returns the scales.
std::vector<float> add_quant_weight(io::ModelBuilder& b, std::mt19937& rng, const Dims& dims, int64_t axis, int bits) {
  const int64_t channels = dims[static_cast<size_t>(axis)];
  Dims sdims(dims.size(), 1);
  sdims[static_cast<size_t>(axis)] = channels;
  Tensor s(DType::kFloat, sdims);
  std::vector<float> scales;
  for (int64_t c = 0; c < channels; ++c) scales.push_back(s.data<float>()[c] = power_of_two(rng, -3, 0));
  // Raw weights spread over the code range (and beyond, to hit the clamp).
  const float reach = std::ldexp(1.0f, bits - 1) * 1.2f;
  Tensor w(DType::kFloat, dims);
  std::uniform_real_distribution<float> u(-reach, reach);
  const int64_t inner = [&] {
    int64_t n = 1;
    for (size_t d = static_cast<size_t>(axis) + 1; d < dims.size(); ++d) n *= dims[d];
    return n;
  }();
  for (int64_t i = 0; i < w.numel(); ++i) w.data<float>()[i] = u(rng) * scales[static_cast<size_t>((i / inner) % channels)];
  b.initializer("w_raw", w);
  add_quant(b, "w_raw", "w", s, bits, true, true);
  return scales;
}

// x [2, K] (or through a Mul by a negative constant, or a Reshape) -> Quant -> MatMul / Gemm, optionally
// followed by a second layer the witness cannot reach.
Case mlp_case(std::mt19937& rng, int bits, bool is_signed, bool gemm, int variant) {
  Case c;
  const int64_t k = std::uniform_int_distribution<int64_t>(3, 24)(rng), out = std::uniform_int_distribution<int64_t>(2, 6)(rng);
  c.what = fmt::format("mlp bits {} {} {} variant {} K {} C {}", bits, is_signed ? "signed" : "unsigned",
                       gemm ? "Gemm" : "MatMul", variant, k, out);
  c.x_scale = power_of_two(rng, -3, 0);
  auto& b = c.builder;
  b.import(kQ, 1).output("y2", DType::kFloat);
  std::string q_in = "x";
  if (variant == 1) {  // a decreasing path: the high input end gives the low codes
    c.input_dims = {2, k};
    b.input("x", DType::kFloat, c.input_dims);
    b.initializer("neg", test::f32s(-0.5f));
    b.node("Mul", {"x", "neg"}, {"xm"});
    q_in = "xm";
  } else if (variant == 2) {  // data movement: [2, K/.., ..] -> Reshape -> [2, K]
    c.input_dims = {2, 1, k};
    b.input("x", DType::kFloat, c.input_dims);
    b.initializer("shape", test::i64({2}, {2, k}));
    b.node("Reshape", {"x", "shape"}, {"xr"});
    q_in = "xr";
  } else {
    c.input_dims = {2, k};
    b.input("x", DType::kFloat, c.input_dims);
  }
  add_quant(b, q_in, "xq", test::f32s(c.x_scale), bits, is_signed);
  c.input_range = {-3.0 * std::ldexp(1.0, bits) * c.x_scale, 3.0 * std::ldexp(1.0, bits) * c.x_scale};
  if (gemm) {
    c.w_scale = add_quant_weight(b, rng, {out, k}, 0, bits);
    for (int64_t o = 0; o < out; ++o) c.bias.push_back(std::ldexp(std::round(std::uniform_real_distribution<float>(-8, 8)(rng)), -6));
    b.initializer("bias", test::f32({static_cast<int64_t>(c.bias.size())}, c.bias));
    b.node("Gemm", {"xq", "w", "bias"}, {"y"}).attr("transB", 1);
  } else {
    c.w_scale = add_quant_weight(b, rng, {k, out}, 1, bits);
    b.node("MatMul", {"xq", "w"}, {"y"});
  }
  // A second layer behind a Relu and a quantizer: its input elements are sums, not free.
  b.node("Relu", {"y"}, {"yr"});
  add_quant(b, "yr", "yq", test::f32s(0.5f), 3, false);
  b.initializer("w2", random_tensor(rng, {out, 2}, -3, 3, true));
  b.node("MatMul", {"yq", "w2"}, {"y2"});
  return c;
}

// x [1, Cin, H, W] (or channels-last through a Transpose) -> Quant -> Conv, with or without padding,
// stride, groups.
Case cnn_case(std::mt19937& rng, int bits, bool is_signed, bool padded, int variant) {
  Case c;
  c.conv = true;
  const int64_t groups = variant == 2 ? 2 : 1, cin = 2 * groups, cout = 2 * groups;
  const int64_t h = std::uniform_int_distribution<int64_t>(3, 6)(rng), w = std::uniform_int_distribution<int64_t>(3, 6)(rng);
  const int64_t stride = variant == 1 ? 2 : 1;
  c.what = fmt::format("cnn bits {} {} padded {} variant {} {}x{}", bits, is_signed ? "signed" : "unsigned", padded, variant, h, w);
  c.x_scale = power_of_two(rng, -2, 0);
  auto& b = c.builder;
  b.import(kQ, 1).output("y", DType::kFloat);
  std::string q_in = "x";
  if (variant == 3) {
    c.input_dims = {1, h, w, cin};
    b.input("x", DType::kFloat, c.input_dims);
    b.node("Transpose", {"x"}, {"xt"}).attr("perm", std::vector<int64_t>{0, 3, 1, 2});
    q_in = "xt";
  } else {
    c.input_dims = {1, cin, h, w};
    b.input("x", DType::kFloat, c.input_dims);
  }
  add_quant(b, q_in, "xq", test::f32s(c.x_scale), bits, is_signed);
  c.input_range = {-2.0 * std::ldexp(1.0, bits) * c.x_scale, 2.0 * std::ldexp(1.0, bits) * c.x_scale};
  c.w_scale = add_quant_weight(b, rng, {cout, cin / groups, 3, 3}, 0, bits);
  auto node = b.node("Conv", {"xq", "w"}, {"y"});
  node.attr("kernel_shape", std::vector<int64_t>{3, 3}).attr("strides", std::vector<int64_t>{stride, stride}).attr("group", groups);
  if (padded) node.attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  return c;
}

// The executor's accumulator at every element of channel c: (y - bias) / scales, exact here.
double accumulator_of(const Case& c, const Tensor& y, int64_t i, int64_t channel) {
  const double bias = c.bias.empty() ? 0.0 : c.bias[static_cast<size_t>(channel)];
  return (y.data<float>()[i] - bias) / (static_cast<double>(c.x_scale) * c.w_scale[static_cast<size_t>(channel)]);
}

// Runs the model on a witness folder's input_0.pb and returns the extreme accumulator over the output.
void expect_witness_reaches(const Case& c, const ir::Model& model, const std::string& dir, bool max, int64_t bound) {
  ASSERT_TRUE(fs::exists(fs::path(dir) / "input_0.pb")) << c.what << ": " << dir;
  ASSERT_TRUE(fs::exists(fs::path(dir) / "witness.txt")) << c.what;
  auto input = io::read_tensor_file(fs::path(dir) / "input_0.pb");
  ASSERT_TRUE(input.is_ok()) << input.status().message();
  EXPECT_EQ(input->name, c.input);
  EXPECT_EQ(input->tensor.dims(), c.input_dims);
  for (int64_t i = 0; i < input->tensor.numel(); ++i) {
    const float v = input->tensor.data<float>()[i];
    ASSERT_TRUE(v >= c.input_range.lo && v <= c.input_range.hi) << c.what << ": witness input outside the range";
  }
  auto ex = exec::Executor::create(model);
  ASSERT_TRUE(ex.is_ok());
  ASSERT_TRUE(ex->expose({"y"}).is_ok());
  auto run = ex->run({{c.input, input->tensor}});
  ASSERT_TRUE(run.is_ok()) << run.status().message();
  const Tensor& y = run->exposed.at("y");
  const int64_t channels = static_cast<int64_t>(c.w_scale.size());
  const int64_t inner = c.conv ? y.numel() / y.dim(0) / channels : 1;
  double extreme = max ? -INFINITY : INFINITY;
  for (int64_t i = 0; i < y.numel(); ++i) {
    const int64_t ch = c.conv ? (i / inner) % channels : i % channels;
    const double acc = accumulator_of(c, y, i, ch);
    ASSERT_EQ(acc, std::round(acc)) << c.what << ": not an exact accumulator";
    extreme = max ? std::max(extreme, acc) : std::min(extreme, acc);
  }
  EXPECT_EQ(extreme, static_cast<double>(bound)) << c.what << (max ? " max" : " min");
}

void check_case(Case c, const fs::path& root) {
  auto model = with_shapes(c.builder);
  ASSERT_TRUE(model.is_ok()) << c.what << ": " << model.status().message();
  analysis::RangeOptions options;
  options.input_ranges[c.input] = c.input_range;
  auto a = analysis::analyze_ranges(model.value(), options);
  ASSERT_TRUE(a.is_ok()) << a.status().message();
  ASSERT_GE(a->accumulators.size(), 1u) << c.what;
  const fs::path dir = root / fmt::format("w{}", std::hash<std::string>{}(c.what));
  auto witnesses = analysis::check_witnesses(model.value(), a.value(), dir.string());
  ASSERT_TRUE(witnesses.is_ok()) << witnesses.status().message();
  ASSERT_EQ(witnesses->size(), 2 * a->accumulators.size());
  const Accumulator& first = a->accumulators[0];
  EXPECT_TRUE(first.attained) << c.what << ": " << first.not_attained;
  for (const analysis::Witness& w : witnesses.value()) {
    if (w.accumulator != 0) continue;
    ASSERT_TRUE(w.attained) << c.what << ": " << w.why;
    EXPECT_EQ(w.bound, w.max ? first.max : first.min);
    expect_witness_reaches(c, model.value(), w.dir, w.max, w.bound);
  }
  // The layer behind the first one reads sums: a bound, not attained, and the report says why.
  for (size_t i = 1; i < a->accumulators.size(); ++i) {
    EXPECT_FALSE(a->accumulators[i].attained) << c.what;
    EXPECT_NE(a->accumulators[i].not_attained.find("cannot be set one by one"), std::string::npos)
        << c.what << ": " << a->accumulators[i].not_attained;
  }
  const std::string text = analysis::range_text(model->graph(), a.value(), {});
  if (a->accumulators.size() > 1) {
    EXPECT_NE(text.find("bound, not attained ("), std::string::npos) << text;
  }
}

class RangeWitness : public test::TempDirTest {};

TEST_F(RangeWitness, MlpWitnessesReachTheBoundsInTheExecutor) {
  int cases = 0;
  for (unsigned seed = 1; seed <= 3; ++seed) {
    std::mt19937 rng(seed);
    for (int bits : {2, 3, 5})
      for (bool is_signed : {false, true})
        for (bool gemm : {false, true})
          for (int variant : {0, 1, 2}) {
            check_case(mlp_case(rng, bits, is_signed, gemm, variant), dir_);
            ++cases;
          }
  }
  EXPECT_EQ(cases, 108);
}

TEST_F(RangeWitness, CnnWitnessesReachTheBoundsInTheExecutor) {
  for (unsigned seed = 1; seed <= 3; ++seed) {
    std::mt19937 rng(100 + seed);
    for (int bits : {2, 4})
      for (bool is_signed : {false, true})
        for (bool padded : {false, true})
          for (int variant : {0, 1, 2, 3}) check_case(cnn_case(rng, bits, is_signed, padded, variant), dir_);
  }
}

// A layer reading an annotated graph input directly (no quantizer): the input's integers are set by
// hand-derived sign choice, INT3 codes -4..3 against every weight.
TEST_F(RangeWitness, AnnotatedGraphInputIsItsOwnWitness) {
  for (unsigned seed = 1; seed <= 4; ++seed) {
    std::mt19937 rng(seed);
    Tensor w = random_tensor(rng, {5, 2}, -4, 4, true);
    io::ModelBuilder b;
    b.input("x", DType::kFloat, {1, 5}).output("y", DType::kFloat).annotate("x", "INT3");
    b.initializer("w", w);
    b.node("MatMul", {"x", "w"}, {"y"});
    auto model = with_shapes(b);
    ASSERT_TRUE(model.is_ok());
    auto a = analysis::analyze_ranges(model.value(), {});
    ASSERT_TRUE(a.is_ok());
    auto witnesses = analysis::check_witnesses(model.value(), a.value(), "");
    ASSERT_TRUE(witnesses.is_ok());
    // The bounds by hand: per channel, each weight times -4 or 3, whichever is larger (smaller).
    int64_t mx = INT64_MIN, mn = INT64_MAX;
    for (int64_t c = 0; c < 2; ++c) {
      int64_t hi = 0, lo = 0;
      for (int64_t k = 0; k < 5; ++k) {
        const int64_t wv = static_cast<int64_t>(w.data<float>()[k * 2 + c]);
        hi += std::max(wv * -4, wv * 3);
        lo += std::min(wv * -4, wv * 3);
      }
      mx = std::max(mx, hi);
      mn = std::min(mn, lo);
    }
    for (const analysis::Witness& wit : witnesses.value()) {
      ASSERT_TRUE(wit.attained) << wit.why;
      EXPECT_EQ(wit.bound, wit.max ? mx : mn);
      EXPECT_EQ(wit.value, static_cast<double>(wit.bound));  // scale 1: the output is the accumulator
      for (int64_t k = 0; k < 5; ++k) {
        const float v = wit.inputs.at(0).data<float>()[k];
        EXPECT_TRUE(v == -4.0f || v == 3.0f) << v;
      }
    }
  }
}

// A padded Conv over an input range without 0 (after the quantizer: codes 1..3): the border sums read
// zeros the inputs cannot give, so the bound is only attained when an interior position exists.
TEST_F(RangeWitness, PaddingZerosOutsideTheRangeAreNotAttainedWithoutShapes) {
  std::mt19937 rng(3);
  io::ModelBuilder b;
  b.import(kQ, 1).input("x", DType::kFloat, {1, 1, 3, 3}).output("y", DType::kFloat);
  add_quant(b, "x", "xq", test::f32s(1), 4, true);
  b.initializer("w", random_tensor(rng, {2, 1, 3, 3}, -7, 7, true));
  b.node("Conv", {"xq", "w"}, {"y"}).attr("kernel_shape", std::vector<int64_t>{3, 3}).attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  analysis::RangeOptions options;
  options.input_ranges["x"] = {1, 3};
  for (bool shapes : {false, true}) {
    auto model = shapes ? with_shapes(b) : b.build();
    ASSERT_TRUE(model.is_ok());
    auto a = analysis::analyze_ranges(model.value(), options);
    ASSERT_TRUE(a.is_ok());
    ASSERT_TRUE(analysis::check_witnesses(model.value(), a.value(), "").is_ok());
    const Accumulator& acc = a->accumulators.at(0);
    // With shapes the analysis knows the tap patterns and the bound is exact; without, 0 joins each
    // term's range and no input reaches the bound (every weight is non-zero with probability ~1).
    EXPECT_EQ(acc.attained, shapes) << acc.not_attained;
    if (!shapes) {
      EXPECT_NE(acc.not_attained.find("the best input"), std::string::npos) << acc.not_attained;
    }
  }
}

// --annotate: accumulator outputs that are the integer accumulator get the smallest INTk / UINTk
// (derived here from the bounds, which the brute-force tests check), scaled outputs get nothing, and
// the annotations hold on the witnesses (qonnx's datatype check).
int smallest_bits(int64_t lo, int64_t hi, bool is_signed) {
  for (int b = 1; b < 64; ++b) {
    const double min = is_signed ? -std::ldexp(1.0, b - 1) : 0, max = is_signed ? std::ldexp(1.0, b - 1) - 1 : std::ldexp(1.0, b) - 1;
    if (lo >= min && hi <= max) return b;
  }
  return 64;
}
std::string expected_type(int64_t lo, int64_t hi) {
  if (lo >= 0) return hi <= 1 ? "BINARY" : fmt::format("UINT{}", smallest_bits(lo, hi, false));
  return fmt::format("INT{}", smallest_bits(lo, hi, true));
}

TEST_F(RangeWitness, AnnotationsAreTheMinimalWidthsAndRoundTrip) {
  for (unsigned seed = 1; seed <= 6; ++seed) {
    std::mt19937 rng(seed);
    const bool is_signed = seed % 2 == 0;
    const int bits = 2 + static_cast<int>(seed % 3);
    io::ModelBuilder b;
    b.import(kQ, 1).input("x", DType::kFloat, {1, 6}).output("t", DType::kFloat);
    add_quant(b, "x", "xq", test::f32s(1), bits, is_signed);
    b.initializer("w", random_tensor(rng, {6, 3}, -5, 5, true));
    b.node("MatMul", {"xq", "w"}, {"acc"});  // integer input, integral weights: the accumulator itself
    b.initializer("thr", random_tensor(rng, {3, 3}, -40, 40, true));
    b.node("MultiThreshold", {"acc", "thr"}, {"m"}, kQ).attr("out_dtype", "UINT2");
    b.initializer("w2", random_tensor(rng, {3, 2}, -1, 1, false));
    b.node("MatMul", {"m", "w2"}, {"t"});  // float weights: not an accumulator
    auto model = with_shapes(b);
    ASSERT_TRUE(model.is_ok());
    auto a = analysis::analyze_ranges(model.value(), {});
    ASSERT_TRUE(a.is_ok());
    ASSERT_EQ(a->accumulators.size(), 1u);
    const Accumulator& acc = a->accumulators[0];
    ir::Model annotated = std::move(model).value();
    // acc (the accumulator, which is also the MultiThreshold input) and the thresholds.
    EXPECT_EQ(analysis::annotate_ranges(annotated, a.value()), 2);
    const fs::path file = dir_ / fmt::format("annotated_{}.onnx", seed);
    ASSERT_TRUE(io::save_model(annotated, file).is_ok());
    auto loaded = io::load_model(file);
    ASSERT_TRUE(loaded.is_ok());
    const ir::Graph& g = loaded->graph();
    EXPECT_EQ(g.finn_datatype("acc"), expected_type(acc.min, acc.max)) << "seed " << seed;
    EXPECT_EQ(g.finn_datatype("t"), "");
    EXPECT_EQ(g.finn_datatype("xq"), "");  // not a MultiThreshold input: left alone
    // FINN's Thresholding: one type for the input's range and the threshold values.
    auto thr = g.initializer_tensor(g.find_value("thr"));
    ASSERT_TRUE(thr.is_ok());
    double lo = static_cast<double>(acc.min), hi = static_cast<double>(acc.max);
    for (int64_t i = 0; i < thr->numel(); ++i) {
      lo = std::min<double>(lo, thr->data<float>()[i]);
      hi = std::max<double>(hi, thr->data<float>()[i]);
    }
    EXPECT_EQ(g.finn_datatype("thr"), expected_type(static_cast<int64_t>(lo), static_cast<int64_t>(hi)));
    // The annotations are true on the witnesses (the inputs reaching the accumulator's bounds).
    auto witnesses = analysis::check_witnesses(loaded.value(), a.value(), "");
    ASSERT_TRUE(witnesses.is_ok());
    auto ex = exec::Executor::create(loaded.value());
    ASSERT_TRUE(ex.is_ok());
    ASSERT_TRUE(ex->expose({"acc", "m"}).is_ok());
    for (const analysis::Witness& w : witnesses.value()) {
      ASSERT_TRUE(w.attained) << w.why;
      auto run = ex->run({{"x", w.inputs.at(0)}});
      ASSERT_TRUE(run.is_ok());
      auto checked = analysis::check_finn_datatypes(loaded->graph(), run->exposed);
      ASSERT_TRUE(checked.is_ok()) << checked.status().message();
      EXPECT_EQ(checked.value(), 1);  // acc (m is not annotated, thr is not a run value)
    }
  }
}

// A scaled input (scale 0.5) is not its integers: no annotation claims so.
TEST_F(RangeWitness, ScaledAccumulatorOutputsAreNotAnnotated) {
  io::ModelBuilder b;
  b.import(kQ, 1).input("x", DType::kFloat, {1, 4}).output("acc", DType::kFloat);
  add_quant(b, "x", "xq", test::f32s(0.5f), 3, true);
  b.initializer("w", test::f32({4, 1}, {1, -2, 3, -1}));
  b.node("MatMul", {"xq", "w"}, {"acc"});
  auto model = with_shapes(b);
  ASSERT_TRUE(model.is_ok());
  auto a = analysis::analyze_ranges(model.value(), {});
  ASSERT_TRUE(a.is_ok());
  ASSERT_EQ(a->accumulators.size(), 1u);
  EXPECT_EQ(analysis::annotate_ranges(model.value(), a.value()), 0);
  EXPECT_EQ(model->graph().finn_datatype("acc"), "");
}

// MultiThreshold widths by brute force: every input code of small models through the executor. For
// each threshold, the integers m with (n >= m) == "the kernel counts it at n" for every reachable n form
// an interval; inside [lo, hi + 1] it is a single value, which must be the reported one, and the widths
// are those of the hull of these values.
TEST(RangeThresholds, WidthsEqualBruteForceOverEveryInputCode) {
  int cases = 0, wider_than_input = 0;
  for (unsigned seed = 1; seed <= 8; ++seed) {
    std::mt19937 rng(seed);
    for (int bits : {2, 3, 4})
      for (bool is_signed : {false, true})
        for (float scale : {1.0f, 0.5f, 0.375f}) {
          const int64_t channels = 3, steps = std::uniform_int_distribution<int64_t>(1, 6)(rng);
          const bool per_row = seed % 2 == 0;
          const int64_t rows = per_row ? channels : 1;
          const int64_t lo = is_signed ? -(int64_t{1} << (bits - 1)) : 0;
          const int64_t hi = is_signed ? (int64_t{1} << (bits - 1)) - 1 : (int64_t{1} << bits) - 1;
          const int64_t levels = hi - lo + 1;
          // Thresholds reaching past the input's values on both sides, some exactly on a value.
          Tensor thr(DType::kFloat, {rows, steps});
          std::uniform_real_distribution<float> u(static_cast<float>(lo - 3) * scale, static_cast<float>(hi + 3) * scale);
          for (int64_t i = 0; i < thr.numel(); ++i) {
            float t = u(rng);
            if (i % 3 == 0) t = std::round(t / scale) * scale;
            thr.data<float>()[i] = t;
          }
          io::ModelBuilder b;
          b.import(kQ, 1).input("x", DType::kFloat, {levels, channels}).output("m", DType::kFloat);
          add_quant(b, "x", "xq", test::f32s(scale), bits, is_signed);
          b.initializer("thr", thr);
          b.node("MultiThreshold", {"xq", "thr"}, {"m"}, kQ).attr("out_dtype", "UINT3");
          auto model = with_shapes(b);
          ASSERT_TRUE(model.is_ok());
          auto a = analysis::analyze_ranges(model.value(), {});
          ASSERT_TRUE(a.is_ok());
          ASSERT_EQ(a->thresholds.size(), 1u);
          const analysis::ThresholdWidth& tw = a->thresholds[0];
          ASSERT_TRUE(tw.note.empty()) << tw.note;
          EXPECT_EQ(tw.input_lo, lo);
          EXPECT_EQ(tw.input_hi, hi);
          // Every code in every channel: row n holds code lo + n.
          Tensor x(DType::kFloat, {levels, channels});
          for (int64_t n = 0; n < levels; ++n)
            for (int64_t c = 0; c < channels; ++c) x.data<float>()[n * channels + c] = static_cast<float>(lo + n) * scale;
          auto ex = exec::Executor::create(model.value());
          ASSERT_TRUE(ex.is_ok());
          ASSERT_TRUE(ex->expose({"xq"}).is_ok());
          auto run = ex->run({{"x", x}});
          ASSERT_TRUE(run.is_ok());
          const float* v = run->exposed.at("xq").data<float>();
          const float* m = run->outputs[0].data<float>();
          // The per-threshold crossings (v >= t, the MultiThreshold definition) add up to the executor's counts.
          auto crossed = [&](int64_t n, int64_t c, int64_t k) {
            return static_cast<double>(v[n * channels + c]) >= thr.data<float>()[(per_row ? c : 0) * steps + k];
          };
          for (int64_t n = 0; n < levels; ++n)
            for (int64_t c = 0; c < channels; ++c) {
              int64_t count = 0;
              for (int64_t k = 0; k < steps; ++k) count += crossed(n, c, k) ? 1 : 0;
              ASSERT_EQ(m[n * channels + c], static_cast<float>(count));
            }
          ASSERT_EQ(tw.clipped.size(), static_cast<size_t>(rows));
          int64_t mn = INT64_MAX, mx = INT64_MIN;
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t k = 0; k < steps; ++k) {
              const int64_t c = per_row ? r : 0;
              std::vector<int64_t> equivalent;
              for (int64_t cand = lo; cand <= hi + 1; ++cand) {
                bool same = true;
                for (int64_t n = 0; n < levels; ++n) same = same && (lo + n >= cand) == crossed(n, c, k);
                if (same) equivalent.push_back(cand);
              }
              ASSERT_EQ(equivalent.size(), 1u) << "seed " << seed << " threshold " << thr.data<float>()[r * steps + k];
              EXPECT_EQ(tw.clipped[static_cast<size_t>(r)][static_cast<size_t>(k)], equivalent[0])
                  << "seed " << seed << " bits " << bits << " scale " << scale << " threshold " << thr.data<float>()[r * steps + k];
              mn = std::min(mn, equivalent[0]);
              mx = std::max(mx, equivalent[0]);
            }
          EXPECT_EQ(tw.min, mn);
          EXPECT_EQ(tw.max, mx);
          EXPECT_EQ(tw.signed_bits, smallest_bits(mn, mx, true));
          EXPECT_EQ(tw.unsigned_bits, mn < 0 ? 0 : smallest_bits(mn, mx, false));
          // A never-crossed threshold is hi + 1, which the input's own type cannot hold (FINN's
          // RoundAndClipThresholds gives such thresholds the input's datatype).
          if (mx == hi + 1) {
            ++wider_than_input;
            EXPECT_GT(is_signed ? tw.signed_bits : tw.unsigned_bits, bits);
          }
          ++cases;
        }
  }
  EXPECT_EQ(cases, 144);
  EXPECT_GT(wider_than_input, 10);
}

TEST(RangeThresholds, FloatInputHasNoIntegerThresholds) {
  io::ModelBuilder b;
  b.import(kQ, 1).input("x", DType::kFloat, {1, 2}).output("m", DType::kFloat);
  b.initializer("thr", test::f32({1, 2}, {0.5f, 1.5f}));
  b.node("MultiThreshold", {"x", "thr"}, {"m"}, kQ).attr("out_dtype", "UINT2");
  auto model = with_shapes(b);
  ASSERT_TRUE(model.is_ok());
  auto a = analysis::analyze_ranges(model.value(), {});
  ASSERT_TRUE(a.is_ok());
  ASSERT_EQ(a->thresholds.size(), 1u);
  EXPECT_NE(a->thresholds[0].note.find("no integer form"), std::string::npos);
  EXPECT_NE(analysis::range_text(model->graph(), a.value(), {}).find("MultiThreshold thresholds (1)"), std::string::npos);
}

// The binary: --witness writes the folders, `exec --input-dir` on one shows the bound as the exposed
// layer output's max (integer input and weights: the value is the accumulator), --annotate writes the file.
TEST_F(RangeWitness, CliWritesWitnessesThatExecReproduces) {
  std::mt19937 rng(9);
  io::ModelBuilder b;
  b.import(kQ, 1).input("x", DType::kFloat, {1, 8}).output("acc", DType::kFloat);
  add_quant(b, "x", "xq", test::f32s(1), 3, true);
  b.initializer("w", random_tensor(rng, {8, 3}, -6, 6, true));
  b.node("MatMul", {"xq", "w"}, {"acc"});
  const std::string model = path("layer.onnx");
  ASSERT_TRUE(io::write_file_atomic(model, b.serialize()).is_ok());
  const std::string wit = path("wit"), annotated = path("annotated.onnx");
  auto r = test::run_cli("range " + model + " --input-range x=-10,10 --witness " + wit + " --annotate " + annotated);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::smatch m;
  // The accumulators table: node, op, output, [min, max], terms, signed bits, unsigned bits, attainment.
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex(R"(\n +\S+ +MatMul +acc +\[(-?\d+), (-?\d+)\] +8 +\d+ +\S+ +attained\n)")))
      << r.out;
  const std::string min = m[1], max = m[2];
  EXPECT_NE(r.out.find("witnesses:\n"), std::string::npos) << r.out;
  std::smatch layer;
  ASSERT_TRUE(std::regex_search(r.out, layer, std::regex(R"(\n(\S+) max (-?\d+): (\S+) \(channel)"))) << r.out;
  EXPECT_EQ(layer[2], max);
  const std::string max_dir = layer[3];
  EXPECT_TRUE(fs::exists(fs::path(max_dir) / "input_0.pb"));
  EXPECT_TRUE(fs::exists(fs::path(wit) / (std::string(layer[1]) + "_min") / "input_0.pb"));
  auto e = test::run_cli("exec " + model + " --input-dir " + max_dir + " --expose acc");
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_NE(e.out.find("max " + max), std::string::npos) << e.out;
  auto e2 = test::run_cli("exec " + model + " --input-dir " + wit + "/" + std::string(layer[1]) + "_min --expose acc");
  EXPECT_NE(e2.out.find("min " + min), std::string::npos) << e2.out;
  auto loaded = io::load_model(annotated);
  ASSERT_TRUE(loaded.is_ok());
  EXPECT_EQ(loaded->graph().finn_datatype("acc"), expected_type(std::stoll(min), std::stoll(max)));
  auto checked = test::run_cli("exec " + annotated + " --input-dir " + max_dir + " --check-datatypes");
  EXPECT_EQ(checked.exit_code, 0) << checked.out << checked.err;
}

}  // namespace
}  // namespace qonnx
