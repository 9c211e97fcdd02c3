// qonnx-domains: every QONNX op (Quant, IntQuant, BipolarQuant, Trunc, FloatQuant, MultiThreshold),
// whatever domain spelling its exporter used (finn, finn.custom_op.general, onnx.brevitas, or the
// default domain of 2021 exports), moves to qonnx.custom_op.general, and the model imports that domain.
// The version a node runs at is kept: a default-domain Trunc is Trunc v1, a Trunc under another
// spelling runs at that domain's import. A Trunc whose version differs from the general domain's import
// stays where it is (warning), since moving it would change what it computes.
#include <fmt/format.h>

#include "qonnx/dialect/qonnx_dialect.h"
#include "passes/passes.h"

namespace qonnx::passes {
namespace {

// A model pass: one import version decided over every graph (it visits the bodies itself).
class CanonicalizeDomains : public pass::Pass {
 public:
  std::string name() const override { return "qonnx-domains"; }
  std::string summary() const override {
    return "Move QONNX ops from every domain spelling to qonnx.custom_op.general, with a matching opset import";
  }
  Result<bool> run(ir::Model& model, pass::PassContext& ctx) override {
    const std::string general = dialect::kGeneralDomain;
    // The version each node runs at before the move.
    auto effective_version = [&](const ir::Node& n) -> int64_t {
      return ir::is_default_domain(n.domain()) ? 1 : model.op_version(n.domain());
    };
    std::vector<ir::Node*> moving;
    bool already_general = false;
    model.graph().visit_graphs([&](ir::Graph& g) {
      for (const auto& n : g.nodes()) {
        if (!dialect::is_general_domain(n->domain()) && !ir::is_default_domain(n->domain())) continue;
        if (dialect::classify(*n) == dialect::Op::kNone) continue;
        if (n->domain() == general) already_general = true;
        else moving.push_back(n.get());
      }
    });
    std::optional<int64_t> target = model.opset(general);
    if (!target) {
      // No import yet: nodes already in the domain run at version 1; else the first Trunc to move
      // decides (only Trunc has more than one version).
      target = 1;
      for (const ir::Node* n : moving)
        if (!already_general && dialect::classify(*n) == dialect::Op::kTrunc) {
          target = effective_version(*n);
          break;
        }
    }
    bool changed = false;
    for (ir::Node* n : moving) {
      if (dialect::classify(*n) == dialect::Op::kTrunc && effective_version(*n) != *target) {
        ctx.warn(n, fmt::format("left in domain '{}': it runs as Trunc v{}, {} imports v{}", n->domain(),
                                effective_version(*n), general, *target));
        continue;
      }
      QONNX_RETURN_IF_ERROR(move_to(n, general));
      ++moved_;
      changed = true;
    }
    if ((changed || already_general) && !model.opset(general)) {
      model.ensure_import(general, *target);
      changed = true;
    }
    if (changed) model.prune_unused_imports();
    return changed;
  }

 private:
  // The same node (name, inputs, outputs, attributes, position) under `domain`.
  static Status move_to(ir::Node* n, const std::string& domain) {
    return n->graph()->move_node_to_domain(n, domain).status();
  }

  pass::Statistic moved_{this, "moved", "QONNX ops moved to qonnx.custom_op.general"};
};

}  // namespace

std::unique_ptr<pass::Pass> make_canonicalize_domains() { return std::make_unique<CanonicalizeDomains>(); }

}  // namespace qonnx::passes
