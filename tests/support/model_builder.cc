#include "support/test_util.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "qonnx/exec/executor.h"

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

Result<bool> run_passes(ir::Model& m, const std::string& text, pass::PassContext& ctx) {
  auto pipeline = pass::parse_pipeline(text);
  if (!pipeline.is_ok()) return pipeline.status();
  return pass::run_pipeline(m, pipeline.value(), ctx);
}

Result<bool> run_passes(ir::Model& m, const std::string& text) {
  pass::PassContext ctx;
  return run_passes(m, text, ctx);
}

bool onnxruntime_available() {
  return std::filesystem::exists(std::filesystem::path(QONNX_SOURCE_DIR) / "tools/ort/node_modules/onnxruntime-node") &&
         std::system("command -v node >/dev/null 2>&1") == 0;
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
