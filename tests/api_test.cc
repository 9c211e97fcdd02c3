// qonnx/api: the commands as library calls on models in memory (nothing loaded, printed or written),
// and the CLI printing exactly what they return.
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "qonnx/analysis/summary.h"
#include "qonnx/api/commands.h"
#include "qonnx/demo/demo_model.h"
#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/io/model_builder.h"
#include "qonnx/io/model_io.h"
#include "support/cli.h"
#include "support/temp_dir.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {

ir::Model demo_model() {
  auto m = demo::build_demo_model();
  EXPECT_TRUE(m.is_ok()) << m.status().to_string();
  return std::move(m).value();
}

std::string metadata(const ir::Model& m, const std::string& key) {
  for (const auto& kv : m.header().metadata_props())
    if (kv.key() == key) return kv.value();
  return "";
}

bool has_line_containing(const std::vector<std::string>& lines, const std::string& text) {
  for (const auto& l : lines)
    if (l.find(text) != std::string::npos) return true;
  return false;
}

TEST(Api, ConvertReturnsTheModelTheReportAndTheCheck) {
  api::ConvertOptions o;
  o.check = 2;
  o.input_name = "demo.onnx";
  o.output_name = "demo.qdq.onnx";
  ir::Model demo = demo_model();
  const auto quantizers = analysis::summarize(demo).quant_nodes;
  ASSERT_FALSE(quantizers.empty());
  auto r = api::convert(std::move(demo), o);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();

  EXPECT_EQ(r->pipeline, api::convert_pipeline(o).value());
  EXPECT_EQ(metadata(r->model, "qonnx-cc.pipeline"), r->pipeline);
  for (const auto& n : r->model.graph().nodes())
    EXPECT_EQ(dialect::classify(*n), dialect::Op::kNone) << n->describe() << " left in the qdq result";
  EXPECT_FALSE(r->timings.empty());
  EXPECT_FALSE(r->counters.empty());

  // The report is valid JSON naming the input, the output and every quantizer of the input.
  google::protobuf::Struct report;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r->report_json, &report).ok()) << r->report_json;
  EXPECT_EQ(report.fields().at("input").string_value(), "demo.onnx");
  EXPECT_EQ(report.fields().at("output").string_value(), "demo.qdq.onnx");
  const auto& listed = report.fields().at("quantizers").list_value().values();
  ASSERT_EQ(listed.size(), static_cast<int>(quantizers.size()));
  for (int i = 0; i < listed.size(); ++i)
    EXPECT_EQ(listed[i].struct_value().fields().at("node").string_value(), quantizers[i].name);
  EXPECT_EQ(report.fields().at("check").list_value().values_size(), static_cast<int>(r->check_lines.size()));

  ASSERT_FALSE(r->check_lines.empty());
  for (const auto& line : r->check_lines) EXPECT_NE(line.find(": ok over 2 runs"), std::string::npos) << line;
  EXPECT_FALSE(r->check_failed) << r->check_failure;
}

TEST(Api, ConvertCheckFailureIsAResultNotAnError) {
  api::ConvertOptions o;
  o.check = 1;
  o.atol = -1;  // nothing is within a negative tolerance
  o.rtol = 0;
  o.tolerance_given = true;
  auto r = api::convert(demo_model(), o);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_TRUE(r->check_failed);
  EXPECT_NE(r->check_failure.find("differs beyond atol -1"), std::string::npos) << r->check_failure;
  EXPECT_TRUE(has_line_containing(r->check_lines, "MISMATCH over 1 runs"));
  EXPECT_NE(r->report_json.find("\"ok\": false"), std::string::npos) << r->report_json;
}

TEST(Api, ConvertErrorsNameTheInputWhenGiven) {
  api::ConvertOptions unknown_target;
  unknown_target.target = "tflite";
  auto no_target = api::convert_pipeline(unknown_target);
  ASSERT_FALSE(no_target.is_ok());
  EXPECT_EQ(no_target.status().code(), Code::kUsage);
  EXPECT_EQ(no_target.status().message(), "unknown target 'tflite'");

  api::ConvertOptions no_upgrade;
  no_upgrade.passes = "cleanup";
  no_upgrade.target_opset = 19;
  EXPECT_EQ(api::convert_pipeline(no_upgrade).status().message(), "--target-opset applies to pipelines with upgrade-opset");

  io::ModelBuilder b(13);
  b.import("com.example", 1).input("x", DType::kFloat, {2}).output("y", DType::kFloat, {2});
  b.node("Frobnicate", {"x"}, {"y"}, "com.example");
  api::ConvertOptions strict;
  strict.strict = true;
  strict.input_name = "m.onnx";
  auto named = api::convert(b.build().value(), strict);
  ASSERT_FALSE(named.is_ok());
  EXPECT_EQ(named.status().code(), Code::kUnsupported);
  EXPECT_EQ(named.status().context(), std::vector<std::string>{"m.onnx"});
  EXPECT_NE(named.status().message().find("unknown to ONNX and to qonnx-cc"), std::string::npos) << named.status().message();
  strict.input_name.clear();
  auto unnamed = api::convert(b.build().value(), strict);
  ASSERT_FALSE(unnamed.is_ok());
  EXPECT_TRUE(unnamed.status().context().empty()) << unnamed.status().to_string();
}

TEST(Api, ConvertBlamesAnInputThatFailsOnnxTypeCheck) {
  // The declared output shape contradicts Relu's: ONNX's strict shape inference rejects the result, and
  // the search for the pass to blame finds the input (held in memory) already failing.
  io::ModelBuilder b(13);
  b.input("x", DType::kFloat, {2}).output("y", DType::kFloat, {3});
  b.node("Relu", {"x"}, {"y"});
  api::ConvertOptions o;
  o.passes = "cleanup";
  o.input_name = "bad.onnx";
  auto r = api::convert(b.build().value(), o);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidModel) << r.status().to_string();
  EXPECT_NE(r.status().message().find("the input already fails ONNX's strict type and shape check"), std::string::npos)
      << r.status().to_string();
  EXPECT_EQ(r.status().context(), std::vector<std::string>{"bad.onnx"});
}

TEST(Api, CleanupChecksExactlyAndRecordsItsPipeline) {
  api::CleanupOptions o;
  o.check = 2;
  auto r = api::cleanup(demo_model(), o);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(metadata(r->model, "qonnx-cc.pipeline"), api::cleanup_pipeline(o).value());
  ASSERT_FALSE(r->check_lines.empty());
  for (const auto& line : r->check_lines) EXPECT_NE(line.find(": bit-identical over 2 runs"), std::string::npos) << line;
  EXPECT_FALSE(r->check_failed);
  // readable-names: nodes named <op>_<k>.
  for (const auto& n : r->model.graph().nodes()) EXPECT_EQ(n->name().rfind(n->op_type() + "_", 0), 0u) << n->name();

  api::CleanupOptions resized;
  resized.check = 1;
  resized.override_batchsize = 4;
  auto refused = api::cleanup(demo_model(), resized);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.status().code(), Code::kUsage);
  resized.check = 0;
  EXPECT_NE(api::cleanup_pipeline(resized).value().find("override-input-shape{batch=4}"), std::string::npos);
}

TEST(Api, ChannelsLastChecksExactly) {
  io::ModelBuilder b(13);
  b.input("x", DType::kFloat, {1, 2, 5, 5}).output("y", DType::kFloat, {1, 3, 5, 5});
  Tensor w(DType::kFloat, {3, 2, 3, 3});
  for (int64_t i = 0; i < w.numel(); ++i) w.data<float>()[i] = static_cast<float>(i % 7 - 3) * 0.25f;
  b.initializer("w", w);
  b.node("Conv", {"x", "w"}, {"c"}).attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("Relu", {"c"}, {"y"});
  api::ChannelsLastOptions o;
  o.check = 2;
  auto r = api::channels_last(b.build().value(), o);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  int channels_last_ops = 0;
  for (const auto& n : r->model.graph().nodes()) channels_last_ops += n->domain() == dialect::kChannelsLastDomain;
  EXPECT_EQ(channels_last_ops, 1);
  EXPECT_EQ(r->check_lines, std::vector<std::string>{"check y: bit-identical over 2 runs"});
  EXPECT_FALSE(r->check_failed);
  EXPECT_EQ(r->counters.count("to-channels-last"), 1u);
  EXPECT_NE(metadata(r->model, "qonnx-cc.pipeline").find("to-channels-last{make-input-channels-last=0}"), std::string::npos);
}

class ApiCli : public TempDirTest {};

TEST_F(ApiCli, CostJsonParsesAndIsWhatTheCliPrints) {
  api::CostOptions o;
  o.breakdown = true;
  auto r = api::cost(demo_model(), o);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  google::protobuf::Struct json;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r->json, &json).ok()) << r->json;
  EXPECT_GT(json.fields().at("total_cost").struct_value().fields().at("total_macs").number_value(), 0);
  EXPECT_EQ(json.fields().at("node_cost").struct_value().fields_size(), static_cast<int>(r->cost.nodes.size()));
  EXPECT_FALSE(r->preprocessed.graph().nodes().empty());

  ASSERT_TRUE(io::save_model(demo_model(), path("demo.onnx")).is_ok());
  auto cli = run_cli("cost " + path("demo.onnx") + " --breakdown");
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_EQ(cli.out, r->json);
}

}  // namespace
}  // namespace qonnx::test
