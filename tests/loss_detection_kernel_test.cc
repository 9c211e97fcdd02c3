// NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss, NonMaxSuppression, RoiAlign, GridSample,
// MaxUnpool, Unique and the training optimizers (Adagrad, Momentum, Adam): values derived by hand
// (independently of the kernels), attributes and versions the ONNX backend cases do not cover, and
// errors on bad input.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/test_util.h"

namespace qonnx::test {
namespace {

void expect_near(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-5f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

Attrs reduction(const char* r) {
  return [r](io::NodeBuilder& n) { n.attr("reduction", r); };
}

// --- NegativeLogLikelihoodLoss -------------------------------------------------------------------

TEST(LossKernel, NegativeLogLikelihoodReductions) {
  const Tensor x = f32({2, 3}, {-1, -2, -3, -4, -5, -6});
  const Tensor t = i64({2}, {2, 0});
  EXPECT_EQ(values_f32(run_ok("NegativeLogLikelihoodLoss", {x, t}, reduction("none"), 13)), (std::vector<float>{3, 4}));
  EXPECT_EQ(values_f32(run_ok("NegativeLogLikelihoodLoss", {x, t}, reduction("sum"), 13)), (std::vector<float>{7}));
  const Tensor mean = run_ok("NegativeLogLikelihoodLoss", {x, t}, nullptr, 13);  // mean by default
  EXPECT_EQ(mean.dims(), Dims{});
  EXPECT_EQ(values_f32(mean), (std::vector<float>{3.5f}));
  // Weights: mean = sum(w[t] * l) / sum(w[t]) = (3 * 3 + 4 * 1) / (3 + 1).
  const Tensor w = f32({3}, {1, 2, 3});
  EXPECT_EQ(values_f32(run_ok("NegativeLogLikelihoodLoss", {x, t, w}, reduction("none"), 13)), (std::vector<float>{9, 4}));
  EXPECT_EQ(values_f32(run_ok("NegativeLogLikelihoodLoss", {x, t, w}, nullptr, 13)), (std::vector<float>{13.0f / 4}));
  // int32 targets.
  EXPECT_EQ(values_f32(run_ok("NegativeLogLikelihoodLoss", {x, i32({2}, {2, 0})}, reduction("sum"), 12)), (std::vector<float>{7}));
}

TEST(LossKernel, NegativeLogLikelihoodIgnoreIndexAndTrailingDims) {
  // (N=1, C=2, d=3): targets 1, ignored, 0.
  const Tensor x = f32({1, 2, 3}, {-1, -2, -3, -4, -5, -6});
  const Tensor t = i64({1, 3}, {1, -1, 0});
  const Attrs ii = [](io::NodeBuilder& n) { n.attr("ignore_index", int64_t{-1}).attr("reduction", "none"); };
  const Tensor none = run_ok("NegativeLogLikelihoodLoss", {x, t}, ii, 13);
  EXPECT_EQ(none.dims(), (Dims{1, 3}));
  EXPECT_EQ(values_f32(none), (std::vector<float>{4, 0, 3}));
  // Mean over the two samples not ignored.
  const Attrs ii_mean = [](io::NodeBuilder& n) { n.attr("ignore_index", int64_t{-1}); };
  EXPECT_EQ(values_f32(run_ok("NegativeLogLikelihoodLoss", {x, t}, ii_mean, 13)), (std::vector<float>{3.5f}));
  // Every sample ignored: 0 / 0.
  const Tensor all = run_ok("NegativeLogLikelihoodLoss", {x, i64({1, 3}, {-1, -1, -1})}, ii_mean, 13);
  EXPECT_TRUE(std::isnan(values_f32(all)[0]));
}

TEST(LossKernel, NegativeLogLikelihoodDoubleAndHalf) {
  Tensor xd(DType::kDouble, {1, 2});
  xd.data<double>()[0] = -0.25;
  xd.data<double>()[1] = -0.75;
  const Tensor yd = run_ok("NegativeLogLikelihoodLoss", {xd, i64({1}, {1})}, nullptr, 13);
  ASSERT_EQ(yd.dtype(), DType::kDouble);
  EXPECT_EQ(yd.data<double>()[0], 0.75);
  Tensor xh(DType::kFloat16, {1, 2});
  xh.data<uint16_t>()[0] = float_to_half(-0.5f);
  xh.data<uint16_t>()[1] = float_to_half(-1.5f);
  const Tensor yh = run_ok("NegativeLogLikelihoodLoss", {xh, i64({1}, {1})}, nullptr, 13);
  ASSERT_EQ(yh.dtype(), DType::kFloat16);
  EXPECT_EQ(half_to_float(yh.data<uint16_t>()[0]), 1.5f);
}

TEST(LossKernel, NegativeLogLikelihoodErrors) {
  const Tensor x = f32({2, 3}, {-1, -2, -3, -4, -5, -6});
  expect_error(run_op("NegativeLogLikelihoodLoss", {x, i64({2}, {3, 0})}, nullptr, 13), Code::kInvalidModel, "outside [0, 3)");
  expect_error(run_op("NegativeLogLikelihoodLoss", {x, i64({2}, {-1, 0})}, nullptr, 13), Code::kInvalidModel, "class -1");
  expect_error(run_op("NegativeLogLikelihoodLoss", {x, i64({3}, {0, 0, 0})}, nullptr, 13), Code::kInvalidModel, "must have shape [2]");
  expect_error(run_op("NegativeLogLikelihoodLoss", {x, i64({2}, {0, 0}), f32({2}, {1, 1})}, nullptr, 13), Code::kInvalidModel,
               "one weight per class");
  expect_error(run_op("NegativeLogLikelihoodLoss", {f32({3}, {1, 2, 3}), i64({3}, {0, 0, 0})}, nullptr, 13), Code::kInvalidModel,
               "(N, C, d1, ..., dk)");
  // Types outside the schema's fail at plan time (the schemas layer's type check).
  expect_error(run_op("NegativeLogLikelihoodLoss", {x, f32({2}, {0, 0})}, nullptr, 13), Code::kInvalidModel, "does not allow");
  expect_error(run_op("NegativeLogLikelihoodLoss", {x, i64({2}, {0, 0})}, reduction("avg"), 13), Code::kInvalidModel,
               "attribute 'reduction': 'avg' is not one of none, sum, mean");
  expect_error(run_op("NegativeLogLikelihoodLoss", {x, i64({2}, {0, 0})}, nullptr, 11), Code::kUnsupported, "NegativeLogLikelihoodLoss");
}

// --- SoftmaxCrossEntropyLoss ---------------------------------------------------------------------

TEST(LossKernel, SoftmaxCrossEntropyWithLogProb) {
  // Row (0, ln 3): softmax (1/4, 3/4).
  const float l3 = std::log(3.0f);
  NodeCase c;
  c.op = "SoftmaxCrossEntropyLoss";
  c.opset = 13;
  c.inputs = {f32({2, 2}, {0, l3, 0, l3}), i64({2}, {0, 1})};
  c.attrs = reduction("none");
  c.num_outputs = 2;
  auto r = run_node(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  expect_near(values_f32(r.value()[0]), {std::log(4.0f), std::log(4.0f / 3)});
  expect_near(values_f32(r.value()[1]), {-std::log(4.0f), std::log(0.75f), -std::log(4.0f), std::log(0.75f)});
  // Softmax runs over axis 1 of (N, C, d): columns of each batch.
  const Tensor nd = run_ok("SoftmaxCrossEntropyLoss", {f32({1, 2, 2}, {0, 0, l3, 0}), i64({1, 2}, {1, 0})}, reduction("none"), 13);
  EXPECT_EQ(nd.dims(), (Dims{1, 2}));
  expect_near(values_f32(nd), {std::log(4.0f / 3), std::log(2.0f)});
  // Weights and ignore_index with the mean.
  const Attrs ii = [](io::NodeBuilder& n) { n.attr("ignore_index", int64_t{1}); };
  expect_near(values_f32(run_ok("SoftmaxCrossEntropyLoss", {f32({2, 2}, {0, l3, 0, l3}), i64({2}, {0, 1}), f32({2}, {2, 5})}, ii, 13)),
              {std::log(4.0f)});
}

TEST(LossKernel, SoftmaxCrossEntropyLargeScoresAndErrors) {
  // Stable for large scores: (1000, 0) -> loss of class 1 is 1000.
  expect_near(values_f32(run_ok("SoftmaxCrossEntropyLoss", {f32({1, 2}, {1000, 0}), i64({1}, {1})}, nullptr, 12)), {1000.0f}, 1e-3f);
  expect_error(run_op("SoftmaxCrossEntropyLoss", {f32({1, 2}, {0, 0}), i64({1}, {2})}, nullptr, 13), Code::kInvalidModel,
               "outside [0, 2)");
  Tensor bf(DType::kBFloat16, {1, 2});
  expect_error(run_op("SoftmaxCrossEntropyLoss", {bf, i64({1}, {0})}, nullptr, 12), Code::kInvalidModel, "is bfloat16");
  EXPECT_EQ(run_ok("SoftmaxCrossEntropyLoss", {bf, i64({1}, {0})}, nullptr, 13).dtype(), DType::kBFloat16);
}

// --- NonMaxSuppression ---------------------------------------------------------------------------

NodeCase nms_case(std::vector<Tensor> inputs, bool center = false) {
  NodeCase c;
  c.op = "NonMaxSuppression";
  c.opset = 11;
  c.inputs = std::move(inputs);
  if (center) c.attrs = [](io::NodeBuilder& n) { n.attr("center_point_box", int64_t{1}); };
  return c;
}

TEST(DetectionKernel, NonMaxSuppressionSelectsByScoreAndOverlap) {
  // Boxes 0 and 1 overlap with IoU 0.9 / 1.1 (> 0.5); box 2 is apart. Corners come in either order.
  const Tensor boxes = f32({1, 3, 4}, {0, 0, 1, 1, /**/ 1.1f, 0, 0.1f, 1, /**/ 5, 5, 6, 6});
  const Tensor scores = f32({1, 1, 3}, {0.8f, 0.9f, 0.3f});
  auto r = run1(nms_case({boxes, scores, i64({1}, {3}), f32({1}, {0.5f}), f32({1}, {0.0f})}));
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->dims(), (Dims{2, 3}));
  EXPECT_EQ(values<int64_t>(*r), (std::vector<int64_t>{0, 0, 1, 0, 0, 2}));
  // score_threshold drops box 2; max_output_boxes_per_class = 1 keeps the best only.
  r = run1(nms_case({boxes, scores, i64({1}, {3}), f32({1}, {0.5f}), f32({1}, {0.5f})}));
  EXPECT_EQ(values<int64_t>(*r), (std::vector<int64_t>{0, 0, 1}));
  r = run1(nms_case({boxes, scores, i64({1}, {1})}));
  EXPECT_EQ(values<int64_t>(*r), (std::vector<int64_t>{0, 0, 1}));
  // No max_output_boxes_per_class: nothing is selected.
  r = run1(nms_case({boxes, scores}));
  EXPECT_EQ(r->dims(), (Dims{0, 3}));
  // Equal scores: the lower index first.
  r = run1(nms_case({boxes, f32({1, 1, 3}, {0.5f, 0.5f, 0.5f}), i64({1}, {3}), f32({1}, {0.9f})}));
  EXPECT_EQ(values<int64_t>(*r), (std::vector<int64_t>{0, 0, 0, 0, 0, 1, 0, 0, 2}));
}

TEST(DetectionKernel, NonMaxSuppressionCenterPointBoxes) {
  // [xc, yc, w, h]: boxes 0 and 1 overlap with IoU 1/3, box 2 equals box 0.
  const Tensor boxes = f32({1, 3, 4}, {0.5f, 0.5f, 1, 1, /**/ 1, 0.5f, 1, 1, /**/ 0.5f, 0.5f, 1, 1});
  const Tensor scores = f32({1, 1, 3}, {0.9f, 0.8f, 0.7f});
  auto r = run1(nms_case({boxes, scores, i64({1}, {3}), f32({1}, {0.3f})}, true));
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<int64_t>(*r), (std::vector<int64_t>{0, 0, 0}));
  r = run1(nms_case({boxes, scores, i64({1}, {3}), f32({1}, {0.4f})}, true));
  EXPECT_EQ(values<int64_t>(*r), (std::vector<int64_t>{0, 0, 0, 0, 0, 1}));
}

TEST(DetectionKernel, NonMaxSuppressionErrors) {
  const Tensor boxes = f32({1, 2, 4}, {0, 0, 1, 1, 0, 0, 1, 1});
  expect_error(nms_case({boxes, f32({1, 1, 3}, {1, 1, 1}), i64({1}, {1})}), "classes");
  expect_error(nms_case({f32({1, 2, 3}, {}), f32({1, 1, 2}, {1, 1}), i64({1}, {1})}), "(batches, boxes, 4)");
  expect_error(nms_case({boxes, f32({1, 1, 2}, {1, 1}), i64({1}, {1}), f32({1}, {1.5f})}), "iou_threshold must be in [0, 1]");
  expect_error(nms_case({boxes, f32({1, 1, 2}, {1, 1}), i64({2}, {1, 1})}), "must be a scalar");
  NodeCase bad = nms_case({boxes, f32({1, 1, 2}, {1, 1})});
  bad.attrs = [](io::NodeBuilder& n) { n.attr("center_point_box", int64_t{2}); };
  expect_error(bad, "center_point_box");
}

// --- RoiAlign ------------------------------------------------------------------------------------

// A 1x1x5x5 map whose value is the column index x.
Tensor column_ramp() {
  std::vector<float> v(25);
  for (int i = 0; i < 25; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i % 5);
  return f32({1, 1, 5, 5}, v);
}

TEST(DetectionKernel, RoiAlignAveragesBilinearSamples) {
  const Attrs base = [](io::NodeBuilder& n) { n.attr("sampling_ratio", int64_t{2}).attr("coordinate_transformation_mode", "output_half_pixel"); };
  // Roi [0, 0, 4, 4], one bin, 2x2 samples at x = 1 and 3: the mean is 2.
  const Tensor rois = f32({1, 4}, {0, 0, 4, 4});
  expect_near(values_f32(run_ok("RoiAlign", {column_ramp(), rois, i64({1}, {0})}, base, 16)), {2});
  // half_pixel shifts by half a pixel: samples at 0.5 and 2.5.
  const Attrs half = [](io::NodeBuilder& n) { n.attr("sampling_ratio", int64_t{2}); };
  expect_near(values_f32(run_ok("RoiAlign", {column_ramp(), rois, i64({1}, {0})}, half, 16)), {1.5f});
  // RoiAlign-10 has output_half_pixel only; mode max; two output columns.
  const Attrs two = [](io::NodeBuilder& n) { n.attr("sampling_ratio", int64_t{1}).attr("output_width", int64_t{2}); };
  expect_near(values_f32(run_ok("RoiAlign", {column_ramp(), rois, i64({1}, {0})}, two, 10)), {1, 3});
  const Attrs max = [](io::NodeBuilder& n) { n.attr("sampling_ratio", int64_t{1}).attr("mode", "max"); };
  const Tensor ones = f32({1, 1, 5, 5}, std::vector<float>(25, 1.0f));
  // The one sample sits on pixel (2, 2): one corner weight is 1.
  expect_near(values_f32(run_ok("RoiAlign", {ones, f32({1, 4}, {1, 1, 3, 3}), i64({1}, {0})}, max, 10)), {1});
}

TEST(DetectionKernel, RoiAlignErrors) {
  const Tensor rois = f32({1, 4}, {0, 0, 4, 4});
  expect_error(run_op("RoiAlign", {column_ramp(), rois, i64({1}, {1})}, nullptr, 16), Code::kInvalidModel, "batch index 1");
  expect_error(run_op("RoiAlign", {column_ramp(), f32({1, 3}, {0, 0, 4}), i64({1}, {0})}, nullptr, 16), Code::kInvalidModel,
               "(num_rois, 4)");
  const Attrs ctm = [](io::NodeBuilder& n) { n.attr("coordinate_transformation_mode", "half_pixel"); };
  expect_error(run_op("RoiAlign", {column_ramp(), rois, i64({1}, {0})}, ctm, 10), Code::kInvalidModel, "RoiAlign-16");
  const Attrs bad_mode = [](io::NodeBuilder& n) { n.attr("mode", "sum"); };
  expect_error(run_op("RoiAlign", {column_ramp(), rois, i64({1}, {0})}, bad_mode, 16), Code::kInvalidModel, "'sum' is not one of avg, max");
  // A huge roi with sampling_ratio 0 asks for too many samples instead of exhausting the machine.
  expect_error(run_op("RoiAlign", {column_ramp(), f32({1, 4}, {0, 0, 1e12f, 1e12f}), i64({1}, {0})}, nullptr, 16), Code::kUnsupported,
               "samples per bin");
}

// --- GridSample ----------------------------------------------------------------------------------

Attrs gs(const char* mode, const char* padding, int64_t align) {
  return [=](io::NodeBuilder& n) { n.attr("mode", mode).attr("padding_mode", padding).attr("align_corners", align); };
}

TEST(GridSampleKernel, CornersAndPadding) {
  const Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  // align_corners: (-1, -1) .. (1, 1) are the pixel centres; (0, 0) is their mean.
  const Tensor grid = f32({1, 1, 5, 2}, {-1, -1, 1, -1, -1, 1, 1, 1, 0, 0});
  expect_near(values_f32(run_ok("GridSample", {x, grid}, gs("bilinear", "zeros", 1), 16)), {1, 2, 3, 4, 2.5f});
  // Without align_corners (-1, -1) is the outer corner: a quarter of pixel 0 with zeros padding,
  // the pixel itself with border padding.
  const Tensor corner = f32({1, 1, 1, 2}, {-1, -1});
  expect_near(values_f32(run_ok("GridSample", {x, corner}, gs("bilinear", "zeros", 0), 16)), {0.25f});
  expect_near(values_f32(run_ok("GridSample", {x, corner}, gs("bilinear", "border", 0), 16)), {1});
  expect_near(values_f32(run_ok("GridSample", {x, corner}, gs("bilinear", "reflection", 0), 16)), {1});
  // Far outside: zeros reads 0; border the nearest edge; reflection folds x = 3 (pixel 2.5 -> 0.5 ... ).
  const Tensor far = f32({1, 1, 1, 2}, {5, -1});
  expect_near(values_f32(run_ok("GridSample", {x, far}, gs("bilinear", "zeros", 1), 16)), {0});
  expect_near(values_f32(run_ok("GridSample", {x, far}, gs("bilinear", "border", 1), 16)), {2});
  // align_corners, reflection: x = 5 -> pixel 3 -> reflected at 1 and 0 -> 1.
  expect_near(values_f32(run_ok("GridSample", {x, far}, gs("bilinear", "reflection", 1), 16)), {2});
  // nearest rounds half to even: pixel 0.5 -> 0.
  expect_near(values_f32(run_ok("GridSample", {x, f32({1, 1, 1, 2}, {0, -1})}, gs("nearest", "zeros", 1), 16)), {1});
  // bicubic on pixel centres reproduces the pixels.
  expect_near(values_f32(run_ok("GridSample", {x, grid}, gs("bicubic", "border", 1), 16)), {1, 2, 3, 4, 2.5f}, 1e-4f);
}

TEST(GridSampleKernel, VersionTwentyIsNDimensional) {
  // 1x1x2x2x2 volume 0..7; align_corners: (1, -1, 1) is (d=1, h=0, w=1) -> 5.
  std::vector<float> v(8);
  for (int i = 0; i < 8; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
  const Tensor x = f32({1, 1, 2, 2, 2}, v);
  const Tensor grid = f32({1, 1, 1, 2, 3}, {1, -1, 1, 0, 0, 0});
  expect_near(values_f32(run_ok("GridSample", {x, grid}, gs("linear", "zeros", 1), 20)), {5, 3.5f});
  // Nearest with 3 spatial dims rounds half away from zero (as PyTorch): the centre reads (1, 1, 1).
  expect_near(values_f32(run_ok("GridSample", {x, grid}, gs("nearest", "zeros", 1), 20)), {5, 7});
  // Cubic on a pixel centre is the pixel; at the centre with border padding, the mean.
  expect_near(values_f32(run_ok("GridSample", {x, grid}, gs("cubic", "border", 1), 20)), {5, 3.5f}, 1e-4f);
  expect_error(run_op("GridSample", {x, grid}, gs("bilinear", "zeros", 1), 16), Code::kInvalidModel, "(N, C, H, W)");
  expect_error(run_op("GridSample", {x, grid}, gs("bilinear", "zeros", 1), 20), Code::kInvalidModel,
               "'bilinear' is not one of linear, nearest, cubic");
  expect_error(run_op("GridSample", {f32({1, 1, 2, 2}, {1, 2, 3, 4}), f32({1, 1, 1, 3}, {0, 0, 0})}, nullptr, 16), Code::kInvalidModel,
               "must have shape (1, O1, ..., O2, 2)");
}

// The installed ONNX library's GridSample schema (1.12) binds grid and X to one type parameter, so the
// schemas layer refuses an integer X with a float grid at plan time (the kernel's nearest path for
// integer inputs, GridSample-20's T1, is not reachable through the executor until that schema is newer).
TEST(GridSampleKernel, IntegerInputWithFloatGridIsRefusedAtPlanTime) {
  const Tensor x = i32({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor grid = f32({1, 1, 2, 2}, {1, 1, 3, 3});
  expect_error(run_op("GridSample", {x, grid}, gs("nearest", "zeros", 1), 16), Code::kInvalidModel, "type parameter T1");
}

// --- MaxUnpool -----------------------------------------------------------------------------------

TEST(UnpoolKernel, MaxUnpoolPlacesValuesAtIndices) {
  const Attrs k2 = [](io::NodeBuilder& n) { n.attr("kernel_shape", std::vector<int64_t>{2}).attr("strides", std::vector<int64_t>{2}); };
  const Tensor y = run_ok("MaxUnpool", {f32({1, 1, 2}, {7, 8}), i64({1, 1, 2}, {1, 2})}, k2, 11);
  EXPECT_EQ(y.dims(), (Dims{1, 1, 4}));
  EXPECT_EQ(values_f32(y), (std::vector<float>{0, 7, 8, 0}));
  // output_shape: the unpooled block at the start of a larger output.
  const Tensor big = run_ok("MaxUnpool", {f32({1, 1, 2}, {7, 8}), i64({1, 1, 2}, {1, 2}), i64({3}, {1, 1, 6})}, k2, 11);
  EXPECT_EQ(values_f32(big), (std::vector<float>{0, 7, 8, 0, 0, 0}));
  // Pads shrink the output: (2 - 1) * 2 + 2 - 1 = 3.
  const Attrs padded = [](io::NodeBuilder& n) {
    n.attr("kernel_shape", std::vector<int64_t>{2}).attr("strides", std::vector<int64_t>{2}).attr("pads", std::vector<int64_t>{0, 1});
  };
  EXPECT_EQ(run_ok("MaxUnpool", {f32({1, 1, 2}, {7, 8}), i64({1, 1, 2}, {0, 2})}, padded, 9).dims(), (Dims{1, 1, 3}));
  expect_error(run_op("MaxUnpool", {f32({1, 1, 2}, {7, 8}), i64({1, 1, 2}, {1, 4})}, k2, 11), Code::kInvalidModel, "index 4");
  expect_error(run_op("MaxUnpool", {f32({1, 1, 2}, {7, 8}), i64({1, 1, 2}, {1, 2}), i64({3}, {1, 1, 3})}, k2, 11), Code::kInvalidModel,
               "does not hold");
  expect_error(run_op("MaxUnpool", {f32({1, 1, 2}, {7, 8}), i64({1, 1, 2}, {1, 2})}, nullptr, 11), Code::kInvalidModel, "kernel_shape");
  expect_error(run_op("MaxUnpool", {f32({1, 2}, {7, 8}), i64({1, 2}, {1, 2})}, k2, 11), Code::kInvalidModel, "rank 3");
}

// --- Unique --------------------------------------------------------------------------------------

TEST(UniqueKernel, FlattenedSortedAndUnsorted) {
  NodeCase c;
  c.op = "Unique";
  c.opset = 11;
  c.inputs = {f32({2, 3}, {2, 1, 2, 3, 1, 1})};
  c.num_outputs = 4;
  auto r = run_node(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values_f32(r.value()[0]), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(values<int64_t>(r.value()[1]), (std::vector<int64_t>{1, 0, 3}));
  EXPECT_EQ(values<int64_t>(r.value()[2]), (std::vector<int64_t>{1, 0, 1, 2, 0, 0}));
  EXPECT_EQ(values<int64_t>(r.value()[3]), (std::vector<int64_t>{3, 2, 1}));
  c.attrs = [](io::NodeBuilder& n) { n.attr("sorted", int64_t{0}); };
  r = run_node(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values_f32(r.value()[0]), (std::vector<float>{2, 1, 3}));
  EXPECT_EQ(values<int64_t>(r.value()[1]), (std::vector<int64_t>{0, 1, 3}));
  EXPECT_EQ(values<int64_t>(r.value()[2]), (std::vector<int64_t>{0, 1, 0, 2, 1, 1}));
  EXPECT_EQ(values<int64_t>(r.value()[3]), (std::vector<int64_t>{2, 3, 1}));
}

TEST(UniqueKernel, AlongAxisStringsAndNaN) {
  // Columns (1, 3), (0, 2), (1, 3) along axis 1 (negative).
  const Attrs axis = [](io::NodeBuilder& n) { n.attr("axis", int64_t{-1}); };
  const Tensor y = run_ok("Unique", {i64({2, 3}, {1, 0, 1, 3, 2, 3})}, axis, 11);
  EXPECT_EQ(y.dims(), (Dims{2, 2}));
  EXPECT_EQ(values<int64_t>(y), (std::vector<int64_t>{0, 1, 2, 3}));
  const Tensor s = run_ok("Unique", {strings({4}, {"b", "a", "b", "c"})}, nullptr, 11);
  EXPECT_EQ(s.strings(), (std::vector<std::string>{"a", "b", "c"}));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor n = run_ok("Unique", {f32({4}, {nan, 1, nan, -0.0f})}, nullptr, 11);
  ASSERT_EQ(n.numel(), 3);
  EXPECT_EQ(values_f32(n)[1], 1.0f);
  EXPECT_TRUE(std::isnan(values_f32(n)[2]));
  expect_error(run_op("Unique", {f32({2}, {1, 2})}, axis, 10), Code::kUnsupported, "Unique");
  const Attrs bad_axis = [](io::NodeBuilder& n) { n.attr("axis", int64_t{2}); };
  expect_error(run_op("Unique", {f32({2}, {1, 2})}, bad_axis, 11), Code::kInvalidModel, "axis 2");
}

// --- Training optimizers (ai.onnx.preview.training) ----------------------------------------------

NodeCase training(const char* op, std::vector<Tensor> inputs, Attrs attrs, int outputs) {
  NodeCase c;
  c.op = op;
  c.domain = "ai.onnx.preview.training";
  c.imports = {{"ai.onnx.preview.training", 1}};
  c.inputs = std::move(inputs);
  c.attrs = std::move(attrs);
  c.num_outputs = outputs;
  return c;
}

TEST(OptimizerKernel, MomentumStandardAndNesterov) {
  const Tensor r = f32({}, {0.5f});
  const Attrs standard = [](io::NodeBuilder& n) {
    n.attr("alpha", 0.5f).attr("beta", 0.25f).attr("norm_coefficient", 0.0f).attr("mode", "standard");
  };
  // T = 0: V' = 0.5 * 2 + 1 * 4 = 5, X' = 1 - 0.5 * 5 = -1.5. T = 1: V' = 1 + 0.25 * 4 = 2, X' = 0.
  auto first = run_node(training("Momentum", {r, i64({}, {0}), f32({1}, {1}), f32({1}, {4}), f32({1}, {2})}, standard, 2));
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  EXPECT_EQ(values_f32(first.value()[0]), (std::vector<float>{-1.5f}));
  EXPECT_EQ(values_f32(first.value()[1]), (std::vector<float>{5}));
  auto later = run_node(training("Momentum", {r, i64({}, {1}), f32({1}, {1}), f32({1}, {4}), f32({1}, {2})}, standard, 2));
  EXPECT_EQ(values_f32(later.value()[0]), (std::vector<float>{0}));
  const Attrs nesterov = [](io::NodeBuilder& n) {
    n.attr("alpha", 0.5f).attr("beta", 0.25f).attr("norm_coefficient", 0.0f).attr("mode", "nesterov");
  };
  // X' = 1 - 0.5 * (4 + 0.5 * 5) = -2.25.
  auto nest = run_node(training("Momentum", {r, i64({}, {0}), f32({1}, {1}), f32({1}, {4}), f32({1}, {2})}, nesterov, 2));
  EXPECT_EQ(values_f32(nest.value()[0]), (std::vector<float>{-2.25f}));
  expect_error(training("Momentum", {r, i64({}, {0}), f32({1}, {1}), f32({1}, {4}), f32({1}, {2})},
                        [](io::NodeBuilder& n) { n.attr("alpha", 0.5f).attr("beta", 0.25f).attr("norm_coefficient", 0.0f); }, 2),
               "attribute 'mode' is required");
}

TEST(OptimizerKernel, AdagradAndAdamSeveralTensors) {
  const Tensor r = f32({}, {1.0f});
  // Adagrad, epsilon 0, T = 1 with decay 1 halves the rate: H' = 0 + 3^2 = 9, X' = 10 - 0.5 * 3 / 3.
  const Attrs eps0 = [](io::NodeBuilder& n) { n.attr("epsilon", 0.0f).attr("decay_factor", 1.0f); };
  auto a = run_node(training("Adagrad", {r, i64({}, {1}), f32({1}, {10}), f32({1}, {3}), f32({1}, {0})}, eps0, 2));
  ASSERT_TRUE(a.is_ok()) << a.status().to_string();
  EXPECT_EQ(values_f32(a.value()[0]), (std::vector<float>{9.5f}));
  EXPECT_EQ(values_f32(a.value()[1]), (std::vector<float>{9}));
  // Adam with two tensors, T = 0 (no bias correction), alpha = beta = 0.5, epsilon 0:
  // V' = 0.5 * G, H' = 0.5 * G^2, X' = X - V' / sqrt(H') = X - sqrt(0.5) * sign(G).
  const Attrs adam = [](io::NodeBuilder& n) { n.attr("alpha", 0.5f).attr("beta", 0.5f).attr("epsilon", 0.0f); };
  auto m = run_node(training("Adam",
                             {r, i64({}, {0}), f32({1}, {1}), f32({2}, {2, 3}), f32({1}, {2}), f32({2}, {-4, 4}), f32({1}, {0}),
                              f32({2}, {0, 0}), f32({1}, {0}), f32({2}, {0, 0})},
                             adam, 6));
  ASSERT_TRUE(m.is_ok()) << m.status().to_string();
  const float h = std::sqrt(0.5f);
  expect_near(values_f32(m.value()[0]), {1 - h});
  expect_near(values_f32(m.value()[1]), {2 + h, 3 - h});
  expect_near(values_f32(m.value()[3]), {-2, 2});
  expect_near(values_f32(m.value()[5]), {8, 8});
  expect_error(training("Adam", {r, i64({}, {0}), f32({1}, {1}), f32({1}, {2}), f32({1}, {0})}, adam, 3), "groups of n tensors");
  expect_error(training("Adagrad", {r, i64({}, {0}), f32({1}, {1}), f32({2}, {2, 2}), f32({1}, {0})}, eps0, 2), "must have the shape");
}

}  // namespace
}  // namespace qonnx::test
