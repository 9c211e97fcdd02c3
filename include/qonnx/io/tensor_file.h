// Tensor files of the ONNX backend-test layout (TensorProto .pb) and numpy .npy.
#pragma once

#include <filesystem>
#include <string>

#include "qonnx/support/status.h"
#include "qonnx/tensor.h"

namespace qonnx::ir {
class Graph;
}  // namespace qonnx::ir

namespace qonnx::io {

struct NamedTensor {
  std::string name;  // TensorProto name; empty for .npy
  Tensor tensor;
};

// Reads .pb (TensorProto) or .npy by extension.
Result<NamedTensor> read_tensor_file(const std::filesystem::path& path);
// A SequenceProto or OptionalProto (.pb) file, the ONNX backend tests' non-tensor values, as a
// sequence or optional value (Tensor::kind). `kind` says which it is and `elem`/`of_sequence` give an
// empty one its type: the file says neither.
Result<NamedTensor> read_container_file(const std::filesystem::path& path, ValueKind kind, DType elem, bool of_sequence);
// The value file of graph input or output `name` (the backend tests' input_K.pb/output_K.pb): read
// as the graph declares it, a tensor, a sequence or an optional (their files do not say which).
Result<NamedTensor> read_value_file(const std::filesystem::path& path, const ir::Graph& graph, const std::string& name);
Status write_tensor_pb(const std::filesystem::path& path, const std::string& name, const Tensor& tensor);
Status write_tensor_npy(const std::filesystem::path& path, const Tensor& tensor);

Result<Tensor> parse_npy(const std::string& bytes);
std::string serialize_npy(const Tensor& tensor);

}  // namespace qonnx::io
