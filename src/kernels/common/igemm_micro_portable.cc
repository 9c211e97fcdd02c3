// The int8 GEMM tile in plain C++ (any CPU): 4 rows x 16 columns of int32 sums.
#include <cstdint>
#include <utility>

#include "kernels/common/igemm.h"

namespace qonnx::kernels::igemm_detail {
namespace {

struct Portable {
  static constexpr int kCols = 8;
  struct acc {
    int32_t v[kCols];
  };
  using wreg = const int8_t*;
  struct areg {
    int32_t e[4];  // four consecutive left values
  };
  static acc zero() { return acc{}; }
  static wreg load_w(const int8_t* p) { return p; }
  static areg broadcast(uint32_t four) {
    areg a;
    for (int e = 0; e < 4; ++e) a.e[e] = static_cast<int32_t>((four >> (8 * e)) & 0xffu);
    return a;
  }
  static acc madd(acc s, const areg& a, wreg w) {
    for (int j = 0; j < kCols; ++j)
      s.v[j] += a.e[0] * w[4 * j] + a.e[1] * w[4 * j + 1] + a.e[2] * w[4 * j + 2] + a.e[3] * w[4 * j + 3];
    return s;
  }
  static void store(int32_t* c, const acc& s, int cols) {
    for (int j = 0; j < cols; ++j) c[j] = s.v[j];
  }
};

#include "kernels/common/igemm_micro.h"

}  // namespace

const Int8MicroKernel& int8_micro_portable() {
  static const Int8MicroKernel k = make_int8_micro<Portable, 4, 2>("portable", std::make_integer_sequence<int, 4>());
  return k;
}

}  // namespace qonnx::kernels::igemm_detail
