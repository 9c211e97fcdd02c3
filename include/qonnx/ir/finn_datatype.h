// qonnx's DataType names (finn_datatype annotations): the values integer types allow, and the
// properties qonnx's datatype inference and cost model read (bit width, integer / fixed / scaled int).
#pragma once

#include <optional>
#include <string>

namespace qonnx::ir {

class Graph;
class Value;

struct IntegerRange {
  double min;
  double max;
  bool excludes_zero;  // BIPOLAR: -1 and +1 only
};

// BINARY, BIPOLAR, TERNARY, INTk, UINTk (k in 1..64); nullopt for float/scaled/unknown types.
std::optional<IntegerRange> integer_datatype_range(const std::string& datatype);

// One qonnx DataType as its class hierarchy defines it (qonnx/core/datatype.py).
struct FinnDataType {
  enum class Kind { kFloat32, kFloat16, kArbFloat, kInteger, kBipolar, kTernary, kFixed, kScaledInt };
  Kind kind = Kind::kFloat32;
  std::string name = "FLOAT32";  // canonical: "INT2", "BINARY", "SCALEDINT<8>", "FIXED<8,4>", "FLOAT<4,3,7>", ...
  int bits = 32;
  bool is_signed = true;
  // IntType, BIPOLAR and TERNARY (not FIXED, not SCALEDINT).
  bool is_integer() const { return kind == Kind::kInteger || kind == Kind::kBipolar || kind == Kind::kTernary; }
  bool is_fixed_point() const { return kind == Kind::kFixed; }
  // Integer, fixed point or scaled integer: what qonnx's inference treats as "scaled int".
  bool is_scaled_int() const { return is_integer() || is_fixed_point() || kind == Kind::kScaledInt; }
  // qonnx tests `"FLOAT" in name` (FLOAT32, FLOAT16 and FLOAT<e,m,b>).
  bool is_float() const { return name.find("FLOAT") != std::string::npos; }
  // FIXED<bits,int_bits>: integer bits; FLOAT<e,m,bias>: exponent and mantissa bits and the bias.
  int int_bits = 0;
  int exponent_bits = 0, mantissa_bits = 0;
  long exponent_bias = 0;

  // qonnx's DataType.allowed(value) on a float32 element: integers in range, BIPOLAR/TERNARY sets,
  // FIXED on its grid, FLOAT<e,m,b> representable. Floats allow everything; SCALEDINT, which qonnx
  // leaves undefined, too.
  bool allows(float value) const;
};

// Parses a DataType name as qonnx resolves it; nullopt for a name qonnx rejects.
std::optional<FinnDataType> parse_finn_datatype(const std::string& name);
FinnDataType float32_datatype();
// INTk / UINTk, BINARY for an unsigned single bit.
FinnDataType integer_datatype(int bits, bool is_signed);
FinnDataType scaled_int_datatype(int bits);
// The smallest INTk / UINTk (BINARY for [0, 1]) holding [lo, hi]: unsigned when lo >= 0; k <= 64.
FinnDataType smallest_integer_datatype(double lo, double hi);

// qonnx's get_tensor_datatype: the finn_datatype annotation, else FLOAT16 for a float16 tensor, else
// FLOAT32.
FinnDataType tensor_datatype(const Graph& graph, const Value* value);

}  // namespace qonnx::ir
