// ONNX backend conformance: runs the cases of /usr/share/libonnx-testdata/data/<suite>/<case>
// (model.onnx + test_data_set_*/input_K.pb -> output_K.pb) through the executor.
//
//   qonnx_conformance [--data DIR] [--suite S]... [--filter SUBSTR] [--allowlist FILE] [--all]
//                     [--write-allowlist FILE] [--verbose]
//
// With --allowlist, only listed cases run and any failure among them fails the run; the others are
// counted as skipped. --all runs every case (to see what newly passes); --write-allowlist records
// the passing ones.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "qonnx/exec/compare.h"
#include "qonnx/exec/executor.h"
#include "qonnx/io/model_io.h"
#include "qonnx/io/tensor_file.h"
#include "qonnx/register_all.h"
#include "qonnx/support/log.h"

namespace fs = std::filesystem;
using namespace qonnx;

namespace {

// libonnx-testdata 1.12 stores bfloat16 tensors as UINT16 (numpy has no bfloat16): where the graph
// declares bfloat16, a uint16 test tensor is read as the bfloat16 bits it holds.
Tensor as_declared(const ir::Graph& g, const std::string& name, Tensor t) {
  const ir::Value* v = g.find_value(name);
  if (!v || t.dtype() != DType::kUInt16) return t;
  const auto type = g.type_of(v);
  if (!type || type->dtype != DType::kBFloat16) return t;
  Tensor bf(DType::kBFloat16, t.dims());
  std::memcpy(bf.raw(), t.raw(), t.nbytes());
  return bf;
}

struct CaseResult {
  bool passed = false;
  std::string reason;
};

CaseResult run_case(const fs::path& dir) {
  auto model = io::load_model(dir / "model.onnx");
  if (!model.is_ok()) return {false, "load: " + model.status().to_string()};
  auto ex = exec::Executor::create(model.value());
  if (!ex.is_ok()) return {false, "plan: " + ex.status().to_string()};
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return {false, "no test_data_set"};
  const ir::Graph& g = model->graph();
  auto inputs = g.runtime_inputs();
  for (const auto& set : sets) {
    std::map<std::string, Tensor> feeds;
    for (size_t k = 0;; ++k) {
      fs::path f = set / fmt::format("input_{}.pb", k);
      if (!fs::exists(f)) break;
      // Inputs are matched by name when the name is a graph input, else by position; a sequence or
      // optional input is read as its declared type says (its file does not say).
      auto t = k < inputs.size() ? io::read_value_file(f, g, inputs[k]->name()) : io::read_tensor_file(f);
      if (!t.is_ok()) return {false, "input: " + t.status().to_string()};
      std::string name = t->name;
      const ir::Value* v = name.empty() ? nullptr : g.find_value(name);
      if (!v || !v->is_graph_input()) {
        if (k >= inputs.size()) return {false, fmt::format("input_{}.pb has no matching graph input", k)};
        name = inputs[k]->name();
      }
      feeds[name] = as_declared(g, name, std::move(t->tensor));
    }
    auto r = ex->run(feeds);
    if (!r.is_ok()) return {false, "run: " + r.status().to_string()};
    for (size_t k = 0; k < r->outputs.size(); ++k) {
      fs::path f = set / fmt::format("output_{}.pb", k);
      auto expected = io::read_value_file(f, g, g.outputs()[k]->name());
      if (!expected.is_ok()) return {false, "expected output: " + expected.status().to_string()};
      const ir::Value* out_value = k < g.outputs().size() ? g.outputs()[k] : nullptr;
      if (out_value) expected->tensor = as_declared(g, out_value->name(), std::move(expected->tensor));
      auto c = exec::compare_tensors(r->outputs[k], expected->tensor, 1e-7, 1e-3);
      if (!c.ok()) {
        std::string detail = c.describe();
        if (!c.dtype_match)
          detail = fmt::format("dtype {} vs expected {}", dtype_name(r->outputs[k].dtype()), dtype_name(expected->tensor.dtype()));
        if (!c.shape_match)
          detail = fmt::format("shape {} vs expected {}", dims_to_string(r->outputs[k].dims()), dims_to_string(expected->tensor.dims()));
        return {false, fmt::format("{} output {}: {}", set.filename().string(), k, detail)};
      }
    }
  }
  return {true, ""};
}

}  // namespace

int main(int argc, char** argv) {
  qonnx::register_all();
  fs::path data = QONNX_ONNX_TESTDATA;
  std::vector<std::string> suites;
  std::string filter, allowlist_path, write_path;
  bool all = false, verbose = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--data") data = next();
    else if (a == "--suite") suites.push_back(next());
    else if (a == "--filter") filter = next();
    else if (a == "--allowlist") allowlist_path = next();
    else if (a == "--write-allowlist") write_path = next();
    else if (a == "--all") all = true;
    else if (a == "--verbose") verbose = true;
    else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (suites.empty()) suites = {"node", "pytorch-converted", "pytorch-operator", "simple"};
  if (!fs::is_directory(data)) {
    std::fprintf(stderr, "conformance data not found at %s (install libonnx-testdata)\n", data.c_str());
    return 1;
  }
  std::set<std::string> allow;
  if (!allowlist_path.empty()) {
    std::ifstream in(allowlist_path);
    if (!in) {
      std::fprintf(stderr, "cannot read allow-list %s\n", allowlist_path.c_str());
      return 2;
    }
    for (std::string line; std::getline(in, line);)
      if (!line.empty() && line[0] != '#') allow.insert(line);
  }
  log::set_level(log::Level::kOff);
  std::vector<std::string> passing;
  int total_pass = 0, total_fail = 0, total_skip = 0;
  for (const auto& suite : suites) {
    std::vector<fs::path> cases;
    for (const auto& e : fs::directory_iterator(data / suite))
      if (e.is_directory()) cases.push_back(e.path());
    std::sort(cases.begin(), cases.end());
    int pass = 0, fail = 0, skip = 0;
    for (const auto& c : cases) {
      std::string id = suite + "/" + c.filename().string();
      if (!filter.empty() && id.find(filter) == std::string::npos) continue;
      if (!all && !allowlist_path.empty() && !allow.count(id)) {
        ++skip;
        continue;
      }
      CaseResult r = run_case(c);
      if (r.passed) {
        ++pass;
        passing.push_back(id);
        if (verbose) std::printf("PASS %s\n", id.c_str());
      } else {
        ++fail;
        if (verbose || allow.count(id)) std::printf("FAIL %s: %s\n", id.c_str(), r.reason.c_str());
      }
    }
    std::printf("%s: %d passed, %d failed, %d skipped\n", suite.c_str(), pass, fail, skip);
    total_pass += pass;
    total_fail += fail;
    total_skip += skip;
  }
  if (!write_path.empty()) {
    std::ofstream out(write_path);
    out << "# ONNX backend cases qonnx-cc must pass (written by qonnx_conformance --write-allowlist)\n";
    for (const auto& id : passing) out << id << "\n";
  }
  std::printf("conformance: %d passed, %d failed, %d skipped\n", total_pass, total_fail, total_skip);
  // Failures only count against the run when they break the allow-list's promise.
  int listed_failures = 0;
  if (!allowlist_path.empty() && !all) listed_failures = total_fail;
  return listed_failures == 0 ? 0 : 1;
}
