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

// A deferred tensor's stored bytes handed over in order, block by block (each block valid during the call).
using ByteSink = std::function<Status(const void* data, size_t bytes)>;
// Computes a tensor and hands its stored bytes (a fixed-width dtype: its buffer's bytes) to the sink
// in order, the same bytes every time.
using TensorStream = std::function<Status(const ByteSink& sink)>;

// A tensor computed when it is read instead of kept: a pass's result that costs less to compute again
// from the model's files than to write to the scratch file and read back (fold's float weights, which
// the save computes and writes block by block). `stream` must give `dtype` and `dims` every time.
Result<std::shared_ptr<onnx::TensorProto>> make_deferred_proto(DType dtype, const Dims& dims, TensorStream stream,
                                                               std::filesystem::path* base_dir);

// Whether `proto` (with this base_dir) is a deferred tensor made by make_deferred_proto.
bool is_deferred_tensor(const onnx::TensorProto& proto, const std::filesystem::path& base_dir);
// Hands the bytes of a deferred tensor to `sink` as they are computed, never the whole tensor at once.
Status stream_deferred_tensor(const onnx::TensorProto& proto, const std::filesystem::path& base_dir, const ByteSink& sink);

// A stored tensor's bytes in an external file (the loaded model's data), read in ranges: a deferred
// computation reads its input block by block instead of decoding it whole. Passes keep this, not the
// proto (passes hold no protobuf types); the file is open only while a Reader lives.
class StoredTensorFile {
 public:
  // The file and range of `proto`'s external data (relative to `base_dir`).
  static Result<StoredTensorFile> of(const onnx::TensorProto& proto, const std::filesystem::path& base_dir);

  class Reader {
   public:
    Reader(Reader&& other) noexcept;
    Reader& operator=(Reader&&) = delete;
    ~Reader();
    // `bytes` of the tensor's bytes from `offset` into `dst` (an error past the stored bytes).
    Status read(uint64_t offset, void* dst, size_t bytes) const;

   private:
    friend class StoredTensorFile;
    Reader(const StoredTensorFile& file, int fd) : file_(file), fd_(fd) {}
    const StoredTensorFile& file_;
    int fd_;
  };
  Result<Reader> open() const;

 private:
  std::filesystem::path path_;
  uint64_t offset_ = 0;
  uint64_t length_ = 0;
};

// The data of an initializer whose base_dir is the scratch folder (in_scratch_file): read back, or computed.
Result<Tensor> read_scratch_tensor(const onnx::TensorProto& proto, const std::filesystem::path& base_dir);

// A copy of `proto` (to edit, e.g. to rename), counted as held when `proto` is, computed when it is.
std::shared_ptr<onnx::TensorProto> copy_stored_proto(const std::shared_ptr<onnx::TensorProto>& proto);

// Whether an initializer with this base_dir reads from the scratch file.
bool in_scratch_file(const std::filesystem::path& base_dir);

}  // namespace qonnx::ir
