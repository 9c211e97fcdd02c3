#include "qonnx/support/log.h"

#include <cstdio>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace qonnx::log {
namespace {

Level g_level = Level::kInfo;

spdlog::logger& logger() {
  static std::shared_ptr<spdlog::logger> instance = [] {
    auto l = spdlog::stderr_logger_st("qonnx-cc");
    l->set_pattern("qonnx-cc: %l: %v");
    l->set_level(spdlog::level::trace);
    return l;
  }();
  return *instance;
}

}  // namespace

void set_level(Level level) { g_level = level; }
Level level() { return g_level; }

void write(Level level, std::string_view message) {
  // Results on stdout come first when both streams go to one terminal or file.
  std::fflush(stdout);
  switch (level) {
    case Level::kDebug: logger().debug("{}", message); break;
    case Level::kInfo: logger().info("{}", message); break;
    case Level::kWarn: logger().warn("{}", message); break;
    case Level::kError: logger().error("{}", message); break;
    case Level::kOff: break;
  }
}

}  // namespace qonnx::log
