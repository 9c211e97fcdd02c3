// The Quant kernel's own loops, for passes that need the integer codes or the values of a constant
// quantizer (the semantics and the parameter reading are qonnx/quant's).
#pragma once

#include "qonnx/quant/params.h"
#include "qonnx/tensor.h"

namespace qonnx::kernels {

// Codes of Quant(x) with `p` (float32 holding integers), x broadcast with scale and zero point: the
// same numbers as quant::quant_code element by element. A shape error names input #1 or #2 of `in`.
Result<Tensor> quant_codes(const quant::NodeInputs& in, const Tensor& x, const quant::QuantParams& p);

// The Quant and BipolarQuant kernels' loops on a caller's buffer (y holds numel(out_dims) and may be x's
// own buffer): a pass computes a constant quantizer's output block by block with them, the kernels after
// reading and checking their inputs. x, p.scale, p.zeropt (BipolarQuant: scale) float32, broadcast to
// out_dims.
void quant_into(const Dims& out_dims, const Tensor& x, const quant::QuantParams& p, float* y);
void bipolar_quant_into(const Dims& out_dims, const Tensor& x, const Tensor& scale, float* y);

}  // namespace qonnx::kernels
