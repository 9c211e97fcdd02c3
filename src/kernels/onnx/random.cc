// Bernoulli (opset 15): output[i] = 1 with probability input[i], else 0. With the `seed` attribute
// the draws are a fixed function of the seed (SplitMix64 seeded from the float's bits), so a run repeats bit for bit on every machine and thread count; without it
// every run seeds from std::random_device. The draws do not match numpy's or onnxruntime's, so the
// ONNX backend cases (numpy's random values) cannot be compared: tests check the distribution and the
// determinism instead.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <utility>

#include "kernels/common/attr_check.h"
#include "kernels/onnx/onnx_kernels.h"
#include "qonnx/exec/dtype_dispatch.h"

namespace qonnx::kernels {
namespace {

struct BernoulliAttrs {
  DType dtype = DType::kUndefined;  // kUndefined: the input's type
  bool seeded = false;
  uint64_t seed = 0;
};

Result<BernoulliAttrs> prepare_bernoulli(const ir::Node& node, int64_t) {
  BernoulliAttrs a;
  if (node.has_attr("dtype")) {
    QONNX_ASSIGN_OR_RETURN(const int64_t code, int_attr(node, "dtype", 0));
    const DType allowed[] = {DType::kFloat16, DType::kFloat, DType::kDouble, DType::kBFloat16, DType::kUInt8, DType::kUInt16,
                             DType::kUInt32,  DType::kUInt64, DType::kInt8,  DType::kInt16,   DType::kInt32, DType::kInt64,
                             DType::kBool};
    for (DType d : allowed)
      if (static_cast<int64_t>(d) == code) a.dtype = d;
    if (a.dtype == DType::kUndefined)
      return Status(Code::kInvalidModel, fmt::format("attribute 'dtype': {} is not a numeric or bool data type", code));
  }
  if (node.has_attr("seed")) {
    QONNX_ASSIGN_OR_RETURN(const float seed, float_attr(node, "seed", 0.0f));
    uint32_t bits = 0;
    std::memcpy(&bits, &seed, sizeof bits);
    a.seeded = true;
    a.seed = bits;
  }
  return a;
}

// SplitMix64: a fixed, portable sequence of 64-bit values from a 64-bit state.
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
};

Status bernoulli(exec::KernelContext& ctx, const BernoulliAttrs& a) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "input"));
  if (!dtype_is_float(x->dtype()))
    return ctx.input_error(Code::kInvalidModel, 0, "must hold probabilities (a float type), got {}", dtype_name(x->dtype()));
  uint64_t seed = a.seed;
  if (!a.seeded) {
    std::random_device device;
    seed = (uint64_t{device()} << 32) ^ device();
  }
  SplitMix64 gen{seed};
  Tensor draws(DType::kDouble, x->dims());
  for (int64_t i = 0; i < x->numel(); ++i) {
    const double p = exec::element_as_double(*x, i);
    if (!(p >= 0.0 && p <= 1.0))
      return ctx.input_error(Code::kInvalidModel, 0, "element {} is {}, not a probability in [0, 1]", i, p);
    draws.data<double>()[i] = gen.uniform() < p ? 1.0 : 0.0;
  }
  QONNX_ASSIGN_OR_RETURN(Tensor out, exec::cast_tensor(draws, a.dtype == DType::kUndefined ? x->dtype() : a.dtype));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_random_kernels(exec::KernelRegistry& r) {
  exec::Kernel k = exec::typed_kernel<BernoulliAttrs, prepare_bernoulli, bernoulli>();
  k.random = true;  // a new draw per run without a seed: not folded at plan time
  r.add("", "Bernoulli", {15, exec::kNoUpperVersion}, k);
}

}  // namespace qonnx::kernels
