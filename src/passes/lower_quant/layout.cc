// The layout and storage rules every lowered form shares.
#include <cmath>

#include "passes/lower_quant/lowering.h"
#include "qonnx/exec/dtype_dispatch.h"

namespace qonnx::passes::lowering {

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

bool all_zero(const Tensor& t) {
  for (int64_t i = 0; i < t.numel(); ++i)
    if (t.data<float>()[i] != 0.0f) return false;
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

bool zero_point_fits(const quant::QuantParams& p, int storage_bits) {
  const double values = std::ldexp(1.0, storage_bits);
  return p.is_signed ? all_within(p.zeropt, -values / 2, values / 2 - 1) : all_within(p.zeropt, 0, values - 1);
}

Result<Tensor> to_storage(const Tensor& floats, DType dtype) { return exec::cast_tensor(floats, dtype); }

Result<ir::Value*> float32_x(const ir::Graph& g, NodeEmitter& e, ir::Value* x) {
  auto type = g.type_of(x);
  if (!type || type->dtype == DType::kFloat || type->dtype == DType::kUndefined) return x;
  return e.op("x_float", "Cast", {x}, [](ir::Node& n) { n.set_attr("to", static_cast<int64_t>(DType::kFloat)); });
}

Result<ir::Value*> emit_int_clip(NodeEmitter& e, ir::Value* q, DType storage, const quant::IntRange& r) {
  // The bounds are integers within the storage type: the conversion is exact.
  QONNX_ASSIGN_OR_RETURN(const Tensor lo, to_storage(Tensor::scalar<float>(DType::kFloat, static_cast<float>(r.min)), storage));
  QONNX_ASSIGN_OR_RETURN(const Tensor hi, to_storage(Tensor::scalar<float>(DType::kFloat, static_cast<float>(r.max)), storage));
  QONNX_ASSIGN_OR_RETURN(ir::Value* lo_v, e.constant("clip_min", lo));
  QONNX_ASSIGN_OR_RETURN(ir::Value* hi_v, e.constant("clip_max", hi));
  return e.op("clip", "Clip", {q, lo_v, hi_v});
}

}  // namespace qonnx::passes::lowering
