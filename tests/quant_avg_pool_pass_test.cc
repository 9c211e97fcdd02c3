// QuantAvgPool2d through the passes: lower-custom-ops' standard form equals the kernel bit for bit
// (executor and onnxruntime); avgpool-trunc-to-quantavgpool converts AveragePool -> Mul -> Trunc only
// where the result equals the original on every input the annotations allow (generated models,
// original vs converted through the executor), and says why it leaves the rest.
#include <cmath>
#include <filesystem>
#include <limits>
#include <random>

#include <unistd.h>

#include <gtest/gtest.h>

#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/exec/executor.h"
#include "qonnx/io/model_builder.h"
#include "qonnx/io/model_io.h"
#include "qonnx/ir/finn_datatype.h"
#include "support/cli.h"
#include "support/temp_dir.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {

namespace fs = std::filesystem;

const char* kGeneral = "qonnx.custom_op.general";

struct PoolConfig {
  int64_t kernel, stride, ibits, obits;
  bool nhwc;
};

// Shifts 0 to 30, kernels 1 to 4, strides 1 to 3, both layouts.
std::vector<PoolConfig> pool_configs() {
  std::vector<PoolConfig> configs;
  int i = 0;
  for (int64_t kernel : {1, 2, 3, 4})
    for (int64_t stride : {1, 2, 3})
      for (auto [ibits, obits] : {std::pair<int64_t, int64_t>{4, 40}, {4, 5}, {8, 2}, {32, 3}})
        configs.push_back({kernel, stride, ibits, obits, (i++ % 3) == 1});
  return configs;
}

// x (2, 3, 7, 8) -> one QuantAvgPool2d per config (NHWC ones between Transposes), each flattened,
// concatenated into y: one model (one onnxruntime run) for every config.
io::ModelBuilder pooling_model(const std::vector<PoolConfig>& configs) {
  io::ModelBuilder b(13);
  b.import(kGeneral, 1);
  b.input("x", DType::kFloat, {2, 3, 7, 8}).output("y", DType::kFloat);
  b.initializer("flat", i64({1}, {-1}));
  b.node("Transpose", {"x"}, {"x_nhwc"}).attr("perm", std::vector<int64_t>{0, 2, 3, 1});
  std::vector<std::string> parts;
  for (size_t i = 0; i < configs.size(); ++i) {
    const PoolConfig& c = configs[i];
    const std::string pooled = "pooled" + std::to_string(i), part = "part" + std::to_string(i);
    b.node("QuantAvgPool2d", {c.nhwc ? "x_nhwc" : "x"}, {pooled}, kGeneral)
        .attr("kernel", c.kernel)
        .attr("stride", c.stride)
        .attr("ibits", c.ibits)
        .attr("obits", c.obits)
        .attr("data_layout", c.nhwc ? "NHWC" : "NCHW");
    b.node("Reshape", {pooled, "flat"}, {part});
    parts.push_back(part);
  }
  b.node("Concat", parts, {"y"}).attr("axis", int64_t{0});
  return b;
}

// Integers of several magnitudes, near-integers (a Div by a scale in front), exact halves, huge
// values, NaN and infinities.
Tensor hostile_input(uint32_t seed) {
  std::mt19937 rng(seed);
  Tensor x(DType::kFloat, {2, 3, 7, 8});
  float* v = x.data<float>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t q = static_cast<int64_t>(rng() % 601) - 300;
    switch (rng() % 10) {
      case 0: v[i] = std::nextafter(static_cast<float>(q), 1e9f); break;
      case 1: v[i] = std::nextafter(static_cast<float>(q), -1e9f); break;
      case 2: v[i] = static_cast<float>(q) + 0.5f; break;
      case 3: v[i] = static_cast<float>(q) * 0.25f; break;
      case 4: v[i] = std::ldexp(static_cast<float>(q), 30); break;
      default: v[i] = static_cast<float>(q);
    }
  }
  v[5] = std::numeric_limits<float>::quiet_NaN();
  v[70] = std::numeric_limits<float>::infinity();
  v[200] = -std::numeric_limits<float>::infinity();
  return x;
}

Result<ir::Model> lowered(const io::ModelBuilder& b, pass::PassContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(ir::Model m, b.build());
  QONNX_RETURN_IF_ERROR(run_passes(m, "infer-shapes,lower-custom-ops", ctx).status());
  return m;
}

TEST(QuantAvgPool2dLowering, StandardOpsEqualTheKernelBitForBit) {
  const auto configs = pool_configs();
  const io::ModelBuilder b = pooling_model(configs);
  auto original = b.build();
  ASSERT_TRUE(original.is_ok()) << original.status().to_string();
  pass::PassContext ctx;
  auto low = lowered(b, ctx);
  ASSERT_TRUE(low.is_ok()) << low.status().to_string();
  for (const auto& n : low->graph().nodes()) EXPECT_EQ(dialect::classify(*n), dialect::Op::kNone) << n->describe();
  EXPECT_TRUE(ctx.diagnostics().empty());
  auto a = exec::Executor::create(original.value()).value();
  auto c = exec::Executor::create(low.value()).value();
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    const std::map<std::string, Tensor> feeds = {{"x", hostile_input(seed)}};
    auto want = a.run(feeds);
    auto got = c.run(feeds);
    ASSERT_TRUE(want.is_ok() && got.is_ok());
    EXPECT_TRUE(want->outputs[0].identical(got->outputs[0])) << "seed " << seed;
  }
}

TEST(QuantAvgPool2dLowering, LeavesDynamicSpatialDimsWithAWarning) {
  io::ModelBuilder b(13);
  b.import(kGeneral, 1);
  b.input("x", DType::kFloat, {1, 2, -1, 4}).output("y", DType::kFloat);
  b.node("QuantAvgPool2d", {"x"}, {"y"}, kGeneral).name("pool").attr("kernel", int64_t{2});
  auto m = b.build();
  ASSERT_TRUE(m.is_ok());
  pass::PassContext ctx;
  ASSERT_TRUE(run_passes(m.value(), "lower-custom-ops", ctx).is_ok());
  ASSERT_EQ(ctx.diagnostics().size(), 1u);
  EXPECT_NE(ctx.diagnostics()[0].message.find("spatial dims are not static"), std::string::npos) << ctx.diagnostics()[0].message;
  EXPECT_EQ(m->graph().nodes().front()->op_type(), "QuantAvgPool2d");
}

// onnxruntime runs the lowered form of every config and agrees with the kernel exactly.
TEST(QuantAvgPool2dLowering, OnnxruntimeEqualsTheKernel) {
  if (!onnxruntime_available()) GTEST_SKIP() << "onnxruntime-node is not installed (bash scripts/install-ort.sh)";
  const fs::path dir = fs::temp_directory_path() / ("qonnx_qavgpool_ort_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const io::ModelBuilder b = pooling_model(pool_configs());
  auto original = b.build();
  pass::PassContext ctx;
  auto low = lowered(b, ctx);
  ASSERT_TRUE(original.is_ok() && low.is_ok());
  for (uint32_t seed : {11u, 12u}) {
    const Tensor x = hostile_input(seed);
    auto want = exec::Executor::create(original.value()).value().run({{"x", x}});
    ASSERT_TRUE(want.is_ok()) << want.status().to_string();
    EXPECT_EQ(onnxruntime_disagrees(low.value(), "x", x, want->outputs[0], 0, 0, dir / std::to_string(seed)), "");
  }
  if (!HasFailure()) fs::remove_all(dir);
}

// ---------------------------------------------------------------- avgpool-trunc-to-quantavgpool

const char* kPass = "avgpool-trunc-to-quantavgpool";

struct PatternCase {
  std::string datatype = "UINT4";  // finn_datatype of the codes q
  float input_scale = 1.0f;        // 1: AveragePool reads q; else Mul(q, input_scale)
  int64_t kernel = 2, stride = 2;
  float trunc_scale = 1.0f;
  int trunc_version = 1;
  std::string trunc_domain = kGeneral;
  int64_t in_bits = 6, out_bits = 4;  // v2: out_scale = trunc_scale * 2^(in_bits - out_bits)
  std::string rounding = "FLOOR";
  bool narrow = false;  // v2
  bool annotate = true;
};

int64_t spatial_size(const PatternCase& c) { return c.kernel + 2 * c.stride + 1; }

// q (1, 2, S, S) [-> Mul(input_scale)] -> AveragePool -> Mul(k*k) -> Trunc -> y.
io::ModelBuilder pattern_model(const PatternCase& c) {
  io::ModelBuilder b(13);
  if (!c.trunc_domain.empty()) b.import(c.trunc_domain, c.trunc_version);
  const int64_t size = spatial_size(c);
  b.input("q", DType::kFloat, {1, 2, size, size}).output("y", DType::kFloat);
  if (c.annotate) b.annotate("q", c.datatype);
  std::string x = "q";
  if (c.input_scale != 1.0f) {
    b.initializer("in_scale", f32s(c.input_scale));
    b.node("Mul", {"q", "in_scale"}, {"x"});
    x = "x";
  }
  b.node("AveragePool", {x}, {"avg"}).name("pool").attr("kernel_shape", std::vector<int64_t>{c.kernel, c.kernel})
      .attr("strides", std::vector<int64_t>{c.stride, c.stride});
  b.initializer("kk", f32s(static_cast<float>(c.kernel * c.kernel)));
  b.node("Mul", {"avg", "kk"}, {"prod"});
  b.initializer("t_scale", f32s(c.trunc_scale)).initializer("t_zero", f32s(0)).initializer("in_bits", f32s(static_cast<float>(c.in_bits)));
  b.initializer("out_bits", f32s(static_cast<float>(c.out_bits)));
  if (c.trunc_version == 1) {
    b.node("Trunc", {"prod", "t_scale", "t_zero", "in_bits", "out_bits"}, {"y"}, c.trunc_domain).name("trunc").attr("rounding_mode", c.rounding);
  } else {
    b.initializer("t_out_scale", f32s(std::ldexp(c.trunc_scale, static_cast<int>(c.in_bits - c.out_bits))));
    b.node("Trunc", {"prod", "t_scale", "t_zero", "in_bits", "t_out_scale", "out_bits"}, {"y"}, kGeneral)
        .name("trunc")
        .attr("rounding_mode", c.rounding)
        .attr("narrow", int64_t{c.narrow ? 1 : 0})
        .attr("signed", int64_t{c.datatype.rfind("UINT", 0) == 0 || c.datatype == "BINARY" ? 0 : 1});
  }
  return b;
}

// Codes the annotation allows: random ones, then all-smallest and all-largest (the extreme sums).
std::vector<Tensor> code_inputs(const PatternCase& c, std::mt19937& rng) {
  const ir::IntegerRange r = *ir::integer_datatype_range(c.datatype);
  const int64_t size = spatial_size(c);
  std::vector<Tensor> inputs(4, Tensor(DType::kFloat, {1, 2, size, size}));
  std::uniform_int_distribution<int64_t> code(static_cast<int64_t>(r.min), static_cast<int64_t>(r.max));
  for (int64_t i = 0; i < inputs[0].numel(); ++i) {
    int64_t v = code(rng);
    if (r.excludes_zero && v == 0) v = 1;
    inputs[0].data<float>()[i] = static_cast<float>(v);
    inputs[1].data<float>()[i] = static_cast<float>(r.min);
    inputs[2].data<float>()[i] = static_cast<float>(r.max);
    inputs[3].data<float>()[i] = static_cast<float>(i % 2 == 0 ? r.max : r.min);
  }
  return inputs;
}

struct Converted {
  ir::Model model;
  pass::PassContext ctx;
  const ir::Node* pool = nullptr;  // the QuantAvgPool2d, if any
};

std::unique_ptr<Converted> convert(const PatternCase& c) {
  auto out = std::make_unique<Converted>();
  auto m = pattern_model(c).build();
  EXPECT_TRUE(m.is_ok()) << m.status().to_string();
  if (!m.is_ok()) return out;
  out->model = std::move(m.value());
  auto ran = run_passes(out->model, kPass, out->ctx);
  EXPECT_TRUE(ran.is_ok()) << ran.status().to_string();
  for (const auto& n : out->model.graph().nodes())
    if (dialect::classify(*n) == dialect::Op::kQuantAvgPool2d) out->pool = n.get();
  return out;
}

int64_t counter(const pass::PassContext& ctx, const std::string& name) {
  auto it = ctx.counters().find(kPass);
  if (it == ctx.counters().end()) return 0;
  auto c = it->second.find(name);
  return c == it->second.end() ? 0 : c->second;
}

// Brevitas' TruncAvgPool2d: in_bits = ceil(log2((2^bits - 1) * k^2)).
int64_t brevitas_in_bits(int64_t bits, int64_t kernel) {
  const double max_sum = (std::ldexp(1.0, static_cast<int>(bits)) - 1) * static_cast<double>(kernel * kernel);
  return static_cast<int64_t>(std::ceil(std::log2(max_sum)));
}

// Every generated pattern either converts and then equals the original on random and extreme codes,
// or is left with one warning; most convert.
TEST(AvgPoolTruncToQuantAvgPool, GeneratedPatternsConvertOnlyWhereExact) {
  struct Type {
    const char* name;
    int64_t bits;
  };
  std::mt19937 rng(2024);
  int converted = 0, left = 0;
  for (Type t : {Type{"BINARY", 1}, Type{"BIPOLAR", 1}, Type{"TERNARY", 2}, Type{"UINT2", 2}, Type{"INT2", 2},
                 Type{"UINT4", 4}, Type{"INT4", 4}, Type{"UINT8", 8}, Type{"INT8", 8}})
    for (int64_t kernel : {1, 2, 3, 5, 7})
      for (int64_t stride : {1, 2})
        for (float input_scale : {1.0f, 0.25f, 0.1f, 3.0f / 128.0f})
          for (int m : {1, 2})
            for (int version : {1, 2}) {
              PatternCase c;
              c.datatype = t.name, c.kernel = kernel, c.stride = stride, c.input_scale = input_scale;
              c.trunc_scale = input_scale / static_cast<float>(m), c.trunc_version = version;
              c.out_bits = std::max<int64_t>(2, t.bits);
              c.in_bits = std::max<int64_t>(1, brevitas_in_bits(t.bits, kernel)) + (m == 2 ? 1 : 0);
              SCOPED_TRACE(testing::Message() << t.name << " k " << kernel << " s " << stride << " scale " << input_scale
                                              << " m " << m << " v" << version << " in " << c.in_bits << " out " << c.out_bits);
              auto original = pattern_model(c).build();
              ASSERT_TRUE(original.is_ok()) << original.status().to_string();
              auto conv = convert(c);
              if (!conv->pool) {
                ++left;
                ASSERT_EQ(conv->ctx.diagnostics().size(), 1u);
                EXPECT_EQ(counter(conv->ctx, "left"), 1);
                continue;
              }
              ++converted;
              EXPECT_TRUE(conv->ctx.diagnostics().empty()) << conv->ctx.diagnostics()[0].message;
              EXPECT_EQ(counter(conv->ctx, "converted"), 1);
              for (const Tensor& q : code_inputs(c, rng)) ASSERT_EQ(outputs_differ(original.value(), conv->model, {{"q", q}}), "");
            }
  EXPECT_EQ(converted + left, 9 * 5 * 2 * 4 * 2 * 2);
  EXPECT_GT(converted, 1100);
  std::printf("avgpool-trunc-to-quantavgpool: %d converted, %d left\n", converted, left);
}

TEST(AvgPoolTruncToQuantAvgPool, EmitsFinnsFormWithTheOutputDatatype) {
  PatternCase c;
  c.datatype = "INT4", c.kernel = 3, c.stride = 2, c.input_scale = 0.1f, c.trunc_scale = 0.1f, c.in_bits = 8, c.out_bits = 4;
  auto conv = convert(c);
  ASSERT_NE(conv->pool, nullptr);
  std::vector<std::string> ops;
  for (const auto& n : conv->model.graph().nodes()) ops.push_back(n->op_type());
  EXPECT_EQ(ops, (std::vector<std::string>{"Mul", "Div", "QuantAvgPool2d", "Mul"}));
  const ir::Node& p = *conv->pool;
  EXPECT_EQ(p.domain(), kGeneral);
  EXPECT_EQ(p.attr<int64_t>("kernel").value(), 3);
  EXPECT_EQ(p.attr<int64_t>("stride").value(), 2);
  EXPECT_EQ(p.attr<int64_t>("ibits").value(), 4);  // FINN's 8 - ceil(log2 9)
  EXPECT_EQ(p.attr<int64_t>("obits").value(), 4);
  EXPECT_EQ(p.attr<int64_t>("signed").value(), 1);
  EXPECT_EQ(p.attr_string("data_layout", ""), "NCHW");
  EXPECT_EQ(conv->model.graph().finn_datatype(p.output(0)->name()), "INT4");
  // Scale 1 needs neither the Div nor the Mul; the pooled output is the Trunc's.
  c.input_scale = 1.0f, c.trunc_scale = 1.0f;
  conv = convert(c);
  ASSERT_NE(conv->pool, nullptr);
  EXPECT_EQ(conv->model.graph().nodes().size(), 1u);
  EXPECT_EQ(conv->pool->output(0)->name(), "y");
  EXPECT_EQ(conv->model.graph().finn_datatype("y"), "INT4");
}

// The widest sums the bound admits (up to 1.6e6, error bounds 0.29 to 0.46): random codes near the
// top and bottom of the range and the extremes stay exact.
TEST(AvgPoolTruncToQuantAvgPool, LargestProvableSumsStayExact) {
  struct Wide {
    const char* datatype;
    int64_t kernel;
    float scale;
    int64_t in_bits, out_bits;
  };
  std::mt19937 rng(16);
  for (Wide w : {Wide{"UINT16", 3, 0.1f, 20, 16}, Wide{"INT16", 3, 0.1f, 20, 16}, Wide{"INT16", 7, 0.25f, 22, 16},
                 Wide{"UINT16", 5, 1.0f, 21, 17}}) {
    PatternCase c;
    c.datatype = w.datatype, c.kernel = w.kernel, c.stride = 1, c.input_scale = w.scale, c.trunc_scale = w.scale;
    c.in_bits = w.in_bits, c.out_bits = w.out_bits;
    SCOPED_TRACE(testing::Message() << w.datatype << " k " << w.kernel << " scale " << w.scale);
    auto original = pattern_model(c).build();
    ASSERT_TRUE(original.is_ok());
    auto conv = convert(c);
    ASSERT_NE(conv->pool, nullptr) << conv->ctx.diagnostics()[0].message;
    const ir::IntegerRange r = *ir::integer_datatype_range(w.datatype);
    std::uniform_int_distribution<int64_t> near_top(static_cast<int64_t>(r.max) - 200, static_cast<int64_t>(r.max));
    std::uniform_int_distribution<int64_t> near_bottom(static_cast<int64_t>(r.min), static_cast<int64_t>(r.min) + 200);
    for (int round = 0; round < 20; ++round) {
      Tensor q(DType::kFloat, {1, 2, spatial_size(c), spatial_size(c)});
      for (int64_t i = 0; i < q.numel(); ++i) q.data<float>()[i] = static_cast<float>(round % 2 ? near_top(rng) : near_bottom(rng));
      ASSERT_EQ(outputs_differ(original.value(), conv->model, {{"q", q}}), "");
    }
    for (const Tensor& q : code_inputs(c, rng)) ASSERT_EQ(outputs_differ(original.value(), conv->model, {{"q", q}}), "");
  }
}

// Beyond the bound the float32 AveragePool really loses the sum: codes 2^24 - 1 (three) and 2^24 - 3
// sum to 67108858, the original computes 67108856, QuantAvgPool2d the exact value. The pass leaves it.
TEST(AvgPoolTruncToQuantAvgPool, BeyondTheBoundTheOriginalIsNotTheIntegerSum) {
  PatternCase c;
  c.datatype = "UINT24", c.kernel = 2, c.stride = 2, c.in_bits = 26, c.out_bits = 26;
  auto conv = convert(c);
  EXPECT_EQ(conv->pool, nullptr);
  ASSERT_EQ(conv->ctx.diagnostics().size(), 1u);
  EXPECT_NE(conv->ctx.diagnostics()[0].message.find("not provably exact"), std::string::npos);
  Tensor q(DType::kFloat, {1, 2, spatial_size(c), spatial_size(c)});
  for (int64_t i = 0; i < q.numel(); ++i) q.data<float>()[i] = 16777215.0f;
  q.data<float>()[spatial_size(c) + 1] = 16777213.0f;  // the first window: 2^24 - 1 three times, 2^24 - 3
  auto original = exec::Executor::create(pattern_model(c).build().value()).value().run({{"q", q}});
  ASSERT_TRUE(original.is_ok()) << original.status().to_string();
  EXPECT_EQ(original->outputs[0].data<float>()[0], 67108856.0f);
  NodeCase pool;
  pool.op = "QuantAvgPool2d";
  pool.domain = kGeneral;
  pool.inputs = {q};
  pool.attrs = [](io::NodeBuilder& n) { n.attr("kernel", int64_t{2}).attr("stride", int64_t{2}).attr("ibits", int64_t{24}).attr("obits", int64_t{26}); };
  auto exact = run1(pool);
  ASSERT_TRUE(exact.is_ok()) << exact.status().to_string();
  EXPECT_EQ(exact->data<float>()[0], 67108858.0f);
}

// 2021 exports: Trunc in the default domain; the QuantAvgPool2d goes to the general domain, imported.
TEST(AvgPoolTruncToQuantAvgPool, DefaultDomainTruncConvertsAndImportsTheGeneralDomain) {
  PatternCase c;
  c.trunc_domain = "";
  auto original = pattern_model(c).build();
  ASSERT_TRUE(original.is_ok()) << original.status().to_string();
  EXPECT_FALSE(original->opset(kGeneral).has_value());
  auto conv = convert(c);
  ASSERT_NE(conv->pool, nullptr);
  EXPECT_EQ(conv->model.opset(kGeneral), std::optional<int64_t>(1));
  std::mt19937 rng(3);
  for (const Tensor& q : code_inputs(c, rng)) EXPECT_EQ(outputs_differ(original.value(), conv->model, {{"q", q}}), "");
}

// FINN's ibits = floor(log2(2^in_bits / k^2)) = 1 here, and QuantAvgPool2d would then shift by
// bit_length(1 * 9) - 2 = 2 where the Trunc shifts by 5 - 2 = 3; the pass picks ibits 2.
TEST(AvgPoolTruncToQuantAvgPool, FinnsIbitsWouldShiftByOneBitLess) {
  PatternCase c;
  c.datatype = "UINT2", c.kernel = 3, c.stride = 3, c.in_bits = 5, c.out_bits = 2;
  auto original = pattern_model(c).build().value();
  auto conv = convert(c);
  ASSERT_NE(conv->pool, nullptr);
  EXPECT_EQ(conv->pool->attr<int64_t>("ibits").value(), 2);
  Tensor all_three(DType::kFloat, {1, 2, spatial_size(c), spatial_size(c)});
  for (int64_t i = 0; i < all_three.numel(); ++i) all_three.data<float>()[i] = 3.0f;
  EXPECT_EQ(outputs_differ(original, conv->model, {{"q", all_three}}), "");
  // FINN's attributes: the sum 27 becomes 6 instead of the Trunc's 3.
  ir::Node* pool = const_cast<ir::Node*>(conv->pool);
  pool->set_attr("ibits", int64_t{1});
  EXPECT_NE(outputs_differ(original, conv->model, {{"q", all_three}}), "");
}

TEST(AvgPoolTruncToQuantAvgPool, LeavesWhatItCannotProveAndSaysWhy) {
  struct Bad {
    std::function<void(PatternCase&)> edit;
    const char* why;
  };
  const std::vector<Bad> bad = {
      {[](PatternCase& c) { c.annotate = false; }, "run infer-datatypes"},
      {[](PatternCase& c) { c.rounding = "ROUND"; }, "rounding_mode is ROUND"},
      {[](PatternCase& c) { c.in_bits = 3; }, "in_bitwidth < out_bitwidth"},
      {[](PatternCase& c) { c.input_scale = 0.1f, c.trunc_scale = 0.2f; }, "not an integer multiple"},
      {[](PatternCase& c) { c.datatype = "UINT8", c.in_bits = 9, c.out_bits = 8; }, "exceed UINT8"},
      {[](PatternCase& c) { c.datatype = "INT16", c.kernel = 7, c.input_scale = 0.1f, c.trunc_scale = 0.1f, c.in_bits = 22, c.out_bits = 16; },
       "not provably exact"},
      {[](PatternCase& c) { c.out_bits = 40, c.in_bits = 42; }, "over the supported maximum of 32"},
      {[](PatternCase& c) { c.datatype = "UINT2", c.kernel = 3, c.in_bits = 7, c.out_bits = 4; }, "no ibits gives"},
      {[](PatternCase& c) { c.trunc_version = 2, c.datatype = "INT4", c.in_bits = 6, c.out_bits = 2, c.narrow = true; }, "clamp to [-1, 1]"},
  };
  for (const Bad& b : bad) {
    PatternCase c;
    b.edit(c);
    SCOPED_TRACE(b.why);
    auto conv = convert(c);
    EXPECT_EQ(conv->pool, nullptr);
    ASSERT_EQ(conv->ctx.diagnostics().size(), 1u);
    EXPECT_NE(conv->ctx.diagnostics()[0].message.find(b.why), std::string::npos) << conv->ctx.diagnostics()[0].message;
    EXPECT_EQ(counter(conv->ctx, "left"), 1);
    EXPECT_EQ(conv->model.graph().nodes().back()->op_type(), "Trunc");
  }
}

TEST(AvgPoolTruncToQuantAvgPool, OtherChainsAreNotThePattern) {
  // The AveragePool's output also read elsewhere (a graph output): not touched, no warning.
  PatternCase c;
  io::ModelBuilder b = pattern_model(c);
  b.output("avg", DType::kFloat);
  auto m = b.build();
  ASSERT_TRUE(m.is_ok());
  pass::PassContext ctx;
  ASSERT_TRUE(run_passes(m.value(), kPass, ctx).is_ok());
  EXPECT_TRUE(ctx.diagnostics().empty());
  EXPECT_EQ(m->graph().nodes().size(), 3u);
}

// A generated model with the pattern behind a MultiThreshold, through `convert --passes
// avgpool-trunc-to-quantavgpool,lower-custom-ops`, runs in onnxruntime and equals the original exactly.
class AvgPoolTruncOnnxruntime : public TempDirTest {};

TEST_F(AvgPoolTruncOnnxruntime, ConvertedAndLoweredModelEqualsTheOriginal) {
  if (!onnxruntime_available()) GTEST_SKIP() << "onnxruntime-node is not installed (bash scripts/install-ort.sh)";
  io::ModelBuilder b(13);
  b.import(kGeneral, 1);
  b.input("v", DType::kFloat, {1, 3, 9, 9}).output("y", DType::kFloat);
  std::vector<float> thresholds;
  for (int t = 0; t < 15; ++t) thresholds.push_back(0.5f + static_cast<float>(t));
  b.initializer("thresholds", f32({1, 15}, thresholds));
  b.node("MultiThreshold", {"v", "thresholds"}, {"codes"}, kGeneral).attr("out_dtype", "UINT4");
  b.annotate("codes", "UINT4");
  b.initializer("act_scale", f32s(0.1f));
  b.node("Mul", {"codes", "act_scale"}, {"x"});
  b.node("AveragePool", {"x"}, {"avg"}).attr("kernel_shape", std::vector<int64_t>{3, 3}).attr("strides", std::vector<int64_t>{2, 2});
  b.initializer("kk", f32s(9));
  b.node("Mul", {"avg", "kk"}, {"prod"});
  b.initializer("t_scale", f32s(0.1f)).initializer("t_zero", f32s(0)).initializer("in_bits", f32s(8)).initializer("out_bits", f32s(4));
  b.node("Trunc", {"prod", "t_scale", "t_zero", "in_bits", "out_bits"}, {"y"}, kGeneral);
  auto original = b.build();
  ASSERT_TRUE(original.is_ok()) << original.status().to_string();
  ASSERT_TRUE(run_passes(original.value(), "infer-shapes").is_ok());  // value_info, as exported models carry it
  ASSERT_TRUE(io::save_model(original.value(), path("in.onnx")).is_ok());
  const CliResult r = run_cli("convert " + path("in.onnx") + " -o " + path("out.onnx") +
                              " --passes avgpool-trunc-to-quantavgpool,lower-custom-ops --stats");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("converted"), std::string::npos) << r.err;
  auto converted = io::load_model(path("out.onnx"));
  ASSERT_TRUE(converted.is_ok()) << converted.status().to_string();
  for (const auto& n : converted->graph().nodes()) EXPECT_EQ(dialect::classify(*n), dialect::Op::kNone) << n->describe();
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> value(-1.0f, 16.0f);
  Tensor v(DType::kFloat, {1, 3, 9, 9});
  for (int64_t i = 0; i < v.numel(); ++i) v.data<float>()[i] = value(rng);
  for (int64_t i = 0; i < 9; ++i) v.data<float>()[i * 9] = 20.0f;  // a column of all-largest windows
  auto want = exec::Executor::create(original.value()).value().run({{"v", v}});
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  EXPECT_EQ(onnxruntime_disagrees(converted.value(), "v", v, want->outputs[0], 0, 0, dir_ / "ort"), "");
}

}  // namespace
}  // namespace qonnx::test
