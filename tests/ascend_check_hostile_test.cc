// `convert --target ascend --check`: the rewrite is checked exactly against its FP19 reference (the
// same scales rounded to FP19, in standard ops); the deviation from the float original is reported and
// only bounds the result with --atol/--rtol. Generated int8 MLPs with arbitrary (not FP19) scales, per-
// channel weights, uint8 and int8 activations, float biases and fused int8 outputs, for both round modes.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>

#include <gtest/gtest.h>

#include "qonnx/analysis/equivalence.h"
#include "qonnx/io/model_builder.h"
#include "qonnx/io/model_io.h"
#include "support/cli.h"
#include "support/temp_dir.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {
namespace fs = std::filesystem;

const std::string kQ = "qonnx.custom_op.general";

struct Lcg {
  uint64_t state;
  double uniform() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state >> 11) * 0x1.0p-53;
  }
  // Log-uniform in [lo, hi): scales of any mantissa.
  float scale(double lo, double hi) { return static_cast<float>(lo * std::pow(hi / lo, uniform())); }
};

// x -> Quant(int8) -> [MatMul(Quant(W) per channel) -> Add(b) -> Relu -> Quant(uint8)] x layers
//   -> MatMul -> Quant(int8, no bias: fused into an int8 output) -> MatMul -> y (float).
io::ModelBuilder generated_mlp(uint64_t seed, int hidden_layers) {
  Lcg rng{seed};
  io::ModelBuilder b(13);
  b.import(kQ, 1);
  const int64_t batch = 3;
  int64_t width = 8 + static_cast<int64_t>(rng.uniform() * 24);
  b.input("x", DType::kFloat, {batch, width});
  auto quant = [&](const std::string& in, const std::string& out, float scale, bool is_signed, bool narrow) {
    const std::string s = out + "_s";
    b.initializer(s, f32s(scale)).initializer(out + "_z", f32s(0)).initializer(out + "_bw", f32s(8));
    b.node("Quant", {in, s, out + "_z", out + "_bw"}, {out}, kQ).attr("signed", is_signed ? 1 : 0).attr("narrow", narrow ? 1 : 0).attr("rounding_mode", "ROUND");
  };
  auto layer = [&](const std::string& in, const std::string& out, int64_t n) {
    Tensor w(DType::kFloat, {width, n});
    std::vector<float> ws;
    for (int64_t c = 0; c < n; ++c) ws.push_back(rng.scale(1e-3, 5e-2));
    for (int64_t i = 0; i < w.numel(); ++i) w.data<float>()[i] = static_cast<float>((rng.uniform() * 2 - 1) * 127 * ws[static_cast<size_t>(i % n)]);
    b.initializer(out + "_w", w).initializer(out + "_ws", f32({n}, ws)).initializer(out + "_wz", f32s(0)).initializer(out + "_wbw", f32s(8));
    b.node("Quant", {out + "_w", out + "_ws", out + "_wz", out + "_wbw"}, {out + "_wq"}, kQ).attr("signed", 1).attr("narrow", 1).attr("rounding_mode", "ROUND");
    b.node("MatMul", {in, out + "_wq"}, {out});
    width = n;
  };
  quant("x", "a0", rng.scale(5e-3, 5e-2), true, false);
  std::string act = "a0";
  for (int l = 0; l < hidden_layers; ++l) {
    const std::string h = "h" + std::to_string(l);
    layer(act, h, 8 + static_cast<int64_t>(rng.uniform() * 24));
    std::vector<float> bias;
    for (int64_t c = 0; c < width; ++c) bias.push_back(static_cast<float>(rng.uniform() - 0.5));
    b.initializer(h + "_b", f32({width}, bias));
    b.node("Add", {h, h + "_b"}, {h + "_biased"});
    b.node("Relu", {h + "_biased"}, {h + "_relu"});
    act = "a" + std::to_string(l + 1);
    quant(h + "_relu", act, rng.scale(1e-2, 1e-1), false, false);
  }
  layer(act, "g", 8 + static_cast<int64_t>(rng.uniform() * 8));
  quant("g", "gq", rng.scale(5e-2, 5e-1), true, false);
  layer("gq", "y", 4);
  b.output("y", DType::kFloat, {batch, width});
  return b;
}

struct Deviation {
  double max_abs = -1;
  long flipped = -1, elements = -1;
};

// The "against the original" line's numbers.
Deviation deviation_of(const std::string& out) {
  std::smatch m;
  static const std::regex re(
      "over [0-9]+ runs against the original \\(FP19 deviation\\): max abs error ([0-9.eE+-]+), max rel error [0-9.eE+-]+, "
      "([0-9]+) of ([0-9]+) elements");
  Deviation d;
  if (std::regex_search(out, m, re)) {
    d.max_abs = std::stod(m[1]);
    d.flipped = std::stol(m[2]);
    d.elements = std::stol(m[3]);
  }
  return d;
}

class AscendCheck : public TempDirTest {};

TEST_F(AscendCheck, GeneratedMlpsWithArbitraryScalesPassExactlyAgainstTheFp19Reference) {
  double worst[2] = {0, 0};
  long flipped[2] = {0, 0}, elements[2] = {0, 0};
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    const std::string file = path("mlp" + std::to_string(seed) + ".onnx");
    std::ofstream(file, std::ios::binary) << generated_mlp(seed, 1 + static_cast<int>(seed % 3)).serialize();
    for (int rm : {0, 1}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " round mode " + std::to_string(rm));
      const std::string out = path("out.onnx");
      auto r = run_cli("convert " + file + " --target ascend --check 8 --stats --round-mode " + std::to_string(rm) + " -o " + out);
      ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
      // Every MatMul became a QuantBatchMatMul: uint8 activations shifted, one fused int8 output.
      EXPECT_NE(r.err.find("quant-matmul-int8-output = 1"), std::string::npos) << r.err;
      EXPECT_NE(r.err.find("uint8-activations-shifted"), std::string::npos) << r.err;
      EXPECT_EQ(r.err.find("left ="), std::string::npos) << r.err;
      EXPECT_NE(r.out.find("ok over 8 runs against the FP19 reference: max abs error 0, max rel error 0, 0 of"), std::string::npos) << r.out;
      const Deviation d = deviation_of(r.out);
      ASSERT_GE(d.max_abs, 0) << r.out;
      EXPECT_GT(d.max_abs, 0) << "scales are not FP19 values: some deviation is expected\n" << r.out;
      EXPECT_NE(r.out.find("reported over 8 runs against the original"), std::string::npos) << r.out;
      worst[rm] = std::max(worst[rm], d.max_abs);
      flipped[rm] += d.flipped;
      elements[rm] += d.elements;
      EXPECT_TRUE(fs::exists(out));
      fs::remove(out);
    }
  }
  for (int rm : {0, 1})
    std::printf("[ascend-check] generated MLPs, round mode %d: worst max abs deviation %.6g, %ld of %ld output elements "
                "beyond 2^-10 relative\n", rm, worst[rm], flipped[rm], elements[rm]);
}

TEST_F(AscendCheck, ToleranceBoundsTheDeviationOnlyWhenGiven) {
  const std::string file = path("mlp.onnx");
  std::ofstream(file, std::ios::binary) << generated_mlp(42, 2).serialize();
  auto bounded = run_cli("convert " + file + " --target ascend --check 4 --atol 1e-9 --rtol 0 -o " + path("out.onnx"));
  EXPECT_EQ(bounded.exit_code, 7) << bounded.out << bounded.err;
  EXPECT_NE(bounded.out.find("MISMATCH over 4 runs against the original (FP19 deviation)"), std::string::npos) << bounded.out;
  EXPECT_NE(bounded.out.find("ok over 4 runs against the FP19 reference"), std::string::npos) << bounded.out;
  EXPECT_NE(bounded.err.find("differs beyond atol 1e-09 / rtol 0; nothing written"), std::string::npos) << bounded.err;
  EXPECT_FALSE(fs::exists(path("out.onnx")));
  auto loose = run_cli("convert " + file + " --target ascend --check 4 --atol 1 -o " + path("out.onnx") + " --report " + path("r.json"));
  EXPECT_EQ(loose.exit_code, 0) << loose.out << loose.err;
  auto json = io::read_file(path("r.json"));
  ASSERT_TRUE(json.is_ok());
  EXPECT_NE(json->find("\"against\": \"fp19-reference\""), std::string::npos) << json.value();
  EXPECT_NE(json->find("\"against\": \"original\""), std::string::npos) << json.value();
}

// The reference is sensitive to the FP19 rounding itself: a rewrite with the other round mode differs.
TEST_F(AscendCheck, TheExactComparisonSeesTheRoundMode) {
  const std::string pipeline = "freeze-initializer-inputs,upgrade-opset{version=13},fold-constants{skip-quantizers=1},infer-shapes,"
                               "lower-quant{target=qdq},lower-custom-ops,fold-constants,cleanup,infer-shapes,";
  bool some_difference = false;
  for (uint64_t seed = 1; seed <= 4 && !some_difference; ++seed) {
    io::ModelBuilder b = generated_mlp(seed, 2);
    auto rewritten = b.build().value();
    auto reference = b.build().value();
    ASSERT_TRUE(run_passes(rewritten, pipeline + "ascend-quant-matmul{round-mode=0},fold-constants,cleanup").is_ok());
    ASSERT_TRUE(run_passes(reference, pipeline + "ascend-quant-matmul{round-mode=0,emit=fp19-reference},fold-constants,cleanup").is_ok());
    analysis::CheckOptions exact{8, seed, 0.0, 0.0};
    auto same = analysis::check_equivalence(reference, rewritten, exact);
    ASSERT_TRUE(same.is_ok()) << same.status().to_string();
    EXPECT_TRUE(same.value()[0].ok) << same.value()[0].max_abs_error;
    auto other = b.build().value();
    ASSERT_TRUE(run_passes(other, pipeline + "ascend-quant-matmul{round-mode=1,emit=fp19-reference},fold-constants,cleanup").is_ok());
    auto differs = analysis::check_equivalence(other, rewritten, exact);
    ASSERT_TRUE(differs.is_ok());
    some_difference = !differs.value()[0].ok;
  }
  EXPECT_TRUE(some_difference) << "round mode 1's reference never differed from a round mode 0 rewrite";
}

}  // namespace
}  // namespace qonnx::test
