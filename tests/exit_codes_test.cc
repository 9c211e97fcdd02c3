// The CLI's exit-code table (tools/qonnx-cc/exit_codes.cc): every library error class maps to its
// documented number, and `--help` prints the documented table.
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "exit_codes.h"

namespace qonnx::cli {
namespace {

TEST(ExitCodes, EveryCodeMapsToItsDocumentedNumber) {
  const struct {
    Code code;
    int exit;
  } documented[] = {
      {Code::kOk, 0},          {Code::kFailed, 1},       {Code::kUsage, 2},       {Code::kCannotRead, 3},
      {Code::kCannotWrite, 4}, {Code::kInvalidModel, 5}, {Code::kUnsupported, 6}, {Code::kMismatch, 7},
  };
  std::set<int> seen;
  for (const auto& d : documented) {
    EXPECT_EQ(exit_code(d.code), d.exit) << code_name(d.code);
    seen.insert(exit_code(d.code));
  }
  EXPECT_EQ(seen.size(), std::size(documented)) << "two error classes share an exit code";
}

TEST(ExitCodes, HelpListsTheTable) {
  EXPECT_EQ(exit_code_help(),
            "Exit codes:\n"
            "  0  ok\n"
            "  1  failed (invalid parameter values, internal errors)\n"
            "  2  usage error\n"
            "  3  cannot read input\n"
            "  4  cannot write output\n"
            "  5  invalid model\n"
            "  6  unsupported op, type or pattern\n"
            "  7  numeric mismatch (--expect, --check)\n");
}

}  // namespace
}  // namespace qonnx::cli
