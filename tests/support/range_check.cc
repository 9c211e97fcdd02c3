#include "support/range_check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "qonnx/pass/pass.h"

namespace qonnx::test {

Result<ir::Model> with_shapes(const io::ModelBuilder& b) {
  QONNX_ASSIGN_OR_RETURN(ir::Model model, b.build());
  QONNX_ASSIGN_OR_RETURN(auto items, pass::parse_pipeline("infer-shapes"));
  pass::PassContext ctx;
  QONNX_RETURN_IF_ERROR(pass::run_pipeline(model, items, ctx).status());
  return model;
}

std::vector<std::string> all_values(const ir::Model& model) {
  std::vector<std::string> names;
  for (const auto& node : model.graph().nodes())
    for (const ir::Value* o : node->outputs())
      if (o && !o->name().empty()) names.push_back(o->name());
  return names;
}

namespace {

// Whether v (element i of t) is float32(n * scale) for an integer n in the form's range (its
// channel's along axis 1 when the form has one entry per channel).
bool on_grid(const analysis::ScaledInt& s, const Tensor& t, int64_t i, float v) {
  const size_t entries = s.lo.size();
  size_t c = 0;
  if (entries > 1) {
    if (t.rank() < 2 || t.dim(1) != static_cast<int64_t>(entries)) return false;
    c = static_cast<size_t>((i / (t.numel() / t.dim(0) / t.dim(1))) % t.dim(1));
  }
  const double scale = s.scale[s.scale.size() == 1 ? 0 : c];
  const int64_t guess = std::llround(static_cast<double>(v) / scale);
  for (int64_t n = guess - 1; n <= guess + 1; ++n)
    if (n >= s.lo[c] && n <= s.hi[c] && static_cast<float>(static_cast<double>(n) * scale) == v) return true;
  return false;
}

}  // namespace

void expect_inside(const analysis::RangeAnalysis& a, const exec::RunResult& run, const std::string& what) {
  for (const auto& [name, t] : run.exposed) {
    auto it = a.tensors.find(name);
    ASSERT_NE(it, a.tensors.end()) << name;
    const analysis::TensorRange& r = it->second;
    if (t.dtype() != DType::kFloat) continue;
    const float* p = t.data<float>();
    const int64_t channels = static_cast<int64_t>(r.channels.size());
    if (channels) {
      ASSERT_GE(t.rank(), 2u) << what << ": " << name;
      ASSERT_EQ(t.dim(1), channels) << what << ": " << name;
    }
    const int64_t inner = channels && t.numel() ? t.numel() / t.dim(0) / channels : 1;
    for (int64_t i = 0; i < t.numel(); ++i) {
      ASSERT_TRUE(p[i] >= r.all.lo && p[i] <= r.all.hi)
          << what << ": " << name << "[" << i << "] = " << p[i] << " outside [" << r.all.lo << ", " << r.all.hi << "]";
      if (channels) {
        const analysis::Interval c = r.channels[static_cast<size_t>((i / inner) % channels)];
        ASSERT_TRUE(p[i] >= c.lo && p[i] <= c.hi) << what << ": " << name << "[" << i << "] = " << p[i]
                                                  << " outside its channel's [" << c.lo << ", " << c.hi << "]";
      }
      if (r.scaled_int) {
        ASSERT_TRUE(on_grid(*r.scaled_int, t, i, p[i]))
            << what << ": " << name << "[" << i << "] = " << p[i] << " is not float32(n * scale) for an n in its integer range";
      }
    }
  }
}

Tensor random_tensor(std::mt19937& rng, const Dims& dims, float lo, float hi, bool integral) {
  Tensor t(DType::kFloat, dims);
  std::uniform_real_distribution<float> u(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const float v = u(rng);
    t.data<float>()[i] = integral ? std::round(v) : std::min(std::max(v, lo), hi);
  }
  return t;
}

std::vector<Tensor> range_probe_inputs(std::mt19937& rng, const Dims& dims, float lo, float hi, int random_count) {
  std::vector<Tensor> inputs;
  for (int i = 0; i < random_count; ++i) inputs.push_back(random_tensor(rng, dims, lo, hi, false));
  auto filled = [&](auto value) {
    Tensor t(DType::kFloat, dims);
    for (int64_t e = 0; e < t.numel(); ++e) t.data<float>()[e] = std::min(std::max(value(e), lo), hi);
    inputs.push_back(std::move(t));
  };
  filled([&](int64_t) { return lo; });
  filled([&](int64_t) { return hi; });
  std::bernoulli_distribution coin(0.5);
  for (int i = 0; i < 12; ++i) filled([&](int64_t) { return coin(rng) ? lo : hi; });
  // The ends and one float inside them.
  const float near_lo = std::nextafter(lo, hi), near_hi = std::nextafter(hi, lo);
  std::uniform_int_distribution<int> pick(0, 3);
  for (int i = 0; i < 4; ++i) filled([&](int64_t) { const float c[] = {lo, near_lo, near_hi, hi}; return c[pick(rng)]; });
  // Evenly spaced over the interval (one sweep spread over the elements, shifted per tensor).
  Tensor probe(DType::kFloat, dims);
  const int64_t n = std::max<int64_t>(probe.numel(), 1);
  for (int shift = 0; shift < 4; ++shift)
    filled([&](int64_t e) { return lo + (hi - lo) * static_cast<float>((e * 7 + shift * n / 4) % n) / static_cast<float>(n); });
  // Next to the powers of two inside the interval (and their negatives).
  std::vector<float> special;
  for (int e = -10; e <= 20; ++e)
    for (float sign : {1.0f, -1.0f}) {
      const float p = sign * std::ldexp(1.0f, e);
      for (float v : {std::nextafter(p, -INFINITY), p, std::nextafter(p, INFINITY)})
        if (v >= lo && v <= hi) special.push_back(v);
    }
  if (!special.empty()) {
    std::uniform_int_distribution<size_t> which(0, special.size() - 1);
    for (int i = 0; i < 4; ++i) filled([&](int64_t) { return special[which(rng)]; });
  }
  return inputs;
}

Result<analysis::RangeAnalysis> check_sound(const ir::Model& model, float lo, float hi, const std::vector<Tensor>& inputs,
                                            const std::string& what) {
  analysis::RangeOptions options;
  options.input_ranges["x"] = {lo, hi};
  QONNX_ASSIGN_OR_RETURN(analysis::RangeAnalysis a, analysis::analyze_ranges(model, options));
  QONNX_ASSIGN_OR_RETURN(exec::Executor ex, exec::Executor::create(model));
  QONNX_RETURN_IF_ERROR(ex.expose(all_values(model)));
  for (const Tensor& x : inputs) {
    QONNX_ASSIGN_OR_RETURN(exec::RunResult run, ex.run({{"x", x}}));
    expect_inside(a, run, what);
    if (::testing::Test::HasFatalFailure()) break;
  }
  return a;
}

}  // namespace qonnx::test
