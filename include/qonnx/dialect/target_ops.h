// The domains and op names of the ops qonnx-cc's targets emit, declared here as the QONNX ones are in
// qonnx_dialect.h, so kernels, schemas, passes and targets spell them one way.
#pragma once

namespace qonnx::dialect {

// nGraph-style Quantize / Dequantize (the ngraph target; encoding in include/qonnx/kernels/ngraph.h).
inline constexpr const char* kNGraphDomain = "qonnx_cc.ngraph";
inline constexpr int kNGraphDomainVersion = 1;
inline constexpr const char* kNGraphQuantize = "Quantize";
inline constexpr const char* kNGraphDequantize = "Dequantize";

// Ascend's TransQuantParamV2 (the ascend target; encoding in include/qonnx/kernels/ascend.h).
inline constexpr const char* kAscendDomain = "qonnx_cc.ascend";
inline constexpr int kAscendDomainVersion = 1;
inline constexpr const char* kTransQuantParamV2 = "TransQuantParamV2";
// QuantBatchMatMul lives in the default domain: Ascend's ONNX parser (ATC) maps
// "ai.onnx::<8..16>::QuantBatchMatMul" to its QuantBatchMatmulV3 operator.
inline constexpr const char* kQuantBatchMatMulDomain = "";
inline constexpr const char* kQuantBatchMatMul = "QuantBatchMatMul";

}  // namespace qonnx::dialect
