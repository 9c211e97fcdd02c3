// Indexed data movement: Gather, GatherElements, GatherND, ScatterElements (and the older
// Scatter), ScatterND, OneHot, Compress, NonZero. Every index is range-checked before use.
#include <optional>
#include <type_traits>

#include "qonnx/exec/dtype_dispatch.h"
#include "kernels/common/attr_check.h"
#include "kernels/common/axes.h"
#include "kernels/common/compute_type.h"
#include "kernels/common/element_copy.h"
#include "kernels/onnx/onnx_kernels.h"

namespace qonnx::kernels {
namespace {

// Index tensor #i as int64 values.
Result<std::vector<int64_t>> index_values(const exec::KernelContext& ctx, size_t i) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* t, ctx.required(i, "indices"));
  auto v = read_ints(*t);
  if (!v) return ctx.input_error(Code::kInvalidModel, i, "indices must be int32 or int64, got {}", dtype_name(t->dtype()));
  return *v;
}

// Maps index v into [0, dim) (negative counts from the end) or reports it.
Status wrap_index(const exec::KernelContext& ctx, size_t input, int64_t* v, int64_t dim) {
  if (*v < -dim || *v >= dim)
    return ctx.input_error(Code::kInvalidModel, input, "index {} is out of range for an axis of size {}", *v, dim);
  if (*v < 0) *v += dim;
  return Status::ok();
}

// The `axis` attribute (default 0; Compress: absent means flatten the input).
struct AxisAttrs {
  std::optional<int64_t> axis;
};

Result<AxisAttrs> prepare_axis(const ir::Node& node, int64_t) {
  AxisAttrs a;
  if (node.has_attr("axis")) {
    QONNX_ASSIGN_OR_RETURN(a.axis, int_attr(node, "axis", 0));
  }
  return a;
}

Result<int64_t> normalized_axis(const exec::KernelContext& ctx, const AxisAttrs& attrs, int64_t rank) {
  const int64_t given = attrs.axis.value_or(0);
  int64_t axis = 0;
  if (!normalize_axis(given, rank, &axis)) return ctx.error(Code::kInvalidModel, "axis {} is out of range for rank {}", given, rank);
  return axis;
}

int64_t prod(const Dims& d, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= d[i];
  return p;
}

Status gather(exec::KernelContext& ctx, const AxisAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "data"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* ind, ctx.required(1, "indices"));
  if (x->rank() == 0) return ctx.input_error(Code::kInvalidModel, 0, "data must have rank >= 1");
  QONNX_ASSIGN_OR_RETURN(int64_t axis, normalized_axis(ctx, attrs, static_cast<int64_t>(x->rank())));
  QONNX_ASSIGN_OR_RETURN(std::vector<int64_t> idx, index_values(ctx, 1));
  const size_t ax = static_cast<size_t>(axis);
  const int64_t dim = x->dim(ax);
  for (int64_t& v : idx) QONNX_RETURN_IF_ERROR(wrap_index(ctx, 1, &v, dim));
  Dims out_dims(x->dims().begin(), x->dims().begin() + axis);
  out_dims.insert(out_dims.end(), ind->dims().begin(), ind->dims().end());
  out_dims.insert(out_dims.end(), x->dims().begin() + axis + 1, x->dims().end());
  QONNX_RETURN_IF_ERROR(check_output_dims(ctx, out_dims, x->dtype()));
  const int64_t outer = prod(x->dims(), 0, ax), inner = prod(x->dims(), ax + 1, x->rank());
  const int64_t n = static_cast<int64_t>(idx.size());
  Tensor out(x->dtype(), out_dims);
  const ElementCopier copier(*x, out);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < n; ++j) copier.copy_run((o * n + j) * inner, (o * dim + idx[static_cast<size_t>(j)]) * inner, inner);
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

// Calls f(position, offset into `data`) for each element of `ind_dims` (same rank as data), where the
// offset replaces the coordinate on `axis` with the (wrapped) index value at that position.
template <typename F>
Status for_each_element_index(const exec::KernelContext& ctx, size_t input, const Dims& data_dims, const Dims& ind_dims,
                              int64_t axis, std::vector<int64_t>& idx, F&& f) {
  const size_t rank = data_dims.size();
  for (size_t a = 0; a < rank; ++a)
    if (a != static_cast<size_t>(axis) && ind_dims[a] > data_dims[a])
      return ctx.input_error(Code::kInvalidModel, input, "indices shape {} exceeds data shape {} on axis {}", dims_to_string(ind_dims),
                             dims_to_string(data_dims), a);
  const std::vector<int64_t> strides = row_major_strides(data_dims);
  std::vector<int64_t> counter(rank, 0);
  const int64_t total = static_cast<int64_t>(idx.size());
  for (int64_t p = 0; p < total; ++p) {
    int64_t& v = idx[static_cast<size_t>(p)];
    QONNX_RETURN_IF_ERROR(wrap_index(ctx, input, &v, data_dims[static_cast<size_t>(axis)]));
    int64_t off = 0;
    for (size_t a = 0; a < rank; ++a) off += (a == static_cast<size_t>(axis) ? v : counter[a]) * strides[a];
    f(p, off);
    for (size_t a = rank; a-- > 0;) {
      if (++counter[a] < ind_dims[a]) break;
      counter[a] = 0;
    }
  }
  return Status::ok();
}

Status gather_elements(exec::KernelContext& ctx, const AxisAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "data"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* ind, ctx.required(1, "indices"));
  if (x->rank() == 0 || ind->rank() != x->rank())
    return ctx.input_error(Code::kInvalidModel, 1, "indices rank {} must equal data rank {} (>= 1)", ind->rank(), x->rank());
  QONNX_ASSIGN_OR_RETURN(int64_t axis, normalized_axis(ctx, attrs, static_cast<int64_t>(x->rank())));
  QONNX_ASSIGN_OR_RETURN(std::vector<int64_t> idx, index_values(ctx, 1));
  Tensor out(x->dtype(), ind->dims());
  const ElementCopier copier(*x, out);
  QONNX_RETURN_IF_ERROR(for_each_element_index(ctx, 1, x->dims(), ind->dims(), axis, idx,
                                               [&](int64_t p, int64_t off) { copier.copy(p, off); }));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

// GatherND-11 has no batch dimensions; GatherND-12 reads `batch_dims`.
struct GatherNdAttrs {
  int64_t batch_dims = 0;
};

template <bool BatchDims>
Result<GatherNdAttrs> prepare_gather_nd(const ir::Node& node, int64_t) {
  GatherNdAttrs a;
  if (BatchDims) {
    QONNX_ASSIGN_OR_RETURN(a.batch_dims, int_attr(node, "batch_dims", 0));
  }
  return a;
}

Status gather_nd(exec::KernelContext& ctx, const GatherNdAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "data"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* ind, ctx.required(1, "indices"));
  QONNX_ASSIGN_OR_RETURN(std::vector<int64_t> idx, index_values(ctx, 1));
  const int64_t b = attrs.batch_dims;
  const int64_t r = static_cast<int64_t>(x->rank()), q = static_cast<int64_t>(ind->rank());
  if (r < 1 || q < 1) return ctx.error(Code::kInvalidModel, "data and indices must have rank >= 1");
  if (b < 0 || b >= std::min(r, q)) return ctx.error(Code::kInvalidModel, "batch_dims {} must be in [0, min(rank(data), rank(indices)))", b);
  const int64_t k = ind->dims().back();
  if (k < 1 || k > r - b)
    return ctx.input_error(Code::kInvalidModel, 1, "last indices dim {} must be in [1, {}]", k, r - b);
  for (int64_t i = 0; i < b; ++i)
    if (ind->dim(static_cast<size_t>(i)) != x->dim(static_cast<size_t>(i)))
      return ctx.input_error(Code::kInvalidModel, 1, "batch dims of indices {} differ from data's {}", dims_to_string(ind->dims()),
                             dims_to_string(x->dims()));
  Dims out_dims(ind->dims().begin(), ind->dims().end() - 1);
  out_dims.insert(out_dims.end(), x->dims().begin() + b + k, x->dims().end());
  QONNX_RETURN_IF_ERROR(check_output_dims(ctx, out_dims, x->dtype()));
  const size_t ub = static_cast<size_t>(b), uk = static_cast<size_t>(k);
  const int64_t batches = prod(x->dims(), 0, ub);
  const int64_t tuples = prod(ind->dims(), ub, ind->rank() - 1);
  const int64_t slice = prod(x->dims(), ub + uk, x->rank());
  const int64_t batch_stride = prod(x->dims(), ub, x->rank());
  Tensor out(x->dtype(), out_dims);
  const ElementCopier copier(*x, out);
  for (int64_t bi = 0; bi < batches; ++bi) {
    for (int64_t t = 0; t < tuples; ++t) {
      const int64_t tuple = bi * tuples + t;
      int64_t off = 0;
      for (size_t j = 0; j < uk; ++j) {
        int64_t& v = idx[static_cast<size_t>(tuple * k) + j];
        QONNX_RETURN_IF_ERROR(wrap_index(ctx, 1, &v, x->dim(ub + j)));
        off = off * x->dim(ub + j) + v;
      }
      copier.copy_run(tuple * slice, bi * batch_stride + off * slice, slice);
    }
  }
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

// out[target] = combine(out[target], updates[source]) for a scatter reduction.
class Scatterer {
 public:
  Scatterer(const Tensor& updates, Tensor& out, std::string reduction)
      : updates_(updates), out_(out), copier_(updates, out), reduction_(std::move(reduction)) {}

  Status check(const exec::KernelContext& ctx) const {
    if (reduction_ == "none") return Status::ok();
    if (out_.dtype() == DType::kString || out_.dtype() == DType::kBool || !exec::visit_dtype(out_.dtype(), [](auto) {}))
      return ctx.error(Code::kUnsupported, "reduction '{}' on {} is not supported", reduction_, dtype_name(out_.dtype()));
    return Status::ok();
  }

  void apply(int64_t target, int64_t source, int64_t n) const {
    if (reduction_ == "none") {
      copier_.copy_run(target, source, n);
      return;
    }
    exec::visit_dtype(out_.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (!std::is_same_v<T, bool>) {
        T* o = out_.data<T>() + target;
        const T* u = updates_.data<T>() + source;
        for (int64_t i = 0; i < n; ++i) {
          auto a = load(o[i]), b = load(u[i]);
          if (reduction_ == "add") a = a + b;
          else if (reduction_ == "mul") a = a * b;
          else if (reduction_ == "max") a = b > a ? b : a;
          else a = b < a ? b : a;
          o[i] = store<T>(a);
        }
      }
    });
  }

 private:
  const Tensor& updates_;
  Tensor& out_;
  ElementCopier copier_;
  std::string reduction_;
};

// Scatter's combining of updates: none before 16 (and in Scatter); add and mul from 16; max and min from 18.
enum class Reductions { kNone, kAddMul, kAddMulMaxMin };
struct ScatterAttrs {
  AxisAttrs axis;  // ScatterElements
  std::string reduction = "none";
};

template <Reductions R>
Result<ScatterAttrs> prepare_scatter(const ir::Node& node, int64_t version) {
  ScatterAttrs a;
  QONNX_ASSIGN_OR_RETURN(a.axis, prepare_axis(node, version));
  if (R == Reductions::kNone) return a;
  QONNX_ASSIGN_OR_RETURN(a.reduction, string_attr(node, "reduction", "none"));
  if (R == Reductions::kAddMul) QONNX_RETURN_IF_ERROR(check_one_of("reduction", a.reduction, {"none", "add", "mul"}));
  else QONNX_RETURN_IF_ERROR(check_one_of("reduction", a.reduction, {"none", "add", "mul", "max", "min"}));
  return a;
}

Status scatter_elements(exec::KernelContext& ctx, const ScatterAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "data"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* ind, ctx.required(1, "indices"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* upd, ctx.required(2, "updates"));
  if (x->rank() == 0 || ind->rank() != x->rank())
    return ctx.input_error(Code::kInvalidModel, 1, "indices rank {} must equal data rank {} (>= 1)", ind->rank(), x->rank());
  if (upd->dims() != ind->dims())
    return ctx.input_error(Code::kInvalidModel, 2, "updates shape {} differs from indices shape {}", dims_to_string(upd->dims()),
                           dims_to_string(ind->dims()));
  if (upd->dtype() != x->dtype())
    return ctx.input_error(Code::kInvalidModel, 2, "type {} differs from data's {}", dtype_name(upd->dtype()), dtype_name(x->dtype()));
  QONNX_ASSIGN_OR_RETURN(int64_t axis, normalized_axis(ctx, attrs.axis, static_cast<int64_t>(x->rank())));
  QONNX_ASSIGN_OR_RETURN(std::vector<int64_t> idx, index_values(ctx, 1));
  Tensor out = x->clone();
  const Scatterer scatter(*upd, out, attrs.reduction);
  QONNX_RETURN_IF_ERROR(scatter.check(ctx));
  QONNX_RETURN_IF_ERROR(for_each_element_index(ctx, 1, x->dims(), ind->dims(), axis, idx,
                                               [&](int64_t p, int64_t off) { scatter.apply(off, p, 1); }));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

Status scatter_nd(exec::KernelContext& ctx, const ScatterAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "data"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* ind, ctx.required(1, "indices"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* upd, ctx.required(2, "updates"));
  QONNX_ASSIGN_OR_RETURN(std::vector<int64_t> idx, index_values(ctx, 1));
  const int64_t r = static_cast<int64_t>(x->rank()), q = static_cast<int64_t>(ind->rank());
  if (r < 1 || q < 1) return ctx.error(Code::kInvalidModel, "data and indices must have rank >= 1");
  const int64_t k = ind->dims().back();
  if (k < 1 || k > r) return ctx.input_error(Code::kInvalidModel, 1, "last indices dim {} must be in [1, {}]", k, r);
  Dims want(ind->dims().begin(), ind->dims().end() - 1);
  want.insert(want.end(), x->dims().begin() + k, x->dims().end());
  if (upd->dims() != want)
    return ctx.input_error(Code::kInvalidModel, 2, "updates shape {} should be {}", dims_to_string(upd->dims()), dims_to_string(want));
  if (upd->dtype() != x->dtype())
    return ctx.input_error(Code::kInvalidModel, 2, "type {} differs from data's {}", dtype_name(upd->dtype()), dtype_name(x->dtype()));
  Tensor out = x->clone();
  const Scatterer scatter(*upd, out, attrs.reduction);
  QONNX_RETURN_IF_ERROR(scatter.check(ctx));
  const int64_t tuples = prod(ind->dims(), 0, ind->rank() - 1);
  const int64_t slice = prod(x->dims(), static_cast<size_t>(k), x->rank());
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t off = 0;
    for (size_t j = 0; j < static_cast<size_t>(k); ++j) {
      int64_t& v = idx[static_cast<size_t>(t * k) + j];
      QONNX_RETURN_IF_ERROR(wrap_index(ctx, 1, &v, x->dim(j)));
      off = off * x->dim(j) + v;
    }
    scatter.apply(off * slice, t * slice, slice);
  }
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

// OneHot's axis defaults to -1 (the new innermost axis).
struct OneHotAttrs {
  int64_t axis;
};

Result<OneHotAttrs> prepare_one_hot(const ir::Node& node, int64_t) {
  QONNX_ASSIGN_OR_RETURN(const int64_t axis, int_attr(node, "axis", -1));
  return OneHotAttrs{axis};
}

Status one_hot(exec::KernelContext& ctx, const OneHotAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* ind, ctx.required(0, "indices"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* depth_t, ctx.required(1, "depth"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* values, ctx.required(2, "values"));
  if (depth_t->numel() != 1 || !exec::visit_dtype(depth_t->dtype(), [](auto) {}))
    return ctx.input_error(Code::kInvalidModel, 1, "depth must be one number");
  if (values->numel() != 2) return ctx.input_error(Code::kInvalidModel, 2, "values must hold [off_value, on_value]");
  if (!exec::visit_dtype(ind->dtype(), [](auto) {}))
    return ctx.input_error(Code::kInvalidModel, 0, "indices must be numeric, got {}", dtype_name(ind->dtype()));
  const double depth_d = exec::element_as_double(*depth_t, 0);
  if (!(depth_d >= 0 && depth_d < 1e12)) return ctx.input_error(Code::kInvalidModel, 1, "depth {} is invalid", depth_d);
  const int64_t depth = static_cast<int64_t>(depth_d);
  const int64_t out_rank = static_cast<int64_t>(ind->rank()) + 1;
  int64_t axis = 0;
  if (!normalize_axis(attrs.axis, out_rank, &axis))
    return ctx.error(Code::kInvalidModel, "axis {} is out of range for rank {}", attrs.axis, out_rank);
  Dims out_dims = ind->dims();
  out_dims.insert(out_dims.begin() + axis, depth);
  QONNX_RETURN_IF_ERROR(check_output_dims(ctx, out_dims, values->dtype()));
  const int64_t outer = prod(ind->dims(), 0, static_cast<size_t>(axis));
  const int64_t inner = prod(ind->dims(), static_cast<size_t>(axis), ind->rank());
  Tensor out(values->dtype(), out_dims);
  const ElementCopier copier(*values, out);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      // Indices outside [-depth, depth) give an all-off row; fractional ones truncate.
      double v = exec::element_as_double(*ind, o * inner + i);
      if (v < 0) v += static_cast<double>(depth);
      const int64_t hot = (v >= 0 && v < static_cast<double>(depth)) ? static_cast<int64_t>(v) : -1;
      for (int64_t d = 0; d < depth; ++d) copier.copy((o * depth + d) * inner + i, d == hot ? 1 : 0);
    }
  }
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

Status compress(exec::KernelContext& ctx, const AxisAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "input"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* cond, ctx.required(1, "condition"));
  if (cond->dtype() != DType::kBool || cond->rank() != 1)
    return ctx.input_error(Code::kInvalidModel, 1, "condition must be a 1-D bool tensor, got {} {}", dtype_name(cond->dtype()),
                           dims_to_string(cond->dims()));
  const bool has_axis = attrs.axis.has_value();
  const Tensor flat = has_axis ? *x : x->reshaped({x->numel()});
  if (flat.rank() == 0) return ctx.input_error(Code::kInvalidModel, 0, "input must have rank >= 1 when an axis is given");
  QONNX_ASSIGN_OR_RETURN(int64_t axis, normalized_axis(ctx, attrs, static_cast<int64_t>(flat.rank())));
  const size_t ax = static_cast<size_t>(axis);
  const int64_t dim = flat.dim(ax);
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < cond->numel(); ++i) {
    if (!cond->data<bool>()[i]) continue;
    if (i >= dim) return ctx.input_error(Code::kInvalidModel, 1, "condition selects index {} of an axis of size {}", i, dim);
    keep.push_back(i);
  }
  Dims out_dims = flat.dims();
  out_dims[ax] = static_cast<int64_t>(keep.size());
  const int64_t outer = prod(flat.dims(), 0, ax), inner = prod(flat.dims(), ax + 1, flat.rank());
  Tensor out(x->dtype(), out_dims);
  const ElementCopier copier(flat, out);
  const int64_t n = static_cast<int64_t>(keep.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < n; ++j) copier.copy_run((o * n + j) * inner, (o * dim + keep[static_cast<size_t>(j)]) * inner, inner);
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

Status non_zero(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "X"));
  std::vector<int64_t> hits;
  if (x->dtype() == DType::kString) {
    for (int64_t i = 0; i < x->numel(); ++i)
      if (!x->strings()[static_cast<size_t>(i)].empty()) hits.push_back(i);
  } else {
    bool ok = exec::visit_dtype(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* p = x->data<T>();
      for (int64_t i = 0; i < x->numel(); ++i) {
        bool nz;
        if constexpr (is_half_storage_v<T>) nz = (p[i].bits & 0x7fff) != 0;
        else nz = p[i] != T(0);
        if (nz) hits.push_back(i);
      }
    });
    if (!ok) return ctx.error(Code::kUnsupported, "NonZero on {} is not supported", dtype_name(x->dtype()));
  }
  // A scalar is treated as a 1-D tensor of one element (as numpy does).
  const Dims dims = x->rank() == 0 ? Dims{1} : x->dims();
  const int64_t rank = static_cast<int64_t>(dims.size()), n = static_cast<int64_t>(hits.size());
  const std::vector<int64_t> strides = row_major_strides(dims);
  Tensor out(DType::kInt64, {rank, n});
  int64_t* o = out.data<int64_t>();
  for (int64_t j = 0; j < n; ++j) {
    int64_t rest = hits[static_cast<size_t>(j)];
    for (int64_t a = 0; a < rank; ++a) {
      o[a * n + j] = rest / strides[static_cast<size_t>(a)];
      rest %= strides[static_cast<size_t>(a)];
    }
  }
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_gather_scatter_kernels(exec::KernelRegistry& r) {
  constexpr int kLatest = exec::kNoUpperVersion;
  r.add("", "Gather", {1, kLatest}, exec::typed_kernel<AxisAttrs, prepare_axis, gather>());
  r.add("", "GatherElements", {11, kLatest}, exec::typed_kernel<AxisAttrs, prepare_axis, gather_elements>());
  r.add("", "GatherND", {11, 11}, exec::typed_kernel<GatherNdAttrs, prepare_gather_nd<false>, gather_nd>());
  r.add("", "GatherND", {12, kLatest}, exec::typed_kernel<GatherNdAttrs, prepare_gather_nd<true>, gather_nd>());
  // Scatter is deprecated from 11 (ScatterElements-11 replaces it); later opsets still run it.
  r.add("", "Scatter", {9, kLatest}, exec::typed_kernel<ScatterAttrs, prepare_scatter<Reductions::kNone>, scatter_elements>());
  r.add("", "ScatterElements", {11, 15}, exec::typed_kernel<ScatterAttrs, prepare_scatter<Reductions::kNone>, scatter_elements>());
  r.add("", "ScatterElements", {16, 17}, exec::typed_kernel<ScatterAttrs, prepare_scatter<Reductions::kAddMul>, scatter_elements>());
  r.add("", "ScatterElements", {18, kLatest},
        exec::typed_kernel<ScatterAttrs, prepare_scatter<Reductions::kAddMulMaxMin>, scatter_elements>());
  r.add("", "ScatterND", {11, 15}, exec::typed_kernel<ScatterAttrs, prepare_scatter<Reductions::kNone>, scatter_nd>());
  r.add("", "ScatterND", {16, 17}, exec::typed_kernel<ScatterAttrs, prepare_scatter<Reductions::kAddMul>, scatter_nd>());
  r.add("", "ScatterND", {18, kLatest}, exec::typed_kernel<ScatterAttrs, prepare_scatter<Reductions::kAddMulMaxMin>, scatter_nd>());
  r.add("", "OneHot", {9, kLatest}, exec::typed_kernel<OneHotAttrs, prepare_one_hot, one_hot>());
  r.add("", "Compress", {9, kLatest}, exec::typed_kernel<AxisAttrs, prepare_axis, compress>());
  r.add("", "NonZero", {9, kLatest}, non_zero);
}

}  // namespace qonnx::kernels
