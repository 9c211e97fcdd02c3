#include "exit_codes.h"

#include <fmt/format.h>

namespace qonnx::cli {
namespace {

struct ExitCodeRow {
  Code code;
  int exit;
  const char* meaning;
};

// Scripts and Makefiles depend on these numbers: never renumber.
constexpr ExitCodeRow kTable[] = {
    {Code::kOk, 0, "ok"},
    {Code::kFailed, 1, "failed (invalid parameter values, internal errors)"},
    {Code::kUsage, 2, "usage error"},
    {Code::kCannotRead, 3, "cannot read input"},
    {Code::kCannotWrite, 4, "cannot write output"},
    {Code::kInvalidModel, 5, "invalid model"},
    {Code::kUnsupported, 6, "unsupported op, type or pattern"},
    {Code::kMismatch, 7, "numeric mismatch (--expect, --check)"},
};

}  // namespace

int exit_code(Code code) {
  for (const ExitCodeRow& row : kTable)
    if (row.code == code) return row.exit;
  return 1;  // not reached: every Code has a row (tests/exit_codes_test.cc)
}

std::string exit_code_help() {
  std::string text = "Exit codes:\n";
  for (const ExitCodeRow& row : kTable) text += fmt::format("  {}  {}\n", row.exit, row.meaning);
  return text;
}

}  // namespace qonnx::cli
