// What passes make stays in memory only up to a process-wide budget: a new initializer whose bytes would
// take the total held in memory past it goes to a scratch file instead, so converting a multi-GB model
// holds a bounded amount whatever the number or size of the tensors the passes make. Private to the
// library.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>

#include <onnx/onnx_pb.h>

#include "qonnx/support/status.h"
#include "qonnx/tensor.h"

namespace qonnx::ir {

// Bytes of pass-made initializers held in memory (their stored data) at most, by default.
constexpr uint64_t kDefaultSpillBudget = uint64_t{64} << 20;
void set_spill_budget(uint64_t bytes);
uint64_t spill_budget();

// The stored bytes of pass-made initializers now in memory, and the most they reached since
// reset_peak_held_bytes (the library's own accounting, for tests and benchmarks).
uint64_t held_bytes();
uint64_t peak_held_bytes();
void reset_peak_held_bytes();

// `tensor` as a new initializer's proto (name left to the caller): inline, and counted as held until
// the last copy of the proto goes, while the budget allows; else appended to the scratch file and
// referenced as external data (`base_dir` is then set to the scratch folder).
Result<std::shared_ptr<onnx::TensorProto>> make_stored_proto(const Tensor& tensor, std::filesystem::path* base_dir);

// A tensor computed when it is read instead of kept: a pass's result that costs less to compute again
// from the model's files than to write to the scratch file and read back (fold's float weights, which
// the save then computes and writes one at a time). `source` must give `dtype` and `dims` every time.
using TensorSource = std::function<Result<Tensor>()>;
Result<std::shared_ptr<onnx::TensorProto>> make_deferred_proto(DType dtype, const Dims& dims, TensorSource source,
                                                               std::filesystem::path* base_dir);

// Reads the stored data of `proto` (relative to `base_dir`) each time it is called: a pass keeps this,
// not the proto, to compute from a weight later (passes hold no protobuf types).
TensorSource stored_tensor_source(std::shared_ptr<onnx::TensorProto> proto, std::filesystem::path base_dir);

// The data of an initializer whose base_dir is the scratch folder (in_scratch_file): read back, or computed.
Result<Tensor> read_scratch_tensor(const onnx::TensorProto& proto, const std::filesystem::path& base_dir);

// A copy of `proto` (to edit, e.g. to rename), counted as held when `proto` is, computed when it is.
std::shared_ptr<onnx::TensorProto> copy_stored_proto(const std::shared_ptr<onnx::TensorProto>& proto);

// Whether an initializer with this base_dir reads from the scratch file.
bool in_scratch_file(const std::filesystem::path& base_dir);

}  // namespace qonnx::ir
