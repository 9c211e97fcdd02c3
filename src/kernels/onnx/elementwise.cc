// Elementwise arithmetic with numpy broadcasting: Add Sub Mul Div Pow Mod, the variadic
// Max Min Sum Mean, and Where. Integer arithmetic wraps around like numpy's.
#include <array>
#include <cmath>
#include <type_traits>
#include <vector>

#include "kernels/common/attr_check.h"
#include "kernels/onnx/elementwise_common.h"
#include "kernels/onnx/onnx_kernels.h"

namespace qonnx::kernels {
namespace {

struct AddOp {
  template <typename C>
  C operator()(C x, C y) const {
    if constexpr (kIsInt<C>) return static_cast<C>(static_cast<Wrap<C>>(x) + static_cast<Wrap<C>>(y));
    else return x + y;
  }
};

struct SubOp {
  template <typename C>
  C operator()(C x, C y) const {
    if constexpr (kIsInt<C>) return static_cast<C>(static_cast<Wrap<C>>(x) - static_cast<Wrap<C>>(y));
    else return x - y;
  }
};

struct MulOp {
  template <typename C>
  C operator()(C x, C y) const {
    if constexpr (kIsInt<C>) return static_cast<C>(static_cast<Wrap<C>>(x) * static_cast<Wrap<C>>(y));
    else return x * y;
  }
};

// Integer division truncates toward zero. Division by zero gives 0 (numpy warns and gives 0 too)
// rather than trapping; INT_MIN / -1 wraps to INT_MIN.
struct DivOp {
  template <typename C>
  C operator()(C x, C y) const {
    if constexpr (kIsInt<C>) {
      if (y == 0) return C(0);
      if constexpr (std::is_signed_v<C>)
        if (y == -1) return static_cast<C>(Wrap<C>(0) - static_cast<Wrap<C>>(x));
      return static_cast<C>(x / y);
    } else {
      return x / y;
    }
  }
};

// numpy.maximum / numpy.minimum: a NaN operand wins.
struct MaxOp {
  template <typename C>
  C operator()(C x, C y) const {
    if constexpr (is_float_storage_v<C>) {
      if (std::isnan(x)) return x;
      if (std::isnan(y)) return y;
    }
    return x < y ? y : x;
  }
};

struct MinOp {
  template <typename C>
  C operator()(C x, C y) const {
    if constexpr (is_float_storage_v<C>) {
      if (std::isnan(x)) return x;
      if (std::isnan(y)) return y;
    }
    return y < x ? y : x;
  }
};

// C = op(A, B) for two inputs of one dtype in Set.
template <unsigned Set, typename Op>
Status arithmetic(exec::KernelContext& ctx, Op op, const LegacyBroadcast& lb = {}) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* a, ctx.required(0, "A"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* b_in, ctx.required(1, "B"));
  QONNX_RETURN_IF_ERROR(require_same_dtype(ctx, 0, 1));
  QONNX_ASSIGN_OR_RETURN(const Tensor b, legacy_broadcast_operand(ctx, lb, *a, *b_in));
  QONNX_ASSIGN_OR_RETURN(Dims dims, elementwise_output_dims(ctx, {a, &b}));
  Tensor out = ctx.output_buffer(a->dtype(), dims, {0, 1});
  QONNX_RETURN_IF_ERROR(visit_types<Set>(ctx, 0, a->dtype(), [&](auto tag) {
    using T = decltype(tag);
    apply_binary<T, T, T>(*a, b, out, [&](T x, T y) { return store<T>(op(load(x), load(y))); });
  }));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

Status add(exec::KernelContext& ctx, const LegacyBroadcast& lb) { return arithmetic<kNumeric>(ctx, AddOp{}, lb); }
Status sub(exec::KernelContext& ctx, const LegacyBroadcast& lb) { return arithmetic<kNumeric>(ctx, SubOp{}, lb); }
Status mul(exec::KernelContext& ctx, const LegacyBroadcast& lb) { return arithmetic<kNumeric>(ctx, MulOp{}, lb); }
Status div(exec::KernelContext& ctx, const LegacyBroadcast& lb) { return arithmetic<kNumeric>(ctx, DivOp{}, lb); }

// fmod=0: the result takes the divisor's sign (Python's %), integers only; fmod=1: C fmod, the
// dividend's sign. Integer modulo by zero gives 0 instead of trapping.
struct ModAttrs {
  bool c_fmod;
};

Result<ModAttrs> prepare_mod(const ir::Node& node, int64_t) {
  QONNX_ASSIGN_OR_RETURN(const bool c_fmod, flag_attr(node, "fmod", false));
  return ModAttrs{c_fmod};
}

Status mod(exec::KernelContext& ctx, const ModAttrs& attrs) {
  const bool c_fmod = attrs.c_fmod;
  if (!c_fmod && ctx.input(0) && dtype_is_float(ctx.input(0)->dtype()))
    return ctx.error(Code::kInvalidModel, "Mod on floating-point inputs requires fmod=1");
  return arithmetic<kNumeric>(ctx, [c_fmod](auto x, auto y) {
    using C = decltype(x);
    if constexpr (is_float_storage_v<C>) {
      return std::fmod(x, y);
    } else {
      if (y == 0) return C(0);
      if constexpr (std::is_signed_v<C>)
        if (y == -1) return C(0);  // x % -1 would trap for INT_MIN
      C r = static_cast<C>(x % y);
      if constexpr (std::is_signed_v<C>)
        if (!c_fmod && r != 0 && ((r < 0) != (y < 0))) r = static_cast<C>(r + y);
      return r;
    }
  });
}

// base^e for an integer base and exponent, wrapping like numpy. numpy refuses negative exponents;
// here they give the exact result truncated toward zero (0 for |base| > 1 and for base 0).
template <typename T>
T int_power(T base, int64_t e) {
  if (e < 0) {
    if (base == 1) return T(1);
    if constexpr (std::is_signed_v<T>)
      if (base == -1) return (e & 1) ? T(-1) : T(1);
    return T(0);
  }
  Wrap<T> r = 1, b = static_cast<Wrap<T>>(base);
  for (uint64_t n = static_cast<uint64_t>(e); n != 0; n >>= 1) {
    if (n & 1) r *= b;
    b *= b;
  }
  return static_cast<T>(r);
}

// Pow(X, Y) -> X's dtype. Same float types compute in that type; integer pairs exactly; mixed pairs
// in double and convert back (numpy promotes them to float64, and ONNX casts the result to X's type).
Status pow(exec::KernelContext& ctx, const LegacyBroadcast& lb) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "X"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* y_in, ctx.required(1, "Y"));
  QONNX_ASSIGN_OR_RETURN(const Tensor y, legacy_broadcast_operand(ctx, lb, *x, *y_in));
  QONNX_ASSIGN_OR_RETURN(Dims dims, elementwise_output_dims(ctx, {x, &y}));
  const DType xt = x->dtype(), yt = y.dtype();
  if (!dtype_is_float(xt) && !dtype_is_integer(xt)) return unsupported_type(ctx, 0, xt);
  if (!dtype_is_float(yt) && !dtype_is_integer(yt)) return unsupported_type(ctx, 1, yt);
  Tensor out(xt, dims);
  // A single exponent of 2 or 3 on a float tensor is x * x or x * x * x in X's type, as onnxruntime has it.
  const double single = dtype_is_float(xt) && y.numel() == 1 && x->numel() != 1 ? exec::element_as_double(y, 0) : 0.0;
  if (single == 2.0 || single == 3.0) {
    QONNX_RETURN_IF_ERROR(visit_types<kFloats>(ctx, 0, xt, [&](auto tag) {
      using T = decltype(tag);
      if (single == 2.0) apply_unary<T, T>(*x, out, [](T b) { return store<T>(load(b) * load(b)); });
      else apply_unary<T, T>(*x, out, [](T b) { return store<T>(load(b) * load(b) * load(b)); });
    }));
  } else if (xt == yt && dtype_is_float(xt)) {
    QONNX_RETURN_IF_ERROR(visit_types<kFloats>(ctx, 0, xt, [&](auto tag) {
      using T = decltype(tag);
      apply_binary<T, T, T>(*x, y, out, [](T b, T e) { return store<T>(std::pow(load(b), load(e))); });
    }));
  } else if (dtype_is_integer(xt) && dtype_is_integer(yt)) {
    QONNX_ASSIGN_OR_RETURN(const Tensor e, exec::cast_tensor(y, DType::kInt64));
    QONNX_RETURN_IF_ERROR(visit_types<kInts>(ctx, 0, xt, [&](auto tag) {
      using T = decltype(tag);
      apply_binary<T, int64_t, T>(*x, e, out, [](T b, int64_t n) { return int_power(b, n); });
    }));
  } else {
    QONNX_ASSIGN_OR_RETURN(const Tensor b, exec::cast_tensor(*x, DType::kDouble));
    QONNX_ASSIGN_OR_RETURN(const Tensor e, exec::cast_tensor(y, DType::kDouble));
    QONNX_RETURN_IF_ERROR(visit_types<kNumeric>(ctx, 0, xt, [&](auto tag) {
      using T = decltype(tag);
      apply_binary<double, double, T>(b, e, out, [](double p, double q) { return from_double<T>(std::pow(p, q)); });
    }));
  }
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

// Max/Min/Sum/Mean over one or more inputs of one dtype, all broadcast together; the running
// result is rounded to the dtype after every input, as numpy's pairwise ufunc calls do.
template <unsigned Set, typename Op>
Status variadic(exec::KernelContext& ctx, Op op, bool mean = false) {
  if (ctx.num_inputs() == 0) return ctx.error(Code::kInvalidModel, "{} needs at least one input", ctx.node().op_type());
  std::vector<const Tensor*> inputs;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    QONNX_ASSIGN_OR_RETURN(const Tensor* t, ctx.required(i, "data"));
    QONNX_RETURN_IF_ERROR(require_same_dtype(ctx, 0, i));
    inputs.push_back(t);
  }
  QONNX_ASSIGN_OR_RETURN(Dims dims, elementwise_output_dims(ctx, inputs));
  const Tensor& first = *ctx.input(0);
  Tensor out = Tensor::uninitialized(first.dtype(), dims);
  QONNX_RETURN_IF_ERROR(visit_types<Set>(ctx, 0, first.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* z = out.data<T>();
    const T* x0 = first.data<T>();
    exec::for_each_broadcast<1>(dims, {&first.dims()}, [&](int64_t o, const auto& off) { z[o] = x0[off[0]]; });
    for (size_t i = 1; i < ctx.num_inputs(); ++i) {
      const Tensor& in = *ctx.input(i);
      const T* y = in.data<T>();
      exec::for_each_broadcast<1>(dims, {&in.dims()}, [&](int64_t o, const auto& off) {
        z[o] = store<T>(op(load(z[o]), load(y[off[0]])));
      });
    }
    if constexpr (is_float_storage_v<T>) {
      if (mean) {  // times 1/n, as onnxruntime (the same as / n for 1, 2, 4, ... inputs)
        const auto weight = Compute<T>(1) / static_cast<Compute<T>>(ctx.num_inputs());
        for (int64_t k = 0; k < out.numel(); ++k) z[k] = store<T>(load(z[k]) * weight);
      }
    }
  }));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

Status max(exec::KernelContext& ctx) { return variadic<kNumeric>(ctx, MaxOp{}); }
Status min(exec::KernelContext& ctx) { return variadic<kNumeric>(ctx, MinOp{}); }
Status sum(exec::KernelContext& ctx) { return variadic<kNumeric>(ctx, AddOp{}); }
Status mean(exec::KernelContext& ctx) { return variadic<kFloats>(ctx, AddOp{}, /*mean=*/true); }

// Where(condition, X, Y): X where condition else Y, all three broadcast together; any X/Y type.
Status where(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* cond, ctx.required(0, "condition"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(1, "X"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* y, ctx.required(2, "Y"));
  if (cond->dtype() != DType::kBool)
    return ctx.input_error(Code::kInvalidModel, 0, "condition must be bool, got {}", dtype_name(cond->dtype()));
  QONNX_RETURN_IF_ERROR(require_same_dtype(ctx, 1, 2));
  QONNX_ASSIGN_OR_RETURN(Dims dims, elementwise_output_dims(ctx, {cond, x, y}));
  Tensor out(x->dtype(), dims);
  const bool* c = cond->data<bool>();
  const std::array<const Dims*, 3> ins = {&cond->dims(), &x->dims(), &y->dims()};
  if (x->dtype() == DType::kString) {
    auto& z = out.strings();
    exec::for_each_broadcast<3>(dims, ins, [&](int64_t o, const auto& off) {
      z[static_cast<size_t>(o)] = c[off[0]] ? x->strings()[static_cast<size_t>(off[1])] : y->strings()[static_cast<size_t>(off[2])];
    });
  } else {
    QONNX_RETURN_IF_ERROR(visit_types<kAllNumericAndBool>(ctx, 1, x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* a = x->data<T>();
      const T* b = y->data<T>();
      T* z = out.data<T>();
      exec::for_each_broadcast<3>(dims, ins, [&](int64_t o, const auto& off) { z[o] = c[off[0]] ? a[off[1]] : b[off[2]]; });
    }));
  }
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_elementwise_kernels(exec::KernelRegistry& r) {
  add_binary_op<add>(r, "Add");
  add_binary_op<sub>(r, "Sub");
  add_binary_op<mul>(r, "Mul");
  add_binary_op<div>(r, "Div");
  add_binary_op<pow>(r, "Pow");
  constexpr int kLatest = exec::kNoUpperVersion;
  r.add("", "Mod", {10, kLatest}, exec::typed_kernel<ModAttrs, prepare_mod, mod>());
  // Max/Min/Sum/Mean before 8 required equal shapes; broadcasting them is a superset. Version 1 also
  // had `consumed_inputs` (an in-place hint, not read).
  r.add("", "Max", {1, kLatest}, max);
  r.add("", "Min", {1, kLatest}, min);
  r.add("", "Sum", {1, kLatest}, sum);
  r.add("", "Mean", {1, kLatest}, mean);
  r.add("", "Where", {9, kLatest}, where);
}

}  // namespace qonnx::kernels
