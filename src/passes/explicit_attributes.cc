// explicit-attributes: writes out the attributes a consumer reads without applying the op's default,
// with the default the op's spec gives, and spells Quant's rounding_mode the canonical way. The set is
// what hls4ml's ONNX front end (hls4ml/converters/onnx/*.py) reads without a default, or with one that
// differs from the spec (docs/hls4ml.md):
//  - Quant: `rounding_mode` (QONNX's default ROUND; hls4ml compares the text with "ROUND"/"FLOOR", so a
//    present one is respelled too: upper case, HALF_EVEN -> ROUND) and `signed` (default 1; hls4ml: 0);
//  - Conv, MaxPool, AveragePool and their qonnx.custom_op.channels_last forms: `kernel_shape` (Conv: the
//    weight's spatial dims), `strides` (1), `pads` (0, unless auto_pad is set), Conv's `dilations` (1) and
//    `group` (1);
//  - Softmax below version 13: `axis` 1 (hls4ml's default is -1, the default from 13 on);
//  - Concat below version 4: `axis` 1 (required from 4 on; hls4ml has no default);
//  - Elu and ThresholdedRelu: `alpha` 1.0 (hls4ml's default is 0.01);
//  - Transpose: `perm` (the axes reversed); Resize: `mode` ("nearest").
// Each is the value the op's kernel uses when the attribute is absent, so the model computes the same.
#include "passes/passes.h"
#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/quant/rounding.h"

namespace qonnx::passes {
namespace {

class ExplicitAttributes : public pass::GraphPass {
 public:
  std::string name() const override { return "explicit-attributes"; }
  std::string summary() const override {
    return "Write out the default attributes hls4ml reads without defaults (Quant rounding_mode/signed, Conv/pooling "
           "kernel_shape/strides/pads/dilations/group, ...) and spell Quant's rounding_mode as ROUND/FLOOR/...";
  }
  Result<bool> run_on_graph(ir::Model& model, ir::Graph& g, pass::PassContext& /*ctx*/) override {
    bool changed = false;
    for (const auto& up : g.nodes()) {
      ir::Node& n = *up;
      switch (dialect::classify(n)) {
        case dialect::Op::kQuant: changed |= quant(n); continue;
        case dialect::Op::kChannelsLastConv: changed |= window(g, n, Window::kConv, /*channels_last=*/true); continue;
        case dialect::Op::kChannelsLastMaxPool: changed |= window(g, n, Window::kPool, /*channels_last=*/true); continue;
        case dialect::Op::kNone: break;
        default: continue;
      }
      if (!ir::is_default_domain(n.domain())) continue;
      const std::string& op = n.op_type();
      const int64_t version = model.op_version(n.domain());
      if (op == "Conv") changed |= window(g, n, Window::kConv, /*channels_last=*/false);
      else if (op == "MaxPool" || op == "AveragePool") changed |= window(g, n, Window::kPool, /*channels_last=*/false);
      else if (op == "Softmax" && version < 13) changed |= write(n, "axis", int64_t{1}, axis_);
      else if (op == "Concat" && version < 4) changed |= write(n, "axis", int64_t{1}, axis_);
      else if (op == "Elu" || op == "ThresholdedRelu") changed |= write(n, "alpha", 1.0f, alpha_);
      else if (op == "Resize") changed |= write(n, "mode", std::string("nearest"), mode_);
      else if (op == "Transpose") changed |= transpose(g, n);
    }
    return changed;
  }

 private:
  enum class Window { kConv, kPool };

  // Sets `name` to `value` when absent; counts it.
  template <typename T>
  static bool write(ir::Node& n, const std::string& name, const T& value, pass::Statistic& stat) {
    if (n.has_attr(name)) return false;
    n.set_attr(name, value);
    ++stat;
    return true;
  }

  bool quant(ir::Node& n) {
    bool changed = write(n, "signed", int64_t{1}, signed_);
    if (write(n, "rounding_mode", std::string(quant::rounding_mode_name(quant::RoundingMode::kRound)), rounding_mode_))
      return true;
    auto text = n.attr<std::string>("rounding_mode");
    if (!text.is_ok()) return changed;  // mistyped: the verifier and the kernels report it
    auto mode = quant::parse_rounding_mode(text.value());
    if (!mode || text.value() == quant::rounding_mode_name(*mode)) return changed;
    n.set_attr("rounding_mode", std::string(quant::rounding_mode_name(*mode)));
    ++respelled_;
    return true;
  }

  // kernel_shape, strides, pads (when auto_pad leaves them to the model), and Conv's dilations and group.
  bool window(const ir::Graph& g, ir::Node& n, Window kind, bool channels_last) {
    bool changed = false;
    if (kind == Window::kConv && !n.has_attr("kernel_shape")) {
      // The weight is (M, C/group, k...) channels-first and (M, k..., C/group) channels-last.
      auto w = g.dims_of(n.input(1));
      if (w && w->size() >= 3) {
        std::vector<int64_t> kernel(w->begin() + (channels_last ? 1 : 2), w->end() - (channels_last ? 1 : 0));
        bool known = true;
        for (int64_t k : kernel) known &= k > 0;
        if (known) changed |= write(n, "kernel_shape", kernel, kernel_shape_);
      }
    }
    int64_t spatial = -1;
    if (n.has_attr("kernel_shape")) spatial = static_cast<int64_t>(n.attr_ints("kernel_shape").size());
    else if (int64_t rank = g.rank_of(n.input(0)); rank >= 3) spatial = rank - 2;
    if (spatial <= 0) return changed;
    const std::vector<int64_t> ones(static_cast<size_t>(spatial), 1);
    changed |= write(n, "strides", ones, strides_);
    if (n.attr_string("auto_pad", "NOTSET") == "NOTSET")
      changed |= write(n, "pads", std::vector<int64_t>(static_cast<size_t>(2 * spatial), 0), pads_);
    if (kind == Window::kConv) {
      changed |= write(n, "dilations", ones, dilations_);
      changed |= write(n, "group", int64_t{1}, group_);
    }
    return changed;
  }

  bool transpose(const ir::Graph& g, ir::Node& n) {
    const int64_t rank = g.rank_of(n.input(0));
    if (rank < 1) return false;
    std::vector<int64_t> perm;
    for (int64_t d = rank; d-- > 0;) perm.push_back(d);
    return write(n, "perm", perm, perm_);
  }

  pass::Statistic rounding_mode_{this, "rounding-mode", "Quant rounding_mode written (ROUND)"};
  pass::Statistic respelled_{this, "rounding-mode-respelled", "Quant rounding_mode respelled (upper case, HALF_EVEN -> ROUND)"};
  pass::Statistic signed_{this, "signed", "Quant signed written (1)"};
  pass::Statistic kernel_shape_{this, "kernel-shape", "Conv kernel_shape written (the weight's spatial dims)"};
  pass::Statistic strides_{this, "strides", "Conv/MaxPool/AveragePool strides written (1)"};
  pass::Statistic pads_{this, "pads", "Conv/MaxPool/AveragePool pads written (0)"};
  pass::Statistic dilations_{this, "dilations", "Conv dilations written (1)"};
  pass::Statistic group_{this, "group", "Conv group written (1)"};
  pass::Statistic axis_{this, "axis", "Softmax (version < 13) / Concat (version < 4) axis written (1)"};
  pass::Statistic alpha_{this, "alpha", "Elu/ThresholdedRelu alpha written (1.0)"};
  pass::Statistic perm_{this, "perm", "Transpose perm written (the axes reversed)"};
  pass::Statistic mode_{this, "mode", "Resize mode written (nearest)"};
};

}  // namespace

std::unique_ptr<pass::Pass> make_explicit_attributes() { return std::make_unique<ExplicitAttributes>(); }

}  // namespace qonnx::passes
