// Plan once, run many: constant subgraphs run at plan time, in-place reuse of dying buffers, typed
// kernels with version ranges, and the dataset mode of `exec` (library and CLI).
#include <cmath>
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "qonnx/exec/buffer_pool.h"
#include "qonnx/exec/dataset.h"
#include "qonnx/exec/executor.h"
#include "qonnx/io/model_builder.h"
#include "qonnx/io/model_io.h"
#include "qonnx/io/tensor_file.h"
#include "support/cli.h"
#include "support/temp_dir.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {

constexpr const char* kQonnx = "qonnx.custom_op.general";

// y = Relu(x * Quant(W) + B): the weight quantizer reads only initializers (folded at plan time), Mul's
// output dies at Add and Add's at Relu (candidates for in place).
io::ModelBuilder quantized_affine() {
  io::ModelBuilder m(13);
  m.import(kQonnx, 1);
  m.input("x", DType::kFloat, {2, 3}).output("y", DType::kFloat, {2, 3});
  m.initializer("W", f32({2, 3}, {0.3f, -1.1f, 2.6f, 0.2f, 1.4f, -0.7f}))
      .initializer("s", f32s(0.5f)).initializer("z", f32s(0.0f)).initializer("bits", f32s(3.0f))
      .initializer("B", f32({3}, {0.25f, -0.5f, 1.0f}));
  m.node("Quant", {"W", "s", "z", "bits"}, {"Wq"}, kQonnx).attr("signed", 1).attr("narrow", 0).attr("rounding_mode", "ROUND");
  m.node("Mul", {"x", "Wq"}, {"xw"});
  m.node("Add", {"xw", "B"}, {"sum"});
  m.node("Relu", {"sum"}, {"y"});
  return m;
}

// The same numbers computed node by node with evaluate_node (the constant-folding path).
std::vector<float> reference_affine(const ir::Model& model, const Tensor& x) {
  const ir::Graph& g = model.graph();
  std::map<std::string, Tensor> values;
  for (const auto& init : g.initializers()) values[init.value->name()] = g.initializer_tensor(init.value).value();
  values["x"] = x;
  for (const auto& node : g.nodes()) {
    std::vector<const Tensor*> ins;
    for (const ir::Value* v : node->inputs()) ins.push_back(&values.at(v->name()));
    auto outs = exec::evaluate_node(model, *node, ins);
    EXPECT_TRUE(outs.is_ok()) << outs.status().to_string();
    values[node->outputs()[0]->name()] = outs.value()[0];
  }
  return values_f32(values.at("y"));
}

TEST(ExecutorPlan, ConstantSubgraphsAndInPlaceStepsGiveTheNodeByNodeBits) {
  auto model = quantized_affine().build();
  ASSERT_TRUE(model.is_ok()) << model.status().to_string();
  auto ex = exec::Executor::create(model.value());
  ASSERT_TRUE(ex.is_ok()) << ex.status().to_string();
  Tensor x = f32({2, 3}, {1.0f, 2.0f, -3.0f, 0.5f, -0.25f, 4.0f});
  const Tensor x_before = x.clone();
  const std::vector<float> expected = reference_affine(model.value(), x);
  for (int run = 0; run < 3; ++run) {
    auto r = ex->run({{"x", x}});
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_EQ(values_f32(r->outputs[0]), expected) << "run " << run;
  }
  // The caller's input is never written in place, though Mul reads it for the last time.
  EXPECT_TRUE(x.identical(x_before));
}

TEST(ExecutorPlan, ExposedAndTwiceReadValuesKeepTheirContents) {
  // a = x + 1 is read by Relu and by the final Add, and exposed: nobody may overwrite it.
  io::ModelBuilder m(13);
  m.input("x", DType::kFloat, {4}).output("y", DType::kFloat, {4});
  m.initializer("one", f32({4}, {1, 1, 1, 1}));
  m.node("Add", {"x", "one"}, {"a"});
  m.node("Neg", {"a"}, {"n"});
  m.node("Relu", {"n"}, {"r"});
  m.node("Add", {"a", "r"}, {"y"});
  auto model = m.build();
  ASSERT_TRUE(model.is_ok());
  auto ex = exec::Executor::create(model.value());
  ASSERT_TRUE(ex.is_ok());
  ASSERT_TRUE(ex->expose({"a", "n"}).is_ok());
  auto r = ex->run({{"x", f32({4}, {-3, -1, 0, 2})}});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values_f32(r->exposed.at("a")), (std::vector<float>{-2, 0, 1, 3}));
  EXPECT_EQ(values_f32(r->exposed.at("n")), (std::vector<float>{2, -0.0f, -1, -3}));
  EXPECT_EQ(values_f32(r->outputs[0]), (std::vector<float>{0, 0, 1, 3}));
}

TEST(ExecutorPlan, ExposedPlanTimeValuesAreReturned) {
  auto model = quantized_affine().build();
  ASSERT_TRUE(model.is_ok());
  auto ex = exec::Executor::create(model.value());
  ASSERT_TRUE(ex.is_ok());
  ASSERT_TRUE(ex->expose({"Wq", "W"}).is_ok());
  auto r = ex->run({{"x", f32({2, 3}, {1, 1, 1, 1, 1, 1})}});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  // 3-bit signed ROUND at scale 0.5: [-4, 3] steps, round half to even.
  EXPECT_EQ(values_f32(r->exposed.at("Wq")), (std::vector<float>{0.5f, -1.0f, 1.5f, 0.0f, 1.5f, -0.5f}));
  EXPECT_EQ(values_f32(r->exposed.at("W"))[2], 2.6f);
}

TEST(ExecutorPlan, AnInitializerListedAsInputIsAConstant) {
  io::ModelBuilder m(13);
  m.input("x", DType::kFloat, {2}).input("bias", DType::kFloat, {2}).output("y", DType::kFloat, {2});
  m.initializer("bias", f32({2}, {10, 20}));
  m.initializer("two", f32({2}, {2, 2}));
  m.node("Mul", {"bias", "two"}, {"b2"});  // folded at plan time, as every pass takes it
  m.node("Add", {"x", "b2"}, {"y"});
  auto model = m.build();
  ASSERT_TRUE(model.is_ok()) << model.status().to_string();
  auto ex = exec::Executor::create(model.value());
  ASSERT_TRUE(ex.is_ok());
  auto by_default = ex->run({{"x", f32({2}, {1, 1})}});
  ASSERT_TRUE(by_default.is_ok()) << by_default.status().to_string();
  EXPECT_EQ(values_f32(by_default->outputs[0]), (std::vector<float>{21, 41}));
  auto overridden = ex->run({{"x", f32({2}, {1, 1})}, {"bias", f32({2}, {1, 2})}});
  ASSERT_FALSE(overridden.is_ok());
  EXPECT_EQ(overridden.status().code(), Code::kUsage);
  EXPECT_NE(overridden.status().to_string().find("'bias' is an initializer"), std::string::npos);
}

TEST(ExecutorPlan, AConstantNodeThatFailsAtPlanTimeFailsEachRunAsBefore) {
  // Quant with bit width 0 on initializers: an error in the data, reported when the model runs.
  io::ModelBuilder m(13);
  m.import(kQonnx, 1);
  m.input("x", DType::kFloat, {2}).output("y", DType::kFloat, {2});
  m.initializer("W", f32({2}, {1, 2})).initializer("s", f32s(1.0f)).initializer("z", f32s(0.0f)).initializer("bits", f32s(0.0f));
  m.node("Quant", {"W", "s", "z", "bits"}, {"Wq"}, kQonnx).attr("signed", 1).attr("narrow", 0).attr("rounding_mode", "ROUND");
  m.node("Add", {"x", "Wq"}, {"y"});
  auto model = m.build();
  ASSERT_TRUE(model.is_ok());
  auto ex = exec::Executor::create(model.value());
  ASSERT_TRUE(ex.is_ok()) << ex.status().to_string();
  auto r = ex->run({{"x", f32({2}, {0, 0})}});
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().to_string().find("Quant"), std::string::npos) << r.status().to_string();
}

// --- released buffers reused across steps and runs

// --- prepack: plan-time work on constant inputs

// Probe(x, w) -> y = x + p, where p is what its prepack made from a constant w (w[0] + 100), or -1 when
// the run has no prepack. Counts its prepack calls.
int probe_prepacks = 0;
struct ProbePacked {
  float value;
};
exec::PreparedState probe_prepack(const exec::PrepackContext& context) {
  ++probe_prepacks;
  if (!context.constant(1) || context.constant(0)) return nullptr;  // x is never constant here
  return std::make_shared<const ProbePacked>(ProbePacked{context.constant(1)->data<float>()[0] + 100.0f});
}
Status probe(exec::KernelContext& ctx) {
  const auto* packed = static_cast<const ProbePacked*>(ctx.prepacked());
  Tensor y = *ctx.input(0);
  Tensor out(DType::kFloat, y.dims());
  for (int64_t i = 0; i < y.numel(); ++i) out.data<float>()[i] = y.data<float>()[i] + (packed ? packed->value : -1.0f);
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

ir::Model probe_model(bool constant_w) {
  io::ModelBuilder m(13);
  m.import("test.prepack", 1);
  m.input("x", DType::kFloat, {2}).output("y", DType::kFloat, {2});
  if (constant_w) m.initializer("w", f32({1}, {2.5f}));
  else m.input("w", DType::kFloat, {1});
  m.node("Probe", {"x", "w"}, {"y"}, "test.prepack");
  return m.build().value();
}

// A registry holding only the probe kernel, with its prepack hook.
exec::KernelRegistry probe_registry() {
  exec::KernelRegistry registry;
  exec::Kernel k{probe, nullptr, {}};
  k.prepack = probe_prepack;
  registry.add("test.prepack", "Probe", {1, exec::kNoUpperVersion}, k);
  return registry;
}

TEST(ExecutorPrepack, RunsOncePerPlanForConstantInputsAndEveryRunSeesIt) {
  const exec::KernelRegistry registry = probe_registry();

  const ir::Model model = probe_model(true);
  probe_prepacks = 0;
  auto ex = exec::Executor::create(model, registry);
  ASSERT_TRUE(ex.is_ok()) << ex.status().to_string();
  EXPECT_EQ(probe_prepacks, 1);
  for (int run = 0; run < 3; ++run) {
    auto r = ex->run({{"x", f32({2}, {1.0f, -4.0f})}});
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_EQ(values_f32(r->outputs[0]), (std::vector<float>{103.5f, 98.5f})) << "run " << run;
  }
  EXPECT_EQ(probe_prepacks, 1) << "prepack ran per run";
  ASSERT_TRUE(ex->expose({"x"}).is_ok());  // a new plan: prepacked again, once
  EXPECT_EQ(probe_prepacks, 2);
  ASSERT_TRUE(ex->run({{"x", f32({2}, {0.0f, 0.0f})}}).is_ok());
  EXPECT_EQ(probe_prepacks, 2);
}

TEST(ExecutorPrepack, NotCalledWithoutConstantInputsNorOutsideAPlan) {
  const exec::KernelRegistry registry = probe_registry();

  const ir::Model fed = probe_model(false);
  probe_prepacks = 0;
  auto ex = exec::Executor::create(fed, registry);
  ASSERT_TRUE(ex.is_ok()) << ex.status().to_string();
  auto r = ex->run({{"x", f32({2}, {1.0f, 2.0f})}, {"w", f32({1}, {2.5f})}});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values_f32(r->outputs[0]), (std::vector<float>{0.0f, 1.0f}));
  EXPECT_EQ(probe_prepacks, 0);

  // evaluate_node (constant folding) runs the kernel without a plan: no prepack.
  const ir::Model constant = probe_model(true);
  const ir::Node& node = *constant.graph().nodes().front();
  const Tensor x = f32({2}, {1.0f, 2.0f}), w = f32({1}, {2.5f});
  auto outs = exec::evaluate_node(constant, node, {&x, &w}, registry);
  ASSERT_TRUE(outs.is_ok()) << outs.status().to_string();
  EXPECT_EQ(values_f32(outs.value()[0]), (std::vector<float>{0.0f, 1.0f}));
  EXPECT_EQ(probe_prepacks, 0);
}

// Gemm's prepack: B^T of a constant float B with transB, nothing otherwise.
TEST(ExecutorPrepack, GemmPrepacksOnlyAConstantTransposedFloatWeight) {
  auto gemm_node = [](int trans_b, DType dt) {
    io::ModelBuilder m(13);
    m.input("x", dt, {2, 3}).output("y", dt, {2, 4});
    m.initializer("W", trans_b ? Tensor(dt, {4, 3}) : Tensor(dt, {3, 4}));
    m.node("Gemm", {"x", "W"}, {"y"}).attr("transB", trans_b);
    return m.build().value();
  };
  const exec::Kernel* k = exec::KernelRegistry::global().find("", "Gemm", 13);
  ASSERT_TRUE(k && k->prepack && k->prepare);
  struct Case {
    int trans_b;
    DType dt;
    bool constant;
    bool want;
  };
  for (const Case& c : {Case{1, DType::kFloat, true, true}, Case{0, DType::kFloat, true, false},
                        Case{1, DType::kFloat, false, false}, Case{1, DType::kDouble, true, false}}) {
    const ir::Model model = gemm_node(c.trans_b, c.dt);
    const ir::Node& node = *model.graph().nodes().front();
    auto state = k->prepare(node, 13);
    ASSERT_TRUE(state.is_ok());
    const Tensor w = c.trans_b ? Tensor(c.dt, {4, 3}) : Tensor(c.dt, {3, 4});
    exec::PrepackContext context;
    context.node = &node;
    context.prepared = state->get();
    context.constants = {nullptr, c.constant ? &w : nullptr};
    const exec::PreparedState packed = k->prepack(context);
    EXPECT_EQ(packed != nullptr, c.want) << "transB " << c.trans_b << " " << dtype_name(c.dt) << " constant " << c.constant;
  }
}

// Gemm transB with a constant B transposes it once at plan time (its prepack) and keeps it: the bits of
// every run equal those of the same Gemm whose B is fed (repacked per panel), run after run.
TEST(ExecutorPlan, GemmKeepsAConstantTransposedWeight) {
  const Tensor w = f32({37, 53}, [] {
    std::vector<float> v(37 * 53);
    for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.37f * static_cast<float>(i)) * 1.7f;
    return v;
  }());
  auto model = [&](bool constant) {
    io::ModelBuilder m(13);
    m.input("x", DType::kFloat, {3, 53}).output("y", DType::kFloat, {3, 37});
    if (constant) m.initializer("W", w);
    else m.input("W", DType::kFloat, {37, 53});
    m.initializer("C", f32({37}, std::vector<float>(37, 0.125f)));
    m.node("Gemm", {"x", "W", "C"}, {"y"}).attr("transB", 1).attr("alpha", 0.75f);
    return m.build().value();
  };
  const ir::Model with_constant = model(true), with_input = model(false);
  auto constant_exec = exec::Executor::create(with_constant).value();
  auto input_exec = exec::Executor::create(with_input).value();
  for (int run = 0; run < 3; ++run) {
    std::vector<float> xs(3 * 53);
    for (size_t i = 0; i < xs.size(); ++i) xs[i] = std::cos(0.11f * static_cast<float>(i + 31 * run));
    const Tensor x = f32({3, 53}, xs);
    auto a = constant_exec.run({{"x", x}});
    auto b = input_exec.run({{"x", x}, {"W", w}});
    ASSERT_TRUE(a.is_ok() && b.is_ok()) << (a.is_ok() ? b.status().to_string() : a.status().to_string());
    EXPECT_EQ(values_f32(a->outputs[0]), values_f32(b->outputs[0])) << "run " << run;
  }
}

TEST(BufferPool, KeepsUniqueLargeBuffersByDtypeAndCountAndForgetsUnusedOnes) {
  exec::BufferPool pool;
  const int64_t n = static_cast<int64_t>(exec::BufferPool::kMinBytes / sizeof(float));
  Tensor big(DType::kFloat, {n});
  const void* storage = big.raw();
  pool.give(big);  // another holder (`big`): not kept
  EXPECT_EQ(pool.held_bytes(), 0u);
  pool.give(std::move(big));
  EXPECT_EQ(pool.held_bytes(), static_cast<size_t>(n) * sizeof(float));
  pool.give(Tensor(DType::kFloat, {n / 2}));  // too small to keep
  EXPECT_FALSE(pool.take(DType::kInt32, {n}).defined());
  EXPECT_FALSE(pool.take(DType::kFloat, {n + 1}).defined());
  Tensor again = pool.take(DType::kFloat, {2, n / 2});  // same count, other dims
  ASSERT_TRUE(again.defined());
  EXPECT_EQ(again.raw(), storage);
  EXPECT_EQ(again.dims(), (Dims{2, n / 2}));
  EXPECT_FALSE(pool.take(DType::kFloat, {n}).defined());  // handed out once
  // Given in one run: kept through the end of that run, dropped after a run without a use.
  pool.give(std::move(again));
  pool.end_run();
  EXPECT_GT(pool.held_bytes(), 0u);
  pool.end_run();
  EXPECT_EQ(pool.held_bytes(), 0u);
}

// x (1, 64, 16, 16) -> Relu -> Neg -> Add(x) -> Mul: large intermediates released and reused.
io::ModelBuilder large_chain(int64_t batch) {
  io::ModelBuilder m(13);
  m.input("x", DType::kFloat, {batch, 64, 16, 16}).output("y", DType::kFloat, {batch, 64, 16, 16});
  m.initializer("half", f32s(0.5f));
  m.node("Relu", {"x"}, {"r"});
  m.node("Neg", {"r"}, {"n"});
  m.node("Add", {"n", "x"}, {"a"});
  m.node("Mul", {"a", "half"}, {"y"});
  return m;
}

Tensor ramp_input(Dims dims, float offset) {
  Tensor t(DType::kFloat, std::move(dims));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(i % 23) - 11.0f + offset;
  return t;
}

TEST(ExecutorPlan, RunsThatReuseReleasedBuffersGiveFreshExecutorBitsAndKeepEarlierResults) {
  auto model = large_chain(1).build();
  ASSERT_TRUE(model.is_ok()) << model.status().to_string();
  auto ex = exec::Executor::create(model.value());
  ASSERT_TRUE(ex.is_ok());
  ex->set_check_input_shapes(false);
  std::vector<Tensor> results, inputs;
  // Shapes change between runs (other element counts find no kept buffer, then find them again).
  for (int run = 0; run < 5; ++run) {
    inputs.push_back(ramp_input({run == 2 ? 2 : 1, 64, 16, 16}, 0.25f * static_cast<float>(run)));
    auto r = ex->run({{"x", inputs.back()}});
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    results.push_back(r->outputs[0]);
  }
  for (size_t run = 0; run < results.size(); ++run) {
    auto fresh = exec::Executor::create(model.value());
    ASSERT_TRUE(fresh.is_ok());
    fresh->set_check_input_shapes(false);
    auto want = fresh->run({{"x", inputs[run]}});
    ASSERT_TRUE(want.is_ok());
    EXPECT_TRUE(results[run].identical(want->outputs[0])) << "run " << run;  // not overwritten since
  }
}

// --- kernel registry: version ranges and typed prepared state

struct ScaleAttrs {
  float factor;
};

Result<ScaleAttrs> prepare_scale(const ir::Node& node, int64_t version) {
  if (!node.has_attr("factor")) return Status(Code::kInvalidModel, "attribute 'factor' is required");
  return ScaleAttrs{node.attr<float>("factor", 0).value() * (version >= 13 ? 1.0f : 10.0f)};
}

Status run_scale(exec::KernelContext& ctx, const ScaleAttrs& attrs) {
  const Tensor* x = ctx.input(0);
  Tensor out = ctx.output_buffer(x->dtype(), x->dims(), {0});
  for (int64_t i = 0; i < x->numel(); ++i) out.data<float>()[i] = x->data<float>()[i] * attrs.factor;
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

TEST(KernelRegistry, VersionRangesSelectTheEntryAndNameTheGaps) {
  exec::KernelRegistry r;
  auto kernel = exec::typed_kernel<ScaleAttrs, prepare_scale, run_scale>();
  r.add("my.domain", "Scale", {1, 10}, kernel);
  r.add("my.domain", "Scale", {13, exec::kNoUpperVersion}, kernel);
  ASSERT_NE(r.find("my.domain", "Scale", 1), nullptr);
  EXPECT_EQ(r.find("my.domain", "Scale", 10)->versions.until, 10);
  EXPECT_EQ(r.find("my.domain", "Scale", 11), nullptr);
  EXPECT_EQ(r.find("my.domain", "Scale", 13)->versions.since, 13);
  std::string message = r.unsupported("my.domain", "Scale", 11).to_string();
  EXPECT_NE(message.find("supported versions are 1 to 10, 13 and later"), std::string::npos) << message;
  // Adjacent ranges read as one in the message.
  exec::KernelRegistry adjacent;
  exec::KernelFn plain = [](exec::KernelContext&) { return Status::ok(); };
  adjacent.add("", "Relu", {6, 13}, plain);
  adjacent.add("", "Relu", {14, exec::kNoUpperVersion}, plain);
  EXPECT_EQ(adjacent.find("", "Relu", 5), nullptr);
  EXPECT_EQ(adjacent.find("", "Relu", 13)->versions.since, 6);
  EXPECT_EQ(adjacent.find("", "Relu", 20)->versions.since, 14);
  message = adjacent.unsupported("", "Relu", 5).to_string();
  EXPECT_NE(message.find("supported versions are 6 and later"), std::string::npos) << message;
}

Result<std::vector<float>> run_scale_model(int64_t version, bool with_factor) {
  exec::KernelRegistry r;
  auto kernel = exec::typed_kernel<ScaleAttrs, prepare_scale, run_scale>();
  r.add("my.domain", "Scale", {1, 10}, kernel);
  r.add("my.domain", "Scale", {13, exec::kNoUpperVersion}, kernel);
  io::ModelBuilder m(13);
  m.import("my.domain", version);
  m.input("x", DType::kFloat, {2}).output("y", DType::kFloat, {2});
  io::NodeBuilder node = m.node("Scale", {"x"}, {"y"}, "my.domain");
  if (with_factor) node.attr("factor", 0.5f);
  QONNX_ASSIGN_OR_RETURN(ir::Model model, m.build());
  QONNX_ASSIGN_OR_RETURN(exec::Executor ex, exec::Executor::create(model, r));
  QONNX_ASSIGN_OR_RETURN(exec::RunResult out, ex.run({{"x", f32({2}, {2, 4})}}));
  return values_f32(out.outputs[0]);
}

TEST(KernelRegistry, TypedKernelsParseAttributesOnceAtPlanTime) {
  auto v13 = run_scale_model(13, true);
  ASSERT_TRUE(v13.is_ok()) << v13.status().to_string();
  EXPECT_EQ(v13.value(), (std::vector<float>{1, 2}));
  auto v1 = run_scale_model(1, true);  // the per-version entry's own behaviour
  ASSERT_TRUE(v1.is_ok()) << v1.status().to_string();
  EXPECT_EQ(v1.value(), (std::vector<float>{10, 20}));
  auto gap = run_scale_model(11, true);
  ASSERT_FALSE(gap.is_ok());
  EXPECT_EQ(gap.status().code(), Code::kUnsupported);
  // A missing attribute fails at plan time (Executor::create), naming the node.
  auto missing = run_scale_model(13, false);
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ(missing.status().code(), Code::kInvalidModel);
  EXPECT_NE(missing.status().to_string().find("Scale"), std::string::npos) << missing.status().to_string();
  EXPECT_NE(missing.status().to_string().find("'factor'"), std::string::npos) << missing.status().to_string();
}

TEST(KernelRegistry, SoftmaxBefore13CoercesTo2DAndFrom13RunsOverOneAxis) {
  // [1, 2, 2] at axis 1: opset 12 normalizes over the 4 trailing values, opset 13 over axis 1 only.
  Tensor x = f32({1, 2, 2}, {0, 0, 0, 0});
  NodeCase c{"Softmax", "", 12, {}, {x}, [](io::NodeBuilder& n) { n.attr("axis", 1); }};
  auto v12 = run_node(c);
  ASSERT_TRUE(v12.is_ok()) << v12.status().to_string();
  EXPECT_EQ(values_f32(v12.value()[0]), (std::vector<float>{0.25f, 0.25f, 0.25f, 0.25f}));
  c.opset = 13;
  auto v13 = run_node(c);
  ASSERT_TRUE(v13.is_ok()) << v13.status().to_string();
  EXPECT_EQ(values_f32(v13.value()[0]), (std::vector<float>{0.5f, 0.5f, 0.5f, 0.5f}));
}

// --- dataset mode

// y = Softmax-free scores x * W (one 3-class row per sample); x declared [batch, 2] with `batch`
// fixed or symbolic (-1). With `reshape_to_one`, a Reshape to [1, -1] first (an export that bakes in
// batch 1: batching it would mix samples).
ir::Model scorer(int64_t batch, bool reshape_to_one) {
  io::ModelBuilder m(13);
  m.input("x", DType::kFloat, {batch, 2}).output("y", DType::kFloat, {batch, 3});
  m.initializer("W", f32({2, 3}, {1, 0, -1, 0, 1, 2}));
  std::string in = "x";
  if (reshape_to_one) {
    m.initializer("flat", i64({2}, {1, -1}));
    m.node("Reshape", {"x", "flat"}, {"xf"});
    in = "xf";
  }
  m.node("MatMul", {in, "W"}, {"y"});
  return m.build().value();
}

Tensor samples(int64_t n) {
  Tensor x(DType::kFloat, {n, 2});
  for (int64_t i = 0; i < 2 * n; ++i) x.data<float>()[i] = static_cast<float>((i * 7) % 5) - 2.0f;
  return x;
}

TEST(Dataset, RowsSliceAndConcatenate) {
  Tensor x = samples(5);
  auto back = exec::concat_rows({exec::slice_rows(x, 0, 2), exec::slice_rows(x, 2, 5)});
  ASSERT_TRUE(back.is_ok());
  EXPECT_TRUE(back->identical(x));
  EXPECT_FALSE(exec::concat_rows({x, f32({1, 3}, {0, 0, 0})}).is_ok());
}

TEST(Dataset, BatchesMatchSampleBySampleRunsWithAPartialLastBatch) {
  for (int64_t declared : {int64_t{-1}, int64_t{1}}) {
    ir::Model model = scorer(declared, false);
    auto ex = exec::Executor::create(model);
    ASSERT_TRUE(ex.is_ok());
    ex->set_check_input_shapes(false);
    Tensor x = samples(7);
    exec::DatasetOptions o;
    o.batch_size = 3;
    std::vector<int64_t> progress;
    o.progress = [&](int64_t done, int64_t total) { progress.push_back(done * 100 + total); };
    auto r = exec::run_dataset(ex.value(), model.graph(), {{"x", x}}, o);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_FALSE(r->per_sample);
    EXPECT_EQ(progress, (std::vector<int64_t>{307, 607, 707}));
    ASSERT_EQ(r->outputs[0].dims(), (Dims{7, 3}));
    for (int64_t i = 0; i < 7; ++i) {
      auto one = ex->run({{"x", exec::slice_rows(x, i, i + 1)}});
      ASSERT_TRUE(one.is_ok());
      EXPECT_TRUE(exec::slice_rows(r->outputs[0], i, i + 1).identical(one->outputs[0])) << "sample " << i;
    }
  }
}

// Without keep_outputs nothing is stacked: on_rows sees every batch's rows in order, the rows the kept run
// stacks, and a batch whose rows differ beyond axis 0 is still an error.
TEST(Dataset, WithoutKeptOutputsEveryBatchGoesToOnRowsInOrder) {
  ir::Model model = scorer(-1, false);
  auto ex = exec::Executor::create(model);
  ASSERT_TRUE(ex.is_ok());
  ex->set_check_input_shapes(false);
  const Tensor x = samples(8);
  exec::DatasetOptions o;
  o.batch_size = 3;
  auto kept = exec::run_dataset(ex.value(), model.graph(), {{"x", x}}, o);
  ASSERT_TRUE(kept.is_ok()) << kept.status().to_string();
  o.keep_outputs = false;
  std::vector<Tensor> seen;
  o.on_rows = [&](size_t k, const Tensor& rows) {
    EXPECT_EQ(k, 0u);
    seen.push_back(rows);
  };
  auto streamed = exec::run_dataset(ex.value(), model.graph(), {{"x", x}}, o);
  ASSERT_TRUE(streamed.is_ok()) << streamed.status().to_string();
  EXPECT_TRUE(streamed->outputs.empty());
  EXPECT_EQ(streamed->samples, 8);
  ASSERT_EQ(seen.size(), 3u);
  auto joined = exec::concat_rows(seen);
  ASSERT_TRUE(joined.is_ok());
  EXPECT_TRUE(joined->identical(kept->outputs[0]));
}

TEST(Dataset, ABatchOneExportThatMixesSamplesRunsSampleBySample) {
  ir::Model model = scorer(1, true);
  auto ex = exec::Executor::create(model);
  ASSERT_TRUE(ex.is_ok());
  ex->set_check_input_shapes(false);
  exec::DatasetOptions o;
  o.batch_size = 4;
  auto r = exec::run_dataset(ex.value(), model.graph(), {{"x", samples(6)}}, o);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_TRUE(r->per_sample);
  EXPECT_EQ(r->outputs[0].dims(), (Dims{6, 3}));
}

TEST(Dataset, RejectsEmptyDataAndDataThatDoesNotFit) {
  ir::Model model = scorer(-1, false);
  auto ex = exec::Executor::create(model);
  ASSERT_TRUE(ex.is_ok());
  ex->set_check_input_shapes(false);
  exec::DatasetOptions o;
  auto empty = exec::run_dataset(ex.value(), model.graph(), {{"x", Tensor(DType::kFloat, {0, 2})}}, o);
  ASSERT_FALSE(empty.is_ok());
  EXPECT_EQ(empty.status().code(), Code::kUsage);
  auto wide = exec::run_dataset(ex.value(), model.graph(), {{"x", Tensor(DType::kFloat, {4, 3})}}, o);
  ASSERT_FALSE(wide.is_ok());
  EXPECT_EQ(wide.status().code(), Code::kInvalidModel);
}

TEST(Dataset, TopOneAccuracyCountsFirstMaximaAndRejectsBadLabels) {
  Tensor scores = f32({3, 3}, {0, 5, 1, /**/ 2, 2, 1, /**/ -1, -3, -2});
  auto acc = exec::top1_accuracy(scores, i64({3}, {1, 1, 0}));
  ASSERT_TRUE(acc.is_ok());
  EXPECT_EQ(acc->correct, 2);  // row 1 ties: the first maximum (class 0) wins
  EXPECT_EQ(acc->total, 3);
  EXPECT_EQ(exec::top1_accuracy(scores, i64({3, 1}, {1, 0, 0}))->correct, 3);
  EXPECT_EQ(exec::top1_accuracy(scores, i64({2}, {1, 0})).status().code(), Code::kUsage);
  EXPECT_EQ(exec::top1_accuracy(scores, f32({3}, {1, 0, 0})).status().code(), Code::kUsage);
  EXPECT_EQ(exec::top1_accuracy(scores, i64({3, 3}, {})).status().code(), Code::kUsage);
}

class DatasetCli : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    ASSERT_TRUE(io::save_model(scorer(1, false), path("m.onnx")).is_ok());
    ASSERT_TRUE(io::write_tensor_npy(path("x.npy"), samples(10)).is_ok());
  }
};

TEST_F(DatasetCli, WritesAllRowsAndPrintsAccuracyAndThroughput) {
  // Expected classes from per-sample runs of the same binary.
  ASSERT_TRUE(io::write_tensor_npy(path("y.npy"), i64({10}, {2, 2, 0, 1, 2, 0, 1, 2, 0, 0})).is_ok());
  auto r = run_cli("exec " + path("m.onnx") + " --input x=" + path("x.npy") + " --batch-size 4 --labels " +
                   path("y.npy") + " --output-dir " + path("out"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("samples/s (batch size 4, threads 1)"), std::string::npos) << r.out;
  auto y = io::read_tensor_file(path("out/output_0.npy"));
  ASSERT_TRUE(y.is_ok());
  ASSERT_EQ(y->tensor.dims(), (Dims{10, 3}));
  auto acc = exec::top1_accuracy(y->tensor, i64({10}, {2, 2, 0, 1, 2, 0, 1, 2, 0, 0}));
  ASSERT_TRUE(acc.is_ok());
  EXPECT_NE(r.out.find(fmt::format("top-1 accuracy: {}/10", acc->correct)), std::string::npos) << r.out;
  // No progress bar when stderr is not a terminal.
  EXPECT_EQ(r.err.find("samples\r"), std::string::npos);
  EXPECT_EQ(r.err.find('['), std::string::npos) << r.err;
  // Sample 9 alone gives the same bytes as row 9 of the batched run.
  ASSERT_TRUE(io::write_tensor_npy(path("x9.npy"), exec::slice_rows(samples(10), 9, 10)).is_ok());
  auto one = run_cli("exec " + path("m.onnx") + " --input x=" + path("x9.npy") + " --output-dir " + path("one") + " --npy");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  auto y9 = io::read_tensor_file(path("one/output_0.npy"));
  ASSERT_TRUE(y9.is_ok());
  EXPECT_TRUE(exec::slice_rows(y->tensor, 9, 10).identical(y9->tensor));
}

// The statistics line is the same whether the outputs are kept (--output-dir) or gathered batch by batch,
// and it is that of the whole output (as exec prints it for the stacked rows run at once).
TEST_F(DatasetCli, OutputStatisticsDoNotDependOnKeepingTheOutputs) {
  const auto line = [](const std::string& out) { return out.substr(0, out.find('\n')); };
  auto streamed = run_cli("exec " + path("m.onnx") + " --input x=" + path("x.npy") + " --batch-size 3");
  ASSERT_EQ(streamed.exit_code, 0) << streamed.err;
  auto kept = run_cli("exec " + path("m.onnx") + " --input x=" + path("x.npy") + " --batch-size 3 --output-dir " + path("out"));
  ASSERT_EQ(kept.exit_code, 0) << kept.err;
  EXPECT_EQ(line(streamed.out), line(kept.out));
  EXPECT_NE(line(streamed.out).find("float[10, 3] min "), std::string::npos) << streamed.out;
  auto y = io::read_tensor_file(path("out/output_0.npy"));
  ASSERT_TRUE(y.is_ok());
  double lo = y->tensor.data<float>()[0], hi = lo, sum = 0;
  for (int64_t i = 0; i < y->tensor.numel(); ++i) {
    lo = std::min<double>(lo, y->tensor.data<float>()[i]);
    hi = std::max<double>(hi, y->tensor.data<float>()[i]);
    sum += y->tensor.data<float>()[i];
  }
  EXPECT_NE(line(streamed.out).find(fmt::format("min {:.6g} max {:.6g} mean {:.6g}", lo, hi, sum / 30.0)), std::string::npos)
      << streamed.out;
}

TEST_F(DatasetCli, BadLabelsEmptyDataAndConflictingOptionsAreUsageErrors) {
  ASSERT_TRUE(io::write_tensor_npy(path("short.npy"), i64({9}, {})).is_ok());
  ASSERT_TRUE(io::write_tensor_npy(path("float.npy"), f32({10}, {})).is_ok());
  ASSERT_TRUE(io::write_tensor_npy(path("empty.npy"), Tensor(DType::kFloat, {0, 2})).is_ok());
  const std::string base = "exec " + path("m.onnx") + " --batch-size 4 ";
  auto short_labels = run_cli(base + "--input x=" + path("x.npy") + " --labels " + path("short.npy"));
  EXPECT_EQ(short_labels.exit_code, 2);
  EXPECT_NE(short_labels.err.find("9 labels for 10 samples"), std::string::npos) << short_labels.err;
  auto float_labels = run_cli(base + "--input x=" + path("x.npy") + " --labels " + path("float.npy"));
  EXPECT_EQ(float_labels.exit_code, 2);
  EXPECT_NE(float_labels.err.find("integer class indices"), std::string::npos) << float_labels.err;
  auto empty = run_cli(base + "--input x=" + path("empty.npy") + " --output-dir " + path("out"));
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_NE(empty.err.find("no samples"), std::string::npos) << empty.err;
  EXPECT_FALSE(std::filesystem::exists(path("out")));
  auto conflict = run_cli(base + "--input x=" + path("x.npy") + " --repeat 3");
  EXPECT_EQ(conflict.exit_code, 2);
  EXPECT_NE(conflict.err.find("--repeat does not apply"), std::string::npos) << conflict.err;
}

}  // namespace
}  // namespace qonnx::test
