// The AVX2 + FMA loop of Softmax and LogSoftmax on float rows (softmax.cc), called only when
// isa::current(isa::Family::kFloat) is not kPortable (avx2 and fma present). Private to the kernels.
#pragma once

#include <cstdint>

namespace qonnx::kernels::avx2 {

// The largest of v[0 .. 8 * floor(n / 8)) and `max` (NaN never taken: each step is `x > m ? x : m`); the
// order of the steps can only change which of +0 and -0 is kept, which no caller's result depends on.
float row_max_run(const float* v, int64_t n, float max);
// For the first 8 * floor(n / 8) elements of v, t = v[j] - max and e = ort::mlas_exp_nonpositive(t),
// the same bits (its fused multiply-adds are single roundings either way); v[j] becomes e, or t when
// `keep_shifted`, and lanes[j % 8] += e in order of j. Returns how many elements it did.
int64_t softmax_exp_run(float* v, float max, int64_t n, bool keep_shifted, float* lanes);

}  // namespace qonnx::kernels::avx2
