// The Quant kernel's own loops, for passes that need the integer codes of a constant quantizer (the
// semantics and the parameter reading are qonnx/quant's).
#pragma once

#include "qonnx/quant/params.h"
#include "qonnx/tensor.h"

namespace qonnx::kernels {

// Codes of Quant(x) with `p` (float32 holding integers), x broadcast with scale and zero point: the
// same numbers as quant::quant_code element by element. A shape error names input #1 or #2 of `in`.
Result<Tensor> quant_codes(const quant::NodeInputs& in, const Tensor& x, const quant::QuantParams& p);

}  // namespace qonnx::kernels
