// Detection-head ops: NonMaxSuppression (10, 11) and RoiAlign (10, 16).
//
// NonMaxSuppression: per batch and class, the boxes whose score is above score_threshold are visited
// by decreasing score (equal scores: lower box index first); a box is kept unless its IoU with a box
// already kept exceeds iou_threshold, until max_output_boxes_per_class are kept. Output rows are
// [batch, class, box] in batch, class, selection order (onnxruntime's order). A box is [y1, x1, y2, x2]
// with the corners in either order (center_point_box 0) or [x_center, y_center, width, height] (1).
//
// RoiAlign: every output bin averages (mode avg) or takes the maximum (mode max) of bilinear samples
// of its feature map on a regular grid (sampling_ratio per side, or ceil(roi size / bins) when 0), as
// onnxruntime computes them: samples outside [-1, size] count as 0, and mode max takes the largest of
// the four weighted corner values of each sample. coordinate_transformation_mode (16 on): half_pixel
// (the default from 16) shifts the roi by -0.5 pixel; output_half_pixel (the only behaviour of
// RoiAlign-10) does not and makes rois at least 1 x 1.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/common/attr_check.h"
#include "kernels/common/element_copy.h"
#include "kernels/onnx/elementwise_common.h"
#include "kernels/onnx/onnx_kernels.h"

namespace qonnx::kernels {
namespace {

// ---------------------------------------------------------------------------------------------------
// NonMaxSuppression

struct NmsAttrs {
  bool center_point_box = false;
};

Result<NmsAttrs> prepare_nms(const ir::Node& node, int64_t) {
  QONNX_ASSIGN_OR_RETURN(const int64_t cpb, int_attr(node, "center_point_box", 0));
  if (cpb != 0 && cpb != 1)
    return Status(Code::kInvalidModel, fmt::format("attribute 'center_point_box' must be 0 or 1, got {}", cpb));
  return NmsAttrs{cpb == 1};
}

struct Corners {
  float x1, y1, x2, y2;  // x1 <= x2, y1 <= y2
};

Corners box_corners(const float* b, bool center) {
  if (center) {
    const float hw = b[2] / 2, hh = b[3] / 2;
    return {b[0] - hw, b[1] - hh, b[0] + hw, b[1] + hh};
  }
  return {std::min(b[1], b[3]), std::min(b[0], b[2]), std::max(b[1], b[3]), std::max(b[0], b[2])};
}

// IoU(a, b) > threshold; boxes without area or without overlap never suppress.
bool overlaps_beyond(const Corners& a, const Corners& b, float threshold) {
  const float iw = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  const float ih = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  if (iw <= 0 || ih <= 0) return false;
  const float inter = iw * ih;
  const float area_a = (a.x2 - a.x1) * (a.y2 - a.y1), area_b = (b.x2 - b.x1) * (b.y2 - b.y1);
  if (area_a <= 0 || area_b <= 0) return false;
  const float uni = area_a + area_b - inter;
  if (uni <= 0) return false;
  return inter / uni > threshold;
}

// A scalar (or one-element) optional input's value.
template <typename T>
Result<std::optional<T>> optional_scalar(const exec::KernelContext& ctx, size_t i, DType dtype) {
  const Tensor* t = ctx.input(i);
  if (!t) return std::optional<T>();
  if (t->dtype() != dtype) return unsupported_type(ctx, i, t->dtype());
  if (t->numel() != 1) return ctx.input_error(Code::kInvalidModel, i, "must be a scalar, got shape {}", dims_to_string(t->dims()));
  return std::optional<T>(t->data<T>()[0]);
}

Status non_max_suppression(exec::KernelContext& ctx, const NmsAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* boxes, ctx.required(0, "boxes"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* scores, ctx.required(1, "scores"));
  if (boxes->dtype() != DType::kFloat) return unsupported_type(ctx, 0, boxes->dtype());
  if (scores->dtype() != DType::kFloat) return unsupported_type(ctx, 1, scores->dtype());
  if (boxes->rank() != 3 || boxes->dim(2) != 4)
    return ctx.input_error(Code::kInvalidModel, 0, "must have shape (batches, boxes, 4), got {}", dims_to_string(boxes->dims()));
  const int64_t batches = boxes->dim(0), count = boxes->dim(1);
  if (scores->rank() != 3 || scores->dim(0) != batches || scores->dim(2) != count)
    return ctx.input_error(Code::kInvalidModel, 1, "must have shape ({}, classes, {}), got {}", batches, count,
                           dims_to_string(scores->dims()));
  const int64_t classes = scores->dim(1);
  QONNX_ASSIGN_OR_RETURN(const auto max_out, optional_scalar<int64_t>(ctx, 2, DType::kInt64));
  QONNX_ASSIGN_OR_RETURN(const auto iou, optional_scalar<float>(ctx, 3, DType::kFloat));
  QONNX_ASSIGN_OR_RETURN(const auto score_min, optional_scalar<float>(ctx, 4, DType::kFloat));
  const float iou_threshold = iou.value_or(0.0f);
  if (!(iou_threshold >= 0 && iou_threshold <= 1))
    return ctx.input_error(Code::kInvalidModel, 3, "iou_threshold must be in [0, 1], got {}", iou_threshold);
  const int64_t limit = std::max<int64_t>(max_out.value_or(0), 0);

  std::vector<int64_t> selected;  // triples
  std::vector<Corners> corners(static_cast<size_t>(count));
  std::vector<int64_t> order;
  std::vector<size_t> kept;
  for (int64_t b = 0; b < batches && limit > 0; ++b) {
    const float* bx = boxes->data<float>() + b * count * 4;
    for (int64_t i = 0; i < count; ++i) corners[static_cast<size_t>(i)] = box_corners(bx + i * 4, attrs.center_point_box);
    for (int64_t c = 0; c < classes; ++c) {
      const float* sc = scores->data<float>() + (b * classes + c) * count;
      order.clear();
      for (int64_t i = 0; i < count; ++i)
        if (!score_min || sc[i] > *score_min) order.push_back(i);
      // Decreasing score, then increasing index (a NaN score sorts last).
      std::stable_sort(order.begin(), order.end(), [sc](int64_t x, int64_t y) {
        const bool nx = std::isnan(sc[x]), ny = std::isnan(sc[y]);
        if (nx || ny) return !nx && ny;
        return sc[x] > sc[y];
      });
      kept.clear();
      for (const int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= limit) break;
        const Corners& box = corners[static_cast<size_t>(i)];
        bool suppressed = false;
        for (const size_t k : kept)
          if (overlaps_beyond(corners[k], box, iou_threshold)) {
            suppressed = true;
            break;
          }
        if (suppressed) continue;
        kept.push_back(static_cast<size_t>(i));
        selected.insert(selected.end(), {b, c, i});
      }
    }
  }
  Tensor out(DType::kInt64, {static_cast<int64_t>(selected.size() / 3), 3});
  std::copy(selected.begin(), selected.end(), out.data<int64_t>());
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------------
// RoiAlign

struct RoiAlignAttrs {
  bool max_mode = false;
  int64_t output_height = 1, output_width = 1, sampling_ratio = 0;
  float spatial_scale = 1.0f;
  bool half_pixel = false;
};

Result<RoiAlignAttrs> prepare_roi_align(const ir::Node& node, int64_t version) {
  RoiAlignAttrs a;
  QONNX_ASSIGN_OR_RETURN(const std::string mode, string_attr(node, "mode", "avg"));
  QONNX_RETURN_IF_ERROR(check_one_of("mode", mode, {"avg", "max"}));
  a.max_mode = mode == "max";
  QONNX_ASSIGN_OR_RETURN(a.output_height, int_attr(node, "output_height", 1));
  QONNX_ASSIGN_OR_RETURN(a.output_width, int_attr(node, "output_width", 1));
  QONNX_ASSIGN_OR_RETURN(a.sampling_ratio, int_attr(node, "sampling_ratio", 0));
  QONNX_ASSIGN_OR_RETURN(a.spatial_scale, float_attr(node, "spatial_scale", 1.0f));
  if (a.output_height <= 0 || a.output_width <= 0)
    return Status(Code::kInvalidModel, fmt::format("attributes 'output_height' and 'output_width' must be positive, got {} and {}",
                                                   a.output_height, a.output_width));
  if (a.sampling_ratio < 0)
    return Status(Code::kInvalidModel, fmt::format("attribute 'sampling_ratio' must be >= 0, got {}", a.sampling_ratio));
  if (version >= 16) {
    QONNX_ASSIGN_OR_RETURN(const std::string ctm, string_attr(node, "coordinate_transformation_mode", "half_pixel"));
    QONNX_RETURN_IF_ERROR(check_one_of("coordinate_transformation_mode", ctm, {"half_pixel", "output_half_pixel"}));
    a.half_pixel = ctm == "half_pixel";
  } else if (node.has_attr("coordinate_transformation_mode")) {
    return Status(Code::kInvalidModel, "attribute 'coordinate_transformation_mode' exists from RoiAlign-16");
  }
  return a;
}

// The four corners and weights of one bilinear sample at (y, x) in an h x w map (onnxruntime's rule).
struct Sample {
  int64_t offset[4] = {0, 0, 0, 0};
  double weight[4] = {0, 0, 0, 0};
};

// Bilinear samples one roi may take (their positions are kept for all channels).
constexpr double kMaxSamplesPerRoi = double(1 << 22);

Sample bilinear_sample(double y, double x, int64_t h, int64_t w) {
  Sample s;
  if (y < -1.0 || y > static_cast<double>(h) || x < -1.0 || x > static_cast<double>(w)) return s;
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  int64_t y0 = static_cast<int64_t>(y), x0 = static_cast<int64_t>(x), y1, x1;
  if (y0 >= h - 1) {
    y0 = y1 = h - 1;
    y = static_cast<double>(y0);
  } else {
    y1 = y0 + 1;
  }
  if (x0 >= w - 1) {
    x0 = x1 = w - 1;
    x = static_cast<double>(x0);
  } else {
    x1 = x0 + 1;
  }
  const double ly = y - static_cast<double>(y0), lx = x - static_cast<double>(x0), hy = 1 - ly, hx = 1 - lx;
  s.offset[0] = y0 * w + x0;
  s.offset[1] = y0 * w + x1;
  s.offset[2] = y1 * w + x0;
  s.offset[3] = y1 * w + x1;
  s.weight[0] = hy * hx;
  s.weight[1] = hy * lx;
  s.weight[2] = ly * hx;
  s.weight[3] = ly * lx;
  return s;
}

Status roi_align(exec::KernelContext& ctx, const RoiAlignAttrs& a) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "X"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* rois, ctx.required(1, "rois"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* batch_indices, ctx.required(2, "batch_indices"));
  if (!dtype_is_float(x->dtype())) return unsupported_type(ctx, 0, x->dtype());
  QONNX_RETURN_IF_ERROR(require_same_dtype(ctx, 0, 1));
  if (batch_indices->dtype() != DType::kInt64) return unsupported_type(ctx, 2, batch_indices->dtype());
  if (x->rank() != 4)
    return ctx.input_error(Code::kInvalidModel, 0, "must have shape (N, C, H, W), got {}", dims_to_string(x->dims()));
  if (rois->rank() != 2 || rois->dim(1) != 4)
    return ctx.input_error(Code::kInvalidModel, 1, "must have shape (num_rois, 4), got {}", dims_to_string(rois->dims()));
  const int64_t num_rois = rois->dim(0);
  if (batch_indices->rank() != 1 || batch_indices->dim(0) != num_rois)
    return ctx.input_error(Code::kInvalidModel, 2, "must have shape [{}], got {}", num_rois, dims_to_string(batch_indices->dims()));
  const int64_t n = x->dim(0), channels = x->dim(1), h = x->dim(2), w = x->dim(3);
  const int64_t oh = a.output_height, ow = a.output_width;
  const Dims out_dims{num_rois, channels, oh, ow};
  QONNX_RETURN_IF_ERROR(check_output_dims(ctx, out_dims, x->dtype()));
  for (int64_t r = 0; r < num_rois; ++r) {
    const int64_t bi = batch_indices->data<int64_t>()[r];
    if (bi < 0 || bi >= n) return ctx.input_error(Code::kInvalidModel, 2, "batch index {} of roi {} is outside [0, {})", bi, r, n);
  }
  Tensor out = ctx.output_buffer(x->dtype(), out_dims);
  Status status;
  QONNX_RETURN_IF_ERROR(visit_types<kFloats>(ctx, 0, x->dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* in = x->data<T>();
    const T* roi = rois->data<T>();
    T* o = out.data<T>();
    const double offset = a.half_pixel ? 0.5 : 0.0;
    std::vector<Sample> samples;
    for (int64_t r = 0; r < num_rois; ++r) {
      const int64_t bi = batch_indices->data<int64_t>()[r];
      const double x1 = static_cast<double>(load(roi[r * 4 + 0])) * a.spatial_scale - offset;
      const double y1 = static_cast<double>(load(roi[r * 4 + 1])) * a.spatial_scale - offset;
      const double x2 = static_cast<double>(load(roi[r * 4 + 2])) * a.spatial_scale - offset;
      const double y2 = static_cast<double>(load(roi[r * 4 + 3])) * a.spatial_scale - offset;
      double roi_w = x2 - x1, roi_h = y2 - y1;
      if (!a.half_pixel) {
        roi_w = std::max(roi_w, 1.0);
        roi_h = std::max(roi_h, 1.0);
      }
      const double bin_h = roi_h / static_cast<double>(oh), bin_w = roi_w / static_cast<double>(ow);
      // Samples per bin side (0 for an empty roi).
      auto grid = [&](double roi_size, int64_t bins) -> double {
        if (a.sampling_ratio > 0) return static_cast<double>(a.sampling_ratio);
        const double g = std::ceil(roi_size / static_cast<double>(bins));
        return std::isnan(g) ? 0.0 : std::max(g, 0.0);
      };
      const double gh_d = grid(roi_h, oh), gw_d = grid(roi_w, ow);
      if (gh_d * gw_d * static_cast<double>(oh * ow) > kMaxSamplesPerRoi) {
        status = ctx.input_error(Code::kUnsupported, 1, "roi {} needs {} x {} samples per bin for {} bins, more than {}", r,
                                 gh_d, gw_d, oh * ow, kMaxSamplesPerRoi);
        return;
      }
      const int64_t gh = static_cast<int64_t>(gh_d), gw = static_cast<int64_t>(gw_d);
      const double count = static_cast<double>(std::max<int64_t>(gh * gw, 1));
      // Sample positions and weights are the same for every channel.
      samples.clear();
      for (int64_t ph = 0; ph < oh; ++ph)
        for (int64_t pw = 0; pw < ow; ++pw)
          for (int64_t iy = 0; iy < gh; ++iy) {
            const double yy = y1 + static_cast<double>(ph) * bin_h + (static_cast<double>(iy) + 0.5) * bin_h / static_cast<double>(gh);
            for (int64_t ix = 0; ix < gw; ++ix) {
              const double xx = x1 + static_cast<double>(pw) * bin_w + (static_cast<double>(ix) + 0.5) * bin_w / static_cast<double>(gw);
              samples.push_back(bilinear_sample(yy, xx, h, w));
            }
          }
      const size_t per_bin = static_cast<size_t>(gh * gw);
      for (int64_t ch = 0; ch < channels; ++ch) {
        const T* map = in + (bi * channels + ch) * h * w;
        for (int64_t bin = 0; bin < oh * ow; ++bin) {
          double acc = 0;
          bool first = true;
          for (size_t k = 0; k < per_bin; ++k) {
            const Sample& s = samples[static_cast<size_t>(bin) * per_bin + k];
            double v[4];
            for (int j = 0; j < 4; ++j) v[j] = s.weight[j] * static_cast<double>(load(map[s.offset[j]]));
            if (a.max_mode) {
              const double m = std::max(std::max(std::max(v[0], v[1]), v[2]), v[3]);
              acc = first ? m : std::max(acc, m);
              first = false;
            } else {
              acc += v[0] + v[1] + v[2] + v[3];
            }
          }
          o[(r * channels + ch) * oh * ow + bin] = from_double<T>(a.max_mode ? acc : acc / count);
        }
      }
    }
  }));
  QONNX_RETURN_IF_ERROR(status);
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_detection_kernels(exec::KernelRegistry& r) {
  // NonMaxSuppression-11 only clarifies the spec (same computation as 10).
  const auto nms = exec::typed_kernel<NmsAttrs, prepare_nms, non_max_suppression>();
  r.add("", "NonMaxSuppression", {10, 10}, nms);
  r.add("", "NonMaxSuppression", {11, exec::kNoUpperVersion}, nms);
  // RoiAlign-16 adds coordinate_transformation_mode (half_pixel by default).
  const auto roi = exec::typed_kernel<RoiAlignAttrs, prepare_roi_align, roi_align>();
  r.add("", "RoiAlign", {10, 15}, roi);
  r.add("", "RoiAlign", {16, 21}, roi);
  r.add("", "RoiAlign", {22, exec::kNoUpperVersion}, roi);
}

}  // namespace qonnx::kernels
