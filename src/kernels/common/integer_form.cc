#include "kernels/common/integer_form.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "kernels/common/fast_math.h"
#include "kernels/common/quant_avx2.h"
#include "kernels/common/transpose.h"
#include "kernels/isa/isa.h"
#include "qonnx/exec/threads.h"

namespace qonnx::kernels {
namespace {

constexpr double kExactInteger = 16777216.0;  // 2^24: integers up to here are exact in float32

// The axis along which `t` (broadcast against rank `rank`) varies: -1 when it holds one value, -2 when
// it varies along several dims or its layout cannot be placed.
int varying_axis(const Tensor& t, int64_t rank) {
  if (t.numel() == 1) return -1;
  const int64_t r = static_cast<int64_t>(t.rank());
  if (rank < r) return -2;
  int axis = -1;
  for (int64_t d = 0; d < r; ++d) {
    if (t.dim(static_cast<size_t>(d)) == 1) continue;
    if (axis >= 0) return -2;
    axis = static_cast<int>(rank - r + d);
  }
  return axis;
}

}  // namespace

std::optional<exec::IntegerForm> scaled_integer_form(const Tensor& scale, const Tensor& zero_point, int64_t qmin,
                                                     int64_t qmax, int64_t rank) {
  if (!scale.defined() || scale.dtype() != DType::kFloat || scale.numel() < 1) return std::nullopt;
  if (std::max(std::abs(qmin), std::abs(qmax)) > kExactInteger) return std::nullopt;
  const int scale_axis = varying_axis(scale, rank);
  if (scale_axis == -2) return std::nullopt;
  exec::IntegerForm form;
  form.axis = scale_axis;
  const float* s = scale.data<float>();
  form.scales.assign(s, s + scale.numel());
  for (float v : form.scales)
    if (!std::isfinite(v) || v == 0.0f) return std::nullopt;
  double zmin = 0.0, zmax = 0.0;
  if (zero_point.defined()) {
    if (zero_point.dtype() != DType::kFloat || zero_point.numel() < 1) return std::nullopt;
    const int zero_axis = varying_axis(zero_point, rank);
    if (zero_axis == -2 || (zero_axis >= 0 && (zero_axis != scale_axis || zero_point.numel() != scale.numel())))
      return std::nullopt;
    const float* z = zero_point.data<float>();
    zmin = zmax = z[0];
    for (int64_t i = 0; i < zero_point.numel(); ++i) {
      if (z[i] != std::floor(z[i]) || std::abs(z[i]) > kExactInteger) return std::nullopt;
      zmin = std::min<double>(zmin, z[i]);
      zmax = std::max<double>(zmax, z[i]);
    }
  }
  form.lo = qmin - static_cast<int64_t>(zmax);
  form.hi = qmax - static_cast<int64_t>(zmin);
  return form;
}

int64_t known_input_rank(const exec::PrepackContext& context, size_t i) {
  if (const Tensor* t = context.constant(i)) return static_cast<int64_t>(t->rank());
  const auto& inputs = context.node->inputs();
  const ir::Value* v = i < inputs.size() ? inputs[i] : nullptr;
  if (!v || !v->graph()) return -1;
  auto type = v->graph()->type_of(v);
  return type && type->has_shape ? static_cast<int64_t>(type->dims.size()) : -1;
}

bool int8_values(const Tensor& x, const exec::IntegerForm& form, std::vector<int8_t>* values) {
  if (x.dtype() != DType::kFloat) return false;
  const int64_t n = x.numel();
  int64_t inner = 1, count = 1;  // element i has scale index (i / inner) % count
  if (!form.per_tensor()) {
    if (form.axis >= static_cast<int>(x.rank()) || x.dim(static_cast<size_t>(form.axis)) !=
                                                     static_cast<int64_t>(form.scales.size()))
      return false;
    for (size_t d = static_cast<size_t>(form.axis) + 1; d < x.rank(); ++d) inner *= x.dim(d);
    count = static_cast<int64_t>(form.scales.size());
  } else if (form.scales.size() != 1) {
    return false;
  }
  values->resize(static_cast<size_t>(n));
  const float* xs = x.data<float>();
  int8_t* out = values->data();
  // Runs of `inner` elements share a scale. x * (1 / s) rounds to the same v as x / s (activation_bytes);
  // the test is v * s == x, exactly. With one scale per element of the last axis (inner = 1), a run is a
  // row of `count` elements with their own scales.
  std::vector<float> inverses(form.scales.size());
  for (size_t j = 0; j < inverses.size(); ++j) inverses[j] = 1.0f / form.scales[j];
  const bool by_element = inner == 1 && count > 1;
  const int64_t run = by_element ? count : count == 1 ? std::max<int64_t>(n, 1) : inner;
  const bool simd = isa::current(isa::Family::kQuant) >= isa::Isa::kAvx2;
  for (int64_t i0 = 0; i0 < n; i0 += run) {
    const int64_t i1 = std::min(n, i0 + run);
    const size_t first = by_element ? 0 : static_cast<size_t>((i0 / inner) % count);
    const float* s = form.scales.data() + first;
    const float* inverse = inverses.data() + first;
    int bad = 0;
    const int64_t done = simd ? avx2::int8_values_run(xs + i0, s, inverse, by_element, out + i0, &bad, i1 - i0) : 0;
    for (int64_t i = i0 + done; i < i1; ++i) {
      const size_t j = by_element ? static_cast<size_t>(i - i0) : 0;
      float t = xs[i] * inverse[j];
      bad |= !(std::abs(t) < 256.0f);
      t = std::abs(t) < 256.0f ? t : 0.0f;
      const float v = fast::round_half_even_f(t);
      bad |= (v < -128.0f) | (v > 127.0f) | (v * s[j] != xs[i]);
      out[i] = static_cast<int8_t>(static_cast<int>(v));
    }
    if (bad) return false;
  }
  return true;
}

std::optional<ByteActivation> byte_activation(const exec::IntegerForm* form) {
  if (!form || !form->per_tensor() || form->scales.size() != 1) return std::nullopt;
  if (form->lo > 0 || form->hi < 0 || form->hi - form->lo > 255) return std::nullopt;
  ByteActivation a;
  a.scale = form->scales[0];
  a.lo = form->lo;
  a.hi = form->hi;
  return a;
}

bool activation_bytes_serial(const float* x, int64_t n, const ByteActivation& a, uint8_t* u) {
  // x * (1 / s) is within a few float steps of x / s, far closer than 1/2 to v for |v| <= 256, so it
  // rounds to the same v; the exact test is v * s == x.
  const float s = a.scale, inverse = 1.0f / a.scale, lo = static_cast<float>(a.lo), hi = static_cast<float>(a.hi);
  const bool simd = isa::current(isa::Family::kQuant) >= isa::Isa::kAvx2;
  int bad = 0;
  const int64_t start = simd ? avx2::activation_bytes_run(x, inverse, s, lo, hi, u, &bad, n) : 0;
  for (int64_t i = start; i < n; ++i) {
    // t is range-checked first (a NaN fails every compare); out of range it becomes 0, so the int
    // conversion below stays defined.
    float t = x[i] * inverse;
    bad |= !(t >= lo - 1.0f && t <= hi + 1.0f);
    t = t >= lo - 1.0f && t <= hi + 1.0f ? t : 0.0f;
    const float v = fast::round_half_even_f(t);
    bad |= (v < lo) | (v > hi) | (v * s != x[i]);
    u[i] = static_cast<uint8_t>(static_cast<int>(v - lo) & 0xff);
  }
  return bad == 0;
}

bool activation_bytes(const float* x, int64_t n, const ByteActivation& a, uint8_t* u) {
  constexpr int64_t kChunk = 4096;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<uint8_t> chunk_ok(static_cast<size_t>(chunks), 1);
  exec::parallel_for(chunks, kChunk, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c)
      chunk_ok[static_cast<size_t>(c)] = activation_bytes_serial(x + c * kChunk, std::min(n, (c + 1) * kChunk) - c * kChunk, a,
                                                                 u + c * kChunk);
  });
  return std::all_of(chunk_ok.begin(), chunk_ok.end(), [](uint8_t ok) { return ok != 0; });
}

const uint8_t* channels_last_bytes(const uint8_t* given, const float* x, int64_t batch, int64_t channels,
                                   int64_t positions, const ByteActivation& form, Scratch<uint8_t>& storage) {
  if (given) return given;
  const int64_t n = batch * channels * positions;
  const auto bytes = scratch<uint8_t>(n);
  if (!activation_bytes(x, n, form, bytes.get())) return nullptr;
  storage = scratch<uint8_t>(n);
  transpose_inner(bytes.get(), storage.get(), batch, channels, positions, 1);
  return storage.get();
}

Tensor IntegerLayer::float_weights(const Dims& dims, bool transposed) const {
  Tensor w = Tensor::uninitialized(DType::kFloat, dims);
  float* out = w.data<float>();
  const int64_t n = groups.empty() ? 0 : groups[0].n(), k = groups.empty() ? 0 : groups[0].k();
  // Rows of the identity times the packed weights give the weights' integers back.
  constexpr int64_t kRows = 64;
  std::vector<uint8_t> identity(static_cast<size_t>(kRows * k));
  std::vector<int32_t> rows(static_cast<size_t>(kRows * n));
  for (size_t g = 0; g < groups.size(); ++g) {
    float* block = out + static_cast<int64_t>(g) * k * n;
    for (int64_t p0 = 0; p0 < k; p0 += kRows) {
      const int64_t count = std::min(kRows, k - p0);
      std::fill(identity.begin(), identity.end(), uint8_t{0});
      for (int64_t i = 0; i < count; ++i) identity[static_cast<size_t>(i * k + p0 + i)] = 1;
      group_sums(g, count, identity.data(), k, rows.data());
      for (int64_t i = 0; i < count; ++i)
        for (int64_t j = 0; j < n; ++j) {
          const int64_t channel = static_cast<int64_t>(g) * n + j;
          const float v = static_cast<float>(rows[static_cast<size_t>(i * n + j)]) * weight_scale[static_cast<size_t>(channel)];
          block[transposed ? j * k + p0 + i : (p0 + i) * n + j] = v;
        }
    }
  }
  return w;
}

std::optional<IntegerLayer> make_integer_layer(const ByteActivation& x, const std::vector<int8_t>& values, int64_t groups,
                                               int64_t k, int64_t n, bool transposed,
                                               const std::vector<float>& weight_scales, const Tensor* bias,
                                               std::string* why) {
  IntegerLayer layer;
  layer.x = x;
  int max_abs = 0;  // in int: the loop vectorizes
  for (int8_t v : values) max_abs = std::max(max_abs, v < 0 ? -int{v} : int{v});
  layer.max_abs_weight = max_abs;
  // int8_gemm's int32 sums of bytes times weights.
  if (static_cast<double>(k) * x.max_byte() * static_cast<double>(layer.max_abs_weight) >= 2147483648.0) {
    *why = fmt::format("{} taps of {}-value activations times weights up to {} may overflow int32", k,
                       x.max_byte() + 1, layer.max_abs_weight);
    return std::nullopt;
  }
  const int64_t channels = groups * n;
  if (weight_scales.size() != 1 && static_cast<int64_t>(weight_scales.size()) != channels) {
    *why = "the weight scales are not one per output channel";
    return std::nullopt;
  }
  const int64_t block = k * n;
  const bool split = int8_path(x.max_byte(), static_cast<int>(layer.max_abs_weight)) == igemm_detail::Int8Path::kAvx2Madd16;
  for (int64_t g = 0; g < groups && !split; ++g)
    layer.groups.push_back(Int8Weights::pack(k, n, values.data() + g * block, transposed ? k : n, transposed,
                                             x.max_byte()));
  if (split) {
    std::vector<int8_t> low(values.size()), high(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      low[i] = static_cast<int8_t>(values[i] & 15);
      high[i] = static_cast<int8_t>(values[i] >> 4);  // arithmetic shift: values = 16 * high + low
    }
    for (int64_t g = 0; g < groups; ++g) {
      layer.groups.push_back(Int8Weights::pack(k, n, low.data() + g * block, transposed ? k : n, transposed, x.max_byte()));
      layer.high_groups.push_back(
          Int8Weights::pack(k, n, high.data() + g * block, transposed ? k : n, transposed, x.max_byte()));
    }
  }
  for (int64_t c = 0; c < channels; ++c) {
    const float ws = weight_scales[weight_scales.size() == 1 ? 0 : static_cast<size_t>(c)];
    layer.weight_scale.push_back(ws);
    layer.scale.push_back(static_cast<double>(x.scale) * static_cast<double>(ws));
    const size_t g = static_cast<size_t>(c / n), j = static_cast<size_t>(c % n);
    int64_t column_sum = layer.groups[g].column_sums()[j];
    if (!layer.high_groups.empty()) column_sum += 16 * int64_t{layer.high_groups[g].column_sums()[j]};
    layer.offset.push_back(static_cast<int32_t>(x.lo * column_sum));
  }
  if (bias) {
    if (bias->dtype() != DType::kFloat || bias->numel() != channels) {
      *why = "the bias is not one float per output channel";
      return std::nullopt;
    }
    for (int64_t c = 0; c < channels; ++c) layer.bias.push_back(bias->data<float>()[c]);
  }
  return layer;
}

std::optional<IntegerLayer> runtime_weights_layer(const ByteActivation& x, Int8Weights packed, float weight_scale,
                                                  std::string* why) {
  const int64_t k = packed.k(), n = packed.n();
  if (static_cast<double>(k) * x.max_byte() * packed.max_abs_weight() >= 2147483648.0) {
    *why = fmt::format("{} taps of {}-value activations times values up to {} may overflow int32", k, x.max_byte() + 1,
                       packed.max_abs_weight());
    return std::nullopt;
  }
  IntegerLayer layer;
  layer.x = x;
  layer.max_abs_weight = packed.max_abs_weight();
  layer.weight_scale.assign(static_cast<size_t>(n), weight_scale);
  layer.scale.assign(static_cast<size_t>(n), static_cast<double>(x.scale) * static_cast<double>(weight_scale));
  layer.offset.resize(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j)
    layer.offset[static_cast<size_t>(j)] = static_cast<int32_t>(x.lo * packed.column_sums()[static_cast<size_t>(j)]);
  layer.groups.push_back(std::move(packed));
  return layer;
}

namespace {

// c += 16 * high over m rows of n sums: the true sum fits int32 (make_integer_layer's bound), so its parts
// are combined modulo 2^32.
void add_high_sums(int64_t m, int64_t n, const int32_t* high, int32_t* c) {
  exec::parallel_for(m, n, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0 * n; i < i1 * n; ++i)
      c[i] = static_cast<int32_t>(static_cast<uint32_t>(c[i]) + 16u * static_cast<uint32_t>(high[i]));
  });
}

}  // namespace

void IntegerLayer::group_sums(size_t g, int64_t m, const uint8_t* a, int64_t lda, int32_t* c) const {
  const Int8Weights& w = groups[g];
  int8_gemm(m, w.k(), a, lda, w, c, w.n());
  if (high_groups.empty()) return;
  const auto high = scratch<int32_t>(m * w.n());
  int8_gemm(m, w.k(), a, lda, high_groups[g], high.get(), w.n());
  add_high_sums(m, w.n(), high.get(), c);
}

void IntegerLayer::group_sums(size_t g, int64_t m, const uint8_t* const* rows, const Int8Slices* slices, int32_t* c) const {
  const Int8Weights& w = groups[g];
  int8_gemm_rows(m, rows, slices, w.k(), w, c, w.n());
  if (high_groups.empty()) return;
  const auto high = scratch<int32_t>(m * w.n());
  int8_gemm_rows(m, rows, slices, w.k(), high_groups[g], high.get(), w.n());
  add_high_sums(m, w.n(), high.get(), c);
}

bool IntegerLayer::rows_product(int64_t rows, int64_t k, const float* a, float* y, const exec::Epilogue* epilogue,
                                const uint8_t* a_codes, OutputCodes* out, const int32_t* row_offset) const {
  const int64_t n = groups[0].n();
  auto bytes = scratch<uint8_t>(a_codes ? 0 : rows * k);
  if (!a_codes && !activation_bytes(a, rows * k, x, bytes.get())) return false;
  const uint8_t* left = a_codes ? a_codes : bytes.get();
  std::vector<avx2::ElementwiseStep> steps;
  const bool stepped = epilogue_steps(epilogue, &steps);
  const auto round = [&](int32_t* sums, int64_t i0, int64_t i1, OutputCodes* codes) {
    if (row_offset)
      for (int64_t i = i0; i < i1; ++i)
        for (int64_t j = 0; j < n; ++j) sums[(i - i0) * n + j] += row_offset[i];
    if (!outputs_through(sums, i1 - i0, n, 0, epilogue, stepped ? &steps : nullptr, y + i0 * n, n,
                         codes ? &codes->form : nullptr, codes ? codes->bytes + i0 * n : nullptr, n,
                         !codes || codes->floats))
      codes->made.store(false, std::memory_order_relaxed);
  };
  // Weights that stay in cache (a short k, few columns): blocks of rows, each block's sums rounded while
  // they are in cache, instead of all the sums written out and read back (twice the output's size in int32
  // traffic, as much as the product itself when k is a few dozen). Larger weights are read once per row
  // block of the GEMM's own: one product over all rows, then the rounding.
  constexpr int64_t kCachedWeightBytes = int64_t{512} << 10, kBlockSumBytes = int64_t{384} << 10;
  // Rows per block: a multiple of both tile heights (6 and 8), and at least four blocks per thread.
  const int64_t per_thread = ((rows + 4 * exec::threads() - 1) / (4 * exec::threads()) + 23) / 24 * 24;
  const int64_t block =
      std::clamp<int64_t>(std::min(kBlockSumBytes / (4 * std::max<int64_t>(n, 1)) / 24 * 24, per_thread), 24, 1536);
  const auto through = [&](OutputCodes* codes) {
    if (k * n <= kCachedWeightBytes && rows > block) {
      exec::parallel_for((rows + block - 1) / block, block * std::max<int64_t>(k, 1) * n, [&](int64_t b0, int64_t b1) {
        const auto sums = scratch<int32_t>(block * n);
        for (int64_t b = b0; b < b1; ++b) {
          const int64_t i0 = b * block, i1 = std::min(rows, i0 + block);
          group_sums(0, i1 - i0, left + i0 * k, k, sums.get());
          round(sums.get(), i0, i1, codes);
        }
      });
      return;
    }
    const auto sums = scratch<int32_t>(rows * n);
    group_sums(0, rows, left, k, sums.get());
    exec::parallel_for(rows, n, [&](int64_t i0, int64_t i1) { round(sums.get() + i0 * n, i0, i1, codes); });
  };
  through(out);
  if (out && !out->made.load(std::memory_order_relaxed) && !out->floats) through(nullptr);  // the floats, all of them
  return true;
}

bool matrix_product_run(exec::KernelContext& ctx, const IntegerLayer& layer, int64_t rows, int64_t k, const float* a,
                        Tensor& y) {
  const std::optional<ByteActivation> out_form = byte_activation(ctx.output_codes_form());
  Tensor codes = out_form ? Tensor::uninitialized(DType::kUInt8, {y.numel()}) : Tensor();
  OutputCodes out;
  if (out_form) out.form = *out_form, out.bytes = codes.data<uint8_t>(), out.floats = ctx.output_floats_needed();
  const uint8_t* given = ctx.input_codes() ? ctx.input_codes()->data<uint8_t>() : nullptr;
  if (!layer.rows_product(rows, k, a, y.data<float>(), ctx.epilogue(), given, out_form ? &out : nullptr)) return false;
  ctx.epilogue_done();
  if (out_form && out.made.load(std::memory_order_relaxed)) ctx.set_output_codes(std::move(codes));
  return true;
}

void declare_stored_codes(const exec::PrepackContext& c) {
  if (c.reads_input_codes) *c.reads_input_codes = true;
  if (c.input_codes_layout) *c.input_codes_layout = exec::CodesLayout::kAsStored;
  if (c.writes_stored_codes) *c.writes_stored_codes = true;
}

void IntegerLayer::outputs(const int32_t* byte_sums, int64_t count, int64_t channel0, float* y) const {
  const size_t c0 = static_cast<size_t>(channel0);
  const int64_t done = isa::current(isa::Family::kQuant) >= isa::Isa::kAvx2
                           ? avx2::scale_sums_run(byte_sums, offset.data() + c0, scale.data() + c0,
                                                  bias.empty() ? nullptr : bias.data() + c0, y, count)
                           : 0;
  for (int64_t j = done; j < count; ++j) y[j] = output(byte_sums[j], channel0 + j);
}

bool IntegerLayer::outputs_through(const int32_t* byte_sums, int64_t rows, int64_t count, int64_t channel0,
                                   const exec::Epilogue* epilogue, const std::vector<avx2::ElementwiseStep>* steps,
                                   float* y, int64_t y_ld, const ByteActivation* form, uint8_t* codes,
                                   int64_t codes_ld, bool floats) const {
  int64_t done = 0;
  int bad = 0;
  if (steps && isa::current(isa::Family::kQuant) >= isa::Isa::kAvx2) {
    const size_t c0 = static_cast<size_t>(channel0);
    avx2::CodeTarget target;
    if (codes) target = code_target(*form, codes);
    avx2::RequantizeRows r;
    r.sums = byte_sums, r.sums_ld = count, r.offset = offset.data() + c0, r.scale = scale.data() + c0;
    r.bias = bias.empty() ? nullptr : bias.data() + c0;
    r.steps = steps->data(), r.step_count = static_cast<int>(steps->size());
    r.y = y, r.y_ld = y_ld, r.codes = codes ? &target : nullptr, r.codes_ld = codes_ld, r.bad = &bad;
    r.rows = rows, r.n = count, r.floats = floats || !codes;
    done = avx2::requantize_run(r);
  }
  bool made = bad == 0;
  for (int64_t i = 0; i < rows && done < count; ++i) {  // the channels past the vectors, as separate loops
    float* row = y + i * y_ld + done;
    outputs(byte_sums + i * count + done, count - done, channel0 + done, row);
    if (epilogue) epilogue->apply(row, count - done);
    if (codes) made = activation_bytes_serial(row, count - done, *form, codes + i * codes_ld + done) && made;
  }
  return made;
}

bool epilogue_steps(const exec::Epilogue* epilogue, std::vector<avx2::ElementwiseStep>* steps) {
  steps->clear();
  if (!epilogue) return true;
  for (const exec::Epilogue* part : epilogue->parts()) {
    const auto* stepped = dynamic_cast<const SteppedEpilogue*>(part);
    if (!stepped) return false;
    steps->push_back(stepped->step());
  }
  return true;
}

exec::PreparedState float_path(const exec::PrepackContext& c, std::string why) {
  if (c.path_note) *c.path_note = "float: " + std::move(why);
  return nullptr;
}

std::string integer_path_note(const IntegerLayer& layer) {
  const char* path = layer.groups.empty() ? "" : layer.groups[0].path();
  return fmt::format("integer: activations in [{}, {}] x weights in [{}, {}], {}{} (int32 sums, one rounding)",
                     layer.x.lo, layer.x.hi, -layer.max_abs_weight, layer.max_abs_weight, path,
                     layer.high_groups.empty() ? "" : " on both weight nibbles");
}

}  // namespace qonnx::kernels
