// The Ascend target (SEMANTICS.md section 4): the TransQuantParamV2 word and how QuantBatchMatMul
// reads it, shared by the kernels, the ascend-quant-matmul pass and `qonnx-cc trans-quant-param`.
//
// ONNX encoding:
//   TransQuantParamV2(scale float32, [offset float32]) -> y uint64     domain dialect::kAscendDomain, version 1
//     round_mode int, default 0 (0 truncate to FP19, 1 round half to even)
//   QuantBatchMatMul(x1 int8, x2 int8, scale uint64|int64, [offset], [bias int32], [pertoken_scale]) -> y
//     in the default ONNX domain: Ascend's ONNX parser (ATC) maps "ai.onnx::<8..16>::QuantBatchMatMul"
//     to its QuantBatchMatmulV3 operator, so a model for ATC must import ai.onnx at opset 8..16.
//     dtype int, default 1 (0 float32, 1 float16, 2 int8, 3 int32, 27 bfloat16; ATC's default is 1)
//     transpose_x1, transpose_x2 int, default 0 (transpose the last two dims of that operand)
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "qonnx/support/status.h"

namespace qonnx::kernels::ascend {

// Bit layout of a word.
inline constexpr uint64_t kSignedFlagBit = uint64_t{1} << 46;  // int8 result is signed
inline constexpr int kOffsetShift = 37;                        // 9-bit two's complement offset, bits 37..45
inline constexpr uint32_t kFp19Mask = 0xFFFFE000u;             // sign, exponent, 10 mantissa bits

// FP19 (1 sign, 8 exponent, 10 mantissa bits) kept in float32 layout in the low 13 bits' place.
// Truncation: the 13 low mantissa bits dropped.
inline uint32_t fp19_truncate(uint32_t bits) { return bits & kFp19Mask; }
// Round half to even on the 13 dropped bits for normal values (a carry may reach the exponent, up
// to infinity); zero and subnormals become a zero of the same sign; inf/NaN are masked.
uint32_t fp19_round_half_even(uint32_t bits);

// The offset field's value: clamp(rne(offset), -256, 255). offset must be finite.
int32_t trans_quant_offset(float offset);

// One TransQuantParamV2 word. round_mode is 0 or 1; scale and offset must be finite (the kernel and
// the CLI check that first).
uint64_t encode_trans_quant_param(float scale, std::optional<float> offset, int round_mode);

// The words of TransQuantParamV2 for flat scale/offset lists: length 1 broadcasts, otherwise the
// lengths must agree. Errors: empty lists, mismatched lengths (kInvalidModel), non-finite values
// (kFailed), round_mode other than 0/1 (kInvalidModel). Warns once about subnormal scales.
Result<std::vector<uint64_t>> encode_trans_quant_params(const std::vector<float>& scale,
                                                        const std::optional<std::vector<float>>& offset,
                                                        int64_t round_mode);

struct TransQuantParam {
  float scale = 0.0f;    // the FP19 value of bits 0..31
  int32_t offset = 0;    // bits 37..45 as a 9-bit two's complement number
  bool is_signed = false;  // bit 46
};
TransQuantParam decode_trans_quant_param(uint64_t word);

}  // namespace qonnx::kernels::ascend
