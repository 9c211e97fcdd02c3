// The four float8 formats of ONNX opset 19, exactly as ONNX defines them (Cast, QuantizeLinear):
//   E4M3FN    bias 7,  no infinities, NaN = S.1111.111, max 448
//   E4M3FNUZ  bias 8,  no infinities, no negative zero, NaN = 0x80 only, max 240
//   E5M2      bias 15, IEEE-like: inf = S.11111.00, NaN = S.11111.{01,10,11}, max 57344
//   E5M2FNUZ  bias 16, no infinities, no negative zero, NaN = 0x80 only, max 57344
// Every format has subnormals. A tensor of these types holds one code byte per element.
#pragma once

#include <cstdint>

#include "qonnx/tensor.h"

namespace qonnx {

// The value of `code` in `format` (one of the four float8 DTypes). Exact: every code is a float32.
float float8_to_float(uint8_t code, DType format);

// `value` rounded to nearest, ties to even (subnormals included). NaN gives the format's NaN (with the
// input's sign where the format has a signed NaN). Finite values beyond the largest finite value and
// infinities become, with `saturate`, the largest finite value of that sign; without it, +-inf for
// E5M2 and NaN for the others. FNUZ formats give +0 for every value that rounds to zero.
uint8_t float_to_float8(float value, DType format, bool saturate);

// The largest finite value of the format.
float float8_max(DType format);

}  // namespace qonnx
