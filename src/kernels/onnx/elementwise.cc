// Elementwise arithmetic with numpy broadcasting, and unary activations.
#include <cmath>
#include <type_traits>

#include "qonnx/exec/broadcast.h"
#include "qonnx/exec/dtype_dispatch.h"
#include "kernels/onnx/onnx_kernels.h"

namespace qonnx::kernels {
namespace {

template <typename T>
using Compute = std::conditional_t<std::is_same_v<T, exec::Half> || std::is_same_v<T, exec::BFloat16>, float, T>;

template <typename T>
Compute<T> load(T v) {
  if constexpr (std::is_same_v<T, exec::Half>) return half_to_float(v.bits);
  else if constexpr (std::is_same_v<T, exec::BFloat16>) return bfloat16_to_float(v.bits);
  else return v;
}

template <typename T>
T store(Compute<T> v) {
  if constexpr (std::is_same_v<T, exec::Half>) return exec::Half{float_to_half(v)};
  else if constexpr (std::is_same_v<T, exec::BFloat16>) return exec::BFloat16{float_to_bfloat16(v)};
  else return static_cast<T>(v);
}

// Applies op(a, b) with broadcasting; both inputs must share one dtype.
template <typename Op>
Status binary(exec::KernelContext& ctx, Op op) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* a, ctx.required(0, "A"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* b, ctx.required(1, "B"));
  if (a->dtype() != b->dtype())
    return ctx.input_error(Code::kInvalidModel, 1, "type {} differs from input #0's {}", dtype_name(b->dtype()),
                           dtype_name(a->dtype()));
  Dims out_dims;
  if (!exec::broadcast_dims(a->dims(), b->dims(), &out_dims))
    return ctx.input_error(Code::kInvalidModel, 1, "shape {} does not broadcast with {}", dims_to_string(b->dims()),
                           dims_to_string(a->dims()));
  Tensor out(a->dtype(), out_dims);
  Status st;
  bool ok = exec::visit_dtype(a->dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      st = ctx.error(Code::kUnsupported, "bool inputs are not supported");
    } else {
      const T* x = a->data<T>();
      const T* y = b->data<T>();
      T* z = out.data<T>();
      exec::for_each_broadcast<2>(out_dims, {&a->dims(), &b->dims()}, [&](int64_t o, const auto& off) {
        z[o] = store<T>(op(load(x[off[0]]), load(y[off[1]])));
      });
    }
  });
  if (!ok) return ctx.error(Code::kUnsupported, "unsupported type {}", dtype_name(a->dtype()));
  QONNX_RETURN_IF_ERROR(st);
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

Status add(exec::KernelContext& ctx) {
  return binary(ctx, [](auto x, auto y) { return x + y; });
}
Status sub(exec::KernelContext& ctx) {
  return binary(ctx, [](auto x, auto y) { return x - y; });
}
Status mul(exec::KernelContext& ctx) {
  return binary(ctx, [](auto x, auto y) { return x * y; });
}
Status div(exec::KernelContext& ctx) {
  return binary(ctx, [](auto x, auto y) {
    using T = decltype(x);
    if constexpr (std::is_integral_v<T>) return y == 0 ? T(0) : static_cast<T>(x / y);
    else return x / y;
  });
}

Status relu(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "X"));
  Tensor out(x->dtype(), x->dims());
  bool ok = exec::visit_dtype(x->dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      const T* in = x->data<T>();
      T* o = out.data<T>();
      for (int64_t i = 0; i < x->numel(); ++i) {
        auto v = load(in[i]);
        o[i] = store<T>(v > 0 ? v : decltype(v)(0));
      }
    }
  });
  if (!ok || x->dtype() == DType::kBool) return ctx.error(Code::kUnsupported, "unsupported type {}", dtype_name(x->dtype()));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_elementwise_kernels(exec::KernelRegistry& r) {
  r.add("", "Add", 7, add);
  r.add("", "Sub", 7, sub);
  r.add("", "Mul", 7, mul);
  r.add("", "Div", 7, div);
  r.add("", "Relu", 6, relu);
}

}  // namespace qonnx::kernels
