// `qonnx-cc convert`: real models with --check, determinism, idempotence, atomic output.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/io/model_builder.h"
#include "qonnx/io/model_io.h"
#include "support/cli.h"
#include "support/temp_dir.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {
namespace fs = std::filesystem;

class Convert : public TempDirTest {
 protected:
};

// No Quant/BipolarQuant/Trunc whose inputs are all initializers.
int constant_quantizers(const ir::Model& m) {
  int n = 0;
  for (const auto& node : m.graph().nodes()) {
    if (!dialect::is_integer_quantizer(*node)) continue;
    bool all_const = true;
    for (const ir::Value* v : node->inputs()) all_const &= !v || v->is_initializer();
    n += all_const;
  }
  return n;
}

TEST_F(Convert, EverySharedModelFoldsAndMatches) {
  auto models = shared_models();
  if (models.empty()) GTEST_SKIP() << "../shared/qonnx_models is absent";
  int i = 0;
  for (const auto& m : models) {
    std::string out = path("m" + std::to_string(i++) + ".onnx");
    // Two seeded runs: some real models declare huge batches (789444 rows), and the suite also runs
    // under the sanitizers.
    auto r = run_cli("convert " + m.string() + " --target fold --check 2 -o " + out);
    ASSERT_EQ(r.exit_code, 0) << m << "\n" << r.err << r.out;
    EXPECT_NE(r.out.find(": ok over 2 runs"), std::string::npos) << r.out;
    auto converted = io::load_model(out);
    ASSERT_TRUE(converted.is_ok()) << converted.status().to_string();
    EXPECT_EQ(constant_quantizers(converted.value()), 0) << m;
    // Converting the output again changes nothing.
    std::string again = out + ".again.onnx";
    auto r2 = run_cli("convert " + out + " --target fold -o " + again);
    ASSERT_EQ(r2.exit_code, 0) << r2.err;
    EXPECT_EQ(io::read_file(out).value(), io::read_file(again).value()) << m << ": not idempotent";
  }
  std::printf("converted %d shared models\n", i);
}

TEST_F(Convert, SameInputSameBytes) {
  auto models = shared_models();
  if (models.empty()) GTEST_SKIP() << "../shared/qonnx_models is absent";
  for (const auto& m : models) {
    ASSERT_EQ(run_cli("convert " + m.string() + " -o " + path("a.onnx")).exit_code, 0);
    ASSERT_EQ(run_cli("convert " + m.string() + " -o " + path("b.onnx")).exit_code, 0);
    EXPECT_EQ(io::read_file(path("a.onnx")).value(), io::read_file(path("b.onnx")).value()) << m;
  }
}

std::string bad_model(const std::string& file) {
  io::ModelBuilder b(13);
  b.import("qonnx.custom_op.general", 1);
  b.input("x", DType::kFloat, {2}).output("y", DType::kFloat, {2});
  b.initializer("w", f32({2}, {1, 2})).initializer("s", f32s(1)).initializer("z", f32s(0)).initializer("bw", f32s(0));
  b.node("Quant", {"w", "s", "z", "bw"}, {"wq"}, "qonnx.custom_op.general").name("Quant_bad");
  b.node("Add", {"x", "wq"}, {"y"});
  EXPECT_TRUE(io::save_model(b.build().value(), file).is_ok());
  return file;
}

TEST_F(Convert, FailingPassLeavesOutputUntouched) {
  std::string in = bad_model(path("bad.onnx"));
  std::ofstream(path("out.onnx")) << "previous output";
  auto r = run_cli("convert " + in + " --target fold -o " + path("out.onnx"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("[fold-quant-weights]: node 'Quant_bad'"), std::string::npos) << r.err;
  EXPECT_EQ(io::read_file(path("out.onnx")).value(), "previous output");
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir_)) files += e.is_regular_file();
  EXPECT_EQ(files, 2) << "no temp files left";
}

TEST_F(Convert, DefaultOutputNameAndNoOverwrite) {
  auto w = run_cli("demo-model " + path("demo.onnx"));
  ASSERT_EQ(w.exit_code, 0);
  auto r = run_cli("convert " + path("demo.onnx") + " --target fold");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(path("demo.fold.onnx")));
  auto same = run_cli("convert " + path("demo.onnx") + " -o " + path("demo.onnx"));
  EXPECT_EQ(same.exit_code, 2);
  EXPECT_NE(same.err.find("refusing to overwrite"), std::string::npos);
  auto bad_target = run_cli("convert " + path("demo.onnx") + " --target nope");
  EXPECT_EQ(bad_target.exit_code, 2);
  auto bad_pass = run_cli("convert " + path("demo.onnx") + " --passes fold-constans");
  EXPECT_EQ(bad_pass.exit_code, 2);
  EXPECT_NE(bad_pass.err.find("did you mean 'fold-constants'"), std::string::npos) << bad_pass.err;
}

TEST_F(Convert, ReportDepfileMetadataAndDump) {
  ASSERT_EQ(run_cli("demo-model " + path("demo.onnx")).exit_code, 0);
  auto r = run_cli("convert " + path("demo.onnx") + " --target fold -o " + path("out.onnx") + " --check 2 --report " +
                   path("report.json") + " --depfile " + path("out.d") + " --timing --stats");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string report = io::read_file(path("report.json")).value();
  EXPECT_NE(report.find("\"pipeline\": \"freeze-initializer-inputs,fold-quant-weights,fold-constants,cleanup,infer-shapes\""), std::string::npos) << report;
  EXPECT_NE(report.find("\"node\": \"Quant_1\", \"op_type\": \"Quant\", \"outcome\": \"folded\""), std::string::npos) << report;
  EXPECT_NE(report.find("\"node\": \"Quant_0\", \"op_type\": \"Quant\", \"outcome\": \"left\""), std::string::npos) << report;
  EXPECT_EQ(io::read_file(path("out.d")).value(), path("out.onnx") + ": " + path("demo.onnx") + "\n");
  EXPECT_NE(r.err.find("timing: fold-quant-weights"), std::string::npos);
  EXPECT_NE(r.err.find("stats: fold-quant-weights: folded-quantizers = 2"), std::string::npos) << r.err;
  auto m = io::load_model(path("out.onnx"));
  ASSERT_TRUE(m.is_ok());
  auto dump = run_cli("convert " + path("demo.onnx") + " --dump-pipeline --passes 'cleanup , fold-constants'");
  EXPECT_EQ(dump.exit_code, 0);
  EXPECT_EQ(dump.out, "cleanup,fold-constants\n");
}

TEST_F(Convert, CheckMismatchExitsSevenAndWritesNothing) {
  // A pipeline that changes numbers: folding int weights is exact, so force a mismatch through a
  // tolerance of -1 (nothing can be within it).
  ASSERT_EQ(run_cli("demo-model " + path("demo.onnx")).exit_code, 0);
  auto r = run_cli("convert " + path("demo.onnx") + " -o " + path("out.onnx") + " --check 1 --atol -1 --rtol 0");
  EXPECT_EQ(r.exit_code, 7) << r.err;
  EXPECT_FALSE(fs::exists(path("out.onnx")));
}

}  // namespace
}  // namespace qonnx::test
