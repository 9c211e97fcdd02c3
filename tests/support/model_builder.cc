#include "support/test_util.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "qonnx/exec/executor.h"
#include "qonnx/io/model_io.h"
#include "qonnx/io/tensor_file.h"

namespace qonnx::test {

Result<std::vector<Tensor>> run_node(const NodeCase& c) {
  io::ModelBuilder b(c.opset);
  for (const auto& [d, v] : c.imports) b.import(d, v);
  std::vector<std::string> in_names, out_names;
  std::map<std::string, Tensor> feeds;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (!c.inputs[i].defined()) {
      in_names.push_back("");
      continue;
    }
    std::string name = fmt::format("in{}", i);
    in_names.push_back(name);
    b.input(name, c.inputs[i].dtype(), c.inputs[i].dims());
    feeds[name] = c.inputs[i];
  }
  for (int k = 0; k < c.num_outputs; ++k) {
    out_names.push_back(fmt::format("out{}", k));
    b.output(out_names.back(), DType::kUndefined);
  }
  auto node = b.node(c.op, in_names, out_names, c.domain);
  if (c.attrs) c.attrs(node);
  QONNX_ASSIGN_OR_RETURN(ir::Model model, b.build());
  QONNX_ASSIGN_OR_RETURN(exec::Executor ex, exec::Executor::create(model));
  QONNX_ASSIGN_OR_RETURN(exec::RunResult r, ex.run(feeds));
  return r.outputs;
}

Result<Tensor> run1(const NodeCase& c) {
  QONNX_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, run_node(c));
  return std::move(outputs[0]);
}

Result<std::vector<Tensor>> run_op(const std::string& op, std::vector<Tensor> inputs, Attrs attrs, int64_t opset,
                                   int num_outputs) {
  NodeCase c;
  c.op = op;
  c.opset = opset;
  c.inputs = std::move(inputs);
  c.attrs = std::move(attrs);
  c.num_outputs = num_outputs;
  return run_node(c);
}

Tensor run_ok(const std::string& op, std::vector<Tensor> inputs, Attrs attrs, int64_t opset) {
  auto r = run_op(op, std::move(inputs), std::move(attrs), opset);
  EXPECT_TRUE(r.is_ok()) << op << ": " << r.status().to_string();
  return r.is_ok() ? r.value()[0] : Tensor();
}

void expect_error(const Result<std::vector<Tensor>>& r, Code code, const std::string& fragment) {
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), code) << r.status().to_string();
  EXPECT_NE(r.status().to_string().find(fragment), std::string::npos) << r.status().to_string();
}

void expect_error(const NodeCase& c, const std::string& fragment) {
  auto r = run_node(c);
  ASSERT_FALSE(r.is_ok()) << c.op << " should fail";
  EXPECT_NE(r.status().to_string().find(fragment), std::string::npos) << r.status().to_string();
}

Tensor b8(Dims dims, const std::vector<bool>& v) {
  Tensor t(DType::kBool, std::move(dims));
  for (size_t i = 0; i < v.size(); ++i) t.data<bool>()[i] = v[i];
  return t;
}

Tensor strings(Dims dims, const std::vector<std::string>& v) {
  Tensor t(DType::kString, std::move(dims));
  t.strings() = v;
  return t;
}

std::vector<bool> bools(const Tensor& t) { return std::vector<bool>(t.data<bool>(), t.data<bool>() + t.numel()); }

}  // namespace qonnx::test

namespace qonnx::test {

std::vector<std::filesystem::path> shared_models() {
  std::vector<std::filesystem::path> out;
  std::filesystem::path root = QONNX_SHARED_MODELS;
  if (!std::filesystem::is_directory(root)) return out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root))
    if (e.path().extension() == ".onnx") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::filesystem::path shared_model(const std::string& tail) {
  for (const auto& m : shared_models())
    if (m.string().size() >= tail.size() && m.string().compare(m.string().size() - tail.size(), tail.size(), tail) == 0) return m;
  return {};
}

Tensor nhwc_to_nchw(const Tensor& t) {
  const Dims& d = t.dims();
  Dims out{d[0], d.back()};
  out.insert(out.end(), d.begin() + 1, d.end() - 1);
  const int64_t c = d.back(), spatial = t.numel() / (d[0] * c);
  Tensor r(DType::kFloat, out);
  for (int64_t n = 0; n < d[0]; ++n)
    for (int64_t s = 0; s < spatial; ++s)
      for (int64_t k = 0; k < c; ++k) r.data<float>()[(n * c + k) * spatial + s] = t.data<float>()[(n * spatial + s) * c + k];
  return r;
}

Tensor nchw_to_nhwc(const Tensor& t) {
  const Dims& d = t.dims();
  Dims out{d[0]};
  out.insert(out.end(), d.begin() + 2, d.end());
  out.push_back(d[1]);
  const int64_t c = d[1], spatial = t.numel() / (d[0] * c);
  Tensor r(DType::kFloat, out);
  for (int64_t n = 0; n < d[0]; ++n)
    for (int64_t k = 0; k < c; ++k)
      for (int64_t s = 0; s < spatial; ++s) r.data<float>()[(n * spatial + s) * c + k] = t.data<float>()[(n * c + k) * spatial + s];
  return r;
}

std::string outputs_differ(const ir::Model& original, const ir::Model& lowered, const std::map<std::string, Tensor>& feeds) {
  std::vector<Tensor> outs;
  for (const ir::Model* m : {&original, &lowered}) {
    auto ex = exec::Executor::create(*m);
    if (!ex.is_ok()) return ex.status().to_string();
    auto r = ex.value().run(feeds);
    if (!r.is_ok()) return r.status().to_string();
    outs.push_back(r.value().outputs[0]);
  }
  const Tensor& a = outs[0];
  const Tensor& b = outs[1];
  if (a.dims() != b.dims() || a.dtype() != DType::kFloat || b.dtype() != DType::kFloat) return "dims or types differ";
  for (int64_t i = 0; i < a.numel(); ++i) {
    const float p = a.data<float>()[i], q = b.data<float>()[i];
    if (!(p == q || (std::isnan(p) && std::isnan(q)))) return fmt::format("element {}: {} vs {}", i, p, q);
  }
  return "";
}

bool onnxruntime_available() {
  return std::filesystem::exists(std::filesystem::path(QONNX_SOURCE_DIR) / "tools/ort/node_modules/onnxruntime-node") &&
         std::system("command -v node >/dev/null 2>&1") == 0;
}

std::string onnxruntime_disagrees(const ir::Model& model, const std::string& input_name, const Tensor& input,
                                  const Tensor& expected, double atol, double rtol, const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  fs::create_directories(dir / "inputs");
  fs::create_directories(dir / "expected");
  if (input.defined()) {
    if (Status st = io::write_tensor_pb(dir / "inputs/input_0.pb", input_name, input); !st.is_ok()) return st.to_string();
  }
  // run_ort checks the expected tensor's name against the output's.
  const std::string output_name = model.graph().outputs().empty() ? "" : model.graph().outputs()[0]->name();
  if (Status st = io::write_tensor_pb(dir / "expected/output_0.pb", output_name, expected); !st.is_ok()) return st.to_string();
  if (Status st = io::save_model(model, dir / "model.onnx"); !st.is_ok()) return st.to_string();
  return onnxruntime_disagreement(dir / "model.onnx", dir / "inputs", dir / "expected", atol, rtol);
}

Result<bool> run_passes(ir::Model& m, const std::string& text, pass::PassContext& ctx) {
  auto pipeline = pass::parse_pipeline(text);
  if (!pipeline.is_ok()) return pipeline.status();
  return pass::run_pipeline(m, pipeline.value(), ctx);
}

Result<bool> run_passes(ir::Model& m, const std::string& text) {
  pass::PassContext ctx;
  return run_passes(m, text, ctx);
}

std::string onnxruntime_disagreement(const std::filesystem::path& model, const std::filesystem::path& inputs,
                                     const std::filesystem::path& expected, double atol, double rtol) {
  const std::filesystem::path log = model.string() + ".ort.log";
  const std::string cmd = fmt::format("node {} {} --input-dir {} --expect {} --atol {} --rtol {} -q >{} 2>&1",
                                      (std::filesystem::path(QONNX_SOURCE_DIR) / "tools/ort/run_ort.js").string(),
                                      model.string(), inputs.string(), expected.string(), atol, rtol, log.string());
  if (std::system(cmd.c_str()) == 0) return "";
  std::ostringstream text;
  text << std::ifstream(log).rdbuf();
  return "onnxruntime disagrees or fails: " + text.str();
}

}  // namespace qonnx::test
