// Reductions (ReduceSum ... ReduceLogSumExp), ArgMax/ArgMin, CumSum and TopK.
// Floats accumulate in their compute type (float32 for float32 and 16-bit floats, as numpy does),
// float32 in onnxruntime's order (docs/ort-arithmetic.md); integers accumulate exactly with
// wrap-around and are converted back.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <type_traits>

#include "qonnx/exec/broadcast.h"
#include "qonnx/exec/dtype_dispatch.h"
#include "kernels/common/attr_check.h"
#include "kernels/common/axes.h"
#include "kernels/common/compute_type.h"
#include "kernels/common/element_copy.h"
#include "kernels/onnx/onnx_kernels.h"
#include "kernels/onnx/ort_arithmetic.h"

namespace qonnx::kernels {
namespace {

enum class Reduce { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

// Opset from which the op takes axes as input #1 (and has noop_with_empty_axes).
int axes_input_since(Reduce k) { return k == Reduce::kSum ? 13 : 18; }

// A node's attributes for its version, parsed once at plan time.
struct ReduceAttrs {
  bool axes_from_input = false;  // opset >= axes_input_since: input #1, else the `axes` attribute
  std::vector<int64_t> axes;     // the attribute's (before axes_input_since)
  bool keepdims = true;
  bool noop_with_empty_axes = false;
  bool bools = false;  // ReduceMax/ReduceMin from opset 20: false < true
};

template <bool AxesFromInput, bool Bools>
Result<ReduceAttrs> prepare_reduce(const ir::Node& node, int64_t) {
  ReduceAttrs a;
  a.axes_from_input = AxesFromInput;
  if (!AxesFromInput) {
    QONNX_ASSIGN_OR_RETURN(a.axes, ints_attr(node, "axes"));
  }
  QONNX_ASSIGN_OR_RETURN(a.keepdims, flag_attr(node, "keepdims", true));
  if (AxesFromInput) {
    QONNX_ASSIGN_OR_RETURN(a.noop_with_empty_axes, flag_attr(node, "noop_with_empty_axes", false));
  }
  a.bools = Bools;
  return a;
}

template <typename T>
constexpr bool kNumeric = !std::is_same_v<T, bool>;

// Accumulator: the compute type for floats, a wrapping 64-bit unsigned for integers.
template <typename T>
using Acc = std::conditional_t<std::is_integral_v<T>, uint64_t, Compute<T>>;

template <typename T>
Acc<T> to_acc(T v) {
  if constexpr (std::is_integral_v<T>) return static_cast<uint64_t>(static_cast<int64_t>(v));
  else return load(v);
}

// The signed value an integer accumulator holds, as double (for Mean, L2, logs).
template <typename T>
double acc_as_double(Acc<T> a) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) return static_cast<double>(static_cast<int64_t>(a));
  else return static_cast<double>(a);
}

template <typename T>
T from_acc(Acc<T> a) {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(a);
  else return store<T>(a);
}

template <typename T>
T from_real(double v) {
  // Integers: truncate like numpy's astype; non-finite or out-of-range values (mean of nothing,
  // log of 0) give 0 rather than undefined behaviour.
  if constexpr (std::is_integral_v<T>) return std::isfinite(v) && std::fabs(v) < 9.2e18 ? static_cast<T>(static_cast<int64_t>(v)) : T(0);
  else return store<T>(static_cast<Compute<T>>(v));
}

template <typename T>
Compute<T> lowest() {
  if constexpr (std::is_integral_v<T>) return std::numeric_limits<T>::lowest();
  else return -std::numeric_limits<Compute<T>>::infinity();
}
template <typename T>
Compute<T> highest() {
  if constexpr (std::is_integral_v<T>) return std::numeric_limits<T>::max();
  else return std::numeric_limits<Compute<T>>::infinity();
}

template <typename V>
bool is_nan(V v) {
  if constexpr (std::is_floating_point_v<V>) return std::isnan(v);
  else return false;
}

struct ReducePlan {
  std::vector<bool> reduced;  // per input axis
  Dims keep_dims;  // input dims with reduced axes set to 1
  Dims out_dims;   // keep_dims, or without the reduced axes
  int64_t count = 1;  // elements per output
  bool noop = false;
};

Result<ReducePlan> plan_reduce(const exec::KernelContext& ctx, const Tensor& x, const ReduceAttrs& attrs) {
  const int64_t rank = static_cast<int64_t>(x.rank());
  std::vector<int64_t> axes = attrs.axes;
  ReducePlan plan;
  if (attrs.axes_from_input) {
    if (const Tensor* a = ctx.input(1)) {
      auto v = read_ints(*a);
      if (!v || a->rank() > 1) return ctx.input_error(Code::kInvalidModel, 1, "axes must be a 1-D int64 tensor");
      axes = *v;
    }
    if (axes.empty() && attrs.noop_with_empty_axes) {
      plan.noop = true;
      return plan;
    }
  }
  if (axes.empty()) {
    axes.resize(x.rank());
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (!normalize_axes(&axes, rank))
    return ctx.error(Code::kInvalidModel, "axes {} are out of range or repeated for rank {}", dims_to_string(axes), rank);
  const bool keepdims = attrs.keepdims;
  plan.keep_dims = x.dims();
  plan.reduced.assign(x.rank(), false);
  for (int64_t a : axes) plan.reduced[static_cast<size_t>(a)] = true;
  for (int64_t a : axes) {
    plan.count *= x.dim(static_cast<size_t>(a));
    plan.keep_dims[static_cast<size_t>(a)] = 1;
  }
  for (size_t a = 0; a < x.rank(); ++a) {
    bool reduced = std::find(axes.begin(), axes.end(), static_cast<int64_t>(a)) != axes.end();
    if (keepdims || !reduced) plan.out_dims.push_back(plan.keep_dims[a]);
  }
  return plan;
}

// A float reduction as onnxruntime's CPU provider computes it; false where that is the in-order
// accumulation of reduce_typed (or a maximum/minimum, exact in any order). Neighbouring axes both
// reduced or both kept merge first, giving a pattern of kept (K) and reduced (R) blocks. Reducing
// everything combines all elements in Eigen's order (LogSumExp: the maximum first, then the
// exponentials added in order). Sum and Mean take onnxruntime's fast paths: KR sums each row in Eigen's
// order, RK adds the rows in order, KRK adds each block's rows as MLAS's single-row GEMM does, RKR adds
// the Eigen sums of the contiguous runs in order. LogSumExp elsewhere takes its maximum over the finite
// elements (starting from the first element, or 0 if that is infinite) and skips -inf.
template <Reduce K>
bool reduce_float_like_ort(const Tensor& x, const ReducePlan& plan, Tensor& out) {
  if constexpr (K == Reduce::kMax || K == Reduce::kMin) {
    return false;
  } else {
    const float* in = x.data<float>();
    float* o = out.data<float>();
    if (plan.count == 0) return false;
    Dims blocks;
    bool first_reduced = false;
    for (size_t a = 0; a < x.rank(); ++a) {
      if (a > 0 && plan.reduced[a] == plan.reduced[a - 1]) blocks.back() *= x.dim(a);
      else blocks.push_back(x.dim(a));
      if (a == 0) first_reduced = plan.reduced[a];
    }
    const float count = static_cast<float>(plan.count);
    const auto finish = [count](float sum) { return K == Reduce::kMean ? sum / count : sum; };
    if (blocks.size() <= 1) {  // everything
      const int64_t n = x.numel();
      const auto at = [in](int64_t i) { return in[i]; };
      if constexpr (K == Reduce::kSum || K == Reduce::kMean || K == Reduce::kLogSum) {
        const float sum = ort::eigen_sum<float>(n, 0, at);
        o[0] = K == Reduce::kLogSum ? std::log(sum) : finish(sum);
      } else if constexpr (K == Reduce::kSumSquare || K == Reduce::kL2) {
        const float sum = ort::eigen_sum<float>(n, 0, [in](int64_t i) { return in[i] * in[i]; });
        o[0] = K == Reduce::kL2 ? std::sqrt(sum) : sum;
      } else if constexpr (K == Reduce::kL1) {
        o[0] = ort::eigen_sum<float>(n, 0, [in](int64_t i) { return std::fabs(in[i]); });
      } else if constexpr (K == Reduce::kProd) {
        o[0] = ort::eigen_reduce<float>(n, 0, at, std::multiplies<float>());
      } else {
        float m = in[0];
        for (int64_t i = 1; i < n; ++i) m = in[i] > m ? in[i] : m;
        float sum = 0.0f;
        for (int64_t i = 0; i < n; ++i)
          if (in[i] != -std::numeric_limits<float>::infinity()) sum += std::exp(in[i] - m);
        o[0] = std::isinf(m) ? m : std::log(sum) + m;
      }
      return true;
    }
    if constexpr (K == Reduce::kLogSumExp) {
      const size_t n_out = static_cast<size_t>(out.numel());
      std::vector<float> m(n_out), sum(n_out, 0.0f);
      std::vector<bool> seen(n_out, false);
      const auto walk = [&](auto&& f) {
        exec::for_each_broadcast<1>(x.dims(), {&plan.keep_dims}, [&](int64_t i, const auto& off) { f(in[i], static_cast<size_t>(off[0])); });
      };
      walk([&](float v, size_t j) {
        if (!seen[j]) {
          m[j] = std::isinf(v) ? 0.0f : v;
          seen[j] = true;
        } else if (!std::isinf(v) && !std::isnan(v) && !(v < m[j])) {
          m[j] = v;
        }
      });
      walk([&](float v, size_t j) {
        if (v != -std::numeric_limits<float>::infinity()) sum[j] += std::exp(v - m[j]);
      });
      for (size_t j = 0; j < n_out; ++j) o[j] = std::isinf(m[j]) ? m[j] : std::log(sum[j]) + m[j];
      return true;
    } else if constexpr (K == Reduce::kSum || K == Reduce::kMean) {
      if (blocks.size() == 2 && !first_reduced) {  // KR
        const int64_t rows = blocks[0], cols = blocks[1];
        for (int64_t r = 0; r < rows; ++r) o[r] = finish(ort::eigen_sum_of(in + r * cols, cols, r * cols));
      } else if (blocks.size() == 2) {  // RK
        const int64_t rows = blocks[0], cols = blocks[1];
        std::copy_n(in, cols, o);
        for (int64_t r = 1; r < rows; ++r)
          for (int64_t j = 0; j < cols; ++j) o[j] += in[r * cols + j];
        for (int64_t j = 0; j < cols; ++j) o[j] = finish(o[j]);
      } else if (blocks.size() == 3 && !first_reduced) {  // KRK
        const int64_t outer = blocks[0], rows = blocks[1], cols = blocks[2];
        for (int64_t d = 0; d < outer; ++d)
          for (int64_t j = 0; j < cols; ++j) {
            const float* column = in + d * rows * cols + j;
            o[d * cols + j] = finish(ort::mlas_m1_sum(rows, [column, cols](int64_t r) { return column[r * cols]; }));
          }
      } else if (blocks.size() == 3) {  // RKR
        const int64_t outer = blocks[0], middle = blocks[1], run = blocks[2];
        for (int64_t d = 0; d < middle; ++d) {
          float sum = 0.0f;
          for (int64_t i = 0; i < outer; ++i) {
            const int64_t at = (i * middle + d) * run;
            sum += ort::eigen_sum_of(in + at, run, at);
          }
          o[d] = finish(sum);
        }
      } else {
        return false;
      }
      return true;
    } else {
      return false;
    }
  }
}

template <Reduce K, typename T>
void reduce_typed(const Tensor& x, const ReducePlan& plan, Tensor& out) {
  const T* in = x.data<T>();
  T* o = out.data<T>();
  const size_t n_out = static_cast<size_t>(out.numel());
  auto walk = [&](auto&& f) {
    exec::for_each_broadcast<1>(x.dims(), {&plan.keep_dims}, [&](int64_t i, const auto& off) { f(in[i], static_cast<size_t>(off[0])); });
  };
  if constexpr (K == Reduce::kMax || K == Reduce::kMin) {
    std::vector<Compute<T>> acc(n_out, K == Reduce::kMax ? lowest<T>() : highest<T>());
    walk([&](T v, size_t j) {
      const Compute<T> c = load(v);
      if (is_nan(acc[j])) return;
      if (is_nan(c) || (K == Reduce::kMax ? c > acc[j] : c < acc[j])) acc[j] = c;
    });
    for (size_t j = 0; j < n_out; ++j) o[j] = store<T>(acc[j]);
  } else if constexpr (K == Reduce::kLogSumExp) {
    // log(sum(exp(x))) = m + log(sum(exp(x - m))) with m the max, so large inputs do not overflow.
    std::vector<double> m(n_out, -std::numeric_limits<double>::infinity());
    walk([&](T v, size_t j) { m[j] = std::max(m[j], static_cast<double>(load(v))); });
    std::vector<Compute<T>> acc(n_out, 0);
    walk([&](T v, size_t j) {
      if (std::isfinite(m[j])) acc[j] += static_cast<Compute<T>>(std::exp(static_cast<double>(load(v)) - m[j]));
    });
    for (size_t j = 0; j < n_out; ++j)
      o[j] = from_real<T>(std::isfinite(m[j]) ? m[j] + std::log(static_cast<double>(acc[j])) : m[j]);
  } else {
    std::vector<Acc<T>> acc(n_out, K == Reduce::kProd ? Acc<T>(1) : Acc<T>(0));
    walk([&](T v, size_t j) {
      const Acc<T> a = to_acc(v);
      if constexpr (K == Reduce::kProd) acc[j] *= a;
      else if constexpr (K == Reduce::kSumSquare || K == Reduce::kL2) acc[j] += a * a;
      else if constexpr (K == Reduce::kL1) acc[j] += (acc_as_double<T>(a) < 0 ? Acc<T>(0) - a : a);
      else acc[j] += a;
    });
    for (size_t j = 0; j < n_out; ++j) {
      if constexpr (K == Reduce::kMean) {
        if constexpr (std::is_integral_v<T>) o[j] = from_real<T>(acc_as_double<T>(acc[j]) / static_cast<double>(plan.count));
        else o[j] = store<T>(acc[j] / static_cast<Compute<T>>(plan.count));
      } else if constexpr (K == Reduce::kL2) {
        if constexpr (std::is_integral_v<T>) o[j] = from_real<T>(std::sqrt(acc_as_double<T>(acc[j])));
        else o[j] = store<T>(std::sqrt(acc[j]));
      } else if constexpr (K == Reduce::kLogSum) {
        if constexpr (std::is_integral_v<T>) o[j] = from_real<T>(std::log(acc_as_double<T>(acc[j])));
        else o[j] = store<T>(std::log(acc[j]));
      } else {
        o[j] = from_acc<T>(acc[j]);
      }
    }
  }
}

// ReduceMax/ReduceMin of bools (opset 20): any / all over the reduced axes (false < true).
template <Reduce K>
void reduce_bools(const Tensor& x, const ReducePlan& plan, Tensor& out) {
  const bool* in = x.data<bool>();
  bool* o = out.data<bool>();
  std::fill(o, o + out.numel(), K == Reduce::kMin);
  exec::for_each_broadcast<1>(x.dims(), {&plan.keep_dims}, [&](int64_t i, const auto& off) {
    bool& acc = o[off[0]];
    acc = K == Reduce::kMax ? (acc || in[i]) : (acc && in[i]);
  });
}

template <Reduce K>
Status reduce(exec::KernelContext& ctx, const ReduceAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "data"));
  QONNX_ASSIGN_OR_RETURN(ReducePlan plan, plan_reduce(ctx, *x, attrs));
  const bool bools = x->dtype() == DType::kBool && attrs.bools;
  if ((x->dtype() == DType::kBool && !bools) || x->dtype() == DType::kString || !exec::visit_dtype(x->dtype(), [](auto) {}))
    return ctx.input_error(Code::kUnsupported, 0, "reduction of {} is not supported", dtype_name(x->dtype()));
  if (plan.noop) {
    ctx.set_output(0, *x);
    return Status::ok();
  }
  Tensor out(x->dtype(), plan.out_dims);
  if constexpr (K == Reduce::kMax || K == Reduce::kMin)
    if (bools) reduce_bools<K>(*x, plan, out);
  if (x->dtype() == DType::kFloat && reduce_float_like_ort<K>(*x, plan, out)) {
    ctx.set_output(0, std::move(out));
    return Status::ok();
  }
  exec::visit_dtype(x->dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (kNumeric<T>) reduce_typed<K, T>(*x, plan, out);
  });
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

// Splits dims around `axis` into outer x dim x inner.
struct AxisSplit {
  int64_t outer = 1, dim = 1, inner = 1;
};
AxisSplit split_at(const Dims& d, size_t axis) {
  AxisSplit s;
  for (size_t i = 0; i < d.size(); ++i) {
    if (i < axis) s.outer *= d[i];
    else if (i == axis) s.dim = d[i];
    else s.inner *= d[i];
  }
  return s;
}

// ArgMax/ArgMin: axis and keepdims; select_last_index from 12 (the first extreme before).
struct ArgAttrs {
  int64_t axis;
  bool keepdims;
  bool select_last_index;
};

template <bool SelectLastIndex>
Result<ArgAttrs> prepare_arg(const ir::Node& node, int64_t) {
  ArgAttrs a{0, true, false};
  QONNX_ASSIGN_OR_RETURN(a.axis, int_attr(node, "axis", 0));
  QONNX_ASSIGN_OR_RETURN(a.keepdims, flag_attr(node, "keepdims", true));
  if (SelectLastIndex) {
    QONNX_ASSIGN_OR_RETURN(a.select_last_index, flag_attr(node, "select_last_index", false));
  }
  return a;
}

template <bool kMax>
Status arg_extreme(exec::KernelContext& ctx, const ArgAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "data"));
  const int64_t rank = static_cast<int64_t>(x->rank());
  int64_t axis = attrs.axis;
  if (!normalize_axis(axis, std::max<int64_t>(rank, 1), &axis) || rank == 0)
    return ctx.error(Code::kInvalidModel, "axis {} is out of range for rank {}", attrs.axis, rank);
  const bool keepdims = attrs.keepdims;
  const bool last = attrs.select_last_index;
  const AxisSplit s = split_at(x->dims(), static_cast<size_t>(axis));
  if (s.dim == 0 && x->numel() == 0 && s.outer * s.inner > 0)
    return ctx.input_error(Code::kInvalidModel, 0, "cannot take the arg{} of an empty axis", kMax ? "max" : "min");
  Dims out_dims = x->dims();
  if (keepdims) out_dims[static_cast<size_t>(axis)] = 1;
  else out_dims.erase(out_dims.begin() + axis);
  Tensor out(DType::kInt64, out_dims);
  int64_t* o = out.data<int64_t>();
  bool ok = exec::visit_dtype(x->dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (kNumeric<T>) {
      const T* in = x->data<T>();
      for (int64_t a = 0; a < s.outer; ++a) {
        for (int64_t b = 0; b < s.inner; ++b) {
          const T* p = in + a * s.dim * s.inner + b;
          int64_t best = 0;
          Compute<T> bv = load(p[0]);
          for (int64_t i = 1; i < s.dim && !is_nan(bv); ++i) {
            const Compute<T> v = load(p[i * s.inner]);
            // NaN wins (first one), as numpy's argmax/argmin.
            bool better = is_nan(v) || (kMax ? v > bv : v < bv) || (last && v == bv);
            if (better) {
              best = i;
              bv = v;
            }
          }
          o[a * s.inner + b] = best;
        }
      }
    }
  });
  if (!ok || x->dtype() == DType::kBool)
    return ctx.input_error(Code::kUnsupported, 0, "arg{} of {} is not supported", kMax ? "max" : "min", dtype_name(x->dtype()));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

struct CumSumAttrs {
  bool exclusive, reverse;
};

Result<CumSumAttrs> prepare_cum_sum(const ir::Node& node, int64_t) {
  CumSumAttrs a{false, false};
  QONNX_ASSIGN_OR_RETURN(a.exclusive, flag_attr(node, "exclusive", false));
  QONNX_ASSIGN_OR_RETURN(a.reverse, flag_attr(node, "reverse", false));
  return a;
}

Status cum_sum(exec::KernelContext& ctx, const CumSumAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "x"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* axis_t, ctx.required(1, "axis"));
  auto axis_v = read_ints(*axis_t);
  if (!axis_v || axis_v->size() != 1 || axis_t->rank() > 1)
    return ctx.input_error(Code::kInvalidModel, 1, "axis must be one int32/int64 value");
  const int64_t rank = static_cast<int64_t>(x->rank());
  int64_t axis = (*axis_v)[0];
  if (rank == 0 || !normalize_axis(axis, rank, &axis))
    return ctx.input_error(Code::kInvalidModel, 1, "axis {} is out of range for rank {}", (*axis_v)[0], rank);
  const bool exclusive = attrs.exclusive, reverse = attrs.reverse;
  const AxisSplit s = split_at(x->dims(), static_cast<size_t>(axis));
  Tensor out(x->dtype(), x->dims());
  bool ok = exec::visit_dtype(x->dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (kNumeric<T>) {
      const T* in = x->data<T>();
      T* o = out.data<T>();
      for (int64_t a = 0; a < s.outer; ++a) {
        for (int64_t b = 0; b < s.inner; ++b) {
          Acc<T> acc = 0;
          for (int64_t step = 0; step < s.dim; ++step) {
            const int64_t i = reverse ? s.dim - 1 - step : step;
            const int64_t at = (a * s.dim + i) * s.inner + b;
            if (exclusive) {
              o[at] = from_acc<T>(acc);
              acc += to_acc(in[at]);
            } else {
              acc += to_acc(in[at]);
              o[at] = from_acc<T>(acc);
            }
          }
        }
      }
    }
  });
  if (!ok || x->dtype() == DType::kBool)
    return ctx.input_error(Code::kUnsupported, 0, "CumSum of {} is not supported", dtype_name(x->dtype()));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

// TopK: k as attribute (1..9) or input #1 (10 on); `largest` from 11 (always largest before).
// The output is always sorted, which `sorted` = 0 (11 on) allows.
enum class TopKForm { kAttribute, kInput, kInputLargest };
struct TopKAttrs {
  std::optional<int64_t> k;  // kAttribute
  int64_t axis;
  bool largest = true;
};

template <TopKForm Form>
Result<TopKAttrs> prepare_top_k(const ir::Node& node, int64_t) {
  TopKAttrs a{std::nullopt, -1, true};
  QONNX_ASSIGN_OR_RETURN(a.axis, int_attr(node, "axis", -1));
  if (Form == TopKForm::kAttribute) {
    QONNX_ASSIGN_OR_RETURN(a.k, int_attr(node, "k", -1));
  }
  if (Form == TopKForm::kInputLargest) {
    QONNX_ASSIGN_OR_RETURN(a.largest, flag_attr(node, "largest", true));
  }
  return a;
}

Status top_k(exec::KernelContext& ctx, const TopKAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "X"));
  int64_t k = 0;
  if (attrs.k) {
    k = *attrs.k;
  } else {
    QONNX_ASSIGN_OR_RETURN(const Tensor* kt, ctx.required(1, "K"));
    auto v = read_ints(*kt);
    if (!v || v->size() != 1) return ctx.input_error(Code::kInvalidModel, 1, "K must hold one int64 value");
    k = (*v)[0];
  }
  const int64_t rank = static_cast<int64_t>(x->rank());
  int64_t axis = attrs.axis;
  if (rank == 0 || !normalize_axis(axis, rank, &axis))
    return ctx.error(Code::kInvalidModel, "axis {} is out of range for rank {}", attrs.axis, rank);
  const AxisSplit s = split_at(x->dims(), static_cast<size_t>(axis));
  if (k < 0 || k > s.dim) return ctx.error(Code::kInvalidModel, "k = {} is outside [0, {}] (axis size)", k, s.dim);
  const bool largest = attrs.largest;
  Dims out_dims = x->dims();
  out_dims[static_cast<size_t>(axis)] = k;
  Tensor values(x->dtype(), out_dims), indices(DType::kInt64, out_dims);
  bool ok = exec::visit_dtype(x->dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (kNumeric<T>) {
      const T* in = x->data<T>();
      T* ov = values.data<T>();
      int64_t* oi = indices.data<int64_t>();
      std::vector<int64_t> order(static_cast<size_t>(s.dim));
      std::vector<Compute<T>> row(static_cast<size_t>(s.dim));
      for (int64_t a = 0; a < s.outer; ++a) {
        for (int64_t b = 0; b < s.inner; ++b) {
          for (int64_t i = 0; i < s.dim; ++i) row[static_cast<size_t>(i)] = load(in[(a * s.dim + i) * s.inner + b]);
          std::iota(order.begin(), order.end(), 0);
          // Ties go to the lower index; NaN counts as larger than every number.
          auto before = [&](int64_t i, int64_t j) {
            const Compute<T> u = row[static_cast<size_t>(i)], v = row[static_cast<size_t>(j)];
            const bool un = is_nan(u), vn = is_nan(v);
            if (un || vn) {
              if (un && vn) return i < j;
              return largest ? un : vn;
            }
            if (u != v) return largest ? u > v : u < v;
            return i < j;
          };
          std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
          for (int64_t i = 0; i < k; ++i) {
            const int64_t src = order[static_cast<size_t>(i)];
            const int64_t at = (a * k + i) * s.inner + b;
            ov[at] = in[(a * s.dim + src) * s.inner + b];
            oi[at] = src;
          }
        }
      }
    }
  });
  if (!ok || x->dtype() == DType::kBool)
    return ctx.input_error(Code::kUnsupported, 0, "TopK of {} is not supported", dtype_name(x->dtype()));
  ctx.set_output(0, std::move(values));
  ctx.set_output(1, std::move(indices));
  return Status::ok();
}

// Axes from the attribute before axes_input_since, from input #1 after; bools from opset 20 (Max/Min).
template <Reduce K>
void add_reduce(exec::KernelRegistry& r, const char* op) {
  const int since = axes_input_since(K);
  r.add("", op, {1, since - 1}, exec::typed_kernel<ReduceAttrs, prepare_reduce<false, false>, reduce<K>>());
  if constexpr (K == Reduce::kMax || K == Reduce::kMin) {
    r.add("", op, {since, 19}, exec::typed_kernel<ReduceAttrs, prepare_reduce<true, false>, reduce<K>>());
    r.add("", op, {20, exec::kNoUpperVersion}, exec::typed_kernel<ReduceAttrs, prepare_reduce<true, true>, reduce<K>>());
  } else {
    r.add("", op, {since, exec::kNoUpperVersion}, exec::typed_kernel<ReduceAttrs, prepare_reduce<true, false>, reduce<K>>());
  }
}

}  // namespace

void register_reduce_kernels(exec::KernelRegistry& r) {
  add_reduce<Reduce::kSum>(r, "ReduceSum");
  add_reduce<Reduce::kMean>(r, "ReduceMean");
  add_reduce<Reduce::kMax>(r, "ReduceMax");
  add_reduce<Reduce::kMin>(r, "ReduceMin");
  add_reduce<Reduce::kProd>(r, "ReduceProd");
  add_reduce<Reduce::kL1>(r, "ReduceL1");
  add_reduce<Reduce::kL2>(r, "ReduceL2");
  add_reduce<Reduce::kLogSum>(r, "ReduceLogSum");
  add_reduce<Reduce::kLogSumExp>(r, "ReduceLogSumExp");
  add_reduce<Reduce::kSumSquare>(r, "ReduceSumSquare");
  using exec::typed_kernel;
  constexpr int kLatest = exec::kNoUpperVersion;
  r.add("", "ArgMax", {1, 11}, typed_kernel<ArgAttrs, prepare_arg<false>, arg_extreme<true>>());
  r.add("", "ArgMax", {12, kLatest}, typed_kernel<ArgAttrs, prepare_arg<true>, arg_extreme<true>>());
  r.add("", "ArgMin", {1, 11}, typed_kernel<ArgAttrs, prepare_arg<false>, arg_extreme<false>>());
  r.add("", "ArgMin", {12, kLatest}, typed_kernel<ArgAttrs, prepare_arg<true>, arg_extreme<false>>());
  r.add("", "CumSum", {11, kLatest}, typed_kernel<CumSumAttrs, prepare_cum_sum, cum_sum>());
  r.add("", "TopK", {1, 9}, typed_kernel<TopKAttrs, prepare_top_k<TopKForm::kAttribute>, top_k>());
  r.add("", "TopK", {10, 10}, typed_kernel<TopKAttrs, prepare_top_k<TopKForm::kInput>, top_k>());
  r.add("", "TopK", {11, kLatest}, typed_kernel<TopKAttrs, prepare_top_k<TopKForm::kInputLargest>, top_k>());
}

}  // namespace qonnx::kernels
