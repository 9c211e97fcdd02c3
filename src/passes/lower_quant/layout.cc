// The layout and storage rules every lowered form shares.
#include <cmath>

#include "passes/lower_quant/lowering.h"
#include "qonnx/exec/dtype_dispatch.h"

namespace qonnx::passes::lowering {

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
