// The bodies of the libFuzzer targets, header-only so that tests/hostile_test.cc replays the seed
// corpora and every crash reproducer (fuzz/regressions/<target>/) through the same code in the normal
// and the sanitizer builds, without libFuzzer.
//
// Each target returns normally on any input; a crash, a sanitizer report, an uncaught exception or a
// broken invariant (abort) is a finding.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "qonnx/targets/target.h"
#include "qonnx/analysis/summary.h"
#include "qonnx/analysis/validate.h"
#include "qonnx/exec/executor.h"
#include "qonnx/io/model_io.h"
#include "qonnx/io/model_text.h"
#include "qonnx/pass/pass.h"
#include "qonnx/register_all.h"
#include "qonnx/support/log.h"
#include "qonnx/tensor.h"

namespace qonnx::fuzz {

// Fuzzed models may ask for huge tensors: they must fail with a Status, not exhaust the machine.
constexpr uint64_t kFuzzMemoryLimit = uint64_t{64} << 20;
// Larger graphs are skipped by the exec and convert targets (they add time, not coverage).
constexpr size_t kMaxNodes = 24;

[[noreturn]] inline void invariant_failed(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz invariant broken: %s: %s\n", what, detail.c_str());
  std::abort();
}

// A private folder for external data lookups: a 64-byte "w.bin", a symlink to a file outside it
// ("outside.bin" -> /etc/hostname) and one to a directory outside ("up" -> /), so fuzzed
// external_data entries exercise every resolve_external branch without touching real files.
inline const std::filesystem::path& base_dir() {
  static const std::filesystem::path dir = [] {
    char tmpl[] = "/tmp/qonnx-fuzz-XXXXXX";
    const char* made = ::mkdtemp(tmpl);
    std::filesystem::path d = made ? made : "/tmp";
    std::ofstream(d / "w.bin", std::ios::binary) << std::string(64, '\x11');
    std::error_code ec;
    std::filesystem::create_symlink("/etc/hostname", d / "outside.bin", ec);
    std::filesystem::create_directory_symlink("/", d / "up", ec);
    return d;
  }();
  return dir;
}

inline void init() {
  static bool done = [] {
    register_all();
    log::set_level(log::Level::kOff);
    set_memory_limit(kFuzzMemoryLimit);
    (void)base_dir();
    return true;
  }();
  (void)done;
}

// Target "load": protobuf bytes -> model; then everything read-only that `info`/`check` do, and a
// save round trip that must load again.
inline int load_one(const uint8_t* data, size_t size) {
  init();
  std::string bytes(reinterpret_cast<const char*>(data), size);
  auto model = io::load_model_from_bytes(bytes, base_dir());
  if (!model.is_ok()) {
    (void)model.status().to_string();
    return 0;
  }
  auto summary = analysis::summarize(model.value());
  (void)analysis::format_text(summary);
  (void)analysis::format_json(summary);
  (void)io::to_onnx_text(model.value());
  (void)io::external_data_files(model.value());
  if (model->graph().node_count() <= kMaxNodes) (void)analysis::validate_model(model.value());
  auto saved = io::serialize_model(model.value());
  if (saved.is_ok()) {
    auto again = io::load_model_from_bytes(saved.value(), base_dir());
    if (!again.is_ok()) invariant_failed("a saved model does not load", again.status().to_string());
  }
  return 0;
}

// Target "exec": [u32 little-endian model length][model bytes][tensor bytes]. The model's runtime
// inputs get their declared dtype, symbolic dims become 1..4 from the tensor bytes, and their data
// comes from the tensor bytes (repeated); then the executor runs the graph.
inline int exec_one(const uint8_t* data, size_t size) {
  init();
  if (size < 4) return 0;
  uint32_t model_len = static_cast<uint32_t>(data[0]) | static_cast<uint32_t>(data[1]) << 8 |
                       static_cast<uint32_t>(data[2]) << 16 | static_cast<uint32_t>(data[3]) << 24;
  if (model_len > size - 4) model_len = static_cast<uint32_t>(size - 4);
  std::string bytes(reinterpret_cast<const char*>(data + 4), model_len);
  const uint8_t* tdata = data + 4 + model_len;
  size_t tsize = size - 4 - model_len;
  size_t tpos = 0;
  auto next_byte = [&]() -> uint8_t { return tsize == 0 ? 0 : tdata[tpos++ % tsize]; };

  auto model = io::load_model_from_bytes(bytes, base_dir());
  if (!model.is_ok() || model->graph().node_count() > kMaxNodes) return 0;
  auto executor = exec::Executor::create(model.value());
  if (!executor.is_ok()) return 0;
  std::map<std::string, Tensor> feeds;
  for (const ir::Value* v : model->graph().runtime_inputs()) {
    auto type = model->graph().type_of(v);
    if (!type || type->dtype == DType::kUndefined || !type->has_shape) return 0;
    Dims dims = type->dims;
    for (auto& d : dims)
      if (d < 0) d = 1 + next_byte() % 4;
    int64_t n = checked_numel(dims);
    if (n < 0 || n > (int64_t{1} << 16)) return 0;
    Tensor t(type->dtype, dims);
    if (t.dtype() == DType::kString) {
      for (auto& s : t.strings()) s = std::string(next_byte() % 4, static_cast<char>('a' + next_byte() % 26));
    } else {
      auto* p = static_cast<uint8_t*>(t.raw());
      for (size_t i = 0; i < t.nbytes(); ++i) p[i] = next_byte();
      if (t.dtype() == DType::kBool)
        for (size_t i = 0; i < t.nbytes(); ++i) p[i] &= 1;
    }
    feeds.emplace(v->name(), std::move(t));
  }
  auto result = executor->run(feeds);
  if (result.is_ok() && result->outputs.size() != model->graph().outputs().size())
    invariant_failed("exec", "wrong number of outputs");
  (void)result.status().to_string();
  return 0;
}

// Target "convert": [target selector byte][model bytes] -> a named pipeline (fold, qdq, ngraph,
// ascend, ...), then a save that must load again.
inline int convert_one(const uint8_t* data, size_t size) {
  init();
  if (size < 1) return 0;
  static const std::vector<std::string> targets = targets::TargetRegistry::global().names();
  const std::string& target = targets[data[0] % targets.size()];
  std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  auto model = io::load_model_from_bytes(bytes, base_dir());
  if (!model.is_ok() || model->graph().node_count() > kMaxNodes) return 0;
  auto text = targets::pipeline_text(target);
  if (!text.is_ok()) invariant_failed("target", text.status().to_string());
  auto pipeline = pass::parse_pipeline(text.value());
  if (!pipeline.is_ok()) invariant_failed("pipeline", pipeline.status().to_string());
  pass::PassContext ctx;
  auto run = pass::run_pipeline(model.value(), pipeline.value(), ctx);
  if (!run.is_ok()) {
    // The input passed the loader's rules: a pass leaving a model that breaks them is a bug.
    const auto& context = run.status().context();
    if (std::find(context.begin(), context.end(), "verifier after the pass") != context.end())
      invariant_failed("a pass broke the model's validity", run.status().to_string());
    return 0;
  }
  // One set of rules: what the pipeline accepts, the saver writes and the loader reads again.
  auto saved = io::serialize_model(model.value());
  if (!saved.is_ok() && saved.status().code() == Code::kInvalidModel)
    invariant_failed("the saver refuses a model the pipeline accepted", saved.status().to_string());
  if (saved.is_ok()) {
    auto again = io::load_model_from_bytes(saved.value(), base_dir());
    if (!again.is_ok()) invariant_failed("a converted model does not load", again.status().to_string());
  }
  return 0;
}

}  // namespace qonnx::fuzz
