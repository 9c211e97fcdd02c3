// Quant / IntQuant and BipolarQuant (SEMANTICS.md section 1).
#include <atomic>

#include "kernels/common/integer_form.h"
#include "kernels/common/transpose.h"
#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/kernels/quant.h"

#include "qonnx/exec/broadcast.h"
#include "qonnx/exec/threads.h"
#include "kernels/common/attr_check.h"
#include "kernels/common/fast_math.h"
#include "kernels/qonnx/fast_kernels.h"
#include "qonnx/quant/params.h"
#include "kernels/qonnx/qonnx_kernels.h"
#include "kernels/common/quant_avx2.h"
#include "kernels/isa/isa.h"

namespace qonnx::kernels {

namespace {

// Quant over one run with the scale and zero point constant along it (per-tensor and per-channel
// layouts). kCodes: write the integer codes instead of the dequantized values.
template <quant::RoundingMode M, bool kBipolar, bool kCodes>
void quant_run_scalar(const float* x, float s, float z, float lo, float hi, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    float t = x[i] / s + z;
    float q;
    if constexpr (kBipolar) {
      q = t >= 0.0f ? 1.0f : -1.0f;
    } else {
      t = t > hi ? hi : t;
      t = t < lo ? lo : t;
      q = fast::round_mode<M>(t);
    }
    y[i] = kCodes ? q : (q - z) * s;
  }
}

// Same with the scale and zero point varying along the run (per-element layouts).
template <quant::RoundingMode M, bool kBipolar, bool kCodes>
void quant_run_array(const float* x, const float* s, const float* z, float lo, float hi, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    float t = x[i] / s[i] + z[i];
    float q;
    if constexpr (kBipolar) {
      q = t >= 0.0f ? 1.0f : -1.0f;
    } else {
      t = t > hi ? hi : t;
      t = t < lo ? lo : t;
      q = fast::round_mode<M>(t);
    }
    y[i] = kCodes ? q : (q - z[i]) * s[i];
  }
}

}  // namespace

// y = Quant(x) (or its codes) over the broadcast shape out_dims; the same numbers as quant_code()
// element by element, with the mode and layout dispatch outside the loops.
template <bool kCodes>
void quant_tensor(const Dims& out_dims, const Tensor& x, const quant::QuantParams& p, float* y) {
  const quant::IntRange range = quant::quant_int_range(p.bits, p.is_signed, p.narrow);
  const float* xs = x.data<float>();
  const float* ss = p.scale.data<float>();
  const float* zs = p.zeropt.data<float>();
  const bool simd = isa::current(isa::Family::kQuant) >= isa::Isa::kAvx2;
  auto body = [&](auto mode_c, auto bipolar_c) {
    constexpr quant::RoundingMode M = decltype(mode_c)::value;
    constexpr bool B = decltype(bipolar_c)::value;
    fast::parallel_for_each_run<3>(out_dims, {&x.dims(), &p.scale.dims(), &p.zeropt.dims()}, [&] {
      return [&, bx = fast::RunBuffer(), bs = fast::RunBuffer(),
              bz = fast::RunBuffer()](const fast::Run<3>& r) mutable {
        float* yo = y + r.out_offset;
        const bool vary = !(r.stride[0] == 1 && r.stride[1] == 0 && r.stride[2] == 0);
        const float* xo = vary ? fast::run_operand(xs, r.offset[0], r.stride[0], r.len, bx) : xs + r.offset[0];
        const float* so = vary ? fast::run_operand(ss, r.offset[1], r.stride[1], r.len, bs) : ss + r.offset[1];
        const float* zo = vary ? fast::run_operand(zs, r.offset[2], r.stride[2], r.len, bz) : zs + r.offset[2];
        const int64_t i = simd ? avx2::quant_run(M, B, kCodes, xo, so, zo, vary, range.min, range.max, yo, r.len) : 0;
        if (vary) quant_run_array<M, B, kCodes>(xo + i, so + i, zo + i, range.min, range.max, yo + i, r.len - i);
        else quant_run_scalar<M, B, kCodes>(xo + i, so[0], zo[0], range.min, range.max, yo + i, r.len - i);
      };
    });
  };
  if (p.bipolar()) {
    body(std::integral_constant<quant::RoundingMode, quant::RoundingMode::kRound>{}, std::true_type{});
  } else {
    fast::with_mode(p.mode, [&](auto mode_c) { body(mode_c, std::false_type{}); });
  }
}

void quant_into(const Dims& out_dims, const Tensor& x, const quant::QuantParams& p, float* y) {
  quant_tensor<false>(out_dims, x, p, y);
}

namespace {

Result<quant::QuantAttrs> prepare_quant(const ir::Node& node, int64_t) { return quant::read_quant_attrs(node); }

bool quant_with_codes(exec::KernelContext& ctx, const Tensor& x, const Dims& out_dims);

Status quant(exec::KernelContext& ctx, const quant::QuantAttrs& attrs) {
  quant::QuantParams p;
  Dims out_dims;
  {
    QONNX_ASSIGN_OR_RETURN(Tensor x, quant::float_input(ctx, 0, "X"));
    QONNX_ASSIGN_OR_RETURN(p, quant::read_quant_params(ctx, attrs));
    QONNX_ASSIGN_OR_RETURN(out_dims, exec::broadcast_input_dims(ctx, {{0, &x}, {1, &p.scale}, {2, &p.zeropt}}));
    if (ctx.input(0)->dtype() != DType::kFloat) {  // x is a converted copy
      Tensor y = Tensor::uninitialized(DType::kFloat, out_dims);
      quant_tensor<false>(out_dims, x, p, y.data<float>());
      ctx.set_output(0, std::move(y));
      return Status::ok();
    }
  }
  // A float X dying here lends its buffer: every run reads element i of x before writing element i.
  const Tensor& x = *ctx.input(0);
  if (ctx.prepacked() && ctx.output_codes_form() && quant_with_codes(ctx, x, out_dims)) return Status::ok();
  Tensor y = ctx.output_buffer(DType::kFloat, out_dims, {0});
  quant_tensor<false>(out_dims, x, p, y.data<float>());
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

// BipolarQuant: y = (x >= 0 ? +1 : -1) * scale, no division.
void bipolar_quant_into(const Dims& out_dims, const Tensor& x, const Tensor& scale, float* y) {
  const float* xs = x.data<float>();
  const float* ss = scale.data<float>();
  const bool simd = isa::current(isa::Family::kQuant) >= isa::Isa::kAvx2;
  fast::parallel_for_each_run<2>(out_dims, {&x.dims(), &scale.dims()}, [&] {
    return [&, bx = fast::RunBuffer(), bs = fast::RunBuffer()](const fast::Run<2>& r) mutable {
      float* yo = y + r.out_offset;
      const bool vary = !(r.stride[0] == 1 && r.stride[1] == 0);
      const float* xo = vary ? fast::run_operand(xs, r.offset[0], r.stride[0], r.len, bx) : xs + r.offset[0];
      const float* so = vary ? fast::run_operand(ss, r.offset[1], r.stride[1], r.len, bs) : ss + r.offset[1];
      const int64_t start = simd ? avx2::bipolar_quant_run(xo, so, vary, yo, r.len) : 0;
      if (vary) {
        for (int64_t i = start; i < r.len; ++i) yo[i] = (xo[i] >= 0.0f ? 1.0f : -1.0f) * so[i];
      } else {
        const float s = so[0];
        for (int64_t i = start; i < r.len; ++i) yo[i] = (xo[i] >= 0.0f ? 1.0f : -1.0f) * s;
      }
    };
  });
}

namespace {

Status bipolar_quant(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(Tensor x, quant::float_input(ctx, 0, "X"));
  QONNX_ASSIGN_OR_RETURN(Tensor scale, quant::scale_input(ctx, 1, "scale"));
  QONNX_ASSIGN_OR_RETURN(Dims out_dims, exec::broadcast_input_dims(ctx, {{0, &x}, {1, &scale}}));
  Tensor y = Tensor::uninitialized(DType::kFloat, out_dims);
  bipolar_quant_into(out_dims, x, scale, y.data<float>());
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

Result<Tensor> quant_codes(const quant::NodeInputs& in, const Tensor& x, const quant::QuantParams& p) {
  QONNX_ASSIGN_OR_RETURN(const Dims out_dims, exec::broadcast_input_dims(in.node(), {{0, &x}, {1, &p.scale}, {2, &p.zeropt}}));
  Tensor codes = Tensor::uninitialized(DType::kFloat, out_dims);
  quant_tensor<true>(out_dims, x, p, codes.data<float>());
  return codes;
}

namespace {

// Quant's output is (q - z) * s in float32 with q an integer code: an integer form when the scale,
// zero point and bit width are plan-time constants and the zero point is an integer.
std::vector<std::optional<exec::IntegerForm>> quant_forms(const exec::PrepackContext& c) {
  std::vector<std::optional<exec::IntegerForm>> out(1);
  if (!c.constant(1) || !c.constant(2) || !c.constant(3) || !c.prepared) return out;
  const quant::NodeInputs in(*c.node, c.constants);
  auto p = quant::read_quant_params(in, *static_cast<const quant::QuantAttrs*>(c.prepared));
  if (!p.is_ok()) return out;
  const quant::IntRange range = quant::quant_int_range(p.value().bits, p.value().is_signed, p.value().narrow);
  // A 1-bit signed Quant gives +-1 codes (SEMANTICS.md), whatever its narrow range says.
  const bool bipolar = p.value().bipolar();
  out[0] = scaled_integer_form(p.value().scale, p.value().zeropt, bipolar ? -1 : static_cast<int64_t>(range.min),
                               bipolar ? 1 : static_cast<int64_t>(range.max), known_input_rank(c, 0));
  return out;
}

// BipolarQuant: +-1 times its scale.
std::vector<std::optional<exec::IntegerForm>> bipolar_forms(const exec::PrepackContext& c) {
  std::vector<std::optional<exec::IntegerForm>> out(1);
  if (!c.constant(1)) return out;
  auto scale = quant::scale_input(quant::NodeInputs(*c.node, c.constants), 1, "scale");
  if (scale.is_ok()) out[0] = scaled_integer_form(scale.value(), Tensor(), -1, 1, known_input_rank(c, 0));
  return out;
}

// A per-tensor Quant (or BipolarQuant) after a layer: its kernel's run loops on each block of the layer's
// output (quant_tensor on a run whose scale and zero point do not vary).
class QuantEpilogue final : public SteppedEpilogue {
 public:
  QuantEpilogue(quant::RoundingMode mode, bool bipolar, float scale, float zero_point, quant::IntRange range)
      : mode_(mode), bipolar_(bipolar), scale_(scale), zero_point_(zero_point), range_(range) {}

  avx2::ElementwiseStep step() const override {
    avx2::ElementwiseStep s;
    s.kind = avx2::ElementwiseStep::Kind::kQuant;
    s.mode = mode_, s.bipolar = bipolar_, s.scale = scale_, s.zero_point = zero_point_, s.lo = range_.min, s.hi = range_.max;
    return s;
  }

  void apply(float* y, int64_t n) const override { run(y, y, n); }

  // Whether bytes() makes `form`'s activation bytes: the Quant's own form (avx2::own_quant_codes).
  bool makes_bytes_of(const ByteActivation& form) const {
    return avx2::own_quant_codes(step(), form.scale, static_cast<float>(form.lo), static_cast<float>(form.hi));
  }
  // y as run() makes it (y null: not written) and u = its activation bytes under the form makes_bytes_of
  // accepted; false when an element is NaN (its byte is then not that of a code).
  bool bytes(const float* x, float* y, uint8_t* u, int64_t n, const ByteActivation& form) const {
    const bool simd = isa::current(isa::Family::kQuant) >= isa::Isa::kAvx2;
    int bad = 0;
    const int64_t i = simd ? avx2::quant_bytes_run(mode_, x, scale_, zero_point_, range_.min, range_.max, y, u, &bad, n) : 0;
    bool ok = bad == 0;
    constexpr int64_t kPiece = 64;  // the rest (a few elements past the vector loops) without y: in pieces
    float piece[kPiece];
    for (int64_t j = i; j < n; j += kPiece) {
      const int64_t len = std::min(kPiece, n - j);
      float* out = y ? y + j : piece;
      run(x + j, out, len);
      ok = activation_bytes_serial(out, len, form, u + j) && ok;
    }
    return ok;
  }

  // y[i] = Quant(x[i]) for i < n (y may be x).
  void run(const float* x, float* y, int64_t n) const {
    const bool simd = isa::current(isa::Family::kQuant) >= isa::Isa::kAvx2;
    auto body = [&](auto mode_c, auto bipolar_c) {
      constexpr quant::RoundingMode M = decltype(mode_c)::value;
      constexpr bool B = decltype(bipolar_c)::value;
      const int64_t i = simd ? avx2::quant_run(M, B, false, x, &scale_, &zero_point_, false, range_.min, range_.max, y, n) : 0;
      quant_run_scalar<M, B, false>(x + i, scale_, zero_point_, range_.min, range_.max, y + i, n - i);
    };
    if (bipolar_) {
      body(std::integral_constant<quant::RoundingMode, quant::RoundingMode::kRound>{}, std::true_type{});
    } else {
      fast::with_mode(mode_, [&](auto mode_c) { body(mode_c, std::false_type{}); });
    }
  }

 private:
  quant::RoundingMode mode_;
  bool bipolar_;
  float scale_, zero_point_;
  quant::IntRange range_;
};

// One value that broadcasts against input 0 without changing its dims (layers' outputs have rank >= 1).
bool one_value_against_input(const Tensor& t, const exec::PrepackContext& c) {
  return t.numel() == 1 && static_cast<int64_t>(t.rank()) <= std::max<int64_t>(1, known_input_rank(c, 0));
}

std::shared_ptr<const exec::Epilogue> quant_epilogue(const exec::PrepackContext& c) {
  if (!c.constant(1) || !c.constant(2) || !c.constant(3) || !c.prepared) return nullptr;
  const auto& attrs = *static_cast<const quant::QuantAttrs*>(c.prepared);
  auto p = quant::read_quant_params(quant::NodeInputs(*c.node, c.constants), attrs);
  if (!p.is_ok() || !one_value_against_input(p.value().scale, c) || !one_value_against_input(p.value().zeropt, c))
    return nullptr;
  const quant::QuantParams& q = p.value();
  return std::make_shared<const QuantEpilogue>(q.mode, q.bipolar(), q.scale.data<float>()[0], q.zeropt.data<float>()[0],
                                               quant::quant_int_range(q.bits, q.is_signed, q.narrow));
}

// Plan-time: a per-tensor Quant (its epilogue form) can publish its output's byte codes for an integer layer.
exec::PreparedState prepack_quant(const exec::PrepackContext& c) {
  if (c.arithmetic != exec::Arithmetic::kInt) return nullptr;
  std::shared_ptr<const exec::Epilogue> quantizer = quant_epilogue(c);
  if (quantizer && c.writes_output_codes) *c.writes_output_codes = true;
  if (quantizer && c.writes_stored_codes) *c.writes_stored_codes = true;
  return quantizer;
}

// The run when the executor asks for the output's codes. In x's own order: runs of x split between threads.
// Channels-last (N, positions, C): by blocks of an image's positions,
// each block's bytes made channel by channel (channels-first, into a buffer in cache; the floats written when
// read) and then transposed into the block's rows of codes. A block's rows are one run of the output, so two
// threads never write into one cache line (slabs of channels did: at batch 1 each position's row was shared,
// and the transpose took 10 times as long on two threads as on one). false (nothing written) when the layout
// does not apply.
bool quant_with_codes(exec::KernelContext& ctx, const Tensor& x, const Dims& out_dims) {
  const std::optional<ByteActivation> form = byte_activation(ctx.output_codes_form());
  if (!form || x.dtype() != DType::kFloat || x.rank() < 2 || x.dims() != out_dims) return false;
  const auto& quantizer = *static_cast<const QuantEpilogue*>(ctx.prepacked());
  const bool own_form = quantizer.makes_bytes_of(*form);
  const int64_t n = x.numel(), batch = x.dim(0), channels = x.dim(1), positions = n / std::max<int64_t>(batch * channels, 1);
  const bool floats = ctx.output_floats_needed();
  Tensor y = ctx.output_buffer(DType::kFloat, out_dims, {0});  // unwritten when its floats are not read
  Tensor codes = Tensor::uninitialized(DType::kUInt8, {n});
  // Blocks of whole images, or of a multiple of 64 positions (a block's rows then end on a cache line) when
  // that leaves a thread idle; a block's bytes stay within kBufferBytes where 64 positions allow.
  constexpr int64_t kBufferBytes = 512 * 1024, kLine = 64, kChunk = 2048;
  const int64_t threads = exec::threads();
  const int64_t wanted = threads > 1 ? (4 * threads + batch - 1) / std::max<int64_t>(batch, 1) : 1;  // blocks per image
  int64_t block = wanted > 1 ? (positions + wanted - 1) / wanted : positions;
  block = std::min(block, std::max(kLine, kBufferBytes / std::max<int64_t>(channels, 1)));
  block = block >= positions ? positions : std::max(kLine, block / kLine * kLine);
  const int64_t blocks = (positions + block - 1) / std::max<int64_t>(block, 1), image = channels * positions;
  std::atomic<bool> made{true};
  // Elements [i0, i0 + count) of x (count <= kChunk) quantized into `bytes`, their floats into y when read.
  const auto quantize = [&](int64_t i0, int64_t count, uint8_t* bytes, float* buffer) {
    float* out = floats ? y.data<float>() + i0 : buffer;
    if (own_form) return quantizer.bytes(x.data<float>() + i0, floats ? out : nullptr, bytes, count, *form);
    quantizer.run(x.data<float>() + i0, out, count);
    return activation_bytes_serial(out, count, *form, bytes);
  };
  if (ctx.output_codes_layout() == exec::CodesLayout::kAsStored) {
    exec::parallel_for((n + kChunk - 1) / kChunk, kChunk, [&](int64_t c0, int64_t c1) {
      float buffer[kChunk];
      bool ok = true;
      for (int64_t c = c0; c < c1; ++c)
        ok = quantize(c * kChunk, std::min(kChunk, n - c * kChunk), codes.data<uint8_t>() + c * kChunk, buffer) && ok;
      if (!ok) made.store(false, std::memory_order_relaxed);
    });
  } else {
    exec::parallel_for(batch * blocks, block * channels, [&](int64_t u0, int64_t u1) {
      const auto planes = scratch<uint8_t>(channels * block);
      float buffer[kChunk];
      bool ok = true;
      for (int64_t u = u0; u < u1; ++u) {
        const int64_t b = u / blocks, p0 = u % blocks * block, len = std::min(block, positions - p0);
        // A whole image's planes are one run of x: quantized as one, not channel by channel.
        const int64_t runs = len == positions ? 1 : channels, run = len == positions ? image : len;
        for (int64_t r = 0; r < runs; ++r)
          for (int64_t e0 = 0; e0 < run; e0 += kChunk)
            ok = quantize(b * image + r * positions + p0 + e0, std::min(kChunk, run - e0), planes.get() + r * len + e0,
                          buffer) && ok;
        transpose_byte_rows(planes.get(), codes.data<uint8_t>() + b * image + p0 * channels, channels, len, 0, channels);
      }
      if (!ok) made.store(false, std::memory_order_relaxed);
    });
  }
  if (!made.load(std::memory_order_relaxed)) {  // codes not made (a NaN): the floats, all of them
    if (!floats) quantizer.run(x.data<float>(), y.data<float>(), n);
    ctx.set_output(0, std::move(y));
    return true;
  }
  ctx.set_output(0, std::move(y));
  ctx.set_output_codes(std::move(codes));
  return true;
}

// BipolarQuant's loop, as in bipolar_quant_into (it takes no zero point or range).
class BipolarEpilogue final : public SteppedEpilogue {
 public:
  explicit BipolarEpilogue(float scale) : scale_(scale) {}
  avx2::ElementwiseStep step() const override {
    avx2::ElementwiseStep s;
    s.kind = avx2::ElementwiseStep::Kind::kBipolarQuant;
    s.scale = scale_;
    return s;
  }
  void apply(float* y, int64_t n) const override {
    const bool simd = isa::current(isa::Family::kQuant) >= isa::Isa::kAvx2;
    const int64_t start = simd ? avx2::bipolar_quant_run(y, &scale_, false, y, n) : 0;
    for (int64_t i = start; i < n; ++i) y[i] = (y[i] >= 0.0f ? 1.0f : -1.0f) * scale_;
  }

 private:
  float scale_;
};

std::shared_ptr<const exec::Epilogue> bipolar_epilogue(const exec::PrepackContext& c) {
  if (!c.constant(1)) return nullptr;
  auto scale = quant::scale_input(quant::NodeInputs(*c.node, c.constants), 1, "scale");
  if (!scale.is_ok() || !one_value_against_input(scale.value(), c)) return nullptr;
  return std::make_shared<const BipolarEpilogue>(scale.value().data<float>()[0]);
}

}  // namespace

void register_quant_kernels(exec::KernelRegistry& r) {
  // One version of each in the QONNX domains (and, for the ops known there, in the default domain).
  constexpr exec::VersionRange kAll{1, exec::kNoUpperVersion};
  exec::Kernel quant_kernel = exec::typed_kernel<quant::QuantAttrs, prepare_quant, quant>();
  quant_kernel.integer_forms = quant_forms;
  quant_kernel.epilogue = quant_epilogue;
  quant_kernel.prepack = prepack_quant;
  add_general_op(r, dialect::kQuantOp, kAll, quant_kernel);
  add_general_op(r, dialect::kIntQuantOp, kAll, quant_kernel);
  exec::Kernel bipolar_kernel{bipolar_quant, nullptr, {}};
  bipolar_kernel.integer_forms = bipolar_forms;
  bipolar_kernel.epilogue = bipolar_epilogue;
  add_general_op(r, dialect::kBipolarQuantOp, kAll, bipolar_kernel);
}

}  // namespace qonnx::kernels
