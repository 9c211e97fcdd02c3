// The float GEMM tile in plain C++ (any CPU): 4 x 4 scalars, std::fma, so it rounds exactly like the
// vector tiles.
#include <cmath>
#include <utility>

#include "kernels/common/gemm_core.h"

namespace qonnx::kernels::gemm_detail {
namespace {

struct Scalar {
  using reg = float;
  static constexpr int kWidth = 1;
  static reg zero() { return 0.0f; }
  static reg load(const float* p) { return *p; }
  static reg load_n(const float* p, int n) { return n > 0 ? *p : 0.0f; }
  static void store(float* p, reg r) { *p = r; }
  static void store_n(float* p, reg r, int n) {
    if (n > 0) *p = r;
  }
  static reg broadcast(float x) { return x; }
  static reg fma(reg a, reg b, reg c) { return std::fma(a, b, c); }
};

#include "kernels/common/gemm_micro.h"

}  // namespace

const FloatMicroKernel& float_micro_portable() {
  static const FloatMicroKernel k = make_float_micro<Scalar, 4, 4>("portable", std::make_integer_sequence<int, 4>());
  return k;
}

}  // namespace qonnx::kernels::gemm_detail
