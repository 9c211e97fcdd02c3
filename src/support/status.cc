#include "qonnx/support/status.h"

#include <cstdio>
#include <cstdlib>

namespace qonnx {

void value_of_error(const Status& status) {
  std::fprintf(stderr, "qonnx-cc: internal error: the value of a failed Result was read: %s\n", status.to_string().c_str());
  std::abort();
}

const char* code_name(Code code) {
  switch (code) {
    case Code::kOk: return "ok";
    case Code::kFailed: return "failed";
    case Code::kUsage: return "usage error";
    case Code::kCannotRead: return "cannot read input";
    case Code::kCannotWrite: return "cannot write output";
    case Code::kInvalidModel: return "invalid model";
    case Code::kUnsupported: return "unsupported op, type or pattern";
    case Code::kMismatch: return "numeric mismatch";
  }
  return "unknown";
}

std::string Status::to_string() const {
  std::string out;
  for (const auto& item : context_) {
    out += item;
    out += ": ";
  }
  out += message_;
  return out;
}

}  // namespace qonnx
