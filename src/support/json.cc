#include "qonnx/support/json.h"

#include <cmath>

#include <fmt/format.h>

namespace qonnx {

std::string JsonWriter::escape(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) out += fmt::format("\\u{:04x}", c);
        else out.push_back(static_cast<char>(c));
    }
  }
  out += "\"";
  return out;
}

void JsonWriter::separator() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_ += ", ";
    first_.back() = false;
  }
}

JsonWriter& JsonWriter::begin_object() {
  separator();
  out_ += "{";
  first_.push_back(true);
  return *this;
}
JsonWriter& JsonWriter::end_object() {
  out_ += "}";
  first_.pop_back();
  return *this;
}
JsonWriter& JsonWriter::begin_array() {
  separator();
  out_ += "[";
  first_.push_back(true);
  return *this;
}
JsonWriter& JsonWriter::end_array() {
  out_ += "]";
  first_.pop_back();
  return *this;
}
JsonWriter& JsonWriter::key(const std::string& k) {
  separator();
  out_ += escape(k) + ": ";
  after_key_ = true;
  return *this;
}
JsonWriter& JsonWriter::value(const std::string& v) {
  separator();
  out_ += escape(v);
  return *this;
}
JsonWriter& JsonWriter::value(int64_t v) {
  separator();
  out_ += std::to_string(v);
  return *this;
}
JsonWriter& JsonWriter::value(double v) {
  separator();
  out_ += std::isfinite(v) ? fmt::format("{}", v) : "null";
  return *this;
}
JsonWriter& JsonWriter::value(bool v) {
  separator();
  out_ += v ? "true" : "false";
  return *this;
}
JsonWriter& JsonWriter::null() {
  separator();
  out_ += "null";
  return *this;
}

}  // namespace qonnx
