// Logging to stderr. The spdlog backend stays in log.cc so headers remain light.
#pragma once

#include <string_view>

#include <fmt/core.h>

namespace qonnx::log {

enum class Level { kDebug, kInfo, kWarn, kError, kOff };

void set_level(Level level);
Level level();
void write(Level level, std::string_view message);

template <typename... Args>
void debug(fmt::format_string<Args...> f, Args&&... args) {
  if (level() <= Level::kDebug) write(Level::kDebug, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void info(fmt::format_string<Args...> f, Args&&... args) {
  if (level() <= Level::kInfo) write(Level::kInfo, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void warn(fmt::format_string<Args...> f, Args&&... args) {
  if (level() <= Level::kWarn) write(Level::kWarn, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void error(fmt::format_string<Args...> f, Args&&... args) {
  if (level() <= Level::kError) write(Level::kError, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace qonnx::log
