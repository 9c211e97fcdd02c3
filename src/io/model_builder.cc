#include "qonnx/io/model_builder.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include "ir/tensor_codec.h"
#include "qonnx/io/model_io.h"

namespace qonnx::io {

namespace {

onnx::AttributeProto* new_attr(onnx::NodeProto* node, const std::string& name, onnx::AttributeProto::AttributeType t) {
  auto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(t);
  return a;
}

void fill_value_info(onnx::ValueInfoProto* vi, const std::string& name, DType dtype, const Dims* dims) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(static_cast<int32_t>(dtype));
  if (!dims) return;
  auto* shape = tt->mutable_shape();
  for (int64_t d : *dims) {
    auto* dim = shape->add_dim();
    if (d < 0) dim->set_dim_param("N");
    else dim->set_dim_value(d);
  }
}

}  // namespace

NodeBuilder& NodeBuilder::attr(const std::string& name, int64_t value) {
  new_attr(node_, name, onnx::AttributeProto::INT)->set_i(value);
  return *this;
}
NodeBuilder& NodeBuilder::attr(const std::string& name, float value) {
  new_attr(node_, name, onnx::AttributeProto::FLOAT)->set_f(value);
  return *this;
}
NodeBuilder& NodeBuilder::attr(const std::string& name, const std::string& value) {
  new_attr(node_, name, onnx::AttributeProto::STRING)->set_s(value);
  return *this;
}
NodeBuilder& NodeBuilder::attr(const std::string& name, const std::vector<int64_t>& value) {
  auto* a = new_attr(node_, name, onnx::AttributeProto::INTS);
  for (int64_t v : value) a->add_ints(v);
  return *this;
}
NodeBuilder& NodeBuilder::attr(const std::string& name, const std::vector<float>& value) {
  auto* a = new_attr(node_, name, onnx::AttributeProto::FLOATS);
  for (float v : value) a->add_floats(v);
  return *this;
}
NodeBuilder& NodeBuilder::attr(const std::string& name, const std::vector<std::string>& value) {
  auto* a = new_attr(node_, name, onnx::AttributeProto::STRINGS);
  for (const std::string& v : value) a->add_strings(v);
  return *this;
}
NodeBuilder& NodeBuilder::attr(const std::string& name, const Tensor& value) {
  ir::encode_tensor(value, new_attr(node_, name, onnx::AttributeProto::TENSOR)->mutable_t());
  return *this;
}
NodeBuilder& NodeBuilder::attr(const std::string& name, const ModelBuilder& body) {
  new_attr(node_, name, onnx::AttributeProto::GRAPH)->mutable_g()->CopyFrom(body.proto().graph());
  return *this;
}

NodeBuilder& NodeBuilder::name(const std::string& value) {
  node_->set_name(value);
  return *this;
}

ModelBuilder::ModelBuilder(int64_t onnx_opset) : proto_(std::make_unique<onnx::ModelProto>()) {
  proto_->set_ir_version(8);
  proto_->set_producer_name("qonnx-cc");
  auto* op = proto_->add_opset_import();
  op->set_domain("");
  op->set_version(onnx_opset);
  proto_->mutable_graph()->set_name("qonnx_cc_graph");
}

ModelBuilder::~ModelBuilder() = default;
ModelBuilder::ModelBuilder(ModelBuilder&&) noexcept = default;

ModelBuilder& ModelBuilder::import(const std::string& domain, int64_t version) {
  auto* op = proto_->add_opset_import();
  op->set_domain(domain);
  op->set_version(version);
  return *this;
}

ModelBuilder& ModelBuilder::input(const std::string& name, DType dtype, const Dims& dims) {
  fill_value_info(proto_->mutable_graph()->add_input(), name, dtype, &dims);
  return *this;
}

ModelBuilder& ModelBuilder::output(const std::string& name, DType dtype, const Dims& dims) {
  fill_value_info(proto_->mutable_graph()->add_output(), name, dtype, &dims);
  return *this;
}

ModelBuilder& ModelBuilder::output(const std::string& name, DType dtype) {
  fill_value_info(proto_->mutable_graph()->add_output(), name, dtype, nullptr);
  return *this;
}

ModelBuilder& ModelBuilder::initializer(const std::string& name, const Tensor& value) {
  auto* t = proto_->mutable_graph()->add_initializer();
  ir::encode_tensor(value, t);
  t->set_name(name);
  return *this;
}

ModelBuilder& ModelBuilder::annotate(const std::string& tensor, const std::string& finn_datatype) {
  auto* qa = proto_->mutable_graph()->add_quantization_annotation();
  qa->set_tensor_name(tensor);
  auto* kv = qa->add_quant_parameter_tensor_names();
  kv->set_key("finn_datatype");
  kv->set_value(finn_datatype);
  return *this;
}

ModelBuilder& ModelBuilder::metadata(const std::string& key, const std::string& value) {
  auto* kv = proto_->add_metadata_props();
  kv->set_key(key);
  kv->set_value(value);
  return *this;
}

NodeBuilder ModelBuilder::node(const std::string& op_type, const std::vector<std::string>& inputs,
                               const std::vector<std::string>& outputs, const std::string& domain) {
  auto* n = proto_->mutable_graph()->add_node();
  n->set_name(fmt::format("{}_{}", op_type, proto_->graph().node_size() - 1));
  n->set_op_type(op_type);
  if (!domain.empty()) n->set_domain(domain);
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return NodeBuilder(n);
}

std::string ModelBuilder::serialize() const { return proto_->SerializeAsString(); }

Result<ir::Model> ModelBuilder::build() const { return load_model_from_bytes(serialize(), "."); }

}  // namespace qonnx::io
