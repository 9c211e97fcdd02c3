// Issue 27 item 1: `exec` runs a model whose weights exceed --max-memory by streaming the layers' external
// data per run (read, use, drop), with the same bits as a plan that holds them, in both arithmetics.
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "qonnx/exec/executor.h"
#include "qonnx/io/model_builder.h"
#include "qonnx/io/model_io.h"
#include "support/cli.h"
#include "support/temp_dir.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {
namespace fs = std::filesystem;

const char* kQ = "qonnx.custom_op.general";
constexpr int kLayers = 6;
constexpr int64_t kWidth = 96;  // a float weight: 36 KiB, in external data

uint64_t next(uint64_t& state) {
  state = state * 6364136223846793005ULL + 1442695040888963407ULL;
  return state >> 33;
}

// A quantized MLP whose layers alternate MatMul and Gemm (transB, with a bias: Gemm's own prepack), each
// weight behind a per-output-channel 8-bit Quant and each activation behind an 8-bit Quant, saved with
// every weight in external data.
std::string save_mlp(const fs::path& dir, uint64_t seed) {
  io::ModelBuilder b(13);
  b.import(kQ, 1);
  b.input("x", DType::kFloat, {2, kWidth});
  b.initializer("act_scale", f32s(1.0f / 32)).initializer("zero", f32s(0.0f)).initializer("bits8", f32s(8.0f));
  uint64_t state = seed;
  std::string act = "x";
  for (int l = 0; l < kLayers; ++l) {
    const std::string n = std::to_string(l), w = "w" + n;
    const bool gemm = l % 2 == 1;
    std::vector<float> weights(static_cast<size_t>(kWidth * kWidth)), scales(static_cast<size_t>(kWidth));
    for (float& v : weights) v = static_cast<float>(static_cast<int64_t>(next(state) % 2001) - 1000) * 2e-5f;
    for (float& s : scales) s = 1e-4f * static_cast<float>(1 + next(state) % 7);
    b.initializer(w, f32({kWidth, kWidth}, weights));
    b.initializer(w + "_scale", f32(gemm ? Dims{kWidth, 1} : Dims{1, kWidth}, scales));
    b.node("Quant", {act, "act_scale", "zero", "bits8"}, {"a" + n}, kQ).attr("signed", 1);
    b.node("Quant", {w, w + "_scale", "zero", "bits8"}, {w + "_q"}, kQ).attr("signed", 1).attr("narrow", 1);
    if (gemm) {
      std::vector<float> bias(static_cast<size_t>(kWidth));
      for (float& v : bias) v = static_cast<float>(static_cast<int64_t>(next(state) % 201) - 100) * 1e-3f;
      b.initializer("b" + n, f32({kWidth}, bias));
      b.node("Gemm", {"a" + n, w + "_q", "b" + n}, {"h" + n}).attr("transB", 1);
    } else {
      b.node("MatMul", {"a" + n, w + "_q"}, {"h" + n});
    }
    act = "r" + n;
    b.node("Relu", {"h" + n}, {act});
  }
  b.output(act, DType::kFloat, {2, kWidth});
  ir::Model model = b.build().value();
  io::SaveOptions options;
  options.external_data = io::ExternalData::kAlways;
  options.external_threshold = 4096;  // the weights, not the scales and biases
  const fs::path file = dir / "mlp.onnx";
  EXPECT_TRUE(io::save_model(model, file, options).is_ok());
  return file.string();
}

// Inputs over the activation quantizer's range and past it, and one with a NaN (the integer path's float
// fallback for that run).
std::vector<Tensor> inputs(uint64_t seed) {
  std::vector<Tensor> sets;
  uint64_t state = seed;
  for (int s = 0; s < 3; ++s) {
    std::vector<float> v(static_cast<size_t>(2 * kWidth));
    for (float& x : v) x = static_cast<float>(static_cast<int64_t>(next(state) % 1001) - 500) * (s == 0 ? 1e-3f : 1e-2f);
    if (s == 2) v[5] = std::numeric_limits<float>::quiet_NaN();
    sets.push_back(f32({2, kWidth}, v));
  }
  return sets;
}

Result<std::vector<Tensor>> run_all(const exec::Executor& ex, const std::vector<Tensor>& sets) {
  std::vector<Tensor> outs;
  for (const Tensor& x : sets) {
    QONNX_ASSIGN_OR_RETURN(exec::RunResult r, ex.run({{"x", x}}));
    outs.push_back(r.outputs.at(0));
  }
  return outs;
}



// "(S of L layers)" of a streaming note: S, or 0 for no note.
int streamed_layers(const std::string& note) {
  std::smatch m;
  if (!std::regex_search(note, m, std::regex(R"(\((\d+) of (\d+) layers\))"))) return 0;
  EXPECT_EQ(std::stoi(m[2]), kLayers) << note;
  return std::stoi(m[1]);
}

class ExecStreaming : public TempDirTest {
 protected:
  void TearDown() override {
    set_memory_limit(saved_limit_);
    TempDirTest::TearDown();
  }
  uint64_t saved_limit_ = memory_limit();
};

TEST_F(ExecStreaming, EveryLimitThatRunsGivesTheHeldBitsInBothArithmetics) {
  const std::vector<Tensor> sets = inputs(11);
  for (uint64_t seed : {1u, 2u}) {
    auto model = io::load_model(save_mlp(dir_, seed));
    ASSERT_TRUE(model.is_ok()) << model.status().to_string();
    for (exec::Arithmetic arith : {exec::Arithmetic::kInt, exec::Arithmetic::kFloat}) {
      SCOPED_TRACE(arith == exec::Arithmetic::kInt ? "int" : "float");
      set_memory_limit(0);
      auto held = exec::Executor::create(model.value(), arith);
      ASSERT_TRUE(held.is_ok()) << held.status().to_string();
      EXPECT_EQ(held->streaming_note(), "");
      auto expected = run_all(held.value(), sets);
      ASSERT_TRUE(expected.is_ok()) << expected.status().to_string();
      int fully = 0, partly = 0, none = 0, failed = 0;
      // From too small for one layer to room for every weight, in 8 KiB steps.
      for (uint64_t room = 32 << 10; room <= 640 << 10; room += 8 << 10) {
        SCOPED_TRACE(room);
        set_memory_limit(0);
        const uint64_t base = memory_in_use();
        set_memory_limit(base + room);
        auto ex = exec::Executor::create(model.value(), arith);
        if (!ex.is_ok()) {
          EXPECT_EQ(ex.status().code(), Code::kFailed) << ex.status().to_string();
          EXPECT_NE(ex.status().to_string().find("over the memory limit"), std::string::npos) << ex.status().to_string();
          ++failed;
          continue;
        }
        const int streamed = streamed_layers(ex->streaming_note());
        if (streamed > 0) EXPECT_NE(ex->streaming_note().find("from external data per run"), std::string::npos);
        int marked = 0;
        for (const auto& [node, note] : ex->path_notes())
          marked += note.find("(weights streamed from external data per run)") != std::string::npos;
        if (arith == exec::Arithmetic::kInt) EXPECT_EQ(marked, streamed);
        // A plan that fits runs in its room: it kept room for one streamed layer and the activations.
        auto got = run_all(ex.value(), sets);
        ASSERT_TRUE(got.is_ok()) << got.status().to_string();
        for (size_t s = 0; s < sets.size(); ++s) EXPECT_TRUE(got.value()[s].identical(expected.value()[s])) << "input set " << s;
        (streamed == kLayers ? fully : streamed > 0 ? partly : none)++;
        EXPECT_LE(memory_in_use(), base + room);
      }
      EXPECT_GT(failed, 0);
      EXPECT_GT(fully, 0);
      EXPECT_GT(partly, 0);
      EXPECT_GT(none, 0);
    }
  }
}

TEST_F(ExecStreaming, ExposedValuesOfAStreamedPlan) {
  auto model = io::load_model(save_mlp(dir_, 6));
  ASSERT_TRUE(model.is_ok());
  const std::vector<Tensor> sets = inputs(12);
  set_memory_limit(0);
  auto held = exec::Executor::create(model.value(), exec::Arithmetic::kInt);
  ASSERT_TRUE(held.is_ok());
  ASSERT_TRUE(held->expose({"h2", "w3_q"}).is_ok());
  auto expected = held->run({{"x", sets[0]}});
  ASSERT_TRUE(expected.is_ok());
  held = Status(Code::kFailed, "released");
  const uint64_t base = memory_in_use();
  // What the plan holds depends on the CPU (8-bit weights are packed once with VNNI, as two nibble packs on
  // AVX2 alone): the smallest room of these in which the plan streams and, planned again with the exposed
  // values held (an exposed weight is not streamed), still streams.
  std::optional<exec::Executor> ex;
  for (uint64_t room = 100 << 10; room <= 260 << 10 && !ex; room += 10 << 10) {
    set_memory_limit(base + room);
    auto planned = exec::Executor::create(model.value(), exec::Arithmetic::kInt);
    if (!planned.is_ok() || streamed_layers(planned->streaming_note()) == 0) continue;
    if (!planned->expose({"h2", "w3_q"}).is_ok() || streamed_layers(planned->streaming_note()) == 0) continue;
    ex.emplace(std::move(planned).value());
  }
  ASSERT_TRUE(ex.has_value()) << "no room from 100 to 260 KiB streams both plans";
  auto got = ex->run({{"x", sets[0]}});
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  EXPECT_TRUE(got->outputs[0].identical(expected->outputs[0]));
  for (const char* name : {"h2", "w3_q"}) EXPECT_TRUE(got->exposed.at(name).identical(expected->exposed.at(name))) << name;
}

TEST_F(ExecStreaming, PackedWeightsCountAgainstTheLimit) {
  auto model = io::load_model(save_mlp(dir_, 3));
  ASSERT_TRUE(model.is_ok());
  set_memory_limit(0);
  const uint64_t before = memory_in_use();
  auto ex = exec::Executor::create(model.value(), exec::Arithmetic::kInt);
  ASSERT_TRUE(ex.is_ok());
  for (const auto& [node, note] : ex->path_notes()) EXPECT_EQ(note.rfind("integer", 0), 0u) << node << ": " << note;
  // The plan holds every layer's weights as int8 codes (at least a byte each), counted as tensors are.
  EXPECT_GE(memory_in_use() - before, static_cast<uint64_t>(kLayers * kWidth * kWidth));
}

TEST_F(ExecStreaming, LayerThatCannotFitFailsNamingItsTensor) {
  auto model = io::load_model(save_mlp(dir_, 4));
  ASSERT_TRUE(model.is_ok());
  // Less than one float weight (36 KiB); room to read it but not to quantize it; room for both but not for
  // the activations besides.
  for (uint64_t room : {24u << 10, 56u << 10, 76u << 10}) {
    for (exec::Arithmetic arith : {exec::Arithmetic::kInt, exec::Arithmetic::kFloat}) {
      SCOPED_TRACE(room);
      set_memory_limit(0);
      set_memory_limit(memory_in_use() + room);
      auto ex = exec::Executor::create(model.value(), arith);
      ASSERT_FALSE(ex.is_ok());
      EXPECT_EQ(ex.status().code(), Code::kFailed);
      EXPECT_NE(ex.status().to_string().find("over the memory limit"), std::string::npos) << ex.status().to_string();
      EXPECT_NE(ex.status().to_string().find("tensor 'w0"), std::string::npos) << ex.status().to_string();
    }
  }
}

TEST_F(ExecStreaming, CliStreamsWithANoteAndTheSameOutputFiles) {
  const std::string model = save_mlp(dir_, 5);
  for (const char* arith : {"int", "float"}) {
    SCOPED_TRACE(arith);
    const std::string common = "exec " + model + " --random-inputs --seed 9 --arith " + arith;
    const std::string held = path(std::string("held_") + arith), streamed = path(std::string("streamed_") + arith);
    CliResult h = run_cli(common + " --output-dir " + held);
    ASSERT_EQ(h.exit_code, 0) << h.err;
    EXPECT_EQ(h.err.find("streaming"), std::string::npos) << h.err;
    CliResult s = run_cli(common + " --output-dir " + streamed + " --max-memory 128K --show-paths --repeat 2");
    ASSERT_EQ(s.exit_code, 0) << s.err;
    EXPECT_NE(s.err.find("exec: the weights ("), std::string::npos) << s.err;
    EXPECT_NE(s.err.find("from external data per run"), std::string::npos) << s.err;
    if (std::string(arith) == "int") EXPECT_NE(s.err.find("(weights streamed from external data per run)"), std::string::npos) << s.err;
    EXPECT_EQ(io::read_file(held + "/output_0.pb").value(), io::read_file(streamed + "/output_0.pb").value());
  }
  CliResult tiny = run_cli("exec " + model + " --random-inputs --max-memory 24K");
  EXPECT_EQ(tiny.exit_code, 1) << tiny.err;
  EXPECT_NE(tiny.err.find("tensor 'w0'"), std::string::npos) << tiny.err;
  EXPECT_NE(tiny.err.find("over the memory limit"), std::string::npos) << tiny.err;
}

}  // namespace
}  // namespace qonnx::test
