// Issue 27 item 1: what passes make is held in memory up to the spill store's budget, whatever the number
// of tensors, and where a result waited (memory or the scratch file) changes no byte of the output.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "ir/spill_store.h"
#include "qonnx/exec/broadcast.h"
#include "qonnx/io/model_builder.h"
#include "qonnx/io/model_io.h"
#include "qonnx/targets/target.h"
#include "support/temp_dir.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {
namespace fs = std::filesystem;

const char* kQ = "qonnx.custom_op.general";

// An MLP of `layers` width x width float weights, each behind a per-channel `bits`-bit Quant, with an
// 8-bit Quant on every activation: the model family, small.
ir::Model quantized_mlp(int layers, int64_t width, int bits) {
  io::ModelBuilder b(13);
  b.import(kQ, 1);
  b.input("x", DType::kFloat, {1, width});
  b.initializer("act_scale", f32s(1.0f / 64)).initializer("zero", f32s(0.0f)).initializer("bits8", f32s(8.0f));
  b.initializer("wbits", f32s(static_cast<float>(bits)));
  uint64_t state = 0x9e3779b97f4a7c15ULL;
  std::string act = "x";
  for (int l = 0; l < layers; ++l) {
    const std::string w = "w" + std::to_string(l), n = std::to_string(l);
    std::vector<float> weights(static_cast<size_t>(width * width)), scales(static_cast<size_t>(width));
    for (float& v : weights) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      v = static_cast<float>(static_cast<int64_t>(state >> 40) % 2001 - 1000) * (0.02f / 1000.0f);
    }
    for (size_t c = 0; c < scales.size(); ++c) scales[c] = 0.0002f * static_cast<float>(1 + (c + l) % 5);
    b.initializer(w, f32({width, width}, weights)).initializer(w + "_scale", f32({1, width}, scales));
    b.node("Quant", {act, "act_scale", "zero", "bits8"}, {"a" + n}, kQ).attr("signed", 1);
    b.node("Quant", {w, w + "_scale", "zero", "wbits"}, {w + "_q"}, kQ).attr("signed", 1).attr("narrow", 1);
    b.node("MatMul", {"a" + n, w + "_q"}, {"h" + n});
    act = "r" + n;
    b.node("Relu", {"h" + n}, {act});
  }
  b.output(act, DType::kFloat, {1, width});
  return b.build().value();
}

Tensor ramp_input(int64_t width) {
  std::vector<float> v(static_cast<size_t>(width));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<int>(i % 37) - 18) * 0.05f;
  return f32({1, width}, v);
}

int spilled_initializers(const ir::Model& m) {
  int n = 0;
  for (const auto& init : m.graph().initializers()) n += init.is_external() && ir::in_scratch_file(init.base_dir);
  return n;
}

// The model's files after `target`'s pipeline and a save (external data always, all inline, and auto).
std::map<std::string, std::string> convert_and_save(ir::Model& m, const std::string& target, const fs::path& dir) {
  EXPECT_TRUE(run_passes(m, targets::pipeline_text(target).value()).is_ok());
  std::map<std::string, std::string> files;
  io::SaveOptions external;
  external.external_data = io::ExternalData::kAlways;
  EXPECT_TRUE(io::save_model(m, dir / "ext.onnx", external).is_ok());
  io::SaveOptions inline_all;
  inline_all.external_data = io::ExternalData::kNever;
  EXPECT_TRUE(io::save_model(m, dir / "inline.onnx", inline_all).is_ok());
  // auto, as for a model loaded with external data: large tensors go external, small ones inline.
  m.set_source_used_external_data(true);
  EXPECT_TRUE(io::save_model(m, dir / "auto.onnx").is_ok());
  for (const char* f : {"ext.onnx", "ext.onnx.data", "inline.onnx", "auto.onnx", "auto.onnx.data"})
    files[f] = io::read_file(dir / f).value();
  return files;
}

class BoundedMemory : public TempDirTest {
 protected:
  void TearDown() override {
    ir::set_spill_budget(ir::kDefaultSpillBudget);
    TempDirTest::TearDown();
  }
};

// Many mid-size new initializers (each far below any per-tensor size threshold, together many times the
// budget): the bytes held never pass the budget, the rest waits in the scratch file, and the outputs are
// the bytes of an unbounded run and compute what the original computes.
TEST_F(BoundedMemory, ConvertHoldsAtMostTheBudgetAndWritesTheSameBytes) {
  struct Case {
    std::string target;
    int layers;
    int64_t width;
    int bits;
  };
  for (const Case& c : {Case{"qdq", 24, 384, 8}, Case{"qdq", 9, 200, 4}, Case{"fold", 16, 256, 8}}) {
    SCOPED_TRACE(c.target + " " + std::to_string(c.layers) + " x " + std::to_string(c.width));
    const Tensor x = ramp_input(c.width);
    const ir::Model original = quantized_mlp(c.layers, c.width, c.bits);

    ir::set_spill_budget(UINT64_MAX);
    std::map<std::string, std::string> expected;
    {
      ir::Model unbounded = quantized_mlp(c.layers, c.width, c.bits);
      fs::create_directories(dir_ / "unbounded");
      expected = convert_and_save(unbounded, c.target, dir_ / "unbounded");
      EXPECT_EQ(spilled_initializers(unbounded), 0);
    }

    // A budget of a few weights' codes: most must wait in the scratch file.
    const uint64_t weight_bytes = static_cast<uint64_t>(c.width * c.width);
    const uint64_t budget = 3 * weight_bytes + 4096;
    ir::set_spill_budget(budget);
    const uint64_t before = ir::held_bytes();
    ir::reset_peak_held_bytes();
    {
      ir::Model bounded = quantized_mlp(c.layers, c.width, c.bits);
      fs::create_directories(dir_ / "bounded");
      const auto files = convert_and_save(bounded, c.target, dir_ / "bounded");
      EXPECT_LE(ir::peak_held_bytes(), before + budget);
      EXPECT_GT(spilled_initializers(bounded), c.layers / 2);
      for (const auto& [name, bytes] : expected) EXPECT_TRUE(files.at(name) == bytes) << name << " differs from the unbounded run's";
      EXPECT_EQ(outputs_differ(original, bounded, {{"x", x}}), "");
      // The saved file computes the same too.
      auto reloaded = io::load_model(dir_ / "bounded" / "ext.onnx");
      ASSERT_TRUE(reloaded.is_ok()) << reloaded.status().to_string();
      EXPECT_EQ(outputs_differ(original, reloaded.value(), {{"x", x}}), "");
    }
    // Releasing the model releases its count.
    EXPECT_EQ(ir::held_bytes(), before);
    fs::remove_all(dir_ / "bounded");
    fs::remove_all(dir_ / "unbounded");
  }
}

// fold's float weights of a model with external data are computed as the save writes them: nothing is
// held or spilled for them, and the files are the bytes of the eager fold of the same model inline.
TEST_F(BoundedMemory, FoldComputesExternalWeightsWhenWritten) {
  ir::set_spill_budget(UINT64_MAX);  // nothing spills: a weight in the scratch folder is a deferred one
  const int layers = 6;
  const int64_t width = 96;
  const Tensor x = ramp_input(width);
  const ir::Model original = quantized_mlp(layers, width, 5);
  io::SaveOptions external;
  external.external_data = io::ExternalData::kAlways;
  ASSERT_TRUE(io::save_model(original, dir_ / "src_ext.onnx", external).is_ok());
  io::SaveOptions inline_all;
  inline_all.external_data = io::ExternalData::kNever;
  ASSERT_TRUE(io::save_model(original, dir_ / "src_inline.onnx", inline_all).is_ok());

  std::map<std::string, std::string> eager;
  {
    ir::Model m = io::load_model(dir_ / "src_inline.onnx").value();
    fs::create_directories(dir_ / "eager");
    eager = convert_and_save(m, "fold", dir_ / "eager");
  }
  const uint64_t before = ir::held_bytes();
  ir::Model m = io::load_model(dir_ / "src_ext.onnx").value();
  fs::create_directories(dir_ / "deferred");
  const auto files = convert_and_save(m, "fold", dir_ / "deferred");
  EXPECT_EQ(spilled_initializers(m), layers);
  EXPECT_LT(ir::held_bytes() - before, static_cast<uint64_t>(width * width));  // no weight held
  for (const auto& [name, bytes] : eager) EXPECT_TRUE(files.at(name) == bytes) << name << " differs from the eager fold's";
  EXPECT_EQ(outputs_differ(original, m, {{"x", x}}), "");

  // A renamed copy computes the same after the original proto is gone; so does a clone.
  ir::Value* w0 = m.graph().find_value("w0_q");
  ASSERT_NE(w0, nullptr);
  const Tensor w0_value = m.graph().initializer_tensor(w0).value();
  ASSERT_TRUE(m.graph().rename_value(w0, "w0_renamed").is_ok());
  EXPECT_TRUE(m.graph().initializer_tensor(w0).value().identical(w0_value));
  ir::Model copy = m.clone();
  EXPECT_TRUE(copy.graph().initializer_tensor(copy.graph().find_value("w0_renamed")).value().identical(w0_value));
}

// One weight behind one quantizer, read by a MatMul: the layouts the deferred fold computes in blocks of
// rows (a per-column or per-row scale and zero point, a rank-3 weight, BipolarQuant) or whole (a weight
// broadcast by its scale), with weights of a few blocks and a shorter last one.
struct QuantizedWeight {
  std::string op;  // Quant or BipolarQuant
  Dims weight, scale, zeropt;
  std::string rounding;  // Quant's rounding_mode
  int bits;
  bool is_signed;
};

ir::Model single_quantized_weight(const QuantizedWeight& c) {
  Dims out;
  EXPECT_TRUE(exec::broadcast_dims(c.weight, c.scale, &out));
  EXPECT_TRUE(exec::broadcast_dims(Dims(out), c.zeropt, &out));
  const int64_t rows = checked_numel(out) / out.back();
  io::ModelBuilder b(13);
  b.import(kQ, 1);
  b.input("x", DType::kFloat, {1, out.size() == 3 ? out[1] : rows});
  uint64_t state = 0x2545f4914f6cdd1dULL;
  auto ramp = [&](const Dims& d, float lo, float step, int64_t period) {
    std::vector<float> v(static_cast<size_t>(checked_numel(d)));
    for (size_t i = 0; i < v.size(); ++i) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      v[i] = period > 0 ? lo + step * static_cast<float>(static_cast<int64_t>(i) % period)
                        : static_cast<float>(static_cast<int64_t>(state >> 40) % 4001 - 2000) * step;
    }
    return f32(d, v);
  };
  b.initializer("w", ramp(c.weight, 0.0f, 0.03f / 2000.0f, 0));
  b.initializer("s", ramp(c.scale, 0.0011f, 0.0007f, 7));
  if (c.op == "BipolarQuant") {
    b.node("BipolarQuant", {"w", "s"}, {"wq"}, kQ);
  } else {
    b.initializer("z", ramp(c.zeropt, c.is_signed ? -1.0f : 0.0f, 1.0f, 3)).initializer("bits", f32s(static_cast<float>(c.bits)));
    b.node("Quant", {"w", "s", "z", "bits"}, {"wq"}, kQ).attr("signed", c.is_signed ? 1 : 0).attr("narrow", 0).attr("rounding_mode", c.rounding);
  }
  b.node("MatMul", {"x", "wq"}, {"y"});
  b.output("y", DType::kFloat, out.size() == 3 ? Dims{out[0], 1, out[2]} : Dims{1, out.back()});
  return b.build().value();
}

// The deferred fold's blocks: the same files as the eager fold's whatever the parameters' layout, and
// the same values when read back whole.
TEST_F(BoundedMemory, FoldInBlocksWritesTheEagerFoldsBytes) {
  ir::set_spill_budget(UINT64_MAX);
  // 256 KiB blocks: 300 rows of 1000 floats are 4 x 65 rows and 40, 5 x 100 x 300 is 2 x 2 slabs and 1.
  const std::vector<QuantizedWeight> cases = {
      {"Quant", {300, 1000}, {1, 1000}, {}, "ROUND", 4, true},
      {"Quant", {300, 1000}, {300, 1}, {300, 1}, "FLOOR", 6, false},
      {"Quant", {300, 1000}, {}, {1, 1000}, "CEIL", 3, true},
      {"Quant", {5, 100, 300}, {5, 1, 1}, {}, "DOWN", 5, true},
      {"Quant", {1, 1000}, {300, 1}, {}, "ROUND", 8, true},  // the weight broadcast: one block
      {"BipolarQuant", {300, 1000}, {300, 1}, {}, "", 1, true},
      {"Quant", {50, 20}, {1, 20}, {}, "ROUND", 2, true},  // one short block
  };
  for (const QuantizedWeight& c : cases) {
    SCOPED_TRACE(c.op + " " + dims_to_string(c.weight) + " scale " + dims_to_string(c.scale) + " zero point " +
                 dims_to_string(c.zeropt) + " " + c.rounding);
    const ir::Model original = single_quantized_weight(c);
    io::SaveOptions external;
    external.external_data = io::ExternalData::kAlways;
    external.external_threshold = 1024;
    ASSERT_TRUE(io::save_model(original, dir_ / "src_ext.onnx", external).is_ok());
    io::SaveOptions inline_all;
    inline_all.external_data = io::ExternalData::kNever;
    ASSERT_TRUE(io::save_model(original, dir_ / "src_inline.onnx", inline_all).is_ok());
    ir::Model eager_model = io::load_model(dir_ / "src_inline.onnx").value();
    fs::create_directories(dir_ / "eager");
    const auto eager = convert_and_save(eager_model, "fold", dir_ / "eager");
    ir::Model m = io::load_model(dir_ / "src_ext.onnx").value();
    fs::create_directories(dir_ / "deferred");
    const auto files = convert_and_save(m, "fold", dir_ / "deferred");
    EXPECT_EQ(spilled_initializers(m), 1);  // the weight was deferred
    for (const auto& [name, bytes] : eager) EXPECT_TRUE(files.at(name) == bytes) << name << " differs from the eager fold's";
    ir::Value* wq = m.graph().find_value("wq");
    ASSERT_NE(wq, nullptr);
    EXPECT_TRUE(m.graph().initializer_tensor(wq).value().identical(
        eager_model.graph().initializer_tensor(eager_model.graph().find_value("wq")).value()));
    fs::remove_all(dir_ / "eager");
    fs::remove_all(dir_ / "deferred");
  }
}

// Renaming a held initializer copies its proto: the copy is counted while it lives, and only once after
// the original goes.
TEST_F(BoundedMemory, RenamedInitializersStayCounted) {
  ir::set_spill_budget(UINT64_MAX);
  const uint64_t before = ir::held_bytes();
  {
    ir::Model m = quantized_mlp(1, 64, 8);
    ir::Graph& g = m.graph();
    auto v = g.add_initializer_tensor("made", f32({64, 64}, std::vector<float>(64 * 64, 1.5f)));
    ASSERT_TRUE(v.is_ok());
    EXPECT_EQ(ir::held_bytes(), before + 64 * 64 * 4);
    ASSERT_TRUE(g.rename_value(v.value(), "renamed").is_ok());
    EXPECT_EQ(ir::held_bytes(), before + 64 * 64 * 4);
    ir::Model copy = m.clone();  // shares the proto: no new bytes
    EXPECT_EQ(ir::held_bytes(), before + 64 * 64 * 4);
    EXPECT_TRUE(copy.graph().initializer_tensor(copy.graph().find_value("renamed")).value().identical(
        f32({64, 64}, std::vector<float>(64 * 64, 1.5f))));
  }
  EXPECT_EQ(ir::held_bytes(), before);
}

// A tensor over the budget goes to the scratch file even alone, and reads back the same.
TEST_F(BoundedMemory, OverBudgetTensorsReadBackFromTheScratchFile) {
  for (uint64_t budget : {uint64_t{0}, uint64_t{1000}, uint64_t{4095}}) {
    ir::set_spill_budget(budget);
    ir::Model m = quantized_mlp(1, 32, 8);
    for (DType dtype : {DType::kInt8, DType::kFloat, DType::kInt4, DType::kFloat16}) {
      Tensor t(dtype, {33, 31});
      for (int64_t i = 0; i < t.numel() * static_cast<int64_t>(dtype_size(dtype)); ++i)
        static_cast<uint8_t*>(t.raw())[i] = static_cast<uint8_t>(dtype == DType::kInt4 ? (i * 7 % 16) - 8 : i * 31 + 7);
      const std::string name = std::string("t_") + dtype_name(dtype);
      const uint64_t held = ir::held_bytes();
      auto v = m.graph().add_initializer_tensor(name, t);
      ASSERT_TRUE(v.is_ok());
      const ir::Initializer* init = m.graph().initializer(v.value());
      EXPECT_EQ(init->is_external(), held + stored_nbytes(dtype, t.numel()) > budget) << name;
      EXPECT_TRUE(m.graph().initializer_tensor(v.value()).value().identical(t)) << name;
    }
  }
}

}  // namespace
}  // namespace qonnx::test
