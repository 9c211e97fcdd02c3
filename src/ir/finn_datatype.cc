#include "qonnx/ir/finn_datatype.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <regex>

#include <onnx/onnx_pb.h>

#include "qonnx/ir/model.h"

namespace qonnx::ir {

std::optional<IntegerRange> integer_datatype_range(const std::string& datatype) {
  if (datatype == "BINARY") return IntegerRange{0, 1, false};
  if (datatype == "BIPOLAR") return IntegerRange{-1, 1, true};
  if (datatype == "TERNARY") return IntegerRange{-1, 1, false};
  static const std::regex int_re("(U?)INT([0-9]+)");
  std::smatch m;
  if (!std::regex_match(datatype, m, int_re)) return std::nullopt;
  int bits = std::stoi(m[2]);
  if (bits < 1 || bits > 64) return std::nullopt;
  if (m[1] == "U") return IntegerRange{0, std::ldexp(1.0, bits) - 1, false};
  return IntegerRange{-std::ldexp(1.0, bits - 1), std::ldexp(1.0, bits - 1) - 1, false};
}

FinnDataType float32_datatype() { return FinnDataType{}; }

FinnDataType smallest_integer_datatype(double lo, double hi) {
  if (lo >= 0) {
    int bits = 1;
    while (bits < 64 && std::ldexp(1.0, bits) - 1 < hi) ++bits;
    return integer_datatype(bits, false);
  }
  int bits = 2;
  while (bits < 64 && (-std::ldexp(1.0, bits - 1) > lo || std::ldexp(1.0, bits - 1) - 1 < hi)) ++bits;
  return integer_datatype(bits, true);
}

FinnDataType integer_datatype(int bits, bool is_signed) {
  FinnDataType t;
  t.kind = FinnDataType::Kind::kInteger;
  t.bits = bits;
  t.is_signed = is_signed;
  t.name = bits == 1 && !is_signed ? "BINARY" : (is_signed ? "INT" : "UINT") + std::to_string(bits);
  return t;
}

FinnDataType scaled_int_datatype(int bits) {
  FinnDataType t;
  t.kind = FinnDataType::Kind::kScaledInt;
  t.bits = bits;
  t.name = "SCALEDINT<" + std::to_string(bits) + ">";
  return t;
}

std::optional<FinnDataType> parse_finn_datatype(const std::string& name) {
  using Kind = FinnDataType::Kind;
  FinnDataType t;
  if (name == "FLOAT32") return float32_datatype();
  if (name == "FLOAT16") return FinnDataType{Kind::kFloat16, name, 16, true};
  if (name == "BIPOLAR") return FinnDataType{Kind::kBipolar, name, 1, true};
  if (name == "TERNARY") return FinnDataType{Kind::kTernary, name, 2, true};
  if (name == "BINARY") return integer_datatype(1, false);
  std::smatch m;
  static const std::regex int_re("(U?)INT([0-9]{1,4})");
  if (std::regex_match(name, m, int_re)) {
    int bits = std::stoi(m[2]);
    if (bits < 1) return std::nullopt;
    return integer_datatype(bits, m[1].length() == 0);
  }
  static const std::regex scaled_re("SCALEDINT<\\s*([0-9]{1,4})\\s*>");
  if (std::regex_match(name, m, scaled_re)) return scaled_int_datatype(std::stoi(m[1]));
  static const std::regex fixed_re("FIXED<\\s*([0-9]{1,4})\\s*,\\s*([0-9]{1,4})\\s*>");
  if (std::regex_match(name, m, fixed_re)) {
    int bits = std::stoi(m[1]), intbits = std::stoi(m[2]);
    if (intbits >= bits) return std::nullopt;  // qonnx: intwidth < bitwidth
    FinnDataType fixed{Kind::kFixed, "FIXED<" + std::to_string(bits) + "," + std::to_string(intbits) + ">", bits, true};
    fixed.int_bits = intbits;
    return fixed;
  }
  static const std::regex float_re("FLOAT<\\s*([0-9]{1,3})\\s*,\\s*([0-9]{1,3})\\s*(,\\s*(-?[0-9]{1,4})\\s*)?>");
  if (std::regex_match(name, m, float_re)) {
    int e = std::stoi(m[1]), mant = std::stoi(m[2]);
    // The canonical name always carries the exponent bias (IEEE-style default 2^(e-1) - 1).
    long bias = m[4].matched && std::stol(m[4]) != 0 ? std::stol(m[4]) : (1L << (e > 0 ? e - 1 : 0)) - 1;
    FinnDataType minifloat{Kind::kArbFloat,
                           "FLOAT<" + std::to_string(e) + "," + std::to_string(mant) + "," + std::to_string(bias) + ">",
                           1 + e + mant, true};
    minifloat.exponent_bits = e;
    minifloat.mantissa_bits = mant;
    minifloat.exponent_bias = bias;
    return minifloat;
  }
  return std::nullopt;
}

namespace {

// IntType.allowed: in range and integral.
bool integer_allows(double v, int bits, bool is_signed) {
  const double lo = is_signed ? -std::ldexp(1.0, bits - 1) : 0.0;
  const double hi = is_signed ? std::ldexp(1.0, bits - 1) - 1 : std::ldexp(1.0, bits) - 1;
  return lo <= v && v <= hi && std::nearbyint(v) == v;
}

// ArbPrecFloatType.allowed: within +-max and no mantissa bit set below the format's precision at the
// value's exponent (fewer bits for the format's subnormals).
bool minifloat_allows(float value, int exponent_bits, int mantissa_bits, long bias) {
  const double max_exponent = std::ldexp(1.0, exponent_bits) - 1.0 - static_cast<double>(bias);
  const double max_value = (2.0 - std::ldexp(1.0, -mantissa_bits)) * std::pow(2.0, max_exponent);
  if (!(value <= max_value && value >= -max_value)) return false;
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  const int32_t exponent = static_cast<int32_t>((bits >> 23) & 0xFF);
  const uint32_t mantissa = (bits & 0x7FFFFF) | (exponent != 0 ? 0x800000u : 0u);
  const long normalized_bits = mantissa_bits + 1;
  const long subnormal_shift = std::clamp<long>((1 - bias) - (exponent - 127), 0, normalized_bits);
  const long dropped = 24 - (normalized_bits - subnormal_shift);
  const uint32_t dropped_mask = dropped <= 0 ? 0u : ((1u << dropped) - 1);
  return (mantissa & dropped_mask) == 0;
}

}  // namespace

bool FinnDataType::allows(float value) const {
  switch (kind) {
    case Kind::kFloat32:
    case Kind::kFloat16:
    case Kind::kScaledInt: return true;
    case Kind::kInteger: return integer_allows(value, bits, is_signed);
    case Kind::kBipolar: return value == -1.0f || value == 1.0f;
    case Kind::kTernary: return value == -1.0f || value == 0.0f || value == 1.0f;
    case Kind::kFixed: return integer_allows(static_cast<double>(value) * std::ldexp(1.0, bits - int_bits), bits, true);
    case Kind::kArbFloat: return minifloat_allows(value, exponent_bits, mantissa_bits, exponent_bias);
  }
  return true;
}

FinnDataType tensor_datatype(const Graph& graph, const Value* value) {
  if (!value) return float32_datatype();
  if (auto dt = parse_finn_datatype(graph.finn_datatype(value->name()))) return *dt;
  bool half = false;
  if (auto t = graph.type_of(value); t && t->dtype != DType::kUndefined) half = t->dtype == DType::kFloat16;
  else if (const Initializer* init = graph.initializer(value)) half = init->proto->data_type() == onnx::TensorProto::FLOAT16;
  return half ? FinnDataType{FinnDataType::Kind::kFloat16, "FLOAT16", 16, true} : float32_datatype();
}

}  // namespace qonnx::ir
