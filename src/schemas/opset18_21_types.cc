// The type widenings of opsets 18..21 (ONNX docs/Changelog.md), per formal parameter as the op's newest
// schema in ONNX 1.12 names it. Ops new in 18..21 have no library schema: nothing is checked for them.
#include "schemas/opset18_21_types.h"

#include <algorithm>
#include <initializer_list>
#include <vector>

namespace qonnx::schemas {
namespace {

struct Widening {
  const char* op;
  int64_t since;
  std::vector<const char*> formals;
  std::vector<DType> adds;
};

const std::vector<DType> kFloat8 = {DType::kFloat8E4M3FN, DType::kFloat8E4M3FNUZ, DType::kFloat8E5M2, DType::kFloat8E5M2FNUZ};
const std::vector<DType> kInt4 = {DType::kUInt4, DType::kInt4};
const std::vector<DType> kHalfFloats = {DType::kFloat16, DType::kBFloat16};
const std::vector<DType> kPlainTensorTypes = {DType::kFloat,  DType::kUInt8,   DType::kInt8,      DType::kUInt16,
                                              DType::kInt16,  DType::kInt32,   DType::kInt64,     DType::kString,
                                              DType::kBool,   DType::kFloat16, DType::kDouble,    DType::kUInt32,
                                              DType::kUInt64, DType::kComplex64, DType::kComplex128};

std::vector<DType> join(std::initializer_list<std::vector<DType>> sets) {
  std::vector<DType> out;
  for (const auto& s : sets) out.insert(out.end(), s.begin(), s.end());
  return out;
}

const std::vector<Widening>& widenings() {
  static const std::vector<Widening> rows = {
      {"Cast", 19, {"input", "output"}, kFloat8},
      {"Cast", 21, {"input", "output"}, kInt4},
      {"CastLike", 19, {"input", "target_type", "output"}, kFloat8},
      {"CastLike", 21, {"input", "target_type", "output"}, kInt4},
      {"Constant", 19, {"output"}, kFloat8},
      {"Constant", 21, {"output"}, kInt4},
      {"ConstantOfShape", 20, {"output"}, join({kFloat8, {DType::kBFloat16}})},
      {"ConstantOfShape", 21, {"output"}, kInt4},
      {"DequantizeLinear", 19, {"x", "x_zero_point"}, kFloat8},
      {"DequantizeLinear", 19, {"x_scale", "y"}, kHalfFloats},
      {"DequantizeLinear", 21, {"x", "x_zero_point"}, join({kInt4, {DType::kInt16, DType::kUInt16}})},
      {"QuantizeLinear", 19, {"x", "y_scale"}, kHalfFloats},
      {"QuantizeLinear", 19, {"y", "y_zero_point"}, kFloat8},
      {"QuantizeLinear", 21, {"y", "y_zero_point"}, join({kInt4, {DType::kInt16, DType::kUInt16}})},
      {"QLinearMatMul", 21, {"a", "a_zero_point", "b", "b_zero_point", "y", "y_zero_point"}, kFloat8},
      {"QLinearMatMul", 21, {"a_scale", "b_scale", "y_scale"}, kHalfFloats},
      {"Identity", 19, {"input", "output"}, kFloat8},
      {"Identity", 21, {"input", "output"}, kInt4},
      {"Reshape", 19, {"data", "reshaped"}, kFloat8},
      {"Reshape", 21, {"data", "reshaped"}, kInt4},
      {"Shape", 19, {"data"}, kFloat8},
      {"Shape", 21, {"data"}, kInt4},
      {"Size", 19, {"data"}, kFloat8},
      {"Size", 21, {"data"}, kInt4},
      {"Flatten", 21, {"input", "output"}, join({kFloat8, kInt4})},
      {"Squeeze", 21, {"data", "squeezed"}, join({kFloat8, kInt4})},
      {"Unsqueeze", 21, {"data", "expanded"}, join({kFloat8, kInt4})},
      {"Transpose", 21, {"data", "transposed"}, join({kFloat8, kInt4})},
      {"Pad", 21, {"data", "constant_value", "output"}, join({kFloat8, kInt4})},
      {"If", 19, {"outputs"}, kFloat8},
      {"If", 21, {"outputs"}, kInt4},
      {"Loop", 19, {"v_initial", "v_final_and_scan_outputs"}, kFloat8},
      {"Loop", 21, {"v_initial", "v_final_and_scan_outputs"}, kInt4},
      {"Scan", 19, {"initial_state_and_scan_inputs", "final_state_and_scan_outputs"}, kFloat8},
      {"Scan", 21, {"initial_state_and_scan_inputs", "final_state_and_scan_outputs"}, kInt4},
      {"Equal", 19, {"A", "B"}, {DType::kString}},
      {"IsInf", 20, {"X"}, join({kHalfFloats, kFloat8})},
      {"IsNaN", 20, {"X"}, join({{DType::kBFloat16}, kFloat8})},
      {"ReduceMax", 20, {"data", "reduced"}, {DType::kBool}},
      {"ReduceMin", 20, {"data", "reduced"}, {DType::kBool}},
      // OptionalHasElement/OptionalGetElement-18 also take a plain tensor (GetElement returns it).
      {"OptionalHasElement", 18, {"input"}, kPlainTensorTypes},
      {"OptionalGetElement", 18, {"input", "output"}, kPlainTensorTypes},
  };
  return rows;
}

}  // namespace

bool widened_type_allows(const std::string& op, int64_t version, const std::string& formal, DType dtype) {
  for (const Widening& w : widenings()) {
    if (op != w.op || version < w.since) continue;
    const bool names_formal = std::any_of(w.formals.begin(), w.formals.end(), [&](const char* f) { return formal == f; });
    if (names_formal && std::find(w.adds.begin(), w.adds.end(), dtype) != w.adds.end()) return true;
  }
  return false;
}

bool library_knows_type(DType dtype) { return static_cast<int>(dtype) >= 1 && static_cast<int>(dtype) <= static_cast<int>(DType::kBFloat16); }

}  // namespace qonnx::schemas
