// The reports of qonnx-cc range (qonnx/analysis/range_report.h): stuck and zero-stuck channels on
// generated layers where chosen channels are constant by construction (a zero weight column, Relu
// after a channel that is never positive, a per-channel quantizer step far above the channel's range),
// checked against the construction and against the executor; the JSON shapes, --key-filter and the
// aligned text table through the CLI.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include <fmt/format.h>

#include "qonnx/analysis/range.h"
#include "qonnx/analysis/range_report.h"
#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/exec/executor.h"
#include "qonnx/io/model_builder.h"
#include "qonnx/io/model_io.h"
#include "qonnx/pass/pass.h"
#include "support/range_check.h"
#include "support/cli.h"
#include "support/temp_dir.h"
#include "support/test_util.h"

namespace qonnx {
namespace {
using test::with_shapes;

using analysis::StuckChannel;

enum class Kind { kNormal, kZeroColumn, kNeverPositive, kCoarseStep };

constexpr float kInputStep = 0.0625f;  // x in [0, 1] -> unsigned 4-bit codes: xq in [0, 0.9375]
constexpr float kFineStep = 0.25f, kCoarseStep = 64.0f;

// x [2, K] in [0, 1] -> Quant (unsigned 4 bits) -> MatMul W [K, C] -> h -> Add bias [1, C] -> hb -> Relu
// -> r -> Quant (unsigned 8 bits, scale [1, C]) -> q. Channel c of kind:
//   kNormal: W[0, c] = 1, the rest in [-1, 1], bias 0, step 0.25: nothing stuck (h reaches >= 0.9375
//     and <= 0; r and q reach 0 and >= 0.9375).
//   kZeroColumn: W[:, c] = 0, bias b: h stuck at 0, hb at b, r at max(b, 0), q at its quantization.
//   kNeverPositive: W[:, c] <= 0 with W[0, c] = -1, bias <= 0: r and q stuck at 0.
//   kCoarseStep: as kNormal but the step is 64 > 2 * max(r): q stuck at 0.
struct StuckLayer {
  io::ModelBuilder builder;
  std::vector<Kind> kinds;
  std::vector<float> bias, step;
};

StuckLayer stuck_layer(std::mt19937& rng, int64_t k, int64_t c) {
  StuckLayer l;
  std::uniform_int_distribution<int> kind(0, 3);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Tensor w(DType::kFloat, {k, c}), bias(DType::kFloat, {1, c}), step(DType::kFloat, {1, c});
  for (int64_t j = 0; j < c; ++j) {
    const Kind kd = static_cast<Kind>(kind(rng));
    l.kinds.push_back(kd);
    for (int64_t i = 0; i < k; ++i) {
      float v = kd == Kind::kZeroColumn ? 0.0f : kd == Kind::kNeverPositive ? -std::fabs(u(rng)) : u(rng);
      if (i == 0 && kd != Kind::kZeroColumn) v = kd == Kind::kNeverPositive ? -1.0f : 1.0f;
      w.data<float>()[i * c + j] = v;
    }
    const float b = kd == Kind::kZeroColumn ? std::round(u(rng) * 8.0f) / 8.0f + 0.0f : kd == Kind::kNeverPositive ? -std::fabs(u(rng)) : 0.0f;
    bias.data<float>()[j] = b;
    step.data<float>()[j] = kd == Kind::kCoarseStep ? kCoarseStep : kFineStep;
    l.bias.push_back(b);
    l.step.push_back(step.data<float>()[j]);
  }
  constexpr const char* kQ = dialect::kGeneralDomain;
  io::ModelBuilder& b = l.builder;
  b.import(kQ, 1).input("x", DType::kFloat, {2, k}).output("q", DType::kFloat);
  b.initializer("xs", test::f32s(kInputStep)).initializer("z", test::f32s(0)).initializer("xb", test::f32s(4));
  b.node("Quant", {"x", "xs", "z", "xb"}, {"xq"}, kQ).attr("signed", 0).attr("narrow", 0).attr("rounding_mode", "ROUND");
  b.initializer("w", w).initializer("bias", bias).initializer("qs", step).initializer("qb", test::f32s(8));
  b.node("MatMul", {"xq", "w"}, {"h"});
  b.node("Add", {"h", "bias"}, {"hb"});
  b.node("Relu", {"hb"}, {"r"});
  b.node("Quant", {"r", "qs", "z", "qb"}, {"q"}, kQ).attr("signed", 0).attr("narrow", 0).attr("rounding_mode", "ROUND");
  return l;
}

// The stuck channels the construction makes, in report order (tensor, then channel).
std::vector<StuckChannel> constructed_stuck(const StuckLayer& l, bool zero_only) {
  std::vector<StuckChannel> out;
  auto add = [&](const std::string& t, size_t c, float v) {
    if (!zero_only || v == 0.0f) out.push_back({t, static_cast<int64_t>(c), v});
  };
  const size_t n = l.kinds.size();
  for (size_t c = 0; c < n; ++c)
    if (l.kinds[c] == Kind::kZeroColumn) add("h", c, 0.0f);
  for (size_t c = 0; c < n; ++c)
    if (l.kinds[c] == Kind::kZeroColumn) add("hb", c, l.bias[c]);
  auto relu = [&](size_t c) { return l.kinds[c] == Kind::kZeroColumn ? std::max(l.bias[c], 0.0f) : 0.0f; };
  for (size_t c = 0; c < n; ++c)
    if (l.kinds[c] == Kind::kZeroColumn || l.kinds[c] == Kind::kNeverPositive) add("r", c, relu(c));
  for (size_t c = 0; c < n; ++c) {
    if (l.kinds[c] == Kind::kNormal) continue;
    const float r = l.kinds[c] == Kind::kCoarseStep ? 0.0f : relu(c);
    add("q", c, std::nearbyint(r / l.step[c]) * l.step[c]);  // the Quant's round-half-even of one value
  }
  return out;
}

// Per channel of every exposed tensor: the distinct values the executor produced, on random inputs in
// [0, 1] and on inputs at the ends.
std::map<std::string, std::vector<std::set<float>>> observed_values(const ir::Model& model, int64_t k, std::mt19937& rng) {
  std::map<std::string, std::vector<std::set<float>>> seen;
  auto ex = exec::Executor::create(model);
  EXPECT_TRUE(ex.is_ok());
  if (!ex.is_ok()) return seen;
  EXPECT_TRUE(ex->expose({"h", "hb", "r", "q"}).is_ok());
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::bernoulli_distribution coin(0.5);
  for (int trial = 0; trial < 60; ++trial) {
    Tensor x(DType::kFloat, {2, k});
    for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = trial < 20 ? u(rng) : coin(rng) ? 1.0f : 0.0f;
    auto run = ex->run({{"x", x}});
    EXPECT_TRUE(run.is_ok());
    if (!run.is_ok()) return seen;
    for (const auto& [name, t] : run->exposed) {
      auto& channels = seen[name];
      channels.resize(static_cast<size_t>(t.dim(1)));
      for (int64_t i = 0; i < t.numel(); ++i) channels[static_cast<size_t>(i % t.dim(1))].insert(t.data<float>()[i]);
    }
  }
  return seen;
}

std::string describe(const std::vector<StuckChannel>& v) {
  std::string out;
  for (const StuckChannel& s : v) out += fmt::format("{}[{}]={} ", s.tensor, s.channel, s.value);
  return out;
}

// Exactly the constructed channels are reported, with their values; the executor confirms the
// construction (a stuck channel shows one value, every other channel of h, hb, r, q at least two).
TEST(RangeReport, StuckChannelsAreExactlyTheConstructedOnes) {
  int stuck_total = 0, zero_total = 0;
  for (unsigned seed = 1; seed <= 12; ++seed) {
    std::mt19937 rng(seed);
    const int64_t k = 2 + seed % 6, c = 4 + seed % 5;
    StuckLayer l = stuck_layer(rng, k, c);
    auto model = with_shapes(l.builder);
    ASSERT_TRUE(model.is_ok()) << model.status().message();
    analysis::RangeOptions options;
    options.input_ranges["x"] = {0.0, 1.0};
    auto a = analysis::analyze_ranges(model.value(), options);
    ASSERT_TRUE(a.is_ok()) << a.status().message();
    for (bool zero_only : {false, true}) {
      const auto expected = constructed_stuck(l, zero_only);
      const auto got = analysis::stuck_channels(model->graph(), a.value(), zero_only);
      ASSERT_EQ(got.size(), expected.size()) << "seed " << seed << "\nexpected " << describe(expected) << "\ngot " << describe(got);
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].tensor, expected[i].tensor) << "seed " << seed;
        EXPECT_EQ(got[i].channel, expected[i].channel) << "seed " << seed;
        EXPECT_EQ(got[i].value, expected[i].value) << "seed " << seed << " " << got[i].tensor << "[" << got[i].channel << "]";
      }
      (zero_only ? zero_total : stuck_total) += static_cast<int>(got.size());
    }
    const auto seen = observed_values(model.value(), k, rng);
    const auto stuck = constructed_stuck(l, false);
    for (const auto& entry : seen) {
      const std::string& name = entry.first;
      const auto& channels = entry.second;
      for (size_t ch = 0; ch < channels.size(); ++ch) {
        auto it = std::find_if(stuck.begin(), stuck.end(), [&](const StuckChannel& s) {
          return s.tensor == name && s.channel == static_cast<int64_t>(ch);
        });
        if (it == stuck.end()) {
          EXPECT_GE(channels[ch].size(), 2u) << "seed " << seed << ": " << name << "[" << ch << "] should vary";
        } else {
          ASSERT_EQ(channels[ch].size(), 1u) << "seed " << seed << ": " << name << "[" << ch << "]";
          EXPECT_EQ(*channels[ch].begin(), it->value) << "seed " << seed << ": " << name << "[" << ch << "]";
        }
      }
    }
  }
  EXPECT_GT(zero_total, 10);  // the seeds do make zero-stuck and
  EXPECT_GT(stuck_total, zero_total);  // non-zero-stuck channels
}

// A tensor known only per tensor to be one constant is stuck in every channel of its shape; constants
// (no graph input upstream) are never reported. The graph output declares its shape: infer-shapes
// keeps what graph inputs and outputs declare (onnx_infer_shapes_into), so a shapeless declaration
// would leave y's channel count unknown.
TEST(RangeReport, PointRangeWithoutChannelsIsStuckInEveryChannel) {
  io::ModelBuilder b;
  b.input("x", DType::kFloat, {1, 3, 2}).output("y", DType::kFloat, {1, 6});
  b.initializer("zero", test::f32s(0.0f)).initializer("c", test::f32({1, 2}, {1.0f, 2.0f}));
  b.node("Mul", {"x", "zero"}, {"m"});
  b.node("Flatten", {"m"}, {"y"});
  b.node("Relu", {"c"}, {"cr"});  // constant: not reported
  auto model = with_shapes(b);
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  analysis::RangeOptions options;
  options.input_ranges["x"] = {1.0, 2.0};
  auto a = analysis::analyze_ranges(model.value(), options);
  ASSERT_TRUE(a.is_ok());
  const auto stuck = analysis::stuck_channels(model->graph(), a.value(), true);
  std::vector<std::string> names;
  for (const StuckChannel& s : stuck) names.push_back(s.tensor + "[" + std::to_string(s.channel) + "]");
  // m [1, 3, 2]: 3 channels; y = Flatten [1, 6]: 6.
  EXPECT_EQ(names, (std::vector<std::string>{"m[0]", "m[1]", "m[2]", "y[0]", "y[1]", "y[2]", "y[3]", "y[4]", "y[5]"}));
}

class RangeReportCli : public test::TempDirTest {};

// The JSON of each mode has qonnx's shape with the constructed channels; --key-filter keeps only the
// matching names; the text tables are aligned; a bad mode is a usage error.
TEST_F(RangeReportCli, ModesFilterAndShapes) {
  std::mt19937 rng(5);
  StuckLayer l = stuck_layer(rng, 4, 8);
  const std::string model = path("stuck.onnx");
  ASSERT_TRUE(io::write_file_atomic(model, l.builder.serialize()).is_ok());
  const std::string base = "range " + model + " --input-range x=0,1";

  auto zero = test::run_cli(base + " --report-mode zerostuck_channel --json");
  ASSERT_EQ(zero.exit_code, 0) << zero.err;
  auto stuck_json = test::run_cli(base + " --report-mode stuck_channel --json");
  ASSERT_EQ(stuck_json.exit_code, 0) << stuck_json.err;
  for (bool zero_only : {false, true}) {
    const auto expected = constructed_stuck(l, zero_only);
    ASSERT_FALSE(expected.empty());
    std::map<std::string, std::vector<std::string>> by_tensor;
    for (const StuckChannel& s : expected)
      by_tensor[s.tensor].push_back(zero_only ? std::to_string(s.channel) : fmt::format("[{}, {}]", s.channel, s.value));
    const std::string& out = zero_only ? zero.out : stuck_json.out;
    for (const auto& [tensor, entries] : by_tensor) {
      std::string list;
      for (const std::string& e : entries) list += (list.empty() ? "" : ", ") + e;
      EXPECT_NE(out.find("\"" + tensor + "\": [" + list + "]"), std::string::npos) << tensor << ": " << list << "\n" << out;
    }
    EXPECT_EQ(out.rfind("{\"", 0), 0u) << out;
    EXPECT_NE(out.find("\"@qonnx-cc\": {\"report_mode\": \""), std::string::npos) << out;
  }

  auto ranges = test::run_cli(base + " --json");
  ASSERT_EQ(ranges.exit_code, 0) << ranges.err;
  EXPECT_EQ(ranges.out.rfind("{\"x\": [0, 1], \"xq\": [0, 0.9375], \"h\": [[", 0), 0u) << ranges.out;
  EXPECT_EQ(ranges.out.find("\"w\""), std::string::npos) << "constants are not in qonnx's report\n" << ranges.out;

  auto filtered = test::run_cli(base + " --json --key-filter hb");
  ASSERT_EQ(filtered.exit_code, 0) << filtered.err;
  EXPECT_EQ(filtered.out.rfind("{\"hb\": [[", 0), 0u) << filtered.out;
  for (const char* other : {"\"x\"", "\"xq\"", "\"h\"", "\"r\"", "\"q\""})
    EXPECT_EQ(filtered.out.find(other), std::string::npos) << other << "\n" << filtered.out;

  // Text: every row of the tensor table has its range where the header says "range".
  auto text = test::run_cli(base + " --per-channel");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const size_t header_end = text.out.find('\n');
  const size_t column = text.out.substr(0, header_end).find("range");
  ASSERT_NE(column, std::string::npos) << text.out;
  size_t rows = 0;
  for (size_t start = header_end + 1; start < text.out.size();) {
    const size_t end = text.out.find('\n', start);
    const std::string line = text.out.substr(start, end - start);
    start = end + 1;
    if (line.empty()) break;  // the accumulators follow
    ASSERT_GT(line.size(), column) << line;
    EXPECT_TRUE(line[column] == '[' && line[column - 1] == ' ') << line << "\n" << text.out;
    ++rows;
  }
  EXPECT_GT(rows, 8u);
  // The weights are real numbers (no integer codes): the layer has no integer accumulator to report.
  EXPECT_EQ(text.out.find("accumulators ("), std::string::npos) << text.out;

  auto stuck_text = test::run_cli(base + " --report-mode stuck_channel");
  ASSERT_EQ(stuck_text.exit_code, 0) << stuck_text.err;
  EXPECT_NE(stuck_text.out.find(fmt::format("{} channels in", constructed_stuck(l, false).size())), std::string::npos)
      << stuck_text.out;

  auto bad = test::run_cli(base + " --report-mode stuck");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("zerostuck_channel"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace qonnx
