// FINN's front-end passes (docs/finn.md): fold-quant-weights{mode=finn}, batchnorm-to-affine,
// remove-identity-ops, extract-quant-scale-zeropt. Each rewrite is run on generated weights, scales,
// zero points and inputs and compared with the original through the executor: bit for bit where the
// pass claims exactness, within the bound derived next to each case otherwise.
#include <cfloat>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>

#include <fmt/format.h>
#include <tuple>

#include <gtest/gtest.h>

#include "qonnx/exec/broadcast.h"
#include "qonnx/exec/executor.h"
#include "qonnx/io/model_builder.h"
#include "qonnx/passes/quantizer_outcomes.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {

const char* kQ = "qonnx.custom_op.general";
constexpr double kU = 1.0 / 16777216.0;  // float32's unit roundoff, 2^-24

std::vector<std::string> op_types(const ir::Model& m) {
  std::vector<std::string> ops;
  for (const auto& n : m.graph().nodes()) ops.push_back(n->op_type());
  return ops;
}

bool has_op(const ir::Model& m, const std::string& op) {
  auto ops = op_types(m);
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

Tensor random_f32(const Dims& dims, std::mt19937& rng, float lo, float hi) {
  Tensor t(DType::kFloat, dims);
  std::uniform_real_distribution<float> d(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = d(rng);
  return t;
}

// A scale of `dims`: powers of two 2^-2..2^-6 (either sign when `negative`), or values in [0.01, 0.3]
// that are not powers of two.
Tensor random_scale(const Dims& dims, bool pow2, std::mt19937& rng, bool negative = false) {
  Tensor t(DType::kFloat, dims);
  std::uniform_int_distribution<int> e(2, 6), sign(0, 1);
  std::uniform_real_distribution<float> d(0.01f, 0.3f);
  for (int64_t i = 0; i < t.numel(); ++i) {
    float v = pow2 ? std::ldexp(1.0f, -e(rng)) : d(rng);
    int e_unused = 0;
    while (!pow2 && std::frexp(v, &e_unused) == 0.5f) v = d(rng);
    t.data<float>()[i] = negative && sign(rng) ? -v : v;
  }
  return t;
}

Tensor random_integers(const Dims& dims, std::mt19937& rng, int lo, int hi) {
  Tensor t(DType::kFloat, dims);
  std::uniform_int_distribution<int> d(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(d(rng));
  return t;
}

Tensor run_model(const ir::Model& m, const std::map<std::string, Tensor>& feeds) {
  auto ex = exec::Executor::create(m);
  EXPECT_TRUE(ex.is_ok()) << ex.status().to_string();
  if (!ex.is_ok()) return Tensor();
  auto r = ex.value().run(feeds);
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  return r.is_ok() ? r.value().outputs[0] : Tensor();
}

// Every element of `got` equals `want` (NaN equals NaN, -0 equals 0), or differs by at most bound(i).
template <typename Bound>
void expect_within(const Tensor& want, const Tensor& got, Bound bound, const std::string& what) {
  ASSERT_EQ(want.dims(), got.dims()) << what;
  int reported = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const float a = want.data<float>()[i], b = got.data<float>()[i];
    if (a == b || (std::isnan(a) && std::isnan(b))) continue;
    const double diff = std::fabs(double(a) - double(b)), allowed = bound(i);
    if (diff <= allowed) continue;
    if (reported++ < 3) ADD_FAILURE() << what << ": element " << i << ": " << a << " vs " << b << " (|diff| " << diff << " > " << allowed << ")";
  }
}

void expect_identical(const Tensor& want, const Tensor& got, const std::string& what) {
  expect_within(want, got, [](int64_t) { return 0.0; }, what);
}

int64_t counter(const pass::PassContext& ctx, const std::string& name) {
  auto p = ctx.counters().find("fold-quant-weights");
  if (p == ctx.counters().end()) return 0;
  auto c = p->second.find(name);
  return c == p->second.end() ? 0 : c->second;
}

// ---- fold-quant-weights{mode=finn} ----

// One weight Quant(w, s, z, 4 bits signed) read by `op` at input `weight_input`; the other input is the
// runtime input x (Gather: int64 indices).
struct WeightCase {
  std::string op;
  int weight_input = 1;
  Dims x_dims;
  Tensor w, s, z;
  Attrs attrs = nullptr;
  DType x_dtype = DType::kFloat;
  Tensor bias{};  // Conv/ConvTranspose input #2
};

ir::Model weight_model(const WeightCase& c) {
  io::ModelBuilder b(13);
  b.import(kQ, 1);
  b.input("x", c.x_dtype, c.x_dims).output("y", DType::kFloat);
  b.initializer("w", c.w).initializer("s", c.s).initializer("z", c.z).initializer("bits", f32s(4));
  b.node("Quant", {"w", "s", "z", "bits"}, {"wq"}, kQ).attr("narrow", 0).attr("signed", 1).attr("rounding_mode", "ROUND");
  std::vector<std::string> inputs = c.weight_input == 1 ? std::vector<std::string>{"x", "wq"} : std::vector<std::string>{"wq", "x"};
  if (c.bias.defined()) {
    b.initializer("bias", c.bias);
    inputs.push_back("bias");
  }
  auto node = b.node(c.op, inputs, {"y"});
  if (c.attrs) c.attrs(node);
  return b.build().value();
}

struct Folded {
  ir::Model model;
  pass::PassContext ctx;
};

std::unique_ptr<Folded> fold_finn(const WeightCase& c) {
  auto f = std::make_unique<Folded>(Folded{weight_model(c), pass::PassContext()});
  auto r = run_passes(f->model, "fold-quant-weights{mode=finn}", f->ctx);
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  return f;
}

// The scale moved: the weight is an integer initializer with an integer finn_datatype, and exactly one
// quantizer outcome says so.
void expect_moved(const Folded& f, const std::string& what) {
  const ir::Graph& g = f.model.graph();
  const ir::Value* wq = g.find_value("wq");
  ASSERT_TRUE(wq && wq->is_initializer()) << what;
  const std::string dt = g.finn_datatype("wq");
  EXPECT_TRUE(dt.rfind("INT", 0) == 0 || dt.rfind("UINT", 0) == 0 || dt == "BIPOLAR" || dt == "BINARY") << what << ": " << dt;
  Tensor t = g.initializer_tensor(wq).value();
  for (int64_t i = 0; i < t.numel(); ++i) ASSERT_EQ(t.data<float>()[i], std::nearbyint(t.data<float>()[i])) << what;
  ASSERT_EQ(passes::quantizer_outcomes(f.ctx).size(), 1u) << what;
  EXPECT_NE(passes::quantizer_outcomes(f.ctx)[0].detail.find("moved behind"), std::string::npos)
      << what << ": " << passes::quantizer_outcomes(f.ctx)[0].detail;
  EXPECT_EQ(counter(f.ctx, "scales-moved"), 1) << what;
}

// The weight folded to floats (no scale op), with `reason` in its outcome; outputs are the original's.
void expect_fell_back(const WeightCase& c, const std::string& reason, std::mt19937& rng) {
  auto f = fold_finn(c);
  const std::string what = c.op + " " + reason;
  ASSERT_EQ(passes::quantizer_outcomes(f->ctx).size(), 1u) << what;
  const auto& o = passes::quantizer_outcomes(f->ctx)[0];
  EXPECT_NE(o.detail.find("float weights"), std::string::npos) << what << ": " << o.detail;
  EXPECT_NE(o.detail.find(reason), std::string::npos) << what << ": " << o.detail;
  EXPECT_EQ(counter(f->ctx, "scales-moved"), 0) << what;
  EXPECT_EQ(counter(f->ctx, "float-fallbacks"), 1) << what;
  EXPECT_EQ(op_types(f->model), std::vector<std::string>{c.op}) << what;
  Tensor x = random_f32(c.x_dims, rng, -4, 4);
  expect_identical(run_model(weight_model(c), {{"x", x}}), run_model(f->model, {{"x", x}}), what);
}

// |x|, |q| and |s| over a tensor, for the dot-product bounds.
double max_abs(const Tensor& t) {
  double m = 0;
  for (int64_t i = 0; i < t.numel(); ++i) m = std::max(m, std::fabs(double(t.data<float>()[i])));
  return m;
}

// A dot product of n terms sum_j x_j * fl(q_j * s) (the original) against fl(fl(sum_j x_j * q_j) * s)
// (scale moved), each sum in any order, with or without fused multiply-adds: both are within
// (u + gamma_n (1 + u)) |s| sum_j |x_j q_j| of s * sum_j x_j q_j (gamma_n = n u / (1 - n u) bounds a
// sum's rounding, u the weight's or the final product's), so they differ by at most twice that, and
// sum_j |x_j q_j| <= n max|x| max|q|.
double dot_bound(int64_t n, double max_x, double max_q, double max_s) {
  const double gamma = n * kU / (1 - n * kU);
  return 2 * (kU + gamma * (1 + kU)) * max_s * n * max_x * max_q;
}

// Runs the case on seeded inputs: identical outputs for power-of-two scales, else within bound(x, i).
template <typename Bound>
void expect_moved_and_close(const WeightCase& c, bool pow2, std::mt19937& rng, Bound bound) {
  const std::string what = fmt::format("{} input #{} scale {} {}", c.op, c.weight_input, dims_to_string(c.s.dims()),
                                       pow2 ? "pow2" : "not pow2");
  auto f = fold_finn(c);
  expect_moved(*f, what);
  EXPECT_EQ(counter(f->ctx, "scales-moved-not-power-of-two"), pow2 ? 0 : 1) << what;
  const ir::Model original = weight_model(c);
  for (int run = 0; run < 3; ++run) {
    Tensor x = random_f32(c.x_dims, rng, -4, 4);
    Tensor want = run_model(original, {{"x", x}}), got = run_model(f->model, {{"x", x}});
    if (pow2) expect_identical(want, got, what);
    else expect_within(want, got, [&](int64_t i) { return bound(x, i); }, what);
  }
}

// The weight's codes q - z and its scale broadcast to the weight's dims, as the test reads them back.
struct Codes {
  Tensor q, s;
};
Codes codes_of(const Folded& f, const WeightCase& c) {
  Codes k{f.model.graph().initializer_tensor(f.model.graph().find_value("wq")).value(), Tensor(DType::kFloat, c.w.dims())};
  exec::for_each_broadcast<1>(c.w.dims(), {&c.s.dims()}, [&](int64_t o, const auto& off) { k.s.data<float>()[o] = c.s.data<float>()[off[0]]; });
  return k;
}

TEST(FoldQuantWeightsFinn, ConvAndConvTransposeMoveAPerOutputChannelScale) {
  std::mt19937 rng(1);
  for (bool pow2 : {true, false})
    for (bool per_channel : {false, true})
      for (float zp : {0.0f, 2.0f}) {
        // Conv: W (O=3, I=2, 2, 2), scale per output channel on W's axis 0.
        WeightCase conv{"Conv", 1, {2, 2, 4, 4}, random_f32({3, 2, 2, 2}, rng, -1, 1),
                        random_scale(per_channel ? Dims{3, 1, 1, 1} : Dims{}, pow2, rng), f32s(zp),
                        [](io::NodeBuilder& n) { n.attr("kernel_shape", std::vector<int64_t>{2, 2}); }};
        auto f = fold_finn(conv);
        const Codes k = codes_of(*f, conv);
        const double b = dot_bound(8, 4, max_abs(k.q), max_abs(k.s));
        expect_moved_and_close(conv, pow2, rng, [&](const Tensor&, int64_t) { return b; });
        // ConvTranspose: W (I=2, O=3, 2, 2), scale per output channel on W's axis 1.
        WeightCase convt{"ConvTranspose", 1, {1, 2, 3, 3}, random_f32({2, 3, 2, 2}, rng, -1, 1),
                         random_scale(per_channel ? Dims{1, 3, 1, 1} : Dims{}, pow2, rng), f32s(zp)};
        auto ft = fold_finn(convt);
        const Codes kt = codes_of(*ft, convt);
        const double bt = dot_bound(8, 4, max_abs(kt.q), max_abs(kt.s));
        expect_moved_and_close(convt, pow2, rng, [&](const Tensor&, int64_t) { return bt; });
      }
}

TEST(FoldQuantWeightsFinn, MatMulMovesAScaleAlongTheFreeAxisOfEitherOperand) {
  std::mt19937 rng(2);
  for (bool pow2 : {true, false})
    for (bool per_channel : {false, true}) {
      // B = W (K=5, N=3): a scale per column; x (2, 4, 5).
      WeightCase b_case{"MatMul", 1, {2, 4, 5}, random_f32({5, 3}, rng, -1, 1),
                        random_scale(per_channel ? Dims{1, 3} : Dims{}, pow2, rng), random_integers({1, 3}, rng, -2, 2)};
      auto fb = fold_finn(b_case);
      const Codes kb = codes_of(*fb, b_case);
      const double bb = dot_bound(5, 4, max_abs(kb.q), max_abs(kb.s));
      expect_moved_and_close(b_case, pow2, rng, [&](const Tensor&, int64_t) { return bb; });
      // A = W (M=3, K=5): a scale per row; x (5, 2) and a 1-D x (5,).
      for (const Dims& x_dims : {Dims{5, 2}, Dims{5}}) {
        WeightCase a_case{"MatMul", 0, x_dims, random_f32({3, 5}, rng, -1, 1),
                          random_scale(per_channel ? Dims{3, 1} : Dims{}, pow2, rng), f32s(0)};
        auto fa = fold_finn(a_case);
        const Codes ka = codes_of(*fa, a_case);
        const double ba = dot_bound(5, 4, max_abs(ka.q), max_abs(ka.s));
        expect_moved_and_close(a_case, pow2, rng, [&](const Tensor&, int64_t) { return ba; });
      }
    }
}

// Elementwise consumers: x (2, 3, 4) with a weight (3, 4) whose scale is per-tensor, (3, 1) or (1, 4).
TEST(FoldQuantWeightsFinn, ElementwiseConsumersInEitherPosition) {
  std::mt19937 rng(3);
  const Dims x_dims{2, 3, 4}, w_dims{3, 4};
  for (const std::string op : {"Mul", "Div", "Add", "Sub"})
    for (int position : {0, 1})
      for (bool pow2 : {true, false})
        for (const Dims& s_dims : {Dims{}, Dims{3, 1}, Dims{1, 4}}) {
          // Weights away from 0 so that Div's quotients stay finite (the bounds are relative).
          Tensor w = random_f32(w_dims, rng, 0.5f, 1.0f);
          WeightCase c{op, position, x_dims, w, random_scale(s_dims, pow2, rng, true), random_integers({3, 1}, rng, -1, 1)};
          auto f = fold_finn(c);
          const Codes k = codes_of(*f, c);
          // Per element with the weight's q and s: |x q s| for Mul (both forms are two roundings of
          // x q s: 4u), x / (q s) for Div by the weight (1+u)/(1-u) - (1-u)^2 < 5u, q s / x for Div of
          // the weight (4u), and for Add/Sub 4u (1+u)^2 (|x| + |q s|): fl(x + fl(q s)) and
          // fl(fl(fl(x / s) + q) * s) are each within u(1+u)|q s| + u|x + q s| and u(1+u)^2|x| +
          // (2u + u^2)|x + q s| of x + q s, with |x + q s| <= |x| + |q s|.
          auto bound = [&](const Tensor& x, int64_t i) {
            const int64_t xi = i, wi = i % 12;
            const double xv = x.data<float>()[xi], q = k.q.data<float>()[wi], s = k.s.data<float>()[wi];
            if (op == "Mul") return 4 * kU * std::fabs(xv * q * s);
            if (op == "Div" && position == 1) return 5 * kU * std::fabs(xv / (q * s));
            if (op == "Div") return 4 * kU * std::fabs(q * s / xv);
            return 4 * kU * (1 + kU) * (1 + kU) * (std::fabs(xv) + std::fabs(q * s));
          };
          expect_moved_and_close(c, pow2, rng, bound);
          // Sub/Div keep the weight's side; Div by the weight divides behind, Add/Sub divide x in front.
          const bool div_behind = op == "Div" && position == 1;
          EXPECT_EQ(op_types(f->model).back(), div_behind ? "Div" : "Mul") << op << position;
          EXPECT_EQ(op_types(f->model).front(), (op == "Add" || op == "Sub") ? "Div" : op) << op << position;
        }
}

TEST(FoldQuantWeightsFinn, GatherSelectsTheSameProductsExactly) {
  std::mt19937 rng(4);
  for (int64_t axis : {0, 1})
    for (bool pow2 : {true, false}) {
      // data W (5, 4); the scale varies along the axis not gathered.
      const Dims s_dims = axis == 0 ? Dims{1, 4} : Dims{5, 1};
      WeightCase c{"Gather", 0, {2, 3}, random_f32({5, 4}, rng, -1, 1), random_scale(s_dims, pow2, rng), f32s(1),
                   [axis](io::NodeBuilder& n) { n.attr("axis", axis); }, DType::kInt64};
      auto f = fold_finn(c);
      expect_moved(*f, "Gather");
      EXPECT_EQ(counter(f->ctx, "scales-moved-not-power-of-two"), 0);
      const ir::Model original = weight_model(c);
      Tensor idx(DType::kInt64, {2, 3});
      for (int64_t i = 0; i < 6; ++i) idx.data<int64_t>()[i] = (i * 3 + axis) % (axis == 0 ? 5 : 4);
      expect_identical(run_model(original, {{"x", idx}}), run_model(f->model, {{"x", idx}}), "Gather");
    }
}

TEST(FoldQuantWeightsFinn, UnitScaleStoresTheIntegersWithoutAMul) {
  std::mt19937 rng(5);
  for (float zp : {0.0f, -3.0f}) {
    // Several consumers and a graph output are fine: nothing moves.
    WeightCase c{"Add", 1, {3, 4}, random_f32({3, 4}, rng, -6, 6), f32s(1), f32s(zp)};
    auto f = fold_finn(c);
    EXPECT_EQ(op_types(f->model), std::vector<std::string>{"Add"});
    EXPECT_EQ(f->model.graph().finn_datatype("wq"), zp == 0 ? "INT4" : "INT5");  // codes - (-3): [-5, 10]
    EXPECT_EQ(counter(f->ctx, "integer-weights"), 1);
    EXPECT_EQ(counter(f->ctx, "scales-moved"), 0);
    Tensor x = random_f32({3, 4}, rng, -4, 4);
    expect_identical(run_model(weight_model(c), {{"x", x}}), run_model(f->model, {{"x", x}}), "unit scale");
  }
}

TEST(FoldQuantWeightsFinn, DatatypesOfTheStoredIntegers) {
  // (signed, narrow, bits, zero point) -> the type of q - z over the quantizer's bounds.
  struct Row {
    int is_signed, narrow, bits;
    float zp;
    const char* type;
  };
  for (const Row& r : {Row{1, 0, 4, 0, "INT4"}, Row{1, 1, 4, 0, "INT4"}, Row{0, 0, 8, 0, "UINT8"}, Row{0, 1, 2, 0, "UINT2"},
                       Row{0, 0, 1, 0, "BINARY"}, Row{1, 0, 1, 0, "BIPOLAR"}, Row{0, 0, 8, 128, "INT8"},
                       Row{0, 0, 4, -1, "UINT5"}, Row{1, 0, 1, 1, "INT2"}}) {
    io::ModelBuilder b(13);
    b.import(kQ, 1);
    b.input("x", DType::kFloat, {2}).output("y", DType::kFloat);
    b.initializer("w", f32({2}, {0.3f, -0.7f})).initializer("s", f32s(0.25f)).initializer("z", f32s(r.zp));
    b.initializer("bits", f32s(static_cast<float>(r.bits)));
    b.node("Quant", {"w", "s", "z", "bits"}, {"wq"}, kQ).attr("signed", r.is_signed).attr("narrow", r.narrow);
    b.node("Mul", {"x", "wq"}, {"y"});
    auto m = b.build().value();
    ASSERT_TRUE(run_passes(m, "fold-quant-weights{mode=finn}").is_ok());
    EXPECT_EQ(m.graph().finn_datatype("wq"), r.type) << r.is_signed << r.narrow << r.bits << " z " << r.zp;
  }
  // BipolarQuant: codes +-1 and its scale moved.
  io::ModelBuilder b(13);
  b.import(kQ, 1);
  b.input("x", DType::kFloat, {2}).output("y", DType::kFloat);
  b.initializer("w", f32({2}, {0.3f, -0.7f})).initializer("s", f32s(0.5f));
  b.node("BipolarQuant", {"w", "s"}, {"wq"}, kQ);
  b.node("Mul", {"x", "wq"}, {"y"});
  auto m = b.build().value();
  ASSERT_TRUE(run_passes(m, "fold-quant-weights{mode=finn}").is_ok());
  EXPECT_EQ(m.graph().finn_datatype("wq"), "BIPOLAR");
  EXPECT_EQ(values_f32(m.graph().initializer_tensor(m.graph().find_value("wq")).value()), (std::vector<float>{1, -1}));
  EXPECT_EQ(op_types(m), (std::vector<std::string>{"Mul", "Mul"}));
}

TEST(FoldQuantWeightsFinn, WrongAxisScalesAndOtherConsumersFallBackToFloats) {
  std::mt19937 rng(6);
  auto kernel = [](io::NodeBuilder& n) { n.attr("kernel_shape", std::vector<int64_t>{2, 2}); };
  auto w = [&](const Dims& d) { return random_f32(d, rng, -1, 1); };
  auto s = [&](const Dims& d) { return random_scale(d, false, rng); };
  expect_fell_back({"Conv", 1, {1, 2, 3, 3}, w({3, 2, 2, 2}), s({1, 2, 1, 1}), f32s(0), kernel}, "not the output channel alone", rng);
  expect_fell_back({"Conv", 1, {1, 2, 3, 3}, w({3, 2, 2, 2}), s({3, 1, 1, 1}), f32s(0), kernel, DType::kFloat, f32({3}, {1, 2, 3})},
                   "extract-conv-bias", rng);
  expect_fell_back({"ConvTranspose", 1, {1, 2, 3, 3}, w({2, 3, 2, 2}), s({2, 1, 1, 1}), f32s(0)}, "not the output channel alone", rng);
  expect_fell_back({"ConvTranspose", 1, {1, 2, 3, 3}, w({2, 3, 2, 2}), s({1, 3, 1, 1}), f32s(0),
                    [](io::NodeBuilder& n) { n.attr("group", int64_t{2}); }},
                   "group != 1", rng);
  expect_fell_back({"MatMul", 1, {2, 5}, w({5, 3}), s({5, 1}), f32s(0)}, "not axis 1 alone", rng);
  expect_fell_back({"MatMul", 0, {5, 2}, w({3, 5}), s({1, 5}), f32s(0)}, "not axis 0 alone", rng);
  expect_fell_back({"MatMul", 1, {2, 5}, w({5}), s({5}), f32s(0)}, "contracted axis", rng);
  expect_fell_back({"Max", 1, {2, 5}, w({2, 5}), s({}), f32s(0)}, "not an op the scale can move behind", rng);
  expect_fell_back({"Mul", 1, {2, 5}, w({2, 5}), s({}), f32s(0.5f)}, "zero point is not an integer", rng);
}

TEST(FoldQuantWeightsFinn, SharedWeightsAndGraphOutputsFallBack) {
  io::ModelBuilder b(13);
  b.import(kQ, 1);
  b.input("x", DType::kFloat, {2}).output("y", DType::kFloat).output("wq", DType::kFloat);
  b.initializer("w", f32({2}, {0.3f, -0.7f})).initializer("s", f32s(0.25f)).initializer("z", f32s(0)).initializer("bits", f32s(4));
  b.initializer("v", f32({2}, {0.9f, 0.1f}));
  b.node("Quant", {"w", "s", "z", "bits"}, {"wq"}, kQ);
  b.node("Quant", {"v", "s", "z", "bits"}, {"vq"}, kQ);
  b.node("Mul", {"x", "vq"}, {"xv"});
  b.node("Add", {"xv", "vq"}, {"xvv"});
  b.node("Mul", {"xvv", "wq"}, {"y"});
  auto m = b.build().value();
  pass::PassContext ctx;
  ASSERT_TRUE(run_passes(m, "fold-quant-weights{mode=finn}", ctx).is_ok());
  const auto& outcomes = passes::quantizer_outcomes(ctx);
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_NE(outcomes[0].detail.find("graph output"), std::string::npos) << outcomes[0].detail;
  EXPECT_NE(outcomes[1].detail.find("2 uses"), std::string::npos) << outcomes[1].detail;
  EXPECT_EQ(counter(ctx, "float-fallbacks"), 2);
}

TEST(FoldQuantWeightsFinn, AScaleConstantAlongAnAxisMovesAsPerChannel) {
  // A (3, 2, 2, 2) scale that varies along axis 0 only moves behind the Conv as [1, 3, 1, 1].
  std::mt19937 rng(7);
  Tensor s(DType::kFloat, {3, 2, 2, 2});
  for (int64_t i = 0; i < s.numel(); ++i) s.data<float>()[i] = std::ldexp(1.0f, -2 - static_cast<int>(i / 8));
  WeightCase c{"Conv", 1, {1, 2, 3, 3}, random_f32({3, 2, 2, 2}, rng, -1, 1), s, f32s(0),
               [](io::NodeBuilder& n) { n.attr("kernel_shape", std::vector<int64_t>{2, 2}); }};
  expect_moved_and_close(c, true, rng, [](const Tensor&, int64_t) { return 0.0; });
  auto f = fold_finn(c);
  EXPECT_EQ(f->model.graph().initializer_tensor(f->model.graph().find_value("wq_scale")).value().dims(), (Dims{1, 3, 1, 1}));
}


// ---- batchnorm-to-affine ----

int64_t pass_counter(const pass::PassContext& ctx, const std::string& pass, const std::string& name) {
  auto p = ctx.counters().find(pass);
  if (p == ctx.counters().end()) return 0;
  auto c = p->second.find(name);
  return c == p->second.end() ? 0 : c->second;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b)); }

void expect_same_bits(const Tensor& want, const Tensor& got, const std::string& what) {
  ASSERT_EQ(want.dims(), got.dims()) << what;
  int reported = 0;
  for (int64_t i = 0; i < want.numel(); ++i)
    if (!same_bits(want.data<float>()[i], got.data<float>()[i]) && reported++ < 3)
      ADD_FAILURE() << what << ": element " << i << ": " << want.data<float>()[i] << " vs " << got.data<float>()[i];
}

ir::Model batchnorm_model(const Dims& x_dims, const std::vector<Tensor>& params, int64_t opset, Attrs attrs = nullptr) {
  io::ModelBuilder b(opset);
  b.input("x", DType::kFloat, x_dims).output("y", DType::kFloat, x_dims);
  const char* names[] = {"scale", "bias", "mean", "var"};
  for (size_t i = 0; i < 4; ++i) b.initializer(names[i], params[i]);
  auto n = b.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y"});
  if (attrs) attrs(n);
  return b.build().value();
}

TEST(BatchNormToAffine, BitIdenticalToTheKernelOnGeneratedParameters) {
  std::mt19937 rng(11);
  for (const Dims& x_dims : {Dims{4, 3}, Dims{2, 1, 5}, Dims{2, 4, 3, 3}, Dims{1, 2, 2, 2, 2}})
    for (int64_t opset : {7, 9, 13, 15}) {
      const int64_t c = x_dims[1];
      std::vector<Tensor> params = {random_f32({c}, rng, -2, 2), random_f32({c}, rng, -1, 1), random_f32({c}, rng, -1, 1),
                                    random_f32({c}, rng, 0.0f, 3)};
      params[3].data<float>()[0] = 0;  // eps alone under the root
      std::uniform_real_distribution<float> eps(1e-6f, 1e-2f);
      const float epsilon = eps(rng);
      auto attrs = [epsilon](io::NodeBuilder& n) { n.attr("epsilon", epsilon); };
      const ir::Model original = batchnorm_model(x_dims, params, opset, attrs);
      ir::Model converted = batchnorm_model(x_dims, params, opset, attrs);
      pass::PassContext ctx;
      ASSERT_TRUE(run_passes(converted, "batchnorm-to-affine", ctx).is_ok());
      const std::string what = fmt::format("x {} opset {}", dims_to_string(x_dims), opset);
      EXPECT_EQ(op_types(converted), (std::vector<std::string>{"Mul", "Add"})) << what;
      EXPECT_EQ(pass_counter(ctx, "batchnorm-to-affine", "converted"), 1) << what;
      Dims affine(x_dims.size(), 1);
      affine[1] = c;
      EXPECT_EQ(converted.graph().initializer_tensor(converted.graph().nodes().front()->input(1)).value().dims(), affine) << what;
      for (int run = 0; run < 3; ++run) {
        Tensor x = random_f32(x_dims, rng, -8, 8);
        x.data<float>()[0] = -0.0f;
        x.data<float>()[1] = INFINITY;
        expect_same_bits(run_model(original, {{"x", x}}), run_model(converted, {{"x", x}}), what);
      }
    }
}

TEST(BatchNormToAffine, LeavesTrainingModeAndVariableParameters) {
  std::vector<Tensor> params = {f32({2}, {1, 2}), f32({2}, {0, 1}), f32({2}, {0, 0}), f32({2}, {1, 1})};
  ir::Model training = batchnorm_model({2, 2}, params, 15, [](io::NodeBuilder& n) { n.attr("training_mode", int64_t{1}); });
  EXPECT_FALSE(run_passes(training, "batchnorm-to-affine").value());
  // A mean fed at run time.
  io::ModelBuilder b(13);
  b.input("x", DType::kFloat, {2, 2}).input("mean", DType::kFloat, {2}).output("y", DType::kFloat, {2, 2});
  b.initializer("scale", params[0]).initializer("bias", params[1]).initializer("var", params[3]);
  b.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y"});
  ir::Model variable = b.build().value();
  EXPECT_FALSE(run_passes(variable, "batchnorm-to-affine").value());
  EXPECT_EQ(op_types(variable), std::vector<std::string>{"BatchNormalization"});
}

// ---- remove-identity-ops ----

// Inputs with the edge values an identity must keep: +-0, +-inf, NaN, a subnormal, the largest float.
Tensor edge_input(const Dims& dims, std::mt19937& rng) {
  Tensor x = random_f32(dims, rng, -3, 3);
  const float edges[] = {-0.0f, 0.0f, INFINITY, -INFINITY, NAN, 1e-40f, FLT_MAX};
  for (size_t i = 0; i < 7 && static_cast<int64_t>(i) < x.numel(); ++i) x.data<float>()[i] = edges[i];
  return x;
}

// y = op(Neg(x), c) or op(c, Neg(x)) on x (2, 3, 4): the graph output y goes to Neg when op goes.
ir::Model binary_model(const std::string& op, int data_input, const Tensor& c, const Dims& x_dims = {2, 3, 4}) {
  io::ModelBuilder b(13);
  b.input("x", DType::kFloat, x_dims).output("y", DType::kFloat);
  b.initializer("c", c);
  b.node("Neg", {"x"}, {"t"});
  b.node(op, data_input == 0 ? std::vector<std::string>{"t", "c"} : std::vector<std::string>{"c", "t"}, {"y"});
  auto m = b.build().value();
  EXPECT_TRUE(run_passes(m, "infer-shapes").is_ok());
  return m;
}

Tensor filled(const Dims& dims, float v) {
  Tensor t(DType::kFloat, dims);
  std::fill_n(t.data<float>(), t.numel(), v);
  return t;
}

TEST(RemoveIdentityOps, NeutralConstantsOfEveryBroadcastShapeGoAndOutputsStay) {
  std::mt19937 rng(12);
  struct Case {
    std::string op;
    int data_input;
    float neutral;
  };
  for (const Case& c : {Case{"Add", 0, 0.0f}, Case{"Add", 1, 0.0f}, Case{"Add", 0, -0.0f}, Case{"Sub", 0, 0.0f},
                        Case{"Mul", 0, 1.0f}, Case{"Mul", 1, 1.0f}, Case{"Div", 0, 1.0f}})
    for (const Dims& c_dims : {Dims{}, Dims{1}, Dims{4}, Dims{3, 1}, Dims{2, 3, 4}, Dims{1, 1, 1}}) {
      const std::string what = fmt::format("{} data #{} c {} {}", c.op, c.data_input, dims_to_string(c_dims), c.neutral);
      const ir::Model original = binary_model(c.op, c.data_input, filled(c_dims, c.neutral));
      ir::Model removed = binary_model(c.op, c.data_input, filled(c_dims, c.neutral));
      pass::PassContext ctx;
      ASSERT_TRUE(run_passes(removed, "remove-identity-ops", ctx).is_ok()) << what;
      EXPECT_EQ(op_types(removed), std::vector<std::string>{"Neg"}) << what;
      EXPECT_EQ(pass_counter(ctx, "remove-identity-ops", "removed"), 1) << what;
      Tensor x = edge_input({2, 3, 4}, rng);
      // Bit for bit, but for x + (+0), which maps -0 to +0 (equal as values).
      const Tensor want = run_model(original, {{"x", x}}), got = run_model(removed, {{"x", x}});
      if (c.op == "Add" && !std::signbit(c.neutral)) expect_identical(want, got, what);
      else expect_same_bits(want, got, what);
    }
}

TEST(RemoveIdentityOps, KeepsWhatIsNotExactlyAnIdentity) {
  struct Case {
    std::string op;
    int data_input;
    Tensor c;
  };
  for (const Case& c : {Case{"Add", 0, filled({}, 1e-6f)},       // qonnx's atol would remove it
                        Case{"Mul", 0, filled({}, 1.00001f)},    // likewise
                        Case{"Sub", 1, filled({}, 0.0f)},        // 0 - x
                        Case{"Div", 1, filled({}, 1.0f)},        // 1 / x
                        Case{"Add", 0, filled({5, 2, 3, 4}, 0)},  // broadcasting grows the rank
                        Case{"Mul", 0, filled({2, 3, 8}, 1)},     // not broadcastable to x's shape
                        Case{"Mul", 0, f32({2}, {1, 1.5f})}}) {
    const Dims x_dims = c.c.dims() == Dims{2, 3, 8} ? Dims{2, 3, 1} : (c.c.numel() == 2 ? Dims{2, 3, 2} : Dims{2, 3, 4});
    ir::Model m = binary_model(c.op, c.data_input, c.c, x_dims);
    ASSERT_TRUE(run_passes(m, "remove-identity-ops").is_ok());
    EXPECT_EQ(op_types(m).size(), 2u) << c.op << " " << dims_to_string(c.c.dims());
  }
}

TEST(RemoveIdentityOps, AGraphOutputIsWrittenByTheProducerOrKept) {
  // r = Relu(x); y = Mul(r, 1): Relu writes y.
  io::ModelBuilder b(13);
  b.input("x", DType::kFloat, {3}).output("y", DType::kFloat, {3}).output("z", DType::kFloat, {3});
  b.initializer("one", filled({}, 1));
  b.node("Relu", {"x"}, {"r"});
  b.node("Mul", {"r", "one"}, {"y"});
  b.node("Identity", {"x"}, {"z"});  // would alias the graph input: kept
  b.annotate("y", "UINT8");
  ir::Model m = b.build().value();
  ASSERT_TRUE(run_passes(m, "infer-shapes").is_ok());
  pass::PassContext ctx;
  ASSERT_TRUE(run_passes(m, "remove-identity-ops", ctx).is_ok());
  EXPECT_EQ(op_types(m), (std::vector<std::string>{"Relu", "Identity"}));
  EXPECT_EQ(m.graph().nodes().front()->output(0)->name(), "y");
  EXPECT_EQ(m.graph().outputs()[0]->name(), "y");
  EXPECT_EQ(m.graph().finn_datatype("y"), "UINT8");
  for (const std::string& name : m.graph().value_info_names()) EXPECT_NE(name, "y");
  EXPECT_EQ(pass_counter(ctx, "remove-identity-ops", "kept-for-graph-output"), 1);
  Tensor x = f32({3}, {-1, 2, 0.5f});
  EXPECT_EQ(values_f32(run_model(m, {{"x", x}})), (std::vector<float>{0, 2, 0.5f}));
}

TEST(RemoveIdentityOps, PadAndDropoutInEveryForm) {
  struct Case {
    int64_t opset;
    std::string op;
    std::function<void(io::ModelBuilder&)> build;
    bool removed;
  };
  auto pad_input = [](std::vector<int64_t> pads) {
    return [pads](io::ModelBuilder& b) {
      b.initializer("pads", i64({static_cast<int64_t>(pads.size())}, pads));
      b.node("Pad", {"r", "pads"}, {"u"});
    };
  };
  auto pad_attr = [](std::vector<int64_t> pads) { return [pads](io::ModelBuilder& b) { b.node("Pad", {"r"}, {"u"}).attr("pads", pads); }; };
  auto dropout = [](bool training, bool mask_used) {
    return [training, mask_used](io::ModelBuilder& b) {
      b.initializer("ratio", filled({}, 0.5f)).initializer("training", b8({}, {training}));
      b.node("Dropout", {"r", "ratio", "training"}, mask_used ? std::vector<std::string>{"u", "mask"} : std::vector<std::string>{"u"});
      if (mask_used) b.output("mask", DType::kBool);
    };
  };
  for (const Case& c : {Case{13, "Pad", pad_input({0, 0, 0, 0}), true}, Case{13, "Pad", pad_input({0, 1, 0, 0}), false},
                        Case{10, "Pad", pad_attr({0, 0, 0, 0}), true}, Case{10, "Pad", pad_attr({1, 0, 0, 0}), false},
                        Case{13, "Dropout", dropout(false, false), true}, Case{13, "Dropout", dropout(true, false), false},
                        Case{13, "Dropout", dropout(false, true), false},
                        Case{10, "Dropout", [](io::ModelBuilder& b) { b.node("Dropout", {"r"}, {"u"}).attr("ratio", 0.3f); }, true}}) {
    io::ModelBuilder b(c.opset);
    b.input("x", DType::kFloat, {2, 3}).output("y", DType::kFloat);
    b.node("Relu", {"x"}, {"r"});
    c.build(b);
    b.node("Neg", {"u"}, {"y"});
    ir::Model m = b.build().value();
    ASSERT_TRUE(run_passes(m, "remove-identity-ops").is_ok());
    const auto ops = op_types(m);
    EXPECT_EQ(std::find(ops.begin(), ops.end(), c.op) == ops.end(), c.removed) << c.op << " opset " << c.opset;
  }
}

// ---- extract-quant-scale-zeropt ----

TEST(ExtractQuantScaleZeroPt, BitExactOverGeneratedQuantizersAndEdgeInputs) {
  std::mt19937 rng(13);
  const char* modes[] = {"ROUND", "CEIL", "FLOOR", "UP", "DOWN", "HALF_UP", "HALF_DOWN"};
  int cases = 0;
  for (const char* mode : modes)
    for (int bits : {1, 2, 4, 8})
      for (int is_signed : {0, 1})
        for (int narrow : {0, 1})
          for (int params = 0; params < 4; ++params) {
            // scale: per-tensor, per-channel (3, 1) or unit; zero point: 0, integer per-channel, fractional.
            const bool per_channel = params % 2 == 1;
            Tensor s = params == 2 ? filled({}, 1.0f) : random_scale(per_channel ? Dims{3, 1} : Dims{}, params == 3, rng);
            Tensor z = params == 0 ? filled({}, 0.0f)
                       : params == 1 ? random_integers({3, 1}, rng, -3, 3)
                                     : random_f32({1, 4}, rng, -2, 2);
            io::ModelBuilder b(13);
            b.import(kQ, 1);
            b.input("x", DType::kFloat, {3, 4}).output("y", DType::kFloat);
            b.initializer("s", s).initializer("z", z).initializer("bits", f32s(static_cast<float>(bits)));
            b.node("Quant", {"x", "s", "z", "bits"}, {"y"}, kQ).attr("signed", is_signed).attr("narrow", narrow).attr("rounding_mode", mode);
            const ir::Model original = b.build().value();
            ir::Model extracted = b.build().value();
            pass::PassContext ctx;
            ASSERT_TRUE(run_passes(extracted, "extract-quant-scale-zeropt", ctx).is_ok());
            const bool trivial = params == 0 && s.numel() == 1 && s.data<float>()[0] == 1.0f;
            EXPECT_EQ(pass_counter(ctx, "extract-quant-scale-zeropt", "extracted"), trivial ? 0 : 1);
            for (int run = 0; run < 4; ++run) {
              // Values around every code boundary of the scale: x = s * (k + f - z) for f near 0 and 0.5.
              Tensor x = random_f32({3, 4}, rng, -300, 300);
              std::uniform_int_distribution<int> k(-12, 12);
              const float fractions[] = {0.5f, -0.5f, 0.0f, 0.49999997f, 0.50000006f, 0.25f};
              for (int64_t i = 6; i < 12; ++i)
                x.data<float>()[i] = (static_cast<float>(k(rng)) + fractions[i - 6]) * s.data<float>()[s.numel() == 1 ? 0 : i / 4];
              const float edges[] = {-0.0f, 0.0f, INFINITY, -INFINITY, NAN, 1e-42f};
              if (run == 0) std::copy(std::begin(edges), std::end(edges), x.data<float>());
              expect_same_bits(run_model(original, {{"x", x}}), run_model(extracted, {{"x", x}}),
                               fmt::format("{} bits {} signed {} narrow {} params {}", mode, bits, is_signed, narrow, params));
            }
            ++cases;
          }
  EXPECT_EQ(cases, 7 * 4 * 2 * 2 * 4);
}

TEST(ExtractQuantScaleZeroPt, SkipsUnitPartsAndConvertsParameterTypes) {
  io::ModelBuilder b(13);
  b.import(kQ, 1);
  b.input("x", DType::kFloat, {4}).output("y", DType::kFloat).output("u", DType::kFloat);
  b.initializer("s64", make<double>(DType::kDouble, {}, {0.1})).initializer("z", f32s(0)).initializer("bits", f32s(4));
  b.initializer("one", f32s(1)).initializer("z2", make<int64_t>(DType::kInt64, {}, {2}));
  b.node("Quant", {"x", "s64", "z", "bits"}, {"y"}, kQ);
  b.node("Quant", {"x", "one", "z2", "bits"}, {"u"}, kQ);
  const ir::Model original = b.build().value();
  ir::Model m = b.build().value();
  pass::PassContext ctx;
  ASSERT_TRUE(run_passes(m, "extract-quant-scale-zeropt", ctx).is_ok());
  EXPECT_EQ(op_types(m), (std::vector<std::string>{"Div", "Quant", "Mul", "Add", "Quant", "Sub"}));
  EXPECT_EQ(pass_counter(ctx, "extract-quant-scale-zeropt", "scales"), 1);
  EXPECT_EQ(pass_counter(ctx, "extract-quant-scale-zeropt", "zero-points"), 1);
  Tensor x = f32({4}, {0.25f, -0.35f, 0.05f, 1e9f});
  auto ex_a = exec::Executor::create(original).value().run({{"x", x}}).value();
  auto ex_b = exec::Executor::create(m).value().run({{"x", x}}).value();
  for (size_t k = 0; k < 2; ++k) expect_same_bits(ex_a.outputs[k], ex_b.outputs[k], "output " + std::to_string(k));
}

// ---- infer-datatypes on FINN's front-end output ----

TEST(InferDatatypesFinn, QuantAvgPool2dIsTypedByObitsAndSigned) {
  for (const auto& [obits, is_signed, want] : std::vector<std::tuple<int64_t, int64_t, std::string>>{
           {4, 0, "UINT4"}, {8, 1, "INT8"}, {32, 0, "UINT32"}}) {
    io::ModelBuilder b(13);
    b.import(kQ, 1).input("x", DType::kFloat, {1, 2, 4, 4}).output("y", DType::kFloat);
    b.node("QuantAvgPool2d", {"x"}, {"y"}, kQ).attr("kernel", int64_t{2}).attr("stride", int64_t{2})
        .attr("ibits", int64_t{4}).attr("obits", obits).attr("signed", is_signed);
    ir::Model m = b.build().value();
    ASSERT_TRUE(run_passes(m, "infer-datatypes").is_ok());
    EXPECT_EQ(m.graph().finn_datatype("y"), want);
  }
  io::ModelBuilder b(13);
  b.import(kQ, 1).input("x", DType::kFloat, {1, 2, 4, 4}).output("y", DType::kFloat);
  b.node("QuantAvgPool2d", {"x"}, {"y"}, kQ).attr("kernel", int64_t{2}).attr("obits", int64_t{40});
  ir::Model m = b.build().value();
  auto r = run_passes(m, "infer-datatypes");
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("obits 40"), std::string::npos) << r.status().to_string();
}

TEST(InferDatatypesFinn, EveryTensorFinnReadsIsTyped) {
  // x -> MultiThreshold (UINT2) -> MatMul(Quant(W) scale 0.5) -> Mul -> MultiThreshold (BIPOLAR, out_scale 2,
  // out_bias -1) -> MultiThreshold (INT4, out_scale 0.5) -> y, after fold-quant-weights{mode=finn}.
  io::ModelBuilder b(13);
  b.import(kQ, 1);
  b.input("x", DType::kFloat, {1, 3}).output("y", DType::kFloat, {1, 2});
  b.initializer("t1", f32({1, 3}, {-1, 0, 1})).initializer("t2", f32({1, 1}, {0})).initializer("t3", f32({1, 3}, {-1, 0, 1}));
  b.initializer("w", f32({3, 2}, {0.5f, -1, 1.5f, 2, -0.5f, 0})).initializer("s", f32s(0.5f)).initializer("z", f32s(0));
  b.initializer("bits", f32s(4)).initializer("k", f32s(0.75f));
  b.node("MultiThreshold", {"x", "t1"}, {"a"}, kQ).attr("out_dtype", "UINT2");
  b.node("Quant", {"w", "s", "z", "bits"}, {"wq"}, kQ);
  b.node("MatMul", {"a", "wq"}, {"m"});
  b.node("Mul", {"m", "k"}, {"mk"});
  b.node("MultiThreshold", {"mk", "t2"}, {"p"}, kQ).attr("out_dtype", "BIPOLAR").attr("out_scale", 2.0f).attr("out_bias", -1.0f);
  b.node("MultiThreshold", {"p", "t3"}, {"y"}, kQ).attr("out_dtype", "INT4").attr("out_scale", 0.5f);
  ir::Model m = b.build().value();
  ASSERT_TRUE(run_passes(m, "infer-datatypes,fold-quant-weights{mode=finn},infer-datatypes").is_ok());
  const ir::Graph& g = m.graph();
  EXPECT_EQ(g.finn_datatype("a"), "UINT2");
  EXPECT_EQ(g.finn_datatype("wq"), "INT4");  // the integer weight, kept through the second inference
  EXPECT_EQ(g.finn_datatype("p"), "BIPOLAR");  // integer out_scale / out_bias: out_dtype, as qonnx
  EXPECT_EQ(g.finn_datatype("y"), "FLOAT32");  // out_scale 0.5: scaled, FLOAT32 as qonnx
  // Every node output has a type: the MatMul of integers is INT32, the moved scale's Mul FLOAT32.
  for (const auto& n : g.nodes())
    for (const ir::Value* v : n->outputs()) EXPECT_FALSE(g.finn_datatype(v->name()).empty()) << v->name();
  EXPECT_EQ(g.finn_datatype(g.nodes().front()->output(0)->name()), "UINT2");
  std::vector<std::string> matmul_out;
  for (const auto& n : g.nodes())
    if (n->op_type() == "MatMul") matmul_out.push_back(g.finn_datatype(n->output(0)->name()));
  EXPECT_EQ(matmul_out, std::vector<std::string>{"INT32"});
}

}  // namespace
}  // namespace qonnx::test
