// lower-quant's opset-19/21 forms (issue 16): at a default-domain opset >= 21 weights of <= 4 bits
// become int4/uint4 initializers, 9..16-bit weights and activations int16/uint16, scales constant over
// blocks along one axis `block_size`; at >= 19 a FloatQuant that matches a float8 format becomes float8
// QuantizeLinear/DequantizeLinear. Every generated class is checked bit for bit against the original in
// qonnx-cc on tie-rich inputs, and (ORT test) in onnxruntime with zero tolerance.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>

#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "qonnx/passes/quantizer_outcomes.h"
#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/exec/dtype_dispatch.h"
#include "qonnx/exec/executor.h"
#include "qonnx/io/model_builder.h"
#include "qonnx/io/model_io.h"
#include "qonnx/io/tensor_file.h"
#include "qonnx/pass/pass.h"
#include "qonnx/support/float8.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {
namespace fs = std::filesystem;

const char* kQ = "qonnx.custom_op.general";
const char* kPipeline = "freeze-initializer-inputs,fold-constants{skip-quantizers=1},lower-quant,fold-constants,cleanup";

struct Case {
  std::string name;
  io::ModelBuilder model;
  Tensor input;                   // undefined for a weight-only model
  std::string form;               // expected fragment of the recorded form
  DType initializer = DType::kUndefined;  // expected code initializer type (weights)
};

// Multiples of step/2 (ties after x/s for s = step), a coarse range past every bound, -0.
Tensor tie_rich(Dims dims, float step, float span) {
  Tensor t(DType::kFloat, dims);
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) {
    float v;
    if (i % 4 == 3) v = (static_cast<float>(i) / static_cast<float>(n) - 0.5f) * 4.0f * span;  // saturating
    else v = static_cast<float>(i - n / 2) * step * 0.5f * (i % 4 == 1 ? 37.0f : 1.0f);
    t.data<float>()[i] = i == 0 ? -0.0f : v;
  }
  return t;
}

Tensor scale_tensor(Dims dims, float base) {
  Tensor t(DType::kFloat, dims);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = base * static_cast<float>(1 << (i % 3));
  return t;
}

// x (an initializer for a weight, else the graph input) -> quantizer -> y, with scale "s".
io::ModelBuilder quantizer_model(int opset, bool weight, const Tensor& x, const Tensor& scale) {
  io::ModelBuilder b(opset);
  b.import(kQ, 1);
  if (weight) b.initializer("x", x);
  else b.input("x", DType::kFloat, x.dims());
  b.output("y", DType::kFloat, x.dims());
  b.initializer("s", scale);
  return b;
}

io::ModelBuilder quant_model(int opset, bool weight, const Tensor& x, const Tensor& scale, float zp, int bits, bool is_signed,
                             bool narrow, const std::string& mode) {
  io::ModelBuilder b = quantizer_model(opset, weight, x, scale);
  b.initializer("z", f32s(zp));
  b.initializer("bw", f32s(static_cast<float>(bits)));
  b.node("Quant", {"x", "s", "z", "bw"}, {"y"}, kQ).attr("signed", int64_t{is_signed}).attr("narrow", int64_t{narrow})
      .attr("rounding_mode", mode);
  return b;
}

std::vector<Case> int_cases() {
  std::vector<Case> cases;
  const Dims dims = {2, 3, 8};
  // Weights of 1..4 bits: int4/uint4 codes, per tensor and per channel, zero point 0 or not.
  for (int bits = 1; bits <= 4; ++bits)
    for (bool is_signed : {true, false})
      for (bool narrow : {false, true})
        for (bool per_channel : {false, true})
          for (float zp : {0.0f, 1.0f}) {
            if (bits == 1 && (!is_signed || zp != 0.0f)) continue;  // 1-bit: the bipolar case only
            const Tensor s = per_channel ? scale_tensor({1, 3, 1}, 0.25f) : f32s(0.25f);
            std::string name = fmt::format("w{}_{}{}_{}_zp{}", bits, is_signed ? "s" : "u", narrow ? "_narrow" : "",
                                           per_channel ? "pc" : "pt", zp);
            cases.push_back({name, quant_model(21, true, tie_rich(dims, 0.25f, 2.0f), s, zp, bits, is_signed, narrow, "ROUND"),
                             Tensor(), fmt::format("integer initializer ({})", is_signed ? "int4" : "uint4"),
                             is_signed ? DType::kInt4 : DType::kUInt4});
          }
  // Weights of 9..16 bits: int16/uint16.
  for (int bits : {9, 12, 16})
    for (bool is_signed : {true, false}) {
      const Tensor x = tie_rich(dims, 1.0f / 1024, 64.0f);
      cases.push_back({fmt::format("w{}_{}", bits, is_signed ? "s" : "u"),
                       quant_model(21, true, x, f32s(1.0f / 1024), 0.0f, bits, is_signed, false, "ROUND"), Tensor(),
                       fmt::format("integer initializer ({})", is_signed ? "int16" : "uint16"),
                       is_signed ? DType::kInt16 : DType::kUInt16});
    }
  // Blocked scales: [2, 3, 1] over [2, 3, 8] (one scale per row of 8, Brevitas' group layout), and a
  // per-element scale constant over blocks of 3 along the last axis (a partial last block of 2).
  {
    cases.push_back({"w4_groups", quant_model(21, true, tie_rich(dims, 0.25f, 2.0f), scale_tensor({2, 3, 1}, 0.125f), 0, 4,
                                              true, false, "ROUND"),
                     Tensor(), "(axis 2, block_size 8)", DType::kInt4});
    Tensor s(DType::kFloat, dims);
    for (int64_t i = 0; i < s.numel(); ++i) s.data<float>()[i] = 0.0625f * static_cast<float>(1 + (i / 8) % 3 + ((i % 8) / 3) * 4);
    cases.push_back({"w8_blocks_of_3", quant_model(21, true, tie_rich(dims, 0.25f, 2.0f), s, 0, 8, true, true, "ROUND"),
                     Tensor(), "(axis 2, block_size 3)", DType::kInt8});
  }
  // Activations of 9..16 bits: QuantizeLinear to int16/uint16, every rounding mode with a QDQ form.
  for (int bits : {9, 13, 16})
    for (bool is_signed : {true, false})
      for (bool narrow : {false, true})
        for (const char* mode : {"ROUND", "FLOOR", "CEIL"})
          for (bool per_channel : {false, true}) {
            const Tensor s = per_channel ? scale_tensor({1, 3, 1}, 1.0f / 256) : f32s(1.0f / 256);
            const Tensor x = tie_rich(dims, 1.0f / 256, static_cast<float>(1 << (bits - 8)));
            cases.push_back({fmt::format("a{}_{}{}_{}_{}", bits, is_signed ? "s" : "u", narrow ? "_narrow" : "", mode,
                                         per_channel ? "pc" : "pt"),
                             quant_model(21, false, x, s, 0.0f, bits, is_signed, narrow, mode), x,
                             fmt::format("DequantizeLinear ({}", is_signed ? "int16" : "uint16")});
          }
  return cases;
}

struct F8 {
  DType format;
  float e, m, bias, max_val;
};
constexpr F8 kF8[] = {{DType::kFloat8E4M3FN, 4, 3, 7, 448}, {DType::kFloat8E4M3FNUZ, 4, 3, 8, 240},
                      {DType::kFloat8E5M2, 5, 2, 15, 57344}, {DType::kFloat8E5M2FNUZ, 5, 2, 16, 57344}};

// Every finite code of the format times the scale, each midpoint to the next code (a tie), one float32
// step either side of it, values past the largest, and NaN. Not +-inf: FloatQuant turns them into NaN
// (inf / inf in its step computation) where the saturating float8 form gives the largest value.
Tensor float8_inputs(DType format, float scale) {
  std::vector<float> v;
  for (int c = 0; c < 0x7F; ++c) {
    const float lo = float8_to_float(static_cast<uint8_t>(c), format), hi = float8_to_float(static_cast<uint8_t>(c + 1), format);
    if (!std::isfinite(lo)) continue;
    for (float w : {lo, std::isfinite(hi) ? lo + (hi - lo) / 2 : lo * 1.0625f})
      for (float t : {w, std::nextafter(w, 1e30f), std::nextafter(w, -1e30f)}) {
        v.push_back(t * scale);
        v.push_back(-t * scale);
      }
  }
  for (float big : {1e5f, 1e30f, NAN}) {
    v.push_back(big);
    v.push_back(-big);
  }
  while (v.size() % 6) v.push_back(0.0f);
  return f32({static_cast<int64_t>(v.size() / 6), 6}, v);
}

io::ModelBuilder float_quant_model(int opset, bool weight, const Tensor& x, const Tensor& scale, const F8& f,
                                   const std::string& mode = "ROUND", int64_t saturation = 1) {
  io::ModelBuilder b = quantizer_model(opset, weight, x, scale);
  b.initializer("e", f32s(f.e));
  b.initializer("m", f32s(f.m));
  b.initializer("b", f32s(f.bias));
  b.initializer("mx", f32s(f.max_val));
  auto n = b.node("FloatQuant", {"x", "s", "e", "m", "b", "mx"}, {"y"}, kQ);
  n.attr("rounding_mode", mode).attr("saturation", saturation).attr("has_inf", int64_t{0}).attr("has_nan", int64_t{1})
      .attr("has_subnormal", int64_t{1});
  return b;
}

std::vector<Case> float8_cases() {
  std::vector<Case> cases;
  for (const F8& f : kF8)
    for (bool weight : {false, true})
      for (bool per_channel : {false, true})
        for (int64_t saturation : {1, 0}) {
          const bool fnuz = f.format == DType::kFloat8E4M3FNUZ || f.format == DType::kFloat8E5M2FNUZ;
          if (!saturation && !fnuz) continue;  // only FNUZ has an exact non-saturating form
          const Tensor s = per_channel ? f32({6}, {1.0f, 0.5f, 0.375f, 2.0f, 0.0625f, 3.0f}) : f32s(0.75f);
          Tensor x = float8_inputs(f.format, 1.0f);
          // The per-channel scale is along the last axis: scale each column's inputs by its own value.
          for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] *= s.data<float>()[s.numel() == 1 ? 0 : i % 6];
          if (weight)  // NaN weights fold to float (a NaN weight is not a useful test of the code)
            for (int64_t i = 0; i < x.numel(); ++i)
              if (std::isnan(x.data<float>()[i])) x.data<float>()[i] = 1.0f;
          // Non-saturating: +-inf inputs are NaN in both forms, so they are part of the test.
          if (!saturation && !weight) {
            x.data<float>()[x.numel() - 1] = INFINITY;
            x.data<float>()[x.numel() - 2] = -INFINITY;
          }
          cases.push_back({fmt::format("fq_{}_{}_{}{}", dtype_name(f.format), weight ? "w" : "a", per_channel ? "pc" : "pt",
                                       saturation ? "" : "_nosat"),
                           float_quant_model(19, weight, x, s, f, "ROUND", saturation), weight ? Tensor() : x,
                           weight ? fmt::format("float8 initializer ({})", dtype_name(f.format))
                                  : fmt::format("QuantizeLinear -> DequantizeLinear ({}, saturate{}", dtype_name(f.format),
                                                saturation ? "" : "=0"),
                           weight ? f.format : DType::kUndefined});
        }
  return cases;
}

Result<ir::Model> lower(const io::ModelBuilder& b, pass::PassContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(ir::Model m, b.build());
  QONNX_RETURN_IF_ERROR(run_passes(m, kPipeline, ctx).status());
  return m;
}

void check_cases(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto original = c.model.build();
    ASSERT_TRUE(original.is_ok()) << original.status().to_string();
    pass::PassContext ctx;
    auto lowered = lower(c.model, ctx);
    ASSERT_TRUE(lowered.is_ok()) << lowered.status().to_string();
    for (const auto& n : lowered->graph().nodes()) EXPECT_EQ(dialect::classify(*n), dialect::Op::kNone) << n->describe();
    ASSERT_EQ(passes::quantizer_outcomes(ctx).size(), 1u);
    EXPECT_NE(passes::quantizer_outcomes(ctx)[0].detail.find(c.form), std::string::npos) << passes::quantizer_outcomes(ctx)[0].detail;
    if (c.initializer != DType::kUndefined) {
      bool found = false;
      for (const auto& init : lowered->graph().initializers())
        found |= lowered->graph().initializer_tensor(init.value)->dtype() == c.initializer;
      EXPECT_TRUE(found) << "no " << dtype_name(c.initializer) << " initializer";
    }
    std::map<std::string, Tensor> feeds;
    if (c.input.defined()) feeds["x"] = c.input;
    EXPECT_EQ(outputs_differ(original.value(), lowered.value(), feeds), "");
  }
}

TEST(Opset21Lowering, IntegerClassesLowerExactly) {
  const auto cases = int_cases();
  EXPECT_GT(cases.size(), 90u);
  check_cases(cases);
}

TEST(Opset21Lowering, FloatQuantMatchingFloat8LowersExactly) { check_cases(float8_cases()); }

TEST(Opset21Lowering, FloatQuantOtherwiseIsLeftWithTheReason) {
  const Tensor x = f32({1, 6}, {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f});
  const F8 small_max = {DType::kFloat8E4M3FN, 4, 3, 7, 400};
  const F8 e3m4 = {DType::kUndefined, 3, 4, 3, 15.5f};
  struct Left {
    io::ModelBuilder model;
    std::string why;
  };
  std::vector<Left> lefts;
  lefts.push_back({float_quant_model(19, false, x, f32s(1), kF8[0], "FLOOR"), "rounding_mode"});
  lefts.push_back({float_quant_model(19, false, x, f32s(1), kF8[0], "ROUND", 0), "saturation=0 with float8e4m3fn"});
  lefts.push_back({float_quant_model(19, false, x, f32s(1), kF8[2], "ROUND", 0), "saturation=0 with float8e5m2"});
  lefts.push_back({float_quant_model(19, false, x, f32s(1), small_max), "clamp bound 400"});
  lefts.push_back({float_quant_model(19, false, x, f32s(1), e3m4), "none of the float8 formats"});
  for (size_t i = 0; i < lefts.size(); ++i) {
    pass::PassContext ctx;
    auto m = lower(lefts[i].model, ctx);
    ASSERT_TRUE(m.is_ok()) << m.status().to_string();
    ASSERT_EQ(passes::quantizer_outcomes(ctx).size(), 1u);
    EXPECT_EQ(passes::quantizer_outcomes(ctx)[0].outcome, "left");
    EXPECT_NE(passes::quantizer_outcomes(ctx)[0].detail.find(lefts[i].why), std::string::npos) << passes::quantizer_outcomes(ctx)[0].detail;
  }
  // Below opset 19 FloatQuant is not touched at all (as before).
  pass::PassContext ctx;
  auto m = lower(float_quant_model(17, false, x, f32s(1), kF8[0]), ctx);
  ASSERT_TRUE(m.is_ok()) << m.status().to_string();
  EXPECT_TRUE(passes::quantizer_outcomes(ctx).empty());
}

// +-inf: FloatQuant computes inf / inf = NaN, the saturating float8 form the largest value. The one
// documented exception of the float8 form (as NaN is for the integer forms).
TEST(Opset21Lowering, InfinityIsTheFloat8Exception) {
  const Tensor x = f32({1, 2}, {INFINITY, -INFINITY});
  const io::ModelBuilder b = float_quant_model(19, false, x, f32s(1), kF8[0]);
  pass::PassContext ctx;
  auto original = b.build();
  auto lowered = lower(b, ctx);
  ASSERT_TRUE(original.is_ok() && lowered.is_ok());
  auto a = exec::Executor::create(original.value()).value().run({{"x", x}});
  auto q = exec::Executor::create(lowered.value()).value().run({{"x", x}});
  ASSERT_TRUE(a.is_ok() && q.is_ok());
  EXPECT_TRUE(std::isnan(a->outputs[0].data<float>()[0]));
  EXPECT_EQ(q->outputs[0].data<float>()[0], 448.0f);
  EXPECT_EQ(q->outputs[0].data<float>()[1], -448.0f);
}

TEST(Opset21Lowering, OlderOpsetsKeepTheirForms) {
  // The same 4-bit weight and 12-bit activation at opset 17: int8 codes and the exact float form.
  const Dims dims = {2, 3, 8};
  for (bool weight : {true, false}) {
    pass::PassContext ctx;
    auto m = lower(quant_model(17, weight, tie_rich(dims, 0.25f, 2.0f), f32s(0.25f), 0, weight ? 4 : 12, true, false, "ROUND"), ctx);
    ASSERT_TRUE(m.is_ok()) << m.status().to_string();
    ASSERT_EQ(passes::quantizer_outcomes(ctx).size(), 1u);
    EXPECT_NE(passes::quantizer_outcomes(ctx)[0].detail.find(weight ? "(int8)" : "exact float emulation"), std::string::npos)
        << passes::quantizer_outcomes(ctx)[0].detail;
  }
}

// onnxruntime runs every lowered class (every third integer one) and agrees with qonnx-cc exec of the original exactly.
TEST(Opset21Lowering, OnnxruntimeAgreesExactly) {
  if (!onnxruntime_available()) GTEST_SKIP() << "onnxruntime-node is not installed (bash scripts/install-ort.sh)";
  const fs::path dir = fs::temp_directory_path() / ("qonnx_opset21_ort_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const auto ints = int_cases();
  const auto floats = float8_cases();
  std::vector<const Case*> cases;
  for (size_t i = 0; i < ints.size(); ++i)
    if (i % 3 == 0 || ints[i].name.find("block") != std::string::npos || ints[i].name.find("groups") != std::string::npos)
      cases.push_back(&ints[i]);
  for (const Case& c : floats) cases.push_back(&c);
  int ran = 0;
  for (const Case* cp : cases) {
    const Case& c = *cp;
    SCOPED_TRACE(c.name);
    auto original = c.model.build();
    pass::PassContext ctx;
    auto lowered = lower(c.model, ctx);
    ASSERT_TRUE(original.is_ok() && lowered.is_ok());
    std::map<std::string, Tensor> feeds;
    if (c.input.defined()) feeds["x"] = c.input;
    auto want = exec::Executor::create(original.value()).value().run(feeds);
    ASSERT_TRUE(want.is_ok()) << want.status().to_string();
    EXPECT_EQ(onnxruntime_disagrees(lowered.value(), "x", c.input, want->outputs[0], 0, 0, dir / c.name), "");
    ++ran;
  }
  EXPECT_GT(ran, 40);
  if (!HasFailure()) fs::remove_all(dir);
}

// The Brevitas FP8 export (FloatQuant on the input and the weights -> Gemm) with its opset import set
// to 19 (Gemm means the same at 17 and 19): both FloatQuants become float8 E4M3FN QDQ, qonnx-cc runs the
// result bit for bit like the original, and onnxruntime reproduces the Brevitas golden output.
TEST(Opset21Lowering, BrevitasFloatQuantModelRunsAsFloat8InOnnxruntime) {
  const fs::path dir = fs::path(QONNX_SHARED_MODELS) / "qonnx" / "floatquant_exec";
  if (!fs::exists(dir / "qonnx_act_weight_fp8.onnx")) GTEST_SKIP() << "no FloatQuant golden model under " << dir.string();
  auto original = io::load_model(dir / "qonnx_act_weight_fp8.onnx");
  auto lowered = io::load_model(dir / "qonnx_act_weight_fp8.onnx");
  ASSERT_TRUE(original.is_ok() && lowered.is_ok()) << original.status().to_string();
  for (auto& import : *lowered->mutable_header().mutable_opset_import())
    if (import.domain().empty() || import.domain() == "ai.onnx") import.set_version(19);
  pass::PassContext ctx;
  ASSERT_TRUE(run_passes(lowered.value(), kPipeline, ctx).is_ok());
  ASSERT_EQ(passes::quantizer_outcomes(ctx).size(), 2u);
  for (const auto& o : passes::quantizer_outcomes(ctx)) {
    EXPECT_EQ(o.outcome, "lowered") << o.node << ": " << o.detail;
    EXPECT_NE(o.detail.find("float8e4m3fn"), std::string::npos) << o.detail;
  }
  for (const auto& n : lowered->graph().nodes()) EXPECT_EQ(dialect::classify(*n), dialect::Op::kNone) << n->describe();
  auto input = io::read_tensor_file(dir / "test_data" / "input.npy");
  auto golden = io::read_tensor_file(dir / "test_data" / "output.npy");
  ASSERT_TRUE(input.is_ok() && golden.is_ok());
  const std::string in_name = lowered->graph().runtime_inputs()[0]->name();
  EXPECT_EQ(outputs_differ(original.value(), lowered.value(), {{in_name, input->tensor}}), "");

  if (!onnxruntime_available()) GTEST_SKIP() << "onnxruntime-node is not installed (bash scripts/install-ort.sh)";
  const fs::path d = fs::temp_directory_path() / ("qonnx_fp8_ort_" + std::to_string(::getpid()));
  // The tolerance of the kernel's own golden test: only the Gemm's float32 sum order may differ from torch.
  EXPECT_EQ(onnxruntime_disagrees(lowered.value(), in_name, input->tensor, golden->tensor, 1e-6, 1e-6, d), "");
  if (!HasFailure()) fs::remove_all(d);
}

uint64_t initializer_bytes(const ir::Model& m) {
  uint64_t bytes = 0;
  for (const auto& init : m.graph().initializers())
    bytes += stored_nbytes(static_cast<DType>(init.proto->data_type()),
                           checked_numel(Dims(init.proto->dims().begin(), init.proto->dims().end())));
  return bytes;
}

// The size the opset-21 forms save on the shared models (README "How quantizers are lowered"): the same
// lowering pipeline with the default-domain import left as exported (upgraded to 13 when older) and set to 21. Prints one
// line per model; every model gets no larger and the 4-bit ones smaller.
TEST(Opset21Lowering, SharedModelsWeightBytesAtOpset21) {
  const auto models = shared_models();
  if (models.empty()) GTEST_SKIP() << "../shared/qonnx_models is absent";
  int smaller = 0;
  for (const auto& path : models) {
    auto at_old = io::load_model(path);
    auto at_21 = io::load_model(path);
    ASSERT_TRUE(at_old.is_ok() && at_21.is_ok()) << path;
    const int64_t opset = at_old->opset("").value_or(1);
    if (opset < 13) {  // as the qdq target does: ONNX's version converter knows opsets <= 17 only
      ASSERT_TRUE(run_passes(at_old.value(), "freeze-initializer-inputs,upgrade-opset{version=13}").is_ok()) << path;
      ASSERT_TRUE(run_passes(at_21.value(), "freeze-initializer-inputs,upgrade-opset{version=13}").is_ok()) << path;
    }
    for (auto& import : *at_21->mutable_header().mutable_opset_import())
      if (import.domain().empty() || import.domain() == "ai.onnx") import.set_version(21);
    pass::PassContext ctx_old, ctx_21;
    ASSERT_TRUE(run_passes(at_old.value(), kPipeline, ctx_old).is_ok()) << path;
    ASSERT_TRUE(run_passes(at_21.value(), kPipeline, ctx_21).is_ok()) << path;
    const uint64_t before = initializer_bytes(at_old.value()), after = initializer_bytes(at_21.value());
    std::printf("[ size ] %s: opset %lld %llu bytes, opset 21 %llu bytes (%.1f%%)\n", path.filename().string().c_str(),
                static_cast<long long>(opset), static_cast<unsigned long long>(before), static_cast<unsigned long long>(after),
                before ? 100.0 * static_cast<double>(after) / static_cast<double>(before) : 100.0);
    EXPECT_LE(after, before) << path;
    smaller += after < before;
  }
  EXPECT_GT(smaller, 0);
}

}  // namespace
}  // namespace qonnx::test
