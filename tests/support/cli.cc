#include "support/cli.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace qonnx::test {

namespace {
std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

CliResult run_cli(const std::string& args) {
  namespace fs = std::filesystem;
  static int counter = 0;
  fs::path base = fs::temp_directory_path() / ("qonnx_cli_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  std::string cmd = std::string(QONNX_CLI_PATH) + " " + args + " >" + base.string() + ".out 2>" + base.string() + ".err </dev/null";
  int status = std::system(cmd.c_str());
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(base.string() + ".out");
  r.err = slurp(base.string() + ".err");
  fs::remove(base.string() + ".out");
  fs::remove(base.string() + ".err");
  return r;
}

}  // namespace qonnx::test
