// The arithmetic of quantized layers, a plan-wide choice (exec --arith, convert --check --arith, the
// Python package's arith=): docs/arithmetic.md.
#pragma once

#include <string_view>

namespace qonnx::exec {

// How Conv, MatMul and Gemm compute when both operands are known to hold integers times scales: kInt
// sums the integer products exactly and scales once; kFloat multiplies the float values with fused
// multiply-adds in a fixed order, as for any float operands.
enum class Arithmetic { kInt, kFloat };

// "int" or "float", the spelling of the CLI and the Python package; false for anything else.
inline bool parse_arithmetic(std::string_view text, Arithmetic* arithmetic) {
  if (text != "int" && text != "float") return false;
  *arithmetic = text == "int" ? Arithmetic::kInt : Arithmetic::kFloat;
  return true;
}

}  // namespace qonnx::exec
