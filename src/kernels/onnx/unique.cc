// Unique (11): the distinct elements of X (no axis: flattened) or the distinct slices along `axis`,
// in ascending order (sorted = 1, slices compare lexicographically in row-major order) or in the order
// of their first occurrence (sorted = 0). Outputs: Y, indices (first occurrence of each in X),
// inverse_indices (for every element/slice of X, its position in Y) and counts. Float NaNs are equal
// to each other and sort after every number; -0 equals 0 (as numpy.unique).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "kernels/common/attr_check.h"
#include "kernels/common/axis.h"
#include "kernels/common/element_copy.h"
#include "kernels/onnx/elementwise_common.h"
#include "kernels/onnx/onnx_kernels.h"

namespace qonnx::kernels {
namespace {

struct UniqueAttrs {
  std::optional<int64_t> axis;
  bool sorted = true;
};

Result<UniqueAttrs> prepare_unique(const ir::Node& node, int64_t) {
  UniqueAttrs a;
  if (node.has_attr("axis")) {
    QONNX_ASSIGN_OR_RETURN(const int64_t axis, int_attr(node, "axis", 0));
    a.axis = axis;
  }
  QONNX_ASSIGN_OR_RETURN(a.sorted, flag_attr(node, "sorted", true));
  return a;
}

// Three-way comparison of two elements: NaNs equal each other and follow every number.
template <typename C>
int compare_values(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    const bool na = std::isnan(a), nb = std::isnan(b);
    if (na || nb) return na == nb ? 0 : (na ? 1 : -1);
  }
  return a < b ? -1 : (b < a ? 1 : 0);
}

Status unique(exec::KernelContext& ctx, const UniqueAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "X"));
  const DType dt = x->dtype();
  if (dtype_is_float8(dt) || dtype_is_4bit(dt) || dt == DType::kComplex64 || dt == DType::kComplex128)
    return unsupported_type(ctx, 0, dt);
  const int64_t rank = static_cast<int64_t>(x->rank());
  int64_t outer = 1, count = x->numel(), inner = 1, axis = -1;
  if (attrs.axis) {
    if (!normalize_axis(*attrs.axis, rank, &axis))
      return ctx.error(Code::kInvalidModel, "axis {} is out of range for an input of rank {}", *attrs.axis, rank);
    count = x->dim(static_cast<size_t>(axis));
    for (int64_t d = 0; d < axis; ++d) outer *= x->dim(static_cast<size_t>(d));
    for (int64_t d = axis + 1; d < rank; ++d) inner *= x->dim(static_cast<size_t>(d));
  }
  // Element j (row-major over the other dims) of slice s.
  auto at = [&](int64_t s, int64_t j) { return (j / inner * count + s) * inner + j % inner; };
  const int64_t slice_len = outer * inner;

  // Slice indices in ascending order of their contents (stable: equal slices keep their order).
  std::vector<int64_t> order(static_cast<size_t>(count));
  std::iota(order.begin(), order.end(), 0);
  std::vector<int64_t> group_start;  // per group of equal slices, its first position in `order`
  auto sort_by = [&](auto cmp) {
    std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) { return cmp(p, q) < 0; });
    for (size_t i = 0; i < order.size(); ++i)
      if (i == 0 || cmp(order[i - 1], order[i]) != 0) group_start.push_back(static_cast<int64_t>(i));
  };
  if (dt == DType::kString) {
    const std::vector<std::string>& v = x->strings();
    sort_by([&](int64_t p, int64_t q) {
      for (int64_t j = 0; j < slice_len; ++j) {
        const int c = v[static_cast<size_t>(at(p, j))].compare(v[static_cast<size_t>(at(q, j))]);
        if (c != 0) return c < 0 ? -1 : 1;
      }
      return 0;
    });
  } else {
    exec::visit_dtype(dt, [&](auto tag) {
      using T = decltype(tag);
      const T* v = x->data<T>();
      sort_by([&](int64_t p, int64_t q) {
        for (int64_t j = 0; j < slice_len; ++j) {
          const int c = compare_values(load(v[at(p, j)]), load(v[at(q, j)]));
          if (c != 0) return c;
        }
        return 0;
      });
    });
  }
  const int64_t groups = static_cast<int64_t>(group_start.size());
  // Per group: first occurrence (the smallest slice index: the sort is stable), size.
  std::vector<int64_t> first(static_cast<size_t>(groups)), sizes(static_cast<size_t>(groups));
  std::vector<int64_t> group_of(static_cast<size_t>(count));
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t b = group_start[static_cast<size_t>(g)];
    const int64_t e = g + 1 < groups ? group_start[static_cast<size_t>(g + 1)] : count;
    first[static_cast<size_t>(g)] = order[static_cast<size_t>(b)];
    sizes[static_cast<size_t>(g)] = e - b;
    for (int64_t i = b; i < e; ++i) group_of[static_cast<size_t>(order[static_cast<size_t>(i)])] = g;
  }
  // Output position of each group: sorted order, or by first occurrence.
  std::vector<int64_t> out_group(static_cast<size_t>(groups));
  std::iota(out_group.begin(), out_group.end(), 0);
  if (!attrs.sorted)
    std::sort(out_group.begin(), out_group.end(), [&](int64_t p, int64_t q) { return first[static_cast<size_t>(p)] < first[static_cast<size_t>(q)]; });
  std::vector<int64_t> position(static_cast<size_t>(groups));
  for (int64_t i = 0; i < groups; ++i) position[static_cast<size_t>(out_group[static_cast<size_t>(i)])] = i;

  Dims y_dims{groups};
  if (attrs.axis) {
    y_dims = x->dims();
    y_dims[static_cast<size_t>(axis)] = groups;
  }
  Tensor y(dt, y_dims);
  {
    ElementCopier copy(*x, y);
    for (int64_t i = 0; i < groups; ++i) {
      const int64_t s = first[static_cast<size_t>(out_group[static_cast<size_t>(i)])];
      for (int64_t j = 0; j < slice_len; ++j) copy.copy((j / inner * groups + i) * inner + j % inner, at(s, j));
    }
  }
  ctx.set_output(0, std::move(y));
  auto vec = [](const std::vector<int64_t>& v) {
    Tensor t(DType::kInt64, {static_cast<int64_t>(v.size())});
    std::copy(v.begin(), v.end(), t.data<int64_t>());
    return t;
  };
  std::vector<int64_t> indices(static_cast<size_t>(groups)), counts(static_cast<size_t>(groups)), inverse(static_cast<size_t>(count));
  for (int64_t i = 0; i < groups; ++i) {
    indices[static_cast<size_t>(i)] = first[static_cast<size_t>(out_group[static_cast<size_t>(i)])];
    counts[static_cast<size_t>(i)] = sizes[static_cast<size_t>(out_group[static_cast<size_t>(i)])];
  }
  for (int64_t s = 0; s < count; ++s) inverse[static_cast<size_t>(s)] = position[static_cast<size_t>(group_of[static_cast<size_t>(s)])];
  if (ctx.num_outputs() > 1) ctx.set_output(1, vec(indices));
  if (ctx.num_outputs() > 2) ctx.set_output(2, vec(inverse));
  if (ctx.num_outputs() > 3) ctx.set_output(3, vec(counts));
  return Status::ok();
}

}  // namespace

void register_unique_kernels(exec::KernelRegistry& r) {
  r.add("", "Unique", {11, exec::kNoUpperVersion}, exec::typed_kernel<UniqueAttrs, prepare_unique, unique>());
}

}  // namespace qonnx::kernels
