// Conv, ConvInteger, QLinearConv, ConvTranspose, pooling and normalization kernels: exact values
// and error cases.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/test_util.h"

namespace qonnx::test {
namespace {

std::vector<float> iota(int n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
  return v;
}

Attrs ints(const std::string& name, std::vector<int64_t> v) {
  return [name, v](io::NodeBuilder& n) { n.attr(name, v); };
}

TEST(ConvKernel, BasicWithAndWithoutPadding) {
  Tensor x = f32({1, 1, 5, 5}, iota(25)), w = f32({1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  Tensor y = run_ok("Conv", {x, w});
  EXPECT_EQ(y.dims(), (Dims{1, 1, 3, 3}));
  EXPECT_EQ(values_f32(y), (std::vector<float>{54, 63, 72, 99, 108, 117, 144, 153, 162}));
  Tensor p = run_ok("Conv", {x, w}, ints("pads", {1, 1, 1, 1}));
  EXPECT_EQ(values_f32(p), (std::vector<float>{12, 21, 27, 33, 24, 33, 54, 63, 72, 51, 63, 99, 108, 117, 81,
                                               93, 144, 153, 162, 111, 72, 111, 117, 123, 84}));
  Tensor s = run_ok("Conv", {x, w}, [](io::NodeBuilder& n) {
    n.attr("strides", std::vector<int64_t>{2, 2}).attr("pads", std::vector<int64_t>{1, 0, 1, 0});
  });
  EXPECT_EQ(s.dims(), (Dims{1, 1, 3, 2}));
  EXPECT_EQ(values_f32(s), (std::vector<float>{21, 33, 99, 117, 111, 123}));
}

TEST(ConvKernel, GroupsBiasDilationAutoPad) {
  Tensor g = run_ok("Conv", {f32({1, 2, 1, 2}, {1, 2, 3, 4}), f32({2, 1, 1, 1}, {2, 10}), f32({2}, {1, -1})},
                    [](io::NodeBuilder& n) { n.attr("group", 2); });
  EXPECT_EQ(values_f32(g), (std::vector<float>{3, 5, 29, 39}));
  Tensor x = f32({1, 1, 5}, {1, 2, 3, 4, 5}), w = f32({1, 1, 2}, {1, 1});
  EXPECT_EQ(values_f32(run_ok("Conv", {x, w}, ints("dilations", {2}))), (std::vector<float>{4, 6, 8}));
  Tensor x4 = f32({1, 1, 4}, {1, 2, 3, 4});
  auto pad = [](const char* mode) { return [mode](io::NodeBuilder& n) { n.attr("auto_pad", mode); }; };
  EXPECT_EQ(values_f32(run_ok("Conv", {x4, w}, pad("SAME_UPPER"))), (std::vector<float>{3, 5, 7, 4}));
  EXPECT_EQ(values_f32(run_ok("Conv", {x4, w}, pad("SAME_LOWER"))), (std::vector<float>{1, 3, 5, 7}));
  EXPECT_EQ(values_f32(run_ok("Conv", {x4, w}, pad("VALID"))), (std::vector<float>{3, 5, 7}));
  Tensor y3 = run_ok("Conv", {f32({1, 1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), f32({1, 1, 2, 2, 2}, std::vector<float>(8, 1))});
  EXPECT_EQ(y3.dims(), (Dims{1, 1, 1, 1, 1}));
  EXPECT_EQ(values_f32(y3), (std::vector<float>{36}));
}

TEST(ConvKernel, Errors) {
  Tensor x = f32({1, 3, 4, 4}, {}), w = f32({1, 2, 3, 3}, {});
  expect_error(run_op("Conv", {x, w}), Code::kInvalidModel, "expects 2 input channels");
  expect_error(run_op("Conv", {x, f32({1, 3, 3, 3}, {})}, [](io::NodeBuilder& n) { n.attr("group", 0); }),
               Code::kInvalidModel, "group must be a positive integer");
  expect_error(run_op("Conv", {f32({1, 2, 3, 3}, {}), f32({3, 1, 1, 1}, {})}, [](io::NodeBuilder& n) { n.attr("group", 2); }),
               Code::kInvalidModel, "not divisible by group");
  expect_error(run_op("Conv", {x, f32({1, 3, 3, 3}, {})}, ints("kernel_shape", {2, 2})), Code::kInvalidModel,
               "kernel_shape");
  expect_error(run_op("Conv", {f32({1, 1, 2, 2}, {}), f32({1, 1, 3, 3}, {})}), Code::kInvalidModel, "exceeds");
  expect_error(run_op("Conv", {x, f32({2, 3, 1, 1}, {}), f32({3}, {})}), Code::kInvalidModel, "bias shape");
  expect_error(run_op("Conv", {f32({1, 3}, {}), f32({1, 3}, {})}), Code::kInvalidModel, "rank >= 3");
  expect_error(run_op("Conv", {x, f32({1, 3, 1, 1}, {})}, ints("pads", {1, 1})), Code::kInvalidModel,
               "attribute pads has 2 values");
  expect_error(run_op("Conv", {x, f32({1, 3, 1, 1}, {})}, ints("strides", {0, 1})), Code::kInvalidModel, "strides");
  expect_error(run_op("Conv", {x, f32({1, 3, 1, 1}, {})}, [](io::NodeBuilder& n) { n.attr("auto_pad", "SAME"); }),
               Code::kInvalidModel, "auto_pad");
}

TEST(ConvKernel, EmptyBatchAndOutOfRangeAttributes) {
  Tensor y = run_ok("Conv", {f32({0, 1, 3, 3}, {}), f32({2, 1, 3, 3}, {})});
  EXPECT_EQ(y.dims(), (Dims{0, 2, 1, 1}));
  Tensor x = f32({1, 1, 3, 3}, {}), w = f32({1, 1, 1, 1}, {});
  expect_error(run_op("Conv", {x, w}, ints("strides", {int64_t{1} << 40, 1})), Code::kInvalidModel, "out of range");
  expect_error(run_op("Conv", {x, w}, ints("pads", {-1, 0, 0, 0})), Code::kInvalidModel, "out of range");
  expect_error(run_op("MaxPool", {x}, [](io::NodeBuilder& n) {
    n.attr("kernel_shape", std::vector<int64_t>{1, 1}).attr("pads", std::vector<int64_t>{int64_t{1} << 40, 0, 0, 0});
  }), Code::kInvalidModel, "out of range");
  expect_error(run_op("ConvTranspose", {x, w}, ints("output_shape", {-1, 3})), Code::kInvalidModel, "output_shape");
}

TEST(ConvIntegerKernel, ZeroPoints) {
  Tensor y = run_ok("ConvInteger", {u8({1, 1, 2, 2}, {2, 3, 4, 5}), u8({1, 1, 1, 1}, {3}), u8({}, {1}), u8({}, {1})});
  EXPECT_EQ(y.dtype(), DType::kInt32);
  EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>{2, 4, 6, 8}));
}

TEST(QLinearConvKernel, PerChannelScaleAndBias) {
  Tensor y = run_ok("QLinearConv", {u8({1, 1, 1, 2}, {1, 2}), f32s(1.0f), u8({}, {0}), u8({2, 1, 1, 1}, {2, 4}),
                                    f32({2}, {0.5f, 0.25f}), u8({2}, {0, 0}), f32s(1.0f), u8({}, {5}),
                                    make<int32_t>(DType::kInt32, {2}, {1, 0})});
  // channel 0: (2x + 1) * 0.5 = 1.5, 2.5 -> 2, 2 (ties to even); channel 1: 4x * 0.25 = 1, 2; + 5.
  EXPECT_EQ(values<uint8_t>(y), (std::vector<uint8_t>{7, 7, 6, 7}));
}

TEST(ConvTransposeKernel, StridesPadsOutputShapeGroups) {
  Tensor x = f32({1, 1, 3}, {1, 2, 3}), w = f32({1, 1, 2}, {1, 1});
  EXPECT_EQ(values_f32(run_ok("ConvTranspose", {x, w})), (std::vector<float>{1, 3, 5, 3}));
  EXPECT_EQ(values_f32(run_ok("ConvTranspose", {x, w}, ints("strides", {2}))), (std::vector<float>{1, 1, 2, 2, 3, 3}));
  auto strided = [](const char* name, std::vector<int64_t> v) {
    return [name, v](io::NodeBuilder& n) { n.attr("strides", std::vector<int64_t>{2}).attr(name, v); };
  };
  EXPECT_EQ(values_f32(run_ok("ConvTranspose", {x, w}, strided("output_shape", {7}))),
            (std::vector<float>{1, 1, 2, 2, 3, 3, 0}));
  EXPECT_EQ(values_f32(run_ok("ConvTranspose", {x, w}, strided("output_padding", {1}))),
            (std::vector<float>{1, 1, 2, 2, 3, 3, 0}));
  EXPECT_EQ(values_f32(run_ok("ConvTranspose", {x, w}, strided("pads", {1, 0}))), (std::vector<float>{1, 2, 2, 3, 3}));
  Tensor g = run_ok("ConvTranspose", {f32({1, 2, 1}, {1, 2}), f32({2, 1, 1}, {3, 5}), f32({2}, {1, 1})},
                    [](io::NodeBuilder& n) { n.attr("group", 2); });
  EXPECT_EQ(g.dims(), (Dims{1, 2, 1}));
  EXPECT_EQ(values_f32(g), (std::vector<float>{4, 11}));
  expect_error(run_op("ConvTranspose", {x, f32({2, 1, 2}, {})}), Code::kInvalidModel, "input channels");
  expect_error(run_op("ConvTranspose", {x, w}, ints("pads", {3, 3})), Code::kInvalidModel, "leave no output");
}

TEST(MaxPoolKernel, IndicesStorageOrderAndCeilMode) {
  auto r = run_op("MaxPool", {f32({1, 1, 4}, {1, 3, 2, 5})}, [](io::NodeBuilder& n) {
    n.attr("kernel_shape", std::vector<int64_t>{2}).attr("strides", std::vector<int64_t>{2});
  }, 13, 2);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values_f32(r.value()[0]), (std::vector<float>{3, 5}));
  EXPECT_EQ(values<int64_t>(r.value()[1]), (std::vector<int64_t>{1, 3}));
  Tensor x2 = f32({1, 1, 2, 3}, {1, 6, 2, 4, 3, 7});
  for (int order : {0, 1}) {
    auto r2 = run_op("MaxPool", {x2}, [order](io::NodeBuilder& n) {
      n.attr("kernel_shape", std::vector<int64_t>{2, 2}).attr("storage_order", order);
    }, 13, 2);
    ASSERT_TRUE(r2.is_ok()) << r2.status().to_string();
    EXPECT_EQ(values_f32(r2.value()[0]), (std::vector<float>{6, 7}));
    EXPECT_EQ(values<int64_t>(r2.value()[1]), order == 0 ? (std::vector<int64_t>{1, 5}) : (std::vector<int64_t>{2, 5}));
  }
  Tensor x5 = f32({1, 1, 5}, {1, 2, 3, 4, 5});
  auto pool = [](int ceil) {
    return [ceil](io::NodeBuilder& n) {
      n.attr("kernel_shape", std::vector<int64_t>{2}).attr("strides", std::vector<int64_t>{2}).attr("ceil_mode", ceil);
    };
  };
  EXPECT_EQ(values_f32(run_ok("MaxPool", {x5}, pool(0))), (std::vector<float>{2, 4}));
  EXPECT_EQ(values_f32(run_ok("MaxPool", {x5}, pool(1))), (std::vector<float>{2, 4, 5}));
  Tensor q = run_ok("MaxPool", {u8({1, 1, 3}, {7, 200, 9})}, ints("kernel_shape", {2}));
  EXPECT_EQ(values<uint8_t>(q), (std::vector<uint8_t>{200, 200}));
}

TEST(MaxPoolKernel, Errors) {
  Tensor x = f32({1, 1, 4, 4}, {});
  expect_error(run_op("MaxPool", {x}), Code::kInvalidModel, "kernel_shape is required");
  expect_error(run_op("MaxPool", {x}, ints("kernel_shape", {2})), Code::kInvalidModel, "kernel_shape has 1 values");
  expect_error(run_op("MaxPool", {x}, ints("kernel_shape", {5, 5})), Code::kInvalidModel, "exceeds");
  expect_error(run_op("MaxPool", {f32({4, 4}, {})}, ints("kernel_shape", {2})), Code::kInvalidModel, "rank >= 3");
}

TEST(AveragePoolKernel, CountIncludePad) {
  Tensor x = f32({1, 1, 3}, {1, 2, 3});
  auto pool = [](int include) {
    return [include](io::NodeBuilder& n) {
      n.attr("kernel_shape", std::vector<int64_t>{2}).attr("pads", std::vector<int64_t>{1, 1}).attr("count_include_pad", include);
    };
  };
  EXPECT_EQ(values_f32(run_ok("AveragePool", {x}, pool(0))), (std::vector<float>{1, 1.5f, 2.5f, 3}));
  EXPECT_EQ(values_f32(run_ok("AveragePool", {x}, pool(1))), (std::vector<float>{0.5f, 1.5f, 2.5f, 1.5f}));
}

TEST(GlobalPoolKernel, AverageAndMax) {
  Tensor x = f32({1, 2, 2}, {1, 3, 5, 7});
  Tensor a = run_ok("GlobalAveragePool", {x});
  EXPECT_EQ(a.dims(), (Dims{1, 2, 1}));
  EXPECT_EQ(values_f32(a), (std::vector<float>{2, 6}));
  EXPECT_EQ(values_f32(run_ok("GlobalMaxPool", {x})), (std::vector<float>{3, 7}));
}

TEST(BatchNormalizationKernel, InferenceValuesAndErrors) {
  Tensor x = f32({1, 2, 1, 2}, {1, 2, 3, 4});
  auto eps0 = [](io::NodeBuilder& n) { n.attr("epsilon", 0.0f); };
  Tensor y = run_ok("BatchNormalization", {x, f32({2}, {1, 2}), f32({2}, {0, 1}), f32({2}, {1, 3}), f32({2}, {4, 0.25f})}, eps0);
  EXPECT_EQ(values_f32(y), (std::vector<float>{0, 0.5f, 1, 5}));
  expect_error(run_op("BatchNormalization", {x, f32({3}, {}), f32({2}, {}), f32({2}, {}), f32({2}, {})}),
               Code::kInvalidModel, "one value per channel");
  expect_error(run_op("BatchNormalization", {x, f32({2}, {}), f32({2}, {}), f32({2}, {})}), Code::kInvalidModel,
               "input_var");
  expect_error(run_op("BatchNormalization", {x, f32({2}, {}), f32({2}, {}), f32({2}, {}), f32({2}, {})}, nullptr, 13, 3),
               Code::kUnsupported, "training outputs");
}

TEST(BatchNormalizationKernel, TrainingModeRunningStatistics) {
  auto r = run_op("BatchNormalization",
               {f32({2, 1, 1, 2}, {1, 2, 3, 4}), f32({1}, {1}), f32({1}, {0}), f32({1}, {0}), f32({1}, {1})},
               [](io::NodeBuilder& n) { n.attr("training_mode", 1).attr("epsilon", 0.0f); }, 15, 3);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_FLOAT_EQ(values_f32(r.value()[1])[0], 0.25f);
  EXPECT_FLOAT_EQ(values_f32(r.value()[2])[0], 1.025f);
  EXPECT_FLOAT_EQ(values_f32(r.value()[0])[0], -1.5f / std::sqrt(1.25f));
}

TEST(NormalizationKernels, InstanceLayerLrn) {
  Tensor i = run_ok("InstanceNormalization", {f32({1, 1, 2}, {1, 3}), f32({1}, {2}), f32({1}, {1})},
                    [](io::NodeBuilder& n) { n.attr("epsilon", 0.0f); });
  EXPECT_EQ(values_f32(i), (std::vector<float>{-1, 3}));
  auto ln = run_op("LayerNormalization", {f32({2, 2}, {1, 3, 0, 4}), f32({2}, {1, 2}), f32({2}, {0, 1})},
                [](io::NodeBuilder& n) { n.attr("epsilon", 0.0f); }, 17, 3);
  ASSERT_TRUE(ln.is_ok()) << ln.status().to_string();
  EXPECT_EQ(values_f32(ln.value()[0]), (std::vector<float>{-1, 3, -1, 3}));
  EXPECT_EQ(ln.value()[1].dims(), (Dims{2, 1}));
  EXPECT_EQ(values_f32(ln.value()[1]), (std::vector<float>{2, 2}));
  EXPECT_EQ(values_f32(ln.value()[2]), (std::vector<float>{1, 0.5f}));
  expect_error(run_op("LayerNormalization", {f32({2, 2}, {}), f32({3}, {})}, nullptr, 17), Code::kInvalidModel,
               "does not broadcast");
  Tensor l = run_ok("LRN", {f32({1, 2, 1, 1}, {1, 2})}, [](io::NodeBuilder& n) {
    n.attr("size", 2).attr("alpha", 2.0f).attr("beta", 1.0f).attr("bias", 1.0f);
  });
  EXPECT_FLOAT_EQ(values_f32(l)[0], 1.0f / 6.0f);
  EXPECT_FLOAT_EQ(values_f32(l)[1], 0.4f);
  expect_error(run_op("InstanceNormalization", {f32({1, 2, 2}, {}), f32({1}, {}), f32({2}, {})}), Code::kInvalidModel,
               "one value per channel");
}

// 1-D and 2-D float MaxPool without Indices have their own loop: the same Y bits as the general loop,
// which runs when Indices is requested, over padding, dilations, strides, ceil_mode, ties, NaN and -inf.
TEST(MaxPoolFastPath, GivesTheGeneralLoopsBits) {
  std::vector<float> v(2 * 3 * 9 * 11);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 37) % 17) - 8.0f;  // many ties
  v[5] = std::nanf(""), v[40] = std::nanf(""), v[77] = -INFINITY, v[200] = INFINITY;
  struct Window {
    std::vector<int64_t> kernel, strides, pads, dilations;
    int64_t ceil;
  };
  auto expect_same = [](const Tensor& x, const Window& w) {
    Attrs attrs = [&](io::NodeBuilder& n) {
      n.attr("kernel_shape", w.kernel).attr("strides", w.strides).attr("pads", w.pads);
      n.attr("dilations", w.dilations).attr("ceil_mode", w.ceil);
    };
    auto fast = run_op("MaxPool", {x}, attrs, 13, 1);
    auto general = run_op("MaxPool", {x}, attrs, 13, 2);
    ASSERT_TRUE(fast.is_ok() && general.is_ok());
    const Tensor& a = fast.value()[0];
    const Tensor& b = general.value()[0];
    ASSERT_EQ(a.dims(), b.dims());
    EXPECT_EQ(std::memcmp(a.data<float>(), b.data<float>(), a.nbytes()), 0) << "kernel " << dims_to_string(w.kernel);
  };
  const Tensor x2 = f32({2, 3, 9, 11}, v), x1 = f32({2, 3, 99}, v);
  for (const Window& w : {Window{{3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 0}, Window{{2, 3}, {1, 2}, {0, 1, 1, 0}, {2, 1}, 1},
                          Window{{3, 2}, {3, 3}, {0, 0, 0, 0}, {1, 2}, 1}, Window{{1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 0}})
    expect_same(x2, w);
  for (const Window& w : {Window{{3}, {2}, {1, 1}, {1}, 0}, Window{{4}, {3}, {0, 2}, {2}, 1}}) expect_same(x1, w);
}

// AveragePool's rule for float, written out: 0 plus each tap inside the input in row-major window
// order, divided by the number of those taps or (count_include_pad) of the taps inside the padded input.
std::vector<float> average_pool_reference(const Tensor& x, const Dims& out, const std::vector<int64_t>& kernel,
                                          const std::vector<int64_t>& strides, const std::vector<int64_t>& pads,
                                          const std::vector<int64_t>& dilations, bool include_pad) {
  const bool one_d = kernel.size() == 1;
  const int64_t in_h = one_d ? 1 : x.dim(2), in_w = x.dims().back();
  const int64_t out_h = one_d ? 1 : out[2], out_w = out.back(), planes = x.dim(0) * x.dim(1);
  auto param = [&](const std::vector<int64_t>& v, size_t d, int64_t one_d_value) {
    return one_d ? (d == 0 ? one_d_value : v[0]) : v[d];
  };
  const size_t rank = kernel.size();
  auto pad_begin = [&](size_t d) { return one_d ? (d == 0 ? 0 : pads[0]) : pads[d]; };
  auto pad_end = [&](size_t d) { return one_d ? (d == 0 ? 0 : pads[1]) : pads[d + rank]; };
  const float* xv = x.data<float>();
  std::vector<float> y;
  for (int64_t plane = 0; plane < planes; ++plane)
    for (int64_t oh = 0; oh < out_h; ++oh)
      for (int64_t ow = 0; ow < out_w; ++ow) {
        float sum = 0;
        int64_t inside = 0, padded = 0;
        for (int64_t kh = 0; kh < param(kernel, 0, 1); ++kh)
          for (int64_t kw = 0; kw < param(kernel, 1, 1); ++kw) {
            const int64_t ih = oh * param(strides, 0, 1) - pad_begin(0) + kh * param(dilations, 0, 1);
            const int64_t iw = ow * param(strides, 1, 1) - pad_begin(1) + kw * param(dilations, 1, 1);
            if (ih < in_h + pad_end(0) && iw < in_w + pad_end(1)) ++padded;
            if (ih < 0 || ih >= in_h || iw < 0 || iw >= in_w) continue;
            sum += xv[(plane * in_h + ih) * in_w + iw];
            ++inside;
          }
        const int64_t count = include_pad ? padded : inside;
        y.push_back(count > 0 ? sum / static_cast<float>(count) : 0.0f);
      }
  return y;
}

TEST(AveragePoolFastPath, GivesTheWindowOrderSumsBits) {
  std::vector<float> v(2 * 3 * 9 * 11);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 7919) % 1000) * 0.0137f - 6.1f;  // sums that round
  v[5] = -0.0f, v[40] = std::nanf(""), v[77] = -INFINITY;
  struct Window {
    std::vector<int64_t> kernel, strides, pads, dilations;
    int64_t ceil;
  };
  auto expect_reference = [](const Tensor& x, const Window& w, int include_pad) {
    Attrs attrs = [&](io::NodeBuilder& n) {
      n.attr("kernel_shape", w.kernel).attr("strides", w.strides).attr("pads", w.pads);
      n.attr("dilations", w.dilations).attr("ceil_mode", w.ceil).attr("count_include_pad", include_pad);
    };
    const Tensor y = run_ok("AveragePool", {x}, attrs, 19);
    const std::vector<float> want =
        average_pool_reference(x, y.dims(), w.kernel, w.strides, w.pads, w.dilations, include_pad != 0);
    ASSERT_EQ(static_cast<size_t>(y.numel()), want.size());
    EXPECT_EQ(std::memcmp(y.data<float>(), want.data(), y.nbytes()), 0)
        << "kernel " << dims_to_string(w.kernel) << " count_include_pad " << include_pad;
  };
  const Tensor x2 = f32({2, 3, 9, 11}, v), x1 = f32({2, 3, 99}, v);
  for (int include_pad : {0, 1}) {
    for (const Window& w : {Window{{3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 0}, Window{{3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 0},
                            Window{{2, 3}, {1, 2}, {0, 1, 1, 0}, {2, 1}, 1}, Window{{3, 2}, {3, 3}, {0, 0, 0, 0}, {1, 2}, 1},
                            Window{{2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, 0}, Window{{5, 11}, {1, 1}, {2, 0, 2, 0}, {1, 1}, 0}})
      expect_reference(x2, w, include_pad);
    for (const Window& w : {Window{{3}, {2}, {1, 1}, {1}, 0}, Window{{4}, {3}, {0, 2}, {2}, 1}, Window{{2}, {1}, {0, 0}, {1}, 0}})
      expect_reference(x1, w, include_pad);
  }
}

}  // namespace
}  // namespace qonnx::test
