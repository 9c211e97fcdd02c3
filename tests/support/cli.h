// Runs the qonnx-cc binary and captures exit code, stdout and stderr.
#pragma once

#include <string>

namespace qonnx::test {

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// `args` is appended to the binary path as-is (shell syntax).
CliResult run_cli(const std::string& args);

}  // namespace qonnx::test
