// The file steps around the library calls of `cleanup`, `channels-last` and `convert` (qonnx/api):
// one default output name, one overwrite rule, one way to print a --check and to write the result.
#pragma once

#include <string>
#include <vector>

#include "qonnx/api/commands.h"
#include "qonnx/io/model_io.h"
#include "qonnx/ir/model.h"
#include "qonnx/support/status.h"

namespace qonnx::cli {

// The default output: `input`'s folder and stem followed by `suffix` (".channels_last.onnx").
std::string output_next_to_input(const std::string& input, const std::string& suffix);

// A usage error (exit 2) when `output` is the input file under any name (hard links too:
// fs::equivalent), unless `in_place`.
Status refuse_to_overwrite_input(const std::string& input, const std::string& output, bool in_place);

// The lines of a --check on stdout.
void print_check_lines(const std::vector<std::string>& lines);

// A --check that found a difference: "qonnx-cc: error: --check: FAILURE; nothing written" on stderr;
// returns exit code 7.
int report_check_failure(const std::string& failure);

// --stats: every pass's counters on stderr.
void print_pass_counters(const api::PassCounters& counters);

// Writes `model` to `output` atomically and logs it.
Status save_result(const ir::Model& model, const std::string& output, const io::SaveOptions& options = {});

}  // namespace qonnx::cli
