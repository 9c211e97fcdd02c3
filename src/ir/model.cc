#include "qonnx/ir/model.h"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include "ir/spill_store.h"
#include "ir/tensor_codec.h"

namespace qonnx::ir {

bool is_default_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

std::string canonical_domain(const std::string& domain) { return is_default_domain(domain) ? "" : domain; }

// ---- Node ------------------------------------------------------------------------------------

Node::Node() : rest_(std::make_unique<onnx::NodeProto>()) {}
Node::~Node() = default;

std::string Node::describe() const {
  return fmt::format("node '{}' ({}::{})", name_, domain_.empty() ? "ai.onnx" : domain_, op_type_);
}

namespace {

const onnx::AttributeProto* find_attr(const onnx::NodeProto& proto, const std::string& name) {
  for (const auto& a : proto.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

onnx::AttributeProto* upsert_attr(onnx::NodeProto& proto, const std::string& name) {
  for (auto& a : *proto.mutable_attribute())
    if (a.name() == name) {
      a.Clear();
      a.set_name(name);
      return &a;
    }
  auto* a = proto.add_attribute();
  a->set_name(name);
  return a;
}

}  // namespace

bool Node::has_attr(const std::string& name) const { return find_attr(*rest_, name) != nullptr; }

int Node::attr_type(const std::string& name) const {
  const auto* a = find_attr(*rest_, name);
  return a ? static_cast<int>(a->type()) : 0;
}

namespace {

const char* attr_type_name(int type) {
  switch (type) {
    case onnx::AttributeProto::FLOAT: return "FLOAT";
    case onnx::AttributeProto::INT: return "INT";
    case onnx::AttributeProto::STRING: return "STRING";
    case onnx::AttributeProto::TENSOR: return "TENSOR";
    case onnx::AttributeProto::GRAPH: return "GRAPH";
    case onnx::AttributeProto::FLOATS: return "FLOATS";
    case onnx::AttributeProto::INTS: return "INTS";
    case onnx::AttributeProto::STRINGS: return "STRINGS";
    default: return "another type";
  }
}

// The attribute when present with type `want` (or untyped); nullptr when absent (an error if
// `required`); an error naming it when it has another type.
Result<const onnx::AttributeProto*> typed_attr(const onnx::NodeProto& proto, const std::string& name,
                                               onnx::AttributeProto::AttributeType want, bool required) {
  const onnx::AttributeProto* a = find_attr(proto, name);
  if (!a) {
    if (required) return Status(Code::kInvalidModel, fmt::format("missing attribute '{}'", name));
    return static_cast<const onnx::AttributeProto*>(nullptr);
  }
  if (a->type() == onnx::AttributeProto::UNDEFINED || a->type() == want) return a;
  return Status(Code::kInvalidModel, fmt::format("attribute '{}' must be {}, got {}", name, attr_type_name(want),
                                                 attr_type_name(a->type())));
}

}  // namespace

Status Node::read_attr(const std::string& name, bool required, int64_t& out) const {
  QONNX_ASSIGN_OR_RETURN(const auto* a, typed_attr(*rest_, name, onnx::AttributeProto::INT, required));
  if (a) out = a->i();
  return Status::ok();
}

Status Node::read_attr(const std::string& name, bool required, bool& out) const {
  QONNX_ASSIGN_OR_RETURN(const auto* a, typed_attr(*rest_, name, onnx::AttributeProto::INT, required));
  if (a) out = a->i() != 0;
  return Status::ok();
}

Status Node::read_attr(const std::string& name, bool required, float& out) const {
  QONNX_ASSIGN_OR_RETURN(const auto* a, typed_attr(*rest_, name, onnx::AttributeProto::FLOAT, required));
  if (a) out = a->f();
  return Status::ok();
}

Status Node::read_attr(const std::string& name, bool required, std::string& out) const {
  QONNX_ASSIGN_OR_RETURN(const auto* a, typed_attr(*rest_, name, onnx::AttributeProto::STRING, required));
  if (a) out = a->s();
  return Status::ok();
}

Status Node::read_attr(const std::string& name, bool required, std::vector<int64_t>& out) const {
  QONNX_ASSIGN_OR_RETURN(const auto* a, typed_attr(*rest_, name, onnx::AttributeProto::INTS, required));
  if (a) out.assign(a->ints().begin(), a->ints().end());
  return Status::ok();
}

Status Node::read_attr(const std::string& name, bool required, std::vector<float>& out) const {
  QONNX_ASSIGN_OR_RETURN(const auto* a, typed_attr(*rest_, name, onnx::AttributeProto::FLOATS, required));
  if (a) out.assign(a->floats().begin(), a->floats().end());
  return Status::ok();
}

Status Node::read_attr(const std::string& name, bool required, std::vector<std::string>& out) const {
  QONNX_ASSIGN_OR_RETURN(const auto* a, typed_attr(*rest_, name, onnx::AttributeProto::STRINGS, required));
  if (a) out.assign(a->strings().begin(), a->strings().end());
  return Status::ok();
}

std::string Node::attr_string(const std::string& name, const std::string& fallback) const {
  const auto* a = find_attr(*rest_, name);
  return a ? a->s() : fallback;
}

std::vector<int64_t> Node::attr_ints(const std::string& name, const std::vector<int64_t>& fallback) const {
  const auto* a = find_attr(*rest_, name);
  if (!a) return fallback;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

std::vector<float> Node::attr_floats(const std::string& name, const std::vector<float>& fallback) const {
  const auto* a = find_attr(*rest_, name);
  if (!a) return fallback;
  return std::vector<float>(a->floats().begin(), a->floats().end());
}

std::vector<std::string> Node::attr_strings(const std::string& name) const {
  const auto* a = find_attr(*rest_, name);
  if (!a) return {};
  return std::vector<std::string>(a->strings().begin(), a->strings().end());
}

Result<Tensor> Node::attr_tensor(const std::string& name) const {
  const auto* a = find_attr(*rest_, name);
  if (!a || !a->has_t())
    return Status(Code::kInvalidModel, fmt::format("missing tensor attribute '{}'", name));
  // Tensor attributes never use external data relative to anything but the working folder.
  auto t = decode_tensor(a->t(), {});
  if (!t.is_ok()) return std::move(t).status().with_context(fmt::format("attribute '{}'", name));
  return t;
}

Result<std::pair<ValueKind, DType>> Node::attr_value_type(const std::string& name) const {
  const auto* a = find_attr(*rest_, name);
  if (!a || !a->has_tp()) return Status(Code::kInvalidModel, fmt::format("missing type attribute '{}'", name));
  const onnx::TypeProto* t = &a->tp();
  ValueKind kind = ValueKind::kTensor;
  if (t->has_sequence_type()) {
    kind = ValueKind::kSequence;
    t = &t->sequence_type().elem_type();
  }
  if (!t->has_tensor_type() || !dtype_known(t->tensor_type().elem_type()))
    return Status(Code::kUnsupported, fmt::format("attribute '{}': only tensor and sequence-of-tensor types are supported", name));
  return std::make_pair(kind, static_cast<DType>(t->tensor_type().elem_type()));
}

Graph* Node::body(const std::string& attribute) const {
  for (const Body& b : bodies_)
    if (b.attribute == attribute && b.index < 0) return b.graph.get();
  return nullptr;
}

std::vector<Value*> Node::implicit_inputs() const {
  std::vector<Value*> out;
  for (const auto& [value, readers] : implicit_) out.push_back(value);
  return out;
}

void Node::capture(Value* value) {
  for (auto& [v, readers] : implicit_)
    if (v == value) {
      ++readers;
      return;
    }
  implicit_.emplace_back(value, 1);
  graph_->add_reference(value, this, kImplicitInput);
}

void Node::release(Value* value) {
  for (auto it = implicit_.begin(); it != implicit_.end(); ++it)
    if (it->first == value) {
      if (--it->second == 0) {
        implicit_.erase(it);
        graph_->drop_reference(value, this, kImplicitInput);
      }
      return;
    }
}

std::vector<std::string> Node::attr_names() const {
  std::vector<std::string> names;
  for (const auto& a : rest_->attribute()) names.push_back(a.name());
  return names;
}

void Node::set_attr(const std::string& name, int64_t value) {
  auto* a = upsert_attr(*rest_, name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

void Node::set_attr(const std::string& name, float value) {
  auto* a = upsert_attr(*rest_, name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(value);
}

void Node::set_attr(const std::string& name, const std::string& value) {
  auto* a = upsert_attr(*rest_, name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(value);
}

void Node::set_attr(const std::string& name, const std::vector<int64_t>& value) {
  auto* a = upsert_attr(*rest_, name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : value) a->add_ints(v);
}

void Node::set_attr(const std::string& name, const std::vector<float>& value) {
  auto* a = upsert_attr(*rest_, name);
  a->set_type(onnx::AttributeProto::FLOATS);
  for (float v : value) a->add_floats(v);
}

void Node::set_attr(const std::string& name, const std::vector<std::string>& value) {
  auto* a = upsert_attr(*rest_, name);
  a->set_type(onnx::AttributeProto::STRINGS);
  for (const std::string& v : value) a->add_strings(v);
}

void Node::copy_attributes_from(const Node& other) {
  rest_->mutable_attribute()->CopyFrom(other.rest_->attribute());
}

void Node::remove_attr(const std::string& name) {
  auto* attrs = rest_->mutable_attribute();
  for (int i = 0; i < attrs->size(); ++i)
    if (attrs->Get(i).name() == name) {
      attrs->erase(attrs->begin() + i);
      return;
    }
}

// ---- Graph -----------------------------------------------------------------------------------

Graph::Graph() : rest_(std::make_unique<onnx::GraphProto>()) {}
Graph::~Graph() = default;

Value* Graph::find_value(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

Value* Graph::resolve_value(const std::string& name) const {
  for (const Graph* g = this; g; g = g->parent())
    if (Value* v = g->find_value(name)) return v;
  return nullptr;
}

Graph* Graph::parent() const { return owner_ ? owner_->graph_ : nullptr; }

void Graph::visit_graphs(const std::function<void(Graph&)>& fn) {
  fn(*this);
  // The callback may have removed nodes (and their bodies): walk what is left afterwards.
  if (nodes_with_bodies_ == 0) return;
  for (const auto& n : nodes_)
    for (const auto& b : n->bodies_) b.graph->visit_graphs(fn);
}

void Graph::visit_graphs(const std::function<void(const Graph&)>& fn) const {
  fn(*this);
  if (nodes_with_bodies_ == 0) return;
  for (const auto& n : nodes_)
    for (const auto& b : n->bodies_) static_cast<const Graph&>(*b.graph).visit_graphs(fn);
}

bool Graph::name_taken(const std::string& name) const {
  const Graph* root = this;
  while (root->parent()) root = root->parent();
  bool taken = false;
  root->visit_graphs([&](const Graph& g) { taken = taken || g.find_value(name); });
  return taken;
}

Graph* Graph::add_body(Node* node, const std::string& attribute, int index) {
  auto body = std::make_unique<Graph>();
  body->owner_ = node;
  Graph* raw = body.get();
  if (node->bodies_.empty()) ++node->graph_->nodes_with_bodies_;
  node->bodies_.push_back(Node::Body{attribute, index, std::move(body)});
  return raw;
}

void Graph::add_reference(Value* value, Node* reader, int index) {
  if (value->graph_ == this) {
    if (reader) value->uses_.push_back(Use{reader, index});
    return;
  }
  if (owner_) owner_->capture(value);
}

void Graph::drop_reference(Value* value, Node* reader, int index) {
  if (value->graph_ == this) {
    if (!reader) return;
    auto& uses = value->uses_;
    for (auto it = uses.begin(); it != uses.end(); ++it)
      if (it->node == reader && it->input_index == index) {
        uses.erase(it);
        break;
      }
    return;
  }
  if (owner_) owner_->release(value);
}

Value* Graph::get_or_create_value(const std::string& name) {
  if (Value* v = find_value(name)) return v;
  auto v = std::make_unique<Value>();
  v->graph_ = this;
  v->name_ = name;
  v->id_ = static_cast<int>(values_.size());
  Value* raw = v.get();
  values_.push_back(std::move(v));
  by_name_.emplace(name, raw);
  return raw;
}

Result<Node*> Graph::add_node(const std::string& name, const std::string& op_type, const std::string& domain,
                              const std::vector<std::string>& inputs, const std::vector<std::string>& outputs) {
  auto node = std::unique_ptr<Node>(new Node());
  node->graph_ = this;
  node->name_ = name;
  node->op_type_ = op_type;
  node->domain_ = domain;
  Node* raw = node.get();
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (outputs[k].empty()) {
      raw->outputs_.push_back(nullptr);
      continue;
    }
    Value* v = get_or_create_value(outputs[k]);
    if (v->producer_ || v->is_initializer())
      return Status(Code::kInvalidModel, fmt::format("output '{}' is already defined", outputs[k]))
          .with_context(raw->describe());
    v->producer_ = raw;
    v->producer_output_ = static_cast<int>(k);
    raw->outputs_.push_back(v);
  }
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (inputs[k].empty()) {
      raw->inputs_.push_back(nullptr);
      continue;
    }
    // A name this graph does not define may be a value of an enclosing graph.
    Value* v = find_value(inputs[k]);
    if (!v) v = resolve_value(inputs[k]);
    if (!v) v = get_or_create_value(inputs[k]);
    add_reference(v, raw, static_cast<int>(k));
    raw->inputs_.push_back(v);
  }
  nodes_.push_back(std::move(node));
  raw->position_ = std::prev(nodes_.end());
  return raw;
}

std::string Graph::unique_name(const std::string& base) {
  if (!name_taken(base)) return base;
  for (int k = 1;; ++k) {
    std::string candidate = base + "_" + std::to_string(k);
    if (!name_taken(candidate)) return candidate;
  }
}

Result<Node*> Graph::insert_node(const Node* before, const std::string& name, const std::string& op_type,
                                 const std::string& domain, const std::vector<Value*>& inputs,
                                 const std::vector<std::string>& outputs) {
  std::vector<std::string> in_names;
  for (Value* v : inputs) in_names.push_back(v ? v->name() : "");
  QONNX_ASSIGN_OR_RETURN(Node* node, add_node(name, op_type, domain, in_names, outputs));
  if (before) {
    nodes_.splice(before->position_, nodes_, node->position_);
  }
  return node;
}

Node* Graph::next_node(const Node* node) const {
  auto it = std::next(node->position_);
  return it == nodes_.end() ? nullptr : it->get();
}

void Graph::remove_node(Node* node) {
  Graph& g = *node->graph_;  // callers may hold the main graph while removing a body's node
  for (size_t k = 0; k < node->inputs_.size(); ++k)
    if (Value* v = node->inputs_[k]) g.drop_reference(v, node, static_cast<int>(k));
  for (const auto& [v, readers] : node->implicit_) g.drop_reference(v, node, kImplicitInput);
  node->implicit_.clear();
  for (Value* v : node->outputs_)
    if (v) {
      v->producer_ = nullptr;
      v->producer_output_ = -1;
    }
  if (!node->bodies_.empty()) --g.nodes_with_bodies_;
  g.nodes_.erase(node->position_);
}

void Graph::set_node_input(Node* node, size_t index, Value* value) {
  Graph& g = *node->graph_;
  if (index >= node->inputs_.size()) node->inputs_.resize(index + 1, nullptr);
  if (Value* old = node->inputs_[index]) g.drop_reference(old, node, static_cast<int>(index));
  node->inputs_[index] = value;
  if (value) g.add_reference(value, node, static_cast<int>(index));
}

void Graph::set_output_value(size_t i, Value* value) {
  Value* old = outputs_[i];
  if (old->graph_ == this) old->graph_output_ = false;
  else drop_reference(old, nullptr, -1);
  outputs_[i] = value;
  if (value->graph_ == this) value->graph_output_ = true;
  else add_reference(value, nullptr, -1);
  // The graph output keeps its declared name: `value` takes it over.
  output_info_[i]->set_name(value->name());
  type_index_stale_ = true;
}

void Graph::replace_references(Value* from, Value* to) {
  for (const auto& n : nodes_) {
    for (size_t k = 0; k < n->inputs_.size(); ++k)
      if (n->inputs_[k] == from) set_node_input(n.get(), k, to);
    bool reads_inside = false;
    for (const auto& [v, readers] : n->implicit_) reads_inside = reads_inside || v == from;
    if (reads_inside)
      for (const auto& b : n->bodies_) b.graph->replace_references(from, to);
  }
  for (size_t i = 0; i < outputs_.size(); ++i)
    if (outputs_[i] == from) set_output_value(i, to);
}

void Graph::replace_all_uses(Value* from, Value* to) {
  std::vector<Use> uses = from->uses_;
  for (const Use& u : uses) {
    if (u.input_index != kImplicitInput) {
      set_node_input(u.node, static_cast<size_t>(u.input_index), to);
      continue;
    }
    for (const auto& b : u.node->bodies_) b.graph->replace_references(from, to);
  }
  Graph& g = *from->graph_;
  for (size_t i = 0; i < g.outputs_.size(); ++i)
    if (g.outputs_[i] == from) g.set_output_value(i, to);
}

namespace {

// Decoded copies of inline data are cached for tensors up to this size only (scales, zero points,
// shapes: read often); a larger one is decoded on each access rather than kept twice in memory.
constexpr size_t kMaxCachedBytes = size_t{64} << 10;

// A new initializer's storage: inline while the spill store's budget allows, else in its scratch file.
Result<Initializer> make_initializer(Value* value, const Tensor& tensor) {
  Initializer init;
  init.value = value;
  QONNX_ASSIGN_OR_RETURN(init.proto, make_stored_proto(tensor, &init.base_dir));
  init.proto->set_name(value->name());
  if (!init.is_external() && tensor.nbytes() <= kMaxCachedBytes) init.decoded = tensor;
  return init;
}

}  // namespace

Status Graph::set_initializer(Value* value, const Tensor& tensor) {
  if (value->producer_)
    return Status(Code::kFailed, fmt::format("'{}' is produced by a node and cannot become an initializer", value->name()));
  QONNX_ASSIGN_OR_RETURN(Initializer fresh, make_initializer(value, tensor));
  if (value->is_initializer()) {
    Initializer& init = initializers_[static_cast<size_t>(value->initializer_index_)];
    // Keep the doc string; data, type and dims are new.
    if (init.proto->has_doc_string()) fresh.proto->set_doc_string(init.proto->doc_string());
    init = std::move(fresh);
    return Status::ok();
  }
  return add_initializer(std::move(fresh));
}

void Graph::remove_initializers(const std::vector<Value*>& values) {
  if (values.empty()) return;
  std::vector<bool> drop(initializers_.size(), false);
  for (Value* v : values)
    if (v && v->initializer_index_ >= 0) drop[static_cast<size_t>(v->initializer_index_)] = true;
  std::vector<Initializer> kept;
  for (size_t i = 0; i < initializers_.size(); ++i) {
    if (drop[i]) {
      initializers_[i].value->initializer_index_ = -1;
      continue;
    }
    initializers_[i].value->initializer_index_ = static_cast<int>(kept.size());
    kept.push_back(std::move(initializers_[i]));
  }
  initializers_ = std::move(kept);
  // Graph inputs that only declared a removed initializer (old IR style) go too.
  std::vector<Value*> inputs;
  std::vector<std::unique_ptr<onnx::ValueInfoProto>> infos;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    Value* v = inputs_[i];
    bool removed = std::find(values.begin(), values.end(), v) != values.end();
    if (removed && v->uses_.empty()) {
      v->graph_input_ = false;
      continue;
    }
    inputs.push_back(v);
    infos.push_back(std::move(input_info_[i]));
  }
  inputs_ = std::move(inputs);
  input_info_ = std::move(infos);
  type_index_stale_ = true;
}

std::vector<std::string> Graph::value_info_names() const {
  std::vector<std::string> names;
  for (const auto& vi : value_info_) names.push_back(vi->name());
  return names;
}

void Graph::remove_graph_input(Value* value) {
  auto it = std::find(inputs_.begin(), inputs_.end(), value);
  if (it == inputs_.end()) return;
  input_info_.erase(input_info_.begin() + (it - inputs_.begin()));
  inputs_.erase(it);
  value->graph_input_ = false;
  type_index_stale_ = true;
}

void Graph::remove_value_infos(const std::vector<std::string>& names) {
  type_index_stale_ = true;
  value_info_.erase(std::remove_if(value_info_.begin(), value_info_.end(),
                                   [&](const auto& vi) {
                                     return std::find(names.begin(), names.end(), vi->name()) != names.end();
                                   }),
                    value_info_.end());
}

Status Graph::rename_value(Value* value, const std::string& name) {
  if (name_taken(name)) return Status(Code::kFailed, fmt::format("cannot rename '{}': '{}' is taken", value->name(), name));
  if (value->graph_ != this) return value->graph_->rename_value(value, name);
  // Readers inside bodies hold the Value itself: they see the new name without an update.
  std::string old = value->name_;
  by_name_.erase(old);
  value->name_ = name;
  by_name_.emplace(name, value);
  type_index_stale_ = true;
  for (size_t i = 0; i < inputs_.size(); ++i)
    if (inputs_[i] == value) input_info_[i]->set_name(name);
  for (size_t i = 0; i < outputs_.size(); ++i)
    if (outputs_[i] == value) output_info_[i]->set_name(name);
  for (auto& vi : value_info_)
    if (vi->name() == old) vi->set_name(name);
  if (value->initializer_index_ >= 0) {
    Initializer& init = initializers_[static_cast<size_t>(value->initializer_index_)];
    auto proto = copy_stored_proto(init.proto);
    proto->set_name(name);
    init.proto = std::move(proto);
  }
  for (auto& qa : *rest_->mutable_quantization_annotation())
    if (qa.tensor_name() == old) qa.set_tensor_name(name);
  annotation_index_stale_ = true;
  // Bodies that return this value as it is declare it under its name.
  for (const auto& n : nodes_)
    for (const auto& b : n->bodies_)
      b.graph->visit_graphs([&](Graph& body) {
        for (size_t i = 0; i < body.outputs_.size(); ++i)
          if (body.outputs_[i] == value) {
            body.output_info_[i]->set_name(name);
            body.type_index_stale_ = true;
          }
      });
  return Status::ok();
}

void Graph::set_node_name(Node* node, const std::string& name) { node->name_ = name; }

int Graph::annotation_position(const std::string& tensor) const {
  if (annotation_index_stale_) {
    annotation_index_.clear();
    const auto& qas = rest_->quantization_annotation();
    for (int i = 0; i < qas.size(); ++i) annotation_index_.emplace(qas.Get(i).tensor_name(), i);
    annotation_index_stale_ = false;
  }
  auto it = annotation_index_.find(tensor);
  return it == annotation_index_.end() ? -1 : it->second;
}

std::string Graph::annotation(const std::string& tensor, const std::string& key) const {
  int pos = annotation_position(tensor);
  if (pos < 0) return "";
  for (const auto& kv : rest_->quantization_annotation(pos).quant_parameter_tensor_names())
    if (kv.key() == key) return kv.value();
  return "";
}

void Graph::set_annotation(const std::string& tensor, const std::string& key, const std::string& value) {
  int pos = annotation_position(tensor);
  onnx::TensorAnnotation* qa = nullptr;
  if (pos >= 0) {
    qa = rest_->mutable_quantization_annotation(pos);
    for (auto& kv : *qa->mutable_quant_parameter_tensor_names())
      if (kv.key() == key) {
        kv.set_value(value);
        return;
      }
  } else {
    qa = rest_->add_quantization_annotation();
    qa->set_tensor_name(tensor);
    annotation_index_.emplace(tensor, rest_->quantization_annotation_size() - 1);
  }
  auto* kv = qa->add_quant_parameter_tensor_names();
  kv->set_key(key);
  kv->set_value(value);
}

void Graph::add_input(Value* value, std::unique_ptr<onnx::ValueInfoProto> info) {
  value->graph_input_ = true;
  inputs_.push_back(value);
  input_info_.push_back(std::move(info));
  type_index_stale_ = true;
}

void Graph::add_output(Value* value, std::unique_ptr<onnx::ValueInfoProto> info) {
  // A body may return a value of an enclosing graph as it is.
  if (value->graph_ == this) value->graph_output_ = true;
  else add_reference(value, nullptr, -1);
  outputs_.push_back(value);
  output_info_.push_back(std::move(info));
  type_index_stale_ = true;
}

void Graph::add_value_info(std::unique_ptr<onnx::ValueInfoProto> info) {
  value_info_.push_back(std::move(info));
  type_index_stale_ = true;
}

const onnx::ValueInfoProto* Graph::input_info(size_t i) const { return input_info_[i].get(); }
const onnx::ValueInfoProto* Graph::output_info(size_t i) const { return output_info_[i].get(); }
onnx::ValueInfoProto* Graph::mutable_input_info(size_t i) { return input_info_[i].get(); }
onnx::ValueInfoProto* Graph::mutable_output_info(size_t i) { return output_info_[i].get(); }

Status Graph::add_initializer(Initializer init) {
  Value* v = init.value;
  if (v->is_initializer() || v->producer_)
    return Status(Code::kInvalidModel, fmt::format("initializer '{}' is defined twice", v->name()));
  v->initializer_index_ = static_cast<int>(initializers_.size());
  initializers_.push_back(std::move(init));
  return Status::ok();
}

Result<Value*> Graph::add_initializer_tensor(const std::string& name, const Tensor& tensor) {
  if (find_value(name)) return Status(Code::kFailed, fmt::format("tensor name '{}' is already used", name));
  QONNX_ASSIGN_OR_RETURN(Initializer init, make_initializer(get_or_create_value(name), tensor));
  QONNX_RETURN_IF_ERROR(add_initializer(std::move(init)));
  return find_value(name);
}

std::vector<Value*> Graph::runtime_inputs() const {
  std::vector<Value*> out;
  for (Value* v : inputs_)
    if (!v->is_initializer()) out.push_back(v);
  return out;
}

const Initializer* Graph::initializer(const Value* value) const {
  if (!value || value->initializer_index_ < 0) return nullptr;
  // A body reads initializers of enclosing graphs too.
  if (value->graph_ != this) return value->graph_->initializer(value);
  return &initializers_[static_cast<size_t>(value->initializer_index_)];
}

Result<Tensor> Graph::initializer_tensor(const Value* value) const {
  if (value && value->graph_ != this) return value->graph_->initializer_tensor(value);
  const Initializer* init = initializer(value);
  if (!init) return Status(Code::kFailed, fmt::format("'{}' is not an initializer", value ? value->name() : ""));
  if (init->decoded) return *init->decoded;
  auto t = in_scratch_file(init->base_dir) ? read_scratch_tensor(*init->proto, init->base_dir)
                                           : decode_tensor(*init->proto, init->base_dir);
  if (!t.is_ok()) return std::move(t).status().with_context(fmt::format("initializer '{}'", value->name()));
  if (!init->is_external() && t->nbytes() <= kMaxCachedBytes) init->decoded = t.value();
  return t;
}

namespace {

TypeInfo type_info_of(const onnx::ValueInfoProto& info) {
  TypeInfo t;
  if (!info.type().has_tensor_type()) return t;
  const auto& tt = info.type().tensor_type();
  t.dtype = dtype_known(tt.elem_type()) ? static_cast<DType>(tt.elem_type()) : DType::kUndefined;
  if (tt.has_shape()) {
    t.has_shape = true;
    for (const auto& d : tt.shape().dim()) {
      t.dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
      t.dim_params.push_back(d.has_dim_param() ? d.dim_param() : "");
    }
  }
  return t;
}

}  // namespace

std::optional<TypeInfo> Graph::type_of(const Value* value) const {
  if (!value) return std::nullopt;  // an omitted optional input
  if (value->graph_ && value->graph_ != this) return value->graph_->type_of(value);  // read from an enclosing graph
  return declared_type(value->name());
}

std::optional<TypeInfo> Graph::declared_type(const std::string& name) const {
  if (type_index_stale_) {
    type_index_.clear();
    // emplace keeps the first entry: inputs win over outputs, outputs over value_info.
    for (size_t i = 0; i < inputs_.size(); ++i) type_index_.emplace(inputs_[i]->name(), input_info_[i].get());
    for (size_t i = 0; i < outputs_.size(); ++i) type_index_.emplace(outputs_[i]->name(), output_info_[i].get());
    for (const auto& vi : value_info_) type_index_.emplace(vi->name(), vi.get());
    type_index_stale_ = false;
  }
  auto it = type_index_.find(name);
  if (it == type_index_.end()) return std::nullopt;
  return type_info_of(*it->second);
}

std::optional<Dims> Graph::dims_of(const Value* value) const {
  if (!value) return std::nullopt;
  if (const Initializer* init = initializer(value)) return init->dims();
  auto t = type_of(value);
  if (!t || !t->has_shape) return std::nullopt;
  return t->dims;
}

int64_t Graph::rank_of(const Value* value) const {
  auto d = dims_of(value);
  return d ? static_cast<int64_t>(d->size()) : -1;
}

Dims Initializer::dims() const { return Dims(proto->dims().begin(), proto->dims().end()); }

DType Initializer::dtype() const { return static_cast<DType>(proto->data_type()); }

bool Initializer::is_external() const { return proto->data_location() == onnx::TensorProto::EXTERNAL; }

namespace {

// The shape of a tensor type, replaced by `dims` (a negative dim is left without a value).
void set_shape(onnx::ValueInfoProto* info, const Dims& dims) {
  auto* shape = info->mutable_type()->mutable_tensor_type()->mutable_shape();
  shape->clear_dim();
  for (int64_t d : dims) {
    auto* dim = shape->add_dim();
    if (d >= 0) dim->set_dim_value(d);
  }
}

void set_dim(onnx::ValueInfoProto* info, size_t axis, int64_t value) {
  auto* shape = info->mutable_type()->mutable_tensor_type()->mutable_shape();
  if (static_cast<size_t>(shape->dim_size()) > axis) shape->mutable_dim(static_cast<int>(axis))->set_dim_value(value);
}

}  // namespace

void Graph::add_value_info(const std::string& name, DType dtype, const Dims& dims) {
  auto vi = std::make_unique<onnx::ValueInfoProto>();
  vi->set_name(name);
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(static_cast<int32_t>(dtype));
  set_shape(vi.get(), dims);
  add_value_info(std::move(vi));
}

void Graph::set_input_dim(size_t i, size_t axis, int64_t value) {
  set_dim(input_info_[i].get(), axis, value);
  type_index_stale_ = true;
}

void Graph::set_output_dim(size_t i, size_t axis, int64_t value) {
  set_dim(output_info_[i].get(), axis, value);
  type_index_stale_ = true;
}

void Graph::set_input_shape(size_t i, const Dims& dims) {
  set_shape(input_info_[i].get(), dims);
  type_index_stale_ = true;
}

Result<Node*> Graph::move_node_to_domain(Node* node, const std::string& domain) {
  Graph& g = *node->graph_;
  const onnx::NodeProto rest = *node->rest_;
  const std::string name = node->name_, op_type = node->op_type_;
  std::vector<Value*> inputs = node->inputs_;
  std::vector<std::string> outputs;
  for (const Value* v : node->outputs_) outputs.push_back(v ? v->name() : "");
  const Node* before = g.next_node(node);
  g.remove_node(node);
  QONNX_ASSIGN_OR_RETURN(Node* moved, g.insert_node(before, name, op_type, domain, inputs, outputs));
  *moved->rest_ = rest;
  return moved;
}

int Graph::remove_annotations_if(const std::function<bool(const std::string& tensor)>& stale) {
  bool any = false;
  for (const auto& qa : rest_->quantization_annotation()) any = any || stale(qa.tensor_name());
  if (!any) return 0;
  auto* annotations = rest_->mutable_quantization_annotation();
  const int before = annotations->size();
  annotations->erase(std::remove_if(annotations->begin(), annotations->end(),
                                    [&](const onnx::TensorAnnotation& qa) { return stale(qa.tensor_name()); }),
                     annotations->end());
  annotation_index_stale_ = true;
  return before - annotations->size();
}

void Graph::clone_into(Graph& dst, Node* owner, std::map<const Value*, Value*>& map) const {
  dst.owner_ = owner;
  *dst.rest_ = *rest_;
  for (const auto& v : values_) {
    auto copy = std::make_unique<Value>();
    copy->graph_ = &dst;
    copy->name_ = v->name_;
    copy->producer_output_ = v->producer_output_;
    copy->initializer_index_ = v->initializer_index_;
    copy->graph_input_ = v->graph_input_;
    copy->graph_output_ = v->graph_output_;
    copy->id_ = v->id_;
    map[v.get()] = copy.get();
    dst.by_name_.emplace(copy->name_, copy.get());
    dst.values_.push_back(std::move(copy));
  }
  auto mapped = [&](const Value* v) -> Value* { return v ? map.at(v) : nullptr; };
  std::map<const Node*, Node*> nodes;
  for (const auto& n : nodes_) {
    auto copy = std::unique_ptr<Node>(new Node());
    copy->graph_ = &dst;
    copy->name_ = n->name_;
    copy->op_type_ = n->op_type_;
    copy->domain_ = n->domain_;
    *copy->rest_ = *n->rest_;
    for (const Value* v : n->inputs_) copy->inputs_.push_back(mapped(v));
    for (const Value* v : n->outputs_) {
      copy->outputs_.push_back(mapped(v));
      if (v) copy->outputs_.back()->producer_ = copy.get();
    }
    // Bodies read values of this graph and the enclosing ones: those are mapped already.
    for (const Node::Body& b : n->bodies_) {
      auto body = std::make_unique<Graph>();
      b.graph->clone_into(*body, copy.get(), map);
      copy->bodies_.push_back(Node::Body{b.attribute, b.index, std::move(body)});
    }
    for (const auto& [v, readers] : n->implicit_) copy->implicit_.emplace_back(mapped(v), readers);
    nodes[n.get()] = copy.get();
    dst.nodes_.push_back(std::move(copy));
    dst.nodes_.back()->position_ = std::prev(dst.nodes_.end());
  }
  dst.nodes_with_bodies_ = nodes_with_bodies_;
  for (const auto& v : values_) {
    Value* copy = map.at(v.get());
    for (const Use& u : v->uses_) copy->uses_.push_back(Use{nodes.at(u.node), u.input_index});
  }
  for (const Value* v : inputs_) dst.inputs_.push_back(mapped(v));
  for (const Value* v : outputs_) dst.outputs_.push_back(mapped(v));
  for (const auto& vi : input_info_) dst.input_info_.push_back(std::make_unique<onnx::ValueInfoProto>(*vi));
  for (const auto& vi : output_info_) dst.output_info_.push_back(std::make_unique<onnx::ValueInfoProto>(*vi));
  for (const auto& vi : value_info_) dst.value_info_.push_back(std::make_unique<onnx::ValueInfoProto>(*vi));
  for (const Initializer& init : initializers_) {
    Initializer copy;
    copy.value = mapped(init.value);
    copy.proto = init.proto;  // shared: never edited in place
    copy.base_dir = init.base_dir;
    copy.external_in_source = init.external_in_source;
    // The decoded cache is not shared (a Tensor's buffer is writable); it is rebuilt on first use.
    dst.initializers_.push_back(std::move(copy));
  }
}

// ---- Model -----------------------------------------------------------------------------------

Model::Model() : header_(std::make_unique<onnx::ModelProto>()), graph_(std::make_unique<Graph>()) {}
Model::~Model() = default;
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;

Model Model::clone() const {
  Model copy;
  *copy.header_ = *header_;
  std::map<const Value*, Value*> map;
  graph_->clone_into(*copy.graph_, nullptr, map);
  copy.source_path_ = source_path_;
  copy.source_used_external_data_ = source_used_external_data_;
  return copy;
}

int64_t Model::ir_version() const { return header_->ir_version(); }

void Model::set_ir_version(int64_t version) { header_->set_ir_version(version); }

void Model::set_import_version(const std::string& domain, int64_t version) {
  for (auto& op : *header_->mutable_opset_import())
    if (canonical_domain(op.domain()) == canonical_domain(domain)) op.set_version(version);
}

void Model::remove_import(const std::string& domain) {
  auto* imports = header_->mutable_opset_import();
  for (int i = imports->size() - 1; i >= 0; --i)
    if (canonical_domain(imports->Get(i).domain()) == canonical_domain(domain)) imports->DeleteSubrange(i, 1);
}

void Model::ensure_import(const std::string& domain, int64_t version) {
  if (opset(domain)) return;
  auto* op = header_->add_opset_import();
  op->set_domain(domain);
  op->set_version(version);
}

int Model::prune_unused_imports() {
  std::vector<std::string> used;
  static_cast<const Graph&>(*graph_).visit_graphs([&](const Graph& g) {
    for (const auto& n : g.nodes()) used.push_back(canonical_domain(n->domain()));
  });
  auto* imports = header_->mutable_opset_import();
  int removed = 0;
  for (int i = imports->size() - 1; i >= 0; --i) {
    const std::string d = canonical_domain(imports->Get(i).domain());
    if (d.empty() || std::find(used.begin(), used.end(), d) != used.end() || imports->size() == 1) continue;
    imports->erase(imports->begin() + i);
    ++removed;
  }
  return removed;
}

int Model::import_used_domains() {
  int added = 0;
  for (const std::string& domain : unimported_domains()) {
    if (is_default_domain(domain)) continue;
    ensure_import(domain, op_version(domain));
    ++added;
  }
  return added;
}

void Model::set_metadata(const std::string& key, const std::string& value) {
  for (auto& kv : *header_->mutable_metadata_props())
    if (kv.key() == key) {
      kv.set_value(value);
      return;
    }
  auto* kv = header_->add_metadata_props();
  kv->set_key(key);
  kv->set_value(value);
}

std::optional<int64_t> Model::opset(const std::string& domain) const {
  for (const auto& op : header_->opset_import())
    if (canonical_domain(op.domain()) == canonical_domain(domain)) return op.version();
  return std::nullopt;
}

std::vector<std::string> Model::unimported_domains() const {
  std::vector<std::string> out;
  static_cast<const Graph&>(*graph_).visit_graphs([&](const Graph& g) {
    for (const auto& n : g.nodes())
      if (!opset(n->domain()) && std::find(out.begin(), out.end(), n->domain()) == out.end()) out.push_back(n->domain());
  });
  std::sort(out.begin(), out.end());
  return out;
}

int64_t Model::op_version(const std::string& domain) const {
  // QONNX domains are often used without an import; their ops then behave as version 1.
  return opset(domain).value_or(1);
}

}  // namespace qonnx::ir
