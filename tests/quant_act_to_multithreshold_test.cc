// quant-act-to-multithreshold (issue 24 item 1): every activation Quant class becomes a MultiThreshold
// form that equals the Quant bit for bit (a zero may change sign: SEMANTICS.md, -0.0 compares equal to 0)
// on every float32 but NaN. Generated over every rounding mode x signed x narrow x bits 1..8 x per-tensor /
// per-channel x zero points (0, integers, fractions) x scales (powers of two, decimals, random), with
// inputs at every threshold, its float32 neighbours, the ties between levels, +-0, +-inf, huge and tiny
// values; the same converted models lowered to standard ops agree with the Quant in onnxruntime.
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/exec/executor.h"
#include "qonnx/io/model_builder.h"
#include "qonnx/io/model_io.h"
#include "qonnx/io/tensor_file.h"
#include "qonnx/passes/quantizer_outcomes.h"
#include "support/temp_dir.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {
namespace fs = std::filesystem;

constexpr const char* kQ = "qonnx.custom_op.general";
constexpr int64_t kChannels = 3;
const char* const kModes[] = {"ROUND", "CEIL", "FLOOR", "UP", "DOWN", "HALF_UP", "HALF_DOWN"};

struct Params {
  std::vector<float> scale, zero;  // one value (per tensor) or kChannels
};

// (zero point, scale) pairs covering every class: 0 / integer / fraction x power of two / decimal / random.
std::vector<Params> parameter_classes(bool per_channel, std::mt19937& rng) {
  std::uniform_real_distribution<float> random_scale(0.001f, 3.0f);
  auto r = [&] { return random_scale(rng); };
  if (!per_channel)
    return {{{0.25f}, {0}}, {{0.1f}, {3}}, {{r()}, {0.5f}}, {{0.125f}, {-2}}, {{0.3f}, {-0.25f}}, {{r()}, {0}}};
  return {{{0.5f, 0.125f, 2.0f}, {0, 0, 0}},  {{0.1f, 0.3f, 0.7f}, {1, -2, 0}},   {{r(), r(), r()}, {0.25f, -1.5f, 0}},
          {{0.25f, 0.25f, 4.0f}, {3, 3, -1}}, {{0.01f, 1.1f, 0.2f}, {0.5f, 0, 2}}, {{r(), r(), r()}, {0, 0, 0}}};
}

Tensor param_tensor(const std::vector<float>& v) { return v.size() == 1 ? f32s(v[0]) : f32({1, kChannels, 1}, v); }

// One model per rounding mode: a Quant per (signed, narrow, bits, layout, parameter class). With `widths`
// empty each Quant k reads its own input x<k> (1, 3, n) and writes y<k> (to read the thresholds back);
// else they read Slices of widths[k] of one input x (1, 3, sum) and one Concat writes y: one tensor file
// each way for onnxruntime.
struct Family {
  io::ModelBuilder builder{13};
  std::vector<Params> params;
  std::vector<std::string> names;
};

Family quant_family(const std::string& mode, const std::vector<int64_t>& widths = {}) {
  Family f;
  f.builder.import(kQ, 1);
  std::mt19937 rng(7);
  const bool sliced = !widths.empty();
  int64_t total = 0;
  for (int64_t w : widths) total += w;
  if (sliced) {
    f.builder.input("x", DType::kFloat, {1, kChannels, total}).output("y", DType::kFloat, {1, kChannels, total});
    f.builder.initializer("axis2", i64({1}, {2}));
  }
  std::vector<std::string> ys;
  int k = 0;
  int64_t offset = 0;
  for (int is_signed : {0, 1})
    for (int narrow : {0, 1})
      for (int bits = 1; bits <= 8; ++bits)
        for (bool per_channel : {false, true})
          for (const Params& p : parameter_classes(per_channel, rng)) {
            if (bits == 1 && !is_signed && narrow) continue;  // a single level, 0: nothing to count
            const std::string x = fmt::format("x{}", k), y = fmt::format("y{}", k);
            if (sliced) {
              f.builder.initializer(x + "_begin", i64({1}, {offset})).initializer(x + "_end", i64({1}, {offset + widths[k]}));
              f.builder.node("Slice", {"x", x + "_begin", x + "_end", "axis2"}, {x});
              offset += widths[k];
            } else {
              f.builder.input(x, DType::kFloat, {1, kChannels, -1}).output(y, DType::kFloat);
            }
            f.builder.initializer(x + "_s", param_tensor(p.scale)).initializer(x + "_z", param_tensor(p.zero));
            f.builder.initializer(x + "_b", f32s(static_cast<float>(bits)));
            f.builder.node("Quant", {x, x + "_s", x + "_z", x + "_b"}, {y}, kQ)
                .attr("signed", is_signed).attr("narrow", narrow).attr("rounding_mode", mode).name(fmt::format("q{}_{}{}b{}", k, is_signed ? "s" : "u", narrow ? "n" : "", bits));
            f.params.push_back(p);
            f.names.push_back(x);
            ys.push_back(y);
            ++k;
          }
  if (sliced) f.builder.node("Concat", ys, {"y"}).attr("axis", int64_t{2});
  return f;
}

void add_with_neighbours(std::vector<float>& v, float t) {
  v.push_back(t);
  v.push_back(std::nextafter(t, -INFINITY));
  v.push_back(std::nextafter(t, INFINITY));
}

// Inputs for one quantizer: its thresholds (read back from the converted model) and their neighbours,
// the exact ties between levels and their neighbours, and special values.
std::vector<float> probe_values(const ir::Model& converted, const std::string& input, const Params& p, bool with_ties) {
  std::vector<float> v = {0.0f, -0.0f, INFINITY, -INFINITY, 1e30f, -1e30f, std::numeric_limits<float>::max(),
                          -std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min(), -1e-30f, 0.5f, -0.5f};
  const ir::Graph& g = converted.graph();
  const ir::Value* x = g.find_value(input);
  for (const auto& use : x->uses())
    if (use.node->op_type() == dialect::kMultiThresholdOp) {
      const Tensor thr = g.initializer_tensor(use.node->input(1)).value();
      for (int64_t i = 0; i < thr.numel(); ++i)
        if (std::isfinite(thr.data<float>()[i])) add_with_neighbours(v, thr.data<float>()[i]);
    }
  for (size_t c = 0; c < p.scale.size() && with_ties; ++c)
    for (int level = -130; level <= 260; ++level) add_with_neighbours(v, (static_cast<float>(level) + 0.5f - p.zero[c]) * p.scale[c]);
  return v;
}

std::vector<Tensor> run_model(const ir::Model& m, const std::map<std::string, Tensor>& feeds) {
  auto ex = exec::Executor::create(m);
  EXPECT_TRUE(ex.is_ok()) << ex.status().to_string();
  if (!ex.is_ok()) return {};
  auto r = ex.value().run(feeds);
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  return r.is_ok() ? r.value().outputs : std::vector<Tensor>{};
}

// A rounding mode's family through `passes`, with its probe input (every quantizer's probe values, the
// same in each channel).
struct Converted {
  ir::Model original, converted;
  Tensor x;
};

Converted convert_family(const std::string& mode, const std::string& passes, bool with_ties) {
  const Family single_inputs = quant_family(mode);
  ir::Model with_thresholds = single_inputs.builder.build().value();
  EXPECT_TRUE(run_passes(with_thresholds, "infer-shapes,quant-act-to-multithreshold").is_ok());
  std::vector<int64_t> widths;
  std::vector<std::vector<float>> probes;
  for (size_t k = 0; k < single_inputs.names.size(); ++k) {
    probes.push_back(probe_values(with_thresholds, single_inputs.names[k], single_inputs.params[k], with_ties));
    widths.push_back(static_cast<int64_t>(probes.back().size()));
  }
  const Family f = quant_family(mode, widths);
  Converted c{f.builder.build().value(), f.builder.build().value(), {}};
  pass::PassContext ctx;
  auto ran = run_passes(c.converted, "infer-shapes," + passes, ctx);
  EXPECT_TRUE(ran.is_ok()) << ran.status().to_string();
  for (const auto& o : passes::quantizer_outcomes(ctx))
    if (o.pass == "quant-act-to-multithreshold") EXPECT_EQ(o.outcome, "converted") << o.node << ": " << o.detail;
  for (const auto& n : c.converted.graph().nodes()) EXPECT_FALSE(dialect::is_quantizer(*n)) << n->describe();
  std::vector<float> row;
  for (const auto& p : probes) row.insert(row.end(), p.begin(), p.end());
  const int64_t n = static_cast<int64_t>(row.size());
  c.x = Tensor(DType::kFloat, {1, kChannels, n});
  for (int64_t ch = 0; ch < kChannels; ++ch) std::copy(row.begin(), row.end(), c.x.data<float>() + ch * n);
  return c;
}

TEST(QuantActToMultiThreshold, EveryClassIsBitExactOnEveryFloatButNaN) {
  int64_t compared = 0;
  for (const char* mode : kModes) {
    Converted c = convert_family(mode, "quant-act-to-multithreshold", true);
    // Equal values, or both NaN: the same bits but for the sign of a zero.
    EXPECT_EQ(outputs_differ(c.original, c.converted, {{"x", c.x}}), "") << mode;
    compared += c.x.numel();
  }
  std::printf("compared %lld elements over %zu rounding modes\n", static_cast<long long>(compared), std::size(kModes));
}

class QuantActToMultiThresholdOrt : public TempDirTest {};

TEST_F(QuantActToMultiThresholdOrt, LoweredFormAgreesInOnnxruntime) {
  if (!onnxruntime_available()) GTEST_SKIP() << "onnxruntime-node is not installed (bash scripts/install-ort.sh)";
  for (const char* mode : kModes) {
    // The thresholds and their neighbours: where a comparison in onnxruntime could differ.
    Converted c = convert_family(mode, "quant-act-to-multithreshold,lower-custom-ops", false);
    for (const auto& n : c.converted.graph().nodes()) EXPECT_NE(n->op_type(), dialect::kMultiThresholdOp);
    const std::vector<Tensor> expected = run_model(c.original, {{"x", c.x}});
    ASSERT_EQ(expected.size(), 1u);
    EXPECT_EQ(onnxruntime_disagrees(c.converted, "x", c.x, expected[0], 0, 0, dir_ / mode), "") << mode;
  }
}

// One Quant on x (1, 3, 4) with the given parameters and attributes, through the pass.
struct Single {
  explicit Single(ir::Model m) : converted(std::move(m)) {}
  ir::Model converted;
  pass::PassContext ctx;
};

std::unique_ptr<Single> convert_single(const Tensor& scale, const Tensor& zero, float bits, int is_signed,
                                       const std::string& passes = "infer-shapes,quant-act-to-multithreshold",
                                       bool relu = false, Dims x_dims = {1, 3, 4}) {
  io::ModelBuilder b(13);
  b.import(kQ, 1).input("x", DType::kFloat, x_dims).output("y", DType::kFloat);
  b.initializer("s", scale).initializer("z", zero).initializer("b", f32s(bits));
  if (relu) b.node("Relu", {"x"}, {"r"});
  b.node("Quant", {relu ? "r" : "x", "s", "z", "b"}, {"y"}, kQ).attr("signed", is_signed).attr("narrow", 0).attr("rounding_mode", "ROUND").name("q");
  auto out = std::make_unique<Single>(b.build().value());
  auto ran = run_passes(out->converted, passes, out->ctx);
  EXPECT_TRUE(ran.is_ok()) << ran.status().to_string();
  return out;
}

std::vector<std::string> op_types(const ir::Model& m) {
  std::vector<std::string> ops;
  for (const auto& n : m.graph().nodes()) ops.push_back(n->op_type());
  return ops;
}

std::string outcome_of(const pass::PassContext& ctx) {
  for (const auto& o : passes::quantizer_outcomes(ctx)) return o.outcome + ": " + o.detail;
  return "";
}

TEST(QuantActToMultiThreshold, LeavesWhatCannotBeExactAndSaysWhy) {
  // A negative scale makes the code fall as x grows.
  auto negative = convert_single(f32({1, 3, 1}, {0.5f, -0.5f, 1.0f}), f32s(0), 4, 1);
  EXPECT_EQ(op_types(negative->converted), std::vector<std::string>{"Quant"});
  EXPECT_NE(outcome_of(negative->ctx).find("left: a scale is negative"), std::string::npos) << outcome_of(negative->ctx);
  // More bits than max-bits.
  auto wide = convert_single(f32s(0.5f), f32s(0), 9, 1);
  EXPECT_NE(outcome_of(wide->ctx).find("bit width 9 above max-bits 8"), std::string::npos) << outcome_of(wide->ctx);
  auto allowed = convert_single(f32s(0.5f), f32s(0), 9, 1, "infer-shapes,quant-act-to-multithreshold{max-bits=9}");
  EXPECT_EQ(op_types(allowed->converted), (std::vector<std::string>{"MultiThreshold", "Mul"}));
  // Parameters along an axis MultiThreshold cannot count on (axis 2 of a rank-4 input).
  auto axis2 = convert_single(f32({1, 1, 3, 1}, {0.5f, 0.25f, 1.0f}), f32s(0), 4, 1, "infer-shapes,quant-act-to-multithreshold", false, {1, 2, 3, 4});
  EXPECT_NE(outcome_of(axis2->ctx).find("vary along axis 2"), std::string::npos) << outcome_of(axis2->ctx);
}

TEST(QuantActToMultiThreshold, FormOfTheResult) {
  // Unsigned, per-tensor, zero point 0: the count is the code; the scale follows as a Mul.
  auto plain = convert_single(f32s(0.5f), f32s(0), 4, 0);
  EXPECT_EQ(op_types(plain->converted), (std::vector<std::string>{"MultiThreshold", "Mul"}));
  const ir::Node* mt = plain->converted.graph().nodes().front().get();
  EXPECT_EQ(mt->attr<std::string>("out_dtype").value(), "UINT4");
  EXPECT_EQ(plain->converted.graph().initializer_tensor(mt->input(1)).value().dims(), (Dims{1, 15}));
  // Signed with an integer zero point: out_bias = lowest - z, the type of the shifted range.
  auto shifted = convert_single(f32s(1.0f), f32s(3), 4, 1);
  EXPECT_EQ(op_types(shifted->converted), std::vector<std::string>{"MultiThreshold"});
  const ir::Node* smt = shifted->converted.graph().nodes().front().get();
  EXPECT_EQ(smt->attr<float>("out_bias").value(), -11.0f);
  EXPECT_EQ(smt->attr<std::string>("out_dtype").value(), "INT5");
  // Per-channel fractional zero point: a Sub keeps the Quant's own (q - z) step.
  auto fractional = convert_single(f32s(0.5f), f32({1, 3, 1}, {0.5f, 0, -0.25f}), 4, 1);
  EXPECT_EQ(op_types(fractional->converted), (std::vector<std::string>{"MultiThreshold", "Sub", "Mul"}));
  EXPECT_EQ(fractional->converted.graph().initializer_tensor(fractional->converted.graph().nodes().front()->input(1)).value().dims(), (Dims{3, 15}));
  // A Relu in front is absorbed: signed 4 bits after a Relu count only the levels above 0.
  auto relu = convert_single(f32s(0.5f), f32s(0), 4, 1, "infer-shapes,quant-act-to-multithreshold", true);
  EXPECT_EQ(op_types(relu->converted), (std::vector<std::string>{"MultiThreshold", "Mul"}));
  const ir::Node* rmt = relu->converted.graph().nodes().front().get();
  EXPECT_EQ(relu->converted.graph().initializer_tensor(rmt->input(1)).value().dims(), (Dims{1, 7}));
  EXPECT_EQ(rmt->input(0)->name(), "x");
}

TEST(QuantActToMultiThreshold, AbsorbedReluAndBipolarStayExact) {
  std::vector<float> v;
  for (int i = -400; i <= 400; ++i) add_with_neighbours(v, static_cast<float>(i) * 0.03125f);
  for (float s : {0.0f, -0.0f, INFINITY, -INFINITY, 1e30f, -1e30f}) v.push_back(s);
  const int64_t n = static_cast<int64_t>(v.size());
  Tensor x(DType::kFloat, {1, 3, n});
  for (int64_t c = 0; c < 3; ++c) std::copy(v.begin(), v.end(), x.data<float>() + c * n);
  // Relu then signed Quant with per-channel zero points (channels reach different levels at 0), bit widths 1..8.
  for (float bits = 1; bits <= 8; ++bits)
    for (int is_signed : {0, 1}) {
      io::ModelBuilder b(13);
      b.import(kQ, 1).input("x", DType::kFloat, {1, 3, n}).output("y", DType::kFloat);
      b.initializer("s", f32({1, 3, 1}, {0.1f, 0.25f, 0.7f})).initializer("z", f32({1, 3, 1}, {2, -1, 0})).initializer("b", f32s(bits));
      b.node("Relu", {"x"}, {"r"});
      b.node("Quant", {"r", "s", "z", "b"}, {"y"}, kQ).attr("signed", is_signed).attr("narrow", 0).attr("rounding_mode", "HALF_UP");
      ir::Model original = b.build().value(), converted = b.build().value();
      ASSERT_TRUE(run_passes(converted, "infer-shapes,quant-act-to-multithreshold").is_ok());
      EXPECT_EQ(op_types(converted).front(), "MultiThreshold");
      EXPECT_EQ(outputs_differ(original, converted, {{"x", x}}), "") << "bits " << bits << " signed " << is_signed;
    }
  // BipolarQuant (per-channel scales, one negative: it multiplies after comparing x with 0) is exact on NaN too.
  v.push_back(NAN);
  Tensor xn(DType::kFloat, {1, 3, n + 1});
  for (int64_t c = 0; c < 3; ++c) std::copy(v.begin(), v.end(), xn.data<float>() + c * (n + 1));
  io::ModelBuilder b(13);
  b.import(kQ, 1).input("x", DType::kFloat, {1, 3, n + 1}).output("y", DType::kFloat);
  b.initializer("s", f32({1, 3, 1}, {0.5f, -2.0f, 1.0f}));
  b.node("BipolarQuant", {"x", "s"}, {"y"}, kQ);
  ir::Model original = b.build().value(), converted = b.build().value();
  ASSERT_TRUE(run_passes(converted, "infer-shapes,quant-act-to-multithreshold").is_ok());
  EXPECT_EQ(op_types(converted), (std::vector<std::string>{"MultiThreshold", "Mul"}));
  EXPECT_EQ(outputs_differ(original, converted, {{"x", xn}}), "");
}

TEST(QuantActToMultiThreshold, NaNGivesTheLowestLevelAsDocumented) {
  auto single = convert_single(f32s(0.5f), f32s(0), 4, 1);
  const auto got = run_model(single->converted, {{"x", f32({1, 3, 4}, {NAN, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})}});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].data<float>()[0], -4.0f);  // level -8 times 0.5
  EXPECT_NE(outcome_of(single->ctx).find("but NaN"), std::string::npos) << outcome_of(single->ctx);
}

}  // namespace
}  // namespace qonnx::test
