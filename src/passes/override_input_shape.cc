// override-input-shape: qonnx-cleanup's --override-batchsize / --override-inpsize (qonnx's
// ChangeBatchSize). batch=N sets dim 0 of the first graph input and output to N, drops every
// intermediate value_info (run infer-shapes after it) and writes N into dim 0 of every constant
// Reshape target; shape=1x3x224x224 also sets the first input's full shape (its first entry is the
// batch size).
#include <fmt/format.h>

#include "passes/passes.h"

namespace qonnx::passes {
namespace {

// "1x3x224x224" (pipeline text cannot hold commas), "(1,3,224,224)", "[1, 3, 224, 224]" or "8".
Result<std::vector<int64_t>> parse_shape(const std::string& text) {
  std::vector<int64_t> dims;
  std::string digits;
  auto flush = [&]() -> Status {
    if (digits.empty()) return Status::ok();
    if (digits.size() > 12) return Status(Code::kUsage, fmt::format("dimension '{}' too large", digits));
    dims.push_back(std::stoll(digits));
    digits.clear();
    return Status::ok();
  };
  for (char c : text) {
    if (c >= '0' && c <= '9') digits += c;
    else if (c == ',' || c == 'x' || c == ' ' || c == '(' || c == ')' || c == '[' || c == ']') QONNX_RETURN_IF_ERROR(flush());
    else return Status(Code::kUsage, fmt::format("cannot read shape '{}': expected positive integers like (1,3,224,224)", text));
  }
  QONNX_RETURN_IF_ERROR(flush());
  for (int64_t d : dims)
    if (d <= 0) return Status(Code::kUsage, fmt::format("shape '{}': dimensions must be positive", text));
  if (dims.empty()) return Status(Code::kUsage, fmt::format("shape '{}' has no dimensions", text));
  return dims;
}

class OverrideInputShape : public pass::GraphPass {
 public:
  // Main graph only: the batch size belongs to the model's own inputs and outputs, not to a body's signature.
  OverrideInputShape() : GraphPass(Bodies::kSkip) {}
  std::string name() const override { return "override-input-shape"; }
  std::string summary() const override {
    return "Set the batch size (batch=N) or the whole shape of the first graph input (shape=1x3x224x224); "
           "drops intermediate shapes and patches constant Reshape targets";
  }
  Result<bool> run_on_graph(ir::Model& model, ir::Graph& g, pass::PassContext& ctx) override {
    std::vector<int64_t> shape;
    int64_t batch = *batch_;
    if (!shape_.value().empty()) {
      QONNX_ASSIGN_OR_RETURN(shape, parse_shape(*shape_));
      batch = shape[0];
    }
    if (batch <= 0) return false;
    if (g.runtime_inputs().empty()) return Status(Code::kInvalidModel, "the graph has no input to resize");
    // The first input a caller feeds (qonnx's graph.input[0], after static inputs are removed).
    size_t first = 0;
    while (g.inputs()[first]->is_initializer()) ++first;
    g.set_input_dim(first, 0, batch);
    if (!g.outputs().empty()) g.set_output_dim(0, 0, batch);
    if (!shape.empty()) g.set_input_shape(first, shape);
    g.remove_value_infos(g.value_info_names());
    std::vector<ir::Node*> reshapes;
    for (const auto& n : g.nodes())
      if (n->op_type() == "Reshape" && ir::is_default_domain(n->domain()) && is_constant(n->input(1)))
        reshapes.push_back(n.get());
    for (ir::Node* n : reshapes) {
      QONNX_ASSIGN_OR_RETURN(Tensor target, g.initializer_tensor(n->input(1)));
      if (target.dtype() != DType::kInt64 || target.numel() == 0 || target.data<int64_t>()[0] == batch) continue;
      Tensor patched = target.clone();
      patched.data<int64_t>()[0] = batch;
      QONNX_ASSIGN_OR_RETURN(ir::Value* v, g.add_initializer_tensor(g.unique_name(n->input(1)->name() + "_batch"), patched));
      g.set_node_input(n, 1, v);
      ++reshapes_patched_;
    }
    return true;
  }

 private:
  pass::Option<int64_t> batch_{this, "batch", 0, "batch size for the first input and output (0: unchanged)"};
  pass::Option<std::string> shape_{this, "shape", "", "full shape of the first input, e.g. 1x3x224x224"};
  pass::Statistic reshapes_patched_{this, "reshapes-patched", "constant Reshape targets given the new batch size"};
};

}  // namespace

std::unique_ptr<pass::Pass> make_override_input_shape() { return std::make_unique<OverrideInputShape>(); }

}  // namespace qonnx::passes
