// Loading and saving models: external data resolved inside the model's folder only, saves that are
// deterministic (same model -> same bytes) and atomic (temp file + rename, nothing on failure).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "qonnx/ir/model.h"
#include "qonnx/support/status.h"

namespace qonnx::io {

enum class ExternalData { kAuto, kAlways, kNever };

struct SaveOptions {
  // kAuto: like kAlways when the loaded model used external data or the initializers exceed 1.8 GB,
  // else like kNever; kAlways: every initializer of at least `external_threshold` bytes goes to
  // "<output file name>.data" (offsets aligned to `external_alignment`); kNever: all inline.
  ExternalData external_data = ExternalData::kAuto;
  size_t external_threshold = 1024;
  size_t external_alignment = 4096;
  size_t max_inline_bytes = SIZE_MAX;  // structure_proto only (io/model_proto.h)
};

Result<ir::Model> load_model(const std::filesystem::path& path);
// The one set of model-level validity rules (opset imports, the default domain's import for standard
// ops, declared element types). The loader applies them, so do the pass verifier after every pass and
// the savers before writing: a model a pipeline accepts and a saver writes loads again.
Status check_model_rules(const ir::Model& model);
Result<ir::Model> load_model_from_bytes(const std::string& bytes, const std::filesystem::path& base_dir);
Status save_model(const ir::Model& model, const std::filesystem::path& path, const SaveOptions& options = {});
// Serialized ModelProto with every tensor inline (deterministic).
Result<std::string> serialize_model(const ir::Model& model);

// External data files the model's initializers read (resolved, sorted, unique).
std::vector<std::filesystem::path> external_data_files(const ir::Model& model);

// Writes `bytes` to `path` atomically: an unnamed temp file (O_TMPFILE) in the same folder, flushed,
// then linked and renamed over `path`. A killed process leaves the previous file and no temp file.
Status write_file_atomic(const std::filesystem::path& path, const std::string& bytes);
// Several files: all are written and flushed first, then renamed one after the other.
Status write_files_atomic(const std::vector<std::pair<std::filesystem::path, std::string>>& files);
Result<std::string> read_file(const std::filesystem::path& path);

}  // namespace qonnx::io
