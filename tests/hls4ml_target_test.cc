// convert --target hls4ml: real models through the pipeline with --check, the form hls4ml reads (no Gemm,
// channels-last Conv/MaxPool, quantizers kept, a shape for every node input), QCDQ exports turned into
// Quant nodes, and hls4ml-support's report of what hls4ml will not take.
#include <gtest/gtest.h>

#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/io/model_builder.h"
#include "qonnx/io/model_io.h"
#include "qonnx/io/model_text.h"
#include "qonnx/pass/pass.h"
#include "support/cli.h"
#include "support/temp_dir.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {

class Hls4mlTarget : public TempDirTest {};

int count_ops(const ir::Model& m, const std::function<bool(const ir::Node&)>& pred) {
  int n = 0;
  for (const auto& node : m.graph().nodes()) n += pred(*node);
  return n;
}

bool is_quantizer(const ir::Node& n) {
  const dialect::Op op = dialect::classify(n);
  return op == dialect::Op::kQuant || op == dialect::Op::kBipolarQuant;
}

// The hls4ml form: no Gemm, no QuantizeLinear/DequantizeLinear, Conv and MaxPool channels-last, a declared
// shape for every node input (initializers too), every node named.
void expect_hls4ml_form(const ir::Model& m, const std::string& label) {
  const ir::Graph& g = m.graph();
  for (const auto& n : g.nodes()) {
    EXPECT_NE(n->op_type(), "Gemm") << label;
    EXPECT_NE(n->op_type(), "QuantizeLinear") << label;
    EXPECT_NE(n->op_type(), "DequantizeLinear") << label;
    if (n->op_type() == "Conv" || n->op_type() == "MaxPool")
      EXPECT_NE(dialect::classify(*n), dialect::Op::kNone) << label << ": " << n->describe() << " is not channels-last";
    EXPECT_FALSE(n->name().empty()) << label;
    for (const ir::Value* v : n->inputs())
      if (v) EXPECT_TRUE(g.type_of(v).has_value()) << label << ": " << n->describe() << " input '" << v->name() << "' has no declared type";
  }
}

// Every model below (fast ones; the rest of ../shared/qonnx_models is run by hand, docs/hls4ml.md): the
// target converts it, --check passes with the default tolerance, the result is in the hls4ml form and
// keeps the input's quantizers.
TEST_F(Hls4mlTarget, SharedModelsConvertCheckAndKeepTheirQuantizers) {
  const char* const kModels[] = {"qonnx_model_zoo/TFC_2W2A.onnx", "example-models/bnn_model_fc_1layer.onnx",
                                 "qonnx2mdc/qonnx_model.onnx", "example-models/separable_conv_model_ch_last.onnx",
                                 "old_opset/conv2d_small_mp_keras.onnx", "qonnx/eltwise_chanlast_testcase.onnx"};
  if (shared_models().empty()) GTEST_SKIP() << "../shared/qonnx_models is absent";
  int i = 0;
  for (const char* tail : kModels) {
    const std::filesystem::path in = shared_model(tail);
    ASSERT_FALSE(in.empty()) << tail;
    const std::string out = path("m" + std::to_string(i++) + ".onnx");
    auto r = run_cli("convert " + in.string() + " --target hls4ml --check 2 -o " + out);
    ASSERT_EQ(r.exit_code, 0) << tail << "\n" << r.err << r.out;
    EXPECT_NE(r.out.find(": ok over 2 runs"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("MISMATCH"), std::string::npos) << r.out;
    auto original = io::load_model(in);
    auto converted = io::load_model(out);
    ASSERT_TRUE(original.is_ok() && converted.is_ok());
    expect_hls4ml_form(converted.value(), tail);
    EXPECT_EQ(count_ops(converted.value(), is_quantizer), count_ops(original.value(), is_quantizer)) << tail;
  }
  // qonnx2mdc has Conv and MaxPool: both became channels-last.
  auto mdc = io::load_model(path("m2.onnx"));
  EXPECT_EQ(count_ops(mdc.value(), [](const ir::Node& n) { return dialect::classify(n) == dialect::Op::kChannelsLastConv; }), 2);
  EXPECT_EQ(count_ops(mdc.value(), [](const ir::Node& n) { return dialect::classify(n) == dialect::Op::kChannelsLastMaxPool; }), 2);
}

// The legacy TFC_1W1A exports (Quant without rounding_mode) and qonnx2mdc (MaxPool without pads) use
// QONNX/ONNX defaults hls4ml does not apply: explicit-attributes writes them out, so hls4ml-support has
// nothing left to report, and the result is bit-identical.
TEST_F(Hls4mlTarget, DefaultsHls4mlDoesNotApplyAreWrittenOut) {
  struct Expectation {
    const char* model;
    const char* written;  // explicit-attributes' statistic
  };
  const Expectation kModels[] = {
      {"legacy_2021_6e618d8/TFC_1W1A.onnx", "explicit-attributes: rounding-mode = 8"},
      {"legacy_2021_6e618d8/TFC_1W1A_with_domains_and_shapes.onnx", "explicit-attributes: rounding-mode = 8"},
      {"qonnx2mdc/qonnx_model.onnx", "explicit-attributes: pads = 2"}};
  if (shared_models().empty()) GTEST_SKIP() << "../shared/qonnx_models is absent";
  for (const Expectation& e : kModels) {
    const std::filesystem::path in = shared_model(e.model);
    ASSERT_FALSE(in.empty()) << e.model;
    auto r = run_cli("convert " + in.string() + " --target hls4ml --check 2 --atol 0 --rtol 0 --stats -o " + path("m.onnx"));
    ASSERT_EQ(r.exit_code, 0) << e.model << "\n" << r.err << r.out;
    EXPECT_NE(r.out.find(": ok over 2 runs: max abs error 0"), std::string::npos) << r.out;
    EXPECT_NE((r.out + r.err).find(e.written), std::string::npos) << r.out << r.err;
    EXPECT_EQ(r.err.find("warning"), std::string::npos) << e.model << "\n" << r.err;
    EXPECT_EQ((r.out + r.err).find("hls4ml-support: unsupported"), std::string::npos) << r.out << r.err;
  }
}

// A QCDQ export (made here with --target qdq) becomes Quant nodes hls4ml reads, exactly.
TEST_F(Hls4mlTarget, QcdqExportBecomesQuantNodes) {
  const std::filesystem::path in = shared_model("qonnx_model_zoo/TFC_2W2A.onnx");
  if (in.empty()) GTEST_SKIP() << "../shared/qonnx_models is absent";
  auto qdq = run_cli("convert " + in.string() + " --target qdq -o " + path("qdq.onnx"));
  ASSERT_EQ(qdq.exit_code, 0) << qdq.err;
  auto r = run_cli("convert " + path("qdq.onnx") + " --target hls4ml --check 2 --atol 0 --rtol 0 -o " + path("h.onnx") +
                   " --report " + path("r.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  auto m = io::load_model(path("h.onnx"));
  ASSERT_TRUE(m.is_ok());
  expect_hls4ml_form(m.value(), "qdq TFC_2W2A");
  EXPECT_EQ(count_ops(m.value(), is_quantizer), 8);  // 4 weight and 4 activation quantizers
  const std::string report = io::read_file(path("r.json")).value();
  EXPECT_NE(report.find("\"hls4ml-support\": {\"quantizers\": 8"), std::string::npos) << report;
}

// hls4ml-support names each node hls4ml will not take and why, counts it, and changes nothing.
TEST(Hls4mlSupport, ReportsWhatHls4mlRefuses) {
  const char* kQ = "qonnx.custom_op.general";
  io::ModelBuilder b(13);
  b.import(kQ, 1);
  b.input("x", DType::kFloat, {1, 4}).output("y", DType::kFloat, {1, 3});
  b.initializer("s", f32s(0.25f)).initializer("z", f32s(0)).initializer("bits", f32s(4)).initializer("w", f32({4, 3}, std::vector<float>(12, 0.5f)));
  b.node("Quant", {"x", "s", "z", "bits"}, {"xq"}, kQ).attr("signed", int64_t{1}).attr("narrow", int64_t{0}).attr("rounding_mode", "ROUND");
  b.node("Quant", {"xq", "s", "z", "bits"}, {"xq2"}, kQ).attr("signed", int64_t{1}).attr("narrow", int64_t{0}).attr("rounding_mode", "CEIL");
  b.node("Quant", {"xq2", "s", "z", "bits"}, {"xq3"}, kQ).attr("narrow", int64_t{0}).attr("rounding_mode", "ROUND");
  b.node("Trunc", {"xq3", "s", "z", "bits", "bits"}, {"t"}, kQ);
  b.node("MatMul", {"t", "w"}, {"y"});
  ir::Model m = b.build().value();
  ASSERT_TRUE(run_passes(m, "infer-shapes{initializers=1}").is_ok());
  const ir::Model before = m.clone();
  pass::PassContext ctx;
  auto changed = run_passes(m, "hls4ml-support", ctx);
  ASSERT_TRUE(changed.is_ok()) << changed.status().to_string();
  EXPECT_FALSE(changed.value());
  EXPECT_EQ(io::to_onnx_text(m, 64), io::to_onnx_text(before, 64));
  std::vector<std::string> warnings, notes;
  for (const auto& d : ctx.diagnostics()) (d.warning ? warnings : notes).push_back(d.node + ": " + d.message);
  EXPECT_EQ(warnings, (std::vector<std::string>{
                          "Quant_1: hls4ml: rounding_mode CEIL (hls4ml takes ROUND and FLOOR)",
                          "Quant_2: hls4ml: signed is absent: QONNX's default is 1, hls4ml reads it as 0 (unsigned)",
                          "Trunc_3: hls4ml: no handler for Trunc (hls4ml stops with 'Unsupported operation type')"}));
  EXPECT_EQ(notes, (std::vector<std::string>{"Quant_0: hls4ml: ap_fixed<4,2,AP_RND_CONV,AP_SAT> (scale a power of two, zero point 0)"}));
  EXPECT_EQ(ctx.counters().at("hls4ml-support").at("unsupported"), 3);
  EXPECT_EQ(ctx.counters().at("hls4ml-support").at("quantizers"), 1);
}

// Layouts hls4ml's handlers misread: global pooling (channel count from dimension 1, data pooled as
// channels-last) unless one channel or one position, and 1-D pooling; Resize modes and Flatten axes it
// does not have; attributes it reads with another default or none.
TEST(Hls4mlSupport, ReportsLayoutsAndModesHls4mlMisreads) {
  const char* kCl = dialect::kChannelsLastDomain;
  io::ModelBuilder b(13);
  b.import(kCl, 1);
  b.input("x", DType::kFloat, {1, 3, 4, 4}).input("x1", DType::kFloat, {1, 1, 4, 4}).input("x2", DType::kFloat, {1, 5, 3});
  b.input("x3", DType::kFloat, {1, 3, 1, 1});
  b.initializer("roi", f32({0}, {})).initializer("scales", f32({4}, {1, 1, 2, 2}));
  for (const char* y : {"g0", "g1", "g2", "p", "r", "f0", "f1", "f2", "r2", "e"}) b.output(y, DType::kFloat);
  b.node("GlobalAveragePool", {"x"}, {"g0"});
  b.node("GlobalMaxPool", {"x1"}, {"g1"});  // one channel: both orders agree
  b.node("GlobalAveragePool", {"x3"}, {"g2"});  // one position
  b.node("MaxPool", {"x2"}, {"p"}, kCl)
      .attr("kernel_shape", std::vector<int64_t>{2})
      .attr("strides", std::vector<int64_t>{1})
      .attr("pads", std::vector<int64_t>{0, 0});
  b.node("Resize", {"x", "roi", "scales"}, {"r"}).attr("mode", "linear");
  b.node("Flatten", {"x"}, {"f0"}).attr("axis", 2);
  b.node("Flatten", {"x"}, {"f1"}).attr("axis", 0);  // a batch of 1: hls4ml's form
  b.node("Flatten", {"x1"}, {"f2"}).attr("axis", 2);  // one channel: hls4ml's form too
  b.node("Resize", {"x", "roi", "scales"}, {"r2"});
  b.node("Elu", {"x"}, {"e"});
  ir::Model m = b.build().value();
  ASSERT_TRUE(run_passes(m, "infer-shapes{initializers=1}").is_ok());
  pass::PassContext ctx;
  ASSERT_TRUE(run_passes(m, "hls4ml-support", ctx).is_ok());
  std::vector<std::string> warnings;
  for (const auto& d : ctx.diagnostics())
    if (d.warning) warnings.push_back(d.node + ": " + d.message);
  EXPECT_EQ(warnings, (std::vector<std::string>{
                          "GlobalAveragePool_0: hls4ml: hls4ml takes dimension 1 of [1, 3, 4, 4] as the channels "
                          "(channels-first, as ONNX defines the op) but pools the data in channels-last order (element "
                          "position * channels + channel): it pools the wrong elements unless there is one channel or "
                          "one position",
                          "MaxPool_3: hls4ml: 1-D pooling: hls4ml's handler sets no pad_left/pad_right, which its "
                          "Pooling1D layer requires, and takes the channel count from dimension 1, the width of "
                          "channels-last data",
                          "Resize_4: hls4ml: mode linear: hls4ml's Resize takes 'nearest' (and 'bilinear', a name ONNX "
                          "does not use)",
                          "Flatten_5: hls4ml: hls4ml flattens every dimension after the first, this Flatten does not",
                          "Resize_8: hls4ml: attribute mode is absent (hls4ml reads it without a default)",
                          "Elu_9: hls4ml: alpha is absent: ONNX's default is 1.0, hls4ml's 0.01"}));
  EXPECT_EQ(ctx.counters().at("hls4ml-support").at("unsupported"), 6);
}

TEST(Hls4mlTargetPipeline, IsListedAndEndsWithTheReport) {
  auto r = run_cli("list-passes");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("hls4ml"), std::string::npos);
  EXPECT_NE(r.out.find("gemm-to-matmul"), std::string::npos);
  EXPECT_NE(r.out.find("hls4ml-support"), std::string::npos);
  auto p = run_cli("convert x.onnx --target hls4ml --dump-pipeline");
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find("qcdq-to-qonnx,"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("to-channels-last,gemm-to-matmul,"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find(",readable-names,explicit-attributes,hls4ml-support\n"), std::string::npos) << p.out;
}

}  // namespace
}  // namespace qonnx::test
