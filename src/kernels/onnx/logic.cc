// Comparisons (Equal Less LessOrEqual Greater GreaterOrEqual), boolean logic (And Or Xor Not),
// BitShift, BitwiseAnd/Or/Xor/Not (opset 18), IsNaN and IsInf. Comparisons broadcast and produce bool; NaN compares unequal.
#include <cmath>
#include <string>
#include <type_traits>

#include "kernels/common/attr_check.h"
#include "kernels/onnx/elementwise_common.h"
#include "kernels/onnx/onnx_kernels.h"

namespace qonnx::kernels {
namespace {

// bool C = cmp(A, B) for two inputs of one dtype (numbers, bool or strings).
template <typename Cmp>
Status compare(exec::KernelContext& ctx, Cmp cmp, const LegacyBroadcast& lb = {}) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* a, ctx.required(0, "A"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* b_in, ctx.required(1, "B"));
  QONNX_RETURN_IF_ERROR(require_same_dtype(ctx, 0, 1));
  QONNX_ASSIGN_OR_RETURN(const Tensor b, legacy_broadcast_operand(ctx, lb, *a, *b_in));
  QONNX_ASSIGN_OR_RETURN(Dims dims, elementwise_output_dims(ctx, {a, &b}));
  Tensor out(DType::kBool, dims);
  if (a->dtype() == DType::kString) {
    bool* z = out.data<bool>();
    exec::for_each_broadcast<2>(dims, {&a->dims(), &b.dims()}, [&](int64_t o, const auto& off) {
      z[o] = cmp(a->strings()[static_cast<size_t>(off[0])], b.strings()[static_cast<size_t>(off[1])]);
    });
  } else {
    QONNX_RETURN_IF_ERROR(visit_types<kAllNumericAndBool>(ctx, 0, a->dtype(), [&](auto tag) {
      using T = decltype(tag);
      apply_binary<T, T, bool>(*a, b, out, [&](T x, T y) { return cmp(load(x), load(y)); });
    }));
  }
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

Status equal(exec::KernelContext& ctx, const LegacyBroadcast& lb) {
  return compare(ctx, [](const auto& x, const auto& y) { return x == y; }, lb);
}
Status less(exec::KernelContext& ctx, const LegacyBroadcast& lb) {
  return compare(ctx, [](const auto& x, const auto& y) { return x < y; }, lb);
}
Status less_or_equal(exec::KernelContext& ctx) {
  return compare(ctx, [](const auto& x, const auto& y) { return x <= y; });
}
Status greater(exec::KernelContext& ctx, const LegacyBroadcast& lb) {
  return compare(ctx, [](const auto& x, const auto& y) { return x > y; }, lb);
}
Status greater_or_equal(exec::KernelContext& ctx) {
  return compare(ctx, [](const auto& x, const auto& y) { return x >= y; });
}

// bool C = op(A, B) for two bool inputs.
template <typename Op>
Status logical(exec::KernelContext& ctx, Op op, const LegacyBroadcast& lb) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* a, ctx.required(0, "A"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* b_in, ctx.required(1, "B"));
  if (a->dtype() != DType::kBool) return unsupported_type(ctx, 0, a->dtype());
  if (b_in->dtype() != DType::kBool) return unsupported_type(ctx, 1, b_in->dtype());
  QONNX_ASSIGN_OR_RETURN(const Tensor b, legacy_broadcast_operand(ctx, lb, *a, *b_in));
  QONNX_ASSIGN_OR_RETURN(Dims dims, elementwise_output_dims(ctx, {a, &b}));
  Tensor out(DType::kBool, dims);
  apply_binary<bool, bool, bool>(*a, b, out, op);
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

Status logical_and(exec::KernelContext& ctx, const LegacyBroadcast& lb) {
  return logical(ctx, [](bool x, bool y) { return x && y; }, lb);
}
Status logical_or(exec::KernelContext& ctx, const LegacyBroadcast& lb) {
  return logical(ctx, [](bool x, bool y) { return x || y; }, lb);
}
Status logical_xor(exec::KernelContext& ctx, const LegacyBroadcast& lb) {
  return logical(ctx, [](bool x, bool y) { return x != y; }, lb);
}

Status logical_not(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "X"));
  if (x->dtype() != DType::kBool) return unsupported_type(ctx, 0, x->dtype());
  Tensor out(DType::kBool, x->dims());
  apply_unary<bool, bool>(*x, out, [](bool v) { return !v; });
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

// BitShift's direction, parsed once per node.
struct ShiftDirection {
  bool left;
};

Result<ShiftDirection> shift_direction(const ir::Node& node, int64_t) {
  QONNX_ASSIGN_OR_RETURN(const std::string direction, string_attr(node, "direction", ""));
  if (direction != "LEFT" && direction != "RIGHT")
    return Status(Code::kInvalidModel,
                  fmt::format("attribute 'direction' must be \"LEFT\" or \"RIGHT\", got \"{}\"", direction));
  return ShiftDirection{direction == "LEFT"};
}

// BitShift(X, Y) on unsigned integers, direction "LEFT" or "RIGHT". Shifting by the bit width or
// more gives 0 (C++ leaves it undefined).
Status bit_shift(exec::KernelContext& ctx, const ShiftDirection& direction) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "X"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* y, ctx.required(1, "Y"));
  QONNX_RETURN_IF_ERROR(require_same_dtype(ctx, 0, 1));
  const bool left = direction.left;
  QONNX_ASSIGN_OR_RETURN(Dims dims, elementwise_output_dims(ctx, {x, y}));
  Tensor out(x->dtype(), dims);
  QONNX_RETURN_IF_ERROR(visit_types<kUnsignedInts>(ctx, 0, x->dtype(), [&](auto tag) {
    using T = decltype(tag);
    apply_binary<T, T, T>(*x, *y, out, [left](T v, T n) {
      if (n >= sizeof(T) * 8) return T(0);
      return static_cast<T>(left ? static_cast<Wrap<T>>(v) << n : v >> n);
    });
  }));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

// BitwiseAnd/Or/Xor(A, B) on integers of one dtype, broadcasting.
template <typename Op>
Status bitwise(exec::KernelContext& ctx, Op op) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* a, ctx.required(0, "A"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* b, ctx.required(1, "B"));
  QONNX_RETURN_IF_ERROR(require_same_dtype(ctx, 0, 1));
  QONNX_ASSIGN_OR_RETURN(Dims dims, elementwise_output_dims(ctx, {a, b}));
  Tensor out(a->dtype(), dims);
  QONNX_RETURN_IF_ERROR(visit_types<kInts>(ctx, 0, a->dtype(), [&](auto tag) {
    using T = decltype(tag);
    apply_binary<T, T, T>(*a, *b, out, [&](T x, T y) { return static_cast<T>(op(x, y)); });
  }));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

Status bitwise_and(exec::KernelContext& ctx) { return bitwise(ctx, [](auto x, auto y) { return x & y; }); }
Status bitwise_or(exec::KernelContext& ctx) { return bitwise(ctx, [](auto x, auto y) { return x | y; }); }
Status bitwise_xor(exec::KernelContext& ctx) { return bitwise(ctx, [](auto x, auto y) { return x ^ y; }); }
Status bitwise_not(exec::KernelContext& ctx) {
  return unary_kernel<kInts>(ctx, [](auto v) { return static_cast<decltype(v)>(~v); });
}

// bool Y = pred(X) for floating-point X.
template <typename Pred>
Status classify(exec::KernelContext& ctx, Pred pred) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "X"));
  Tensor out(DType::kBool, x->dims());
  QONNX_RETURN_IF_ERROR(visit_types<kFloats>(ctx, 0, x->dtype(), [&](auto tag) {
    using T = decltype(tag);
    apply_unary<T, bool>(*x, out, [&](T v) { return pred(load(v)); });
  }));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

Status is_nan(exec::KernelContext& ctx) {
  return classify(ctx, [](auto v) { return std::isnan(v); });
}

// IsInf's detect_negative / detect_positive, parsed once per node.
struct InfSigns {
  bool negative, positive;
};

Result<InfSigns> inf_signs(const ir::Node& node, int64_t) {
  InfSigns signs;
  QONNX_ASSIGN_OR_RETURN(signs.negative, flag_attr(node, "detect_negative", true));
  QONNX_ASSIGN_OR_RETURN(signs.positive, flag_attr(node, "detect_positive", true));
  return signs;
}

Status is_inf(exec::KernelContext& ctx, const InfSigns& signs) {
  const bool negative = signs.negative, positive = signs.positive;
  return classify(ctx, [=](auto v) { return std::isinf(v) && (v > 0 ? positive : negative); });
}

}  // namespace

void register_logic_kernels(exec::KernelRegistry& r) {
  // 7: numpy broadcasting replaced the broadcast/axis attributes (see legacy_broadcast_operand).
  add_binary_op<equal>(r, "Equal");
  add_binary_op<less>(r, "Less");
  add_binary_op<greater>(r, "Greater");
  add_binary_op<logical_and>(r, "And");
  add_binary_op<logical_or>(r, "Or");
  add_binary_op<logical_xor>(r, "Xor");
  constexpr int kLatest = exec::kNoUpperVersion;
  r.add("", "LessOrEqual", {12, kLatest}, less_or_equal);
  r.add("", "GreaterOrEqual", {12, kLatest}, greater_or_equal);
  r.add("", "Not", {1, kLatest}, logical_not);
  r.add("", "BitShift", {11, kLatest}, exec::typed_kernel<ShiftDirection, shift_direction, bit_shift>());
  r.add("", "BitwiseAnd", {18, kLatest}, bitwise_and);
  r.add("", "BitwiseOr", {18, kLatest}, bitwise_or);
  r.add("", "BitwiseXor", {18, kLatest}, bitwise_xor);
  r.add("", "BitwiseNot", {18, kLatest}, bitwise_not);
  r.add("", "IsNaN", {9, kLatest}, is_nan);
  r.add("", "IsInf", {10, kLatest}, exec::typed_kernel<InfSigns, inf_signs, is_inf>());
}

}  // namespace qonnx::kernels
