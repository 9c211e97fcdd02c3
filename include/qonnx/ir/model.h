// The owned IR: a Model with header fields kept verbatim, a Graph of Nodes linked through Values
// (producer and uses), initializers decoded lazily. If/Loop/Scan bodies (GRAPH attributes) are IR
// Graphs owned by their node; a body reads values of enclosing graphs directly (the Value* of the
// outer graph), and each such outer value counts the owning node of its own graph as a use
// (input_index kImplicitInput), like onnxruntime's implicit inputs. Protobuf types appear only as opaque
// "rest" messages that keep whatever the IR does not model, so a load -> save round trip is lossless.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "qonnx/support/status.h"
#include "qonnx/tensor.h"

namespace onnx {
class ModelProto;
class GraphProto;
class NodeProto;
class TensorProto;
class ValueInfoProto;
class AttributeProto;
}  // namespace onnx

namespace qonnx::ir {

class Node;
class Graph;

// "" and "ai.onnx" are the same domain.
bool is_default_domain(const std::string& domain);
std::string canonical_domain(const std::string& domain);

// A use whose node does not read the value as an input but inside one of its bodies.
constexpr int kImplicitInput = -1;

struct Use {
  Node* node;
  int input_index;  // kImplicitInput: read inside the node's bodies
};

// Known element type and dims of a value (from graph inputs/outputs/value_info).
struct TypeInfo {
  DType dtype = DType::kUndefined;
  bool has_shape = false;
  std::vector<int64_t> dims;          // -1 for symbolic or unknown dims
  std::vector<std::string> dim_params;  // symbolic names, "" where numeric
};

class Value {
 public:
  const std::string& name() const { return name_; }
  Node* producer() const { return producer_; }
  int producer_output() const { return producer_output_; }
  const std::vector<Use>& uses() const { return uses_; }
  bool is_initializer() const { return initializer_index_ >= 0; }
  bool is_graph_input() const { return graph_input_; }
  bool is_graph_output() const { return graph_output_; }
  int id() const { return id_; }
  // The graph that defines this value (its scope); ids are per graph.
  Graph* graph() const { return graph_; }

 private:
  friend class Graph;
  friend class Node;
  Graph* graph_ = nullptr;
  std::string name_;
  Node* producer_ = nullptr;
  int producer_output_ = -1;
  std::vector<Use> uses_;
  int initializer_index_ = -1;
  bool graph_input_ = false;
  bool graph_output_ = false;
  int id_ = -1;
};

namespace detail {
template <class T>
struct AttrArg {
  using type = T;  // a non-deduced context: attr<T>(name, fallback) needs T spelled out
};
template <class T>
constexpr bool is_attr_type = std::is_same_v<T, int64_t> || std::is_same_v<T, float> || std::is_same_v<T, bool> ||
                              std::is_same_v<T, std::string> || std::is_same_v<T, std::vector<int64_t>> ||
                              std::is_same_v<T, std::vector<float>> || std::is_same_v<T, std::vector<std::string>>;
}  // namespace detail

class Node {
 public:
  ~Node();
  const std::string& name() const { return name_; }
  const std::string& op_type() const { return op_type_; }
  const std::string& domain() const { return domain_; }
  // Inputs may be nullptr for omitted optional inputs ("" in ONNX).
  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  Value* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  Value* output(size_t i) const { return i < outputs_.size() ? outputs_[i] : nullptr; }
  // The graph this node belongs to.
  Graph* graph() const { return graph_; }

  // Bodies held by GRAPH (index -1) and GRAPHS (index k) attributes, in attribute order.
  struct Body {
    std::string attribute;
    int index = -1;
    std::unique_ptr<Graph> graph;
  };
  const std::vector<Body>& bodies() const { return bodies_; }
  // The body of a GRAPH attribute, nullptr when absent.
  Graph* body(const std::string& attribute) const;
  // Values of enclosing graphs read anywhere inside the bodies (first-read order).
  std::vector<Value*> implicit_inputs() const;

  // "node 'Quant_0' (qonnx.custom_op.general::Quant)" for error contexts.
  std::string describe() const;

  bool has_attr(const std::string& name) const;
  // Typed attribute reading, the one API for kernels, passes and analyses. T is one of int64_t
  // (INT), float (FLOAT), bool (an INT flag: non-zero is true), std::string (STRING),
  // std::vector<int64_t> (INTS), std::vector<float> (FLOATS), std::vector<std::string> (STRINGS).
  // No INT <-> FLOAT coercion: an attribute of another type is an error naming it ("attribute
  // 'axis' must be INT, got FLOAT"); an attribute without a type (as some old exporters wrote it)
  // is read as the wanted one.
  // attr<T>(name): error when absent ("missing attribute 'axis'").
  template <class T>
  Result<T> attr(const std::string& name) const {
    static_assert(detail::is_attr_type<T>, "Node::attr<T>: T must be an attribute type");
    T out{};
    QONNX_RETURN_IF_ERROR(read_attr(name, /*required=*/true, out));
    return out;
  }
  // attr<T>(name, fallback): `fallback` when absent (T is spelled out: attr<int64_t>("axis", 1)).
  template <class T>
  Result<T> attr(const std::string& name, const typename detail::AttrArg<T>::type& fallback) const {
    static_assert(detail::is_attr_type<T>, "Node::attr<T>: T must be an attribute type");
    T out = fallback;
    QONNX_RETURN_IF_ERROR(read_attr(name, /*required=*/false, out));
    return out;
  }
  // Lenient readers kept for values the IR itself writes: no type check, `fallback` when absent.
  std::string attr_string(const std::string& name, const std::string& fallback) const;
  std::vector<int64_t> attr_ints(const std::string& name, const std::vector<int64_t>& fallback = {}) const;
  std::vector<float> attr_floats(const std::string& name, const std::vector<float>& fallback = {}) const;
  std::vector<std::string> attr_strings(const std::string& name) const;
  // A TYPE_PROTO attribute (Optional's `type`): a tensor or a sequence of tensors (the kind) and its
  // element type; an error naming the attribute when it is missing or any other type.
  Result<std::pair<ValueKind, DType>> attr_value_type(const std::string& name) const;
  // Tensor-valued attribute (e.g. Constant 'value'); error when missing or malformed.
  Result<Tensor> attr_tensor(const std::string& name) const;
  // Names of all attributes in stored order.
  std::vector<std::string> attr_names() const;
  // The attribute's ONNX AttributeProto type number, or 0 when absent.
  int attr_type(const std::string& name) const;

  // Typed setters: an attribute of that name is replaced (it keeps its position), else appended.
  // Integral values are INT (bool: 0/1), floating-point values FLOAT.
  void set_attr(const std::string& name, int64_t value);
  void set_attr(const std::string& name, float value);
  void set_attr(const std::string& name, const std::string& value);
  void set_attr(const std::string& name, const char* value) { set_attr(name, std::string(value)); }
  void set_attr(const std::string& name, const std::vector<int64_t>& value);
  void set_attr(const std::string& name, const std::vector<float>& value);
  void set_attr(const std::string& name, const std::vector<std::string>& value);
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, int64_t>, int> = 0>
  void set_attr(const std::string& name, T value) {
    set_attr(name, static_cast<int64_t>(value));
  }
  template <class T, std::enable_if_t<std::is_floating_point_v<T> && !std::is_same_v<T, float>, int> = 0>
  void set_attr(const std::string& name, T value) {
    set_attr(name, static_cast<float>(value));
  }
  void remove_attr(const std::string& name);
  // Replaces this node's attributes by a copy of `other`'s.
  void copy_attributes_from(const Node& other);

  // Attributes other than bodies; a body attribute keeps its name and type, its graph lives in bodies().
  const onnx::NodeProto& rest() const { return *rest_; }
  onnx::NodeProto& mutable_rest() { return *rest_; }

 private:
  // Reads attribute `name` into `out` (left alone when absent and not required).
  Status read_attr(const std::string& name, bool required, int64_t& out) const;
  Status read_attr(const std::string& name, bool required, float& out) const;
  Status read_attr(const std::string& name, bool required, bool& out) const;
  Status read_attr(const std::string& name, bool required, std::string& out) const;
  Status read_attr(const std::string& name, bool required, std::vector<int64_t>& out) const;
  Status read_attr(const std::string& name, bool required, std::vector<float>& out) const;
  Status read_attr(const std::string& name, bool required, std::vector<std::string>& out) const;
  friend class Graph;
  Node();
  // A reader inside the bodies starts / stops reading `value` of an enclosing graph.
  void capture(Value* value);
  void release(Value* value);
  Graph* graph_ = nullptr;
  std::vector<Body> bodies_;
  std::vector<std::pair<Value*, int>> implicit_;  // value, number of readers inside the bodies
  std::string name_, op_type_, domain_;
  std::list<std::unique_ptr<Node>>::iterator position_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  // Attributes, doc_string and unknown fields; input/output/name/op_type/domain are cleared.
  std::unique_ptr<onnx::NodeProto> rest_;
};

// One initializer. Its TensorProto is kept until the data is replaced, so untouched weights are
// written back exactly as they came (same encoding, same fields).
// Data lives in the proto (inline), or in a file slice it references (external data of the model,
// or a pass's large result spilled to a scratch file). External data is read on each access and not
// cached, so a multi-GB model never sits in memory whole.
struct Initializer {
  Value* value = nullptr;
  std::shared_ptr<onnx::TensorProto> proto;
  std::filesystem::path base_dir;  // for external data
  bool external_in_source = false;  // came from the loaded model's external data
  mutable std::optional<Tensor> decoded;  // cache, inline data only

  // The stored header, without reading the data.
  Dims dims() const;
  DType dtype() const;
  // The data lives in a file (the model's external data or the spill store), not in the proto.
  bool is_external() const;
};

class Graph {
 public:
  Graph();
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Nodes in stored order (a list: passes insert and erase in O(1)).
  const std::list<std::unique_ptr<Node>>& nodes() const { return nodes_; }
  size_t node_count() const { return nodes_.size(); }
  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  const std::vector<Initializer>& initializers() const { return initializers_; }
  // Values by name (sorted map: deterministic, never unordered), defined in this graph.
  Value* find_value(const std::string& name) const;
  // The value `name` visible here: this graph's, else the nearest enclosing graph's (lexical scope).
  Value* resolve_value(const std::string& name) const;
  // The node whose body this graph is (nullptr for the main graph) and its graph.
  Node* owner() const { return owner_; }
  Graph* parent() const;
  // This graph and every body nested in it, parents before their bodies.
  void visit_graphs(const std::function<void(Graph&)>& fn);
  void visit_graphs(const std::function<void(const Graph&)>& fn) const;
  size_t value_count() const { return values_.size(); }

  // Graph inputs that are not initializers (the ones a caller must feed).
  std::vector<Value*> runtime_inputs() const;
  // Declared type of a value from inputs, outputs or value_info.
  std::optional<TypeInfo> type_of(const Value* value) const;
  // The same by name, for a value_info entry no value of the graph has (stale declarations).
  std::optional<TypeInfo> declared_type(const std::string& name) const;
  // The value's dims: an initializer's stored dims (its data is not read), else its declared shape
  // (-1 for a symbolic or unknown dim); nullopt when neither is known (or `value` is null).
  std::optional<Dims> dims_of(const Value* value) const;
  // The size of dims_of, -1 when unknown.
  int64_t rank_of(const Value* value) const;

  // Initializer data, decoded on first use.
  Result<Tensor> initializer_tensor(const Value* value) const;
  const Initializer* initializer(const Value* value) const;

  // Building.
  Value* get_or_create_value(const std::string& name);
  Result<Node*> add_node(const std::string& name, const std::string& op_type, const std::string& domain,
                         const std::vector<std::string>& inputs, const std::vector<std::string>& outputs);
  void add_input(Value* value, std::unique_ptr<onnx::ValueInfoProto> info);
  void add_output(Value* value, std::unique_ptr<onnx::ValueInfoProto> info);
  void add_value_info(std::unique_ptr<onnx::ValueInfoProto> info);
  Status add_initializer(Initializer init);
  // Adds an empty body to `node` (a node of this graph) for its GRAPH attribute (index -1) or GRAPHS entry.
  Graph* add_body(Node* node, const std::string& attribute, int index = -1);
  // Adds a fresh initializer holding `tensor` under `name` (which must be new).
  Result<Value*> add_initializer_tensor(const std::string& name, const Tensor& tensor);

  // ---- Mutation (used by passes) ----
  // A name not used by any value of the model (all graphs, bodies included): `base`, else base_1, ...
  std::string unique_name(const std::string& base);
  // Inserts a node before `before` (nullptr: at the end). Outputs must be new names.
  Result<Node*> insert_node(const Node* before, const std::string& name, const std::string& op_type,
                            const std::string& domain, const std::vector<Value*>& inputs,
                            const std::vector<std::string>& outputs);
  // The node stored after `node` (nullptr at the end): an insertion point that survives removing `node`.
  Node* next_node(const Node* node) const;
  // Removes a node: its input uses are dropped, its outputs lose their producer.
  void remove_node(Node* node);
  void set_node_input(Node* node, size_t index, Value* value);
  // Every use of `from` (node inputs, graph outputs, readers inside bodies) now reads `to`.
  void replace_all_uses(Value* from, Value* to);
  // Makes `value` an initializer holding `tensor` (its producer, if any, must be removed first).
  Status set_initializer(Value* value, const Tensor& tensor);
  // Removes initializers (and the graph inputs that only declared them); values stay, unused.
  void remove_initializers(const std::vector<Value*>& values);
  // Stops listing `value` as a graph input; an initializer stays an initializer (a plain constant).
  void remove_graph_input(Value* value);
  void remove_value_infos(const std::vector<std::string>& names);
  // Adds a tensor value_info `name`: element type `dtype`, shape `dims` (a negative dim is unknown).
  void add_value_info(const std::string& name, DType dtype, const Dims& dims);
  // The declared shape of graph input / output i: dim `axis` set to `value` when the shape has that
  // dim (a declared type without a shape gets an empty one), or the whole shape replaced by `dims`
  // (a negative dim is unknown).
  void set_input_dim(size_t i, size_t axis, int64_t value);
  void set_output_dim(size_t i, size_t axis, int64_t value);
  void set_input_shape(size_t i, const Dims& dims);
  // The same node (name, inputs, outputs, attributes, doc string, position) under another domain. It is
  // inserted anew: the returned node replaces `node` (now gone) and is the last use of its inputs.
  Result<Node*> move_node_to_domain(Node* node, const std::string& domain);
  // Renames a value everywhere, bodies included (the name must be free in the whole model).
  Status rename_value(Value* value, const std::string& name);
  void set_node_name(Node* node, const std::string& name);

  // The value under `key` in the tensor's quantization annotation ("" when none); setting adds the
  // annotation or the key as needed. Indexed: O(log n) per call.
  std::string annotation(const std::string& tensor, const std::string& key) const;
  void set_annotation(const std::string& tensor, const std::string& key, const std::string& value);
  // Removes the quantization annotations of the tensors `stale` selects, in place; returns how many.
  int remove_annotations_if(const std::function<bool(const std::string& tensor)>& stale);
  // qonnx's finn_datatype annotation of a tensor ("" when none).
  std::string finn_datatype(const std::string& tensor) const { return annotation(tensor, "finn_datatype"); }
  void set_finn_datatype(const std::string& tensor, const std::string& datatype) {
    set_annotation(tensor, "finn_datatype", datatype);
  }

  // Value infos (graph input/output/value_info protos), by value name.
  const onnx::ValueInfoProto* input_info(size_t i) const;
  const onnx::ValueInfoProto* output_info(size_t i) const;
  // The declared type of graph input / output i, for a pass that changes it (override-input-shape,
  // to-channels-last's channels-last inputs); type_of reads the edited proto.
  onnx::ValueInfoProto* mutable_input_info(size_t i);
  onnx::ValueInfoProto* mutable_output_info(size_t i);
  const std::vector<std::unique_ptr<onnx::ValueInfoProto>>& value_infos() const { return value_info_; }
  std::vector<std::string> value_info_names() const;

  const onnx::GraphProto& rest() const { return *rest_; }
  onnx::GraphProto& mutable_rest() {
    annotation_index_stale_ = true;  // the caller may edit annotations
    return *rest_;
  }

 private:
  friend class Node;
  friend class Model;
  // Deep copy of this graph into the empty `dst` (owned by `owner`, nullptr for a main graph); `map`
  // takes this graph's values to dst's and already holds those of the enclosing graphs.
  void clone_into(Graph& dst, Node* owner, std::map<const Value*, Value*>& map) const;
  // A reader of this graph (node input `index`, or a graph output when `reader` is null) starts /
  // stops reading `value`; values of enclosing graphs are recorded on the owner node instead.
  void add_reference(Value* value, Node* reader, int index);
  void drop_reference(Value* value, Node* reader, int index);
  // Readers of `from` inside this graph (and its bodies) read `to` instead.
  void replace_references(Value* from, Value* to);
  void set_output_value(size_t i, Value* value);
  bool name_taken(const std::string& name) const;
  Node* owner_ = nullptr;
  std::list<std::unique_ptr<Node>> nodes_;
  int nodes_with_bodies_ = 0;  // so that walking the bodies of a flat graph costs nothing
  std::vector<std::unique_ptr<Value>> values_;
  std::map<std::string, Value*> by_name_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  std::vector<std::unique_ptr<onnx::ValueInfoProto>> input_info_;
  std::vector<std::unique_ptr<onnx::ValueInfoProto>> output_info_;
  std::vector<std::unique_ptr<onnx::ValueInfoProto>> value_info_;
  std::vector<Initializer> initializers_;
  // name, doc_string, sparse_initializer, quantization_annotation and unknown fields.
  std::unique_ptr<onnx::GraphProto> rest_;
  // Value name -> its declared type (inputs first, then outputs, then value_info), rebuilt lazily
  // after any change to those lists so type_of stays O(log n).
  mutable std::map<std::string, const onnx::ValueInfoProto*> type_index_;
  mutable bool type_index_stale_ = true;
  // Tensor name -> position in quantization_annotation (first entry), rebuilt after renames.
  mutable std::map<std::string, int> annotation_index_;
  mutable bool annotation_index_stale_ = true;
  int annotation_position(const std::string& tensor) const;
};

class Model {
 public:
  Model();
  ~Model();
  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;

  Graph& graph() { return *graph_; }
  const Graph& graph() const { return *graph_; }

  // A deep copy: header, graphs, bodies, nodes, values (same names, ids and use order), value infos,
  // annotations. Initializer data is shared, not copied: a stored TensorProto is never edited in place
  // (replacing or renaming an initializer makes a new one) and external / spilled files are read-only.
  Model clone() const;

  int64_t ir_version() const;
  void set_ir_version(int64_t version);

  // Version imported for a domain ("" and "ai.onnx" are one); nullopt when not imported.
  std::optional<int64_t> opset(const std::string& domain) const;
  // Domains used by nodes but missing from opset_import (common in QONNX exports), sorted.
  std::vector<std::string> unimported_domains() const;
  // Version used to pick kernels: the import, or 1 for QONNX domains that are not imported.
  int64_t op_version(const std::string& domain) const;

  // Everything of ModelProto except the graph.
  const onnx::ModelProto& header() const { return *header_; }
  onnx::ModelProto& mutable_header() { return *header_; }

  // Adds an opset import for `domain` unless it has one.
  void ensure_import(const std::string& domain, int64_t version);
  // Sets the version of every import of `domain` ("" and "ai.onnx" are one); none added.
  void set_import_version(const std::string& domain, int64_t version);
  // Removes every import of `domain`.
  void remove_import(const std::string& domain);
  // Drops opset imports of non-default domains no node uses, but never the last import (a model needs
  // one); returns how many.
  int prune_unused_imports();
  // Adds an import for every non-default domain nodes use without one, at the version its ops run at
  // (op_version: 1); returns how many.
  int import_used_domains();
  // Sets (or replaces) a metadata_props entry.
  void set_metadata(const std::string& key, const std::string& value);

  // Whether the loaded file kept tensors in external data (saving with `auto` keeps doing so).
  bool source_used_external_data() const { return source_used_external_data_; }
  void set_source_used_external_data(bool v) { source_used_external_data_ = v; }

  const std::filesystem::path& source_path() const { return source_path_; }
  void set_source_path(std::filesystem::path p) { source_path_ = std::move(p); }

 private:
  std::unique_ptr<onnx::ModelProto> header_;
  std::unique_ptr<Graph> graph_;
  std::filesystem::path source_path_;
  bool source_used_external_data_ = false;
};

}  // namespace qonnx::ir
