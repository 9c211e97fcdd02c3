// Compact helpers for kernel tests: build a one-node model around given tensors and run it
// through the real executor and registry.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "qonnx/io/model_builder.h"
#include "qonnx/pass/pass.h"
#include "qonnx/support/status.h"
#include "qonnx/tensor.h"

namespace qonnx::test {

struct NodeCase {
  std::string op;
  std::string domain{};  // "" = default
  int64_t opset = 13;  // default-domain opset
  std::vector<std::pair<std::string, int64_t>> imports{};  // extra domain imports
  std::vector<Tensor> inputs{};  // an undefined Tensor() is an omitted optional input
  std::function<void(io::NodeBuilder&)> attrs{};
  int num_outputs = 1;
};

Result<std::vector<Tensor>> run_node(const NodeCase& c);

template <typename T>
Tensor make(DType dtype, Dims dims, const std::vector<T>& values) {
  Tensor t(dtype, std::move(dims));
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < t.numel(); ++i) t.data<T>()[i] = values[i];
  return t;
}

inline Tensor f32(Dims dims, const std::vector<float>& v) { return make<float>(DType::kFloat, std::move(dims), v); }
inline Tensor f32s(float v) { return make<float>(DType::kFloat, {}, {v}); }
inline Tensor i64(Dims dims, const std::vector<int64_t>& v) { return make<int64_t>(DType::kInt64, std::move(dims), v); }

std::vector<float> values_f32(const Tensor& t);

// The run failed with `code` and a message containing `fragment` (gtest expectations).
void expect_error(const Result<std::vector<Tensor>>& r, Code code, const std::string& fragment);

// Every .onnx under QONNX_SHARED_MODELS (sorted); empty when ../shared is absent.
std::vector<std::filesystem::path> shared_models();

// Whether node and onnxruntime-node (tools/ort/node_modules, bash scripts/install-ort.sh) are installed.
bool onnxruntime_available();
// Runs `model` in onnxruntime (tools/ort/run_ort.js) on inputs/input_K.pb and compares with
// expected/output_K.pb within atol + rtol * |expected|: "" when they agree, else run_ort's output.
std::string onnxruntime_disagreement(const std::filesystem::path& model, const std::filesystem::path& inputs,
                                     const std::filesystem::path& expected, double atol, double rtol);

// Parses and runs a textual pipeline; whether any pass changed the model.
Result<bool> run_passes(ir::Model& m, const std::string& text, pass::PassContext& ctx);
Result<bool> run_passes(ir::Model& m, const std::string& text);

}  // namespace qonnx::test
