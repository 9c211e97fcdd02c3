// TensorProto <-> Tensor at the protobuf edge (private to the library).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <onnx/onnx_pb.h>

#include "qonnx/support/status.h"
#include "qonnx/tensor.h"

namespace qonnx::ir {

// Location of a tensor's external data, validated: inside `base_dir`, within the file.
struct ExternalSlice {
  std::filesystem::path file;
  uint64_t offset = 0;
  uint64_t length = 0;
};

// Validates a TensorProto's external_data entries against `base_dir` and the expected byte size.
Result<ExternalSlice> resolve_external(const onnx::TensorProto& proto, const std::filesystem::path& base_dir);

// What a TensorProto's storage holds, checked against its dims and type without decoding.
struct StorageInfo {
  DType dtype = DType::kUndefined;
  Dims dims;
  int64_t numel = 0;
  uint64_t nbytes = 0;
  std::optional<ExternalSlice> external;  // set for data_location EXTERNAL
};

// Checks sizes and fields only (nothing is decoded or read): rank within kMaxRank, a known data_type,
// non-negative dims whose product and byte size do not overflow, exactly one value field (raw_data or
// the typed field of the dtype) holding exactly the elements the dims (or segment) need, and external
// data inside `base_dir` and within its file. Invalid storage is kInvalidModel naming the tensor.
Result<StorageInfo> validate_tensor_storage(const onnx::TensorProto& proto, const std::filesystem::path& base_dir);

// Decodes any encoding (raw_data, typed fields, external data) into a Tensor.
Result<Tensor> decode_tensor(const onnx::TensorProto& proto, const std::filesystem::path& base_dir);

// A tensor's bytes as ONNX stores them: the tensor's own buffer, or (4-bit types) a packed copy.
class StoredBytes {
 public:
  explicit StoredBytes(const Tensor& tensor);
  StoredBytes(const StoredBytes&) = delete;  // data() may point into packed_
  StoredBytes& operator=(const StoredBytes&) = delete;
  const void* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  std::string packed_;
  const void* data_ = nullptr;
  size_t size_ = 0;
};

// Encodes as raw_data (strings in string_data, 4-bit types packed); name is set by the caller.
void encode_tensor(const Tensor& tensor, onnx::TensorProto* proto);

}  // namespace qonnx::ir
