// Signal processing (opset 17): DFT (17, and 20 with the axis as an input), STFT, the Hann, Hamming
// and Blackman window generators and MelWeightMatrix. Transforms are direct sums over a table of
// twiddle factors, in double, rounded to the input type at the end.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels/common/attr_check.h"
#include "kernels/common/element_copy.h"
#include "kernels/onnx/onnx_kernels.h"
#include "qonnx/exec/dtype_dispatch.h"

namespace qonnx::kernels {
namespace {

constexpr double kPi = 3.14159265358979323846;
// Longest transform or window generated (elements along one axis).
constexpr int64_t kMaxSignalLength = int64_t{1} << 26;

// A scalar (or one-element) integer input.
Result<int64_t> int_scalar(const exec::KernelContext& ctx, size_t i, const char* what) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* t, ctx.required(i, what));
  if ((t->dtype() != DType::kInt32 && t->dtype() != DType::kInt64) || t->numel() != 1)
    return ctx.input_error(Code::kInvalidModel, i, "{} must be one int32 or int64 value, got {} {}", what,
                           dtype_name(t->dtype()), dims_to_string(t->dims()));
  return t->dtype() == DType::kInt32 ? int64_t{t->data<int32_t>()[0]} : t->data<int64_t>()[0];
}

Result<double> float_scalar(const exec::KernelContext& ctx, size_t i, const char* what) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* t, ctx.required(i, what));
  if (!dtype_is_float(t->dtype()) || t->numel() != 1)
    return ctx.input_error(Code::kInvalidModel, i, "{} must be one float value, got {} {}", what, dtype_name(t->dtype()),
                           dims_to_string(t->dims()));
  return exec::element_as_double(*t, 0);
}

// Twiddles of an n-point transform: e^{-2 pi i k / n} (sign flipped for the inverse), k in [0, n).
struct Twiddles {
  std::vector<double> re, im;
  Twiddles(int64_t n, bool inverse) : re(static_cast<size_t>(n)), im(static_cast<size_t>(n)) {
    for (int64_t k = 0; k < n; ++k) {
      const double a = 2.0 * kPi * static_cast<double>(k) / static_cast<double>(n);
      re[static_cast<size_t>(k)] = std::cos(a);
      im[static_cast<size_t>(k)] = inverse ? std::sin(a) : -std::sin(a);
    }
  }
};

// out[w] = sum_j in[j] e^{-+2 pi i w j / n} for w < bins; `in` holds n complex values (re, im pairs)
// at stride `in_stride` complex elements, `out` bins at `out_stride`. The inverse divides by n.
void transform(const double* in, int64_t in_stride, int64_t n, int64_t bins, const Twiddles& tw, bool inverse,
               double* out, int64_t out_stride) {
  for (int64_t w = 0; w < bins; ++w) {
    double sr = 0, si = 0;
    int64_t k = 0;  // (w * j) mod n, stepped
    for (int64_t j = 0; j < n; ++j) {
      const double xr = in[2 * j * in_stride], xi = in[2 * j * in_stride + 1];
      const double c = tw.re[static_cast<size_t>(k)], s = tw.im[static_cast<size_t>(k)];
      sr += xr * c - xi * s;
      si += xr * s + xi * c;
      k += w;
      if (k >= n) k %= n;
    }
    if (inverse) {
      sr /= static_cast<double>(n);
      si /= static_cast<double>(n);
    }
    out[2 * w * out_stride] = sr;
    out[2 * w * out_stride + 1] = si;
  }
}

// The transforms are direct sums (lines x n x bins multiply-adds): refuse what would run for hours.
Status check_work(const exec::KernelContext& ctx, int64_t lines, int64_t n, int64_t bins) {
  const double work = static_cast<double>(lines) * static_cast<double>(n) * static_cast<double>(bins);
  if (work > 0x1.0p38)
    return ctx.error(Code::kUnsupported, "a transform of {} lines of {} points ({} bins) is beyond the direct DFT's budget", lines, n, bins);
  return Status::ok();
}

struct DftAttrs {
  bool axis_input = false;  // DFT-20: the axis is input #2 (default -2)
  int64_t axis = 1;
  bool inverse = false;
  bool onesided = false;
};

template <bool AxisInput>
Result<DftAttrs> prepare_dft(const ir::Node& node, int64_t) {
  DftAttrs a;
  a.axis_input = AxisInput;
  if (!AxisInput) {
    QONNX_ASSIGN_OR_RETURN(a.axis, int_attr(node, "axis", 1));
  } else if (node.has_attr("axis")) {
    return Status(Code::kInvalidModel, "attribute 'axis' is not part of DFT-20 (the axis is input #2)");
  }
  QONNX_ASSIGN_OR_RETURN(a.inverse, flag_attr(node, "inverse", false));
  QONNX_ASSIGN_OR_RETURN(a.onesided, flag_attr(node, "onesided", false));
  return a;
}

Status dft(exec::KernelContext& ctx, const DftAttrs& a) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "input"));
  if (!dtype_is_float(x->dtype()))
    return ctx.input_error(Code::kUnsupported, 0, "type {} is not supported (float types)", dtype_name(x->dtype()));
  const int64_t rank = static_cast<int64_t>(x->rank());
  if (rank < 2 || (x->dims().back() != 1 && x->dims().back() != 2))
    return ctx.input_error(Code::kInvalidModel, 0, "must be [batch, signal dims..., 1 or 2], got shape {}",
                           dims_to_string(x->dims()));
  int64_t axis = a.axis;
  if (a.axis_input) {
    axis = -2;
    if (ctx.input(2)) {
      QONNX_ASSIGN_OR_RETURN(axis, int_scalar(ctx, 2, "axis"));
    }
  }
  // Signal axes are 1 .. rank-2 (17: counted from the front; 20 also from the back, -2 the last).
  const int64_t resolved = axis < 0 ? axis + rank : axis;
  if (resolved < 1 || resolved > rank - 2)
    return ctx.error(Code::kInvalidModel, "axis {} is not a signal axis of the rank-{} input (1 to {})", axis, rank, rank - 2);
  const int64_t len = x->dim(static_cast<size_t>(resolved));
  int64_t n = len;
  if (ctx.input(1)) {
    QONNX_ASSIGN_OR_RETURN(n, int_scalar(ctx, 1, "dft_length"));
    if (n < 1 || n > kMaxSignalLength) return ctx.input_error(Code::kInvalidModel, 1, "dft_length {} is out of range", n);
  }
  if (n < 1) return ctx.input_error(Code::kInvalidModel, 0, "the signal axis is empty");
  const int64_t bins = a.onesided ? n / 2 + 1 : n;
  Dims out_dims = x->dims();
  out_dims[static_cast<size_t>(resolved)] = bins;
  out_dims.back() = 2;
  QONNX_RETURN_IF_ERROR(check_output_dims(ctx, out_dims, DType::kDouble));
  // Also the padded input, [outer, n, inner, 2].
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < resolved; ++d) outer *= x->dim(static_cast<size_t>(d));
  for (int64_t d = resolved + 1; d < rank - 1; ++d) inner *= x->dim(static_cast<size_t>(d));
  QONNX_RETURN_IF_ERROR(check_output_dims(ctx, {outer, n, inner, 2}, DType::kDouble));
  QONNX_ASSIGN_OR_RETURN(Tensor xd, exec::cast_tensor(*x, DType::kDouble));
  const int64_t comps = x->dims().back();
  Tensor padded(DType::kDouble, {outer, n, inner, 2});  // zero: the padding
  const int64_t copy = std::min(len, n);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < copy; ++j)
      for (int64_t i = 0; i < inner; ++i)
        for (int64_t c = 0; c < comps; ++c)
          padded.data<double>()[((o * n + j) * inner + i) * 2 + c] = xd.data<double>()[((o * len + j) * inner + i) * comps + c];
  QONNX_RETURN_IF_ERROR(check_work(ctx, outer * inner, n, bins));
  Tensor y(DType::kDouble, out_dims);
  const Twiddles tw(n, a.inverse);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      transform(padded.data<double>() + (o * n * inner + i) * 2, inner, n, bins, tw, a.inverse,
                y.data<double>() + (o * bins * inner + i) * 2, inner);
  QONNX_ASSIGN_OR_RETURN(Tensor out, exec::cast_tensor(y, x->dtype()));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

struct StftAttrs {
  bool onesided = true;
};

Result<StftAttrs> prepare_stft(const ir::Node& node, int64_t) {
  StftAttrs a;
  QONNX_ASSIGN_OR_RETURN(a.onesided, flag_attr(node, "onesided", true));
  return a;
}

Status stft(exec::KernelContext& ctx, const StftAttrs& a) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "signal"));
  if (!dtype_is_float(x->dtype()))
    return ctx.input_error(Code::kUnsupported, 0, "type {} is not supported (float types)", dtype_name(x->dtype()));
  if (x->rank() != 3 || (x->dim(2) != 1 && x->dim(2) != 2))
    return ctx.input_error(Code::kInvalidModel, 0, "must be [batch, length, 1 or 2], got shape {}", dims_to_string(x->dims()));
  const int64_t batch = x->dim(0), length = x->dim(1), comps = x->dim(2);
  QONNX_ASSIGN_OR_RETURN(const int64_t step, int_scalar(ctx, 1, "frame_step"));
  if (step < 1) return ctx.input_error(Code::kInvalidModel, 1, "frame_step must be positive, got {}", step);
  const Tensor* window = ctx.input(2);
  int64_t n = -1;
  if (window) {
    if (window->rank() != 1 || window->dtype() != x->dtype())
      return ctx.input_error(Code::kInvalidModel, 2, "window must be a 1-D {} tensor, got {} {}", dtype_name(x->dtype()),
                             dtype_name(window->dtype()), dims_to_string(window->dims()));
    n = window->dim(0);
  }
  if (ctx.input(3)) {
    QONNX_ASSIGN_OR_RETURN(const int64_t fl, int_scalar(ctx, 3, "frame_length"));
    if (n >= 0 && fl != n)
      return ctx.input_error(Code::kInvalidModel, 3, "frame_length {} differs from the window's length {}", fl, n);
    n = fl;
  }
  if (n < 0) return ctx.error(Code::kInvalidModel, "STFT needs a window or a frame_length");
  if (n < 1 || n > length)
    return ctx.error(Code::kInvalidModel, "frame length {} is outside [1, signal length {}]", n, length);
  if (a.onesided && comps == 2)
    return ctx.input_error(Code::kInvalidModel, 0, "onesided output needs a real signal (last dim 1), got a complex one");
  const int64_t frames = 1 + (length - n) / step;
  const int64_t bins = a.onesided ? n / 2 + 1 : n;
  const Dims out_dims{batch, frames, bins, 2};
  QONNX_RETURN_IF_ERROR(check_output_dims(ctx, out_dims, DType::kDouble));
  QONNX_ASSIGN_OR_RETURN(Tensor xd, exec::cast_tensor(*x, DType::kDouble));
  Tensor wd;
  if (window) {
    QONNX_ASSIGN_OR_RETURN(wd, exec::cast_tensor(*window, DType::kDouble));
  }
  QONNX_RETURN_IF_ERROR(check_work(ctx, batch * frames, n, bins));
  Tensor y(DType::kDouble, out_dims);
  const Twiddles tw(n, false);
  std::vector<double> frame(static_cast<size_t>(2 * n));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t f = 0; f < frames; ++f) {
      for (int64_t j = 0; j < n; ++j) {
        const double* s = xd.data<double>() + (b * length + f * step + j) * comps;
        const double w = wd.defined() ? wd.data<double>()[j] : 1.0;
        frame[static_cast<size_t>(2 * j)] = s[0] * w;
        frame[static_cast<size_t>(2 * j + 1)] = comps == 2 ? s[1] * w : 0.0;
      }
      transform(frame.data(), 1, n, bins, tw, false, y.data<double>() + (b * frames + f) * bins * 2, 1);
    }
  QONNX_ASSIGN_OR_RETURN(Tensor out, exec::cast_tensor(y, x->dtype()));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

enum class Window { kHann, kHamming, kBlackman };

struct WindowAttrs {
  DType dtype = DType::kFloat;
  bool periodic = true;
};

// output_datatype: one of the numeric types the schema's T2 allows.
Result<DType> output_datatype(const ir::Node& node) {
  QONNX_ASSIGN_OR_RETURN(const int64_t code, int_attr(node, "output_datatype", 1));
  const DType allowed[] = {DType::kUInt8, DType::kUInt16, DType::kUInt32, DType::kUInt64, DType::kInt8,  DType::kInt16,
                           DType::kInt32, DType::kInt64,  DType::kFloat16, DType::kFloat, DType::kDouble, DType::kBFloat16};
  for (DType d : allowed)
    if (static_cast<int64_t>(d) == code) return d;
  return Status(Code::kInvalidModel, fmt::format("attribute 'output_datatype': {} is not a numeric data type", code));
}

Result<WindowAttrs> prepare_window(const ir::Node& node, int64_t) {
  WindowAttrs a;
  QONNX_ASSIGN_OR_RETURN(a.dtype, output_datatype(node));
  QONNX_ASSIGN_OR_RETURN(a.periodic, flag_attr(node, "periodic", true));
  return a;
}

template <Window K>
Status window(exec::KernelContext& ctx, const WindowAttrs& a) {
  QONNX_ASSIGN_OR_RETURN(const int64_t size, int_scalar(ctx, 0, "size"));
  if (size < 0 || size > kMaxSignalLength) return ctx.input_error(Code::kInvalidModel, 0, "size {} is out of range", size);
  // Periodic: the first `size` points of a size+1 symmetric window, i.e. the period is N = size.
  const double n = static_cast<double>(a.periodic ? size : size - 1);
  Tensor y(DType::kDouble, {size});
  for (int64_t i = 0; i < size; ++i) {
    const double t = n > 0 ? 2.0 * kPi * static_cast<double>(i) / n : 0.0;
    double v;
    if constexpr (K == Window::kHann) v = 0.5 - 0.5 * std::cos(t);
    else if constexpr (K == Window::kHamming) v = 25.0 / 46.0 - (21.0 / 46.0) * std::cos(t);
    else v = 0.42 - 0.5 * std::cos(t) + 0.08 * std::cos(2 * t);
    y.data<double>()[i] = v;
  }
  QONNX_ASSIGN_OR_RETURN(Tensor out, exec::cast_tensor(y, a.dtype));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

struct MelAttrs {
  DType dtype = DType::kFloat;
};

Result<MelAttrs> prepare_mel(const ir::Node& node, int64_t) {
  MelAttrs a;
  QONNX_ASSIGN_OR_RETURN(a.dtype, output_datatype(node));
  return a;
}

// Triangular filters with peak 1 between mel-spaced points (mel(f) = 2595 log10(1 + f / 700)) mapped to
// spectrogram bins floor((dft_length + 1) f / sample_rate); output [dft_length / 2 + 1, num_mel_bins].
Status mel_weight_matrix(exec::KernelContext& ctx, const MelAttrs& a) {
  QONNX_ASSIGN_OR_RETURN(const int64_t mel_bins, int_scalar(ctx, 0, "num_mel_bins"));
  QONNX_ASSIGN_OR_RETURN(const int64_t dft_length, int_scalar(ctx, 1, "dft_length"));
  QONNX_ASSIGN_OR_RETURN(const int64_t sample_rate, int_scalar(ctx, 2, "sample_rate"));
  QONNX_ASSIGN_OR_RETURN(const double lower, float_scalar(ctx, 3, "lower_edge_hertz"));
  QONNX_ASSIGN_OR_RETURN(const double upper, float_scalar(ctx, 4, "upper_edge_hertz"));
  if (mel_bins < 1 || mel_bins > kMaxSignalLength) return ctx.input_error(Code::kInvalidModel, 0, "num_mel_bins {} is out of range", mel_bins);
  if (dft_length < 1 || dft_length > kMaxSignalLength) return ctx.input_error(Code::kInvalidModel, 1, "dft_length {} is out of range", dft_length);
  if (sample_rate < 1) return ctx.input_error(Code::kInvalidModel, 2, "sample_rate must be positive, got {}", sample_rate);
  if (!(lower >= 0) || !(upper >= lower) || !std::isfinite(upper))
    return ctx.error(Code::kInvalidModel, "the edges must satisfy 0 <= lower_edge_hertz <= upper_edge_hertz, got {} and {}", lower, upper);
  const int64_t spec_bins = dft_length / 2 + 1;
  QONNX_RETURN_IF_ERROR(check_output_dims(ctx, {spec_bins, mel_bins}, DType::kDouble));
  auto mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
  const double low = mel(lower), high = mel(upper);
  const double step = (high - low) / static_cast<double>(mel_bins + 2);
  std::vector<int64_t> points(static_cast<size_t>(mel_bins + 2));
  for (int64_t i = 0; i < mel_bins + 2; ++i) {
    const double hz = 700.0 * (std::pow(10.0, (low + step * static_cast<double>(i)) / 2595.0) - 1.0);
    const double bin = std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(sample_rate));
    // Bins past the spectrogram only shape the slopes' denominators: clamped far enough not to matter
    // for the rows kept, and to stay an int64.
    points[static_cast<size_t>(i)] = static_cast<int64_t>(std::min(bin, static_cast<double>(int64_t{1} << 40)));
  }
  Tensor y(DType::kDouble, {spec_bins, mel_bins});
  auto put = [&](int64_t row, int64_t col, double v) {
    if (row >= 0 && row < spec_bins) y.data<double>()[row * mel_bins + col] = v;  // bins past Nyquist are dropped
  };
  for (int64_t i = 0; i < mel_bins; ++i) {
    const int64_t left = points[static_cast<size_t>(i)], center = points[static_cast<size_t>(i + 1)],
                  right = points[static_cast<size_t>(i + 2)];
    if (center == left) {
      put(center, i, 1.0);
    } else {
      for (int64_t j = std::max<int64_t>(left, 0); j <= std::min(center, spec_bins - 1); ++j)
        put(j, i, static_cast<double>(j - left) / static_cast<double>(center - left));
    }
    for (int64_t j = std::max<int64_t>(center, 0); j < std::min(right, spec_bins); ++j)
      put(j, i, static_cast<double>(right - j) / static_cast<double>(right - center));
  }
  QONNX_ASSIGN_OR_RETURN(Tensor out, exec::cast_tensor(y, a.dtype));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_signal_kernels(exec::KernelRegistry& r) {
  r.add("", "DFT", {17, 19}, exec::typed_kernel<DftAttrs, prepare_dft<false>, dft>());
  r.add("", "DFT", {20, exec::kNoUpperVersion}, exec::typed_kernel<DftAttrs, prepare_dft<true>, dft>());
  r.add("", "STFT", {17, exec::kNoUpperVersion}, exec::typed_kernel<StftAttrs, prepare_stft, stft>());
  r.add("", "HannWindow", {17, exec::kNoUpperVersion}, exec::typed_kernel<WindowAttrs, prepare_window, window<Window::kHann>>());
  r.add("", "HammingWindow", {17, exec::kNoUpperVersion}, exec::typed_kernel<WindowAttrs, prepare_window, window<Window::kHamming>>());
  r.add("", "BlackmanWindow", {17, exec::kNoUpperVersion}, exec::typed_kernel<WindowAttrs, prepare_window, window<Window::kBlackman>>());
  r.add("", "MelWeightMatrix", {17, exec::kNoUpperVersion}, exec::typed_kernel<MelAttrs, prepare_mel, mel_weight_matrix>());
}

}  // namespace qonnx::kernels
