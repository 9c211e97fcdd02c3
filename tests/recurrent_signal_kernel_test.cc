// RNN/GRU/LSTM and the signal ops (DFT, STFT, windows, MelWeightMatrix): cases the ONNX backend data
// does not cover (peepholes with non-zero values, linear_before_reset, bidirectional with
// sequence_lens, activation parameters, clip, DFT-20's axis input, errors). Expected values are
// derived here from the spec's equations, step by step, independently of the kernels' loops.
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "support/test_util.h"

namespace qonnx::test {
namespace {

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

void expect_near(const Tensor& t, const std::vector<double>& expected, double tol = 1e-5) {
  ASSERT_EQ(t.numel(), static_cast<int64_t>(expected.size()));
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(t.data<float>()[i], expected[i], tol) << "element " << i;
}

Result<std::vector<Tensor>> run(const std::string& op, std::vector<Tensor> inputs, Attrs attrs, int outputs, int64_t opset = 14) {
  return run_op(op, std::move(inputs), std::move(attrs), opset, outputs);
}

TEST(Recurrent, LstmGateOrderBiasAndPeepholes) {
  const Tensor x = f32({2, 1, 1}, {1.0f, -2.0f});
  const Tensor w = f32({1, 4, 1}, {0.5f, 0.6f, 0.7f, 0.8f});  // i, o, f, c
  const Tensor r = f32({1, 4, 1}, {0.1f, 0.2f, 0.3f, 0.4f});
  const Tensor b = f32({1, 8}, {0.01f, 0.02f, 0.03f, 0.04f, 0.05f, 0.06f, 0.07f, 0.08f});
  const Tensor p = f32({1, 3}, {0.9f, 0.8f, 0.7f});  // i, o, f
  for (bool peep : {false, true}) {
    double h = 0, c = 0;
    std::vector<double> ys;
    for (double xt : {1.0, -2.0}) {
      const double i = sigmoid(0.5 * xt + 0.1 * h + 0.06 + (peep ? 0.9 * c : 0));
      const double f = sigmoid(0.7 * xt + 0.3 * h + 0.10 + (peep ? 0.7 * c : 0));
      const double g = std::tanh(0.8 * xt + 0.4 * h + 0.12);
      c = f * c + i * g;
      const double o = sigmoid(0.6 * xt + 0.2 * h + 0.08 + (peep ? 0.8 * c : 0));
      h = o * std::tanh(c);
      ys.push_back(h);
    }
    std::vector<Tensor> in{x, w, r, b};
    if (peep) in.insert(in.end(), {Tensor(), Tensor(), Tensor(), p});
    auto out = run("LSTM", in, [](io::NodeBuilder& n) { n.attr("hidden_size", 1); }, 3);
    ASSERT_TRUE(out.is_ok()) << out.status().to_string();
    EXPECT_EQ(out.value()[0].dims(), (Dims{2, 1, 1, 1}));
    expect_near(out.value()[0], ys);
    expect_near(out.value()[1], {h});
    expect_near(out.value()[2], {c});
  }
}

TEST(Recurrent, LstmInputForgetCouplesTheForgetGate) {
  const Tensor x = f32({1, 1, 1}, {1.0f});
  const Tensor w = f32({1, 4, 1}, {0.5f, 0.6f, 0.7f, 0.8f});
  const Tensor r = f32({1, 4, 1}, {0, 0, 0, 0});
  const Tensor c0 = f32({1, 1, 1}, {2.0f});
  const double i = sigmoid(0.5), f = 1 - i, g = std::tanh(0.8), c = f * 2.0 + i * g, h = sigmoid(0.6) * std::tanh(c);
  auto out = run("LSTM", {x, w, r, Tensor(), Tensor(), Tensor(), c0},
                 [](io::NodeBuilder& n) { n.attr("hidden_size", 1).attr("input_forget", 1); }, 3);
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  expect_near(out.value()[1], {h});
  expect_near(out.value()[2], {c});
}

TEST(Recurrent, GruLinearBeforeResetChangesTheCandidate) {
  const Tensor x = f32({2, 1, 1}, {1.0f, -0.5f});
  const Tensor w = f32({1, 3, 1}, {0.5f, 0.6f, 0.7f});  // z, r, h
  const Tensor r = f32({1, 3, 1}, {0.1f, 0.2f, 0.3f});
  const Tensor b = f32({1, 6}, {0.01f, 0.02f, 0.03f, 0.04f, 0.05f, 0.06f});
  const Tensor h0 = f32({1, 1, 1}, {0.5f});
  for (int lbr : {0, 1}) {
    double h = 0.5;
    for (double xt : {1.0, -0.5}) {
      const double z = sigmoid(0.5 * xt + 0.1 * h + 0.05);
      const double rr = sigmoid(0.6 * xt + 0.2 * h + 0.07);
      const double cand = lbr ? std::tanh(0.7 * xt + 0.03 + rr * (0.3 * h + 0.06)) : std::tanh(0.7 * xt + 0.03 + 0.3 * (rr * h) + 0.06);
      h = (1 - z) * cand + z * h;
    }
    auto out = run("GRU", {x, w, r, b, Tensor(), h0},
                   [lbr](io::NodeBuilder& n) { n.attr("hidden_size", 1).attr("linear_before_reset", lbr); }, 2);
    ASSERT_TRUE(out.is_ok()) << out.status().to_string();
    expect_near(out.value()[1], {h});
  }
}

TEST(Recurrent, BidirectionalRnnHonoursSequenceLengths) {
  // X [3, 2, 1]: batch 0 has 3 steps, batch 1 has 2.
  const std::vector<double> xs = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6};  // [t][b]
  const Tensor x = f32({3, 2, 1}, {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f});
  const Tensor w = f32({2, 1, 1}, {1.0f, 2.0f});
  const Tensor r = f32({2, 1, 1}, {0.5f, 0.25f});
  const Tensor lens = i32({2}, {3, 2});
  std::vector<double> y(3 * 2 * 2, 0.0), yh(2 * 2, 0.0);  // y [t][d][b], yh [d][b]
  const int len[2] = {3, 2};
  for (int b = 0; b < 2; ++b) {
    double h = 0;
    for (int t = 0; t < len[b]; ++t) {
      h = std::tanh(1.0 * xs[static_cast<size_t>(t * 2 + b)] + 0.5 * h);
      y[static_cast<size_t>((t * 2 + 0) * 2 + b)] = h;
    }
    yh[static_cast<size_t>(b)] = h;
    h = 0;
    for (int t = len[b] - 1; t >= 0; --t) {
      h = std::tanh(2.0 * xs[static_cast<size_t>(t * 2 + b)] + 0.25 * h);
      y[static_cast<size_t>((t * 2 + 1) * 2 + b)] = h;
    }
    yh[static_cast<size_t>(2 + b)] = h;
  }
  auto out = run("RNN", {x, w, r, Tensor(), lens},
                 [](io::NodeBuilder& n) { n.attr("hidden_size", 1).attr("direction", "bidirectional"); }, 2);
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(out.value()[0].dims(), (Dims{3, 2, 2, 1}));
  expect_near(out.value()[0], y);
  expect_near(out.value()[1], yh);
  EXPECT_EQ(out.value()[0].data<float>()[(2 * 2 + 0) * 2 + 1], 0.0f);  // past batch 1's length
}

TEST(Recurrent, ActivationParametersAndClip) {
  const Tensor x = f32({1, 1, 1}, {2.0f});
  const Tensor w3 = f32({1, 3, 1}, {1.0f, 1.0f, 1.0f});
  const Tensor r3 = f32({1, 3, 1}, {0, 0, 0});
  // GRU f = HardSigmoid(alpha 0.3, beta 0.6), g = LeakyRelu(alpha 0.2): alphas are consumed in order.
  const double z = std::min(1.0, std::max(0.0, 0.3 * 2.0 + 0.6));
  auto out = run("GRU", {x, w3, r3},
                 [](io::NodeBuilder& n) {
                   n.attr("hidden_size", 1)
                       .attr("activations", std::vector<std::string>{"HardSigmoid", "LeakyRelu"})
                       .attr("activation_alpha", std::vector<float>{0.3f, 0.2f})
                       .attr("activation_beta", std::vector<float>{0.6f});
                 },
                 2);
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  expect_near(out.value()[1], {(1 - z) * 2.0});
  // Clip bounds the activations' input: Affine (alpha 1, beta 0) then shows the clipped value.
  const Tensor w1 = f32({1, 1, 1}, {1.0f});
  const Tensor r1 = f32({1, 1, 1}, {0.0f});
  auto clipped = run("RNN", {x, w1, r1},
                     [](io::NodeBuilder& n) {
                       n.attr("hidden_size", 1).attr("clip", 0.5f).attr("activations", std::vector<std::string>{"Affine"});
                     },
                     2);
  ASSERT_TRUE(clipped.is_ok()) << clipped.status().to_string();
  expect_near(clipped.value()[1], {0.5});
}

TEST(Recurrent, RejectsBadAttributesAndInputs) {
  const Tensor x = f32({1, 1, 1}, {1.0f});
  const Tensor w = f32({1, 1, 1}, {1.0f});
  const Tensor r = f32({1, 1, 1}, {0.5f});
  expect_error(run("RNN", {x, w, r}, [](io::NodeBuilder& n) { n.attr("activations", std::vector<std::string>{"Swish"}); }, 2),
               Code::kInvalidModel, "'Swish' is not an activation function");
  expect_error(run("RNN", {x, f32({1, 2, 1}, {1, 1}), r}, [](io::NodeBuilder& n) { n.attr("hidden_size", 1); }, 2),
               Code::kInvalidModel, "W must have shape [1, 1, 1]");
  expect_error(run("RNN", {x, w, r, Tensor(), i32({1}, {2})}, nullptr, 2), Code::kInvalidModel, "sequence_lens[0] = 2");
  expect_error(run("RNN", {x, w, r}, [](io::NodeBuilder& n) { n.attr("layout", 1); }, 2, 13), Code::kInvalidModel,
               "'layout' is not part of RNN-13");
  expect_error(run("RNN", {x, w, r}, [](io::NodeBuilder& n) { n.attr("direction", "sideways"); }, 2), Code::kInvalidModel,
               "attribute 'direction'");
  expect_error(run("LSTM", {x, w, r}, nullptr, 2, 6), Code::kUnsupported, "LSTM");
}

TEST(Signal, DftOfARealSignalAndItsInverse) {
  // DFT([1, 2, 3, 4]) = [10, -2+2i, -2, -2-2i].
  const Tensor x = f32({1, 4, 1}, {1, 2, 3, 4});
  Tensor y = run_ok("DFT", {x}, nullptr, 17);
  EXPECT_EQ(y.dims(), (Dims{1, 4, 2}));
  expect_near(y, {10, 0, -2, 2, -2, 0, -2, -2});
  Tensor back = run_ok("DFT", {y}, [](io::NodeBuilder& n) { n.attr("inverse", 1); }, 17);
  expect_near(back, {1, 0, 2, 0, 3, 0, 4, 0});
  Tensor half = run_ok("DFT", {x}, [](io::NodeBuilder& n) { n.attr("onesided", 1); }, 17);
  EXPECT_EQ(half.dims(), (Dims{1, 3, 2}));
  // dft_length pads with zeros: DFT([1, 2, 0, 0]) = [3, 1-2i, -1, 1+2i].
  Tensor padded = run_ok("DFT", {f32({1, 2, 1}, {1, 2}), i64({}, {4})}, nullptr, 17);
  expect_near(padded, {3, 0, 1, -2, -1, 0, 1, 2});
  // DFT-20 takes the axis as input #2 (default -2, the last signal axis).
  Tensor axis20 = run_ok("DFT", {x, Tensor(), i64({}, {-2})}, nullptr, 20);
  expect_near(axis20, {10, 0, -2, 2, -2, 0, -2, -2});
  expect_error(run_op("DFT", {x}, [](io::NodeBuilder& n) { n.attr("axis", 2); }, 17), Code::kInvalidModel,
               "axis 2 is not a signal axis");
  expect_error(run_op("DFT", {x}, [](io::NodeBuilder& n) { n.attr("axis", 1); }, 20), Code::kInvalidModel,
               "attribute 'axis' is not part of DFT-20");
}

TEST(Signal, StftFramesAWindowedSignal) {
  // Frames of 4 every 2 samples over 8 samples: 3 frames, 3 onesided bins; the DC bin is the
  // window-weighted frame sum.
  const Tensor x = f32({1, 8, 1}, {1, 2, 3, 4, 5, 6, 7, 8});
  const Tensor window = f32({4}, {0.5f, 1, 1, 0.5f});
  Tensor y = run_ok("STFT", {x, i64({}, {2}), window}, nullptr, 17);
  ASSERT_EQ(y.dims(), (Dims{1, 3, 3, 2}));
  const float* v = y.data<float>();
  EXPECT_NEAR(v[0], 0.5 * 1 + 2 + 3 + 0.5 * 4, 1e-5);
  EXPECT_NEAR(v[6], 0.5 * 3 + 4 + 5 + 0.5 * 6, 1e-5);
  EXPECT_NEAR(v[12], 0.5 * 5 + 6 + 7 + 0.5 * 8, 1e-5);
  // Nyquist bin of frame 0: sum (-1)^j w_j x_j.
  EXPECT_NEAR(v[4], 0.5 * 1 - 2 + 3 - 0.5 * 4, 1e-5);
  expect_error(run_op("STFT", {x, i64({}, {2}), window, i64({}, {5})}, nullptr, 17), Code::kInvalidModel,
               "frame_length 5 differs");
  expect_error(run_op("STFT", {x, i64({}, {0}), window}, nullptr, 17), Code::kInvalidModel, "frame_step must be positive");
}

TEST(Signal, WindowsPeriodicAndSymmetric) {
  const double pi = 3.14159265358979323846;
  Tensor hann = run_ok("HannWindow", {i64({}, {4})}, nullptr, 17);
  expect_near(hann, {0.0, 0.5, 1.0, 0.5});
  Tensor sym = run_ok("HannWindow", {i32({}, {5})}, [](io::NodeBuilder& n) { n.attr("periodic", 0); }, 17);
  expect_near(sym, {0.0, 0.5, 1.0, 0.5, 0.0});
  Tensor hamming = run_ok("HammingWindow", {i64({}, {4})}, nullptr, 17);
  expect_near(hamming, {4.0 / 46, 25.0 / 46, 1.0, 25.0 / 46});
  Tensor blackman = run_ok("BlackmanWindow", {i64({}, {3})}, [](io::NodeBuilder& n) { n.attr("periodic", 0); }, 17);
  expect_near(blackman, {0.42 - 0.5 + 0.08, 0.42 + 0.5 + 0.08 * std::cos(2 * pi), 0.42 - 0.5 + 0.08}, 1e-6);
  Tensor as_double = run_ok("HannWindow", {i64({}, {2})}, [](io::NodeBuilder& n) { n.attr("output_datatype", 11); }, 17);
  EXPECT_EQ(as_double.dtype(), DType::kDouble);
  expect_error(run_op("HannWindow", {i64({}, {-1})}, nullptr, 17), Code::kInvalidModel, "size -1");
  expect_error(run_op("HannWindow", {i64({}, {4})}, [](io::NodeBuilder& n) { n.attr("output_datatype", 8); }, 17),
               Code::kInvalidModel, "output_datatype");
}

TEST(Signal, MelWeightMatrixTrianglesPeakAtOne) {
  Tensor m = run_ok("MelWeightMatrix", {i64({}, {4}), i64({}, {64}), i64({}, {16000}), f32s(0), f32s(8000)}, nullptr, 17);
  ASSERT_EQ(m.dims(), (Dims{33, 4}));
  for (int64_t col = 0; col < 4; ++col) {
    float peak = 0;
    for (int64_t row = 0; row < 33; ++row) {
      const float v = m.data<float>()[row * 4 + col];
      EXPECT_GE(v, 0.0f);
      EXPECT_LE(v, 1.0f);
      peak = std::max(peak, v);
    }
    EXPECT_EQ(peak, 1.0f) << "band " << col;
  }
  expect_error(run_op("MelWeightMatrix", {i64({}, {4}), i64({}, {64}), i64({}, {16000}), f32s(100), f32s(50)}, nullptr, 17),
               Code::kInvalidModel, "lower_edge_hertz <= upper_edge_hertz");
}

}  // namespace
}  // namespace qonnx::test
