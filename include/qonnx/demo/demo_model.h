// The embedded demo: a 2-layer quantized MLP built with the project's own builder.
#pragma once

#include "qonnx/ir/model.h"
#include "qonnx/support/status.h"

namespace qonnx::demo {

// x[N,16] -> Quant(int8 act) -> MatMul(Quant int4 per-channel weights) + bias -> Relu
//   -> Quant(uint4 act) -> Trunc(8 -> 4 bits) -> MatMul(BipolarQuant weights) -> y[N,4]
Result<ir::Model> build_demo_model();

}  // namespace qonnx::demo
