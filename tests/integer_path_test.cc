// The integer path of Conv, MatMul and Gemm (docs/arithmetic.md): on generated quantized layers of every
// family, exec --arith int gives float32(double(exact integer sum) * s_x * s_w + bias) bit for bit, where
// the sum is recomputed here by direct loops in int64 from the quantizers' outputs; the same bits at 1 and
// 2 threads and on every int8 GEMM path this CPU runs; and results close to --arith float.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "kernels/isa/isa.h"
#include "qonnx/api/commands.h"
#include "qonnx/exec/broadcast.h"
#include "qonnx/exec/executor.h"
#include "qonnx/exec/threads.h"
#include "qonnx/io/model_builder.h"
#include "support/test_util.h"

namespace qonnx {
namespace {

using test::f32;

struct Layer {
  std::string op = "Conv";  // Conv, ConvTranspose, MatMul, Gemm
  // X and W shapes (Conv: N C spatial... / M C/g k...; ConvTranspose: N C spatial... / C M/g k...; MatMul:
  // A / B; Gemm: A / B)
  Dims x, w;
  int64_t group = 1;
  std::vector<int64_t> strides, dilations, pads, output_padding;  // output_padding: ConvTranspose
  bool trans_b = false;
  bool bias = true;
  int act_bits = 8;
  bool act_signed = false;
  float act_zero = 0.0f;
  int weight_bits = 8;
  bool per_channel = true;
  // Conv: the channels-last op on (N, d..., C) data and (M, k..., C/group) weights, whose values are the
  // channels-first layer's (same seed) transposed.
  bool channels_last = false;
  std::string describe() const {
    return fmt::format("{}{} x{} w{} group {} strides [{}] dil [{}] pads [{}] transB {} bias {} act {}{}b z{} w {}b{}", op,
                       channels_last ? " (channels-last)" : "", dims_to_string(x), dims_to_string(w), group,
                       fmt::join(strides, ","), fmt::join(dilations, ","), fmt::join(pads, ","), trans_b, bias,
                       act_signed ? "s" : "u", act_bits, act_zero, weight_bits, per_channel ? " per channel" : "");
  }
};

int64_t count_of(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

Tensor random_floats(std::mt19937& rng, const Dims& dims, float lo, float hi) {
  Tensor t(DType::kFloat, dims);
  std::uniform_real_distribution<float> d(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = d(rng);
  return t;
}

// The output-channel count and the axis of W that holds it.
int64_t out_channels(const Layer& l) {
  if (l.op == "Conv") return l.w[0];
  if (l.op == "ConvTranspose") return l.w[1] * l.group;
  if (l.op == "Gemm" && l.trans_b) return l.w[0];
  return l.w[1];
}

ir::Model build(const Layer& l, std::mt19937& rng) {
  io::ModelBuilder m(13);
  m.import("qonnx.custom_op.general", 1);
  Dims x_dims = l.x;
  if (l.channels_last) x_dims = test::nchw_to_nhwc(Tensor(DType::kFloat, l.x)).dims();
  m.input("x", DType::kFloat, x_dims).output("y", DType::kFloat);
  const float act_scale = 0.03125f * 0.75f;  // not a power of two
  m.initializer("xs", f32({}, {act_scale})).initializer("xz", f32({}, {l.act_zero}));
  m.initializer("xb", f32({}, {static_cast<float>(l.act_bits)}));
  m.node("Quant", {"x", "xs", "xz", "xb"}, {"xq"}, "qonnx.custom_op.general")
      .attr("signed", int64_t{l.act_signed})
      .attr("narrow", int64_t{0})
      .attr("rounding_mode", std::string("ROUND"));
  const int64_t channels = out_channels(l);
  const Tensor wf = random_floats(rng, l.w, -1.0f, 1.0f);
  m.initializer("wf", l.channels_last ? test::nchw_to_nhwc(wf) : wf);
  Dims scale_dims;
  if (l.per_channel) {  // along W's output-channel axis (ConvTranspose: M/group scales, shared by the groups)
    scale_dims.assign(l.w.size(), 1);
    const size_t axis = (l.op == "Conv" || (l.op == "Gemm" && l.trans_b)) ? 0 : 1;
    scale_dims[axis] = l.w[axis];
  }
  Tensor ws = random_floats(rng, l.per_channel ? scale_dims : Dims{}, 0.01f, 0.05f);
  m.initializer("ws", ws).initializer("wz", f32({}, {0.0f}));
  m.initializer("wb", f32({}, {static_cast<float>(l.weight_bits)}));
  m.node("Quant", {"wf", "ws", "wz", "wb"}, {"wq"}, "qonnx.custom_op.general")
      .attr("signed", int64_t{1})
      .attr("narrow", int64_t{1})
      .attr("rounding_mode", std::string("ROUND"));
  std::vector<std::string> ins = {"xq", "wq"};
  if (l.bias) {
    m.initializer("b", random_floats(rng, {channels}, -0.5f, 0.5f));
    ins.push_back("b");
  }
  auto node = m.node(l.op, ins, {"y"}, l.channels_last ? "qonnx.custom_op.channels_last" : "");
  if (l.op == "Conv" || l.op == "ConvTranspose") {
    node.attr("group", l.group);
    if (!l.output_padding.empty()) node.attr("output_padding", l.output_padding);
    if (!l.strides.empty()) node.attr("strides", l.strides);
    if (!l.dilations.empty()) node.attr("dilations", l.dilations);
    if (!l.pads.empty()) node.attr("pads", l.pads);
  }
  if (l.op == "Gemm") node.attr("transB", int64_t{l.trans_b});
  return m.build().value();
}

// The integer behind each element of a quantizer output q with scale s per element group.
std::vector<int64_t> integers(const Tensor& q, const std::vector<float>& scales, int64_t inner, int64_t count) {
  std::vector<int64_t> v(static_cast<size_t>(q.numel()));
  for (int64_t i = 0; i < q.numel(); ++i) {
    const float s = scales[static_cast<size_t>((i / inner) % count)];
    const float r = std::nearbyint(q.data<float>()[i] / s);
    EXPECT_EQ(r * s, q.data<float>()[i]) << "element " << i << " is not an integer times its scale";
    v[static_cast<size_t>(i)] = static_cast<int64_t>(r);
  }
  return v;
}

// The coordinates of row-major position `index` in `dims` (dims.size() of them).
std::vector<int64_t> coordinates(int64_t index, const Dims& dims) {
  std::vector<int64_t> c(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    c[d] = index % dims[d];
    index /= dims[d];
  }
  return c;
}

// Exact sums by direct loops: Conv (any spatial rank, groups, strides, dilations, pads), or the matrix
// product of A (rows x k) and B (k x n, or n x k with transB).
std::vector<int64_t> exact_sums(const Layer& l, const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                                Dims* out_dims) {
  std::vector<int64_t> out;
  if (l.op == "MatMul" || l.op == "Gemm") {
    const int64_t k = l.x.back(), rows = count_of(l.x) / k;
    const int64_t n = (l.op == "Gemm" && l.trans_b) ? l.w[0] : l.w[1];
    *out_dims = l.x;
    out_dims->back() = n;
    out.assign(static_cast<size_t>(rows * n), 0);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t p = 0; p < k; ++p)
          out[static_cast<size_t>(i * n + j)] +=
              x[static_cast<size_t>(i * k + p)] * w[static_cast<size_t>(l.trans_b ? j * k + p : p * n + j)];
    return out;
  }
  const size_t nd = l.x.size() - 2;
  auto at = [](const std::vector<int64_t>& v, size_t d, int64_t dflt) { return v.empty() ? dflt : v[d]; };
  if (l.op == "ConvTranspose") {
    // Every input position i and kernel offset k add x * w to output position i * stride - pad + k * dilation.
    Dims out_spatial(nd);
    for (size_t d = 0; d < nd; ++d)
      out_spatial[d] = (l.x[d + 2] - 1) * at(l.strides, d, 1) + at(l.output_padding, d, 0) +
                       at(l.dilations, d, 1) * (l.w[d + 2] - 1) + 1 - at(l.pads, d, 0) - at(l.pads, d + nd, 0);
    const int64_t mg = l.w[1], filters = mg * l.group, cg = l.x[1] / l.group;
    *out_dims = {l.x[0], filters};
    out_dims->insert(out_dims->end(), out_spatial.begin(), out_spatial.end());
    const int64_t out_size = count_of(out_spatial), in_size = count_of(Dims(l.x.begin() + 2, l.x.end()));
    const int64_t k_size = count_of(Dims(l.w.begin() + 2, l.w.end()));
    out.assign(static_cast<size_t>(l.x[0] * filters * out_size), 0);
    for (int64_t n = 0; n < l.x[0]; ++n)
      for (int64_t c = 0; c < l.x[1]; ++c)
        for (int64_t ip = 0; ip < in_size; ++ip)
          for (int64_t kp = 0; kp < k_size; ++kp) {
            const std::vector<int64_t> i = coordinates(ip, Dims(l.x.begin() + 2, l.x.end()));
            const std::vector<int64_t> kk = coordinates(kp, Dims(l.w.begin() + 2, l.w.end()));
            int64_t offset = 0;
            bool inside = true;
            for (size_t d = 0; d < nd; ++d) {
              const int64_t o = i[d] * at(l.strides, d, 1) - at(l.pads, d, 0) + kk[d] * at(l.dilations, d, 1);
              inside = inside && o >= 0 && o < out_spatial[d];
              offset = offset * out_spatial[d] + o;
            }
            if (!inside) continue;
            for (int64_t j = 0; j < mg; ++j) {
              const int64_t m = (c / cg) * mg + j;
              out[static_cast<size_t>((n * filters + m) * out_size + offset)] +=
                  x[static_cast<size_t>((n * l.x[1] + c) * in_size + ip)] * w[static_cast<size_t>((c * mg + j) * k_size + kp)];
            }
          }
    return out;
  }
  Dims out_spatial(nd);
  for (size_t d = 0; d < nd; ++d) {
    const int64_t span = at(l.dilations, d, 1) * (l.w[d + 2] - 1) + 1;
    out_spatial[d] = (l.x[d + 2] + at(l.pads, d, 0) + at(l.pads, d + nd, 0) - span) / at(l.strides, d, 1) + 1;
  }
  *out_dims = {l.x[0], l.w[0]};
  out_dims->insert(out_dims->end(), out_spatial.begin(), out_spatial.end());
  const int64_t filters = l.w[0], cg = l.w[1], mg = filters / l.group;
  const int64_t out_size = count_of(out_spatial), in_size = count_of(Dims(l.x.begin() + 2, l.x.end()));
  const int64_t k_size = count_of(Dims(l.w.begin() + 2, l.w.end()));
  out.assign(static_cast<size_t>(l.x[0] * filters * out_size), 0);
  for (int64_t n = 0; n < l.x[0]; ++n)
    for (int64_t m = 0; m < filters; ++m)
      for (int64_t op = 0; op < out_size; ++op) {
        const std::vector<int64_t> o = coordinates(op, out_spatial);
        int64_t sum = 0;
        for (int64_t c = 0; c < cg; ++c)
          for (int64_t kp = 0; kp < k_size; ++kp) {
            const std::vector<int64_t> kk = coordinates(kp, Dims(l.w.begin() + 2, l.w.end()));
            int64_t offset = 0;
            bool inside = true;
            for (size_t d = 0; d < nd; ++d) {
              const int64_t i = o[d] * at(l.strides, d, 1) - at(l.pads, d, 0) + kk[d] * at(l.dilations, d, 1);
              inside = inside && i >= 0 && i < l.x[d + 2];
              offset = offset * l.x[d + 2] + i;
            }
            if (!inside) continue;
            const int64_t channel = (m / mg) * cg + c;
            sum += x[static_cast<size_t>((n * l.x[1] + channel) * in_size + offset)] *
                   w[static_cast<size_t>((m * cg + c) * k_size + kp)];
          }
        out[static_cast<size_t>((n * filters + m) * out_size + op)] = sum;
      }
  return out;
}

Tensor run(const ir::Model& model, exec::Arithmetic arithmetic, const Tensor& x, int threads,
           std::vector<std::pair<std::string, std::string>>* notes = nullptr, exec::RunResult* all = nullptr) {
  auto ex = exec::Executor::create(model, arithmetic);
  EXPECT_TRUE(ex.is_ok()) << ex.status().to_string();
  EXPECT_TRUE(ex->expose({"xq", "wq"}).is_ok());
  if (notes) *notes = ex->path_notes();
  exec::set_threads(threads);
  auto r = ex->run({{"x", x}});
  exec::set_threads(1);
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  if (all) *all = r.value();
  return r->outputs[0];
}

// A NaN that reached the layer's input made some of its outputs NaN, not all of them.
void expect_some_nans(const Tensor& y) {
  int64_t nans = 0;
  for (int64_t i = 0; i < y.numel(); ++i) nans += std::isnan(y.data<float>()[i]);
  EXPECT_GT(nans, 0);
  EXPECT_LT(nans, y.numel());
}

void check_layer(const Layer& l, uint32_t seed) {
  SCOPED_TRACE(l.describe());
  std::mt19937 rng(seed);
  const ir::Model model = build(l, rng);
  const Tensor x = random_floats(rng, l.x, -6.0f, 6.0f);
  std::vector<std::pair<std::string, std::string>> notes;
  exec::RunResult all;
  const Tensor y = run(model, exec::Arithmetic::kInt, x, 1, &notes, &all);
  ASSERT_EQ(notes.size(), 1u);
  ASSERT_EQ(notes[0].second.rfind("integer:", 0), 0u) << notes[0].second;

  // The reference: the quantizers' integers, exact sums by direct loops, one scaling.
  const Tensor& xq = all.exposed.at("xq");
  const Tensor& wq = all.exposed.at("wq");
  const float act_scale = 0.03125f * 0.75f;
  const std::vector<int64_t> xv = integers(xq, {act_scale}, 1, 1);
  const int64_t channels = out_channels(l);
  const bool axis0 = l.op == "Conv" || (l.op == "Gemm" && l.trans_b);
  std::vector<float> ws;
  const Tensor wf = model.graph().initializer_tensor(model.graph().find_value("ws")).value();
  ws.assign(wf.data<float>(), wf.data<float>() + wf.numel());
  // The elements sharing a scale are contiguous runs of `inner`.
  const int64_t inner = axis0 ? wq.numel() / channels : l.op == "ConvTranspose" ? count_of(Dims(l.w.begin() + 2, l.w.end())) : 1;
  const std::vector<int64_t> wv = integers(wq, ws, inner, static_cast<int64_t>(ws.size()));
  Dims out_dims;
  const std::vector<int64_t> sums = exact_sums(l, xv, wv, &out_dims);
  ASSERT_EQ(y.dims(), out_dims);
  std::vector<float> bias(static_cast<size_t>(channels), 0.0f);
  if (l.bias) {
    const Tensor b = model.graph().initializer_tensor(model.graph().find_value("b")).value();
    bias.assign(b.data<float>(), b.data<float>() + b.numel());
  }
  const int64_t spatial = l.op == "Conv" || l.op == "ConvTranspose" ? y.numel() / (y.dim(0) * channels) : 1;
  int64_t mismatches = 0;
  for (int64_t i = 0; i < y.numel(); ++i) {
    const int64_t c = (i / spatial) % channels;
    const float s = ws[l.per_channel ? static_cast<size_t>(c) % ws.size() : 0];
    const float expected = static_cast<float>(static_cast<double>(sums[static_cast<size_t>(i)]) *
                                                  (static_cast<double>(act_scale) * static_cast<double>(s)) +
                                              static_cast<double>(bias[static_cast<size_t>(c)]));
    if (y.data<float>()[i] != expected && ++mismatches <= 3)
      ADD_FAILURE() << "element " << i << ": " << y.data<float>()[i] << " != " << expected;
  }
  EXPECT_EQ(mismatches, 0);

  // Two threads and every int8 GEMM path this CPU runs: the same bits.
  EXPECT_EQ(test::values_f32(run(model, exec::Arithmetic::kInt, x, 2)), test::values_f32(y)) << "2 threads";
  for (auto isa : {kernels::isa::Isa::kPortable, kernels::isa::Isa::kAvx2, kernels::isa::Isa::kAvx512}) {
    const auto previous = kernels::isa::use(kernels::isa::Family::kInt8, isa);
    EXPECT_EQ(test::values_f32(run(model, exec::Arithmetic::kInt, x, 1)), test::values_f32(y))
        << "path " << kernels::isa::name(kernels::isa::current(kernels::isa::Family::kInt8));
    kernels::isa::use(kernels::isa::Family::kInt8, previous);
  }

  // --arith float computes the same real numbers with float roundings: close, and its own path.
  std::vector<std::pair<std::string, std::string>> float_notes;
  const Tensor yf = run(model, exec::Arithmetic::kFloat, x, 1, &float_notes);
  EXPECT_TRUE(float_notes.empty());
  // Relative to the value, with a floor of 1/1000 of the output's range: near zero the float sums' own
  // rounding (it grows with the taps summed) dominates.
  double range = 0.0, worst = 0.0;
  for (int64_t i = 0; i < y.numel(); ++i) range = std::max(range, std::abs(static_cast<double>(y.data<float>()[i])));
  for (int64_t i = 0; i < y.numel(); ++i)
    worst = std::max(worst, std::abs(static_cast<double>(y.data<float>()[i]) - yf.data<float>()[i]) /
                                (1e-3 * range + std::abs(static_cast<double>(y.data<float>()[i]))));
  EXPECT_LT(worst, 1e-3);
}

TEST(IntegerPath, ConvFamiliesGiveTheExactSumScaledOnce) {
  uint32_t seed = 1;
  std::vector<Layer> layers;
  Layer c;
  c.x = {1, 8, 9, 9}, c.w = {16, 8, 3, 3}, c.pads = {1, 1, 1, 1};
  layers.push_back(c);
  Layer s2 = c;
  s2.strides = {2, 2}, s2.x = {2, 8, 10, 11};
  layers.push_back(s2);
  Layer dil = c;
  dil.dilations = {2, 2}, dil.pads = {2, 2, 2, 2}, dil.act_signed = true, dil.act_bits = 4;
  layers.push_back(dil);
  Layer grouped = c;
  grouped.group = 4, grouped.w = {16, 2, 3, 3}, grouped.weight_bits = 4;
  layers.push_back(grouped);
  Layer two_per_group = c;
  two_per_group.group = 4, two_per_group.w = {8, 2, 3, 3}, two_per_group.bias = false;
  layers.push_back(two_per_group);
  Layer pointwise = c;
  pointwise.w = {12, 8, 1, 1}, pointwise.pads = {}, pointwise.act_zero = 3.0f;
  layers.push_back(pointwise);
  Layer conv1d;
  conv1d.x = {1, 6, 40}, conv1d.w = {10, 6, 5}, conv1d.pads = {2, 1}, conv1d.strides = {1}, conv1d.per_channel = false;
  layers.push_back(conv1d);
  Layer conv3d;
  conv3d.x = {1, 3, 5, 6, 4}, conv3d.w = {4, 3, 3, 2, 3}, conv3d.pads = {1, 0, 1, 1, 1, 0}, conv3d.act_bits = 2;
  layers.push_back(conv3d);
  Layer asym = c;
  asym.x = {1, 5, 7, 12}, asym.w = {7, 5, 2, 5}, asym.pads = {0, 2, 1, 0}, asym.strides = {1, 3};
  asym.act_signed = true, asym.act_zero = -2.0f;
  layers.push_back(asym);
  Layer many_positions = c;  // several full position blocks per image, and a partial one
  many_positions.x = {2, 8, 23, 30}, many_positions.strides = {1, 1};
  layers.push_back(many_positions);
  Layer grouped_batch = grouped;
  grouped_batch.x = {3, 8, 17, 19};
  layers.push_back(grouped_batch);
  // Groups of 21 and 35 channels (not whole groups of 4: gathered tap by tap, in 16-byte moves).
  Layer wide_groups = c;
  wide_groups.x = {2, 42, 9, 8}, wide_groups.w = {6, 21, 3, 3}, wide_groups.group = 2, wide_groups.strides = {2, 1};
  layers.push_back(wide_groups);
  Layer wider_groups = wide_groups;
  wider_groups.x = {1, 70, 6, 7}, wider_groups.w = {4, 35, 3, 2}, wider_groups.dilations = {1, 2}, wider_groups.pads = {1, 1, 1, 1};
  layers.push_back(wider_groups);
  // Kernel rows of 6 bytes (3 channels x 2) and groups of 6 channels: runs of 4 to 15 bytes.
  Layer short_rows = c;
  short_rows.x = {2, 3, 7, 9}, short_rows.w = {5, 3, 3, 2}, short_rows.pads = {1, 0, 1, 1};
  layers.push_back(short_rows);
  Layer six_per_group = c;
  six_per_group.x = {1, 12, 8, 8}, six_per_group.w = {10, 6, 3, 3}, six_per_group.group = 2, six_per_group.dilations = {1, 2};
  six_per_group.pads = {1, 2, 1, 2};
  layers.push_back(six_per_group);
  // Kernels of 1 in every dim but the last, where the GEMM reads inside windows from the image in place:
  // Conv1d over several position blocks with both borders, strided, few channels; a 1 x k
  // 2-D kernel (runs end at each output row); and a dilated Conv1d, which gathers.
  Layer long1d = conv1d;
  long1d.x = {3, 16, 700}, long1d.w = {24, 16, 3}, long1d.pads = {1, 1}, long1d.per_channel = true;
  layers.push_back(long1d);
  Layer strided1d = long1d;
  strided1d.x = {2, 16, 301}, strided1d.strides = {2}, strided1d.pads = {3, 0}, strided1d.w = {8, 16, 4};
  layers.push_back(strided1d);
  Layer narrow1d = long1d;
  narrow1d.x = {2, 2, 515}, narrow1d.w = {16, 2, 3}, narrow1d.act_signed = true, narrow1d.act_zero = -1.0f;
  layers.push_back(narrow1d);
  Layer one_by_k = c;
  one_by_k.x = {2, 8, 5, 40}, one_by_k.w = {12, 8, 1, 5}, one_by_k.pads = {0, 2, 0, 2}, one_by_k.strides = {2, 3};
  layers.push_back(one_by_k);
  Layer one_by_k_valid = one_by_k;  // no padding: runs of inside windows meet at the row ends
  one_by_k_valid.pads = {};
  layers.push_back(one_by_k_valid);
  Layer dilated1d = long1d;
  dilated1d.dilations = {2}, dilated1d.pads = {2, 2};
  layers.push_back(dilated1d);
  // 2-D and 3-D windows read in place in slices (one per kernel row, or per tap when the last dim is
  // dilated), each 16 bytes or more: 3x3 and 5x3 kernels with borders, strides and several blocks per image,
  // a dilated last dim, a 3-D kernel (slices over depth and height), and a 1x1 stride-2 kernel (one slice,
  // rows stride * C apart).
  Layer wide3x3 = c;
  wide3x3.x = {2, 16, 21, 30}, wide3x3.w = {20, 16, 3, 3}, wide3x3.strides = {1, 2};
  layers.push_back(wide3x3);
  Layer tall5x3 = wide3x3;
  tall5x3.w = {9, 16, 5, 3}, tall5x3.pads = {2, 0, 1, 1}, tall5x3.strides = {2, 1}, tall5x3.act_signed = true;
  tall5x3.act_zero = -3.0f;
  layers.push_back(tall5x3);
  Layer dilated_w = wide3x3;
  dilated_w.dilations = {1, 2}, dilated_w.pads = {1, 2, 1, 2}, dilated_w.strides = {1, 1};
  layers.push_back(dilated_w);
  Layer sliced3d = conv3d;
  sliced3d.x = {2, 8, 5, 7, 9}, sliced3d.w = {12, 8, 2, 3, 3}, sliced3d.pads = {1, 1, 0, 0, 1, 2};
  layers.push_back(sliced3d);
  Layer strided1x1 = c;
  strided1x1.x = {2, 16, 13, 14}, strided1x1.w = {24, 16, 1, 1}, strided1x1.pads = {}, strided1x1.strides = {2, 2};
  layers.push_back(strided1x1);
  // The padded image: windows read in place wherever they start, rows of a tile across output rows; groups
  // of 16 channels or more read in place too (per tap, at the group's offset); pads wider than the kernel
  // (windows all padding); a dilated and strided kernel with asymmetric pads (a slice per tap).
  Layer grouped_in_place = wide3x3;
  grouped_in_place.x = {2, 32, 11, 13}, grouped_in_place.w = {24, 16, 3, 3}, grouped_in_place.group = 2;
  grouped_in_place.strides = {2, 1}, grouped_in_place.act_signed = true, grouped_in_place.act_zero = -5.0f;
  layers.push_back(grouped_in_place);
  Layer grouped1d = long1d;
  grouped1d.x = {2, 32, 50}, grouped1d.w = {16, 16, 3}, grouped1d.group = 2, grouped1d.pads = {1, 2};
  layers.push_back(grouped1d);
  Layer grouped1x1 = strided1x1;  // one tap: windows in the image at the group's offset
  grouped1x1.x = {2, 32, 9, 10}, grouped1x1.w = {16, 16, 1, 1}, grouped1x1.group = 2;
  layers.push_back(grouped1x1);
  Layer grouped1x1_padded = grouped1x1;  // one tap with padding: border windows gathered at the group's offset
  grouped1x1_padded.pads = {1, 0, 0, 1}, grouped1x1_padded.strides = {1, 1}, grouped1x1_padded.act_zero = 4.0f;
  layers.push_back(grouped1x1_padded);
  Layer wide_pads = wide3x3;
  wide_pads.x = {1, 16, 6, 7}, wide_pads.pads = {3, 1, 2, 4}, wide_pads.strides = {1, 1};
  wide_pads.act_signed = true, wide_pads.act_zero = -7.0f;
  layers.push_back(wide_pads);
  Layer dilated_strided = wide3x3;
  dilated_strided.x = {2, 16, 19, 23}, dilated_strided.dilations = {2, 2}, dilated_strided.strides = {3, 2};
  dilated_strided.pads = {2, 1, 0, 2};
  layers.push_back(dilated_strided);
  // Over a batch each thread pads the images it reaches into its own buffer: three images of two position
  // blocks, so that at 2 threads the second thread starts inside an image.
  Layer padded_batch = wide3x3;
  padded_batch.x = {3, 16, 29, 30}, padded_batch.act_signed = true, padded_batch.act_zero = -2.0f;
  layers.push_back(padded_batch);
  for (const Layer& l : layers) check_layer(l, seed++);
}

TEST(IntegerPath, ConvTransposeFamiliesGiveTheExactSumScaledOnce) {
  uint32_t seed = 100;
  std::vector<Layer> layers;
  Layer t;
  t.op = "ConvTranspose", t.x = {1, 8, 7, 6}, t.w = {8, 5, 4, 4}, t.strides = {2, 2}, t.pads = {1, 1, 1, 1};
  layers.push_back(t);
  Layer padded_out = t;  // output_padding, dilation, asymmetric pads, signed activations with a zero point
  padded_out.strides = {2, 3}, padded_out.output_padding = {1, 2}, padded_out.dilations = {2, 1};
  padded_out.pads = {0, 2, 1, 0}, padded_out.act_signed = true, padded_out.act_zero = -3.0f;
  layers.push_back(padded_out);
  Layer grouped = t;
  grouped.group = 2, grouped.w = {8, 3, 3, 3}, grouped.x = {2, 8, 5, 9}, grouped.weight_bits = 4;
  layers.push_back(grouped);
  Layer one_d = t;
  one_d.x = {2, 6, 17}, one_d.w = {6, 4, 5}, one_d.strides = {3}, one_d.pads = {2, 0}, one_d.per_channel = false;
  one_d.bias = false;
  layers.push_back(one_d);
  Layer stride1 = t;  // a transposed convolution as a plain one: overlapping windows, every output summed many times
  stride1.strides = {1, 1}, stride1.pads = {}, stride1.x = {1, 16, 9, 9}, stride1.w = {16, 4, 3, 3}, stride1.act_bits = 6;
  layers.push_back(stride1);
  // Stride 1 computes as a Conv with the kernel flipped: dilation, asymmetric pads, output_padding, groups,
  // 1-D and 3-D.
  Layer s1_dilated = t;
  s1_dilated.x = {2, 6, 8, 7}, s1_dilated.w = {6, 5, 3, 2}, s1_dilated.strides = {1, 1}, s1_dilated.dilations = {2, 1};
  s1_dilated.pads = {1, 0, 2, 1}, s1_dilated.output_padding = {1, 0}, s1_dilated.act_signed = true, s1_dilated.act_zero = 5.0f;
  layers.push_back(s1_dilated);
  Layer s1_grouped = t;
  s1_grouped.x = {1, 9, 6, 6}, s1_grouped.w = {9, 2, 3, 3}, s1_grouped.group = 3, s1_grouped.strides = {1, 1};
  s1_grouped.pads = {}, s1_grouped.weight_bits = 3;
  layers.push_back(s1_grouped);
  Layer s1_one_d = t;
  s1_one_d.x = {2, 5, 13}, s1_one_d.w = {5, 7, 4}, s1_one_d.strides = {1}, s1_one_d.pads = {1, 2}, s1_one_d.per_channel = false;
  layers.push_back(s1_one_d);
  Layer s1_three_d = t;
  s1_three_d.x = {1, 3, 4, 3, 5}, s1_three_d.w = {3, 4, 2, 2, 3}, s1_three_d.strides = {1, 1, 1}, s1_three_d.pads = {};
  s1_three_d.bias = false;
  layers.push_back(s1_three_d);
  // Outputs no tap lands on (stride 3, kernel 2: bias only), over several 64-position blocks; and 3-D.
  Layer gaps = t;
  gaps.x = {2, 8, 9, 11}, gaps.w = {8, 6, 2, 2}, gaps.strides = {3, 3}, gaps.pads = {};
  layers.push_back(gaps);
  Layer three_d = t;
  three_d.x = {1, 4, 3, 5, 4}, three_d.w = {4, 3, 2, 3, 2}, three_d.strides = {2, 1, 2}, three_d.pads = {0, 1, 0, 1, 1, 0};
  layers.push_back(three_d);
  // Strided layers compute as one Conv over phases of output channels: few input channels (a window of one tap
  // per phase at k2 s2), kernel 3 at stride 2 (phases of 2 and 1 taps, odd output rows), a dilated stride-1 dim
  // beside a strided one, stride 2 with output_padding and asymmetric pads at batch 3.
  Layer few = t;
  few.x = {2, 5, 9, 11}, few.w = {5, 19, 2, 2}, few.strides = {2, 2}, few.pads = {};
  layers.push_back(few);
  Layer k3 = t;
  k3.x = {1, 7, 8, 13}, k3.w = {7, 6, 3, 3}, k3.strides = {2, 2}, k3.pads = {1, 0, 1, 1}, k3.weight_bits = 6;
  layers.push_back(k3);
  Layer mixed = t;
  mixed.x = {1, 6, 7, 9}, mixed.w = {6, 4, 3, 2}, mixed.strides = {2, 1}, mixed.dilations = {1, 2}, mixed.pads = {2, 1, 0, 2};
  layers.push_back(mixed);
  Layer padded_s2 = t;
  padded_s2.x = {3, 9, 6, 5}, padded_s2.w = {9, 10, 4, 3}, padded_s2.strides = {2, 2}, padded_s2.output_padding = {1, 1};
  padded_s2.pads = {2, 1, 0, 1}, padded_s2.act_bits = 8;
  layers.push_back(padded_s2);
  for (const Layer& l : layers) check_layer(l, seed++);
}

std::vector<uint32_t> bits(const Tensor& t) {
  std::vector<uint32_t> b(static_cast<size_t>(t.numel()));
  std::memcpy(b.data(), t.data<float>(), b.size() * sizeof(float));
  return b;
}

// Depthwise Conv (one input channel per group) has its own integer kernel: lanes along the output row
// (channels-first) or the channels (channels-last), taps in pairs. Shapes around its 16-lane blocks, odd
// and even tap counts, every stride/dilation/pad kind, channel multipliers, 1-D to 3-D.
std::vector<Layer> depthwise_layers() {
  std::vector<Layer> layers;
  Layer c;
  c.x = {1, 8, 9, 9}, c.w = {8, 1, 3, 3}, c.group = 8, c.pads = {1, 1, 1, 1};
  layers.push_back(c);
  Layer wide = c;  // rows of 16 and 17 outputs, 20 channels (a 16-channel block and a tail)
  wide.x = {2, 20, 5, 16}, wide.w = {20, 1, 3, 3}, wide.group = 20, wide.pads = {1, 2, 1, 0};
  layers.push_back(wide);
  Layer s2 = c;
  s2.x = {2, 8, 10, 33}, s2.strides = {2, 2}, s2.act_signed = true, s2.act_zero = -3.0f;
  layers.push_back(s2);
  Layer s3 = c;  // stride 3 along rows, 2 across, asymmetric pads, 4 taps
  s3.x = {1, 6, 11, 40}, s3.w = {6, 1, 2, 2}, s3.group = 6, s3.strides = {2, 3}, s3.pads = {0, 2, 1, 1};
  layers.push_back(s3);
  Layer dil = c;
  dil.x = {1, 16, 12, 19}, dil.w = {16, 1, 3, 3}, dil.group = 16, dil.dilations = {2, 3}, dil.pads = {2, 3, 2, 3};
  dil.act_bits = 4, dil.weight_bits = 4, dil.bias = false;
  layers.push_back(dil);
  Layer mult = c;  // two filters per channel
  mult.x = {1, 5, 7, 18}, mult.w = {10, 1, 3, 3}, mult.group = 5, mult.per_channel = false, mult.act_zero = 7.0f;
  layers.push_back(mult);
  Layer big = c;  // 5x5: 25 taps (of 4-bit weights: 8-bit ones put the float path's error past check_layer's 1e-3)
  big.x = {1, 17, 14, 14}, big.w = {17, 1, 5, 5}, big.group = 17, big.pads = {2, 2, 2, 2}, big.weight_bits = 4;
  layers.push_back(big);
  Layer blocks = c;  // 80 channels: a 64-channel block and a tail of 16 (AVX-512's row-quad run), signed bytes
  blocks.x = {2, 80, 9, 11}, blocks.w = {80, 1, 3, 3}, blocks.group = 80, blocks.act_signed = true, blocks.act_zero = -3.0f;
  layers.push_back(blocks);
  Layer tall = c;  // 7 kernel rows (two groups of four), 70 channels, a zero point inside the range
  tall.x = {1, 70, 13, 13}, tall.w = {70, 1, 7, 3}, tall.group = 70, tall.pads = {3, 1, 3, 1}, tall.strides = {2, 1};
  tall.act_zero = 4.0f, tall.weight_bits = 4;
  layers.push_back(tall);
  Layer conv1d;
  conv1d.x = {2, 6, 40}, conv1d.w = {6, 1, 5}, conv1d.group = 6, conv1d.pads = {2, 1}, conv1d.strides = {2};
  layers.push_back(conv1d);
  Layer conv3d;
  conv3d.x = {1, 3, 5, 6, 20}, conv3d.w = {3, 1, 3, 2, 3}, conv3d.group = 3, conv3d.pads = {1, 0, 1, 1, 1, 0};
  conv3d.act_bits = 2;
  layers.push_back(conv3d);
  return layers;
}

TEST(IntegerPath, DepthwiseConvGivesTheExactSumScaledOnce) {
  exec::set_min_work_per_thread(1);  // two threads split even these small layers
  uint32_t seed = 50;
  for (const Layer& l : depthwise_layers()) check_layer(l, seed++);
  exec::set_min_work_per_thread(exec::kDefaultMinWorkPerThread);
}

// Channels-last depthwise keeps the float depthwise kernel (channels as lanes), which measured faster
// than the integer one there (docs/arithmetic.md): the float bits under --arith int too.
TEST(IntegerPath, ChannelsLastDepthwiseConvKeepsTheFloatKernel) {
  uint32_t seed = 70;
  for (Layer l : depthwise_layers()) {
    if (l.w[0] != l.x[1]) continue;  // the channels-last op takes a channel multiplier of 1
    l.channels_last = true;
    SCOPED_TRACE(l.describe());
    std::mt19937 rng(seed++);
    const ir::Model model = build(l, rng);
    const Tensor x = test::nchw_to_nhwc(random_floats(rng, l.x, -6.0f, 6.0f));
    std::vector<std::pair<std::string, std::string>> notes;
    EXPECT_EQ(bits(run(model, exec::Arithmetic::kInt, x, 1, &notes)), bits(run(model, exec::Arithmetic::kFloat, x, 1)));
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_EQ(notes[0].second.rfind("float:", 0), 0u) << notes[0].second;
  }
}

TEST(IntegerPath, MatMulAndGemmGiveTheExactSumScaledOnce) {
  uint32_t seed = 100;
  std::vector<Layer> layers;
  for (int64_t rows : {1, 3, 17})
    for (int64_t k : {1, 7, 64, 129}) {
      Layer mm;
      mm.op = "MatMul", mm.x = {rows, k}, mm.w = {k, 19}, mm.bias = false, mm.act_signed = rows % 2 == 1;
      layers.push_back(mm);
      Layer gemm;
      gemm.op = "Gemm", gemm.x = {rows, k}, gemm.w = {23, k}, gemm.trans_b = true, gemm.weight_bits = 3;
      layers.push_back(gemm);
      Layer plain = gemm;
      plain.trans_b = false, plain.w = {k, 5}, plain.per_channel = false;
      layers.push_back(plain);
    }
  Layer batched;
  batched.op = "MatMul", batched.x = {2, 3, 4, 33}, batched.w = {33, 8}, batched.bias = false;
  layers.push_back(batched);
  // Rows in blocks rounded while in cache (small weights, many rows), with a last partial block.
  Layer tall;
  tall.op = "MatMul", tall.x = {3, 211, 37}, tall.w = {37, 70}, tall.bias = false, tall.act_signed = true;
  layers.push_back(tall);
  Layer tall_gemm;
  tall_gemm.op = "Gemm", tall_gemm.x = {1001, 12}, tall_gemm.w = {12, 300}, tall_gemm.weight_bits = 5;
  layers.push_back(tall_gemm);
  for (const Layer& l : layers) check_layer(l, seed++);
}

// Attention's MatMuls: A and B both runtime activations behind their own Quants.
struct ActivationMatMul {
  Dims a, b;                    // A (..., m, k); B (..., k, n), or (..., n, k) behind a Transpose of its last two axes
  bool a_signed = true, b_signed = true, b_narrow = false;
  int a_bits = 8, b_bits = 8;
  bool b_transposed = false;    // B reaches the MatMul through a Transpose (its producer publishes no codes)
  bool a_reshaped = false;      // A reaches it through a Reshape to its own shape (no codes either)
  std::string describe() const {
    return fmt::format("A {} {}{}b{}, B {} {}{}b{}{}", dims_to_string(a), a_signed ? "s" : "u", a_bits,
                       a_reshaped ? " reshaped" : "", dims_to_string(b), b_signed ? "s" : "u", b_bits,
                       b_narrow ? " narrow" : "", b_transposed ? " transposed" : "");
  }
};

constexpr float kAScale = 0.03125f * 0.75f, kBScale = 0.0390625f * 0.6f;

ir::Model build_activation_matmul(const ActivationMatMul& l) {
  io::ModelBuilder m(13);
  m.import("qonnx.custom_op.general", 1);
  m.input("a", DType::kFloat, l.a).input("b", DType::kFloat, l.b).output("y", DType::kFloat);
  m.initializer("as", f32({}, {kAScale})).initializer("bs", f32({}, {kBScale})).initializer("z", f32({}, {0.0f}));
  m.initializer("ab", f32({}, {static_cast<float>(l.a_bits)})).initializer("bb", f32({}, {static_cast<float>(l.b_bits)}));
  m.node("Quant", {"a", "as", "z", "ab"}, {"aq"}, "qonnx.custom_op.general").attr("signed", int64_t{l.a_signed});
  m.node("Quant", {"b", "bs", "z", "bb"}, {"bq"}, "qonnx.custom_op.general")
      .attr("signed", int64_t{l.b_signed})
      .attr("narrow", int64_t{l.b_narrow});
  std::string b = "bq";
  if (l.b_transposed) {
    std::vector<int64_t> perm;
    for (size_t d = 0; d < l.b.size(); ++d) perm.push_back(static_cast<int64_t>(d));
    std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    m.node("Transpose", {"bq"}, {"bt"}).attr("perm", perm);
    b = "bt";
  }
  std::string a = "aq";
  if (l.a_reshaped) {
    m.initializer("a_shape", test::i64({static_cast<int64_t>(l.a.size())}, l.a));
    m.node("Reshape", {"aq", "a_shape"}, {"ar"});
    a = "ar";
  }
  m.node("MatMul", {a, b}, {"y"});
  return m.build().value();
}

Tensor run_activation_matmul(const ir::Model& model, exec::Arithmetic arithmetic, const Tensor& a, const Tensor& b,
                             int threads, bool expose, std::vector<std::pair<std::string, std::string>>* notes = nullptr,
                             exec::RunResult* all = nullptr) {
  auto ex = exec::Executor::create(model, arithmetic);
  EXPECT_TRUE(ex.is_ok()) << ex.status().to_string();
  if (expose) {
    EXPECT_TRUE(ex->expose({"aq", "bq"}).is_ok());
  }
  if (notes) *notes = ex->path_notes();
  exec::set_threads(threads);
  auto r = ex->run({{"a", a}, {"b", b}});
  exec::set_threads(1);
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  if (all) *all = r.value();
  return r->outputs[0];
}

// The exact sums of the quantizers' integers, scaled once by double(s_a) * double(s_b); the same bits with the
// operands' codes handed over (nothing exposed) or not, at 2 threads and on every int8 GEMM path.
TEST(IntegerPath, ActivationTimesActivationMatMulGivesTheExactSumScaledOnce) {
  std::vector<ActivationMatMul> cases;
  cases.push_back({{2, 3, 17, 40}, {2, 3, 40, 29}});
  cases.push_back({{3, 17, 40}, {40, 29}, false, true, true, 8, 4});       // unsigned A, one B for every product
  cases.push_back({{2, 1, 9, 70}, {1, 4, 70, 33}, true, false, false, 8, 7});  // B in [0, 127]; both broadcast
  cases.push_back({{4, 30, 40}, {4, 30, 40}, true, true, false, 5, 8, true});  // Q K^T: B through a Transpose
  cases.push_back({{301, 37}, {37, 70}, false, true, false, 8, 3});
  cases.push_back({{2, 3, 21, 44}, {2, 3, 44, 22}, true, false, false, 8, 8});  // unsigned 8-bit B: shifted into int8
  cases.push_back({{3, 21, 44}, {3, 22, 44}, true, false, false, 8, 8, true, true});  // ... from floats on both sides
  cases.push_back({{5, 64}, {64, 9}, false, false, false, 8, 8});              // both unsigned 8-bit
  uint32_t seed = 900;
  for (const ActivationMatMul& l : cases) {
    SCOPED_TRACE(l.describe());
    std::mt19937 rng(seed++);
    const ir::Model model = build_activation_matmul(l);
    const Tensor a = random_floats(rng, l.a, -4.0f, 4.0f), b = random_floats(rng, l.b, -6.0f, 6.0f);
    std::vector<std::pair<std::string, std::string>> notes;
    exec::RunResult all;
    const Tensor y = run_activation_matmul(model, exec::Arithmetic::kInt, a, b, 1, true, &notes, &all);
    ASSERT_EQ(notes.size(), 1u);
    ASSERT_EQ(notes[0].second.rfind("integer: activations in", 0), 0u) << notes[0].second;
    const Tensor& aq = all.exposed.at("aq");
    Tensor bq = all.exposed.at("bq");
    const std::vector<int64_t> av = integers(aq, {kAScale}, 1, 1), bv_stored = integers(bq, {kBScale}, 1, 1);
    // B's integers as the MatMul reads them: (..., k, n).
    Dims bd = l.b;
    std::vector<int64_t> bv = bv_stored;
    if (l.b_transposed) {
      std::swap(bd[bd.size() - 1], bd[bd.size() - 2]);
      const int64_t rows = l.b[l.b.size() - 2], cols = l.b.back(), mats = count_of(l.b) / (rows * cols);
      for (int64_t t = 0; t < mats; ++t)
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j)
            bv[static_cast<size_t>(t * rows * cols + j * rows + i)] = bv_stored[static_cast<size_t>(t * rows * cols + i * cols + j)];
    }
    const int64_t m = l.a[l.a.size() - 2], k = l.a.back(), n = bd.back();
    const Dims a_batch(l.a.begin(), l.a.end() - 2), b_batch(bd.begin(), bd.end() - 2);
    Dims batch;
    ASSERT_TRUE(exec::broadcast_dims(a_batch, b_batch, &batch));
    const int64_t products = count_of(batch);
    ASSERT_EQ(y.numel(), products * m * n);
    int64_t mismatches = 0;
    for (int64_t t = 0; t < products; ++t) {
      // Each operand's matrix for product t under numpy broadcasting.
      const std::vector<int64_t> at = coordinates(t, batch);
      int64_t ai = 0, bi = 0;
      for (size_t d = 0; d < batch.size(); ++d) {
        const size_t da = d + a_batch.size() - batch.size(), db = d + b_batch.size() - batch.size();
        if (d + a_batch.size() >= batch.size()) ai = ai * a_batch[da] + (a_batch[da] == 1 ? 0 : at[d]);
        if (d + b_batch.size() >= batch.size()) bi = bi * b_batch[db] + (b_batch[db] == 1 ? 0 : at[d]);
      }
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          int64_t sum = 0;
          for (int64_t p = 0; p < k; ++p)
            sum += av[static_cast<size_t>((ai * m + i) * k + p)] * bv[static_cast<size_t>((bi * k + p) * n + j)];
          const float expected =
              static_cast<float>(static_cast<double>(sum) * (static_cast<double>(kAScale) * static_cast<double>(kBScale)));
          const float got = y.data<float>()[(t * m + i) * n + j];
          if (got != expected && ++mismatches <= 3) ADD_FAILURE() << "product " << t << " at " << i << "," << j << ": " << got << " != " << expected;
        }
    }
    EXPECT_EQ(mismatches, 0);
    EXPECT_EQ(bits(run_activation_matmul(model, exec::Arithmetic::kInt, a, b, 1, false)), bits(y)) << "codes handed over";
    EXPECT_EQ(bits(run_activation_matmul(model, exec::Arithmetic::kInt, a, b, 2, false)), bits(y)) << "2 threads";
    for (auto isa : {kernels::isa::Isa::kPortable, kernels::isa::Isa::kAvx2, kernels::isa::Isa::kAvx512}) {
      const auto previous = kernels::isa::use(kernels::isa::Family::kInt8, isa);
      EXPECT_EQ(bits(run_activation_matmul(model, exec::Arithmetic::kInt, a, b, 1, false)), bits(y))
          << "path " << kernels::isa::name(kernels::isa::current(kernels::isa::Family::kInt8));
      kernels::isa::use(kernels::isa::Family::kInt8, previous);
    }
  }
}

// A NaN in either operand sends the run to the float path, whose floats the other operand's producer may have
// left unwritten (it published codes); with an unsigned 8-bit B too (its shift's row sums need A's bytes). So
// does a product shorter than 32 (K = 31).
TEST(IntegerPath, ActivationTimesActivationMatMulFallsBackToTheFloatPath) {
  std::vector<std::pair<std::string, std::string>> notes;
  std::mt19937 rng(31);
  {
    const ActivationMatMul shallow{{3, 7, 31}, {3, 31, 20}};
    const ir::Model model = build_activation_matmul(shallow);
    const Tensor a = random_floats(rng, shallow.a, -3.0f, 3.0f), b = random_floats(rng, shallow.b, -3.0f, 3.0f);
    const Tensor yi = run_activation_matmul(model, exec::Arithmetic::kInt, a, b, 1, false, &notes);
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_NE(notes[0].second.find("K >= 32"), std::string::npos) << notes[0].second;
    EXPECT_EQ(bits(yi), bits(run_activation_matmul(model, exec::Arithmetic::kFloat, a, b, 1, false)));
  }
  const Tensor a = random_floats(rng, {2, 5, 36}, -3.0f, 3.0f), b = random_floats(rng, {2, 36, 6}, -3.0f, 3.0f);
  for (const bool unsigned_b : {false, true})
    for (const bool nan_in_a : {true, false}) {
      const ActivationMatMul l{{2, 5, 36}, {2, 36, 6}, true, !unsigned_b};
      const ir::Model model = build_activation_matmul(l);
      SCOPED_TRACE(l.describe());
      SCOPED_TRACE(nan_in_a ? "NaN in A" : "NaN in B");
      Tensor an = a, bn = b;
      (nan_in_a ? an : bn).data<float>()[7] = std::nanf("");
      const Tensor yi = run_activation_matmul(model, exec::Arithmetic::kInt, an, bn, 1, false, &notes);
      ASSERT_EQ(notes.size(), 1u);
      EXPECT_NE(notes[0].second.find("byte codes in"), std::string::npos) << notes[0].second;
      const Tensor yf = run_activation_matmul(model, exec::Arithmetic::kFloat, an, bn, 1, false);
      EXPECT_EQ(bits(yi), bits(yf));
      expect_some_nans(yi);
    }
}

// A stride-1 ConvTranspose whose pads reach past its kernel's extent (a Conv would need negative pads) runs the
// float path: the float path's bits.
TEST(IntegerPath, StrideOneConvTransposeWithPadsPastTheKernelTakesTheFloatPath) {
  std::mt19937 rng(17);
  Layer l;
  l.op = "ConvTranspose", l.x = {1, 4, 7, 7}, l.w = {4, 3, 2, 2}, l.strides = {1, 1}, l.pads = {3, 0, 0, 2};
  const ir::Model model = build(l, rng);
  const Tensor x = random_floats(rng, l.x, -3.0f, 3.0f);
  std::vector<std::pair<std::string, std::string>> notes;
  const Tensor yi = run(model, exec::Arithmetic::kInt, x, 1, &notes);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].second.find("stride 1: as a Conv"), std::string::npos) << notes[0].second;
  EXPECT_EQ(yi.dims(), (Dims{1, 3, 5, 6}));
  EXPECT_EQ(bits(yi), bits(run(model, exec::Arithmetic::kFloat, x, 1)));
}

// A strided ConvTranspose whose pads reach past its phases' windows (the phase Conv would need negative pads)
// runs the float path: the float path's bits.
TEST(IntegerPath, StridedConvTransposeWithPadsPastThePhaseWindowTakesTheFloatPath) {
  std::mt19937 rng(19);
  Layer l;
  l.op = "ConvTranspose", l.x = {1, 4, 7, 7}, l.w = {4, 3, 3, 3}, l.strides = {2, 2}, l.pads = {4, 0, 0, 1};
  const ir::Model model = build(l, rng);
  const Tensor x = random_floats(rng, l.x, -3.0f, 3.0f);
  std::vector<std::pair<std::string, std::string>> notes;
  const Tensor yi = run(model, exec::Arithmetic::kInt, x, 1, &notes);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].second.find("4 phases of output channels interleaved"), std::string::npos) << notes[0].second;
  EXPECT_EQ(yi.dims(), (Dims{1, 3, 11, 14}));
  EXPECT_EQ(bits(yi), bits(run(model, exec::Arithmetic::kFloat, x, 1)));
}

// A NaN run of a stride-1 ConvTranspose whose plan holds W as codes only (nothing exposed): the float path on
// W rebuilt from the Conv's flipped rows, the original weights' bits.
TEST(IntegerPath, StrideOneConvTransposeFallsBackWithItsWeightsUnflipped) {
  std::mt19937 rng(23);
  Layer l;
  l.op = "ConvTranspose", l.x = {1, 6, 5, 5}, l.w = {6, 4, 3, 2}, l.strides = {1, 1}, l.group = 2, l.pads = {1, 0, 0, 1};
  const ir::Model model = build(l, rng);
  Tensor x = random_floats(rng, l.x, -3.0f, 3.0f);
  x.data<float>()[11] = std::nanf("");
  const auto unexposed = [&](exec::Arithmetic arithmetic) {
    auto ex = exec::Executor::create(model, arithmetic);
    EXPECT_TRUE(ex.is_ok()) << ex.status().to_string();
    auto r = ex->run({{"x", x}});
    EXPECT_TRUE(r.is_ok()) << r.status().to_string();
    return r->outputs[0];
  };
  const Tensor yi = unexposed(exec::Arithmetic::kInt), yf = unexposed(exec::Arithmetic::kFloat);
  EXPECT_EQ(bits(yi), bits(yf));
  expect_some_nans(yi);
}

// An empty batch (or no rows) on the integer path: an empty output of the right shape, as on the float path.
TEST(IntegerPath, EmptyBatchesGiveEmptyOutputs) {
  std::mt19937 rng(11);
  std::vector<Layer> layers;
  Layer conv;
  conv.x = {0, 4, 6, 6}, conv.w = {5, 4, 3, 3}, conv.pads = {1, 1, 1, 1};
  layers.push_back(conv);
  Layer pointwise = conv;
  pointwise.w = {5, 4, 1, 1}, pointwise.pads = {};
  layers.push_back(pointwise);
  Layer depthwise = conv;
  depthwise.w = {4, 1, 3, 3}, depthwise.group = 4;
  layers.push_back(depthwise);
  Layer transposed;
  transposed.op = "ConvTranspose", transposed.x = {0, 4, 5, 5}, transposed.w = {4, 3, 2, 2}, transposed.strides = {2, 2};
  layers.push_back(transposed);
  Layer matmul;
  matmul.op = "MatMul", matmul.x = {0, 20}, matmul.w = {20, 7}, matmul.bias = false;
  layers.push_back(matmul);
  for (const Layer& l : layers) {
    SCOPED_TRACE(l.describe());
    const ir::Model model = build(l, rng);
    const Tensor x(DType::kFloat, l.x);
    std::vector<std::pair<std::string, std::string>> notes;
    const Tensor yi = run(model, exec::Arithmetic::kInt, x, 2, &notes);
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_EQ(notes[0].second.rfind("integer", 0), 0u) << notes[0].second;
    const Tensor yf = run(model, exec::Arithmetic::kFloat, x, 1);
    EXPECT_EQ(yi.dims(), yf.dims());
    EXPECT_EQ(yi.numel(), 0);
  }
}

TEST(IntegerPath, ANanInputTakesTheFloatPathWithTheOriginalWeights) {
  std::mt19937 rng(7);
  for (const std::string op : {"Conv", "depthwise Conv", "ConvTranspose", "stride-1 ConvTranspose", "MatMul", "Gemm"}) {
    Layer l;
    l.op = op == "depthwise Conv" ? "Conv" : op == "stride-1 ConvTranspose" ? "ConvTranspose" : op;
    if (op == "Conv") l.x = {1, 4, 6, 6}, l.w = {5, 4, 3, 3}, l.pads = {1, 1, 1, 1};
    else if (op == "depthwise Conv") l.x = {1, 4, 6, 6}, l.w = {4, 1, 3, 3}, l.group = 4, l.pads = {1, 1, 1, 1};
    else if (op == "ConvTranspose") l.x = {1, 4, 6, 6}, l.w = {4, 5, 3, 3}, l.strides = {2, 2};
    else if (op == "stride-1 ConvTranspose") l.x = {1, 4, 6, 6}, l.w = {4, 5, 3, 2}, l.strides = {1, 1}, l.group = 2, l.w[1] = 3;
    else l.x = {3, 20}, l.w = op == "Gemm" ? Dims{7, 20} : Dims{20, 7}, l.trans_b = op == "Gemm", l.bias = op == "Gemm";
    SCOPED_TRACE(l.describe());
    const ir::Model model = build(l, rng);
    Tensor x = random_floats(rng, l.x, -3.0f, 3.0f);
    x.data<float>()[5] = std::nanf("");
    std::vector<std::pair<std::string, std::string>> notes;
    const Tensor yi = run(model, exec::Arithmetic::kInt, x, 1, &notes);
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_EQ(notes[0].second.rfind("integer:", 0), 0u) << notes[0].second;  // the plan took the integer path
    const Tensor yf = run(model, exec::Arithmetic::kFloat, x, 1);
    EXPECT_EQ(bits(yi), bits(yf));
    expect_some_nans(yi);
  }
}

// Builds Quant(x) -> `between` -> Conv and returns the Conv's path note.
std::string conv_note_behind(const std::string& between, float act_scale) {
  io::ModelBuilder m(13);
  m.import("qonnx.custom_op.general", 1);
  m.input("x", DType::kFloat, {1, 3, 8, 8}).output("y", DType::kFloat);
  m.initializer("xs", f32({}, {act_scale})).initializer("z", f32({}, {0.0f})).initializer("b8", f32({}, {8.0f}));
  m.node("Quant", {"x", "xs", "z", "b8"}, {"xq"}, "qonnx.custom_op.general").attr("signed", int64_t{1});
  std::string in = "xq";
  if (between == "Relu+MaxPool+Identity") {
    m.node("Relu", {"xq"}, {"r"});
    m.node("MaxPool", {"r"}, {"p"}).attr("kernel_shape", std::vector<int64_t>{2, 2});
    m.node("Identity", {"p"}, {"i"});
    in = "i";
  } else if (between == "Relu") {
    m.node("Relu", {"xq"}, {"r"});
    in = "r";
  } else if (between == "Add") {
    m.initializer("one", f32({}, {0.5f}));
    m.node("Add", {"xq", "one"}, {"a"});
    in = "a";
  } else if (between == "Concat" || between == "Concat of two scales") {
    // xq next to a second quantizer's output (4-bit unsigned), along the rows.
    m.initializer("xs2", f32({}, {between == "Concat" ? act_scale : 2 * act_scale})).initializer("b4", f32({}, {4.0f}));
    m.node("Quant", {"x", "xs2", "z", "b4"}, {"xq2"}, "qonnx.custom_op.general").attr("signed", int64_t{0});
    m.node("Concat", {"xq", "xq2"}, {"c"}).attr("axis", int64_t{2});
    in = "c";
  } else if (between == "Resize nearest" || between == "Resize linear") {
    m.initializer("roi", Tensor(DType::kFloat, {0})).initializer("scales", f32({4}, {1, 1, 2, 2}));
    m.node("Resize", {"xq", "roi", "scales"}, {"up"}).attr("mode", std::string(between == "Resize nearest" ? "nearest" : "linear"));
    in = "up";
  } else if (between == "Slice") {
    m.initializer("starts", test::i64({1}, {2}));
    m.initializer("ends", test::i64({1}, {7}));
    m.initializer("axes", test::i64({1}, {3}));
    m.node("Slice", {"xq", "starts", "ends", "axes"}, {"s"});
    in = "s";
  }
  std::mt19937 rng(3);
  m.initializer("wf", random_floats(rng, {4, 3, 3, 3}, -1.0f, 1.0f)).initializer("ws", f32({}, {0.05f}));
  m.node("Quant", {"wf", "ws", "z", "b8"}, {"wq"}, "qonnx.custom_op.general").attr("signed", int64_t{1});
  m.node("Conv", {in, "wq"}, {"y"});
  const ir::Model model = m.build().value();
  auto ex = exec::Executor::create(model, exec::Arithmetic::kInt);
  EXPECT_TRUE(ex.is_ok()) << ex.status().to_string();
  const auto notes = ex->path_notes();
  EXPECT_EQ(notes.size(), 1u);
  auto run = ex->run({{"x", random_floats(rng, {1, 3, 8, 8}, -4.0f, 4.0f)}});
  EXPECT_TRUE(run.is_ok()) << run.status().to_string();
  return notes.empty() ? "" : notes[0].second;
}

TEST(IntegerPath, FormsPassThroughOpsThatKeepTheIntegersAndStopElsewhere) {
  EXPECT_EQ(conv_note_behind("", 0.1f).rfind("integer:", 0), 0u);
  EXPECT_EQ(conv_note_behind("Relu+MaxPool+Identity", 0.1f).rfind("integer:", 0), 0u);
  // Relu(v * s) is not max(v, 0) * s for a negative scale.
  EXPECT_EQ(conv_note_behind("Relu", -0.1f).rfind("float: X has no integer form", 0), 0u);
  EXPECT_EQ(conv_note_behind("Add", 0.1f).rfind("float: X has no integer form", 0), 0u);
  // Concat keeps one scale only when every input has it; Slice picks elements.
  EXPECT_EQ(conv_note_behind("Concat", 0.1f).rfind("integer: activations in [-128, 127]", 0), 0u);
  EXPECT_EQ(conv_note_behind("Concat of two scales", 0.1f).rfind("float: X has no integer form", 0), 0u);
  EXPECT_EQ(conv_note_behind("Slice", 0.1f).rfind("integer:", 0), 0u);
  // Nearest resizing copies elements; linear interpolation makes new values.
  EXPECT_EQ(conv_note_behind("Resize nearest", 0.1f).rfind("integer:", 0), 0u);
  EXPECT_EQ(conv_note_behind("Resize linear", 0.1f).rfind("float: X has no integer form", 0), 0u);
}

TEST(IntegerPath, AQdqConversionComputesTheSameBitsAsItsQonnxOriginal) {
  std::mt19937 rng(11);
  for (const std::string op : {"Conv", "MatMul", "Gemm"}) {
    Layer l;
    l.op = op;  // zero point 0: lower-quant spells a nonzero activation zero point in float ops (no integer form)
    if (op == "Conv") l.x = {1, 4, 7, 7}, l.w = {6, 4, 3, 3}, l.pads = {1, 1, 1, 1}, l.group = 2, l.w[1] = 2;
    else l.x = {2, 33}, l.w = op == "Gemm" ? Dims{9, 33} : Dims{33, 9}, l.trans_b = op == "Gemm", l.bias = op == "Gemm";
    SCOPED_TRACE(l.describe());
    ir::Model model = build(l, rng);
    const Tensor x = random_floats(rng, l.x, -3.0f, 3.0f);
    const Tensor y = run(model, exec::Arithmetic::kInt, x, 1);
    api::ConvertOptions o;
    o.target = "qdq";
    auto converted = api::convert(std::move(model), o);
    ASSERT_TRUE(converted.is_ok()) << converted.status().to_string();
    auto ex = exec::Executor::create(converted->model, exec::Arithmetic::kInt);
    ASSERT_TRUE(ex.is_ok()) << ex.status().to_string();
    const auto notes = ex->path_notes();
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_EQ(notes[0].second.rfind("integer:", 0), 0u) << notes[0].second;
    auto r = ex->run({{converted->model.graph().runtime_inputs()[0]->name(), x}});
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_EQ(bits(r->outputs[0]), bits(y));
  }
}

TEST(IntegerPath, ThePlanHoldsTheWeightsAsCodesNotFloats) {
  std::mt19937 rng(5);
  Layer l;
  l.op = "MatMul", l.x = {1, 512}, l.w = {512, 512}, l.bias = false;
  const ir::Model model = build(l, rng);
  const uint64_t before = memory_in_use();
  auto as_int = exec::Executor::create(model, exec::Arithmetic::kInt);
  ASSERT_TRUE(as_int.is_ok());
  const uint64_t with_int = memory_in_use() - before;
  auto as_float = exec::Executor::create(model, exec::Arithmetic::kFloat);
  ASSERT_TRUE(as_float.is_ok());
  const uint64_t with_float = memory_in_use() - before - with_int;
  const uint64_t float_weights = 512 * 512 * sizeof(float);
  EXPECT_GE(with_float, float_weights);      // the quantizer's float output, read by every run
  // No float copy: the codes live in the kernel's packing, counted against --max-memory like tensors: a byte
  // per weight, two where AVX2 without VNNI packs both nibbles, plus the column sums and tile padding.
  EXPECT_GE(with_int, float_weights / 4);
  EXPECT_LE(with_int, float_weights / 2 + 64 * 1024);
  EXPECT_EQ(bits(as_int->run({{"x", random_floats(rng, l.x, -1.0f, 1.0f)}})->outputs[0]).size(), 512u);
}

}  // namespace
}  // namespace qonnx
