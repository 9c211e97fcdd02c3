// `exec`: run a model on given or seeded random inputs with qonnx-cc's own kernels.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "commands.h"
#include "qonnx/analysis/datatypes.h"
#include "qonnx/demo/demo_model.h"
#include "qonnx/exec/compare.h"
#include "qonnx/exec/dataset.h"
#include "qonnx/exec/dtype_dispatch.h"
#include "qonnx/exec/executor.h"
#include "qonnx/exec/threads.h"
#include "qonnx/io/model_io.h"
#include "qonnx/io/tensor_file.h"
#include "qonnx/support/log.h"

namespace qonnx::cli {
namespace fs = std::filesystem;

namespace {

struct ExecOptions {
  std::string model;
  std::vector<std::string> inputs;
  std::string input_dir;
  bool random = false;
  uint64_t seed = 0;
  std::string output_dir;
  std::string save_inputs_dir;
  bool npy = false;
  std::string expect_dir;
  double atol = 1e-7;
  double rtol = 1e-3;
  std::vector<std::string> expose;
  int64_t batch = 0;                      // --batch: dim 0 of every random input
  std::vector<std::string> input_shapes;  // --input-shape NAME=AxBxC
  bool check_datatypes = false;           // qonnx's finn_datatype sanity check
  int repeat = 0;                         // --repeat N: time N more runs on the same inputs
  int threads = 1;                        // --threads N: exec::set_threads (0 = all cores)
  int64_t batch_size = 0;                 // --batch-size B: dataset mode, B samples per run
  std::string labels;                     // --labels y.npy: dataset mode, top-1 accuracy of output 0
  std::string arith = "int";              // --arith int|float: quantized layers' arithmetic
  bool show_paths = false;                // --show-paths: each layer's path on stderr
  bool dataset_mode() const { return batch_size > 0 || !labels.empty(); }
};

// "x=1x3x224x224" -> ("x", {1, 3, 224, 224}).
Status parse_input_shape(const std::string& spec, std::map<std::string, Dims>& shapes) {
  auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
    return Status(Code::kUsage, fmt::format("--input-shape '{}': use NAME=D1xD2x...", spec));
  Dims dims;
  std::string text = spec.substr(eq + 1);
  size_t start = 0;
  while (start <= text.size()) {
    size_t x = text.find('x', start);
    std::string part = text.substr(start, x == std::string::npos ? std::string::npos : x - start);
    try {
      size_t used = 0;
      long long d = std::stoll(part, &used);
      if (used != part.size() || d < 0) throw std::invalid_argument(part);
      dims.push_back(d);
    } catch (const std::exception&) {
      return Status(Code::kUsage, fmt::format("--input-shape '{}': '{}' is not a dimension", spec, part));
    }
    if (x == std::string::npos) break;
    start = x + 1;
  }
  shapes[spec.substr(0, eq)] = dims;
  return Status::ok();
}

// min, max and mean of a tensor's elements as doubles, over the rows of one or more parts in order. The sum
// runs in 8 interleaved partial sums by element index (fast, and the same for any split into parts: a data
// set's batches give the whole output's mean).
class OutputStats {
 public:
  void add(const Tensor& t) {
    if (!dims_) {
      dims_ = t.dims();
      dtype_ = t.dtype();
    } else if (t.rank() > 0 && !dims_->empty()) {
      (*dims_)[0] += t.dim(0);
    }
    if (t.dtype() == DType::kString) return;
    if (t.dtype() == DType::kFloat) {  // the common case without a call per element
      const float* v = t.data<float>();
      for (int64_t i = 0; i < t.numel(); ++i) take(v[i]);
    } else {
      for (int64_t i = 0; i < t.numel(); ++i) take(exec::element_as_double(t, i));
    }
  }
  std::string text() const {
    const std::string head = dims_ ? fmt::format("{}{}", dtype_name(dtype_), dims_to_string(*dims_)) : std::string();
    if (count_ == 0) return head;
    double sum = 0;
    for (double part : sums_) sum += part;
    return fmt::format("{} min {:.6g} max {:.6g} mean {:.6g}", head, lo_, hi_, sum / static_cast<double>(count_));
  }

 private:
  void take(double v) {
    lo_ = count_ ? std::min(lo_, v) : v;
    hi_ = count_ ? std::max(hi_, v) : v;
    sums_[static_cast<size_t>(count_ & 7)] += v;
    ++count_;
  }
  std::optional<Dims> dims_;
  DType dtype_ = DType::kFloat;
  double lo_ = 0, hi_ = 0;
  std::array<double, 8> sums_{};
  int64_t count_ = 0;
};

std::string stats(const Tensor& t) {
  OutputStats s;
  s.add(t);
  return s.text();
}

// Finds input_K.pb or input_K.npy in `dir` for every runtime input, by position.
Status read_input_dir(const ir::Graph& g, const fs::path& dir, std::map<std::string, Tensor>& feeds) {
  auto inputs = g.runtime_inputs();
  for (size_t k = 0; k < inputs.size(); ++k) {
    fs::path pb = dir / fmt::format("input_{}.pb", k), npy = dir / fmt::format("input_{}.npy", k);
    fs::path file = fs::exists(pb) ? pb : npy;
    if (!fs::exists(file))
      return Status(Code::kCannotRead, fmt::format("--input-dir: neither {} nor {} exists (graph input #{} '{}')",
                                                   pb.string(), npy.filename().string(), k, inputs[k]->name()));
    QONNX_ASSIGN_OR_RETURN(io::NamedTensor t, io::read_tensor_file(file));
    feeds[inputs[k]->name()] = std::move(t.tensor);
  }
  return Status::ok();
}

Status read_named_inputs(const ir::Graph& g, const std::vector<std::string>& specs, std::map<std::string, Tensor>& feeds) {
  auto inputs = g.runtime_inputs();
  for (const auto& spec : specs) {
    std::string name, file;
    auto eq = spec.find('=');
    if (eq == std::string::npos) {
      if (inputs.size() != 1)
        return Status(Code::kUsage, fmt::format("--input '{}': use NAME=FILE, the model has {} inputs", spec, inputs.size()));
      name = inputs[0]->name();
      file = spec;
    } else {
      name = spec.substr(0, eq);
      file = spec.substr(eq + 1);
    }
    const ir::Value* v = g.find_value(name);
    if (!v || !v->is_graph_input() || v->is_initializer()) {
      std::vector<std::string> names;
      for (auto* in : inputs) names.push_back(in->name());
      return Status(Code::kUsage, fmt::format("--input: the model has no input '{}' (inputs: {})", name, fmt::join(names, ", ")));
    }
    QONNX_ASSIGN_OR_RETURN(io::NamedTensor t, io::read_tensor_file(file));
    feeds[name] = std::move(t.tensor);
  }
  return Status::ok();
}

Status write_outputs(const ir::Graph& g, const exec::RunResult& r, const ExecOptions& o) {
  fs::path dir(o.output_dir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status(Code::kCannotWrite, fmt::format("cannot create '{}': {}", dir.string(), ec.message()));
  for (size_t k = 0; k < r.outputs.size(); ++k) {
    QONNX_RETURN_IF_ERROR(io::write_tensor_pb(dir / fmt::format("output_{}.pb", k), g.outputs()[k]->name(), r.outputs[k]));
    if (o.npy) QONNX_RETURN_IF_ERROR(io::write_tensor_npy(dir / fmt::format("output_{}.npy", k), r.outputs[k]));
  }
  for (const auto& [name, t] : r.exposed) {
    std::string safe = name;
    for (char& c : safe)
      if (c == '/' || c == '\\' || c == ':') c = '_';
    QONNX_RETURN_IF_ERROR(io::write_tensor_pb(dir / fmt::format("exposed_{}.pb", safe), name, t));
    if (o.npy) QONNX_RETURN_IF_ERROR(io::write_tensor_npy(dir / fmt::format("exposed_{}.npy", safe), t));
  }
  return Status::ok();
}

// Writes DIR/input_K.pb of the fed tensors, K = runtime input position (the --input-dir layout).
Status save_inputs(const ir::Graph& g, const std::map<std::string, Tensor>& feeds, const ExecOptions& o) {
  fs::path dir(o.save_inputs_dir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status(Code::kCannotWrite, fmt::format("cannot create '{}': {}", dir.string(), ec.message()));
  auto inputs = g.runtime_inputs();
  for (size_t k = 0; k < inputs.size(); ++k) {
    auto it = feeds.find(inputs[k]->name());
    if (it == feeds.end()) continue;
    QONNX_RETURN_IF_ERROR(io::write_tensor_pb(dir / fmt::format("input_{}.pb", k), it->first, it->second));
  }
  return Status::ok();
}

// Redraws "[####....] done/total samples" on stderr (only called when stderr is a terminal).
void draw_progress(int64_t done, int64_t total) {
  constexpr int kWidth = 40;
  int filled = total > 0 ? static_cast<int>(done * kWidth / total) : kWidth;
  std::fprintf(stderr, "\r[%s%s] %lld/%lld samples", std::string(static_cast<size_t>(filled), '#').c_str(),
               std::string(static_cast<size_t>(kWidth - filled), '.').c_str(), static_cast<long long>(done),
               static_cast<long long>(total));
  if (done == total) std::fputc('\n', stderr);
  std::fflush(stderr);
}

// Dataset mode: every --input holds N samples along axis 0; runs them in batches, writes each output
// stacked into DIR/output_K.npy, and with --labels prints the top-1 accuracy of output 0.
int run_dataset_mode(const ir::Model& model, const exec::Executor& ex, const ExecOptions& o) {
  const ir::Graph& g = model.graph();
  std::map<std::string, Tensor> data;
  if (Status st = read_named_inputs(g, o.inputs, data); !st.is_ok()) return report(st);
  Tensor labels;
  if (!o.labels.empty()) {
    auto l = io::read_tensor_file(o.labels);
    if (!l.is_ok()) return report(l.status());
    labels = std::move(l->tensor);
  }
  exec::set_threads(o.threads);
  exec::DatasetOptions options;
  options.batch_size = o.batch_size > 0 ? o.batch_size : 1;
  if (isatty(fileno(stderr))) options.progress = draw_progress;
  // The outputs are kept only for --output-dir and --labels; otherwise their statistics are gathered batch by
  // batch, and the memory held does not grow with the data set.
  options.keep_outputs = !o.output_dir.empty() || labels.defined();
  std::vector<OutputStats> output_stats(g.outputs().size());
  if (!options.keep_outputs) options.on_rows = [&](size_t k, const Tensor& rows) { output_stats.at(k).add(rows); };
  auto t0 = std::chrono::steady_clock::now();
  auto result = exec::run_dataset(ex, g, data, options);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!result.is_ok()) return report(std::move(result).status().with_context(o.model));
  for (size_t k = 0; k < g.outputs().size(); ++k)
    std::printf("output %zu '%s': %s\n", k, g.outputs()[k]->name().c_str(),
                options.keep_outputs ? stats(result->outputs.at(k)).c_str() : output_stats[k].text().c_str());
  if (labels.defined()) {
    auto acc = exec::top1_accuracy(result->outputs.at(0), labels);
    if (!acc.is_ok()) return report(std::move(acc).status().with_context(o.labels));
    std::printf("top-1 accuracy: %lld/%lld = %.2f%% (output 0 '%s' against %s)\n", static_cast<long long>(acc->correct),
                static_cast<long long>(acc->total), 100.0 * static_cast<double>(acc->correct) / static_cast<double>(acc->total),
                g.outputs()[0]->name().c_str(), o.labels.c_str());
  }
  std::printf("%lld samples in %.3f s: %.1f samples/s (batch size %lld%s, threads %d)\n",
              static_cast<long long>(result->samples), seconds, static_cast<double>(result->samples) / seconds,
              static_cast<long long>(options.batch_size),
              result->per_sample ? "; the batch-1 model ran sample by sample" : "", exec::threads());
  if (!o.output_dir.empty()) {
    fs::path dir(o.output_dir);
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return report(Status(Code::kCannotWrite, fmt::format("cannot create '{}': {}", dir.string(), ec.message())));
    for (size_t k = 0; k < result->outputs.size(); ++k)
      if (Status st = io::write_tensor_npy(dir / fmt::format("output_{}.npy", k), result->outputs[k]); !st.is_ok())
        return report(st);
  }
  return 0;
}

int run_exec(const ExecOptions& o) {
  auto loaded = io::load_model(o.model);
  if (!loaded.is_ok()) return report(loaded.status());
  const ir::Model& model = loaded.value();
  const ir::Graph& g = model.graph();
  exec::Arithmetic arithmetic = exec::Arithmetic::kInt;
  exec::parse_arithmetic(o.arith, &arithmetic);  // CLI::IsMember admitted only int and float
  auto ex = exec::Executor::create(model, arithmetic);
  if (!ex.is_ok()) return report(std::move(ex).status().with_context(o.model));
  if (o.show_paths)
    for (const auto& [node, note] : ex->path_notes()) std::fprintf(stderr, "%s: %s\n", node.c_str(), note.c_str());
  if (Status st = ex->expose(o.expose); !st.is_ok()) return report(std::move(st).with_context("--expose"));
  if (!ex->streaming_note().empty()) log::info("exec: {}", ex->streaming_note());
  std::vector<std::string> annotated;
  if (o.check_datatypes) {
    // Keep every annotated tensor the graph computes or receives, to check it after the run.
    for (const auto& name : analysis::annotated_tensors(g)) {
      const ir::Value* v = g.find_value(name);
      if (v && (v->producer() || v->is_graph_input() || v->is_initializer())) annotated.push_back(name);
    }
    if (Status st = ex->expose(annotated); !st.is_ok()) return report(st);
  }
  exec::InputShapeOverrides overrides;
  overrides.batch = o.batch;
  for (const auto& spec : o.input_shapes)
    if (Status st = parse_input_shape(spec, overrides.shapes); !st.is_ok()) return report(st);
  if (o.batch > 0 || !overrides.shapes.empty() || o.dataset_mode()) ex->set_check_input_shapes(false);
  if (o.dataset_mode()) return run_dataset_mode(model, ex.value(), o);

  std::map<std::string, Tensor> feeds;
  if (o.random) {
    auto r = exec::random_inputs(g, o.seed, overrides);
    if (!r.is_ok()) return report(r.status());
    feeds = std::move(r).value();
  }
  if (!o.input_dir.empty()) {
    if (Status st = read_input_dir(g, o.input_dir, feeds); !st.is_ok()) return report(st);
  }
  if (Status st = read_named_inputs(g, o.inputs, feeds); !st.is_ok()) return report(st);

  exec::set_threads(o.threads);
  auto result = ex->run(feeds);
  if (!result.is_ok()) return report(std::move(result).status().with_context(o.model));
  if (o.repeat > 0) {
    // Steady state: the planned model again on the same inputs, after the run above (the warm-up).
    std::vector<double> ms;
    for (int r = 0; r < o.repeat; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      auto again = ex->run(feeds);
      auto t1 = std::chrono::steady_clock::now();
      if (!again.is_ok()) return report(std::move(again).status().with_context(o.model));
      ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    double median = ms.size() % 2 ? ms[ms.size() / 2] : (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]) / 2;
    std::fprintf(stderr, "steady state: %d runs, threads %d: min %.3f ms, median %.3f ms\n", o.repeat,
                 exec::threads(), ms.front(), median);
  }
  if (o.check_datatypes) {
    std::map<std::string, Tensor> values = result->exposed;
    for (size_t k = 0; k < result->outputs.size(); ++k) values[g.outputs()[k]->name()] = result->outputs[k];
    auto checked = analysis::check_finn_datatypes(g, values);
    if (!checked.is_ok()) return report(std::move(checked).status().with_context(o.model));
    std::printf("datatypes: %d annotated tensors hold allowed values\n", checked.value());
    // Only what the user asked to expose is printed and written.
    for (const auto& name : annotated)
      if (std::find(o.expose.begin(), o.expose.end(), name) == o.expose.end()) result->exposed.erase(name);
  }
  for (size_t k = 0; k < result->outputs.size(); ++k)
    std::printf("output %zu '%s': %s\n", k, g.outputs()[k]->name().c_str(), stats(result->outputs[k]).c_str());
  for (const auto& [name, t] : result->exposed) std::printf("exposed '%s': %s\n", name.c_str(), stats(t).c_str());
  if (!o.save_inputs_dir.empty()) {
    if (Status st = save_inputs(g, feeds, o); !st.is_ok()) return report(st);
  }
  if (!o.output_dir.empty()) {
    if (Status st = write_outputs(g, result.value(), o); !st.is_ok()) return report(st);
  }
  if (o.expect_dir.empty()) return 0;
  bool all_ok = true;
  for (size_t k = 0; k < result->outputs.size(); ++k) {
    auto expected = io::read_tensor_file(fs::path(o.expect_dir) / fmt::format("output_{}.pb", k));
    if (!expected.is_ok()) return report(expected.status());
    auto c = exec::compare_tensors(result->outputs[k], expected->tensor, o.atol, o.rtol);
    if (c.ok() && c.dtype_match && c.shape_match) {
      std::printf("expect output %zu: match (%s)\n", k, c.describe().c_str());
    } else {
      all_ok = false;
      std::printf("expect output %zu: MISMATCH: %s\n", k, c.describe().c_str());
      if (!c.shape_match)
        std::printf("  got %s, expected %s\n", dims_to_string(result->outputs[k].dims()).c_str(),
                    dims_to_string(expected->tensor.dims()).c_str());
    }
  }
  if (!all_ok) {
    std::fprintf(stderr, "qonnx-cc: error: outputs differ from %s (atol %g, rtol %g)\n", o.expect_dir.c_str(), o.atol, o.rtol);
    return exit_code(Code::kMismatch);
  }
  return 0;
}

}  // namespace

void add_exec_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("exec", "Execute a model with qonnx-cc's reference kernels");
  auto o = std::make_shared<ExecOptions>();
  cmd->add_option("MODEL", o->model, "Model file (.onnx)")->required();
  cmd->add_option("--input", o->inputs, "NAME=FILE.npy|.pb (FILE alone for a single-input model); repeatable");
  cmd->add_option("--input-dir", o->input_dir, "Folder with input_K.pb (or .npy), K = runtime input position");
  cmd->add_flag("--random-inputs", o->random, "Seeded random data for every input not given otherwise");
  cmd->add_option("--seed", o->seed, "Seed for --random-inputs")->default_val(0);
  cmd->add_option("--output-dir", o->output_dir, "Write output_K.pb (graph-output order)");
  cmd->add_option("--save-inputs", o->save_inputs_dir, "Write the fed inputs as DIR/input_K.pb (--input-dir layout)");
  cmd->add_flag("--npy", o->npy, "Also write output_K.npy next to output_K.pb");
  cmd->add_option("--expect", o->expect_dir, "Compare with DIR/output_K.pb; exit 7 on mismatch");
  cmd->add_option("--atol", o->atol, "Absolute tolerance for --expect")->default_val(1e-7);
  cmd->add_option("--rtol", o->rtol, "Relative tolerance for --expect")->default_val(1e-3);
  cmd->add_option("--batch", o->batch, "Batch size of --random-inputs (replaces dim 0 of every input)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--input-shape", o->input_shapes, "NAME=D1xD2x... shape of a random input; repeatable");
  cmd->add_flag("--check-datatypes", o->check_datatypes,
                "Check that tensors annotated with a finn_datatype hold allowed values (exit 7 if not)");
  cmd->add_option("--repeat", o->repeat, "Then run N more times on the same inputs; print min/median ms to stderr")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--threads", o->threads, "Threads for GEMM, convolution, elementwise and quantization kernels (0 = all cores); outputs do not depend on it")
      ->default_val(1)->check(CLI::NonNegativeNumber);
  cmd->add_option("--batch-size", o->batch_size,
                  "Dataset mode: every --input holds N samples along axis 0; run B at a time, write DIR/output_K.npy "
                  "with all N rows, print samples/s")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--labels", o->labels,
                  "Dataset mode: integer class labels (.npy, shape [N]); print the top-1 accuracy of output 0");
  cmd->add_option("--expose", o->expose, "Also output these intermediate tensors (comma-separated)")->delimiter(',');
  cmd->add_option("--arith", o->arith,
                  "Conv/MatMul/Gemm between quantized operands: int (exact integer sums, scaled once) or float "
                  "(float multiply-adds on the dequantized values); docs/arithmetic.md")
      ->default_val("int")->check(CLI::IsMember({"int", "float"}));
  cmd->add_flag("--show-paths", o->show_paths, "Print which path (integer or float) each layer takes and why, on stderr");
  cmd->callback([&exit_code, o] {
    if (o->dataset_mode()) {
      // Dataset mode reads only --input files: options about single runs would be silently ignored.
      const char* conflict = o->random ? "--random-inputs" : !o->input_dir.empty() ? "--input-dir"
                             : o->batch > 0 ? "--batch" : !o->input_shapes.empty() ? "--input-shape"
                             : o->repeat > 0 ? "--repeat" : !o->expect_dir.empty() ? "--expect"
                             : !o->expose.empty() ? "--expose" : !o->save_inputs_dir.empty() ? "--save-inputs"
                             : o->check_datatypes ? "--check-datatypes" : nullptr;
      if (conflict || o->inputs.empty()) {
        exit_code = report(Status(Code::kUsage, conflict ? fmt::format("{} does not apply to dataset mode (--batch-size, --labels)", conflict)
                                                         : std::string("dataset mode (--batch-size, --labels) needs --input NAME=data.npy")));
        return;
      }
    }
    if (o->inputs.empty() && o->input_dir.empty() && !o->random) {
      // A model without runtime inputs runs as is; otherwise the user must say where data comes from.
      auto m = io::load_model(o->model);
      if (m.is_ok() && !m->graph().runtime_inputs().empty()) {
        exit_code = report(Status(Code::kUsage, "exec needs --input, --input-dir or --random-inputs"));
        return;
      }
    }
    exit_code = run_exec(*o);
  });
}

void add_demo_model_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("demo-model", "Write the embedded demo model (a 2-layer quantized MLP)");
  auto out = std::make_shared<std::string>();
  cmd->add_option("OUT", *out, "Output .onnx file")->required();
  cmd->callback([&exit_code, out] {
    auto model = demo::build_demo_model();
    if (!model.is_ok()) {
      exit_code = report(model.status());
      return;
    }
    if (Status st = io::save_model(model.value(), *out); !st.is_ok()) {
      exit_code = report(st);
      return;
    }
    log::info("wrote the demo model to {}", *out);
  });
}

}  // namespace qonnx::cli
