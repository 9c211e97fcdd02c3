// Shared pieces of the elementwise kernel families: integer wrap-around and Cast-like conversion,
// type sets with clear errors, numpy broadcasting of several inputs, and the loops that apply a
// scalar function.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/common/compute_type.h"
#include "kernels/isa/isa.h"
#include "qonnx/exec/broadcast.h"
#include "qonnx/exec/dtype_dispatch.h"
#include "qonnx/exec/kernel.h"
#include "qonnx/exec/threads.h"

namespace qonnx::kernels {

template <typename T>
inline constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// Unsigned type in which integer arithmetic on T wraps instead of overflowing (no promotion to int).
template <typename T>
using Wrap = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;

// A double converted to storage type T with Cast semantics: integers truncate and saturate, NaN -> 0.
template <typename T>
T from_double(double v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else if constexpr (kIsInt<T>) {
    if (std::isnan(v)) return T(0);
    if (v <= static_cast<double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
    if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  } else {
    return store<T>(static_cast<Compute<T>>(v));
  }
}

// Sets of element types an op accepts.
enum TypeSet : unsigned {
  kFloats = 1,
  kSignedInts = 2,
  kUnsignedInts = 4,
  kBool = 8,
  kInts = kSignedInts | kUnsignedInts,
  kNumeric = kFloats | kInts,
  kAllNumericAndBool = kNumeric | kBool,
};

template <typename T>
constexpr bool in_type_set(unsigned set) {
  if constexpr (is_float_storage_v<T>) return (set & kFloats) != 0;
  else if constexpr (std::is_same_v<T, bool>) return (set & kBool) != 0;
  else if constexpr (std::is_signed_v<T>) return (set & kSignedInts) != 0;
  else return (set & kUnsignedInts) != 0;
}

// Error for input #i whose type the op does not handle.
Status unsupported_type(const exec::KernelContext& ctx, size_t i, DType dtype);

// Calls f(T{}) with the storage type of `dtype` when it is in Set; otherwise an error about input #i.
template <unsigned Set, typename F>
Status visit_types(const exec::KernelContext& ctx, size_t i, DType dtype, F&& f) {
  bool called = false;
  exec::visit_dtype(dtype, [&](auto tag) {
    if constexpr (in_type_set<decltype(tag)>(Set)) {
      called = true;
      f(tag);
    }
  });
  return called ? Status::ok() : unsupported_type(ctx, i, dtype);
}

// Input #j must have the dtype of input #i.
Status require_same_dtype(const exec::KernelContext& ctx, size_t i, size_t j);

// numpy broadcast of the dims of inputs[0], inputs[1], ... (inputs[k] is input #k, possibly a
// reshaped view); the error names the input that does not fit, and refuses results too large to
// allocate (check_output_dims).
Result<Dims> elementwise_output_dims(const exec::KernelContext& ctx, const std::vector<const Tensor*>& inputs);

// Before opset 7, binary ops broadcast B onto A only with attribute broadcast=1, B's dims matching
// A's starting at attribute `axis` (default: trailing, as numpy). Parsed once per node.
struct LegacyBroadcast {
  bool at_axis = false;  // broadcast=1 and an axis given
  int64_t axis = 0;
};
Result<LegacyBroadcast> prepare_legacy_broadcast(const ir::Node& node, int64_t version);
// B reshaped so that numpy broadcasting gives the legacy result (a view); B itself without an axis
// (and from opset 7, where `lb` is the default).
Result<Tensor> legacy_broadcast_operand(const exec::KernelContext& ctx, const LegacyBroadcast& lb, const Tensor& a,
                                        const Tensor& b);

// Registers a binary op: versions 1..6 with their broadcast/axis attributes parsed once per node,
// from 7 (numpy broadcasting, no attributes) as a kernel without state.
template <Status (*Fn)(exec::KernelContext&, const LegacyBroadcast&)>
void add_binary_op(exec::KernelRegistry& r, const char* op) {
  r.add("", op, {1, 6}, exec::typed_kernel<LegacyBroadcast, prepare_legacy_broadcast, Fn>());
  r.add("", op, {7, exec::kNoUpperVersion}, +[](exec::KernelContext& ctx) { return Fn(ctx, LegacyBroadcast{}); });
}

// out[k] = f(x[k]); In and Out are storage types.
// Split between threads by element ranges; f is copied into each share so that its captures are
// locals the compiler can keep in registers (a loop it can vectorize).
template <typename In, typename Out, typename F>
void apply_unary(const Tensor& x, Tensor& out, F f) {
  const In* in = x.data<In>();
  Out* o = out.data<Out>();
  exec::parallel_for(x.numel(), 1, [in, o, f](int64_t k0, int64_t k1) {
    const F fn = f;
    for (int64_t k = k0; k < k1; ++k) o[k] = fn(in[k]);
  });
}

// out = f(a, b) elementwise over out's dims, which a and b broadcast to. An operand with as many
// elements as out is laid out like it (broadcasting only added 1s), and a single element is one
// value: those cases are flat loops split between threads; the rest walks the broadcast.
template <typename A, typename B, typename Out, typename F>
void apply_binary(const Tensor& a, const Tensor& b, Tensor& out, F f) {
  const A* x = a.data<A>();
  const B* y = b.data<B>();
  Out* z = out.data<Out>();
  const int64_t n = out.numel();
  const bool a_flat = a.numel() == n, b_flat = b.numel() == n;
  if (a_flat && (b_flat || b.numel() == 1)) {
    exec::parallel_for(n, 1, [x, y, z, f, b_flat](int64_t k0, int64_t k1) {
      const F fn = f;
      if (b_flat) {
        for (int64_t k = k0; k < k1; ++k) z[k] = fn(x[k], y[k]);
      } else {
        const B y0 = y[0];
        for (int64_t k = k0; k < k1; ++k) z[k] = fn(x[k], y0);
      }
    });
  } else if (b_flat && a.numel() == 1) {
    exec::parallel_for(n, 1, [x, y, z, f](int64_t k0, int64_t k1) {
      const F fn = f;
      const A x0 = x[0];
      for (int64_t k = k0; k < k1; ++k) z[k] = fn(x0, y[k]);
    });
  } else {
    exec::for_each_broadcast<2>(out.dims(), {&a.dims(), &b.dims()},
                                [&](int64_t o, const auto& off) { z[o] = f(x[off[0]], y[off[1]]); });
  }
}

// Y = f(X) in X's dtype for the types in Set; f is called with Compute<T> values.
template <unsigned Set, typename F>
Status unary_kernel(exec::KernelContext& ctx, F&& f) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "X"));
  Tensor out = ctx.output_buffer(x->dtype(), x->dims(), {0});
  QONNX_RETURN_IF_ERROR(visit_types<Set>(ctx, 0, x->dtype(), [&](auto tag) {
    using T = decltype(tag);
    apply_unary<T, T>(*x, out, [f](T v) { return store<T>(f(load(v))); });
  }));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

// Whether for_each_with_fma runs a loop compiled for FMA (the float kernels' AVX2 level, which has it).
inline bool fma_loops() {
#if QONNX_ISA_X86
  return isa::current(isa::Family::kFloat) != isa::Isa::kPortable;
#else
  return false;
#endif
}

// body(k) for k in [0, n), in a loop compiled for FMA when fma_loops(): body is inlined into it, and so
// are its std::fma calls (onnxruntime's approximations, ort_arithmetic.h), one instruction each instead
// of a call into the C library. fma rounds once either way and the build never fuses a * b + c
// (-ffp-contract=off): the same bits on both loops.
#if QONNX_ISA_X86
template <typename F>
__attribute__((target("avx2,fma"))) void fma_loop(int64_t n, const F& body) {
  for (int64_t k = 0; k < n; ++k) body(k);
}
#endif
template <typename F>
void for_each_with_fma(int64_t n, const F& body) {
#if QONNX_ISA_X86
  if (fma_loops()) return fma_loop(n, body);
#endif
  for (int64_t k = 0; k < n; ++k) body(k);
}

// unary_kernel for a function built on std::fma: on a CPU with FMA (the float kernels' AVX2 level) float
// tensors go through a loop compiled for it; elsewhere each std::fma is a call into the C library. fma
// rounds once either way and the build never fuses a * b + c (-ffp-contract=off): the same bits.
template <unsigned Set, typename F>
Status unary_kernel_fma(exec::KernelContext& ctx, F&& f) {
  const Tensor* x = ctx.input(0);
  if (x && x->dtype() == DType::kFloat && fma_loops()) {
    Tensor out = ctx.output_buffer(DType::kFloat, x->dims(), {0});
    const float* in = x->data<float>();
    float* o = out.data<float>();
    exec::parallel_for(x->numel(), 1, [in, o, &f](int64_t k0, int64_t k1) {
      for_each_with_fma(k1 - k0, [&](int64_t k) { o[k0 + k] = f(in[k0 + k]); });
    });
    ctx.set_output(0, std::move(out));
    return Status::ok();
  }
  return unary_kernel<Set>(ctx, std::forward<F>(f));
}

}  // namespace qonnx::kernels
