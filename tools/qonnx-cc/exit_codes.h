// The CLI's exit codes: the one table (documented in `qonnx-cc --help`) and the one mapping from the
// library's error classes (qonnx::Code) to it.
#pragma once

#include <string>

#include "qonnx/support/status.h"

namespace qonnx::cli {

// 0 ok, 1 failed, 2 usage, 3 cannot read, 4 cannot write, 5 invalid model, 6 unsupported, 7 mismatch.
int exit_code(Code code);

// The "Exit codes:" table `--help` prints, one line per code.
std::string exit_code_help();

}  // namespace qonnx::cli
