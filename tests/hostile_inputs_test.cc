// Hostile input files (issue classes: hangs, parameter values): special files are refused before they
// are opened, ranks over the limit and negative .npy dims are refused, non-finite zero points and empty
// CLI lists are errors with their documented exit codes.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "qonnx/support/limits.h"
#include "support/cli.h"
#include "support/temp_dir.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {
namespace fs = std::filesystem;

class HostileInputs : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    ASSERT_EQ(run_cli("demo-model " + path("demo.onnx")).exit_code, 0);
  }

  // A .npy file of float32 with the given shape text and `bytes` of data.
  std::string npy(const std::string& name, const std::string& shape, size_t bytes) {
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
    header.resize((header.size() + 11 + 63) / 64 * 64 - 11, ' ');  // magic + version + length: 10 bytes
    header += '\n';
    std::string file = std::string("\x93NUMPY\x01\x00", 8) + std::string(1, static_cast<char>(header.size() & 0xff)) +
                       std::string(1, static_cast<char>(header.size() >> 8)) + header + std::string(bytes, '\0');
    std::ofstream(path(name), std::ios::binary) << file;
    return path(name);
  }
};

TEST_F(HostileInputs, FifoAndDevicesAreRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo(path("model.onnx").c_str(), 0600), 0);
  auto model = run_cli("info " + path("model.onnx"));
  EXPECT_EQ(model.exit_code, 3) << model.err;
  EXPECT_NE(model.err.find("not a regular file (a FIFO)"), std::string::npos) << model.err;
  auto dev = run_cli("check /dev/zero");
  EXPECT_EQ(dev.exit_code, 3) << dev.err;
  EXPECT_NE(dev.err.find("a character device"), std::string::npos) << dev.err;
  // A FIFO among --input-dir entries, and as an --input file.
  fs::create_directories(path("in"));
  ASSERT_EQ(::mkfifo(path("in/input_0.pb").c_str(), 0600), 0);
  auto dir = run_cli("exec " + path("demo.onnx") + " --input-dir " + path("in"));
  EXPECT_EQ(dir.exit_code, 3) << dir.err;
  auto input = run_cli("exec " + path("demo.onnx") + " --input x=" + path("in/input_0.pb"));
  EXPECT_EQ(input.exit_code, 3) << input.err;
}

TEST_F(HostileInputs, NpyShapesMustBeNonNegativeAndWithinTheRankLimit) {
  auto neg = run_cli("exec " + path("demo.onnx") + " --input x=" + npy("neg.npy", "(-1, 4)", 16));
  EXPECT_EQ(neg.exit_code, 3) << neg.err;
  EXPECT_NE(neg.err.find("shape entry '-1' is not a non-negative integer"), std::string::npos) << neg.err;
  std::string deep = "(";
  for (int64_t i = 0; i <= kMaxRank; ++i) deep += "1,";
  deep += ")";
  auto rank = run_cli("exec " + path("demo.onnx") + " --input x=" + npy("deep.npy", deep, 4));
  EXPECT_EQ(rank.exit_code, 3) << rank.err;
  EXPECT_NE(rank.err.find("over the supported maximum of 64"), std::string::npos) << rank.err;
}

// A TensorProto of rank 1,000,000 (every dim 1, one float): refused at once instead of walked.
TEST_F(HostileInputs, HugeRankTensorProtoIsRefused) {
  onnx::TensorProto t;
  t.set_name("x");
  t.set_data_type(onnx::TensorProto::FLOAT);
  for (int i = 0; i < 1000000; ++i) t.add_dims(1);
  t.set_raw_data(std::string(4, '\0'));
  std::string bytes;
  t.SerializeToString(&bytes);
  std::ofstream(path("x.pb"), std::ios::binary) << bytes;
  auto r = run_cli("exec " + path("demo.onnx") + " --input x=" + path("x.pb"));
  EXPECT_EQ(r.exit_code, 5) << r.err;
  EXPECT_NE(r.err.find("rank 1000000 is over the supported maximum of 64"), std::string::npos) << r.err;
}

TEST(HostileParameters, NonFiniteZeroPointIsAnError) {
  for (float zp : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                   -std::numeric_limits<float>::infinity()}) {
    NodeCase quant;
    quant.op = "Quant";
    quant.domain = "qonnx.custom_op.general";
    quant.inputs = {f32({2}, {1, 2}), f32s(0.5f), f32s(zp), f32s(4)};
    expect_error(run_node(quant), Code::kFailed, "zeropt must be finite");
    NodeCase trunc;
    trunc.op = "Trunc";
    trunc.domain = "qonnx.custom_op.general";
    trunc.inputs = {f32({2}, {1, 2}), f32s(0.5f), f32s(zp), f32s(8), f32s(4)};
    expect_error(run_node(trunc), Code::kFailed, "zeropt must be finite");
  }
}

TEST(HostileParameters, TransQuantParamRefusesEmptyLists) {
  for (const char* args : {"--scale ''", "--scale ' '", "--scale 1.0 --offset ''"}) {
    auto r = run_cli(std::string("trans-quant-param ") + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out << r.err;
  }
  EXPECT_EQ(run_cli("trans-quant-param --scale 1.0,0.3").exit_code, 0);
}

}  // namespace
}  // namespace qonnx::test
