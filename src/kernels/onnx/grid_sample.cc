// GridSample (16: 4-D input, modes bilinear/nearest/bicubic; 20 on: any number of spatial dims, modes
// linear/nearest/cubic).
//
// input (N, C, D1, ..., Dk), grid (N, O1, ..., Ok', k) -> output (N, C, O1, ..., Ok'). grid's last axis
// holds normalized coordinates in reverse dim order (x = Dk first). Each one is mapped to a pixel
// coordinate (align_corners: -1 and 1 are the centres of the corner pixels; else their outer edges),
// then, when it lies outside [lo, hi] (lo = 0, hi = D-1 with align_corners, else -0.5 and D-0.5):
// padding 'border' clamps it to [0, D-1], 'reflection' reflects it at lo and hi until inside. The
// value is interpolated from the nearest pixel (rounded half to even; half away from zero for 3
// spatial dims, as PyTorch), the 2 (linear) or 4 (cubic convolution, A = -0.75) pixels around it per
// dim, each pixel index again padded: 'zeros' reads 0 outside, 'border' the clamped index,
// 'reflection' the reflected one. This is ONNX's reference and onnxruntime's computation. Weights and
// sums are in double, rounded once to the input's type.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/common/attr_check.h"
#include "kernels/common/element_copy.h"
#include "kernels/onnx/elementwise_common.h"
#include "kernels/onnx/onnx_kernels.h"

namespace qonnx::kernels {
namespace {

enum class Mode { kNearest, kLinear, kCubic };
enum class Padding { kZeros, kBorder, kReflection };

struct GridSampleAttrs {
  Mode mode = Mode::kLinear;
  Padding padding = Padding::kZeros;
  bool align_corners = false;
  bool only_4d = true;  // GridSample-16
};

Result<GridSampleAttrs> prepare_grid_sample(const ir::Node& node, int64_t version) {
  GridSampleAttrs a;
  a.only_4d = version < 20;
  const char* linear = a.only_4d ? "bilinear" : "linear";
  const char* cubic = a.only_4d ? "bicubic" : "cubic";
  QONNX_ASSIGN_OR_RETURN(const std::string mode, string_attr(node, "mode", linear));
  QONNX_RETURN_IF_ERROR(check_one_of("mode", mode, {linear, "nearest", cubic}));
  a.mode = mode == "nearest" ? Mode::kNearest : mode == linear ? Mode::kLinear : Mode::kCubic;
  QONNX_ASSIGN_OR_RETURN(const std::string padding, string_attr(node, "padding_mode", "zeros"));
  QONNX_RETURN_IF_ERROR(check_one_of("padding_mode", padding, {"zeros", "border", "reflection"}));
  a.padding = padding == "zeros" ? Padding::kZeros : padding == "border" ? Padding::kBorder : Padding::kReflection;
  QONNX_ASSIGN_OR_RETURN(a.align_corners, flag_attr(node, "align_corners", false));
  return a;
}

// x reflected at lo and hi until it lies in [lo, hi].
double reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0) return lo;
  if (x < lo) {
    const double dx = lo - x;
    const double n = std::floor(dx / range), r = dx - n * range;
    return std::fmod(n, 2.0) == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const double dx = x - hi;
    const double n = std::floor(dx / range), r = dx - n * range;
    return std::fmod(n, 2.0) == 0 ? hi - r : lo + r;
  }
  return x;
}

// Keys' cubic convolution weights of the 4 pixels around a point at fraction t past the second one.
void cubic_weights(double t, double* w) {
  constexpr double A = -0.75;
  auto near = [](double x) { return ((A + 2) * x - (A + 3)) * x * x + 1; };         // |x| <= 1
  auto far = [](double x) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; };     // 1 < |x| < 2
  w[0] = far(t + 1);
  w[1] = near(t);
  w[2] = near(1 - t);
  w[3] = far(2 - t);
}

// One spatial dim's contributing pixels: index (-1: outside, reads 0) and weight.
struct Taps {
  int64_t index[4];
  double weight[4];
  int count = 0;
};

Status grid_sample(exec::KernelContext& ctx, const GridSampleAttrs& a) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "X"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* grid, ctx.required(1, "grid"));
  if (!dtype_is_float(grid->dtype())) return unsupported_type(ctx, 1, grid->dtype());
  const bool float_x = dtype_is_float(x->dtype());
  if (!float_x && (a.mode != Mode::kNearest || !(dtype_is_integer(x->dtype()) || x->dtype() == DType::kBool) ||
                   dtype_is_4bit(x->dtype())))
    return ctx.input_error(Code::kUnsupported, 0, "GridSample does not support type {}{}", dtype_name(x->dtype()),
                           dtype_is_integer(x->dtype()) ? " outside mode nearest" : "");
  if (x->rank() < 3 || (a.only_4d && x->rank() != 4))
    return ctx.input_error(Code::kInvalidModel, 0, "must have shape (N, C, {}), got {}", a.only_4d ? "H, W" : "D1, ..., Dk",
                           dims_to_string(x->dims()));
  const size_t k = x->rank() - 2;
  if (grid->rank() != k + 2 || grid->dim(0) != x->dim(0) || grid->dim(k + 1) != static_cast<int64_t>(k))
    return ctx.input_error(Code::kInvalidModel, 1, "must have shape ({}, O1, ..., O{}, {}) for input shape {}, got {}", x->dim(0),
                           k, k, dims_to_string(x->dims()), dims_to_string(grid->dims()));
  const int64_t n = x->dim(0), channels = x->dim(1);
  Dims out_dims{n, channels};
  for (size_t i = 0; i < k; ++i) out_dims.push_back(grid->dim(i + 1));
  QONNX_RETURN_IF_ERROR(check_output_dims(ctx, out_dims, x->dtype()));
  Tensor out = ctx.output_buffer(x->dtype(), out_dims);
  const int64_t points = checked_numel(Dims(grid->dims().begin() + 1, grid->dims().end() - 1));
  std::vector<int64_t> size(k), stride(k);
  int64_t plane = 1;
  for (size_t i = k; i-- > 0;) {
    size[i] = x->dim(i + 2);
    stride[i] = plane;
    plane *= size[i];
  }
  std::vector<double> coords(static_cast<size_t>(grid->numel()));
  for (int64_t i = 0; i < grid->numel(); ++i) coords[static_cast<size_t>(i)] = exec::element_as_double(*grid, i);

  // A pixel index padded per padding_mode: -1 reads 0.
  auto pad_index = [&](int64_t i, size_t d) -> int64_t {
    const int64_t len = size[d];
    if (i >= 0 && i < len) return i;
    switch (a.padding) {
      case Padding::kZeros: return -1;
      case Padding::kBorder: return std::clamp<int64_t>(i, 0, len - 1);
      case Padding::kReflection: {
        const double lo = a.align_corners ? 0.0 : -0.5, hi = a.align_corners ? double(len - 1) : double(len) - 0.5;
        return std::clamp<int64_t>(static_cast<int64_t>(reflect(static_cast<double>(i), lo, hi)), 0, len - 1);
      }
    }
    return -1;
  };
  // The taps of dim d for normalized coordinate v.
  auto taps_for = [&](double v, size_t d) {
    Taps t;
    const int64_t len = size[d];
    const double fl = static_cast<double>(len);
    double p = a.align_corners ? (v + 1) / 2 * (fl - 1) : ((v + 1) * fl - 1) / 2;
    if (a.mode == Mode::kNearest) p = k == 3 ? std::round(p) : std::nearbyint(p);
    const double lo = a.align_corners ? 0.0 : -0.5, hi = a.align_corners ? fl - 1 : fl - 0.5;
    if (p < lo || p > hi) {
      if (a.padding == Padding::kBorder) p = std::clamp(p, 0.0, fl - 1);
      else if (a.padding == Padding::kReflection) p = reflect(p, lo, hi);
    }
    if (!std::isfinite(p)) {  // NaN or infinite coordinate (zeros padding): reads 0
      t.count = 1;
      t.index[0] = -1;
      t.weight[0] = 1;
      return t;
    }
    // Far outside the input every tap reads the padding; keep indices representable.
    p = std::clamp(p, -4.0 - fl, 2 * fl + 4.0);
    if (a.mode == Mode::kNearest) {
      t.count = 1;
      t.index[0] = pad_index(static_cast<int64_t>(p), d);
      t.weight[0] = 1;
    } else if (a.mode == Mode::kLinear) {
      const double f = std::floor(p);
      const int64_t i0 = static_cast<int64_t>(f);
      t.count = 2;
      t.index[0] = pad_index(i0, d);
      t.index[1] = pad_index(i0 + 1, d);
      t.weight[0] = 1 - (p - f);
      t.weight[1] = p - f;
    } else {
      const double f = std::floor(p);
      const int64_t i0 = static_cast<int64_t>(f);
      t.count = 4;
      for (int j = 0; j < 4; ++j) t.index[j] = pad_index(i0 - 1 + j, d);
      cubic_weights(p - f, t.weight);
    }
    return t;
  };

  exec::visit_dtype(x->dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* in = x->data<T>();
    T* o = out.data<T>();
    std::vector<Taps> taps(k);
    std::vector<int> pos(k);
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t pt = 0; pt < points; ++pt) {
        const double* g = coords.data() + (b * points + pt) * static_cast<int64_t>(k);
        for (size_t d = 0; d < k; ++d) taps[d] = taps_for(g[k - 1 - d], d);
        for (int64_t c = 0; c < channels; ++c) {
          const T* map = in + (b * channels + c) * plane;
          T& dst = o[(b * channels + c) * points + pt];
          if constexpr (is_float_storage_v<T>) {
            // Sum over the tensor product of the taps (odometer over pos).
            double acc = 0;
            std::fill(pos.begin(), pos.end(), 0);
            while (true) {
              double w = 1;
              int64_t off = 0;
              bool outside = false;
              for (size_t d = 0; d < k; ++d) {
                const int64_t i = taps[d].index[pos[d]];
                w *= taps[d].weight[pos[d]];
                if (i < 0) outside = true;
                else off += i * stride[d];
              }
              if (!outside) acc += w * static_cast<double>(load(map[off]));
              size_t d = k;
              while (d-- > 0) {
                if (++pos[d] < taps[d].count) break;
                pos[d] = 0;
              }
              if (d == static_cast<size_t>(-1)) break;
            }
            dst = from_double<T>(acc);
          } else {
            int64_t off = 0;
            bool outside = false;
            for (size_t d = 0; d < k; ++d) {
              if (taps[d].index[0] < 0) outside = true;
              else off += taps[d].index[0] * stride[d];
            }
            dst = outside ? T{} : map[off];
          }
        }
      }
    }
  });
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_grid_sample_kernels(exec::KernelRegistry& r) {
  const auto k = exec::typed_kernel<GridSampleAttrs, prepare_grid_sample, grid_sample>();
  // 16: 4-D, bilinear/bicubic; 20: N-D, linear/cubic; 22 adds bfloat16 (handled by every range).
  r.add("", "GridSample", {16, 19}, k);
  r.add("", "GridSample", {20, 21}, k);
  r.add("", "GridSample", {22, exec::kNoUpperVersion}, k);
}

}  // namespace qonnx::kernels
