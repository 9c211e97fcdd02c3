#include <algorithm>
#include <chrono>
#include <cstdio>

#include <fmt/format.h>

#include "qonnx/io/model_text.h"
#include "qonnx/pass/pass.h"
#include "qonnx/support/log.h"

namespace qonnx::pass {

void PassContext::warn(const ir::Node* node, const std::string& message) {
  diagnostics_.push_back(Diagnostic{current_, node ? node->name() : "", message, true});
  log::warn("[{}] {}{}", current_, node ? node->describe() + ": " : "", message);
}

void PassContext::note(const ir::Node* node, const std::string& message) {
  diagnostics_.push_back(Diagnostic{current_, node ? node->name() : "", message, false});
  log::info("[{}] {}{}", current_, node ? node->describe() + ": " : "", message);
}


// ---- Options and statistics ------------------------------------------------------------------

OptionBase::OptionBase(Pass* owner, std::string name, std::string help) : name_(std::move(name)), help_(std::move(help)) {
  owner->options_.push_back(this);
}

Statistic::Statistic(Pass* owner, std::string name, std::string help) : name_(std::move(name)), help_(std::move(help)) {
  owner->statistics_.push_back(this);
}

Status parse_option_value(const std::string& text, bool* out) {
  if (text == "1" || text == "true") *out = true;
  else if (text == "0" || text == "false") *out = false;
  else return Status(Code::kUsage, fmt::format("expected 0, 1, true or false, got '{}'", text));
  return Status::ok();
}

Status parse_option_value(const std::string& text, int64_t* out) {
  size_t used = 0;
  try {
    *out = std::stoll(text, &used);
  } catch (...) {
    used = 0;
  }
  if (used == 0 || used != text.size()) return Status(Code::kUsage, fmt::format("expected an integer, got '{}'", text));
  return Status::ok();
}

Status parse_option_value(const std::string& text, uint64_t* out) {
  size_t used = 0;
  try {
    if (!text.empty() && text[0] != '-') *out = std::stoull(text, &used);
  } catch (...) {
    used = 0;
  }
  if (used == 0 || used != text.size())
    return Status(Code::kUsage, fmt::format("expected a non-negative integer, got '{}'", text));
  return Status::ok();
}

Status parse_option_value(const std::string& text, std::string* out) {
  *out = text;
  return Status::ok();
}

std::string option_value_text(bool v) { return v ? "1" : "0"; }
std::string option_value_text(int64_t v) { return std::to_string(v); }
std::string option_value_text(uint64_t v) { return std::to_string(v); }
std::string option_value_text(const std::string& v) { return v; }
std::string option_type_name(bool) { return "bool"; }
std::string option_type_name(int64_t) { return "int"; }
std::string option_type_name(uint64_t) { return "int"; }
std::string option_type_name(const std::string&) { return "string"; }

std::vector<OptionSpec> Pass::options() const {
  std::vector<OptionSpec> out;
  for (const OptionBase* o : options_) out.push_back(OptionSpec{o->name(), o->type_name(), o->default_text(), o->help()});
  return out;
}

Status Pass::configure(const PassOptions& options) {
  for (const auto& [key, value] : options) {
    auto it = std::find_if(options_.begin(), options_.end(), [&, &k = key](const OptionBase* o) { return o->name() == k; });
    if (it == options_.end()) {
      std::vector<std::string> names;
      for (const OptionBase* o : options_) names.push_back(o->name());
      return Status(Code::kUsage, fmt::format("pass '{}' has no option '{}' (options: {})", name(), key,
                                              names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "))));
    }
    if (Status st = (*it)->parse(value); !st.is_ok())
      return Status(Code::kUsage, fmt::format("pass '{}' option '{}': {}", name(), key, st.message()));
  }
  return check_options();
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
    std::unique_ptr<Pass> pass = registry_.create(name);
    if (!pass) {
      std::string hint = registry_.closest(name);
      return Status(Code::kUsage, fmt::format("unknown pass '{}'{}; see `qonnx-cc list-passes`", name,
                                              hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint)));
    }
    item.pass = name;
    if (eat('{')) {
      QONNX_ASSIGN_OR_RETURN(item.options, parse_options());
    }
    QONNX_RETURN_IF_ERROR(pass->configure(item.options));
    item.instance = std::move(pass);
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

Result<int> set_pass_option(std::vector<PipelineItem>& items, const std::string& pass, const std::string& key,
                            const std::string& value) {
  int count = 0;
  for (auto& item : items) {
    if (item.pass.empty()) {
      QONNX_ASSIGN_OR_RETURN(int nested, set_pass_option(item.group, pass, key, value));
      count += nested;
    } else if (item.pass == pass) {
      QONNX_RETURN_IF_ERROR(item.instance->configure({{key, value}}));
      item.options[key] = value;
      ++count;
    }
  }
  return count;
}

// ---- Running ---------------------------------------------------------------------------------

namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The structural verifier, first after every pass.
class VerifierInstrumentation : public Instrumentation {
 public:
  Status after_pass(const Pass&, const ir::Model& model, bool) override {
    Status st = verify_graph(model);
    if (st.is_ok()) return st;
    // The pipeline's input passed the same rules (run_pipeline checks it first): a pass that breaks
    // them is a bug, not a bad model.
    Status failed(Code::kFailed, st.message());
    for (auto it = st.context().rbegin(); it != st.context().rend(); ++it) failed.with_context(*it);
    return std::move(failed).with_context("verifier after the pass");
  }
};

class PipelineRunner {
 public:
  PipelineRunner(ir::Model& model, PassContext& ctx, const std::vector<Instrumentation*>& extra) : model_(model), ctx_(ctx) {
    hooks_.push_back(&verifier_);
    hooks_.insert(hooks_.end(), extra.begin(), extra.end());
  }

  Result<bool> run(const PipelineItem& item) {
    if (item.pass.empty()) return run_group(item);
    Pass& pass = *item.instance;
    ctx_.set_current(item.pass);
    for (Instrumentation* h : hooks_) h->before_pass(pass, model_);
    auto changed = run_guarded(pass);
    for (Statistic* s : pass.statistics())
      if (int64_t v = s->take()) ctx_.count(s->name(), v);
    if (!changed.is_ok()) return std::move(changed).status().with_context("[" + item.pass + "]");
    // After-hooks in reverse order, like nested scopes: the timer stops before the verifier runs.
    for (auto h = hooks_.rbegin(); h != hooks_.rend(); ++h)
      if (Status st = (*h)->after_pass(pass, model_, changed.value()); !st.is_ok())
        return std::move(st).with_context("[" + item.pass + "]");
    return changed.value();
  }

 private:
  // Allocation failures (the memory limit, bad_alloc) surface as exceptions from Tensor; here they
  // become a Status that names the pass instead of reaching the CLI as an internal error.
  Result<bool> run_guarded(Pass& pass) {
    try {
      return pass.run(model_, ctx_);
    } catch (const std::bad_alloc&) {
      return Status(Code::kFailed, "out of memory");
    } catch (const std::exception& e) {
      return Status(Code::kFailed, e.what());
    }
  }

  Result<bool> run_group(const PipelineItem& item) {
    bool any = false;
    for (int it = 0; it < item.max_iterations; ++it) {
      bool changed = false;
      for (const auto& member : item.group) {
        QONNX_ASSIGN_OR_RETURN(bool c, run(member));
        changed |= c;
      }
      any |= changed;
      if (!changed) return any;
    }
    log::warn("fixpoint({}) still changing after {} iterations", format_pipeline(item.group), item.max_iterations);
    return any;
  }

  ir::Model& model_;
  PassContext& ctx_;
  VerifierInstrumentation verifier_;
  std::vector<Instrumentation*> hooks_;
};

}  // namespace

void TimingInstrumentation::before_pass(const Pass&, const ir::Model&) { started_ = now_seconds(); }

Status TimingInstrumentation::after_pass(const Pass& pass, const ir::Model&, bool changed) {
  timings_.push_back(PassTiming{pass.name(), now_seconds() - started_, changed});
  return Status::ok();
}

Status PrintIrInstrumentation::after_pass(const Pass& pass, const ir::Model& model, bool) {
  if (pass_ == "all" || pass_ == pass.name()) {
    auto text = io::to_onnx_text(model);
    std::fprintf(stderr, "// IR after %s\n%s\n", pass.name().c_str(), text.c_str());
  }
  return Status::ok();
}

Result<bool> run_pipeline(ir::Model& model, const std::vector<PipelineItem>& items, PassContext& ctx,
                          const std::vector<Instrumentation*>& instrumentations) {
  // A defect the input brings (a cycle, say) is the input's: named as such, with its own code, before
  // any pass could be blamed for it.
  if (!items.empty())
    if (Status st = verify_graph(model); !st.is_ok()) return std::move(st).with_context("the pipeline's input");
  PipelineRunner runner(model, ctx, instrumentations);
  bool any = false;
  for (const auto& item : items) {
    QONNX_ASSIGN_OR_RETURN(bool changed, runner.run(item));
    any |= changed;
  }
  return any;
}

// ---- Pipelines built in code -----------------------------------------------------------------

PipelineBuilder& PipelineBuilder::add(const std::string& pass, const PassOptions& options) {
  if (!status_.is_ok()) return *this;
  std::unique_ptr<Pass> instance = registry_.create(pass);
  if (!instance) {
    status_ = Status(Code::kUsage, fmt::format("unknown pass '{}'", pass));
    return *this;
  }
  if (Status st = instance->configure(options); !st.is_ok()) {
    status_ = std::move(st);
    return *this;
  }
  PipelineItem item;
  item.pass = pass;
  item.options = options;
  item.instance = std::move(instance);
  items_.push_back(std::move(item));
  return *this;
}

Result<std::vector<PipelineItem>> PipelineBuilder::build() {
  QONNX_RETURN_IF_ERROR(status_);
  return std::move(items_);
}

Result<bool> GraphPass::run(ir::Model& model, PassContext& ctx) {
  bool changed = false;
  if (!walks_bodies()) {
    QONNX_ASSIGN_OR_RETURN(changed, run_on_graph(model, model.graph(), ctx));
  } else {
    QONNX_ASSIGN_OR_RETURN(changed, for_each_graph(model, [&](ir::Graph& g) { return run_on_graph(model, g, ctx); }));
  }
  return finish(model, changed, ctx);
}

Result<bool> for_each_graph(ir::Model& model, const std::function<Result<bool>(ir::Graph&)>& fn) {
  bool changed = false;
  Status status = Status::ok();
  model.graph().visit_graphs([&](ir::Graph& g) {
    if (!status.is_ok()) return;
    auto r = fn(g);
    if (!r.is_ok()) {
      status = std::move(r).status();
      if (g.owner()) status.with_context("body of " + g.owner()->describe());
      return;
    }
    changed |= r.value();
  });
  if (!status.is_ok()) return status;
  return changed;
}

}  // namespace qonnx::pass
