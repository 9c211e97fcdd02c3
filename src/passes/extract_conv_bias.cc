// extract-conv-bias: qonnx's ExtractBiasFromConv. Conv/ConvTranspose(x, W, B) becomes
// Add(Conv(x, W), B') with B' shaped [1, C, 1, ...] to broadcast over the output. B may be an initializer
// or a Quant/BipolarQuant of initializers (its input and per-channel parameters are reshaped). Any other
// bias stays in the Conv (warning).
#include <fmt/format.h>

#include "qonnx/dialect/qonnx_dialect.h"
#include "passes/passes.h"

namespace qonnx::passes {
namespace {

class ExtractConvBias : public pass::GraphPass {
 public:
  std::string name() const override { return "extract-conv-bias"; }
  std::string summary() const override {
    return "Move the bias of Conv/ConvTranspose into an Add after it (qonnx's ExtractBiasFromConv)";
  }
  Result<bool> run_on_graph(ir::Model& model, ir::Graph& g, pass::PassContext& ctx) override {
    std::vector<ir::Node*> convs;
    for (const auto& n : g.nodes())
      if ((n->op_type() == "Conv" || n->op_type() == "ConvTranspose") && ir::is_default_domain(n->domain()) && n->input(2))
        convs.push_back(n.get());
    bool changed = false;
    for (ir::Node* n : convs) {
      QONNX_ASSIGN_OR_RETURN(bool done, extract(g, n, ctx));
      changed |= done;
    }
    return changed;
  }

 private:
  // A copy of `v`'s initializer reshaped to `dims` (a fresh initializer: `v` may have other readers).
  static Result<ir::Value*> reshaped_copy(ir::Graph& g, ir::Value* v, const Dims& dims) {
    QONNX_ASSIGN_OR_RETURN(Tensor t, g.initializer_tensor(v));
    QONNX_ASSIGN_OR_RETURN(ir::Value* nv, g.add_initializer_tensor(g.unique_name(v->name() + "_bcast"), t.reshaped(dims)));
    if (std::string dt = g.finn_datatype(v->name()); !dt.empty()) g.set_finn_datatype(nv->name(), dt);
    return nv;
  }

  Result<bool> extract(ir::Graph& g, ir::Node* conv, pass::PassContext& ctx) {
    ir::Value* bias = conv->input(2);
    ir::Node* quant = bias->producer();
    const bool quantized = quant && (dialect::classify(*quant) == dialect::Op::kQuant ||
                                     dialect::classify(*quant) == dialect::Op::kBipolarQuant) &&
                           constant_inputs(g, *quant) && bias->uses().size() == 1;
    const int64_t rank = g.rank_of(conv->input(1));
    if ((!is_constant(bias) && !quantized) || rank < 3) {
      ctx.warn(conv, "bias left in place: it is neither an initializer nor a quantized initializer");
      return false;
    }
    const ir::Value* raw_bias = quantized ? quant->input(0) : bias;
    QONNX_ASSIGN_OR_RETURN(Tensor b, g.initializer_tensor(raw_bias));
    Dims dims(static_cast<size_t>(rank), 1);
    dims[1] = b.numel();
    ir::Value* add_input = bias;
    if (quantized) {
      for (size_t i = 0; i < quant->inputs().size(); ++i) {
        ir::Value* v = quant->input(i);
        if (!v || (i > 0 && g.initializer_tensor(v)->numel() != b.numel()) || (i > 0 && b.numel() == 1)) continue;
        QONNX_ASSIGN_OR_RETURN(ir::Value* nv, reshaped_copy(g, v, dims));
        g.set_node_input(quant, i, nv);
      }
      g.remove_value_infos({bias->name()});  // the quantized bias now has the broadcast shape
    } else {
      QONNX_ASSIGN_OR_RETURN(add_input, reshaped_copy(g, bias, dims));
    }
    ir::Value* out = conv->output(0);
    const std::string conv_name = conv->name();
    ir::Node* after = g.next_node(conv);
    std::vector<ir::Value*> inputs = {conv->input(0), conv->input(1)};
    QONNX_ASSIGN_OR_RETURN(ir::Node* bare, g.insert_node(conv, conv_name, conv->op_type(), conv->domain(), inputs,
                                                         {g.unique_name(out->name() + "_nobias")}));
    bare->copy_attributes_from(*conv);
    g.remove_node(conv);
    QONNX_RETURN_IF_ERROR(g.insert_node(after, conv_name.empty() ? "" : conv_name + "_bias", "Add", "",
                                        {bare->output(0), add_input}, {out->name()})
                              .status());
    ++extracted_;
    return true;
  }

  pass::Statistic extracted_{this, "extracted", "biases moved into Add nodes"};
};

}  // namespace

std::unique_ptr<pass::Pass> make_extract_conv_bias() { return std::make_unique<ExtractConvBias>(); }

}  // namespace qonnx::passes
