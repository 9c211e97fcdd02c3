// hls4ml-support: reports, without changing anything, every node hls4ml's ONNX front end will not take,
// naming the node and why, and how hls4ml will read each quantizer it does take. Last in
// `convert --target hls4ml`. The rules are those of hls4ml's converter (hls4ml/converters/onnx_to_hls.py,
// converters/onnx/*.py) and of the optimizer passes of its `parse_qonnx` flow (quant_opt.py,
// bipolar_quant_opt.py, matmul_const_to_dense.py, conv_to_convxd.py, conv_to_depthwiseconvxd.py,
// pad_const.py, reshape_const.py, batchnorm_opt.py); docs/hls4ml.md lists them.
//  - hls4ml dispatches on the op type alone (any domain) and stops at the first op it has no handler for;
//  - it looks up a declared shape (value_info, graph input or output) for every input of every node,
//    initializers included, and drops the first (batch) dimension;
//  - Conv, MaxPool, AveragePool and BatchNormalization on more than 2-D data must be the
//    qonnx.custom_op.channels_last forms; their attributes are read without defaults (explicit-attributes,
//    before this pass in the target, writes them out); 1-D pooling fails in hls4ml's handler;
//  - GlobalAveragePool/GlobalMaxPool: hls4ml takes the channel count from dimension 1 (ONNX's
//    channels-first layout) but pools the data as channels-last, so it is right only with one channel
//    or one position;
//  - Quant needs constant parameters, a scalar bit width and rounding_mode ROUND or FLOOR spelled out;
//    it reads absent `signed`/`narrow` as 0 (QONNX's default for `signed` is 1), narrow only when signed;
//  - MatMul and Conv need constant weights (an initializer, or a quantizer of one);
//  - Resize's mode is read without a default and must be nearest; Elu/ThresholdedRelu's alpha defaults to
//    0.01 in hls4ml, 1.0 in ONNX; Flatten always flattens after the first dimension.
// Warnings (one per problem, with the node) and the `unsupported` statistic say what hls4ml refuses;
// one note per quantizer says which fixed-point type hls4ml makes of it.
#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/exec/dtype_dispatch.h"
#include "qonnx/quant/params.h"
#include "passes/passes.h"

namespace qonnx::passes {
namespace {

// hls4ml's ONNX handlers (converters/onnx/*.py) and the ops it skips (Dropout, Identity), by op type.
const std::set<std::string>& handled_op_types() {
  static const std::set<std::string> kOps = {
      "MatMul", "Relu", "Tanh", "Sigmoid", "LeakyRelu", "ThresholdedRelu", "Elu", "Selu", "PRelu", "Softmax", "Softsign",
      "Softplus", "BatchNormalization", "Conv", "Add", "Sub", "Mul", "Div", "Max", "Min", "Concat", "Sum", "AveragePool",
      "MaxPool", "GlobalMaxPool", "GlobalAveragePool", "Transpose", "Reshape", "Flatten", "Resize", "Pad", "Dropout",
      "Identity"};
  return kOps;
}

bool is_merge(const std::string& op) {
  return op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Max" || op == "Min" || op == "Sum" ||
         op == "Concat";
}

// An INT attribute, `fallback` when absent or not an integer (the checker reports malformed attributes).
int64_t int_attr(const ir::Node& n, const std::string& name, int64_t fallback) {
  auto v = n.attr<int64_t>(name, fallback);
  return v.is_ok() ? v.value() : fallback;
}

// A value hls4ml sees as a Constant layer: an initializer, or a quantizer of one (fused into the constant).
bool is_constant_weight(const ir::Value* v) {
  if (!v) return false;
  if (v->is_initializer()) return true;
  const ir::Node* p = v->producer();
  if (!p) return false;
  const dialect::Op op = dialect::classify(*p);
  return (op == dialect::Op::kQuant || op == dialect::Op::kBipolarQuant) && p->input(0) && p->input(0)->is_initializer();
}

class Hls4mlSupport : public pass::GraphPass {
 public:
  // hls4ml's front end reads the main graph only (If/Loop/Scan are ops it has no handler for).
  Hls4mlSupport() : GraphPass(Bodies::kSkip) {}
  std::string name() const override { return "hls4ml-support"; }
  std::string summary() const override {
    return "Report (warnings, `unsupported`) every node hls4ml's ONNX front end will not take and why, and how it reads "
           "each quantizer (notes); changes nothing";
  }
  Result<bool> run_on_graph(ir::Model& model, ir::Graph& g, pass::PassContext& ctx) override {
    for (const ir::Value* in : g.runtime_inputs()) check_graph_input(g, in, ctx);
    for (const auto& n : g.nodes()) {
      std::vector<std::string> problems = check(g, *n, ctx);
      if (problems.empty()) continue;
      ++unsupported_;
      for (const std::string& p : problems) ctx.warn(n.get(), "hls4ml: " + p);
    }
    return false;
  }

 private:
  // hls4ml's input layer takes the declared shape without its first (batch) dimension.
  static void check_graph_input(const ir::Graph& g, const ir::Value* in, pass::PassContext& ctx) {
    auto dims = g.dims_of(in);
    std::string why;
    if (in->name() == "input") why = "a layer may not be named 'input' in hls4ml";
    else if (!dims || dims->empty()) why = "its shape is not declared";
    else if (std::any_of(dims->begin() + 1, dims->end(), [](int64_t d) { return d <= 0; }))
      why = fmt::format("shape {} has unknown dimensions after the batch dimension", dims_to_string(*dims));
    if (!why.empty()) ctx.warn(nullptr, fmt::format("hls4ml: graph input '{}': {}", in->name(), why));
  }

  std::vector<std::string> check(const ir::Graph& g, const ir::Node& n, pass::PassContext& ctx) {
    std::vector<std::string> out;
    const dialect::Op qop = dialect::classify(n);
    const std::string& op = n.op_type();
    const bool quantizer = qop == dialect::Op::kQuant || qop == dialect::Op::kBipolarQuant;
    if (!quantizer && !handled_op_types().count(op)) {
      out.push_back(fmt::format("no handler for {} (hls4ml stops with 'Unsupported operation type')", op));
      return out;
    }
    if (n.name() == "input") out.push_back("a layer may not be named 'input' in hls4ml");
    const bool skipped = op == "Dropout" || op == "Identity";
    for (size_t i = 0; i < n.inputs().size() && !skipped; ++i) {
      const ir::Value* v = n.input(i);
      if (!v) {
        out.push_back(fmt::format("input #{} is omitted: hls4ml looks up a shape for every input name, the empty one too", i));
        continue;
      }
      auto dims = g.type_of(v) ? g.dims_of(v) : std::nullopt;
      if (!dims) out.push_back(fmt::format("input #{} '{}' has no declared shape (hls4ml reads value_info, graph inputs and outputs)", i, v->name()));
    }
    if (qop == dialect::Op::kQuant) check_quant(g, n, ctx, out);
    else if (qop == dialect::Op::kBipolarQuant) check_bipolar(n, ctx, out);
    else if (op == "Conv" || op == "MaxPool" || op == "AveragePool") check_window(g, n, qop, out);
    else if (op == "BatchNormalization") {
      if (g.rank_of(n.input(0)) != 2 && qop != dialect::Op::kChannelsLastBatchNormalization)
        out.push_back("BatchNormalization on data of rank other than 2 must be channels-last (qonnx.custom_op.channels_last)");
      for (size_t i = 1; i < 5; ++i)
        if (!n.input(i) || !n.input(i)->is_initializer()) out.push_back(fmt::format("input #{} is not an initializer", i));
    } else if (is_merge(op)) {
      if (n.inputs().size() > 2) out.push_back(fmt::format("{} of {} tensors (hls4ml merges two)", op, n.inputs().size()));
      if (op == "Concat" && g.rank_of(n.output(0)) > 4) out.push_back("Concat of rank above 3 without the batch dimension");
    } else if (op == "MatMul") {
      if (!is_constant_weight(n.input(1)))
        out.push_back("input #1 is not constant: hls4ml makes a Dense layer of a MatMul by a constant (an initializer or a quantizer of one) only");
    } else if (op == "Transpose") {
      if (!n.has_attr("perm")) out.push_back("attribute perm is absent (hls4ml reads it without a default)");
    } else if (op == "Reshape" || op == "Resize") {
      for (size_t i = 1; i < n.inputs().size(); ++i)
        if (n.input(i) && !n.input(i)->is_initializer()) out.push_back(fmt::format("input #{} is not an initializer", i));
      if (op == "Resize" && !n.has_attr("mode")) out.push_back("attribute mode is absent (hls4ml reads it without a default)");
      else if (op == "Resize" && n.attr_string("mode", "") != "nearest")
        out.push_back(fmt::format("mode {}: hls4ml's Resize takes 'nearest' (and 'bilinear', a name ONNX does not use)",
                                  n.attr_string("mode", "")));
    } else if (op == "Elu" || op == "ThresholdedRelu") {
      if (!n.has_attr("alpha")) out.push_back("alpha is absent: ONNX's default is 1.0, hls4ml's 0.01");
    } else if (op == "Flatten") {
      if (!flattens_after_first(g, n)) out.push_back("hls4ml flattens every dimension after the first, this Flatten does not");
    } else if (op == "GlobalAveragePool" || op == "GlobalMaxPool") {
      check_global_pool(g, n, out);
    } else if (op == "Pad") {
      check_pad(g, n, out);
    }
    return out;
  }

  static void check_window(const ir::Graph& g, const ir::Node& n, dialect::Op qop, std::vector<std::string>& out) {
    const bool conv = n.op_type() == "Conv";
    const bool channels_last = qop == dialect::Op::kChannelsLastConv || qop == dialect::Op::kChannelsLastMaxPool;
    if (!channels_last)
      out.push_back(fmt::format("{} must be channels-last (qonnx.custom_op.channels_last){}", n.op_type(),
                                n.op_type() == "AveragePool" ? ", which QONNX defines for Conv, MaxPool and BatchNormalization only" : ""));
    const int64_t rank = g.rank_of(n.input(0));
    if (rank < 0) out.push_back("the rank of input #0 is unknown (hls4ml takes 1-D and 2-D windows)");
    else if (rank != 3 && rank != 4) out.push_back(fmt::format("{}-D windows: hls4ml takes 1-D and 2-D ones", rank - 2));
    else if (rank == 3 && !conv)
      out.push_back("1-D pooling: hls4ml's handler sets no pad_left/pad_right, which its Pooling1D layer requires, and "
                    "takes the channel count from dimension 1, the width of channels-last data");
    std::vector<std::string> required = {"kernel_shape", "strides", "pads"};
    if (conv) required.insert(required.end(), {"dilations", "group"});
    for (const std::string& a : required)
      if (!n.has_attr(a)) out.push_back(fmt::format("attribute {} is absent (hls4ml reads it without a default)", a));
    if (n.attr_string("auto_pad", "NOTSET") != "NOTSET") out.push_back("auto_pad is not supported by hls4ml (explicit pads are)");
    if (!conv && int_attr(n, "ceil_mode", 0) != 0)
      out.push_back("ceil_mode=1: hls4ml computes the output size with floor");
    if (!conv) return;
    if (!is_constant_weight(n.input(1))) out.push_back("weight (input #1) is not constant");
    if (n.input(2) && !is_constant_weight(n.input(2))) out.push_back("bias (input #2) is not constant");
    const int64_t group = int_attr(n, "group", 1);
    auto x = g.dims_of(n.input(0));
    const int64_t channels = x && !x->empty() ? x->back() : -1;  // channels-last data
    if (group != 1 && group != channels)
      out.push_back(fmt::format("group {} of {} channels: hls4ml has layers for group 1 and depthwise (group = channels) only", group, channels));
  }

  // Whether Flatten's result is (d0, d1 * d2 * ...), what hls4ml makes of every Flatten: axis 1, or an
  // axis whose leading dimensions other than d0 are 1 (axis 0 of a batch of 1, as Keras exports write it).
  static bool flattens_after_first(const ir::Graph& g, const ir::Node& n) {
    const int64_t axis = int_attr(n, "axis", 1);
    if (axis == 1) return true;
    auto dims = g.dims_of(n.input(0));
    if (!dims || dims->empty()) return false;
    const int64_t rank = static_cast<int64_t>(dims->size());
    const int64_t a = axis < 0 ? axis + rank : axis;
    if (a == 0) return (*dims)[0] == 1;
    for (int64_t d = 1; d < a && d < rank; ++d)
      if ((*dims)[static_cast<size_t>(d)] != 1) return false;
    return true;
  }

  // hls4ml labels the layer channels-last and pools element (position * C + channel), with C read from
  // dimension 1 as ONNX's channels-first layout has it: the data it pools is channels-first (a graph input
  // or a Transpose hls4ml carries out), so the two orders agree only when C or the positions are 1.
  static void check_global_pool(const ir::Graph& g, const ir::Node& n, std::vector<std::string>& out) {
    auto dims = g.dims_of(n.input(0));
    if (!dims) return;  // no declared shape: reported above
    if (dims->size() != 3 && dims->size() != 4) {
      out.push_back(fmt::format("rank {}: hls4ml takes 1-D and 2-D global pooling", dims->size()));
      return;
    }
    int64_t positions = 1;
    for (size_t d = 2; d < dims->size(); ++d) positions = (*dims)[d] < 0 || positions < 0 ? -1 : positions * (*dims)[d];
    if ((*dims)[1] == 1 || positions == 1) return;
    out.push_back(fmt::format("hls4ml takes dimension 1 of {} as the channels (channels-first, as ONNX defines the op) but "
                              "pools the data in channels-last order (element position * channels + channel): it pools "
                              "the wrong elements unless there is one channel or one position",
                              dims_to_string(*dims)));
  }

  static void check_pad(const ir::Graph& g, const ir::Node& n, std::vector<std::string>& out) {
    if (std::string mode = n.attr_string("mode", "constant"); mode != "constant") out.push_back(fmt::format("mode {} (hls4ml pads with zeros)", mode));
    if (!n.input(1) || !n.input(1)->is_initializer()) out.push_back("pads (input #1) is not an initializer");
    if (const ir::Value* v = n.input(2)) {
      bool zero = false;
      if (v->is_initializer())
        if (auto t = g.initializer_tensor(v); t.is_ok() && t.value().numel() == 1) zero = exec::element_as_double(t.value(), 0) == 0.0;
      if (!zero) out.push_back("constant_value (input #2) is not a constant 0");
    }
    if (n.input(3)) out.push_back("the axes input (#3) is not supported by hls4ml");
    if (int64_t r = g.rank_of(n.input(0)); r != 3 && r != 4) out.push_back(fmt::format("rank {}: hls4ml pads 1-D and 2-D data", r));
  }

  // The constant tensors of inputs 1.. (nullptr where not an initializer).
  static std::vector<Tensor> parameter_tensors(const ir::Graph& g, const ir::Node& n, std::vector<const Tensor*>& ptrs) {
    std::vector<Tensor> held(n.inputs().size());
    ptrs.assign(n.inputs().size(), nullptr);
    for (size_t i = 1; i < n.inputs().size(); ++i)
      if (n.input(i) && n.input(i)->is_initializer())
        if (auto t = g.initializer_tensor(n.input(i)); t.is_ok()) held[i] = std::move(t).value();
    for (size_t i = 1; i < held.size(); ++i)
      if (held[i].defined()) ptrs[i] = &held[i];
    return held;
  }

  void check_quant(const ir::Graph& g, const ir::Node& n, pass::PassContext& ctx, std::vector<std::string>& out) {
    for (size_t i = 1; i < 4; ++i)
      if (!n.input(i) || !n.input(i)->is_initializer())
        out.push_back(fmt::format("input #{} is not an initializer (hls4ml takes constant scale, zero point and bit width)", i));
    // hls4ml compares the attribute text itself, and reads absent flags as 0.
    const std::string mode = n.attr_string("rounding_mode", "");
    if (mode != "ROUND" && mode != "FLOOR")
      out.push_back(mode.empty() ? "rounding_mode is absent (hls4ml requires ROUND or FLOOR spelled out)"
                                 : fmt::format("rounding_mode {} (hls4ml takes ROUND and FLOOR)", mode));
    if (!n.has_attr("signed")) out.push_back("signed is absent: QONNX's default is 1, hls4ml reads it as 0 (unsigned)");
    const bool is_signed = int_attr(n, "signed", 1) != 0;
    if (int_attr(n, "narrow", 0) != 0 && !is_signed) out.push_back("narrow unsigned (hls4ml takes narrow signed only)");
    if (!out.empty()) return;
    std::vector<const Tensor*> ptrs;
    const std::vector<Tensor> held = parameter_tensors(g, n, ptrs);
    auto p = quant::read_quant_params(quant::NodeInputs(n, ptrs));
    if (!p.is_ok()) {
      out.push_back(p.status().message());
      return;
    }
    ++quantizers_;
    ctx.note(&n, "hls4ml: " + fixed_point_form(p.value(), mode));
  }

  void check_bipolar(const ir::Node& n, pass::PassContext& ctx, std::vector<std::string>& out) {
    if (!n.input(1) || !n.input(1)->is_initializer()) {
      out.push_back("scale (input #1) is not an initializer");
      return;
    }
    ++quantizers_;
    ctx.note(&n, "hls4ml: binary (xnor) type, scale applied by ApplyAlpha unless it is 1");
  }

  // What hls4ml's quant_opt makes of a Quant: a fixed-point type alone when every scale is the same power
  // of two and the zero point is 0, else ApplyAlpha (1/scale, zero point) -> integer type -> ApplyAlpha.
  static std::string fixed_point_form(const quant::QuantParams& p, const std::string& mode) {
    const Tensor& s = p.scale;
    const Tensor& z = p.zeropt;
    bool zero = true;
    for (int64_t i = 0; i < z.numel(); ++i) zero &= z.data<float>()[i] == 0.0f;
    bool uniform = true;
    for (int64_t i = 0; i < s.numel(); ++i) uniform &= s.data<float>()[i] == s.data<float>()[0];
    int exponent = 0;
    const bool power_of_two = uniform && std::frexp(s.data<float>()[0], &exponent) == 0.5f;
    const int integer_bits = power_of_two && zero ? p.bits + exponent - 1 : p.bits;
    const std::string type = fmt::format("{}<{},{},{},{}>", p.is_signed ? "ap_fixed" : "ap_ufixed", p.bits, integer_bits,
                                         mode == "ROUND" ? "AP_RND_CONV" : "AP_TRN", p.narrow ? "AP_SAT_SYM" : "AP_SAT");
    if (power_of_two && zero) return type + " (scale a power of two, zero point 0)";
    return fmt::format("ApplyAlpha (1/scale{}) -> {} -> ApplyAlpha (scale{})", zero ? "" : ", + zero point", type,
                       zero ? "" : ", - zero point * scale");
  }

  pass::Statistic unsupported_{this, "unsupported", "nodes hls4ml's ONNX front end will not take (warned)"};
  pass::Statistic quantizers_{this, "quantizers", "Quant/BipolarQuant nodes hls4ml takes (noted with their type)"};
};

}  // namespace

std::unique_ptr<pass::Pass> make_hls4ml_support() { return std::make_unique<Hls4mlSupport>(); }

}  // namespace qonnx::passes
