// The one kernel-test harness: build a one-node model around given tensors and run it through the
// real executor and registry; typed tensor makers and readers.
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

using Attrs = std::function<void(io::NodeBuilder&)>;

// Builds a one-node model around `c` and runs it through the real executor and registry.
Result<std::vector<Tensor>> run_node(const NodeCase& c);
// Output #0 of `c`, or the run's error.
Result<Tensor> run1(const NodeCase& c);
// A default-domain node (the argument order of every kernel test): its outputs or the run's error.
Result<std::vector<Tensor>> run_op(const std::string& op, std::vector<Tensor> inputs, Attrs attrs = nullptr,
                                   int64_t opset = 13, int num_outputs = 1);
// Output #0 of run_op for a run that must succeed (a test failure and an undefined Tensor otherwise).
Tensor run_ok(const std::string& op, std::vector<Tensor> inputs, Attrs attrs = nullptr, int64_t opset = 13);

template <typename T>
Tensor make(DType dtype, Dims dims, const std::vector<T>& values) {
  Tensor t(dtype, std::move(dims));
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < t.numel(); ++i) t.data<T>()[i] = values[i];
  return t;
}

inline Tensor f32(Dims dims, const std::vector<float>& v) { return make<float>(DType::kFloat, std::move(dims), v); }
inline Tensor f32s(float v) { return make<float>(DType::kFloat, {}, {v}); }
inline Tensor i64(Dims dims, const std::vector<int64_t>& v) { return make<int64_t>(DType::kInt64, std::move(dims), v); }
inline Tensor i32(Dims dims, const std::vector<int32_t>& v) { return make<int32_t>(DType::kInt32, std::move(dims), v); }
inline Tensor i8(Dims dims, const std::vector<int8_t>& v) { return make<int8_t>(DType::kInt8, std::move(dims), v); }
inline Tensor u8(Dims dims, const std::vector<uint8_t>& v) { return make<uint8_t>(DType::kUInt8, std::move(dims), v); }
Tensor b8(Dims dims, const std::vector<bool>& v);  // std::vector<bool> has no data() to copy from
Tensor strings(Dims dims, const std::vector<std::string>& v);

template <typename T>
std::vector<T> values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.numel());
}
inline std::vector<float> values_f32(const Tensor& t) { return values<float>(t); }
std::vector<bool> bools(const Tensor& t);

// The run failed with `code` and a message containing `fragment` (gtest expectations).
void expect_error(const Result<std::vector<Tensor>>& r, Code code, const std::string& fragment);
// Running `c` fails with a message containing `fragment`, whatever the code.
void expect_error(const NodeCase& c, const std::string& fragment);

// (N, d..., C) <-> (N, C, d...) for float tensors, by plain loops (independent of the kernels' transposes).
Tensor nhwc_to_nchw(const Tensor& t);
Tensor nchw_to_nhwc(const Tensor& t);

// Every .onnx under QONNX_SHARED_MODELS (sorted); empty when ../shared is absent.
std::vector<std::filesystem::path> shared_models();
// The shared model whose path ends with `tail` ("qonnx_model_zoo/TFC_2W2A.onnx"); empty when absent.
std::filesystem::path shared_model(const std::string& tail);

// Runs both models on `feeds` with the executor: "" when output 0 is the same float32 tensor value for
// value (NaN equals NaN), else the first difference or why a run failed.
std::string outputs_differ(const ir::Model& original, const ir::Model& lowered, const std::map<std::string, Tensor>& feeds);

// Whether node and onnxruntime-node (tools/ort/node_modules, bash scripts/install-ort.sh) are installed.
bool onnxruntime_available();
// Runs the model file in onnxruntime (tools/ort/run_ort.js) on inputs/input_K.pb and compares with
// expected/output_K.pb within atol + rtol * |expected|: "" when they agree, else run_ort's output.
std::string onnxruntime_disagreement(const std::filesystem::path& model, const std::filesystem::path& inputs,
                                     const std::filesystem::path& expected, double atol, double rtol);
// The same for an in-memory model with `input` as its one runtime input (undefined: none) and output 0
// compared with `expected`, written to the folder `dir` (created; removed by the caller).
std::string onnxruntime_disagrees(const ir::Model& model, const std::string& input_name, const Tensor& input,
                                  const Tensor& expected, double atol, double rtol, const std::filesystem::path& dir);

// Parses and runs a textual pipeline; whether any pass changed the model.
Result<bool> run_passes(ir::Model& m, const std::string& text, pass::PassContext& ctx);
Result<bool> run_passes(ir::Model& m, const std::string& text);

}  // namespace qonnx::test
