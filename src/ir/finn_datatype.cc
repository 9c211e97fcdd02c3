#include "qonnx/ir/finn_datatype.h"

#include <cmath>
#include <regex>

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

}  // namespace qonnx::ir
