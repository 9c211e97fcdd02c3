// Resize (opsets 10, 11, 13, 18, 19) and Upsample (7, 9) for N-D inputs.
// Each axis is resampled independently: an output coordinate maps to a source coordinate by the
// coordinate_transformation_mode, then to a few weighted source taps (1 for nearest, 2 for linear,
// 4 for cubic). Nearest only moves elements (every dtype); linear and cubic compute in double and
// convert back, applying the axes one after the other, except where onnxruntime's 2-D float kernels
// apply (ort_2d_resize_applies): there qonnx-cc computes what they compute (docs/ort-arithmetic.md).
#include <algorithm>
#include <array>
#include <cmath>
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

struct ResizeParams {
  std::string mode = "nearest";
  std::string coord = "half_pixel";
  std::string nearest = "round_prefer_floor";  // or "simple" for Resize-10/Upsample
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation = 0.0;
};

struct Tap {
  int64_t index;
  double weight;
};

struct AxisMap {
  std::vector<std::vector<Tap>> taps;  // per output coordinate
  std::vector<bool> outside;           // tf_crop_and_resize: coordinate outside the input
  bool identity = true;
  bool any_outside = false;
};

// Source coordinate of output coordinate x. `out_len` is scale * in_len before flooring, as
// the ONNX reference uses it.
double source_coordinate(const ResizeParams& p, int64_t x, double scale, int64_t in_len, double out_len, double roi_start,
                         double roi_end) {
  const double xd = static_cast<double>(x);
  if (p.coord == "asymmetric") return xd / scale;
  if (p.coord == "half_pixel") return (xd + 0.5) / scale - 0.5;
  if (p.coord == "half_pixel_symmetric") {
    const double adj = std::floor(out_len) / (scale * static_cast<double>(in_len));
    const double center = static_cast<double>(in_len) / 2.0;
    const double offset = center * (1.0 - adj);
    return offset + (xd + 0.5) / scale - 0.5;
  }
  if (p.coord == "pytorch_half_pixel") return out_len > 1 ? (xd + 0.5) / scale - 0.5 : 0.0;
  if (p.coord == "tf_half_pixel_for_nn") return (xd + 0.5) / scale;
  if (p.coord == "align_corners") return out_len == 1 ? 0.0 : xd * static_cast<double>(in_len - 1) / (out_len - 1);
  // tf_crop_and_resize
  const double span = static_cast<double>(in_len - 1);
  if (out_len > 1) return roi_start * span + xd * (roi_end - roi_start) * span / (out_len - 1);
  return roi_start * span + 0.5 * (roi_end - roi_start) * span;
}

int64_t nearest_index(const ResizeParams& p, double x, double scale) {
  const double f = std::floor(x);
  const double frac = x - f;
  if (p.nearest == "simple") return static_cast<int64_t>(scale < 1 ? std::ceil(x) : f);
  if (p.nearest == "floor") return static_cast<int64_t>(f);
  if (p.nearest == "ceil") return static_cast<int64_t>(std::ceil(x));
  if (p.nearest == "round_prefer_ceil") return static_cast<int64_t>(frac >= 0.5 ? f + 1 : f);
  return static_cast<int64_t>(frac > 0.5 ? f + 1 : f);  // round_prefer_floor
}

std::vector<double> cubic_weights(double r, double a) {
  auto near = [a](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };           // |d| <= 1
  auto far = [a](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };      // 1 < |d| < 2
  return {far(r + 1), near(r), near(1 - r), far(2 - r)};
}

AxisMap map_axis(const ResizeParams& p, int64_t in_len, int64_t out_len, double scale, double roi_start, double roi_end) {
  AxisMap m;
  m.taps.resize(static_cast<size_t>(out_len));
  m.outside.assign(static_cast<size_t>(out_len), false);
  const double out_len_real = scale * static_cast<double>(in_len);
  const int64_t n = p.mode == "cubic" ? 4 : 2;
  for (int64_t x = 0; x < out_len; ++x) {
    std::vector<Tap>& taps = m.taps[static_cast<size_t>(x)];
    const double src = source_coordinate(p, x, scale, in_len, out_len_real, roi_start, roi_end);
    if (p.coord == "tf_crop_and_resize" && (src < 0 || src > static_cast<double>(in_len - 1))) {
      m.outside[static_cast<size_t>(x)] = true;
      m.any_outside = true;
      m.identity = false;
      continue;
    }
    // Far-out coordinates (tiny scales) only ever read the edge: bound them so integer
    // conversions stay defined.
    const double bounded = std::clamp(src, -1e15, 1e15);
    if (!std::isfinite(src)) {
      taps.push_back({0, 1.0});
    } else if (p.mode == "nearest") {
      taps.push_back({std::clamp<int64_t>(nearest_index(p, bounded, scale), 0, in_len - 1), 1.0});
    } else {
      // The n source positions nearest to src (ties toward lower ones), kept within one
      // half-window of edge padding; reads beyond the input take the edge value.
      const double f = std::floor(bounded);
      const double r = bounded == f ? 1.0 : bounded - f;
      std::vector<double> w = n == 2 ? std::vector<double>{1 - r, r} : cubic_weights(r, p.cubic_a);
      const int64_t half = n / 2;
      const double start_real = std::clamp(std::ceil(bounded) - static_cast<double>(half), static_cast<double>(-half),
                                           static_cast<double>(in_len + half - n));
      const int64_t start = static_cast<int64_t>(start_real);
      if (p.exclude_outside) {
        double sum = 0;
        for (int64_t k = 0; k < n; ++k) {
          const int64_t i = start + k;
          if (i < 0 || i >= in_len) w[static_cast<size_t>(k)] = 0;
          sum += w[static_cast<size_t>(k)];
        }
        if (sum != 0)
          for (double& v : w) v /= sum;
      }
      for (int64_t k = 0; k < n; ++k)
        if (w[static_cast<size_t>(k)] != 0) taps.push_back({std::clamp<int64_t>(start + k, 0, in_len - 1), w[static_cast<size_t>(k)]});
    }
    if (taps.size() != 1 || taps[0].index != x || taps[0].weight != 1.0) m.identity = false;
  }
  if (in_len != out_len) m.identity = false;
  return m;
}

// Weighted resampling of a double buffer along one axis.
std::vector<double> resample_axis(const std::vector<double>& in, const Dims& dims, size_t axis, const AxisMap& m) {
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < axis; ++i) outer *= dims[i];
  for (size_t i = axis + 1; i < dims.size(); ++i) inner *= dims[i];
  const int64_t in_len = dims[axis], out_len = static_cast<int64_t>(m.taps.size());
  std::vector<double> out(static_cast<size_t>(outer * out_len * inner), 0.0);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < out_len; ++c) {
      double* dst = out.data() + (o * out_len + c) * inner;
      for (const Tap& t : m.taps[static_cast<size_t>(c)]) {
        const double* src = in.data() + (o * in_len + t.index) * inner;
        for (int64_t i = 0; i < inner; ++i) dst[i] += t.weight * src[i];
      }
    }
  return out;
}

template <typename T>
T from_double_value(double v) {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(v);
  else return store<T>(static_cast<Compute<T>>(v));
}

Status interpolate(const exec::KernelContext& ctx, const Tensor& x, const std::vector<AxisMap>& maps, const Dims& out_dims,
                   const ResizeParams& p, Tensor& out) {
  Status st;
  bool ok = exec::visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      st = ctx.input_error(Code::kUnsupported, 0, "{} resize of bool is not supported", p.mode);
    } else {
      std::vector<double> buf(static_cast<size_t>(x.numel()));
      const T* in = x.data<T>();
      for (int64_t i = 0; i < x.numel(); ++i) buf[static_cast<size_t>(i)] = static_cast<double>(load(in[i]));
      Dims cur = x.dims();
      for (size_t a = 0; a < maps.size(); ++a) {
        if (maps[a].identity) continue;
        buf = resample_axis(buf, cur, a, maps[a]);
        cur[a] = out_dims[a];
      }
      T* o = out.data<T>();
      for (int64_t i = 0; i < out.numel(); ++i) o[i] = from_double_value<T>(buf[static_cast<size_t>(i)]);
      bool any_outside = false;
      for (const AxisMap& m : maps) any_outside |= m.any_outside;
      if (any_outside) {
        const T fill = from_double_value<T>(p.extrapolation);
        for (int64_t i = 0; i < out.numel(); ++i) {
          int64_t rest = i;
          bool outside = false;
          for (size_t a = maps.size(); a-- > 0;) {
            outside = outside || maps[a].outside[static_cast<size_t>(rest % out_dims[a])];
            rest /= out_dims[a];
          }
          if (outside) o[i] = fill;
        }
      }
    }
  });
  if (!ok) return ctx.input_error(Code::kUnsupported, 0, "resize of {} is not supported", dtype_name(x.dtype()));
  return st;
}

// onnxruntime's source coordinate of output coordinate i, in float (the coordinate modes its 2-D linear
// and cubic kernels share with qonnx-cc's reference formulas; align_corners and tf_crop_and_resize are
// left to those).
float ort_source_coordinate(const std::string& coord, int64_t i, float scale, int64_t out_len) {
  const float x = static_cast<float>(i);
  if (coord == "asymmetric") return x / scale;
  if (coord == "pytorch_half_pixel" && out_len <= 1) return 0.0f;
  return (x + 0.5f) / scale - 0.5f;  // half_pixel, pytorch_half_pixel
}

// Whether onnxruntime's 2-D float kernels apply: linear or cubic (without exclude_outside) on a float
// tensor of rank 2, or of rank 4 with the first two axes unchanged, in a coordinate mode above.
bool ort_2d_resize_applies(const Tensor& x, const std::vector<double>& scales, const Dims& out_dims, const ResizeParams& p) {
  const size_t rank = x.rank();
  if (x.dtype() != DType::kFloat || (rank != 2 && rank != 4) || !(p.mode == "linear" || (p.mode == "cubic" && !p.exclude_outside)) ||
      (p.coord != "half_pixel" && p.coord != "asymmetric" && p.coord != "pytorch_half_pixel"))
    return false;
  for (size_t a = 0; a + 2 < rank; ++a)
    if (scales[a] != 1.0 || out_dims[a] != x.dim(a)) return false;
  return true;
}

// One axis of onnxruntime's bilinear kernel: the source coordinate clamped to [0, in_len - 1], its
// neighbours lo and hi and the distances to them (0.5 each where both are the last element).
struct BilinearAxis {
  std::vector<int64_t> lo, hi;
  std::vector<float> to_lo, to_hi;
};

BilinearAxis bilinear_axis(const std::string& coord, int64_t in_len, int64_t out_len, float scale) {
  BilinearAxis a;
  for (int64_t i = 0; i < out_len; ++i) {
    const float v = std::max(0.0f, std::min(ort_source_coordinate(coord, i, scale, out_len), static_cast<float>(in_len - 1)));
    const int64_t lo = std::min(static_cast<int64_t>(v), in_len - 1), hi = std::min(lo + 1, in_len - 1);
    a.lo.push_back(lo);
    a.hi.push_back(hi);
    a.to_lo.push_back(lo == hi ? 0.5f : std::fabs(v - static_cast<float>(lo)));
    a.to_hi.push_back(lo == hi ? 0.5f : std::fabs(v - static_cast<float>(hi)));
  }
  return a;
}

// One axis of onnxruntime's bicubic kernel: the first of the four source positions (floor - 1; reads
// clamp to the edges) and the four weights of the fractional part s, in float:
// ((a(s+1) - 5a)(s+1) + 8a)(s+1) - 4a, ((a+2)s - (a+3))s·s + 1, the same at 1-s, and the first at 1-s.
struct BicubicAxis {
  std::vector<int64_t> first;
  std::vector<std::array<float, 4>> weights;
};

BicubicAxis bicubic_axis(const std::string& coord, int64_t out_len, float scale, float a) {
  BicubicAxis axis;
  for (int64_t i = 0; i < out_len; ++i) {
    const float v = scale == 1.0f ? static_cast<float>(i) : ort_source_coordinate(coord, i, scale, out_len);
    const float base = std::floor(v);
    const float s = std::fabs(v - base), s1 = s + 1, r = 1 - s, r1 = 2 - s;
    axis.first.push_back(static_cast<int64_t>(base) - 1);
    axis.weights.push_back({((a * s1 - 5 * a) * s1 + 8 * a) * s1 - 4 * a, ((a + 2) * s - (a + 3)) * s * s + 1,
                            ((a + 2) * r - (a + 3)) * r * r + 1, ((a * r1 - 5 * a) * r1 + 8 * a) * r1 - 4 * a});
  }
  return axis;
}

// Linear or cubic resize of the two innermost axes of a float tensor as onnxruntime's kernels compute it
// (ort_2d_resize_applies). Linear, with a = the distance to the upper neighbour (the lower one's weight)
// and b = to the lower one along each axis: (((a_x a_y) X[y_lo][x_lo] + (b_x a_y) X[y_lo][x_hi]) +
// (a_x b_y) X[y_hi][x_lo]) + (b_x b_y) X[y_hi][x_hi]. Cubic: each of the four rows interpolated along x
// (its weights times the values, added in order from 0), then those four along y the same way.
void resize_2d_like_ort(const Tensor& x, const std::vector<double>& scales, const Dims& out_dims, const ResizeParams& p,
                        Tensor& out) {
  const size_t rank = x.rank();
  const int64_t in_h = x.dim(rank - 2), in_w = x.dim(rank - 1), out_h = out_dims[rank - 2], out_w = out_dims[rank - 1];
  const float scale_h = static_cast<float>(scales[rank - 2]), scale_w = static_cast<float>(scales[rank - 1]);
  const int64_t planes = x.numel() / (in_h * in_w);
  const float* in = x.data<float>();
  float* o = out.data<float>();
  if (p.mode == "linear") {
    const BilinearAxis rows = bilinear_axis(p.coord, in_h, out_h, scale_h), cols = bilinear_axis(p.coord, in_w, out_w, scale_w);
    for (int64_t plane = 0; plane < planes; ++plane) {
      const float* src = in + plane * in_h * in_w;
      for (int64_t r = 0; r < out_h; ++r) {
        const auto i = static_cast<size_t>(r);
        const float* lo_row = src + rows.lo[i] * in_w;
        const float* hi_row = src + rows.hi[i] * in_w;
        const float a_y = rows.to_hi[i], b_y = rows.to_lo[i];
        for (int64_t c = 0; c < out_w; ++c) {
          const auto k = static_cast<size_t>(c);
          const float a_x = cols.to_hi[k], b_x = cols.to_lo[k];
          *o++ = (((a_x * a_y) * lo_row[cols.lo[k]] + (b_x * a_y) * lo_row[cols.hi[k]]) + (a_x * b_y) * hi_row[cols.lo[k]]) +
                 (b_x * b_y) * hi_row[cols.hi[k]];
        }
      }
    }
    return;
  }
  const float a = static_cast<float>(p.cubic_a);
  const BicubicAxis rows = bicubic_axis(p.coord, out_h, scale_h, a), cols = bicubic_axis(p.coord, out_w, scale_w, a);
  const auto clamped = [](int64_t v, int64_t len) { return std::max<int64_t>(0, std::min(v, len - 1)); };
  for (int64_t plane = 0; plane < planes; ++plane) {
    const float* src = in + plane * in_h * in_w;
    for (int64_t r = 0; r < out_h; ++r) {
      const auto i = static_cast<size_t>(r);
      for (int64_t c = 0; c < out_w; ++c) {
        const auto k = static_cast<size_t>(c);
        float result = 0.0f;
        for (int64_t dy = 0; dy < 4; ++dy) {
          const float* row = src + clamped(rows.first[i] + dy, in_h) * in_w;
          float along_x = 0.0f;
          for (int64_t dx = 0; dx < 4; ++dx) along_x += cols.weights[k][static_cast<size_t>(dx)] * row[clamped(cols.first[k] + dx, in_w)];
          result += along_x * rows.weights[i][static_cast<size_t>(dy)];
        }
        *o++ = result;
      }
    }
  }
}

// Resizes x given per-axis scales and output dims (roi as [starts..., ends...] or empty); the
// modes in `p` were checked at plan time.
Status run_resize(exec::KernelContext& ctx, const Tensor& x, const std::vector<double>& scales, const Dims& out_dims,
                  const std::vector<double>& roi, const ResizeParams& p) {
  QONNX_RETURN_IF_ERROR(check_output_dims(ctx, out_dims, x.dtype()));
  const size_t rank = x.rank();
  if (p.coord == "tf_crop_and_resize" && roi.size() != 2 * rank)
    return ctx.error(Code::kInvalidModel, "tf_crop_and_resize needs roi with {} values, got {}", 2 * rank, roi.size());
  Tensor out(x.dtype(), out_dims);
  if (out.numel() == 0) {
    ctx.set_output(0, std::move(out));
    return Status::ok();
  }
  if (x.numel() == 0) return ctx.input_error(Code::kInvalidModel, 0, "cannot resize an empty tensor to {}", dims_to_string(out_dims));
  std::vector<AxisMap> maps;
  for (size_t a = 0; a < rank; ++a) {
    const double rs = roi.empty() ? 0.0 : roi[a], re = roi.empty() ? 1.0 : roi[a + rank];
    maps.push_back(map_axis(p, x.dim(a), out_dims[a], scales[a], rs, re));
  }
  if (p.mode == "nearest") {
    const std::vector<int64_t> strides = row_major_strides(x.dims());
    std::vector<std::vector<int64_t>> tables(rank);
    for (size_t a = 0; a < rank; ++a)
      for (size_t c = 0; c < maps[a].taps.size(); ++c)
        tables[a].push_back(maps[a].outside[c] ? kOutside : maps[a].taps[c][0].index * strides[a]);
    Tensor fill;
    if (x.dtype() != DType::kString) {
      QONNX_ASSIGN_OR_RETURN(fill, exec::cast_tensor(Tensor::scalar<double>(DType::kDouble, p.extrapolation), x.dtype()));
    } else {
      fill = Tensor(DType::kString, {});
    }
    copy_by_axis_tables(x, out, tables, &fill);
  } else if (ort_2d_resize_applies(x, scales, out_dims, p)) {
    resize_2d_like_ort(x, scales, out_dims, p, out);
  } else {
    QONNX_RETURN_IF_ERROR(interpolate(ctx, x, maps, out_dims, p, out));
  }
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

// Output dims floor(in * scale) for scales given per axis.
Result<Dims> dims_from_scales(const exec::KernelContext& ctx, size_t input, const Tensor& x, const std::vector<double>& scales) {
  Dims out(x.rank());
  for (size_t a = 0; a < x.rank(); ++a) {
    const double v = std::floor(static_cast<double>(x.dim(a)) * scales[a]);
    if (!(scales[a] > 0) || !(v < 9e15))
      return ctx.input_error(Code::kInvalidModel, input, "scale {} for axis {} is invalid", scales[a], a);
    out[a] = static_cast<int64_t>(v);
  }
  return out;
}

Result<std::vector<double>> float_values(const exec::KernelContext& ctx, size_t i, const char* what) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* t, ctx.required(i, what));
  if (!dtype_is_float(t->dtype()))
    return ctx.input_error(Code::kInvalidModel, i, "{} must be a float tensor, got {}", what, dtype_name(t->dtype()));
  std::vector<double> v(static_cast<size_t>(t->numel()));
  for (int64_t k = 0; k < t->numel(); ++k) v[static_cast<size_t>(k)] = exec::element_as_double(*t, k);
  return v;
}

// Resize's forms: scales only, asymmetric nearest "simple" (10); roi/scales/sizes and the coordinate
// modes (11..17); the axes, antialias and keep_aspect_ratio_policy attributes (18); the
// half_pixel_symmetric coordinate mode (19 on).
enum class ResizeForm { kScales, kRoiScalesSizes, kAxes, kHalfPixelSymmetric };

struct ResizeAttrs {
  ResizeForm form;
  ResizeParams p;
  std::optional<std::vector<int64_t>> axes;  // from 18, when given: the axes roi/scales/sizes refer to
  std::string policy = "stretch";            // keep_aspect_ratio_policy, from 18
};

template <ResizeForm Form>
Result<ResizeAttrs> prepare_resize(const ir::Node& node, int64_t) {
  ResizeAttrs a{Form, {}, std::nullopt, "stretch"};
  ResizeParams& p = a.p;
  QONNX_ASSIGN_OR_RETURN(p.mode, string_attr(node, "mode", "nearest"));
  if (Form == ResizeForm::kScales) {
    QONNX_RETURN_IF_ERROR(check_one_of("mode", p.mode, {"nearest", "linear"}));
    p.coord = "asymmetric";
    p.nearest = "simple";
    return a;
  }
  QONNX_RETURN_IF_ERROR(check_one_of("mode", p.mode, {"nearest", "linear", "cubic"}));
  QONNX_ASSIGN_OR_RETURN(p.coord, string_attr(node, "coordinate_transformation_mode", "half_pixel"));
  if (Form == ResizeForm::kHalfPixelSymmetric) {
    QONNX_RETURN_IF_ERROR(check_one_of("coordinate_transformation_mode", p.coord,
                                       {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                                        "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"}));
  } else {
    QONNX_RETURN_IF_ERROR(check_one_of("coordinate_transformation_mode", p.coord,
                                       {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                        "tf_half_pixel_for_nn", "tf_crop_and_resize"}));
  }
  QONNX_ASSIGN_OR_RETURN(p.nearest, string_attr(node, "nearest_mode", "round_prefer_floor"));
  QONNX_RETURN_IF_ERROR(check_one_of("nearest_mode", p.nearest, {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}));
  // cubic_a and extrapolation are doubles in ResizeParams; the attributes are floats.
  QONNX_ASSIGN_OR_RETURN(const float cubic_a, float_attr(node, "cubic_coeff_a", -0.75f));
  QONNX_ASSIGN_OR_RETURN(const float extrapolation, float_attr(node, "extrapolation_value", 0.0f));
  p.cubic_a = cubic_a;
  p.extrapolation = extrapolation;
  QONNX_ASSIGN_OR_RETURN(p.exclude_outside, flag_attr(node, "exclude_outside", false));
  if (Form == ResizeForm::kRoiScalesSizes) return a;
  QONNX_ASSIGN_OR_RETURN(const bool antialias, flag_attr(node, "antialias", false));
  if (antialias) return Status(Code::kUnsupported, "Resize with antialias is not supported");
  if (node.has_attr("axes")) {
    QONNX_ASSIGN_OR_RETURN(a.axes, ints_attr(node, "axes"));
  }
  QONNX_ASSIGN_OR_RETURN(a.policy, string_attr(node, "keep_aspect_ratio_policy", "stretch"));
  QONNX_RETURN_IF_ERROR(check_one_of("keep_aspect_ratio_policy", a.policy, {"stretch", "not_larger", "not_smaller"}));
  return a;
}

Status resize(exec::KernelContext& ctx, const ResizeAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "X"));
  const ResizeParams& p = attrs.p;
  const size_t rank = x->rank();
  if (attrs.form == ResizeForm::kScales) {
    QONNX_ASSIGN_OR_RETURN(std::vector<double> scales, float_values(ctx, 1, "scales"));
    if (scales.size() != rank) return ctx.input_error(Code::kInvalidModel, 1, "scales has {} entries for rank {}", scales.size(), rank);
    QONNX_ASSIGN_OR_RETURN(Dims out_dims, dims_from_scales(ctx, 1, *x, scales));
    return run_resize(ctx, *x, scales, out_dims, {}, p);
  }
  // Axes the roi/scales/sizes refer to (all axes unless the attribute names some).
  std::vector<int64_t> axes;
  if (attrs.axes) {
    axes = *attrs.axes;
    if (!normalize_axes(&axes, static_cast<int64_t>(rank)))
      return ctx.error(Code::kInvalidModel, "axes {} are out of range or repeated for rank {}", dims_to_string(axes), rank);
  } else {
    for (size_t a = 0; a < rank; ++a) axes.push_back(static_cast<int64_t>(a));
  }
  const Tensor* roi_t = ctx.input(1);
  const Tensor* scales_t = ctx.input(2);
  const Tensor* sizes_t = ctx.input(3);
  const bool has_scales = scales_t && scales_t->numel() > 0, has_sizes = sizes_t && sizes_t->numel() > 0;
  if (has_scales == has_sizes) return ctx.error(Code::kInvalidModel, "exactly one of scales and sizes must be given");
  std::vector<double> roi;
  if (roi_t && roi_t->numel() > 0 && p.coord == "tf_crop_and_resize") {
    QONNX_ASSIGN_OR_RETURN(std::vector<double> given, float_values(ctx, 1, "roi"));
    if (given.size() != 2 * axes.size())
      return ctx.input_error(Code::kInvalidModel, 1, "roi has {} entries, expected {}", given.size(), 2 * axes.size());
    roi.assign(2 * rank, 0.0);
    for (size_t a = rank; a < 2 * rank; ++a) roi[a] = 1.0;
    for (size_t i = 0; i < axes.size(); ++i) {
      roi[static_cast<size_t>(axes[i])] = given[i];
      roi[static_cast<size_t>(axes[i]) + rank] = given[i + axes.size()];
    }
  }
  std::vector<double> scales(rank, 1.0);
  Dims out_dims = x->dims();
  if (has_scales) {
    QONNX_ASSIGN_OR_RETURN(std::vector<double> given, float_values(ctx, 2, "scales"));
    if (given.size() != axes.size()) return ctx.input_error(Code::kInvalidModel, 2, "scales has {} entries, expected {}", given.size(), axes.size());
    for (size_t i = 0; i < axes.size(); ++i) scales[static_cast<size_t>(axes[i])] = given[i];
    QONNX_ASSIGN_OR_RETURN(out_dims, dims_from_scales(ctx, 2, *x, scales));
  } else {
    auto given = read_ints(*sizes_t);
    if (!given || given->size() != axes.size())
      return ctx.input_error(Code::kInvalidModel, 3, "sizes must be {} int64 values", axes.size());
    for (int64_t s : *given)
      if (s < 0) return ctx.input_error(Code::kInvalidModel, 3, "sizes {} has a negative entry", dims_to_string(*given));
    const std::string& policy = attrs.policy;
    if (policy == "stretch") {
      for (size_t i = 0; i < axes.size(); ++i) {
        const size_t a = static_cast<size_t>(axes[i]);
        out_dims[a] = (*given)[i];
        scales[a] = x->dim(a) == 0 ? 1.0 : static_cast<double>(out_dims[a]) / static_cast<double>(x->dim(a));
      }
    } else {  // not_larger, not_smaller
      double s = policy == "not_larger" ? INFINITY : 0.0;
      for (size_t i = 0; i < axes.size(); ++i) {
        if (x->dim(static_cast<size_t>(axes[i])) == 0)
          return ctx.input_error(Code::kInvalidModel, 0, "{} resize of an empty axis is undefined", policy);
        const double r = static_cast<double>((*given)[i]) / static_cast<double>(x->dim(static_cast<size_t>(axes[i])));
        s = policy == "not_larger" ? std::min(s, r) : std::max(s, r);
      }
      for (int64_t a : axes) {
        scales[static_cast<size_t>(a)] = s;
        out_dims[static_cast<size_t>(a)] = static_cast<int64_t>(std::round(s * static_cast<double>(x->dim(static_cast<size_t>(a)))));
      }
    }
  }
  return run_resize(ctx, *x, scales, out_dims, roi, p);
}

// Upsample's scales: the attribute (7, 8) or input #1 (9 on).
struct UpsampleAttrs {
  ResizeParams p;
  std::optional<std::vector<double>> scales;  // the attribute's (7, 8)
};

template <bool ScalesInput>
Result<UpsampleAttrs> prepare_upsample(const ir::Node& node, int64_t) {
  UpsampleAttrs a;
  QONNX_ASSIGN_OR_RETURN(a.p.mode, string_attr(node, "mode", "nearest"));
  QONNX_RETURN_IF_ERROR(check_one_of("mode", a.p.mode, {"nearest", "linear"}));
  a.p.coord = "asymmetric";
  a.p.nearest = "simple";
  if (!ScalesInput) {
    a.scales.emplace();
    QONNX_ASSIGN_OR_RETURN(const std::vector<float> scales, floats_attr(node, "scales"));
    a.scales->assign(scales.begin(), scales.end());
  }
  return a;
}

Status upsample(exec::KernelContext& ctx, const UpsampleAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "X"));
  std::vector<double> scales;
  if (attrs.scales) {
    scales = *attrs.scales;
  } else {
    QONNX_ASSIGN_OR_RETURN(scales, float_values(ctx, 1, "scales"));
  }
  if (scales.size() != x->rank())
    return ctx.error(Code::kInvalidModel, "scales has {} entries for rank {}", scales.size(), x->rank());
  QONNX_ASSIGN_OR_RETURN(Dims out_dims, dims_from_scales(ctx, 1, *x, scales));
  return run_resize(ctx, *x, scales, out_dims, {}, attrs.p);
}

}  // namespace

void register_resize_kernels(exec::KernelRegistry& r) {
  using F = ResizeForm;
  r.add("", "Resize", {10, 10}, exec::typed_kernel<ResizeAttrs, prepare_resize<F::kScales>, resize>());
  r.add("", "Resize", {11, 17}, exec::typed_kernel<ResizeAttrs, prepare_resize<F::kRoiScalesSizes>, resize>());
  r.add("", "Resize", {18, 18}, exec::typed_kernel<ResizeAttrs, prepare_resize<F::kAxes>, resize>());
  r.add("", "Resize", {19, exec::kNoUpperVersion},
        exec::typed_kernel<ResizeAttrs, prepare_resize<F::kHalfPixelSymmetric>, resize>());
  // Upsample-1 (height_scale/width_scale) has no kernel; deprecated from 10, still run as Upsample-9.
  r.add("", "Upsample", {7, 8}, exec::typed_kernel<UpsampleAttrs, prepare_upsample<false>, upsample>());
  r.add("", "Upsample", {9, exec::kNoUpperVersion}, exec::typed_kernel<UpsampleAttrs, prepare_upsample<true>, upsample>());
}

}  // namespace qonnx::kernels
