// Tensor generators: Constant, ConstantOfShape, Range, EyeLike.
#include <cmath>
#include <optional>
#include <type_traits>

#include "kernels/common/attr_check.h"
#include "kernels/common/axes.h"
#include "kernels/common/element_copy.h"
#include "kernels/onnx/onnx_kernels.h"
#include "qonnx/exec/dtype_dispatch.h"

namespace qonnx::kernels {
namespace {

// Constant's value, built once per node from its one value attribute: `value` (1 on), `sparse_value`
// (11 on; not supported), value_float(s)/value_int(s)/value_string(s) (12 on).
struct ConstantAttrs {
  Tensor value;
};

template <bool ScalarAndListValues>
Result<ConstantAttrs> prepare_constant(const ir::Node& node, int64_t) {
  std::vector<const char*> names = {"value", "sparse_value"};
  if (ScalarAndListValues)
    names.insert(names.end(), {"value_float", "value_floats", "value_int", "value_ints", "value_string", "value_strings"});
  int given = 0;
  for (const char* n : names) given += node.has_attr(n) ? 1 : 0;
  if (given != 1) return Status(Code::kInvalidModel, fmt::format("Constant needs exactly one value attribute, got {}", given));
  ConstantAttrs a;
  if (node.has_attr("value")) {
    QONNX_ASSIGN_OR_RETURN(a.value, node.attr_tensor("value"));
  } else if (node.has_attr("sparse_value")) {
    return Status(Code::kUnsupported, "sparse_value constants are not supported");
  } else if (node.has_attr("value_float")) {
    QONNX_ASSIGN_OR_RETURN(const float v, float_attr(node, "value_float", 0.0f));
    a.value = Tensor::scalar<float>(DType::kFloat, v);
  } else if (node.has_attr("value_int")) {
    QONNX_ASSIGN_OR_RETURN(const int64_t v, int_attr(node, "value_int", 0));
    a.value = Tensor::scalar<int64_t>(DType::kInt64, v);
  } else if (node.has_attr("value_floats")) {
    QONNX_ASSIGN_OR_RETURN(const std::vector<float> v, floats_attr(node, "value_floats"));
    a.value = Tensor(DType::kFloat, {static_cast<int64_t>(v.size())});
    std::copy(v.begin(), v.end(), a.value.data<float>());
  } else if (node.has_attr("value_ints")) {
    QONNX_ASSIGN_OR_RETURN(const std::vector<int64_t> v, ints_attr(node, "value_ints"));
    a.value = Tensor(DType::kInt64, {static_cast<int64_t>(v.size())});
    std::copy(v.begin(), v.end(), a.value.data<int64_t>());
  } else if (node.has_attr("value_string")) {
    a.value = Tensor(DType::kString, {});
    QONNX_ASSIGN_OR_RETURN(a.value.strings()[0], string_attr(node, "value_string", ""));
  } else {
    std::vector<std::string> v = node.attr_strings("value_strings");
    a.value = Tensor(DType::kString, {static_cast<int64_t>(v.size())});
    a.value.strings() = v;
  }
  return a;
}

Status constant(exec::KernelContext& ctx, const ConstantAttrs& attrs) {
  ctx.set_output(0, attrs.value.clone());  // the caller may write into its outputs
  return Status::ok();
}

// ConstantOfShape's one-element `value` (float 0 when absent).
struct ConstantOfShapeAttrs {
  Tensor value;
};

Result<ConstantOfShapeAttrs> prepare_constant_of_shape(const ir::Node& node, int64_t) {
  ConstantOfShapeAttrs a{Tensor::scalar<float>(DType::kFloat, 0.0f)};
  if (node.has_attr("value")) {
    QONNX_ASSIGN_OR_RETURN(a.value, node.attr_tensor("value"));
    if (a.value.numel() != 1)
      return Status(Code::kInvalidModel, fmt::format("attribute 'value' must hold one element, got {}", a.value.numel()));
  }
  return a;
}

Status constant_of_shape(exec::KernelContext& ctx, const ConstantOfShapeAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* shape, ctx.required(0, "input"));
  auto dims = read_ints(*shape);
  if (!dims || shape->rank() > 1)
    return ctx.input_error(Code::kInvalidModel, 0, "shape must be a 1-D int64 tensor, got {} {}", dtype_name(shape->dtype()),
                           dims_to_string(shape->dims()));
  for (int64_t d : *dims)
    if (d < 0) return ctx.input_error(Code::kInvalidModel, 0, "shape {} has a negative dim", dims_to_string(*dims));
  const Tensor& value = attrs.value;
  QONNX_RETURN_IF_ERROR(check_output_dims(ctx, *dims, value.dtype()));
  Tensor out(value.dtype(), *dims);
  const ElementCopier copier(value, out);
  for (int64_t i = 0; i < out.numel(); ++i) copier.copy(i, 0);
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

Status range(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* start, ctx.required(0, "start"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* limit, ctx.required(1, "limit"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* delta, ctx.required(2, "delta"));
  for (size_t i = 0; i < 3; ++i) {
    const Tensor* t = ctx.input(i);
    if (t->numel() != 1 || t->rank() > 1) return ctx.input_error(Code::kInvalidModel, i, "must be a scalar, got shape {}", dims_to_string(t->dims()));
    if (t->dtype() != start->dtype())
      return ctx.input_error(Code::kInvalidModel, i, "type {} differs from start's {}", dtype_name(t->dtype()), dtype_name(start->dtype()));
  }
  Status st;
  bool ok = exec::visit_dtype(start->dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
      const T s = start->data<T>()[0], l = limit->data<T>()[0], d = delta->data<T>()[0];
      if (d == 0) {
        st = ctx.input_error(Code::kInvalidModel, 2, "delta must not be zero");
        return;
      }
      // Element count max(ceil((limit - start) / delta), 0), computed in double as the spec does.
      const double count = std::ceil((static_cast<double>(l) - static_cast<double>(s)) / static_cast<double>(d));
      if (!(count < 1e15)) {
        st = ctx.error(Code::kInvalidModel, "Range would produce too many elements ({})", count);
        return;
      }
      const int64_t n = count > 0 ? static_cast<int64_t>(count) : 0;
      st = check_output_dims(ctx, {n}, start->dtype());
      if (!st.is_ok()) return;
      Tensor out(start->dtype(), {n});
      T* o = out.data<T>();
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(s + static_cast<T>(i) * d);
      ctx.set_output(0, std::move(out));
    } else {
      st = ctx.error(Code::kUnsupported, "Range on {} is not supported", dtype_name(start->dtype()));
    }
  });
  if (!ok) return ctx.error(Code::kUnsupported, "Range on {} is not supported", dtype_name(start->dtype()));
  return st;
}

// EyeLike's output type (the input's when absent) and diagonal k, parsed once per node.
struct EyeLikeAttrs {
  std::optional<DType> dtype;
  int64_t k;
};

Status check_eye_like_dtype(DType dtype) {
  if (dtype == DType::kString || dtype == DType::kComplex64 || dtype == DType::kComplex128)
    return Status(Code::kUnsupported, fmt::format("EyeLike to {} is not supported", dtype_name(dtype)));
  return Status::ok();
}

Result<EyeLikeAttrs> eye_like_attrs(const ir::Node& node, int64_t) {
  EyeLikeAttrs a{std::nullopt, 0};
  QONNX_ASSIGN_OR_RETURN(a.k, int_attr(node, "k", 0));
  if (node.has_attr("dtype")) {
    QONNX_ASSIGN_OR_RETURN(const int64_t dtype_attr, int_attr(node, "dtype", 0));
    if (dtype_attr < 0 || dtype_attr > INT32_MAX || !dtype_known(static_cast<int32_t>(dtype_attr)))
      return Status(Code::kInvalidModel, fmt::format("unknown dtype {}", dtype_attr));
    a.dtype = static_cast<DType>(dtype_attr);
    QONNX_RETURN_IF_ERROR(check_eye_like_dtype(*a.dtype));
  }
  return a;
}

Status eye_like(exec::KernelContext& ctx, const EyeLikeAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "input"));
  if (x->rank() != 2) return ctx.input_error(Code::kInvalidModel, 0, "input must be 2-D, got {}", dims_to_string(x->dims()));
  const DType dtype = attrs.dtype.value_or(x->dtype());
  const int64_t k = attrs.k;
  QONNX_RETURN_IF_ERROR(check_eye_like_dtype(dtype));
  Tensor out(dtype, x->dims());
  QONNX_ASSIGN_OR_RETURN(const Tensor one, exec::cast_tensor(Tensor::scalar<float>(DType::kFloat, 1.0f), dtype));
  const ElementCopier copier(one, out);
  const int64_t rows = x->dim(0), cols = x->dim(1);
  for (int64_t i = 0; i < rows; ++i) {
    // k can be any int64: compare without forming i + k when it could overflow.
    if (k >= cols || k < -rows) break;
    const int64_t j = i + k;
    if (j >= 0 && j < cols) copier.copy(i * cols + j, 0);
  }
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_generator_kernels(exec::KernelRegistry& r) {
  r.add("", "Constant", {1, 11}, exec::typed_kernel<ConstantAttrs, prepare_constant<false>, constant>());
  r.add("", "Constant", {12, exec::kNoUpperVersion}, exec::typed_kernel<ConstantAttrs, prepare_constant<true>, constant>());
  r.add("", "ConstantOfShape", {9, exec::kNoUpperVersion},
        exec::typed_kernel<ConstantOfShapeAttrs, prepare_constant_of_shape, constant_of_shape>());
  r.add("", "Range", {11, exec::kNoUpperVersion}, range);
  r.add("", "EyeLike", {9, exec::kNoUpperVersion}, exec::typed_kernel<EyeLikeAttrs, eye_like_attrs, eye_like>());
}

}  // namespace qonnx::kernels
