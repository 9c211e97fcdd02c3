// `cleanup` (qonnx-cleanup): the result computes the very same bits as the input, on every shared model
// and on generated graphs with each idiom the pipeline rewrites.
#include <filesystem>
#include <set>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/io/model_builder.h"
#include "qonnx/io/model_io.h"
#include "support/cli.h"
#include "support/temp_dir.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {
namespace fs = std::filesystem;

class QonnxCleanup : public TempDirTest {
 protected:
  // Runs `model` and its cleanup with each of `flag_sets` on the same seeded inputs (batch 1: some shared
  // models declare 789444 rows; the generator does not depend on input names, which cleanup changes);
  // every output must have the same bytes (.npy: data, dtype and shape, no names).
  // Cleaned models: clean<run>_<k>.onnx.
  void expect_bit_identical(const std::string& model, const std::vector<std::string>& flag_sets = {""}) {
    const std::string tag = std::to_string(run_++);
    const std::string a = path("a" + tag), feed = " --arith float --random-inputs --batch 1 --seed 7 --npy --output-dir ";
    auto r = run_cli("exec " + model + feed + a);
    ASSERT_EQ(r.exit_code, 0) << model << "\n" << r.err;
    for (size_t k = 0; k < flag_sets.size(); ++k) {
      const std::string clean = cleaned(k), b = path("b" + tag + "_" + std::to_string(k));
      r = run_cli("cleanup " + model + " -o " + clean + " " + flag_sets[k]);
      ASSERT_EQ(r.exit_code, 0) << model << " " << flag_sets[k] << "\n" << r.err;
      r = run_cli("exec " + clean + feed + b);
      ASSERT_EQ(r.exit_code, 0) << clean << "\n" << r.err;
      int outputs = 0;
      for (int o = 0; fs::exists(a + "/output_" + std::to_string(o) + ".npy"); ++o, ++outputs) {
        const std::string file = "/output_" + std::to_string(o) + ".npy";
        auto x = io::read_file(a + file), y = io::read_file(b + file);
        ASSERT_TRUE(y.is_ok()) << model << ": no output " << o << " from the cleaned model";
        EXPECT_TRUE(x.value() == y.value()) << model << " " << flag_sets[k] << ": output " << o << " differs after cleanup";
      }
      EXPECT_GT(outputs, 0) << model;
    }
  }
  // The k-th cleaned model of the last expect_bit_identical.
  std::string cleaned(size_t k = 0) const { return path("clean" + std::to_string(run_ - 1) + "_" + std::to_string(k) + ".onnx"); }
  ir::Model load(const std::string& file) {
    auto m = io::load_model(file);
    EXPECT_TRUE(m.is_ok()) << m.status().to_string();
    return std::move(m).value();
  }
  std::string write(const io::ModelBuilder& b, const std::string& name) {
    const std::string file = path(name);
    EXPECT_TRUE(io::write_file_atomic(file, b.serialize()).is_ok());
    return file;
  }
  int run_ = 0;
};

// What qonnx-cleanup promises about its result.
void expect_clean(const ir::Model& m, const std::string& what) {
  const ir::Graph& g = m.graph();
  std::set<const ir::Value*> read;
  std::map<std::string, int> per_op;
  bool qonnx_ops = false;
  for (const auto& n : g.nodes()) {
    EXPECT_EQ(n->name(), n->op_type() + "_" + std::to_string(per_op[n->op_type()]++)) << what;
    if (dialect::classify(*n) != dialect::Op::kNone && n->domain() != dialect::kChannelsLastDomain) {
      qonnx_ops = true;
      EXPECT_EQ(n->domain(), dialect::kGeneralDomain) << what << ": " << n->describe();
    }
    for (const ir::Value* v : n->inputs())
      if (v && v->is_initializer()) EXPECT_TRUE(read.insert(v).second) << what << ": '" << v->name() << "' is shared";
  }
  if (qonnx_ops) EXPECT_TRUE(m.opset(dialect::kGeneralDomain).has_value()) << what;
  for (const ir::Value* v : g.inputs()) EXPECT_FALSE(v->is_initializer()) << what << ": static input " << v->name();
  ASSERT_FALSE(g.inputs().empty());
  EXPECT_EQ(g.inputs()[0]->name(), "global_in") << what;
  EXPECT_EQ(g.outputs()[0]->name(), "global_out") << what;
}

TEST_F(QonnxCleanup, EverySharedModelStaysBitIdentical) {
  auto models = shared_models();
  if (models.empty()) GTEST_SKIP() << "../shared/qonnx_models is absent";
  for (const auto& m : models) {
    expect_bit_identical(m.string());
    expect_clean(load(cleaned()), m.string());
  }
}

TEST_F(QonnxCleanup, EverySharedModelWithWeightQuantizersFoldedStaysBitIdentical) {
  auto models = shared_models();
  if (models.empty()) GTEST_SKIP() << "../shared/qonnx_models is absent";
  for (const auto& m : models) {
    expect_bit_identical(m.string(), {"--preserve-qnt-ops=0"});
    ir::Model folded = load(cleaned());
    expect_clean(folded, m.string() + " --preserve-qnt-ops=0");
    for (const auto& n : folded.graph().nodes()) {
      bool constant = dialect::is_quantizer(*n);
      for (const ir::Value* v : n->inputs()) constant = constant && (!v || v->is_initializer());
      EXPECT_FALSE(constant) << m << ": " << n->describe() << " still quantizes constants";
    }
  }
}

const char* kQ = dialect::kGeneralDomain;

// x -> Quant (in `domain`) -> MatMul(Transpose(Quant(w)), shared Quant(w) again) ... every idiom at once:
// a shared weight, a Transpose after a weight quantizer, a static input, legacy domain spellings.
io::ModelBuilder idioms(const std::string& domain) {
  io::ModelBuilder b(13);
  if (!domain.empty()) b.import(domain, 1);
  b.input("x", DType::kFloat, {2, 3}).input("w", DType::kFloat, {3, 3}).output("y", DType::kFloat, {2, 3});
  std::vector<float> w(9);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.3f * static_cast<float>(i) - 1.1f;
  b.initializer("w", f32({3, 3}, w));  // also a graph input: static
  b.initializer("s", f32({3, 1}, {0.25f, 0.5f, 0.125f})).initializer("z", f32s(0)).initializer("bits", f32s(4));
  b.initializer("as", f32s(0.1f));
  b.node("Quant", {"x", "as", "z", "bits"}, {"xq"}, domain).attr("signed", 1);
  b.node("Quant", {"w", "s", "z", "bits"}, {"wq"}, domain).attr("signed", 1).attr("narrow", 1);
  b.node("Transpose", {"wq"}, {"wt"}).attr("perm", std::vector<int64_t>{1, 0});
  b.node("MatMul", {"xq", "wt"}, {"h"});
  b.node("Quant", {"w", "s", "z", "bits"}, {"wq2"}, domain).attr("signed", 1);
  b.node("MatMul", {"h", "wq2"}, {"y"});
  return b;
}

TEST_F(QonnxCleanup, GeneratedIdiomsInEveryDomainSpelling) {
  for (const std::string domain : {"qonnx.custom_op.general", "finn.custom_op.general", "finn", "onnx.brevitas", ""}) {
    const std::string file = write(idioms(domain), "idioms.onnx");
    expect_bit_identical(file);
    ir::Model clean = load(cleaned());
    expect_clean(clean, "domain '" + domain + "'");
    for (const auto& n : clean.graph().nodes()) EXPECT_NE(n->op_type(), "Transpose") << "domain '" << domain << "'";
    EXPECT_EQ(clean.graph().inputs().size(), 1u);
    if (!domain.empty() && domain != kQ) EXPECT_FALSE(clean.opset(domain).has_value()) << domain;
  }
}

TEST_F(QonnxCleanup, TransposeIsKeptWhereFoldingWouldChangeBroadcasting) {
  // A per-column scale of rank 1 broadcasts along the last axis: transposing W but not the scale would
  // scale rows instead (qonnx folds it anyway).
  io::ModelBuilder b(13);
  b.import(kQ, 1);
  b.input("x", DType::kFloat, {1, 2}).output("y", DType::kFloat, {1, 3});
  b.initializer("w", f32({3, 2}, {0.3f, -0.6f, 1.1f, 0.2f, -0.9f, 0.45f})).initializer("s", f32({2}, {0.25f, 0.125f}));
  b.initializer("z", f32s(0)).initializer("bits", f32s(4));
  b.node("Quant", {"w", "s", "z", "bits"}, {"wq"}, kQ).attr("signed", 1);
  b.node("Transpose", {"wq"}, {"wt"}).attr("perm", std::vector<int64_t>{1, 0});
  b.node("MatMul", {"x", "wt"}, {"y"});
  expect_bit_identical(write(b, "bcast.onnx"));
  ir::Model clean = load(cleaned());
  int transposes = 0;
  for (const auto& n : clean.graph().nodes()) transposes += n->op_type() == "Transpose";
  EXPECT_EQ(transposes, 1);
}

io::ModelBuilder conv_with_bias(bool quantized_bias) {
  io::ModelBuilder b(13);
  b.import(kQ, 1);
  b.input("x", DType::kFloat, {1, 2, 4, 4}).output("y", DType::kFloat, {1, 3, 3, 3});
  std::vector<float> w(24);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.17f * static_cast<float>(i % 7) - 0.5f;
  b.initializer("w", f32({3, 2, 2, 2}, w)).initializer("b", f32({3}, {0.3f, -0.71f, 0.05f}));
  b.initializer("bs", f32({3}, {0.01f, 0.02f, 0.04f})).initializer("z", f32s(0)).initializer("bits", f32s(8));
  std::string bias = "b";
  if (quantized_bias) {
    b.node("Quant", {"b", "bs", "z", "bits"}, {"bq"}, kQ).attr("signed", 1);
    bias = "bq";
  }
  b.node("Conv", {"x", "w", bias}, {"y"}).attr("kernel_shape", std::vector<int64_t>{2, 2});
  return b;
}

TEST_F(QonnxCleanup, ExtractConvBiasPlainAndQuantized) {
  for (bool quantized : {false, true}) {
    expect_bit_identical(write(conv_with_bias(quantized), "conv.onnx"), {"--extract-conv-bias"});
    ir::Model clean = load(cleaned());
    const ir::Node* conv = nullptr;
    for (const auto& n : clean.graph().nodes())
      if (n->op_type() == "Conv") conv = n.get();
    ASSERT_NE(conv, nullptr);
    EXPECT_EQ(conv->inputs().size(), 2u) << "quantized bias: " << quantized;
    ASSERT_EQ(conv->output(0)->uses().size(), 1u);
    EXPECT_EQ(conv->output(0)->uses()[0].node->op_type(), "Add");
  }
}

TEST_F(QonnxCleanup, OverrideBatchAndInputSize) {
  io::ModelBuilder b(13);
  b.input("x", DType::kFloat, {1, 2, 3}).output("y", DType::kFloat, {1, 6});
  b.initializer("target", i64({2}, {1, 6}));
  b.node("Relu", {"x"}, {"r"});
  b.node("Reshape", {"r", "target"}, {"y"});
  const std::string file = write(b, "reshape.onnx");
  ASSERT_EQ(run_cli("cleanup " + file + " -o " + path("b4.onnx") + " --override-batchsize 4").exit_code, 0);
  ir::Model m = load(path("b4.onnx"));
  auto out = m.graph().type_of(m.graph().outputs()[0]);
  ASSERT_TRUE(out && out->has_shape);
  EXPECT_EQ(out->dims, (Dims{4, 6}));
  auto r = run_cli("cleanup " + file + " -o " + path("s.onnx") + " --override-inpsize \"(2,2,3)\"");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ir::Model s = load(path("s.onnx"));
  EXPECT_EQ(s.graph().type_of(s.graph().inputs()[0])->dims, (Dims{2, 2, 3}));
  EXPECT_EQ(run_cli("cleanup " + file + " --override-inpsize \"(1;3)\"").exit_code, 2);
  EXPECT_EQ(run_cli("cleanup " + file + " --override-batchsize 2 --check 1").exit_code, 2);
}

TEST_F(QonnxCleanup, IdempotentDeterministicAndDefaultName) {
  const std::string file = write(idioms("finn"), "m.onnx");
  ASSERT_EQ(run_cli("cleanup " + file).exit_code, 0);
  ASSERT_TRUE(fs::exists(path("m_clean.onnx")));
  ASSERT_EQ(run_cli("cleanup " + file + " -o " + path("again.onnx")).exit_code, 0);
  EXPECT_EQ(io::read_file(path("m_clean.onnx")).value(), io::read_file(path("again.onnx")).value());
  ASSERT_EQ(run_cli("cleanup " + path("m_clean.onnx") + " -o " + path("twice.onnx")).exit_code, 0);
  EXPECT_EQ(io::read_file(path("m_clean.onnx")).value(), io::read_file(path("twice.onnx")).value());
}

TEST_F(QonnxCleanup, CliContract) {
  auto help = run_cli("cleanup --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("Example:"), std::string::npos);
  EXPECT_EQ(run_cli("cleanup " + path("missing.onnx")).exit_code, 3);
  const std::string file = write(idioms(kQ), "m.onnx");
  EXPECT_EQ(run_cli("cleanup " + file + " -o " + file).exit_code, 2);
  EXPECT_EQ(run_cli("cleanup " + file + " -o " + path("no/dir/x.onnx")).exit_code, 4);
  EXPECT_FALSE(fs::exists(path("no/dir/x.onnx")));
  auto check = run_cli("cleanup " + file + " -o " + path("c.onnx") + " --check 3");
  EXPECT_EQ(check.exit_code, 0) << check.err;
  EXPECT_NE(check.out.find("bit-identical"), std::string::npos) << check.out;
  // The pipeline is reachable from convert --passes.
  auto pipeline = run_cli("cleanup " + file + " --dump-pipeline");
  ASSERT_EQ(pipeline.exit_code, 0);
  std::string text = pipeline.out.substr(0, pipeline.out.find('\n'));
  auto converted = run_cli("convert " + file + " --passes '" + text + "' -o " + path("conv.onnx") + " --check 2");
  EXPECT_EQ(converted.exit_code, 0) << converted.err;
}

}  // namespace
}  // namespace qonnx::test
