// Epilogue fusion (docs/arithmetic.md): under --arith int, the elementwise nodes after a layer on the integer
// path (Relu, per-tensor Quant and BipolarQuant) run inside the layer, block by block. Every case here runs
// the same plan twice: as planned, and with the intermediate values exposed (an exposed value is never
// fused away, so the nodes run as their own steps); the outputs must be the same bits, at 1 and 2 threads,
// on inputs inside and outside the quantizers' ranges, and with a NaN (the layer's float fallback, after
// which the executor runs the fused nodes' own kernels).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kernels/isa/isa.h"
#include "qonnx/exec/executor.h"
#include "qonnx/exec/threads.h"
#include "qonnx/io/model_builder.h"
#include "support/simd_levels.h"
#include "support/test_util.h"

namespace qonnx {
namespace {

using test::f32;
constexpr const char* kQ = "qonnx.custom_op.general";

struct Tail {  // one elementwise node after the layer
  std::string op;          // Relu, Quant, BipolarQuant
  int bits = 8;
  bool is_signed = false, narrow = false;
  std::string rounding = "ROUND";
  bool per_channel = false;  // a Quant scale per output channel (not fusible)
};

struct Case {
  std::string name;
  std::string layer;  // Conv, ConvDepthwise, ConvChannelsLast, ConvTranspose, MatMul, Gemm
  std::vector<Tail> tails;
};

Tensor random_floats(std::mt19937& rng, const Dims& dims, float lo, float hi) {
  Tensor t(DType::kFloat, dims);
  std::uniform_real_distribution<float> d(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = d(rng);
  return t;
}

constexpr int64_t kChannels = 12, kSize = 9, kRows = 5, kK = 40, kN = 24;

Dims input_dims(const Case& c) {
  if (c.layer == "MatMul" || c.layer == "Gemm") return {kRows, kK};
  if (c.layer == "ConvChannelsLast") return {2, kSize, kSize, kChannels};
  return {2, kChannels, kSize, kSize};
}

// x -> Quant (u8) -> layer (weights behind an 8-bit per-channel Quant, a bias) -> tails -> y, the values
// between the layer and y named t0, t1, ...; with `second_reader`, t0 is also read by a Neg whose output is
// a second graph output.
// With `identity_input`, an Identity between the input Quant and the layer (it takes no byte codes: the layer
// then reads the Quant's floats).
ir::Model build(const Case& c, bool second_reader = false, bool intermediate_output = false, bool identity_input = false) {
  std::mt19937 rng(7);
  io::ModelBuilder m(13);
  m.import(kQ, 1);
  m.input("x", DType::kFloat, input_dims(c));
  m.initializer("xs", f32({}, {0.02f})).initializer("z", f32({}, {0.0f})).initializer("b8", f32({}, {8.0f}));
  m.node("Quant", {"x", "xs", "z", "b8"}, {identity_input ? "xi" : "xq"}, kQ).attr("signed", int64_t{0}).attr("narrow", int64_t{0});
  if (identity_input) m.node("Identity", {"xi"}, {"xq"});
  const bool matrix = c.layer == "MatMul" || c.layer == "Gemm";
  const bool depthwise = c.layer == "ConvDepthwise";
  Dims w_dims = matrix ? Dims{kK, kN} : depthwise ? Dims{kChannels, 1, 3, 3} : Dims{kChannels, kChannels, 3, 3};
  if (c.layer == "ConvChannelsLast") w_dims = {kChannels, 3, 3, kChannels};
  if (c.layer == "Gemm") w_dims = {kN, kK};  // transB
  const int64_t out_channels = matrix ? kN : kChannels;
  Dims ws_dims(w_dims.size(), 1);
  ws_dims[c.layer == "MatMul" || c.layer == "ConvTranspose" ? 1 : 0] = out_channels;  // (C, M, k...) for ConvTranspose
  m.initializer("wf", random_floats(rng, w_dims, -1.0f, 1.0f));
  m.initializer("ws", random_floats(rng, ws_dims, 0.01f, 0.03f));
  m.node("Quant", {"wf", "ws", "z", "b8"}, {"wq"}, kQ).attr("signed", int64_t{1}).attr("narrow", int64_t{1});
  m.initializer("bias", random_floats(rng, {out_channels}, -0.5f, 0.5f));
  const std::string first = c.tails.empty() ? "y" : "t0";
  if (c.layer == "MatMul") {
    m.node("MatMul", {"xq", "wq"}, {first});
  } else if (c.layer == "Gemm") {
    m.node("Gemm", {"xq", "wq", "bias"}, {first}).attr("transB", int64_t{1});
  } else if (c.layer == "ConvTranspose") {
    m.node("ConvTranspose", {"xq", "wq", "bias"}, {first}).attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  } else {
    auto conv = m.node("Conv", {"xq", "wq", "bias"}, {first}, c.layer == "ConvChannelsLast" ? "qonnx.custom_op.channels_last" : "");
    conv.attr("pads", std::vector<int64_t>{1, 1, 1, 1}).attr("group", depthwise ? kChannels : int64_t{1});
  }
  for (size_t i = 0; i < c.tails.size(); ++i) {
    const Tail& t = c.tails[i];
    const std::string in = "t" + std::to_string(i), out = i + 1 == c.tails.size() ? "y" : "t" + std::to_string(i + 1);
    const std::string s = "s" + std::to_string(i), bits = "b" + std::to_string(i);
    if (t.op == "Relu") {
      m.node("Relu", {in}, {out});
      continue;
    }
    Dims scale_dims;
    if (t.per_channel) {
      scale_dims.assign(input_dims(c).size(), 1);
      scale_dims[c.layer.rfind("Conv", 0) == 0 && c.layer != "ConvChannelsLast" ? 1 : scale_dims.size() - 1] = out_channels;
    }
    m.initializer(s, random_floats(rng, scale_dims, 0.01f, 0.05f));
    if (t.op == "BipolarQuant") {
      m.node("BipolarQuant", {in, s}, {out}, kQ);
      continue;
    }
    m.initializer(bits, f32({}, {static_cast<float>(t.bits)}));
    m.node("Quant", {in, s, "z", bits}, {out}, kQ)
        .attr("signed", int64_t{t.is_signed})
        .attr("narrow", int64_t{t.narrow})
        .attr("rounding_mode", t.rounding);
  }
  m.output("y", DType::kFloat);
  if (second_reader) {
    m.node("Neg", {"t0"}, {"n"});
    m.output("n", DType::kFloat);
  }
  if (intermediate_output) m.output("t0", DType::kFloat);
  return m.build().value();
}

std::vector<std::string> intermediates(const Case& c) {
  std::vector<std::string> names;
  for (size_t i = 0; i < c.tails.size(); ++i) names.push_back("t" + std::to_string(i));
  return names;
}

// The layer's path note (the only one that chose a path besides the input Quant, which has none).
std::string layer_note(const exec::Executor& ex) {
  for (const auto& [node, note] : ex.path_notes())
    if (note.rfind("integer", 0) == 0 || note.rfind("float", 0) == 0) return note;
  return "";
}

std::vector<Tensor> input_sets(const Case& c) {
  std::mt19937 rng(11);
  std::vector<Tensor> sets;
  sets.push_back(random_floats(rng, input_dims(c), 0.0f, 5.0f));    // inside the u8 range
  sets.push_back(random_floats(rng, input_dims(c), -3.0f, 9.0f));   // clipped at both ends
  Tensor nan = random_floats(rng, input_dims(c), 0.0f, 5.0f);
  nan.data<float>()[3] = std::numeric_limits<float>::quiet_NaN();  // the layer's float fallback
  sets.push_back(nan);
  return sets;
}

void expect_same_as_unfused(const Case& c, size_t expected_fused) {
  SCOPED_TRACE(c.name);
  const ir::Model model = build(c);
  auto fused = exec::Executor::create(model, exec::Arithmetic::kInt);
  auto separate = exec::Executor::create(model, exec::Arithmetic::kInt);
  ASSERT_TRUE(fused.is_ok() && separate.is_ok());
  ASSERT_TRUE(separate->expose(intermediates(c)).is_ok());
  const std::string note = layer_note(fused.value());
  ASSERT_EQ(note.rfind("integer", 0), 0u) << note;
  const size_t at = note.find("; fused: ");
  if (expected_fused == 0) {
    EXPECT_EQ(at, std::string::npos) << note;
  } else {
    ASSERT_NE(at, std::string::npos) << note;
    const std::string list = note.substr(at);
    EXPECT_EQ(static_cast<size_t>(std::count(list.begin(), list.end(), '\'')), 2 * expected_fused) << note;
  }
  EXPECT_EQ(layer_note(separate.value()).find("fused"), std::string::npos);
  // The elementwise loops' vector and portable paths (the int8 GEMM's are integer_path_test's).
  using kernels::isa::Family;
  const kernels::isa::Isa best = kernels::isa::best(Family::kQuant);
  for (kernels::isa::Isa isa : test::simd_levels()) {
    kernels::isa::use(Family::kQuant, isa);
    for (int threads : {1, 2}) {
      exec::set_threads(threads);
      for (const Tensor& x : input_sets(c)) {
        auto a = fused->run({{"x", x}});
        auto b = separate->run({{"x", x}});
        ASSERT_TRUE(a.is_ok()) << a.status().to_string();
        ASSERT_TRUE(b.is_ok()) << b.status().to_string();
        EXPECT_TRUE(a->outputs[0].identical(b->outputs[0])) << "threads " << threads << ", " << kernels::isa::name(isa);
      }
    }
  }
  kernels::isa::use(Family::kQuant, best);
  exec::set_threads(1);
}

const Tail kRelu{"Relu"};
const Tail kU8{"Quant", 8, false, false, "ROUND"};

TEST(EpilogueFusion, EveryLayerWithEveryElementwiseTailGivesTheSeparateStepsBits) {
  const std::vector<std::vector<Tail>> tails = {
      {kRelu, kU8},
      {kRelu},
      {{"Quant", 4, true, true, "FLOOR"}},
      {{"Quant", 3, true, false, "CEIL"}, kRelu},
      {{"Quant", 8, false, false, "HALF_UP"}},
      {{"Quant", 6, true, true, "HALF_DOWN"}},
      {{"Quant", 5, false, false, "UP"}},
      {{"BipolarQuant"}},
      {kRelu, kRelu, {"Quant", 2, false, false, "DOWN"}},
  };
  for (const char* layer : {"Conv", "ConvDepthwise", "ConvChannelsLast", "ConvTranspose", "MatMul", "Gemm"})
    for (size_t t = 0; t < tails.size(); ++t)
      expect_same_as_unfused({std::string(layer) + " tail " + std::to_string(t), layer, tails[t]}, tails[t].size());
}

// Runs both executors on each input at each thread count (then back to 1): every output the same bits.
void expect_identical_runs(exec::Executor& a, exec::Executor& b, const std::vector<Tensor>& inputs,
                           std::initializer_list<int> thread_counts) {
  for (int threads : thread_counts) {
    exec::set_threads(threads);
    for (const Tensor& x : inputs) {
      auto ra = a.run({{"x", x}});
      auto rb = b.run({{"x", x}});
      ASSERT_TRUE(ra.is_ok()) << ra.status().to_string();
      ASSERT_TRUE(rb.is_ok()) << rb.status().to_string();
      ASSERT_EQ(ra->outputs.size(), rb->outputs.size());
      for (size_t k = 0; k < ra->outputs.size(); ++k)
        EXPECT_TRUE(ra->outputs[k].identical(rb->outputs[k])) << "threads " << threads << " output " << k;
    }
  }
  exec::set_threads(1);
}

TEST(EpilogueFusion, AnInputQuantsByteCodesGiveTheBitsOfItsFloats) {
  for (const char* layer : {"Conv", "ConvDepthwise", "ConvChannelsLast", "MatMul", "Gemm"}) {
    const Case c{std::string(layer) + " after the input Quant", layer, {kRelu, kU8}};
    SCOPED_TRACE(c.name);
    const ir::Model direct = build(c), through_identity = build(c, false, false, true);  // outlive the executors
    auto with_codes = exec::Executor::create(direct, exec::Arithmetic::kInt);
    auto from_floats = exec::Executor::create(through_identity, exec::Arithmetic::kInt);
    ASSERT_TRUE(with_codes.is_ok() && from_floats.is_ok());
    expect_identical_runs(*with_codes, *from_floats, input_sets(c), {1, 2});
  }
}

// x (N, C, H, W) -> Quant (u8) [-> Identity] -> 3x3 Conv C -> 8 -> Relu -> Quant (u8): with the Identity the Conv
// makes its codes from the Quant's floats, without it takes the Quant's own codes.
ir::Model input_quant_conv(const Dims& x_dims, bool identity_input) {
  std::mt19937 rng(5);
  io::ModelBuilder m(13);
  m.import(kQ, 1);
  m.input("x", DType::kFloat, x_dims);
  m.initializer("xs", f32({}, {0.02f})).initializer("z", f32({}, {0.0f})).initializer("b8", f32({}, {8.0f}));
  m.node("Quant", {"x", "xs", "z", "b8"}, {identity_input ? "xi" : "xq"}, kQ).attr("signed", int64_t{0}).attr("narrow", int64_t{0});
  if (identity_input) m.node("Identity", {"xi"}, {"xq"});
  m.initializer("wf", random_floats(rng, {8, x_dims[1], 3, 3}, -1.0f, 1.0f));
  m.initializer("ws", random_floats(rng, {8, 1, 1, 1}, 0.01f, 0.03f));
  m.node("Quant", {"wf", "ws", "z", "b8"}, {"wq"}, kQ).attr("signed", int64_t{1}).attr("narrow", int64_t{1});
  m.node("Conv", {"xq", "wq"}, {"t0"}).attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  m.node("Relu", {"t0"}, {"t1"});
  m.initializer("ys", f32({}, {0.05f}));
  m.node("Quant", {"t1", "ys", "z", "b8"}, {"y"}, kQ).attr("signed", int64_t{0}).attr("narrow", int64_t{0});
  m.output("y", DType::kFloat);
  return m.build().value();
}

// The input Quant makes its codes by blocks of positions when there are fewer images than shares (a block
// of a multiple of 64 positions, the last one shorter; whole images otherwise): every split, channel count
// (a multiple of 64 or not, one) and thread count gives the bits of the codes made from the floats.
TEST(EpilogueFusion, AnInputQuantsCodesBlockByBlockGiveTheBitsOfItsFloats) {
  const Dims shapes[] = {{1, 80, 13, 11}, {1, 64, 16, 16}, {3, 17, 9, 23}, {1, 3, 40, 40}, {2, 128, 7, 7}, {1, 1, 5, 130}};
  exec::set_min_work_per_thread(1);  // split even these small layers
  for (const Dims& dims : shapes) {
    SCOPED_TRACE(fmt::format("x {}", fmt::join(dims, "x")));
    const ir::Model direct = input_quant_conv(dims, false), through_identity = input_quant_conv(dims, true);
    auto with_codes = exec::Executor::create(direct, exec::Arithmetic::kInt);
    auto from_floats = exec::Executor::create(through_identity, exec::Arithmetic::kInt);
    ASSERT_TRUE(with_codes.is_ok() && from_floats.is_ok());
    std::mt19937 rng(3);
    Tensor nan = random_floats(rng, dims, 0.0f, 5.0f);
    nan.data<float>()[nan.numel() - 1] = std::numeric_limits<float>::quiet_NaN();  // in the last block
    expect_identical_runs(*with_codes, *from_floats, {random_floats(rng, dims, -1.0f, 6.0f), nan}, {1, 2, 3});
  }
  exec::set_min_work_per_thread(exec::kDefaultMinWorkPerThread);
}

TEST(EpilogueFusion, APerChannelQuantEndsTheChain) {
  expect_same_as_unfused({"relu then per-channel quant", "Conv", {kRelu, {"Quant", 8, false, false, "ROUND", true}, kRelu}}, 1);
  expect_same_as_unfused({"per-channel quant first", "MatMul", {{"Quant", 8, false, false, "ROUND", true}}}, 0);
}

TEST(EpilogueFusion, AValueReadTwiceOrKeptIsNotFusedAway) {
  const Case c{"conv relu quant", "Conv", {kRelu, kU8}};
  for (bool second_reader : {true, false}) {
    SCOPED_TRACE(second_reader);
    const ir::Model model = build(c, second_reader, !second_reader);
    auto ex = exec::Executor::create(model, exec::Arithmetic::kInt);
    ASSERT_TRUE(ex.is_ok());
    EXPECT_EQ(layer_note(ex.value()).find("fused"), std::string::npos) << layer_note(ex.value());
    auto got = ex->run({{"x", input_sets(c)[0]}});
    ASSERT_TRUE(got.is_ok()) << got.status().to_string();
    EXPECT_EQ(got->outputs.size(), 2u);
  }
}

TEST(EpilogueFusion, FloatArithmeticFusesNothing) {
  const Case c{"conv relu quant", "Conv", {kRelu, kU8}};
  const ir::Model model = build(c);
  auto ex = exec::Executor::create(model, exec::Arithmetic::kFloat);
  ASSERT_TRUE(ex.is_ok());
  for (const auto& [node, note] : ex->path_notes()) EXPECT_EQ(note.find("fused"), std::string::npos) << note;
}

// x -> Quant (u8) -> Conv 3x3 -> Relu -> Quant (u8) -> Conv 3x3 [group] -> Relu -> Quant -> y: the middle
// Quant's output "m" carries byte codes from the first layer to the second. `m_read_twice`: also an output
// through Neg (its floats are then written); `nan_bias`: the first layer's bias holds a NaN, so one channel
// of m is NaN and no codes can be made.
struct Pool {  // a MaxPool between the layers (kernel 0: none)
  int64_t kernel = 0, stride = 1, pad = 0, dilation = 1;
  bool ceil = false;
};

// The head of the byte-code models: x of `dims`, the scalars xs, z, b8 and ms, and x's
// unsigned 8-bit Quant "xq".
void quantized_input(io::ModelBuilder& m, const Dims& dims) {
  m.import(kQ, 1);
  m.input("x", DType::kFloat, dims);
  m.initializer("xs", f32({}, {0.02f})).initializer("z", f32({}, {0.0f})).initializer("b8", f32({}, {8.0f}));
  m.initializer("ms", f32({}, {0.05f}));
  m.node("Quant", {"x", "xs", "z", "b8"}, {"xq"}, kQ).attr("signed", int64_t{0}).attr("narrow", int64_t{0});
}

// `transposed`: bit l set makes layer l a ConvTranspose (kernel 4, stride 2, pads 1: twice the size).
ir::Model two_convs(int64_t group, bool m_read_twice, bool nan_bias, Pool pool = {}, bool pool_output = false,
                    int64_t first_group = 1, int transposed = 0) {
  std::mt19937 rng(5);
  io::ModelBuilder m(13);
  quantized_input(m, {2, kChannels, kSize, kSize});
  std::string in = "xq";
  for (int l = 0; l < 2; ++l) {
    const std::string n = std::to_string(l);
    const int64_t g = l == 1 ? group : first_group;
    const bool up = (transposed >> l) & 1;
    const int64_t k = up ? 4 : 3;
    m.initializer("w" + n, random_floats(rng, {kChannels, kChannels / g, k, k}, -1.0f, 1.0f));
    // The scale along W's output-channel axis: 0 for Conv, 1 for ConvTranspose.
    m.initializer("ws" + n, random_floats(rng, up ? Dims{1, kChannels / g, 1, 1} : Dims{kChannels, 1, 1, 1}, 0.01f, 0.03f));
    Tensor bias = random_floats(rng, {kChannels}, -0.5f, 0.5f);
    if (nan_bias && l == 0) bias.data<float>()[2] = std::numeric_limits<float>::quiet_NaN();
    m.initializer("bias" + n, bias);
    m.node("Quant", {"w" + n, "ws" + n, "z", "b8"}, {"wq" + n}, kQ).attr("signed", int64_t{1}).attr("narrow", int64_t{1});
    if (up)
      m.node("ConvTranspose", {in, "wq" + n, "bias" + n}, {"c" + n})
          .attr("pads", std::vector<int64_t>{1, 1, 1, 1})
          .attr("strides", std::vector<int64_t>{2, 2})
          .attr("group", g);
    else
      m.node("Conv", {in, "wq" + n, "bias" + n}, {"c" + n}).attr("pads", std::vector<int64_t>{1, 1, 1, 1}).attr("group", g);
    m.node("Relu", {"c" + n}, {"r" + n});
    const std::string out = l == 0 ? "m" : "y";
    m.node("Quant", {"r" + n, l == 0 ? "ms" : "xs", "z", "b8"}, {out}, kQ).attr("signed", int64_t{0}).attr("narrow", int64_t{0});
    in = out;
    if (l == 0 && pool.kernel > 0) {
      m.node("MaxPool", {"m"}, {"p"})
          .attr("kernel_shape", std::vector<int64_t>{pool.kernel, pool.kernel})
          .attr("strides", std::vector<int64_t>{pool.stride, pool.stride})
          .attr("pads", std::vector<int64_t>{pool.pad, pool.pad, pool.pad, pool.pad})
          .attr("dilations", std::vector<int64_t>{pool.dilation, pool.dilation})
          .attr("ceil_mode", int64_t{pool.ceil});
      in = "p";
    }
  }
  if (pool_output) m.output("p", DType::kFloat);
  m.output("y", DType::kFloat);
  if (m_read_twice) {
    m.node("Neg", {"m"}, {"n"});
    m.output("n", DType::kFloat);
  }
  return m.build().value();
}

// The first layer's output (before its epilogue) exposed: nothing fused, no codes anywhere.
void expect_codes_give_float_bits(const ir::Model& model) {
  auto with_codes = exec::Executor::create(model, exec::Arithmetic::kInt);
  auto from_floats = exec::Executor::create(model, exec::Arithmetic::kInt);
  ASSERT_TRUE(with_codes.is_ok() && from_floats.is_ok());
  ASSERT_TRUE(from_floats->expose({"c0"}).is_ok());
  expect_identical_runs(*with_codes, *from_floats, input_sets({"", "Conv", {}}), {1, 2});
}

TEST(EpilogueFusion, MaxPoolPassesByteCodesBetweenLayers) {
  const std::vector<Pool> pools = {{2, 2}, {3, 2, 1}, {3, 1, 1}, {2, 2, 0, 1, true}, {3, 2, 1, 1, true}, {2, 1, 1, 2}};
  for (const Pool& pool : pools)
    for (bool pool_output : {false, true})
      for (bool nan_bias : {false, true}) {
        SCOPED_TRACE(testing::Message() << "MaxPool k" << pool.kernel << " s" << pool.stride << " p" << pool.pad << " d"
                                        << pool.dilation << " ceil " << pool.ceil << ", output " << pool_output << ", NaN bias "
                                        << nan_bias);
        expect_codes_give_float_bits(two_convs(1, false, nan_bias, pool, pool_output));
      }
}

TEST(EpilogueFusion, ByteCodesBetweenLayersGiveTheBitsOfTheFloats) {
  // Groups of the first and second layer: standard, grouped and depthwise (one channel per group) layers
  // make and take the codes.
  const std::vector<std::pair<int64_t, int64_t>> groups = {{1, 1}, {1, 3}, {1, kChannels}, {kChannels, 1}, {kChannels, kChannels}, {3, kChannels}};
  for (const auto& [first, second] : groups)
    for (bool twice : {false, true})
      for (bool nan_bias : {false, true}) {
        SCOPED_TRACE(testing::Message() << "groups " << first << ", " << second << ", m read twice " << twice << ", NaN bias "
                                        << nan_bias);
        expect_codes_give_float_bits(two_convs(second, twice, nan_bias, {}, false, first));
        expect_codes_give_float_bits(two_convs(second, twice, nan_bias, {3, 2, 1}, false, first));  // through a MaxPool
      }
}

TEST(EpilogueFusion, ConvTransposeMakesAndTakesByteCodes) {
  // ConvTranspose first, second or both, grouped or not, the codes read twice or not, with a NaN bias.
  for (int transposed : {1, 2, 3})
    for (int64_t group : {int64_t{1}, int64_t{3}})
      for (bool twice : {false, true})
        for (bool nan_bias : {false, true}) {
          SCOPED_TRACE(testing::Message() << "transposed layers " << transposed << ", group " << group << ", m read twice "
                                          << twice << ", NaN bias " << nan_bias);
          expect_codes_give_float_bits(two_convs(group, twice, nan_bias, {}, false, group, transposed));
        }
}

// x -> Quant (u8) -> depthwise Conv (12 channels unless the case says: an 8-lane block and a tail) -> Relu -> Quant -> 1x1 Conv ->
// Relu -> Quant -> y. With `blocked`, Identities after both Quants: no byte codes reach or leave the depthwise
// layer, which then runs plane by plane; without, it reads the input Quant's codes, makes its own and runs
// channels-last.
struct DepthwiseGeometry {
  int64_t kernel = 3, stride = 1, dilation = 1;
  std::vector<int64_t> pads = {1, 1, 1, 1};  // 2 * rank values
  int64_t channels = kChannels;
  int64_t kernel_h = 0;  // 2-D: the kernel's height when not `kernel`
  Dims spatial = {};     // 2-D: (H, W) when not kSize x kSize
  size_t rank() const { return pads.size() / 2; }
  Dims input() const {
    if (rank() == 1) return {2, channels, 40};
    if (rank() == 3) return {2, channels, 5, 6, 7};
    return spatial.empty() ? Dims{2, channels, kSize, kSize} : Dims{2, channels, spatial[0], spatial[1]};
  }
  Dims kernel_dims() const {
    Dims k(rank(), kernel);
    if (rank() == 2 && kernel_h > 0) k[0] = kernel_h;
    return k;
  }
};

ir::Model depthwise_then_pointwise(const DepthwiseGeometry& geo, bool blocked, bool nan_bias) {
  std::mt19937 rng(9);
  io::ModelBuilder m(13);
  quantized_input(m, geo.input());
  if (blocked) m.node("Identity", {"xq"}, {"xi"});
  const size_t nd = geo.rank();
  const int64_t c = geo.channels;
  Dims wd = {c, 1}, ones = {c, 1}, wp = {c, c};
  const Dims kernel = geo.kernel_dims();
  wd.insert(wd.end(), kernel.begin(), kernel.end()), ones.insert(ones.end(), nd, 1), wp.insert(wp.end(), nd, 1);
  m.initializer("wd", random_floats(rng, wd, -1.0f, 1.0f));
  m.initializer("wds", random_floats(rng, ones, 0.01f, 0.03f));
  Tensor bias = random_floats(rng, {c}, -0.5f, 0.5f);
  if (nan_bias) bias.data<float>()[2] = std::numeric_limits<float>::quiet_NaN();
  m.initializer("bd", bias);
  m.node("Quant", {"wd", "wds", "z", "b8"}, {"wdq"}, kQ).attr("signed", int64_t{1}).attr("narrow", int64_t{1});
  m.node("Conv", {blocked ? "xi" : "xq", "wdq", "bd"}, {"c0"})
      .attr("group", c)
      .attr("strides", std::vector<int64_t>(nd, geo.stride))
      .attr("dilations", std::vector<int64_t>(nd, geo.dilation))
      .attr("pads", geo.pads);
  m.node("Relu", {"c0"}, {"r0"});
  m.node("Quant", {"r0", "ms", "z", "b8"}, {"m"}, kQ).attr("signed", int64_t{0}).attr("narrow", int64_t{0});
  if (blocked) m.node("Identity", {"m"}, {"mi"});
  m.initializer("wp", random_floats(rng, wp, -1.0f, 1.0f));
  m.initializer("wps", random_floats(rng, ones, 0.01f, 0.03f));
  m.node("Quant", {"wp", "wps", "z", "b8"}, {"wpq"}, kQ).attr("signed", int64_t{1}).attr("narrow", int64_t{1});
  m.node("Conv", {blocked ? "mi" : "m", "wpq"}, {"c1"});
  m.node("Relu", {"c1"}, {"r1"});
  m.node("Quant", {"r1", "xs", "z", "b8"}, {"y"}, kQ).attr("signed", int64_t{0}).attr("narrow", int64_t{0});
  m.output("y", DType::kFloat);
  return m.build().value();
}

TEST(EpilogueFusion, DepthwiseOnByteCodesGivesThePlaneByPlaneBits) {
  const std::vector<DepthwiseGeometry> geometries = {
      {}, {3, 2, 1, {1, 1, 1, 1}}, {5, 1, 1, {2, 2, 2, 2}}, {3, 1, 2, {2, 2, 2, 2}}, {2, 2, 1, {0, 0, 0, 0}},
      {3, 1, 1, {0, 1, 1, 0}}, {1, 1, 1, {0, 0, 0, 0}}, {4, 3, 1, {2, 1, 0, 2}},
      {5, 2, 1, {2, 1}}, {3, 1, 3, {3, 3}}, {3, 1, 1, {1, 0, 1, 1, 1, 0}}, {2, 2, 1, {0, 1, 0, 0, 0, 1}},  // 1-D, 3-D
      // 64 channels and more (AVX-512's row-quad run: whole zmm blocks and tails of 16, 8 and 5 channels),
      // kernels of 2 to 7 rows (one or two groups of four), wide rows (a block of 64 outputs inside one row).
      {3, 1, 1, {1, 1, 1, 1}, 128}, {3, 2, 1, {1, 1, 1, 1}, 80}, {5, 1, 1, {2, 2, 2, 2}, 136}, {3, 1, 2, {2, 2, 2, 2}, 64},
      {4, 3, 1, {2, 1, 0, 2}, 72}, {7, 2, 1, {3, 3, 3, 3}, 69}, {2, 2, 1, {0, 0, 0, 0}, 64}, {2, 1, 1, {3, 0, 2, 3}, 77},
      {1, 1, 1, {1, 0, 1, 0}, 64, 3}, {3, 1, 1, {0, 1, 0, 1}, 64, 1}, {3, 1, 1, {1, 1, 1, 1}, 96, 0, {4, 70}},
      {3, 2, 2, {2, 2, 2, 2}, 64, 0, {3, 133}}, {6, 1, 1, {2, 3, 3, 2}, 80, 5, {11, 12}}};
  for (const DepthwiseGeometry& geo : geometries)
    for (bool nan_bias : {false, true}) {
      SCOPED_TRACE(testing::Message() << geo.rank() << "-D kernel " << fmt::format("{}", fmt::join(geo.kernel_dims(), "x"))
                                      << " stride " << geo.stride << " dilation " << geo.dilation << " pads "
                                      << fmt::format("{}", fmt::join(geo.pads, ",")) << ", " << geo.channels
                                      << " channels, input " << fmt::format("{}", fmt::join(geo.input(), "x")) << ", NaN bias "
                                      << nan_bias);
      const ir::Model with_codes = depthwise_then_pointwise(geo, false, nan_bias);
      const ir::Model without = depthwise_then_pointwise(geo, true, nan_bias);
      auto on_codes = exec::Executor::create(with_codes, exec::Arithmetic::kInt);
      auto by_planes = exec::Executor::create(without, exec::Arithmetic::kInt);
      ASSERT_TRUE(on_codes.is_ok() && by_planes.is_ok());
      for (kernels::isa::Isa isa : test::simd_levels()) {
        test::ScopedSimdLevel level(isa, kernels::isa::Family::kInt8);
        for (int threads : {1, 2}) {
          exec::set_threads(threads);
          std::mt19937 rng(11);
          Tensor nan = random_floats(rng, geo.input(), 0.0f, 5.0f);
          nan.data<float>()[3] = std::numeric_limits<float>::quiet_NaN();
          for (const Tensor& x : {random_floats(rng, geo.input(), 0.0f, 5.0f), random_floats(rng, geo.input(), -3.0f, 9.0f), nan}) {
            auto a = on_codes->run({{"x", x}});
            auto b = by_planes->run({{"x", x}});
            ASSERT_TRUE(a.is_ok()) << a.status().to_string();
            ASSERT_TRUE(b.is_ok()) << b.status().to_string();
            EXPECT_TRUE(a->outputs[0].identical(b->outputs[0])) << kernels::isa::name(isa) << ", threads " << threads;
          }
        }
      }
    }
  exec::set_threads(1);
}

// x -> Quant -> Conv 3x3 -> Relu -> Quant -> `pool` (GlobalAveragePool / GlobalMaxPool) -> y; with `blocked`
// an Identity before the pool, which then reads floats instead of the Quant's byte codes.
ir::Model conv_then_global_pool(const std::string& pool, int64_t size, bool blocked, bool nan_bias) {
  std::mt19937 rng(13);
  io::ModelBuilder m(13);
  quantized_input(m, {2, kChannels, size, size});
  m.initializer("w", random_floats(rng, {kChannels, kChannels, 3, 3}, -1.0f, 1.0f));
  m.initializer("ws", random_floats(rng, {kChannels, 1, 1, 1}, 0.01f, 0.03f));
  Tensor bias = random_floats(rng, {kChannels}, -0.5f, 0.5f);
  if (nan_bias) bias.data<float>()[2] = std::numeric_limits<float>::quiet_NaN();
  m.initializer("b", bias);
  m.node("Quant", {"w", "ws", "z", "b8"}, {"wq"}, kQ).attr("signed", int64_t{1}).attr("narrow", int64_t{1});
  m.node("Conv", {"xq", "wq", "b"}, {"c0"}).attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  m.node("Relu", {"c0"}, {"r0"});
  m.node("Quant", {"r0", "ms", "z", "b8"}, {"m"}, kQ).attr("signed", int64_t{0}).attr("narrow", int64_t{0});
  if (blocked) m.node("Identity", {"m"}, {"mi"});
  m.node(pool, {blocked ? "mi" : "m"}, {"y"});
  m.output("y", DType::kFloat);
  return m.build().value();
}

TEST(EpilogueFusion, GlobalPoolsOnByteCodesGiveTheBitsOfTheFloats) {
  for (const std::string pool : {"GlobalAveragePool", "GlobalMaxPool"})
    for (int64_t size : {int64_t{8}, kSize})  // 64 positions (whole groups of four) and 81
      for (bool nan_bias : {false, true}) {
        SCOPED_TRACE(testing::Message() << pool << " " << size << "x" << size << ", NaN bias " << nan_bias);
        const ir::Model with_codes = conv_then_global_pool(pool, size, false, nan_bias);
        const ir::Model without = conv_then_global_pool(pool, size, true, nan_bias);
        auto on_codes = exec::Executor::create(with_codes, exec::Arithmetic::kInt);
        auto on_floats = exec::Executor::create(without, exec::Arithmetic::kInt);
        ASSERT_TRUE(on_codes.is_ok() && on_floats.is_ok());
        std::mt19937 rng(17);
        expect_identical_runs(*on_codes, *on_floats, {random_floats(rng, {2, kChannels, size, size}, -1.0f, 6.0f)}, {1, 2});
      }
}

// x -> Quant (u8) [-> Identity] -> layer 0 -> Relu -> Quant (u8) "m" -> layer 1 -> Relu -> Quant (u8) "y", the
// layers matrix products: with a rank-3 x two MatMuls (the codes in the value's own order differ from
// channels-last), with a rank-2 x a Gemm (bias, a NaN in it with `nan_bias`) then a MatMul. `m_read_twice`:
// a Neg of m is a second output.
ir::Model matrix_chain(bool rank3, bool nan_bias, bool m_read_twice, bool identity_input) {
  std::mt19937 rng(9);
  io::ModelBuilder m(13);
  m.import(kQ, 1);
  m.input("x", DType::kFloat, rank3 ? Dims{2, kRows, kK} : Dims{kRows, kK});
  m.initializer("xs", f32({}, {0.02f})).initializer("z", f32({}, {0.0f})).initializer("b8", f32({}, {8.0f}));
  m.initializer("ms", f32({}, {0.05f})).initializer("ys", f32({}, {0.04f}));
  m.node("Quant", {"x", "xs", "z", "b8"}, {identity_input ? "xi" : "xq"}, kQ).attr("signed", int64_t{0}).attr("narrow", int64_t{0});
  if (identity_input) m.node("Identity", {"xi"}, {"xq"});
  const int64_t n1 = 16;
  const bool gemm = !rank3;
  m.initializer("w0", random_floats(rng, gemm ? Dims{kN, kK} : Dims{kK, kN}, -1.0f, 1.0f));
  m.initializer("ws0", random_floats(rng, gemm ? Dims{kN, 1} : Dims{1, kN}, 0.01f, 0.03f));
  m.node("Quant", {"w0", "ws0", "z", "b8"}, {"wq0"}, kQ).attr("signed", int64_t{1}).attr("narrow", int64_t{1});
  if (gemm) {
    Tensor bias = random_floats(rng, {kN}, -0.5f, 0.5f);
    if (nan_bias) bias.data<float>()[5] = std::numeric_limits<float>::quiet_NaN();
    m.initializer("bias0", bias);
    m.node("Gemm", {"xq", "wq0", "bias0"}, {"c0"}).attr("transB", int64_t{1});
  } else {
    m.node("MatMul", {"xq", "wq0"}, {"c0"});
  }
  m.node("Relu", {"c0"}, {"r0"});
  m.node("Quant", {"r0", "ms", "z", "b8"}, {"m"}, kQ).attr("signed", int64_t{0}).attr("narrow", int64_t{0});
  m.initializer("w1", random_floats(rng, {kN, n1}, -1.0f, 1.0f));
  m.initializer("ws1", random_floats(rng, {1, n1}, 0.01f, 0.03f));
  m.node("Quant", {"w1", "ws1", "z", "b8"}, {"wq1"}, kQ).attr("signed", int64_t{1}).attr("narrow", int64_t{1});
  m.node("MatMul", {"m", "wq1"}, {"c1"});
  m.node("Relu", {"c1"}, {"r1"});
  m.node("Quant", {"r1", "ys", "z", "b8"}, {"y"}, kQ).attr("signed", int64_t{0}).attr("narrow", int64_t{0});
  m.output("y", DType::kFloat);
  if (m_read_twice) {
    m.node("Neg", {"m"}, {"n"});
    m.output("n", DType::kFloat);
  }
  return m.build().value();
}

// The layers' path notes, in the order they run.
std::vector<std::string> layer_notes(const exec::Executor& ex) {
  std::vector<std::string> notes;
  for (const auto& [node, note] : ex.path_notes())
    if (note.rfind("integer", 0) == 0 || note.rfind("float", 0) == 0) notes.push_back(note);
  return notes;
}

// Matrix products take their input's codes in its own order from the input Quant and from each other, and give
// the bits of the plan where layer 0 takes none and makes none (an Identity after the input Quant, its output
// exposed: m's Quant then runs as its own step and makes layer 1's codes).
TEST(EpilogueFusion, MatrixProductsPassByteCodesInTheValuesOwnOrder) {
  exec::set_min_work_per_thread(1);  // split even these small layers
  for (bool rank3 : {true, false})
    for (bool nan_bias : {false, true})
      for (bool twice : {false, true}) {
        if (rank3 && nan_bias) continue;  // a MatMul has no bias
        SCOPED_TRACE(testing::Message() << (rank3 ? "rank 3, MatMul" : "rank 2, Gemm") << " then MatMul, NaN bias "
                                        << nan_bias << ", m read twice " << twice);
        const ir::Model direct = matrix_chain(rank3, nan_bias, twice, false), apart = matrix_chain(rank3, nan_bias, twice, true);
        auto with_codes = exec::Executor::create(direct, exec::Arithmetic::kInt);
        auto from_floats = exec::Executor::create(apart, exec::Arithmetic::kInt);
        ASSERT_TRUE(with_codes.is_ok() && from_floats.is_ok());
        ASSERT_TRUE(from_floats->expose({"c0"}).is_ok());
        const std::vector<std::string> notes = layer_notes(*with_codes), apart_notes = layer_notes(*from_floats);
        ASSERT_EQ(notes.size(), 2u);
        ASSERT_EQ(apart_notes.size(), 2u);
        EXPECT_NE(notes[0].find("byte codes in"), std::string::npos) << notes[0];
        EXPECT_NE(notes[0].find("; byte codes out"), std::string::npos) << notes[0];
        EXPECT_EQ(notes[0].find("channels-last"), std::string::npos) << notes[0];
        EXPECT_NE(notes[1].find("byte codes in"), std::string::npos) << notes[1];
        EXPECT_EQ(apart_notes[0].find("byte codes"), std::string::npos) << apart_notes[0];
        std::mt19937 rng(21);
        const Dims dims = rank3 ? Dims{2, kRows, kK} : Dims{kRows, kK};
        Tensor nan = random_floats(rng, dims, 0.0f, 5.0f);
        nan.data<float>()[nan.numel() - 2] = std::numeric_limits<float>::quiet_NaN();
        expect_identical_runs(*with_codes, *from_floats,
                              {random_floats(rng, dims, 0.0f, 5.0f), random_floats(rng, dims, -3.0f, 9.0f), nan}, {1, 2, 3});
      }
  exec::set_min_work_per_thread(exec::kDefaultMinWorkPerThread);
}

// x (2, 12, 9, 9) -> Quant (u8) [-> Identity] "xq", read by `convs` 3x3 Convs and `matmuls` MatMuls (W 9 x 8,
// along x's last axis), each to its own output.
ir::Model mixed_readers(int convs, int matmuls, bool identity_input) {
  std::mt19937 rng(13);
  io::ModelBuilder m(13);
  m.import(kQ, 1);
  m.input("x", DType::kFloat, {2, kChannels, kSize, kSize});
  m.initializer("xs", f32({}, {0.02f})).initializer("z", f32({}, {0.0f})).initializer("b8", f32({}, {8.0f}));
  m.node("Quant", {"x", "xs", "z", "b8"}, {identity_input ? "xi" : "xq"}, kQ).attr("signed", int64_t{0}).attr("narrow", int64_t{0});
  if (identity_input) m.node("Identity", {"xi"}, {"xq"});
  for (int i = 0; i < convs + matmuls; ++i) {
    const std::string n = std::to_string(i);
    const bool conv = i < convs;
    m.initializer("w" + n, random_floats(rng, conv ? Dims{8, kChannels, 3, 3} : Dims{kSize, 8}, -1.0f, 1.0f));
    m.initializer("ws" + n, random_floats(rng, conv ? Dims{8, 1, 1, 1} : Dims{1, 8}, 0.01f, 0.03f));
    m.node("Quant", {"w" + n, "ws" + n, "z", "b8"}, {"wq" + n}, kQ).attr("signed", int64_t{1}).attr("narrow", int64_t{1});
    if (conv)
      m.node("Conv", {"xq", "wq" + n}, {"y" + n}).attr("pads", std::vector<int64_t>{1, 1, 1, 1});
    else
      m.node("MatMul", {"xq", "wq" + n}, {"y" + n});
    m.output("y" + n, DType::kFloat);
  }
  return m.build().value();
}

// A value read by convolutions (codes channels-last) and matrix products (codes in its own order): the input
// Quant makes the codes the most readers take (channels-last on a tie), the others read its floats, with the
// same bits as when nobody takes codes.
TEST(EpilogueFusion, ReadersOfBothCodeLayoutsTakeTheOneMade) {
  struct Mix {
    int convs, matmuls;
    bool matmuls_take;
  };
  for (const Mix& mix : {Mix{1, 1, false}, Mix{1, 2, true}, Mix{2, 1, false}, Mix{0, 2, true}}) {
    SCOPED_TRACE(testing::Message() << mix.convs << " Conv and " << mix.matmuls << " MatMul readers");
    const ir::Model direct = mixed_readers(mix.convs, mix.matmuls, false), apart = mixed_readers(mix.convs, mix.matmuls, true);
    auto with_codes = exec::Executor::create(direct, exec::Arithmetic::kInt);
    auto from_floats = exec::Executor::create(apart, exec::Arithmetic::kInt);
    ASSERT_TRUE(with_codes.is_ok() && from_floats.is_ok());
    const std::vector<std::string> notes = layer_notes(*with_codes);
    ASSERT_EQ(notes.size(), static_cast<size_t>(mix.convs + mix.matmuls));
    for (int i = 0; i < mix.convs + mix.matmuls; ++i) {
      const std::string& note = notes[static_cast<size_t>(i)];
      ASSERT_EQ(note.rfind("integer", 0), 0u) << note;
      const bool takes = (i < mix.convs) != mix.matmuls_take;
      EXPECT_EQ(note.find("byte codes in") != std::string::npos, takes) << note;
    }
    std::mt19937 rng(23);
    expect_identical_runs(*with_codes, *from_floats, {random_floats(rng, {2, kChannels, kSize, kSize}, -1.0f, 6.0f)}, {1, 2});
  }
}

}  // namespace
}  // namespace qonnx
