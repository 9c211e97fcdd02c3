#include "qonnx/exec/compare.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "qonnx/exec/dtype_dispatch.h"
#include "qonnx/ir/finn_datatype.h"
#include "qonnx/support/float8.h"

namespace qonnx::exec {

Result<std::map<std::string, Tensor>> random_inputs(const ir::Graph& graph, uint64_t seed,
                                                    const InputShapeOverrides& overrides, int64_t symbolic_dim);

std::string Comparison::describe() const {
  if (!dtype_match) return "dtype differs";
  if (!shape_match) return "shape differs";
  return fmt::format("max abs error {:.6g}, max rel error {:.6g}, {} mismatching element(s){}", max_abs_error,
                     max_rel_error, mismatches,
                     first_mismatch >= 0 ? fmt::format(" (first at flat index {})", first_mismatch) : "");
}

Comparison compare_tensors(const Tensor& actual, const Tensor& expected, double atol, double rtol) {
  Comparison c;
  if (!actual.is_tensor() || !expected.is_tensor()) {
    // Containers: same kind, same number of elements, each element within tolerance (an empty
    // container's element type may be unknown on one side).
    if (actual.kind() != expected.kind() || actual.optional_of_sequence() != expected.optional_of_sequence() ||
        (actual.dtype() != expected.dtype() && actual.dtype() != DType::kUndefined && expected.dtype() != DType::kUndefined)) {
      c.dtype_match = false;
      return c;
    }
    const auto& a = actual.elements();
    const auto& e = expected.elements();
    if (a.size() != e.size()) {
      c.shape_match = false;
      return c;
    }
    for (size_t i = 0; i < a.size(); ++i) {
      Comparison one = compare_tensors(a[i], e[i], atol, rtol);
      c.shape_match = c.shape_match && one.shape_match;
      c.dtype_match = c.dtype_match && one.dtype_match;
      if (one.mismatches > 0 && c.first_mismatch < 0) c.first_mismatch = static_cast<int64_t>(i);
      c.mismatches += one.mismatches;
      c.max_abs_error = std::max(c.max_abs_error, one.max_abs_error);
      c.max_rel_error = std::max(c.max_rel_error, one.max_rel_error);
    }
    return c;
  }
  if (actual.dtype() != expected.dtype()) {
    c.dtype_match = false;
    return c;
  }
  if (actual.dims() != expected.dims()) {
    c.shape_match = false;
    return c;
  }
  if (actual.dtype() == DType::kString) {
    for (int64_t i = 0; i < actual.numel(); ++i)
      if (actual.strings()[static_cast<size_t>(i)] != expected.strings()[static_cast<size_t>(i)]) {
        if (c.first_mismatch < 0) c.first_mismatch = i;
        ++c.mismatches;
      }
    return c;
  }
  for (int64_t i = 0; i < actual.numel(); ++i) {
    double a = element_as_double(actual, i), e = element_as_double(expected, i);
    bool ok;
    if (std::isnan(a) || std::isnan(e)) {
      ok = std::isnan(a) && std::isnan(e);
    } else if (std::isinf(a) || std::isinf(e)) {
      ok = a == e;
    } else {
      double abs_err = std::fabs(a - e);
      double rel_err = e != 0 ? abs_err / std::fabs(e) : (abs_err > 0 ? INFINITY : 0);
      if (abs_err > c.max_abs_error) c.max_abs_error = abs_err;
      if (rel_err > c.max_rel_error && std::isfinite(rel_err)) c.max_rel_error = rel_err;
      ok = abs_err <= atol + rtol * std::fabs(e);
    }
    if (!ok) {
      if (c.first_mismatch < 0) c.first_mismatch = i;
      ++c.mismatches;
    }
  }
  return c;
}

namespace {

// splitmix64: fixed algorithm so random inputs are identical on every platform and library.
struct Rng {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
};

}  // namespace

Result<std::map<std::string, Tensor>> random_inputs(const ir::Graph& graph, uint64_t seed, int64_t symbolic_dim) {
  InputShapeOverrides none;
  none.batch = 0;
  return random_inputs(graph, seed, none, symbolic_dim);
}

Result<std::map<std::string, Tensor>> random_inputs(const ir::Graph& graph, uint64_t seed,
                                                    const InputShapeOverrides& overrides) {
  return random_inputs(graph, seed, overrides, overrides.batch > 0 ? overrides.batch : 1);
}

Result<std::map<std::string, Tensor>> random_inputs(const ir::Graph& graph, uint64_t seed,
                                                    const InputShapeOverrides& overrides, int64_t symbolic_dim) {
  std::map<std::string, Tensor> out;
  Rng rng{seed};
  for (const ir::Value* v : graph.runtime_inputs()) {
    auto type = graph.type_of(v);
    bool shape_given = overrides.shapes.count(v->name()) > 0;
    if (!type || type->dtype == DType::kUndefined || (!type->has_shape && !shape_given))
      return Status(Code::kUsage, fmt::format("graph input '{}' has no declared type and shape to make random values from", v->name()));
    Dims dims = type->dims;
    for (auto& d : dims)
      if (d < 0) d = symbolic_dim;
    if (overrides.batch > 0 && !dims.empty()) dims[0] = overrides.batch;
    if (auto it = overrides.shapes.find(v->name()); it != overrides.shapes.end()) dims = it->second;
    if (checked_numel(dims) < 0)  // a bad override is a usage error, bad declared dims an invalid model
      return Status(shape_given ? Code::kUsage : Code::kInvalidModel,
                    fmt::format("input '{}': shape {} is not valid (negative or overflowing)", v->name(), dims_to_string(dims)));
    Tensor t;
    try {
      t = Tensor(type->dtype, dims);
    } catch (const std::exception& e) {
      return Status(Code::kFailed, fmt::format("graph input '{}': {}", v->name(), e.what()));
    }
    DType dt = type->dtype;
    // An input annotated with an integer finn_datatype (e.g. UINT8 pixels) gets values it allows.
    auto range = ir::integer_datatype_range(graph.finn_datatype(v->name()));
    // float8: uniform in [-1, 1) rounded to the format; int4/uint4: integers in [0, 8).
    if (dtype_is_float8(dt) || dtype_is_4bit(dt)) {
      for (int64_t i = 0; i < t.numel(); ++i) {
        const double u = rng.uniform();
        t.data<uint8_t>()[i] = dtype_is_float8(dt) ? float_to_float8(static_cast<float>(2 * u - 1), dt, true) : static_cast<uint8_t>(u * 8);
      }
      out.emplace(v->name(), std::move(t));
      continue;
    }
    bool ok = visit_dtype(dt, [&](auto tag) {
      using T = decltype(tag);
      T* p = t.data<T>();
      for (int64_t i = 0; i < t.numel(); ++i) {
        double u = rng.uniform();
        if constexpr (!std::is_same_v<T, bool> && !std::is_same_v<T, Half> && !std::is_same_v<T, BFloat16>) {
          if (range) {
            double q = std::floor(range->min + u * (range->max - range->min + 1));
            if (range->excludes_zero && q == 0) q = 1;
            p[i] = static_cast<T>(q);
            continue;
          }
        }
        if constexpr (std::is_same_v<T, Half>) p[i] = Half{float_to_half(static_cast<float>(2 * u - 1))};
        else if constexpr (std::is_same_v<T, BFloat16>) p[i] = BFloat16{float_to_bfloat16(static_cast<float>(2 * u - 1))};
        else if constexpr (std::is_same_v<T, bool>) p[i] = u < 0.5;
        else if constexpr (std::is_floating_point_v<T>) p[i] = static_cast<T>(2 * u - 1);
        else p[i] = static_cast<T>(u * 10);
      }
    });
    if (!ok)
      return Status(Code::kUnsupported, fmt::format("cannot make random {} data for input '{}'", dtype_name(dt), v->name()));
    out.emplace(v->name(), std::move(t));
  }
  return out;
}

}  // namespace qonnx::exec
