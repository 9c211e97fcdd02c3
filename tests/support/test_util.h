// Compact helpers for kernel tests: build a one-node model around given tensors and run it
// through the real executor and registry.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
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
// The same for one default-domain op at `opset`.
Result<std::vector<Tensor>> run_node(const std::string& op, int64_t opset, std::vector<Tensor> inputs,
                                     std::function<void(io::NodeBuilder&)> attrs = {});

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

// Runs both models on `feeds` with the executor: "" when output 0 is the same float32 tensor value for
// value (NaN equals NaN), else the first difference or why a run failed.
std::string outputs_differ(const ir::Model& original, const ir::Model& lowered, const std::map<std::string, Tensor>& feeds);

// onnxruntime-node and node are installed (tests that need them skip otherwise).
bool onnxruntime_available();
// Runs `model` in onnxruntime (tools/ort/run_ort.js) with `input` as its one runtime input (undefined:
// none) and compares output 0 with `expected` within atol + rtol * |expected|, in the folder `dir`
// (created; removed by the caller). "" when they agree, else the runner's log.
std::string onnxruntime_disagrees(const ir::Model& model, const std::string& input_name, const Tensor& input,
                                  const Tensor& expected, double atol, double rtol, const std::filesystem::path& dir);

// Parses and runs a textual pipeline; whether any pass changed the model.
Result<bool> run_passes(ir::Model& m, const std::string& text, pass::PassContext& ctx);
Result<bool> run_passes(ir::Model& m, const std::string& text);

}  // namespace qonnx::test
