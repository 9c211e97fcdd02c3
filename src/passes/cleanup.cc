// cleanup: removes Identity nodes, dead nodes, unused initializers and value_info, merges identical
// constant initializers, and gives every node a unique, stable name.
#include <algorithm>
#include <cstring>
#include <set>

#include <fmt/format.h>


#include "qonnx/exec/executor.h"
#include "passes/passes.h"

namespace qonnx::passes {
namespace {

// Constants of at least this many bytes, and those in the loaded model's external data, are not
// compared for duplicates (wherever a pass's result is kept: memory or the scratch file).
constexpr uint64_t kLargeConstantBytes = uint64_t{16} << 20;

// FNV-1a over a tensor's bytes: groups candidate duplicates before the exact comparison.
uint64_t content_hash(const Tensor& t) {
  uint64_t h = 1469598103934665603ULL;
  const auto* p = static_cast<const uint8_t*>(t.raw());
  for (size_t i = 0; i < t.nbytes(); ++i) h = (h ^ p[i]) * 1099511628211ULL;
  return h ^ static_cast<uint64_t>(t.dtype());
}

// A model pass over every graph (pass::for_each_graph): node names are unique across the model.
class Cleanup : public pass::Pass {
 public:
  std::string name() const override { return "cleanup"; }
  std::string summary() const override {
    return "Remove Identity, dead nodes, unused initializers, value_info and domain imports; merge identical constants; name nodes";
  }

  Result<bool> run(ir::Model& model, pass::PassContext& ctx) override {
    // Node names are unique across the whole model, bodies included.
    std::set<std::string> node_names;
    QONNX_ASSIGN_OR_RETURN(bool changed, pass::for_each_graph(model, [&](ir::Graph& g) -> Result<bool> {
      bool graph_changed = remove_identities(g, ctx);
      if (*merge_constants_) graph_changed |= merge_duplicate_constants(g, ctx);
      graph_changed |= remove_dead_nodes(g, ctx);
      graph_changed |= remove_unused_initializers(g, ctx);
      graph_changed |= remove_stale_value_info(g, ctx);
      graph_changed |= remove_stale_annotations(g);
      graph_changed |= name_nodes(g, node_names, ctx);
      return graph_changed;
    }));
    // Used domains first, so that dropping the unused ones cannot leave the model without imports.
    if (model.import_used_domains() > 0) changed = true;
    if (int pruned = model.prune_unused_imports(); pruned > 0) {
      imports_removed_ += pruned;
      changed = true;
    }
    return changed;
  }

 private:
  bool remove_identities(ir::Graph& g, pass::PassContext& ctx) {
    std::vector<ir::Node*> identities;
    for (const auto& n : g.nodes())
      if (n->op_type() == "Identity" && ir::is_default_domain(n->domain()) && n->input(0) && n->output(0))
        identities.push_back(n.get());
    bool changed = false;
    for (ir::Node* n : identities) {
      ir::Value* in = n->input(0);
      ir::Value* out = n->output(0);
      // A graph output keeps its name: such an Identity stays.
      if (out->is_graph_output()) continue;
      g.replace_all_uses(out, in);
      g.remove_node(n);
      ++identities_removed_;
      changed = true;
    }
    return changed;
  }

  bool merge_duplicate_constants(ir::Graph& g, pass::PassContext& ctx) {
    std::map<std::pair<uint64_t, size_t>, std::vector<ir::Value*>> groups;
    std::vector<std::pair<ir::Value*, ir::Value*>> merges;  // (duplicate, kept)
    for (const auto& init : g.initializers()) {
      ir::Value* v = init.value;
      // A body's initializer could equal one of an enclosing graph, but merging stays within a graph.
      if (v->is_graph_input() || v->is_graph_output() || v->uses().empty()) continue;
      // Duplicated weights that large are rare and hashing them would read every large tensor.
      if (init.external_in_source || stored_nbytes(init.dtype(), checked_numel(init.dims())) >= kLargeConstantBytes) continue;
      auto t = g.initializer_tensor(v);
      if (!t.is_ok() || t->dtype() == DType::kString) continue;
      auto& group = groups[{content_hash(t.value()), t->nbytes()}];
      ir::Value* same = nullptr;
      for (ir::Value* kept : group)
        if (g.initializer_tensor(kept)->identical(t.value())) same = kept;
      if (same) merges.emplace_back(v, same);
      else group.push_back(v);
    }
    for (auto [dup, kept] : merges) g.replace_all_uses(dup, kept);
    if (!merges.empty()) constants_merged_ += static_cast<int64_t>(merges.size());
    return !merges.empty();
  }

  bool remove_dead_nodes(ir::Graph& g, pass::PassContext& ctx) {
    auto order = exec::topological_order(g);
    if (!order.is_ok()) return false;
    bool changed = false;
    // Reverse topological order: a chain of dead nodes goes in one sweep.
    for (auto it = order->rbegin(); it != order->rend(); ++it) {
      ir::Node* n = const_cast<ir::Node*>(*it);
      bool live = false;
      for (const ir::Value* v : n->outputs()) live |= v && (!v->uses().empty() || v->is_graph_output());
      if (live) continue;
      g.remove_node(n);
      ++dead_nodes_removed_;
      changed = true;
    }
    return changed;
  }

  bool remove_unused_initializers(ir::Graph& g, pass::PassContext& ctx) {
    std::vector<ir::Value*> unused;
    for (const auto& init : g.initializers()) {
      const ir::Value* v = init.value;
      // Initializers that are graph inputs are part of the model's interface: they stay.
      if (v->uses().empty() && !v->is_graph_output() && !v->is_graph_input()) unused.push_back(init.value);
    }
    g.remove_initializers(unused);
    if (!unused.empty()) initializers_removed_ += static_cast<int64_t>(unused.size());
    return !unused.empty();
  }

  bool remove_stale_value_info(ir::Graph& g, pass::PassContext& ctx) {
    std::vector<std::string> stale;
    for (const auto& name : g.value_info_names()) {
      const ir::Value* v = g.find_value(name);
      if (!v || (!v->producer() && !v->is_initializer() && !v->is_graph_input())) stale.push_back(name);
    }
    g.remove_value_infos(stale);
    if (!stale.empty()) value_info_removed_ += static_cast<int64_t>(stale.size());
    return !stale.empty();
  }

  // quantization_annotation entries (finn_datatype) of tensors the graph no longer holds.
  bool remove_stale_annotations(ir::Graph& g) {
    auto is_live = [&](const std::string& name) {
      const ir::Value* v = g.find_value(name);
      return v && (v->producer() || v->is_initializer() || v->is_graph_input() || !v->uses().empty());
    };
    const int removed = g.remove_annotations_if([&](const std::string& tensor) { return !is_live(tensor); });
    if (removed == 0) return false;
    annotations_removed_ += removed;
    return true;
  }

  bool name_nodes(ir::Graph& g, std::set<std::string>& used, pass::PassContext& ctx) {
    bool changed = false;
    std::map<std::string, int> next_index;
    for (const auto& n : g.nodes()) {
      if (!n->name().empty() && used.insert(n->name()).second) continue;
      std::string base = n->name().empty() ? n->op_type() : n->name();
      std::string candidate;
      do {
        candidate = fmt::format("{}_{}", base, next_index[base]++);
      } while (used.count(candidate));
      used.insert(candidate);
      g.set_node_name(n.get(), candidate);
      ++nodes_named_;
      changed = true;
    }
    return changed;
  }
  pass::Option<bool> merge_constants_{this, "merge-constants", true,
                                      "0: keep identical constants apart (after unique-parameters)"};
  pass::Statistic annotations_removed_{this, "annotations-removed", "finn_datatype annotations of removed tensors"};
  pass::Statistic imports_removed_{this, "imports-removed", "unused opset imports removed"};
  pass::Statistic identities_removed_{this, "identities-removed", "Identity nodes removed"};
  pass::Statistic constants_merged_{this, "constants-merged", "duplicate constants merged"};
  pass::Statistic dead_nodes_removed_{this, "dead-nodes-removed", "nodes whose outputs nobody reads"};
  pass::Statistic initializers_removed_{this, "initializers-removed", "unused initializers removed"};
  pass::Statistic value_info_removed_{this, "value-info-removed", "stale value_info entries removed"};
  pass::Statistic nodes_named_{this, "nodes-named", "unnamed nodes given stable names"};
};

}  // namespace

std::unique_ptr<pass::Pass> make_cleanup() { return std::make_unique<Cleanup>(); }

}  // namespace qonnx::passes
