// explicit-attributes: every attribute it writes is the op's default at the model's version (the ONNX
// library's schema default wherever the schema has one), nothing else changes, and the model computes
// the same bits; counters per attribute.
#include <map>
#include <random>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <onnx/defs/schema.h>

#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/io/model_builder.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {

std::string attr_text(const ir::Node& n, const std::string& name) {
  switch (n.attr_type(name)) {
    case onnx::AttributeProto::INT: return std::to_string(n.attr<int64_t>(name).value());
    case onnx::AttributeProto::FLOAT: return fmt::format("{}", n.attr<float>(name).value());
    case onnx::AttributeProto::STRING: return n.attr<std::string>(name).value();
    case onnx::AttributeProto::INTS: return fmt::format("[{}]", fmt::join(n.attr_ints(name), ","));
    default: return "?";
  }
}

// The schema's default in attr_text's form; "" when the schema gives none.
std::string schema_default_text(const onnx::AttributeProto& a) {
  switch (a.type()) {
    case onnx::AttributeProto::INT: return std::to_string(a.i());
    case onnx::AttributeProto::FLOAT: return fmt::format("{}", a.f());
    case onnx::AttributeProto::STRING: return a.s();
    case onnx::AttributeProto::INTS: return fmt::format("[{}]", fmt::join(a.ints(), ","));
    default: return "";
  }
}

std::map<std::string, std::string> attrs_of(const ir::Node& n) {
  std::map<std::string, std::string> out;
  for (const std::string& name : n.attr_names()) out[name] = attr_text(n, name);
  return out;
}

// Values with quantizer ties (multiples of 1/8 against scale 1/4), both zeros, random floats, the largest
// floats, infinities and NaN.
Tensor input_values(const Dims& dims, std::mt19937& rng) {
  Tensor t(DType::kFloat, dims);
  const float specials[] = {0.0f, -0.0f, 0.125f, -0.375f, 2.5f, -1e30f, 3.4e38f, INFINITY, -INFINITY, NAN};
  std::uniform_real_distribution<float> real(-5.0f, 5.0f);
  std::uniform_int_distribution<int> tie(-40, 40), pick(0, 9);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const int k = pick(rng);
    t.data<float>()[i] = k == 0 ? specials[static_cast<size_t>(i) % 10] : k < 5 ? static_cast<float>(tie(rng)) * 0.125f : real(rng);
  }
  return t;
}

struct Case {
  std::string op;
  std::string domain;  // "" = default
  int64_t opset;
  std::vector<Dims> data;  // runtime inputs x0, x1, ...
  std::vector<std::pair<std::string, Tensor>> params;  // initializers after the data inputs ("" = omitted)
  Attrs attrs;
  std::map<std::string, std::string> written;  // attribute -> value after the pass, for those it sets
};

const char* kGeneral = dialect::kGeneralDomain;
const char* kChannelsLast = dialect::kChannelsLastDomain;

std::vector<Case> cases() {
  const Tensor s = f32s(0.25f), z = f32s(0), bits = f32s(4);
  const std::vector<std::pair<std::string, Tensor>> quant_params = {{"s", s}, {"z", z}, {"bits", bits}};
  const Tensor w2d = f32({2, 3, 3, 3}, std::vector<float>(54, 0.5f));
  const Tensor w1d = f32({2, 3, 3}, {1, -1, 0.5f, 2, -0.25f, 0, 3, 1, -2, 0.5f, 0.5f, 1, -1, 2, 0, 1, 1, -3});
  const Tensor bias = f32({2}, {0.5f, -1});
  const std::string ones2 = "[1,1]", pads2 = "[0,0,0,0]";
  const std::map<std::string, std::string> conv2d = {
      {"kernel_shape", "[3,3]"}, {"strides", ones2}, {"pads", pads2}, {"dilations", ones2}, {"group", "1"}};
  const std::map<std::string, std::string> pool2d = {{"strides", ones2}, {"pads", pads2}};
  const Attrs k33 = [](io::NodeBuilder& n) { n.attr("kernel_shape", std::vector<int64_t>{3, 3}); };
  std::vector<Case> c = {
      // Quant: QONNX's defaults, and the rounding mode spelled the canonical way.
      {"Quant", kGeneral, 13, {{2, 40}}, quant_params, nullptr, {{"signed", "1"}, {"rounding_mode", "ROUND"}}},
      {"Quant", "", 11, {{2, 40}}, quant_params, nullptr, {{"signed", "1"}, {"rounding_mode", "ROUND"}}},  // 2021 export
      {"Quant", kGeneral, 13, {{2, 40}}, quant_params,
       [](io::NodeBuilder& n) { n.attr("rounding_mode", "half_even").attr("signed", 0); }, {{"rounding_mode", "ROUND"}}},
      {"Quant", kGeneral, 13, {{2, 40}}, quant_params,
       [](io::NodeBuilder& n) { n.attr("rounding_mode", "Floor").attr("signed", 1).attr("narrow", 1); },
       {{"rounding_mode", "FLOOR"}}},
      {"Quant", kGeneral, 13, {{2, 40}}, quant_params, [](io::NodeBuilder& n) { n.attr("rounding_mode", "half_up"); },
       {{"rounding_mode", "HALF_UP"}, {"signed", "1"}}},
      {"IntQuant", kGeneral, 13, {{2, 40}}, quant_params,
       [](io::NodeBuilder& n) { n.attr("rounding_mode", "FLOOR").attr("signed", 0); }, {}},
      // Conv in both layouts; pads only without auto_pad.
      {"Conv", "", 13, {{1, 3, 6, 5}}, {{"w", w2d}, {"b", bias}}, nullptr, conv2d},
      {"Conv", "", 11, {{2, 3, 7}}, {{"w", w1d}}, [](io::NodeBuilder& n) { n.attr("strides", std::vector<int64_t>{2}); },
       {{"kernel_shape", "[3]"}, {"pads", "[0,0]"}, {"dilations", "[1]"}, {"group", "1"}}},
      {"Conv", "", 13, {{1, 3, 6, 5}}, {{"w", w2d}}, [](io::NodeBuilder& n) { n.attr("auto_pad", "SAME_LOWER"); },
       {{"kernel_shape", "[3,3]"}, {"strides", ones2}, {"dilations", ones2}, {"group", "1"}}},
      {"Conv", "", 13, {{1, 2, 5, 5}}, {{"w", f32({4, 1, 2, 2}, std::vector<float>(16, -0.75f))}},
       [](io::NodeBuilder& n) { n.attr("group", 2).attr("dilations", std::vector<int64_t>{2, 1}); },
       {{"kernel_shape", "[2,2]"}, {"strides", ones2}, {"pads", pads2}}},
      {"Conv", kChannelsLast, 13, {{1, 6, 5, 3}}, {{"w", f32({2, 3, 3, 3}, std::vector<float>(54, 0.25f))}, {"b", bias}},
       nullptr, conv2d},  // weight (M, k..., C)
      // Pooling at every version range of their attributes.
      {"MaxPool", "", 7, {{1, 2, 6, 6}}, {}, k33, pool2d},
      {"MaxPool", "", 8, {{1, 2, 6, 6}}, {}, k33, pool2d},
      {"MaxPool", "", 12, {{1, 2, 6, 6}}, {}, k33, pool2d},
      {"MaxPool", "", 13, {{1, 2, 9}}, {}, [](io::NodeBuilder& n) { n.attr("kernel_shape", std::vector<int64_t>{2}); },
       {{"strides", "[1]"}, {"pads", "[0,0]"}}},
      {"MaxPool", "", 13, {{1, 2, 6, 6}}, {},
       [](io::NodeBuilder& n) { n.attr("kernel_shape", std::vector<int64_t>{3, 3}).attr("auto_pad", "SAME_UPPER"); },
       {{"strides", ones2}}},
      {"MaxPool", kChannelsLast, 13, {{1, 6, 6, 2}}, {}, k33, pool2d},
      {"AveragePool", "", 7, {{1, 2, 6, 6}}, {}, k33, pool2d},
      {"AveragePool", "", 11, {{1, 2, 6, 6}}, {}, k33, pool2d},
      {"AveragePool", "", 19, {{1, 2, 6, 6}}, {}, k33, pool2d},
      // Softmax's default axis changes at 13 (hls4ml's -1 is the later one); Concat's axis is required from 4.
      {"Softmax", "", 11, {{2, 3, 4}}, {}, nullptr, {{"axis", "1"}}},
      {"Softmax", "", 13, {{2, 3, 4}}, {}, nullptr, {}},
      {"Concat", "", 3, {{2, 3}, {2, 2}}, {}, nullptr, {{"axis", "1"}}},
      {"Concat", "", 13, {{2, 3}, {2, 2}}, {}, [](io::NodeBuilder& n) { n.attr("axis", 1); }, {}},
      // hls4ml's 0.01 against the spec's 1.0; LeakyRelu's defaults agree, nothing is written.
      {"Elu", "", 6, {{3, 7}}, {}, nullptr, {{"alpha", "1"}}},
      {"Elu", "", 13, {{3, 7}}, {}, nullptr, {{"alpha", "1"}}},
      {"ThresholdedRelu", "", 10, {{3, 7}}, {}, nullptr, {{"alpha", "1"}}},
      {"LeakyRelu", "", 13, {{3, 7}}, {}, nullptr, {}},
      {"Transpose", "", 13, {{2, 3, 4, 5}}, {}, nullptr, {{"perm", "[3,2,1,0]"}}},
      {"Resize", "", 10, {{1, 2, 3, 4}}, {{"scales", f32({4}, {1, 1, 2, 3})}}, nullptr, {{"mode", "nearest"}}},
      {"Resize", "", 13, {{1, 2, 3, 4}}, {{"", Tensor()}, {"scales", f32({4}, {1, 1, 2, 3})}}, nullptr, {{"mode", "nearest"}}},
  };
  return c;
}

ir::Model build(const Case& c) {
  io::ModelBuilder b(c.opset);
  if (!c.domain.empty()) b.import(c.domain, 1);
  std::vector<std::string> inputs;
  for (size_t i = 0; i < c.data.size(); ++i) {
    inputs.push_back("x" + std::to_string(i));
    b.input(inputs.back(), DType::kFloat, c.data[i]);
  }
  for (const auto& [name, value] : c.params) {
    inputs.push_back(name);
    if (!name.empty()) b.initializer(name, value);
  }
  io::NodeBuilder n = b.node(c.op, inputs, {"y"}, c.domain);
  if (c.attrs) c.attrs(n);
  b.output("y", DType::kFloat);
  return b.build().value();
}

// The statistic that counts each attribute.
std::string statistic_of(const std::string& attribute) {
  if (attribute == "rounding_mode") return "rounding-mode";
  if (attribute == "kernel_shape") return "kernel-shape";
  return attribute;
}

TEST(ExplicitAttributes, WritesTheSpecDefaultsAndComputesTheSameBits) {
  std::mt19937 rng(20240611);
  std::map<std::string, int64_t> expected_counts;
  pass::PassContext ctx;
  std::set<std::string> schema_checked;
  for (const Case& c : cases()) {
    const std::string label = fmt::format("{}::{} at opset {}", c.domain, c.op, c.opset);
    SCOPED_TRACE(label);
    ir::Model m = build(c);
    const ir::Model before = m.clone();
    const std::map<std::string, std::string> attrs_before = attrs_of(*m.graph().nodes().front());
    auto changed = run_passes(m, "explicit-attributes", ctx);
    ASSERT_TRUE(changed.is_ok()) << changed.status().to_string();
    EXPECT_EQ(changed.value(), !c.written.empty());
    // Exactly the listed attributes were set; the others are as they were.
    std::map<std::string, std::string> expected = attrs_before;
    for (const auto& [name, value] : c.written) expected[name] = value;
    const ir::Node& n = *m.graph().nodes().front();
    EXPECT_EQ(attrs_of(n), expected);
    for (const auto& [name, value] : c.written) {
      const bool respelled = attrs_before.count(name) != 0;
      ++expected_counts[respelled ? "rounding-mode-respelled" : statistic_of(name)];
      if (respelled) continue;
      // A written default is the schema's wherever the ONNX library has one (channels-last ops: ONNX's op).
      const std::string schema_domain = c.domain == kChannelsLast ? "" : c.domain;
      const int64_t version = schema_domain.empty() ? c.opset : 1;
      const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(c.op, static_cast<int>(version), schema_domain);
      ASSERT_NE(schema, nullptr);
      auto it = schema->attributes().find(name);
      ASSERT_NE(it, schema->attributes().end()) << name << " is not an attribute of the op at this version";
      const std::string schema_default = schema_default_text(it->second.default_value);
      if (schema_default.empty()) continue;
      EXPECT_EQ(value, schema_default) << name;
      schema_checked.insert(c.op + "." + name);
    }
    // The same bits on inputs with ties, both zeros, extremes, infinities and NaN.
    for (int run = 0; run < 3; ++run) {
      std::map<std::string, Tensor> feeds;
      for (size_t i = 0; i < c.data.size(); ++i) feeds["x" + std::to_string(i)] = input_values(c.data[i], rng);
      EXPECT_EQ(outputs_differ(before, m, feeds), "");
    }
  }
  // The attributes whose schemas give a default (strides, pads, dilations, kernel_shape, perm have none).
  EXPECT_EQ(schema_checked, (std::set<std::string>{"Conv.group", "Elu.alpha", "Quant.rounding_mode", "Quant.signed",
                                                   "Resize.mode", "Softmax.axis", "ThresholdedRelu.alpha"}));
  std::map<std::string, int64_t> counts;
  for (const auto& [name, value] : ctx.counters().at("explicit-attributes"))
    if (value) counts[name] = value;
  EXPECT_EQ(counts, expected_counts);
}

// A second run changes nothing, and a Conv whose weight shape is unknown gets no kernel_shape but the rest.
TEST(ExplicitAttributes, IsIdempotentAndNeedsTheWeightShapeForKernelShape) {
  io::ModelBuilder b(13);
  b.input("x", DType::kFloat, {1, 2, 5, 5}).input("w", DType::kFloat, {3, 2, -1, -1}).output("y", DType::kFloat);
  b.node("Conv", {"x", "w"}, {"y"});
  ir::Model m = b.build().value();
  ASSERT_TRUE(run_passes(m, "explicit-attributes").value());
  const ir::Node& n = *m.graph().nodes().front();
  EXPECT_FALSE(n.has_attr("kernel_shape"));
  EXPECT_EQ(attr_text(n, "strides"), "[1,1]");  // the spatial rank from the data
  EXPECT_EQ(attr_text(n, "pads"), "[0,0,0,0]");
  EXPECT_FALSE(run_passes(m, "explicit-attributes").value());
}

}  // namespace
}  // namespace qonnx::test
