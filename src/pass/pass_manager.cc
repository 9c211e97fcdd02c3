#include <algorithm>
#include <chrono>
#include <cstdio>

#include <fmt/format.h>

#include "qonnx/io/model_io.h"
#include "qonnx/pass/pass.h"
#include "qonnx/support/log.h"

namespace qonnx::pass {

void PassContext::warn(const ir::Node* node, const std::string& message) {
  diagnostics_.push_back(Diagnostic{current_, node ? node->name() : "", message, true});
  log::warn("[{}] {}{}", current_, node ? node->describe() + ": " : "", message);
}

void PassContext::record(const ir::Node& node, const std::string& outcome, const std::string& detail) {
  outcomes_.push_back(QuantOutcome{node.name(), node.op_type(), current_, outcome, detail});
}

void PassRegistry::add(PassFactory factory) {
  std::string name = factory()->name();
  factories_[name] = std::move(factory);
}

std::unique_ptr<Pass> PassRegistry::create(const std::string& name) const {
  auto it = factories_.find(name);
  return it == factories_.end() ? nullptr : it->second();
}

std::vector<std::string> PassRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& [name, f] : factories_) out.push_back(name);
  return out;
}

namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t prev = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cur = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] == b[j - 1] ? 0 : 1)});
      prev = cur;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string PassRegistry::closest(const std::string& name) const {
  std::string best;
  size_t best_d = SIZE_MAX;
  for (const auto& [n, f] : factories_) {
    size_t d = edit_distance(name, n);
    if (d < best_d) {
      best_d = d;
      best = n;
    }
  }
  return best_d <= std::max<size_t>(3, name.size() / 2) ? best : "";
}

PassRegistry& PassRegistry::global() {
  static PassRegistry registry;
  return registry;
}

// ---- Pipeline text ---------------------------------------------------------------------------

namespace {

class PipelineParser {
 public:
  PipelineParser(const std::string& text, const PassRegistry& registry) : s_(text), registry_(registry) {}

  Result<std::vector<PipelineItem>> parse() {
    QONNX_ASSIGN_OR_RETURN(auto items, parse_list());
    skip_space();
    if (pos_ != s_.size()) return error(fmt::format("unexpected '{}'", s_[pos_]));
    if (items.empty()) return error("the pipeline is empty");
    return items;
  }

 private:
  Status error(const std::string& what) const {
    return Status(Code::kUsage, fmt::format("pipeline '{}': {} at position {}", s_, what, pos_));
  }
  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  std::string word() {
    skip_space();
    size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '-' || s_[pos_] == '_' || s_[pos_] == '.'))
      ++pos_;
    return s_.substr(start, pos_ - start);
  }
  bool eat(char c) {
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  Result<std::vector<PipelineItem>> parse_list() {
    std::vector<PipelineItem> items;
    do {
      QONNX_ASSIGN_OR_RETURN(PipelineItem item, parse_item());
      items.push_back(std::move(item));
    } while (eat(','));
    return items;
  }

  Result<PipelineItem> parse_item() {
    PipelineItem item;
    std::string name = word();
    if (name.empty()) return error("expected a pass name");
    if (name == "fixpoint") {
      if (eat('{')) {
        QONNX_ASSIGN_OR_RETURN(PassOptions opts, parse_options());
        for (const auto& [k, v] : opts) {
          if (k != "max-iterations") return error(fmt::format("fixpoint has no option '{}' (it has max-iterations)", k));
          try {
            item.max_iterations = std::stoi(v);
          } catch (...) {
            return error("max-iterations must be a number");
          }
        }
      }
      if (!eat('(')) return error("expected '(' after fixpoint");
      QONNX_ASSIGN_OR_RETURN(item.group, parse_list());
      if (!eat(')')) return error("expected ')'");
      return item;
    }
    auto pass = registry_.create(name);
    if (!pass) {
      std::string hint = registry_.closest(name);
      return Status(Code::kUsage, fmt::format("unknown pass '{}'{}; see `qonnx-cc list-passes`", name,
                                              hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint)));
    }
    item.pass = name;
    if (eat('{')) {
      QONNX_ASSIGN_OR_RETURN(item.options, parse_options());
    }
    for (const auto& [k, v] : item.options) {
      auto specs = pass->options();
      bool known = std::any_of(specs.begin(), specs.end(), [&, &key = k](const OptionSpec& o) { return o.name == key; });
      if (!known) {
        std::vector<std::string> names;
        for (const auto& o : specs) names.push_back(o.name);
        return Status(Code::kUsage, fmt::format("pass '{}' has no option '{}' (options: {})", name, k,
                                                names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "))));
      }
    }
    if (Status st = pass->configure(item.options); !st.is_ok()) return std::move(st).with_context("[" + name + "]");
    return item;
  }

  Result<PassOptions> parse_options() {
    PassOptions opts;
    if (eat('}')) return opts;
    do {
      std::string key = word();
      if (key.empty()) return error("expected an option name");
      if (!eat('=')) return error("expected '=' after option name");
      skip_space();
      size_t start = pos_;
      while (pos_ < s_.size() && s_[pos_] != ',' && s_[pos_] != '}' && s_[pos_] != ' ') ++pos_;
      opts[key] = s_.substr(start, pos_ - start);
    } while (eat(','));
    if (!eat('}')) return error("expected '}'");
    return opts;
  }

  const std::string& s_;
  const PassRegistry& registry_;
  size_t pos_ = 0;
};

std::string format_item(const PipelineItem& item) {
  if (item.pass.empty()) {
    std::string opts = item.max_iterations != 8 ? fmt::format("{{max-iterations={}}}", item.max_iterations) : "";
    return fmt::format("fixpoint{}({})", opts, format_pipeline(item.group));
  }
  if (item.options.empty()) return item.pass;
  std::vector<std::string> kv;
  for (const auto& [k, v] : item.options) kv.push_back(k + "=" + v);
  return fmt::format("{}{{{}}}", item.pass, fmt::join(kv, ","));
}

}  // namespace

Result<std::vector<PipelineItem>> parse_pipeline(const std::string& text, const PassRegistry& registry) {
  return PipelineParser(text, registry).parse();
}

std::string format_pipeline(const std::vector<PipelineItem>& items) {
  std::vector<std::string> parts;
  for (const auto& i : items) parts.push_back(format_item(i));
  return fmt::format("{}", fmt::join(parts, ","));
}

// ---- Running ---------------------------------------------------------------------------------

namespace {

Result<bool> run_one(ir::Model& model, const PipelineItem& item, PassContext& ctx, const RunOptions& options,
                     std::vector<PassTiming>& timings) {
  if (item.pass.empty()) {
    bool any = false;
    for (int it = 0; it < item.max_iterations; ++it) {
      bool changed = false;
      for (const auto& member : item.group) {
        QONNX_ASSIGN_OR_RETURN(bool c, run_one(model, member, ctx, options, timings));
        changed |= c;
      }
      any |= changed;
      if (!changed) return any;
    }
    log::warn("fixpoint({}) still changing after {} iterations", format_pipeline(item.group), item.max_iterations);
    return any;
  }
  auto pass = PassRegistry::global().create(item.pass);
  QONNX_RETURN_IF_ERROR(pass->configure(item.options));
  ctx.set_current(item.pass);
  auto start = std::chrono::steady_clock::now();
  auto changed = pass->run(model, ctx);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!changed.is_ok()) return std::move(changed).status().with_context("[" + item.pass + "]");
  timings.push_back(PassTiming{item.pass, secs, changed.value()});
  if (Status st = verify_graph(model); !st.is_ok())
    return std::move(st).with_context(fmt::format("[{}] verifier after the pass", item.pass));
  if (options.print_ir_after == "all" || options.print_ir_after == item.pass) {
    auto text = io::to_onnx_text(model);
    std::fprintf(stderr, "// IR after %s\n%s\n", item.pass.c_str(), text.c_str());
  }
  return changed.value();
}

}  // namespace

Result<std::vector<PassTiming>> run_pipeline(ir::Model& model, const std::vector<PipelineItem>& items,
                                            PassContext& ctx, const RunOptions& options) {
  std::vector<PassTiming> timings;
  for (const auto& item : items) {
    auto r = run_one(model, item, ctx, options, timings);
    if (!r.is_ok()) return std::move(r).status();
  }
  return timings;
}

// ---- Named pipelines -------------------------------------------------------------------------

namespace {
const std::vector<std::pair<std::string, std::string>>& targets() {
  static const std::vector<std::pair<std::string, std::string>> t = {
      {"qdq", "upgrade-opset{version=13},fold-constants{skip-quantizers=1},infer-shapes,lower-quant{target=qdq},lower-custom-ops,fold-constants,cleanup,infer-shapes"},
      {"ngraph", "upgrade-opset{version=13},fold-constants{skip-quantizers=1},infer-shapes,lower-quant{target=ngraph},lower-custom-ops,fold-constants,cleanup,infer-shapes"},
      {"fold", "fold-quant-weights,fold-constants,cleanup,infer-shapes"},
      {"ascend", "upgrade-opset{version=13},fold-constants{skip-quantizers=1},infer-shapes,lower-quant{target=qdq},lower-custom-ops,fold-constants,"
                 "cleanup,infer-shapes,ascend-quant-matmul,fold-constants,cleanup,infer-shapes"},
  };
  return t;
}
}  // namespace

Result<std::string> target_pipeline(const std::string& target) {
  for (const auto& [name, pipeline] : targets())
    if (name == target) return pipeline;
  return Status(Code::kUsage, fmt::format("unknown target '{}' (targets: {})", target, fmt::join(target_names(), ", ")));
}

std::vector<std::string> target_names() {
  std::vector<std::string> out;
  for (const auto& [name, p] : targets()) out.push_back(name);
  return out;
}

}  // namespace qonnx::pass
