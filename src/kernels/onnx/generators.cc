// Tensor generators: Constant, ConstantOfShape, Range, EyeLike.
#include <cmath>
#include <optional>
#include <type_traits>

#include "kernels/onnx/axes.h"
#include "kernels/onnx/element_copy.h"
#include "kernels/onnx/onnx_kernels.h"
#include "qonnx/exec/dtype_dispatch.h"

namespace qonnx::kernels {
namespace {

Status constant(exec::KernelContext& ctx) {
  int given = 0;
  for (const char* n : {"value", "sparse_value", "value_float", "value_floats", "value_int", "value_ints", "value_string",
                        "value_strings"})
    given += ctx.has_attr(n) ? 1 : 0;
  if (given != 1) return ctx.error(Code::kInvalidModel, "Constant needs exactly one value attribute, got {}", given);
  Tensor out;
  if (ctx.has_attr("value")) {
    QONNX_ASSIGN_OR_RETURN(out, ctx.node().attr_tensor("value"));
  } else if (ctx.has_attr("sparse_value")) {
    return ctx.error(Code::kUnsupported, "sparse_value constants are not supported");
  } else if (ctx.has_attr("value_float")) {
    out = Tensor::scalar<float>(DType::kFloat, ctx.attr_float("value_float", 0.0f));
  } else if (ctx.has_attr("value_int")) {
    out = Tensor::scalar<int64_t>(DType::kInt64, ctx.attr_int("value_int", 0));
  } else if (ctx.has_attr("value_floats")) {
    std::vector<float> v = ctx.attr_floats("value_floats");
    out = Tensor(DType::kFloat, {static_cast<int64_t>(v.size())});
    std::copy(v.begin(), v.end(), out.data<float>());
  } else if (ctx.has_attr("value_ints")) {
    std::vector<int64_t> v = ctx.attr_ints("value_ints");
    out = Tensor(DType::kInt64, {static_cast<int64_t>(v.size())});
    std::copy(v.begin(), v.end(), out.data<int64_t>());
  } else if (ctx.has_attr("value_string")) {
    out = Tensor(DType::kString, {});
    out.strings()[0] = ctx.attr_string("value_string", "");
  } else {
    std::vector<std::string> v = ctx.node().attr_strings("value_strings");
    out = Tensor(DType::kString, {static_cast<int64_t>(v.size())});
    out.strings() = v;
  }
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

Status constant_of_shape(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* shape, ctx.required(0, "input"));
  auto dims = read_ints(*shape);
  if (!dims || shape->rank() > 1)
    return ctx.input_error(Code::kInvalidModel, 0, "shape must be a 1-D int64 tensor, got {} {}", dtype_name(shape->dtype()),
                           dims_to_string(shape->dims()));
  for (int64_t d : *dims)
    if (d < 0) return ctx.input_error(Code::kInvalidModel, 0, "shape {} has a negative dim", dims_to_string(*dims));
  Tensor value = Tensor::scalar<float>(DType::kFloat, 0.0f);
  if (ctx.has_attr("value")) {
    QONNX_ASSIGN_OR_RETURN(value, ctx.node().attr_tensor("value"));
    if (value.numel() != 1) return ctx.error(Code::kInvalidModel, "attribute 'value' must hold one element, got {}", value.numel());
  }
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
  EyeLikeAttrs a{std::nullopt, node.attr_int("k", 0)};
  if (node.has_attr("dtype")) {
    const int64_t dtype_attr = node.attr_int("dtype", 0);
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
  r.add("", "Constant", 1, constant);
  r.add("", "Constant", 12, constant);
  r.add("", "ConstantOfShape", 9, constant_of_shape);
  r.add("", "Range", 11, range);
  r.add("", "EyeLike", {9, exec::kNoUpperVersion}, exec::typed_kernel<EyeLikeAttrs, eye_like_attrs, eye_like>());
}

}  // namespace qonnx::kernels
