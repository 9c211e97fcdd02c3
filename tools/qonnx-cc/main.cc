// qonnx-cc: a thin CLI over libqonnx.
#include <cstdio>
#include <exception>
#include <new>

#include <fmt/core.h>
#include <google/protobuf/stubs/common.h>
#include <onnx/common/version.h>

#include "commands.h"
#include "exit_codes.h"
#include "qonnx/register_all.h"
#include "qonnx/support/log.h"
#include "qonnx/tensor.h"

namespace {

std::string version_string() {
  int pb = GOOGLE_PROTOBUF_VERSION;
  return fmt::format("qonnx-cc {} (ONNX library {}, protobuf {}.{}.{})", QONNX_CC_VERSION, onnx::LAST_RELEASE_VERSION,
                     pb / 1000000, pb / 1000 % 1000, pb % 1000);
}

}  // namespace

int main(int argc, char** argv) {
  qonnx::register_all();
  CLI::App app("qonnx-cc: QONNX model quantization transformer (load, execute, check, convert)", "qonnx-cc");
  app.footer(qonnx::cli::exit_code_help());
  app.set_version_flag("--version", version_string());
  app.require_subcommand(1);
  app.add_flag_callback("-v,--verbose", [] { qonnx::log::set_level(qonnx::log::Level::kDebug); },
                        "More log output on stderr");
  app.add_flag_callback("-q,--quiet", [] { qonnx::log::set_level(qonnx::log::Level::kError); },
                        "Only errors on stderr");
  // Global, so it works after any subcommand (exec, convert, check, ...): applies before they run.
  app.add_option_function<uint64_t>(
         "--max-memory", [](const uint64_t& bytes) { qonnx::set_memory_limit(bytes); },
         fmt::format("Cap on memory held by tensors, in bytes or with a unit (512M, 8G; 0 = none). Default: "
                     "3/4 of physical memory, here {}", qonnx::default_memory_limit()))
      ->transform(CLI::AsSizeValue(false));
  int exit_code = 0;
  qonnx::cli::add_info_command(app, exit_code);
  qonnx::cli::add_check_command(app, exit_code);
  qonnx::cli::add_exec_command(app, exit_code);
  qonnx::cli::add_convert_command(app, exit_code);
  qonnx::cli::add_list_passes_command(app, exit_code);
  qonnx::cli::add_demo_model_command(app, exit_code);
  qonnx::cli::add_trans_quant_param_command(app, exit_code);
  qonnx::cli::add_cleanup_command(app, exit_code);
  qonnx::cli::add_cost_command(app, exit_code);
  qonnx::cli::add_channels_last_command(app, exit_code);
  qonnx::cli::add_range_command(app, exit_code);
  for (auto* sub : app.get_subcommands({})) sub->fallthrough();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : qonnx::cli::exit_code(qonnx::Code::kUsage);
  } catch (const qonnx::MemoryLimitError& e) {
    return qonnx::cli::report(qonnx::Status(qonnx::Code::kFailed, e.what()));
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "qonnx-cc: error: out of memory\n");
    return qonnx::cli::exit_code(qonnx::Code::kFailed);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "qonnx-cc: error: internal error: %s\n", e.what());
    return qonnx::cli::exit_code(qonnx::Code::kFailed);
  }
  return exit_code;
}
