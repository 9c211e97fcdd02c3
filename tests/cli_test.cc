// The qonnx-cc binary: exit codes, messages, outputs, nothing written on failure.
#include <cmath>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "qonnx/io/model_builder.h"
#include "qonnx/io/model_io.h"
#include "qonnx/io/tensor_file.h"
#include "support/cli.h"
#include "support/temp_dir.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {
namespace fs = std::filesystem;

class Cli : public TempDirTest {
 protected:

  // A single Quant node x[4] -> y[4] with the given bit width and scale.
  std::string quant_model(const std::string& name, float bits, float scale, const std::string& mode = "ROUND") {
    io::ModelBuilder b(13);
    b.import("qonnx.custom_op.general", 1);
    b.input("x", DType::kFloat, {4}).output("y", DType::kFloat, {4});
    b.initializer("s", f32s(scale)).initializer("z", f32s(0)).initializer("bw", f32s(bits));
    b.node("Quant", {"x", "s", "z", "bw"}, {"y"}, "qonnx.custom_op.general").name("Quant_7").attr("rounding_mode", mode);
    // Written as bytes: a bad rounding mode does not load (the file is what the CLI must refuse).
    EXPECT_TRUE(io::write_file_atomic(path(name), b.serialize()).is_ok());
    return path(name);
  }

};

TEST_F(Cli, VersionAndHelp) {
  auto v = run_cli("--version");
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_NE(v.out.find("qonnx-cc"), std::string::npos);
  EXPECT_NE(v.out.find("ONNX library 1."), std::string::npos);
  EXPECT_NE(v.out.find("protobuf 3."), std::string::npos);
  auto h = run_cli("--help");
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_NE(h.out.find("7  numeric mismatch"), std::string::npos) << h.out;
  EXPECT_NE(h.out.find("exec"), std::string::npos);
}

TEST_F(Cli, UsageErrorsExitTwo) {
  EXPECT_EQ(run_cli("").exit_code, 2);
  EXPECT_EQ(run_cli("frobnicate").exit_code, 2);
  EXPECT_EQ(run_cli("info").exit_code, 2);
  EXPECT_EQ(run_cli("exec " + quant_model("q.onnx", 4, 1)).exit_code, 2) << "exec without inputs";
}

TEST_F(Cli, UnreadableAndInvalidModels) {
  auto missing = run_cli("info " + path("missing.onnx"));
  EXPECT_EQ(missing.exit_code, 3);
  EXPECT_NE(missing.err.find("missing.onnx"), std::string::npos);
  EXPECT_EQ(run_cli("info " + dir_.string()).exit_code, 3) << "a directory";
  std::ofstream(path("garbage.onnx")) << "garbage";
  auto garbage = run_cli("check " + path("garbage.onnx"));
  EXPECT_EQ(garbage.exit_code, 5);
  EXPECT_NE(garbage.err.find("garbage.onnx"), std::string::npos);
}

TEST_F(Cli, InfoListsQuantizers) {
  auto info = run_cli("info " + quant_model("q.onnx", 4, 0.5f));
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find("Quant Quant_7: bits=4 signed=1 narrow=0 rounding=ROUND scale=per-tensor 0.5"), std::string::npos)
      << info.out;
  auto json = run_cli("info --json " + path("q.onnx"));
  ASSERT_EQ(json.exit_code, 0);
  EXPECT_NE(json.out.find("\"bitwidth\": 4"), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"qonnx.custom_op.general::Quant\": 1"), std::string::npos) << json.out;
}

TEST_F(Cli, CheckReportsBadQuantParameters) {
  auto ok = run_cli("check " + quant_model("ok.onnx", 4, 0.5f));
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  auto zero_bits = run_cli("check " + quant_model("bw0.onnx", 0, 0.5f));
  EXPECT_EQ(zero_bits.exit_code, 1);
  EXPECT_NE(zero_bits.err.find("node 'Quant_7' (qonnx.custom_op.general::Quant): input #3 'bw': bitwidth must be a positive integer, got 0"),
            std::string::npos)
      << zero_bits.err;
  auto nan_scale = run_cli("check " + quant_model("nan.onnx", 4, std::nanf("")));
  EXPECT_EQ(nan_scale.exit_code, 1);
  auto mode = run_cli("check " + quant_model("mode.onnx", 4, 1, "STOCHASTIC"));
  EXPECT_EQ(mode.exit_code, 6);
  EXPECT_NE(mode.err.find("accepted: ROUND"), std::string::npos);
}

TEST_F(Cli, ExecWritesOutputsAndComparesWithExpect) {
  std::string model = quant_model("q.onnx", 4, 0.5f);
  ASSERT_TRUE(io::write_tensor_npy(path("x.npy"), f32({4}, {0.3f, -1.2f, 2.6f, 100})).is_ok());
  auto r = run_cli("exec " + model + " --input x=" + path("x.npy") + " --output-dir " + path("out") + " --npy");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto y = io::read_tensor_file(path("out/output_0.pb"));
  ASSERT_TRUE(y.is_ok());
  EXPECT_EQ(values_f32(y->tensor), (std::vector<float>{0.5f, -1.0f, 2.5f, 3.5f}));
  EXPECT_EQ(y->name, "y");
  EXPECT_TRUE(fs::exists(path("out/output_0.npy")));
  auto npy = io::read_tensor_file(path("out/output_0.npy"));
  ASSERT_TRUE(npy.is_ok());
  EXPECT_TRUE(npy->tensor.identical(y->tensor));

  auto same = run_cli("exec " + model + " --input " + path("x.npy") + " --expect " + path("out"));
  EXPECT_EQ(same.exit_code, 0) << same.err;
  ASSERT_TRUE(io::write_tensor_pb(path("out/output_0.pb"), "y", f32({4}, {0.5f, -1.0f, 2.5f, 3.0f})).is_ok());
  auto differ = run_cli("exec " + model + " --input " + path("x.npy") + " --expect " + path("out"));
  EXPECT_EQ(differ.exit_code, 7);
  EXPECT_NE(differ.out.find("MISMATCH"), std::string::npos) << differ.out;
}

TEST_F(Cli, RandomInputsAreDeterministic) {
  std::string model = quant_model("q.onnx", 8, 0.01f);
  auto a = run_cli("exec " + model + " --random-inputs --seed 7 --output-dir " + path("a"));
  auto b = run_cli("exec " + model + " --random-inputs --seed 7 --output-dir " + path("b"));
  auto c = run_cli("exec " + model + " --random-inputs --seed 8 --output-dir " + path("c"));
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(io::read_file(path("a/output_0.pb")).value(), io::read_file(path("b/output_0.pb")).value());
  EXPECT_NE(io::read_file(path("a/output_0.pb")).value(), io::read_file(path("c/output_0.pb")).value());
}

TEST_F(Cli, ExecSaveInputsWritesFedTensorsInInputDirLayout) {
  io::ModelBuilder b(13);
  b.input("a", DType::kFloat, {2, 3}).input("b", DType::kInt64, {3}).output("y", DType::kFloat, {2, 3});
  b.node("Cast", {"b"}, {"bf"}).attr("to", static_cast<int64_t>(1));
  b.node("Add", {"a", "bf"}, {"y"});
  auto m = b.build();
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  ASSERT_TRUE(io::save_model(m.value(), path("two.onnx")).is_ok());
  auto r = run_cli("exec " + path("two.onnx") + " --random-inputs --seed 5 --save-inputs " + path("in") +
                   " --output-dir " + path("out"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto a = io::read_tensor_file(path("in/input_0.pb"));
  auto bb = io::read_tensor_file(path("in/input_1.pb"));
  ASSERT_TRUE(a.is_ok() && bb.is_ok());
  EXPECT_EQ(a->name, "a");
  EXPECT_EQ(a->tensor.dtype(), DType::kFloat);
  EXPECT_EQ(a->tensor.dims(), (Dims{2, 3}));
  EXPECT_EQ(bb->name, "b");
  EXPECT_EQ(bb->tensor.dtype(), DType::kInt64);
  // Feeding the saved inputs back reproduces the outputs bit for bit.
  auto again = run_cli("exec " + path("two.onnx") + " --input-dir " + path("in") + " --output-dir " + path("out2"));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(io::read_file(path("out/output_0.pb")).value(), io::read_file(path("out2/output_0.pb")).value());
  // A failed run saves nothing.
  auto bad = run_cli("exec " + quant_model("q.onnx", 33, 0.5f) + " --random-inputs --save-inputs " + path("in_bad"));
  EXPECT_EQ(bad.exit_code, 6);
  EXPECT_FALSE(fs::exists(path("in_bad")));
}

TEST_F(Cli, ExecErrorsNameNodeAndInput) {
  std::string model = quant_model("q.onnx", 33, 0.5f);
  auto r = run_cli("exec " + model + " --random-inputs");
  EXPECT_EQ(r.exit_code, 6);
  EXPECT_NE(r.err.find("node 'Quant_7'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("input #3 'bw'"), std::string::npos) << r.err;
  // Wrong input shape.
  ASSERT_TRUE(io::write_tensor_npy(path("x3.npy"), f32({3}, {1, 2, 3})).is_ok());
  auto shape = run_cli("exec " + quant_model("q4.onnx", 4, 1) + " --input x=" + path("x3.npy"));
  EXPECT_EQ(shape.exit_code, 5);
  EXPECT_NE(shape.err.find("graph input 'x' has shape [4], got [3]"), std::string::npos) << shape.err;
  // Unknown input name.
  auto name = run_cli("exec " + path("q4.onnx") + " --input nope=" + path("x3.npy"));
  EXPECT_EQ(name.exit_code, 2);
}

TEST_F(Cli, UnsupportedOpExitsSix) {
  io::ModelBuilder b(13);
  b.input("x", DType::kFloat, {4}).output("y", DType::kFloat, {4});
  b.node("FancyOp", {"x"}, {"y"}, "com.example");
  ASSERT_TRUE(io::save_model(b.build().value(), path("fancy.onnx")).is_ok());
  auto r = run_cli("exec " + path("fancy.onnx") + " --random-inputs");
  EXPECT_EQ(r.exit_code, 6);
  EXPECT_NE(r.err.find("com.example::FancyOp"), std::string::npos) << r.err;
}

TEST_F(Cli, DemoModelRunsEndToEnd) {
  auto w = run_cli("demo-model " + path("demo.onnx"));
  ASSERT_EQ(w.exit_code, 0) << w.err;
  auto c = run_cli("check " + path("demo.onnx"));
  EXPECT_EQ(c.exit_code, 0) << c.err;
  auto e = run_cli("exec " + path("demo.onnx") + " --random-inputs --seed 3");
  EXPECT_EQ(e.exit_code, 0) << e.err;
  EXPECT_NE(e.out.find("output 0 'y': float[1, 4]"), std::string::npos) << e.out;
}

}  // namespace
}  // namespace qonnx::test
