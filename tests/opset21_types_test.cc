// The opset-21 integer types at the protobuf edge and in the kernels: int4/uint4 packed two per byte
// (odd counts, raw_data, int32_data, external data, validation), float8 storage, QuantizeLinear/
// DequantizeLinear-21 (int4, int16, block_size, output_dtype) and Cast-21.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "ir/tensor_codec.h"
#include "qonnx/analysis/summary.h"
#include "qonnx/exec/dtype_dispatch.h"
#include "qonnx/io/model_builder.h"
#include "qonnx/io/model_io.h"
#include "qonnx/io/tensor_file.h"
#include "support/temp_dir.h"
#include "support/test_util.h"

namespace qonnx {
namespace {
namespace fs = std::filesystem;
using test::f32;

Tensor int4(DType t, Dims dims, const std::vector<int>& v) {
  Tensor out(t, std::move(dims));
  for (size_t i = 0; i < v.size(); ++i) out.data<int8_t>()[i] = static_cast<int8_t>(v[i]);
  return out;
}

using test::run_op;

TEST(Int4Codec, PacksLowNibbleFirstWithOddCounts) {
  onnx::TensorProto p;
  ir::encode_tensor(int4(DType::kInt4, {3}, {1, -2, 7}), &p);
  EXPECT_EQ(p.raw_data(), std::string("\xE1\x07", 2));
  ir::encode_tensor(int4(DType::kUInt4, {1, 3}, {15, 0, 3}), &p);
  EXPECT_EQ(p.raw_data(), std::string("\x0F\x03", 2));
  for (int n : {0, 1, 2, 5, 8, 9}) {
    std::vector<int> v;
    for (int i = 0; i < n; ++i) v.push_back(i % 16 - 8);
    const Tensor t = int4(DType::kInt4, {n}, v);
    ir::encode_tensor(t, &p);
    EXPECT_EQ(p.raw_data().size(), static_cast<size_t>((n + 1) / 2));
    auto back = ir::decode_tensor(p, ".");
    ASSERT_TRUE(back.is_ok()) << back.status().to_string();
    EXPECT_TRUE(back->identical(t)) << n;
  }
}

TEST(Int4Codec, ReadsInt32DataPackedTwoPerEntry) {
  onnx::TensorProto p;
  p.set_name("w");
  p.set_data_type(static_cast<int32_t>(DType::kInt4));  // ONNX 1.12's enum predates it
  p.add_dims(3);
  p.add_int32_data(0xE1);
  p.add_int32_data(0x07);
  auto t = ir::decode_tensor(p, ".");
  ASSERT_TRUE(t.is_ok()) << t.status().to_string();
  EXPECT_TRUE(t->identical(int4(DType::kInt4, {3}, {1, -2, 7})));
  p.add_int32_data(0x00);  // one entry too many for 3 values
  auto bad = ir::decode_tensor(p, ".");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().code(), Code::kInvalidModel);
  EXPECT_NE(bad.status().to_string().find("tensor 'w'"), std::string::npos) << bad.status().to_string();
}

TEST(Int4Codec, RawDataSizeIsCheckedAgainstPackedBytes) {
  onnx::TensorProto p;
  p.set_name("w");
  p.set_data_type(static_cast<int32_t>(DType::kUInt4));  // ONNX 1.12's enum predates it
  p.add_dims(5);
  p.set_raw_data(std::string(5, '\0'));  // one byte per element: wrong, 5 values pack into 3 bytes
  auto bad = ir::validate_tensor_storage(p, ".");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().code(), Code::kInvalidModel);
  EXPECT_NE(bad.status().to_string().find("need 3"), std::string::npos) << bad.status().to_string();
  p.set_raw_data(std::string(3, '\0'));
  EXPECT_TRUE(ir::validate_tensor_storage(p, ".").is_ok());
}

TEST(Float8Codec, StoresOneCodePerByteAndReadsInt32Data) {
  Tensor t(DType::kFloat8E5M2, {3});
  t.data<uint8_t>()[0] = 0x3C;
  t.data<uint8_t>()[1] = 0xFC;
  t.data<uint8_t>()[2] = 0x7F;
  onnx::TensorProto p;
  ir::encode_tensor(t, &p);
  EXPECT_EQ(p.raw_data(), std::string("\x3C\xFC\x7F", 3));
  onnx::TensorProto q;
  q.set_data_type(static_cast<int32_t>(DType::kFloat8E5M2));  // ONNX 1.12's enum predates it
  q.add_dims(3);
  for (int v : {0x3C, 0xFC, 0x7F}) q.add_int32_data(v);
  auto back = ir::decode_tensor(q, ".");
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_TRUE(back->identical(t));
  EXPECT_EQ(exec::element_as_double(t, 0), 1.0);
  EXPECT_TRUE(std::isinf(exec::element_as_double(t, 1)));
}

class Int4Files : public test::TempDirTest {};

TEST_F(Int4Files, ExternalDataHoldsPackedBytesAndLoadsBack) {
  std::vector<int> v;
  for (int i = 0; i < 2049; ++i) v.push_back(i % 16 - 8);  // odd, over the 1 KiB external threshold packed
  io::ModelBuilder b(21);
  b.initializer("w", int4(DType::kInt4, {2049}, v));
  b.initializer("s", test::f32s(0.5f));
  b.output("y", DType::kFloat);
  b.node("DequantizeLinear", {"w", "s"}, {"y"});
  auto m = b.build();
  ASSERT_TRUE(m.is_ok()) << m.status().to_string();
  io::SaveOptions options;
  options.external_data = io::ExternalData::kAlways;
  const fs::path path = this->path("m.onnx");
  ASSERT_TRUE(io::save_model(m.value(), path, options).is_ok());
  EXPECT_EQ(fs::file_size(this->path("m.onnx.data")), 1025u);
  auto loaded = io::load_model(path);
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().to_string();
  auto w = loaded->graph().initializer_tensor(loaded->graph().find_value("w"));
  ASSERT_TRUE(w.is_ok()) << w.status().to_string();
  EXPECT_TRUE(w->identical(int4(DType::kInt4, {2049}, v)));
}

TEST(Int4Codec, InfoCountsPackedBytesPerType) {
  io::ModelBuilder b(21);
  b.initializer("w", int4(DType::kInt4, {5}, {1, 2, 3, 4, 5}));
  b.initializer("s", test::f32s(0.5f));
  b.output("y", DType::kFloat);
  b.node("DequantizeLinear", {"w", "s"}, {"y"});
  auto m = b.build();
  ASSERT_TRUE(m.is_ok()) << m.status().to_string();
  const analysis::ModelSummary s = analysis::summarize(m.value());
  EXPECT_EQ(s.initializer_bytes, 3u + 4u);  // five int4 values in 3 bytes, one float
  EXPECT_EQ(s.initializer_type_counts, (std::map<std::string, size_t>{{"float", 1}, {"int4", 1}}));
  EXPECT_NE(analysis::format_text(s).find("int4"), std::string::npos);
}

TEST_F(Int4Files, NpyWritesInt4AsInt8AndRefusesFloat8) {
  ASSERT_TRUE(io::write_tensor_npy(path("a.npy"), int4(DType::kInt4, {2}, {-8, 7})).is_ok());
  auto back = io::read_tensor_file(path("a.npy"));
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(back->tensor.dtype(), DType::kInt8);
  EXPECT_EQ(back->tensor.data<int8_t>()[0], -8);
  auto st = io::write_tensor_npy(path("b.npy"), Tensor(DType::kFloat8E4M3FN, {1}));
  ASSERT_FALSE(st.is_ok());
  EXPECT_EQ(st.code(), Code::kUnsupported);
  EXPECT_NE(st.to_string().find("float8e4m3fn"), std::string::npos) << st.to_string();
}

// ---- kernels ----

TEST(Opset21Kernels, QuantizeLinearInt4RoundsHalfToEvenAndSaturates) {
  const std::vector<float> xs = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 3.5f, 7.4f, 7.5f, 100.0f, -8.5f, -100.0f};
  for (DType t : {DType::kInt4, DType::kUInt4}) {
    Tensor zp(t, {});
    auto q = run_op("QuantizeLinear", {f32({12}, xs), test::f32s(1.0f), zp}, nullptr, 21);
    ASSERT_TRUE(q.is_ok()) << q.status().to_string();
    ASSERT_EQ(q.value()[0].dtype(), t);
    const double lo = t == DType::kInt4 ? -8 : 0, hi = t == DType::kInt4 ? 7 : 15;
    for (size_t i = 0; i < xs.size(); ++i)
      EXPECT_EQ(exec::element_as_double(q.value()[0], static_cast<int64_t>(i)), std::clamp<double>(std::nearbyint(xs[i]), lo, hi))
          << dtype_name(t) << " " << xs[i];
    auto dq = run_op("DequantizeLinear", {q.value()[0], test::f32s(0.5f), zp}, nullptr, 21);
    ASSERT_TRUE(dq.is_ok()) << dq.status().to_string();
    for (size_t i = 0; i < xs.size(); ++i)
      EXPECT_EQ(dq.value()[0].data<float>()[i], 0.5f * static_cast<float>(exec::element_as_double(q.value()[0], static_cast<int64_t>(i))));
  }
  // Before opset 21 a 4-bit zero point is outside QuantizeLinear's schema: an invalid model (exit 5) naming it.
  auto old = run_op("QuantizeLinear", {f32({1}, {1}), test::f32s(1.0f), Tensor(DType::kInt4, {})}, nullptr, 19);
  test::expect_error(old, Code::kInvalidModel, "int4");
}

TEST(Opset21Kernels, OutputDtypeWithoutZeroPoint) {
  auto q = run_op("QuantizeLinear", {f32({3}, {-40000, 1.5f, 40000}), test::f32s(1.0f)},
                    [](io::NodeBuilder& n) { n.attr("output_dtype", static_cast<int64_t>(DType::kInt16)); }, 21);
  ASSERT_TRUE(q.is_ok()) << q.status().to_string();
  ASSERT_EQ(q.value()[0].dtype(), DType::kInt16);
  EXPECT_EQ(q.value()[0].data<int16_t>()[0], -32768);
  EXPECT_EQ(q.value()[0].data<int16_t>()[1], 2);
  EXPECT_EQ(q.value()[0].data<int16_t>()[2], 32767);
}

TEST(Opset21Kernels, BlockedScalesAlongAnAxisWithAPartialLastBlock) {
  // x [2, 5], blocks of 2 along axis 1: scale [2, 3]; the last block holds one element.
  const std::vector<float> xs = {1, 2, 3, 4, 5, -1, -2, -3, -4, -5};
  const std::vector<float> ss = {1, 0.5f, 0.25f, 2, 4, 8};
  Tensor zp(DType::kInt8, {2, 3});
  auto attrs = [](io::NodeBuilder& n) { n.attr("axis", int64_t{1}).attr("block_size", int64_t{2}); };
  auto q = run_op("QuantizeLinear", {f32({2, 5}, xs), f32({2, 3}, ss), zp}, attrs, 21);
  ASSERT_TRUE(q.is_ok()) << q.status().to_string();
  const std::vector<int> want = {1, 2, 6, 8, 20, 0, -1, -1, -1, -1};  // rne(x / s[row][col / 2])
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_EQ(q.value()[0].data<int8_t>()[i], want[i]) << i;
  auto dq = run_op("DequantizeLinear", {q.value()[0], f32({2, 3}, ss), zp}, attrs, 21);
  ASSERT_TRUE(dq.is_ok()) << dq.status().to_string();
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_EQ(dq.value()[0].data<float>()[i], want[i] * ss[(i / 5) * 3 + (i % 5) / 2]) << i;
  // A scale that does not match the blocks is an invalid model.
  auto bad = run_op("DequantizeLinear", {q.value()[0], f32({2, 2}, {1, 1, 1, 1}), Tensor(DType::kInt8, {2, 2})}, attrs, 21);
  test::expect_error(bad, Code::kInvalidModel, "ceil(dim / 2)");
}

TEST(Opset21Kernels, CastToInt4ClipsAndRoundsHalfToEven) {
  auto r = run_op("Cast", {f32({6}, {2.5f, 3.5f, -9.0f, 100.0f, -0.5f, NAN})},
                    [](io::NodeBuilder& n) { n.attr("to", static_cast<int64_t>(DType::kInt4)); }, 21);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_EQ(r.value()[0].dtype(), DType::kInt4);
  const std::vector<int> want = {2, 4, -8, 7, 0, 0};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(r.value()[0].data<int8_t>()[i], want[i]) << i;
  auto back = run_op("Cast", {r.value()[0]}, [](io::NodeBuilder& n) { n.attr("to", static_cast<int64_t>(DType::kFloat)); }, 21);
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(back.value()[0].data<float>()[2], -8.0f);
  auto old = run_op("Cast", {f32({1}, {1})}, [](io::NodeBuilder& n) { n.attr("to", static_cast<int64_t>(DType::kInt4)); }, 19);
  test::expect_error(old, Code::kUnsupported, "int4");
}

}  // namespace
}  // namespace qonnx
