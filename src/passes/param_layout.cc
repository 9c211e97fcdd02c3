#include "passes/param_layout.h"

#include <cmath>

namespace qonnx::passes {

Layout layout_of(const Tensor& t, int64_t x_rank) {
  Layout l;
  if (t.numel() == 1) {
    l.per_tensor = true;
    return l;
  }
  int varying = -1, count = 0;
  for (size_t d = 0; d < t.rank(); ++d)
    if (t.dim(d) != 1) {
      varying = static_cast<int>(d);
      ++count;
    }
  if (count != 1 || x_rank < static_cast<int64_t>(t.rank())) return l;
  l.one_axis = true;
  l.axis = x_rank - static_cast<int64_t>(t.rank()) + varying;
  l.channels = t.dim(static_cast<size_t>(varying));
  return l;
}

Layout layout_for_rank(const Tensor& t, int64_t x_rank) {
  return x_rank >= 0 ? layout_of(t, x_rank) : Layout{t.numel() == 1, false, 0, 1};
}

bool all_integral(const Tensor& t) {
  for (int64_t i = 0; i < t.numel(); ++i) {
    const float v = t.data<float>()[i];
    if (v != std::nearbyint(v)) return false;
  }
  return true;
}

bool all_zero(const Tensor& t) { return all_equal_to(t, 0.0f); }

bool all_equal_to(const Tensor& t, float v) {
  for (int64_t i = 0; i < t.numel(); ++i)
    if (t.data<float>()[i] != v) return false;
  return true;
}

bool all_within(const Tensor& t, double lo, double hi) {
  for (int64_t i = 0; i < t.numel(); ++i)
    if (!(t.data<float>()[i] >= lo && t.data<float>()[i] <= hi)) return false;
  return true;
}

Tensor flatten_param(const Tensor& t, const Layout& l, int64_t channels) {
  if (l.per_tensor && channels == 1) return Tensor::scalar<float>(DType::kFloat, t.data<float>()[0]);
  Tensor out(DType::kFloat, {channels});
  for (int64_t c = 0; c < channels; ++c) out.data<float>()[c] = t.data<float>()[t.numel() == 1 ? 0 : c];
  return out;
}

}  // namespace qonnx::passes
