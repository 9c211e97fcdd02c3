// `exec` on the real models: every shared model runs, deterministically; batch and shape overrides;
// qonnx's finn_datatype sanity check.
#include <filesystem>

#include <gtest/gtest.h>

#include "qonnx/analysis/datatypes.h"
#include "qonnx/io/model_builder.h"
#include "qonnx/io/model_io.h"
#include "qonnx/io/tensor_file.h"
#include "support/cli.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {
namespace fs = std::filesystem;

fs::path temp_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("qonnx_exec_models_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

TEST(ExecModels, EverySharedModelRunsDeterministicallyWithValidDatatypes) {
  auto models = shared_models();
  if (models.empty()) GTEST_SKIP() << "../shared/qonnx_models is absent";
  fs::path dir = temp_dir("determinism");
  for (const auto& m : models) {
    auto a = run_cli("exec " + m.string() + " --random-inputs --seed 5 --check-datatypes --output-dir " + (dir / "a").string());
    auto b = run_cli("exec " + m.string() + " --random-inputs --seed 5 --output-dir " + (dir / "b").string());
    ASSERT_EQ(a.exit_code, 0) << m << "\n" << a.err;
    ASSERT_EQ(b.exit_code, 0) << m << "\n" << b.err;
    EXPECT_NE(a.out.find("datatypes: "), std::string::npos);
    for (const auto& e : fs::directory_iterator(dir / "a"))
      EXPECT_EQ(io::read_file(e.path()).value(), io::read_file(dir / "b" / e.path().filename()).value()) << m;
    fs::remove_all(dir / "a");
    fs::remove_all(dir / "b");
  }
  fs::remove_all(dir);
}

TEST(ExecModels, EspcnRunsOnItsShippedInput) {
  fs::path model = fs::path(QONNX_SHARED_MODELS) / "qonnx/bsd300x3-espcn/subpixel/quant_model.onnx";
  if (!fs::exists(model)) GTEST_SKIP() << "../shared/qonnx_models is absent";
  auto r = run_cli("exec " + model.string() + " --input-dir " + (model.parent_path().parent_path() / "test_data").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("float[1, 3, 256, 256]"), std::string::npos) << r.out;
}

TEST(ExecModels, BatchAndInputShapeOverrides) {
  fs::path dir = temp_dir("batch");
  std::string demo = (dir / "demo.onnx").string();
  ASSERT_EQ(run_cli("demo-model " + demo).exit_code, 0);
  auto batch = run_cli("exec " + demo + " --random-inputs --batch 64");
  ASSERT_EQ(batch.exit_code, 0) << batch.err;
  EXPECT_NE(batch.out.find("float[64, 4]"), std::string::npos) << batch.out;
  auto shape = run_cli("exec " + demo + " --random-inputs --input-shape x=5x16");
  ASSERT_EQ(shape.exit_code, 0) << shape.err;
  EXPECT_NE(shape.out.find("float[5, 4]"), std::string::npos) << shape.out;
  auto bad = run_cli("exec " + demo + " --random-inputs --input-shape x=5xq");
  EXPECT_EQ(bad.exit_code, 2);
  auto wrong = run_cli("exec " + demo + " --random-inputs --input-shape x=5x15");
  EXPECT_EQ(wrong.exit_code, 5) << "MatMul inner dimension mismatch names the node";
  EXPECT_NE(wrong.err.find("MatMul"), std::string::npos) << wrong.err;
  fs::remove_all(dir);
}

TEST(ExecModels, DatatypeCheckFindsValuesOutsideTheAnnotation) {
  EXPECT_TRUE(analysis::check_datatype("t", "INT4", f32({3}, {-8, 0, 7})).is_ok());
  EXPECT_TRUE(analysis::check_datatype("t", "SCALEDINT<4>", f32({1}, {0.3f})).is_ok());
  auto over = analysis::check_datatype("t", "INT4", f32({3}, {-8, 0, 8}));
  EXPECT_EQ(over.code(), Code::kMismatch);
  EXPECT_NE(over.to_string().find("tensor 't' is annotated INT4 but holds 8 at flat index 2"), std::string::npos) << over.to_string();
  EXPECT_FALSE(analysis::check_datatype("t", "UINT2", f32({1}, {1.5f})).is_ok());
  EXPECT_FALSE(analysis::check_datatype("t", "BIPOLAR", f32({1}, {0})).is_ok());
  EXPECT_TRUE(analysis::check_datatype("t", "BINARY", f32({2}, {0, 1})).is_ok());

  // A model whose annotation is wrong fails `exec --check-datatypes` with exit 7.
  io::ModelBuilder b(13);
  b.input("x", DType::kFloat, {2}).output("y", DType::kFloat, {2});
  b.initializer("k", f32({2}, {3, 3}));
  b.node("Mul", {"x", "k"}, {"y"});
  b.annotate("y", "UINT2");
  fs::path dir = temp_dir("datatype");
  ASSERT_TRUE(io::save_model(b.build().value(), dir / "m.onnx").is_ok());
  ASSERT_TRUE(io::write_tensor_npy(dir / "x.npy", f32({2}, {1, 2})).is_ok());
  auto r = run_cli("exec " + (dir / "m.onnx").string() + " --input " + (dir / "x.npy").string() + " --check-datatypes");
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_NE(r.err.find("annotated UINT2 but holds 6"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace qonnx::test
