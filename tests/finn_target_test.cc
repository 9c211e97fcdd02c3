// convert --target finn on every shared model: the conversion checks (bit for bit against the exact
// reference, and against the original), no activation quantizer is left but the reported ones, every
// MultiThreshold stands for a converted quantizer, every weight is integer with its finn_datatype or
// reported, and no Gemm is left.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/ir/finn_datatype.h"
#include "qonnx/io/model_io.h"
#include "support/cli.h"
#include "support/temp_dir.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {

class FinnTarget : public TempDirTest {};

int count_in(const std::string& text, const std::string& fragment) {
  int n = 0;
  for (size_t at = text.find(fragment); at != std::string::npos; at = text.find(fragment, at + 1)) ++n;
  return n;
}

TEST_F(FinnTarget, EverySharedModelConvertsAndChecks) {
  const auto models = shared_models();
  if (models.empty()) GTEST_SKIP() << "../shared/qonnx_models is absent";
  int i = 0, converted_total = 0;
  for (const auto& in : models) {
    const std::string out = path(fmt::format("m{}.onnx", i)), report = path(fmt::format("r{}.json", i));
    ++i;
    // Two runs; one for the models whose declared batch makes a run take seconds.
    const bool large = in.string().find("three_layer") != std::string::npos;
    auto r = run_cli(fmt::format("convert {} --target finn --check {} -o {} --report {}", in.string(), large ? 1 : 2, out, report));
    ASSERT_EQ(r.exit_code, 0) << in << "\n" << r.err << r.out;
    EXPECT_NE(r.out.find("ok over"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("MISMATCH"), std::string::npos) << in << "\n" << r.out;
    EXPECT_EQ(count_in(r.out, "against the exact reference: max abs error 0,"), count_in(r.out, "against the exact reference")) << r.out;
    auto m = io::load_model(out);
    ASSERT_TRUE(m.is_ok()) << m.status().to_string();
    const std::string json = io::read_file(report).value();
    int multithresholds = 0;
    for (const auto& n : m.value().graph().nodes()) {
      EXPECT_NE(n->op_type(), "Gemm") << in;
      multithresholds += n->op_type() == dialect::kMultiThresholdOp;
      if (dialect::is_quantizer(*n))
        EXPECT_NE(json.find(fmt::format("\"node\": \"{}\", \"op_type\": \"{}\", \"outcome\": \"left\"", n->name(), n->op_type())),
                  std::string::npos)
            << in << ": " << n->describe() << " is left without a reason in the report";
    }
    // MultiThresholds the input already had (FINN exports) are kept as they are.
    int before = 0;
    const auto original = io::load_model(in);
    ASSERT_TRUE(original.is_ok());
    for (const auto& n : original.value().graph().nodes()) before += n->op_type() == dialect::kMultiThresholdOp;
    const int converted = count_in(json, "\"outcome\": \"converted\", \"detail\": \"MultiThreshold");
    EXPECT_EQ(multithresholds, converted + before) << in;
    converted_total += converted;
    // Weights annotated with an integer type hold values of that type.
    const ir::Graph& g = m.value().graph();
    for (const auto& n : g.nodes())
      for (const ir::Value* v : n->inputs()) {
        if (!v || !v->is_initializer()) continue;
        const auto type = ir::parse_finn_datatype(g.finn_datatype(v->name()));
        if (!type || !type->is_integer()) continue;
        const Tensor t = g.initializer_tensor(v).value();
        for (int64_t k = 0; k < t.numel() && t.dtype() == DType::kFloat; ++k)
          ASSERT_TRUE(type->allows(t.data<float>()[k])) << in << ": " << v->name() << " " << type->name;
      }
  }
  EXPECT_GT(converted_total, 40);  // the quantized models' activation quantizers, all but the 16-bit ones
}

// minimize-accumulator-width: the accumulators get their exact widths (TFC_2W2A: 10, 7, 7, 7 bits, as
// docs/range.md derives), and every annotation the finn form carries holds on executed inputs.
TEST_F(FinnTarget, AccumulatorsGetTheirSmallestTypesAndTheyHold) {
  const auto models = shared_models();
  if (models.empty()) GTEST_SKIP() << "../shared/qonnx_models is absent";
  int i = 0, accumulators = 0;
  for (const auto& in : models) {
    if (in.string().find("three_layer") != std::string::npos) continue;  // seconds per run, nothing new
    const std::string out = path(fmt::format("m{}.onnx", i++));
    auto r = run_cli(fmt::format("convert {} --target finn -o {}", in.string(), out));
    ASSERT_EQ(r.exit_code, 0) << in << "\n" << r.err;
    for (int seed = 1; seed <= 3; ++seed) {
      auto e = run_cli(fmt::format("exec {} --random-inputs --seed {} --check-datatypes", out, seed));
      EXPECT_EQ(e.exit_code, 0) << in << " seed " << seed << "\n" << e.err;
    }
    auto m = io::load_model(out);
    ASSERT_TRUE(m.is_ok());
    std::vector<std::string> widths;
    for (const auto& n : m->graph().nodes())
      if ((n->op_type() == "MatMul" || n->op_type() == "Conv") && n->output(0)) {
        const auto type = ir::parse_finn_datatype(m->graph().finn_datatype(n->output(0)->name()));
        if (type && type->is_integer() && type->name != "INT32") {
          widths.push_back(type->name);
          ++accumulators;
        }
      }
    if (in.filename() == "TFC_2W2A.onnx" && in.parent_path().filename() == "qonnx_model_zoo")
      EXPECT_EQ(widths, (std::vector<std::string>{"INT10", "INT7", "INT7", "INT7"}));
  }
  EXPECT_GT(accumulators, 4);  // more models than the one checked exactly above
}

// A quantizer left by the pass is named with its reason; --strict makes it an error; the bit width option
// reaches the pass.
TEST_F(FinnTarget, LeftQuantizersAreReportedAndStrictRefusesThem) {
  const std::filesystem::path mdc = shared_model("qonnx2mdc/qonnx_model.onnx");
  if (mdc.empty()) GTEST_SKIP() << "../shared/qonnx_models is absent";
  auto r = run_cli("convert " + mdc.string() + " --target finn -o " + path("a.onnx"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("bit width 16 above max-bits 8"), std::string::npos) << r.err;
  auto strict = run_cli("convert " + mdc.string() + " --target finn --strict -o " + path("b.onnx"));
  EXPECT_EQ(strict.exit_code, 6) << strict.err;
  EXPECT_FALSE(std::filesystem::exists(path("b.onnx")));
  auto wide = run_cli("convert " + mdc.string() + " --target finn --max-multithreshold-bits 16 --check 1 -o " + path("c.onnx"));
  ASSERT_EQ(wide.exit_code, 0) << wide.err;
  EXPECT_EQ(wide.err.find("above max-bits"), std::string::npos) << wide.err;
  auto elsewhere = run_cli("convert " + mdc.string() + " --target qdq --max-multithreshold-bits 4 -o " + path("d.onnx"));
  EXPECT_EQ(elsewhere.exit_code, 2) << elsewhere.err;
}

// A QCDQ export (made here with --target qdq) reaches the FINN form too, exactly.
TEST_F(FinnTarget, QcdqExportBecomesTheFinnForm) {
  const std::filesystem::path in = shared_model("qonnx_model_zoo/TFC_2W2A.onnx");
  if (in.empty()) GTEST_SKIP() << "../shared/qonnx_models is absent";
  ASSERT_EQ(run_cli("convert " + in.string() + " --target qdq -o " + path("qdq.onnx")).exit_code, 0);
  auto r = run_cli("convert " + path("qdq.onnx") + " --target finn --check 2 -o " + path("f.onnx"));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("against the original: max abs error 0,"), std::string::npos) << r.out;
  auto m = io::load_model(path("f.onnx"));
  ASSERT_TRUE(m.is_ok());
  int multithresholds = 0;
  for (const auto& n : m.value().graph().nodes()) {
    EXPECT_NE(n->op_type(), "QuantizeLinear");
    EXPECT_NE(n->op_type(), "DequantizeLinear");
    multithresholds += n->op_type() == dialect::kMultiThresholdOp;
  }
  EXPECT_EQ(multithresholds, 4);
}

}  // namespace
}  // namespace qonnx::test
