// Builds small models in code: the embedded demo, unit tests and benchmark generators.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "qonnx/ir/model.h"
#include "qonnx/support/status.h"
#include "qonnx/tensor.h"

namespace onnx {
class ModelProto;
class NodeProto;
}  // namespace onnx

namespace qonnx::io {

class NodeBuilder {
 public:
  explicit NodeBuilder(onnx::NodeProto* node) : node_(node) {}
  NodeBuilder& attr(const std::string& name, int64_t value);
  NodeBuilder& attr(const std::string& name, int value) { return attr(name, static_cast<int64_t>(value)); }
  NodeBuilder& attr(const std::string& name, float value);
  NodeBuilder& attr(const std::string& name, const std::string& value);
  NodeBuilder& attr(const std::string& name, const char* value) { return attr(name, std::string(value)); }
  NodeBuilder& attr(const std::string& name, const std::vector<int64_t>& value);
  NodeBuilder& attr(const std::string& name, const std::vector<float>& value);
  NodeBuilder& attr(const std::string& name, const std::vector<std::string>& value);
  NodeBuilder& attr(const std::string& name, const Tensor& value);
  // A GRAPH attribute (If/Loop/Scan body): the graph of `body` (its inputs, outputs, initializers, nodes).
  NodeBuilder& attr(const std::string& name, const class ModelBuilder& body);
  NodeBuilder& name(const std::string& value);

 private:
  onnx::NodeProto* node_;
};

class ModelBuilder {
 public:
  // Imports the default domain at `onnx_opset`.
  explicit ModelBuilder(int64_t onnx_opset = 13);
  ~ModelBuilder();
  ModelBuilder(ModelBuilder&&) noexcept;

  ModelBuilder& import(const std::string& domain, int64_t version);
  // dims < 0 are written as symbolic dims named "N" (batch).
  ModelBuilder& input(const std::string& name, DType dtype, const Dims& dims);
  ModelBuilder& output(const std::string& name, DType dtype, const Dims& dims);
  // Output with unknown shape.
  ModelBuilder& output(const std::string& name, DType dtype);
  ModelBuilder& initializer(const std::string& name, const Tensor& value);
  ModelBuilder& annotate(const std::string& tensor, const std::string& finn_datatype);
  ModelBuilder& metadata(const std::string& key, const std::string& value);
  // Node named "<op_type>_<index>" unless renamed.
  NodeBuilder node(const std::string& op_type, const std::vector<std::string>& inputs,
                   const std::vector<std::string>& outputs, const std::string& domain = "");

  std::string serialize() const;
  Result<ir::Model> build() const;
  const onnx::ModelProto& proto() const { return *proto_; }

 private:
  std::unique_ptr<onnx::ModelProto> proto_;
};

}  // namespace qonnx::io
