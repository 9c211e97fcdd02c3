// Subcommands of the qonnx-cc CLI. Each add_* registers its options and sets `exit_code` when run.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "exit_codes.h"
#include "qonnx/support/status.h"

namespace qonnx::cli {

// Prints "qonnx-cc: error: ..." and returns the status' exit code (exit_code(status.code())).
int report(const Status& status);

void add_info_command(CLI::App& app, int& exit_code);
void add_check_command(CLI::App& app, int& exit_code);
void add_exec_command(CLI::App& app, int& exit_code);
void add_demo_model_command(CLI::App& app, int& exit_code);
void add_convert_command(CLI::App& app, int& exit_code);
void add_list_passes_command(CLI::App& app, int& exit_code);
void add_trans_quant_param_command(CLI::App& app, int& exit_code);
void add_cleanup_command(CLI::App& app, int& exit_code);
void add_cost_command(CLI::App& app, int& exit_code);
void add_channels_last_command(CLI::App& app, int& exit_code);
void add_range_command(CLI::App& app, int& exit_code);

}  // namespace qonnx::cli
