// MatMul with numpy semantics (1-D promotion, batch broadcasting), and its integer forms
// MatMulInteger and QLinearMatMul.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "kernels/common/gemm_core.h"
#include "kernels/common/integer_form.h"
#include "kernels/onnx/onnx_kernels.h"
#include "kernels/onnx/quantize_util.h"
#include "qonnx/exec/broadcast.h"
#include "qonnx/exec/dtype_dispatch.h"
#include "qonnx/exec/threads.h"

namespace qonnx::kernels {
namespace {

// Shapes of one numpy matmul: an (m x k) by (k x n) product per output batch entry, with the
// matrix index of each operand for that entry.
struct MatMulPlan {
  int64_t m = 0, k = 0, n = 0;
  Dims out_dims;
  std::vector<int64_t> a_index, b_index;
};

Result<MatMulPlan> plan_matmul(const exec::KernelContext& ctx, const Dims& a_dims, const Dims& b_dims, size_t a_in,
                               size_t b_in) {
  if (a_dims.empty()) return ctx.input_error(Code::kInvalidModel, a_in, "matmul operands must have rank >= 1");
  if (b_dims.empty()) return ctx.input_error(Code::kInvalidModel, b_in, "matmul operands must have rank >= 1");
  Dims ad = a_dims, bd = b_dims;
  const bool a_vec = ad.size() == 1, b_vec = bd.size() == 1;
  if (a_vec) ad.insert(ad.begin(), 1);
  if (b_vec) bd.push_back(1);
  MatMulPlan p;
  p.m = ad[ad.size() - 2];
  p.k = ad.back();
  p.n = bd.back();
  if (bd[bd.size() - 2] != p.k)
    return ctx.input_error(Code::kInvalidModel, b_in, "inner dimension {} does not match {} ({} x {})",
                           bd[bd.size() - 2], p.k, dims_to_string(a_dims), dims_to_string(b_dims));
  Dims a_batch(ad.begin(), ad.end() - 2), b_batch(bd.begin(), bd.end() - 2), batch;
  if (!exec::broadcast_dims(a_batch, b_batch, &batch))
    return ctx.input_error(Code::kInvalidModel, b_in, "batch dims {} do not broadcast with {}",
                           dims_to_string(b_batch), dims_to_string(a_batch));
  p.out_dims = batch;
  if (!a_vec) p.out_dims.push_back(p.m);
  if (!b_vec) p.out_dims.push_back(p.n);
  if (checked_numel(p.out_dims) < 0)
    return ctx.error(Code::kInvalidModel, "matmul output {} is too large", dims_to_string(p.out_dims));
  exec::for_each_broadcast<2>(batch, {&a_batch, &b_batch}, [&](int64_t, const auto& off) {
    p.a_index.push_back(off[0]);
    p.b_index.push_back(off[1]);
  });
  return p;
}

// c = a x b for every batch entry. Floats accumulate in their own type; integers in a 64-bit
// unsigned accumulator, which wraps exactly like the narrower type would.
// float: every batch entry's column panels are shared out between threads together (gemm_core.h).
template <typename T>
void run_matmul(const MatMulPlan& p, const T* a, const T* b, T* c) {
  if constexpr (std::is_same_v<T, float>) {
    // One B for every batch entry and A's entries in order (a 2-D weight): one product of all rows, so
    // B is read once rather than once per entry. Each output is the same fused sum either way.
    bool one_b = true;
    for (size_t bi = 0; bi < p.a_index.size() && one_b; ++bi)
      one_b = p.b_index[bi] == p.b_index[0] && p.a_index[bi] == static_cast<int64_t>(bi);
    if (one_b && p.a_index.size() > 1) {
      const FloatRowMajorSource source(b + p.b_index[0] * p.k * p.n, p.n);
      FloatGemm g;
      g.m = p.m * static_cast<int64_t>(p.a_index.size()), g.n = p.n, g.k = p.k, g.a = a, g.lda = p.k;
      g.b = &source, g.c = c, g.ldc = p.n;
      float_gemm(g);
      return;
    }
    struct Item {
      FloatGemm gemm;
      FloatRowMajorSource source;
    };
    float_gemm_many(static_cast<int64_t>(p.a_index.size()), [&](int64_t bi) {
      Item item{FloatGemm(), FloatRowMajorSource(b + p.b_index[static_cast<size_t>(bi)] * p.k * p.n, p.n)};
      item.gemm.m = p.m, item.gemm.n = p.n, item.gemm.k = p.k;
      item.gemm.a = a + p.a_index[static_cast<size_t>(bi)] * p.m * p.k, item.gemm.lda = p.k;
      item.gemm.c = c + bi * p.m * p.n, item.gemm.ldc = p.n;
      return item;
    });
    return;
  }
  using Acc = std::conditional_t<std::is_floating_point_v<T>, T, uint64_t>;
  std::vector<Acc> acc;
  if constexpr (!std::is_same_v<Acc, T>) acc.resize(static_cast<size_t>(p.m * p.n));
  for (size_t bi = 0; bi < p.a_index.size(); ++bi) {
    const T* A = a + p.a_index[bi] * p.m * p.k;
    const T* B = b + p.b_index[bi] * p.k * p.n;
    T* C = c + static_cast<int64_t>(bi) * p.m * p.n;
    if constexpr (std::is_same_v<Acc, T>) {
      gemm_accumulate<T, T>(p.m, p.n, p.k, A, p.k, B, p.n, C, p.n);
    } else {
      std::fill(acc.begin(), acc.end(), Acc(0));
      gemm_accumulate<T, Acc>(p.m, p.n, p.k, A, p.k, B, p.n, acc.data(), p.n);
      for (size_t i = 0; i < acc.size(); ++i) C[i] = static_cast<T>(acc[i]);
    }
  }
}

// --- the integer path (docs/arithmetic.md): A and B hold integers times scales, the sums are exact.

// Two runtime operands (attention's Q K^T and P V), both quantizer outputs with one scale each: each
// product's B is made integers and packed at run time.
struct ActivationProduct {
  ByteActivation a, b;
  // B's integers v enter the int8 GEMM as v - b_shift: 0 when they fit int8, else b.lo + 128 (an unsigned 8-bit
  // B); the shift's share of the sum, b_shift times each row's sum of A's integers, is added back per row.
  int64_t b_shift = 0;
};
// Shorter products of two activations take the float path: packing B per product then costs more than the
// float product itself (K = 8 and 13: 1.3-2x the float path's time, docs/arithmetic.md).
constexpr int64_t kMinActivationDepth = 32;

// What the plan holds for an integer MatMul: the packed constant B, or the two operands' forms.
struct IntegerMatMul {
  std::optional<IntegerLayer> constant_b;
  ActivationProduct activations;
};

// Plan-time: B's integers packed when B is a 2-D constant whose scale is per tensor or per column and A's
// form has one scale and fits a byte; or both operands runtime activations (ActivationProduct).
exec::PreparedState prepack_matmul(const exec::PrepackContext& c) {
  if (c.arithmetic != exec::Arithmetic::kInt) return nullptr;
  const Tensor* b = c.constant(1);
  const exec::IntegerForm* bf = c.form(1);
  auto note = [&](std::string text) { return float_path(c, std::move(text)); };
  if (!c.form(0) && !bf) return nullptr;
  if (!b && bf) {
    const auto a_bytes = byte_activation(c.form(0)), b_bytes = byte_activation(bf);
    if (!a_bytes) return note("A has no integer form with one scale and at most 256 values including 0");
    if (!b_bytes) return note("B (not a constant) has no integer form with one scale and at most 256 values including 0");
    if (c.path_note)
      *c.path_note = fmt::format(
          "integer: activations in [{}, {}] x activations in [{}, {}], B packed per run, K >= {} (int32 sums, one rounding)",
          a_bytes->lo, a_bytes->hi, b_bytes->lo, b_bytes->hi, kMinActivationDepth);
    // Both operands' codes in (their own order); the output's floats only.
    if (c.takes_epilogue) *c.takes_epilogue = true;
    if (c.reads_input_codes) *c.reads_input_codes = true;
    if (c.input_codes_layout) *c.input_codes_layout = exec::CodesLayout::kAsStored;
    if (c.reads_input1_codes) *c.reads_input1_codes = true;
    IntegerMatMul state;
    state.activations = {*a_bytes, *b_bytes, b_bytes->lo >= -128 && b_bytes->hi <= 127 ? 0 : b_bytes->lo + 128};
    return std::make_shared<const IntegerMatMul>(std::move(state));
  }
  if (!b || !bf) return note("B is not a constant with an integer form (a quantizer's output)");
  if (b->rank() != 2 || !(bf->per_tensor() || bf->axis == 1)) return note("B is not 2-D with one scale per tensor or per column");
  const auto a = byte_activation(c.form(0));
  if (!a) return note("A has no integer form with one scale and at most 256 values including 0");
  std::vector<int8_t> values;
  if (!int8_values(*b, *bf, &values)) return note("B's integers do not fit int8");
  std::string why;
  auto layer = make_integer_layer(*a, values, 1, b->dim(0), b->dim(1), false, bf->scales, nullptr, &why);
  if (!layer) return note(why);
  if (c.path_note) *c.path_note = integer_path_note(*layer);
  if (c.captured_inputs) *c.captured_inputs |= uint64_t{1} << 1;  // B lives on as its codes
  if (c.takes_epilogue) *c.takes_epilogue = true;
  declare_stored_codes(c);
  IntegerMatMul state;
  state.constant_b = std::move(layer);
  return std::make_shared<const IntegerMatMul>(std::move(state));
}

// y = A x B on the integer path with both operands runtime activations: per product, B's integers (its byte
// codes as the producer made them, else its floats, each checked to be float32(v * s_b)) packed as int8
// weights of one scale, A's bytes times them summed exactly and rounded once as for a constant B
// (IntegerLayer::rows_product). A packed B serves every product in a row that reads it. false (nothing
// written but y's earlier products; the caller takes the float path) when an element of A or B is not what its
// form describes (a NaN), or K is so long that the sums could leave int32.
bool activation_product(exec::KernelContext& ctx, const ActivationProduct& p, const MatMulPlan& plan, const float* a,
                        const float* b, float* y) {
  const int64_t k = plan.k, n = plan.n, m = plan.m, products = static_cast<int64_t>(plan.a_index.size());
  const uint8_t* a_codes = ctx.input_codes() ? ctx.input_codes()->data<uint8_t>() : nullptr;
  const uint8_t* b_codes = ctx.input1_codes() ? ctx.input1_codes()->data<uint8_t>() : nullptr;
  // From B's floats: its integers v as bytes v - shift + 128 (a form over the 256 values around the shift,
  // B's own range inside), which pack as v - shift.
  const ByteActivation shifted{p.b.scale, p.b_shift - 128, p.b_shift + 127};
  // Every partial sum stays inside int32: the GEMM's, the columns' and the rows' offsets, each at most
  // K * 255 * 255 in size.
  if (3.0 * static_cast<double>(k) * 255.0 * 255.0 >= 2147483648.0 && p.b_shift != 0) return false;
  // Products shared out between threads (each packs the Bs of its own products); inside a share every step
  // runs on its thread.
  std::atomic<bool> failed{false};
  exec::parallel_for(products, m * k * n, [&](int64_t t0, int64_t t1) {
    const auto b_bytes = scratch<uint8_t>(b_codes ? 0 : k * n);
    const auto own_a_bytes = scratch<uint8_t>(p.b_shift != 0 && !a_codes ? m * k : 0);
    std::vector<int32_t> row_offset(static_cast<size_t>(p.b_shift != 0 ? m : 0));
    std::optional<IntegerLayer> layer;
    int64_t packed_index = -1;
    for (int64_t t = t0; t < t1 && !failed.load(std::memory_order_relaxed); ++t) {
      const int64_t b_index = plan.b_index[static_cast<size_t>(t)];
      if (b_index != packed_index) {
        const uint8_t* bytes = b_codes ? b_codes + b_index * k * n : b_bytes.get();
        std::string why;
        if (!b_codes && !activation_bytes(b + b_index * k * n, k * n, shifted, b_bytes.get())) {
          failed.store(true, std::memory_order_relaxed);
          return;
        }
        const int offset = static_cast<int>(b_codes ? p.b.lo - p.b_shift : -128);
        layer = runtime_weights_layer(p.a, Int8Weights::pack_offset_bytes(k, n, bytes, offset, p.a.max_byte()), p.b.scale, &why);
        if (!layer) {
          failed.store(true, std::memory_order_relaxed);
          return;
        }
        packed_index = b_index;
      }
      const int64_t a_at = plan.a_index[static_cast<size_t>(t)] * m * k;
      const uint8_t* a_bytes = a_codes ? a_codes + a_at : nullptr;
      if (p.b_shift != 0) {
        // The rows' sums of A's integers, from its bytes (made here when its producer published none).
        if (!a_bytes) {
          if (!activation_bytes(a + a_at, m * k, p.a, own_a_bytes.get())) {
            failed.store(true, std::memory_order_relaxed);
            return;
          }
          a_bytes = own_a_bytes.get();
        }
        for (int64_t i = 0; i < m; ++i) {
          const uint8_t* row = a_bytes + i * k;
          int32_t bytes = 0;  // at most K * 255 (K is bounded above): the loop vectorizes in int32
          for (int64_t e = 0; e < k; ++e) bytes += row[e];
          row_offset[static_cast<size_t>(i)] = static_cast<int32_t>(p.b_shift * (bytes + k * p.a.lo));
        }
      }
      if (!layer->rows_product(m, k, a + a_at, y + t * m * n, ctx.epilogue(), a_bytes, nullptr,
                               p.b_shift != 0 ? row_offset.data() : nullptr))
        failed.store(true, std::memory_order_relaxed);
    }
  });
  if (failed.load()) return false;
  ctx.epilogue_done();
  return true;
}

// An operand's floats from the byte codes its producer published in their place (a run that falls back to the
// float path): float32(v * s) with v = u + lo, the quantizer's own values.
Tensor floats_from_stored_codes(const Tensor& codes, const ByteActivation& form, const Dims& dims) {
  Tensor x = Tensor::uninitialized(DType::kFloat, dims);
  const uint8_t* u = codes.data<uint8_t>();
  float* out = x.data<float>();
  const int32_t lo = static_cast<int32_t>(form.lo);
  for (int64_t e = 0; e < x.numel(); ++e) out[e] = static_cast<float>(int32_t{u[e]} + lo) * form.scale;
  return x;
}

Status matmul(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* a, ctx.required(0, "A"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* b, ctx.required(1, "B"));
  if (a->dtype() != b->dtype())
    return ctx.input_error(Code::kInvalidModel, 1, "type {} differs from input #0's {}", dtype_name(b->dtype()),
                           dtype_name(a->dtype()));
  QONNX_ASSIGN_OR_RETURN(MatMulPlan plan, plan_matmul(ctx, a->dims(), b->dims(), 0, 1));
  const DType dt = a->dtype();
  Tensor a_from_codes, b_from_codes;
  const auto* integer = static_cast<const IntegerMatMul*>(ctx.prepacked());
  if (!integer || dt != DType::kFloat) {
  } else if (!integer->constant_b) {
    Tensor out = ctx.output_buffer(DType::kFloat, plan.out_dims);
    if (plan.k >= kMinActivationDepth && activation_product(ctx, integer->activations, plan, a->data<float>(), b->data<float>(), out.data<float>())) {
      ctx.set_output(0, std::move(out));
      return Status::ok();
    }
    // The float path, on floats the producers may have left unwritten where they published codes.
    if (ctx.input_codes()) {
      a_from_codes = floats_from_stored_codes(*ctx.input_codes(), integer->activations.a, a->dims());
      a = &a_from_codes;
    }
    if (ctx.input1_codes()) {
      b_from_codes = floats_from_stored_codes(*ctx.input1_codes(), integer->activations.b, b->dims());
      b = &b_from_codes;
    }
  } else if (const IntegerLayer* layer = &*integer->constant_b) {
    Tensor out = ctx.output_buffer(DType::kFloat, plan.out_dims);
    if (matrix_product_run(ctx, *layer, a->numel() / std::max<int64_t>(plan.k, 1), plan.k, a->data<float>(), out)) {
      ctx.set_output(0, std::move(out));
      return Status::ok();
    }
    if (!b->raw()) {  // the plan holds B as codes only (a streamed B comes with its values)
      b_from_codes = layer->float_weights(b->dims(), false);
      b = &b_from_codes;
    }
  }
  if (dt == DType::kFloat16 || dt == DType::kBFloat16) {
    QONNX_ASSIGN_OR_RETURN(Tensor af, exec::cast_tensor(*a, DType::kFloat));
    QONNX_ASSIGN_OR_RETURN(Tensor bf, exec::cast_tensor(*b, DType::kFloat));
    Tensor out(DType::kFloat, plan.out_dims);
    run_matmul<float>(plan, af.data<float>(), bf.data<float>(), out.data<float>());
    QONNX_ASSIGN_OR_RETURN(Tensor y, exec::cast_tensor(out, dt));
    ctx.set_output(0, std::move(y));
    return Status::ok();
  }
  Tensor out(dt, plan.out_dims);
  bool supported = false;
  exec::visit_dtype(dt, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
      run_matmul<T>(plan, a->data<T>(), b->data<T>(), out.data<T>());
      supported = true;
    }
  });
  if (!supported) return ctx.error(Code::kUnsupported, "MatMul on {} is not supported", dtype_name(dt));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

// A row-quantized operand: for `a` a 1-D zero point of length m means one value per row, which
// broadcasts against (m, k) only once it has shape (m, 1).
Dims per_row_dims(const Tensor& param, const Dims& operand, bool is_a) {
  if (is_a && param.rank() == 1 && operand.size() >= 2 && param.numel() == operand[operand.size() - 2] &&
      param.numel() != 1)
    return {param.numel(), 1};
  return param.dims();
}

// operand - zero_point as int32, the zero point broadcasting into the operand (scalar, per row of
// `a`, per column of `b`).
Result<Tensor> subtract_zero_point(const exec::KernelContext& ctx, size_t x_in, size_t zp_in, bool is_a) {
  const Tensor* x = ctx.input(x_in);
  const Tensor* zp = ctx.input(zp_in);
  if (x->dtype() != DType::kInt8 && x->dtype() != DType::kUInt8)
    return ctx.input_error(Code::kUnsupported, x_in, "type {} is not supported (int8 or uint8)",
                           dtype_name(x->dtype()));
  QONNX_ASSIGN_OR_RETURN(Tensor xi, exec::cast_tensor(*x, DType::kInt32));
  if (!zp) return xi;
  if (zp->dtype() != x->dtype())
    return ctx.input_error(Code::kInvalidModel, zp_in, "zero point type {} differs from the operand's {}",
                           dtype_name(zp->dtype()), dtype_name(x->dtype()));
  Dims zd = per_row_dims(*zp, x->dims(), is_a), joined;
  if (!exec::broadcast_dims(x->dims(), zd, &joined) || joined != x->dims())
    return ctx.input_error(Code::kInvalidModel, zp_in, "zero point shape {} does not fit operand shape {}",
                           dims_to_string(zp->dims()), dims_to_string(x->dims()));
  QONNX_ASSIGN_OR_RETURN(Tensor zpi, exec::cast_tensor(*zp, DType::kInt32));
  Tensor out(DType::kInt32, x->dims());
  const int32_t* xv = xi.data<int32_t>();
  const int32_t* zv = zpi.data<int32_t>();
  int32_t* ov = out.data<int32_t>();
  exec::for_each_broadcast<2>(x->dims(), {&x->dims(), &zd},
                              [&](int64_t o, const auto& off) { ov[o] = xv[off[0]] - zv[off[1]]; });
  return out;
}

// Integer product of the zero-point-corrected operands, in 64 bits (the caller narrows).
Result<std::vector<int64_t>> integer_product(const exec::KernelContext& ctx, const MatMulPlan& plan,
                                             size_t a_in, size_t a_zp, size_t b_in, size_t b_zp) {
  QONNX_ASSIGN_OR_RETURN(Tensor a, subtract_zero_point(ctx, a_in, a_zp, true));
  QONNX_ASSIGN_OR_RETURN(Tensor b, subtract_zero_point(ctx, b_in, b_zp, false));
  std::vector<int64_t> acc(static_cast<size_t>(checked_numel(plan.out_dims)), 0);
  for (size_t bi = 0; bi < plan.a_index.size(); ++bi)
    gemm_accumulate<int32_t, int64_t>(plan.m, plan.n, plan.k, a.data<int32_t>() + plan.a_index[bi] * plan.m * plan.k,
                                      plan.k, b.data<int32_t>() + plan.b_index[bi] * plan.k * plan.n, plan.n,
                                      acc.data() + static_cast<int64_t>(bi) * plan.m * plan.n, plan.n);
  return acc;
}

Status matmul_integer(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* a, ctx.required(0, "A"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* b, ctx.required(1, "B"));
  QONNX_ASSIGN_OR_RETURN(MatMulPlan plan, plan_matmul(ctx, a->dims(), b->dims(), 0, 1));
  QONNX_ASSIGN_OR_RETURN(std::vector<int64_t> acc, integer_product(ctx, plan, 0, 2, 1, 3));
  Tensor out(DType::kInt32, plan.out_dims);
  int32_t* o = out.data<int32_t>();
  // Accumulation in int32 may wrap (the spec allows it); keep the low 32 bits.
  for (size_t i = 0; i < acc.size(); ++i) o[i] = static_cast<int32_t>(static_cast<uint32_t>(acc[i]));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

// A scale of QLinearMatMul: one value, or one per row of `a` / column of `b`.
Result<std::vector<float>> qlinear_scale(const exec::KernelContext& ctx, size_t i, int64_t per_count) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* s, ctx.required(i, "scale"));
  if (s->dtype() != DType::kFloat)
    return ctx.input_error(Code::kInvalidModel, i, "scale must be float, got {}", dtype_name(s->dtype()));
  if (s->numel() != 1 && !(s->rank() == 1 && s->numel() == per_count))
    return ctx.input_error(Code::kInvalidModel, i, "scale shape {} is neither a scalar nor {} values",
                           dims_to_string(s->dims()), per_count);
  return std::vector<float>(s->data<float>(), s->data<float>() + s->numel());
}

Status qlinear_matmul(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* a, ctx.required(0, "a"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* b, ctx.required(3, "b"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* y_zp, ctx.required(7, "y_zero_point"));
  QONNX_ASSIGN_OR_RETURN(MatMulPlan plan, plan_matmul(ctx, a->dims(), b->dims(), 0, 3));
  QONNX_ASSIGN_OR_RETURN(std::vector<float> a_scale, qlinear_scale(ctx, 1, plan.m));
  QONNX_ASSIGN_OR_RETURN(std::vector<float> b_scale, qlinear_scale(ctx, 4, plan.n));
  QONNX_ASSIGN_OR_RETURN(std::vector<float> y_scale, qlinear_scale(ctx, 6, 1));
  if (!is_quantized_storage(y_zp->dtype()) || y_zp->numel() != 1)
    return ctx.input_error(Code::kInvalidModel, 7, "y_zero_point must be one int8 or uint8 value, got {} {}",
                           dtype_name(y_zp->dtype()), dims_to_string(y_zp->dims()));
  QONNX_ASSIGN_OR_RETURN(std::vector<int64_t> acc, integer_product(ctx, plan, 0, 2, 3, 5));
  const double zp = exec::element_as_double(*y_zp, 0);
  Tensor out(y_zp->dtype(), plan.out_dims);
  store_saturated(&out, [&](int64_t e) {
    const int64_t j = e % plan.n, i = (e / plan.n) % plan.m;
    // The reference scales the int32 product by a float32 multiplier in double precision.
    const float mult = a_scale[a_scale.size() == 1 ? 0 : i] * b_scale[b_scale.size() == 1 ? 0 : j] / y_scale[0];
    return std::nearbyint(static_cast<double>(acc[static_cast<size_t>(e)]) * static_cast<double>(mult)) + zp;
  });
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_matmul_kernels(exec::KernelRegistry& r) {
  // MatMul-9/13 and QLinearMatMul-21 only added types.
  exec::Kernel kernel{matmul, nullptr, {}};
  kernel.prepack = prepack_matmul;
  r.add("", "MatMul", {1, exec::kNoUpperVersion}, kernel);
  r.add("", "MatMulInteger", {10, exec::kNoUpperVersion}, matmul_integer);
  r.add("", "QLinearMatMul", {10, exec::kNoUpperVersion}, qlinear_matmul);
}

}  // namespace qonnx::kernels
