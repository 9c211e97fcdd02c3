#include "qonnx/demo/demo_model.h"

#include <cmath>

#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/io/model_builder.h"

namespace qonnx::demo {
namespace {

Tensor filled(Dims dims, float (*f)(int64_t)) {
  Tensor t(DType::kFloat, std::move(dims));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = f(i);
  return t;
}

}  // namespace

Result<ir::Model> build_demo_model() {
  const std::string q = dialect::kGeneralDomain;
  io::ModelBuilder b(13);
  b.import(q, 2);
  b.metadata("qonnx-cc.demo", "2-layer quantized MLP");
  b.input("x", DType::kFloat, {-1, 16});
  b.output("y", DType::kFloat, {-1, 4});
  // Deterministic weights from smooth functions: no RNG, same model everywhere.
  b.initializer("w1", filled({16, 8}, [](int64_t i) { return 1.5f * std::sin(0.37f * static_cast<float>(i)); }));
  b.initializer("w1_scale", filled({1, 8}, [](int64_t i) { return 0.125f * static_cast<float>(1 + i % 3); }));
  b.initializer("b1", filled({8}, [](int64_t i) { return 0.05f * static_cast<float>(i - 4); }));
  b.initializer("w2", filled({8, 4}, [](int64_t i) { return std::cos(0.9f * static_cast<float>(i)); }));
  b.initializer("w2_scale", Tensor::scalar<float>(DType::kFloat, 0.25f));
  b.initializer("act_scale", Tensor::scalar<float>(DType::kFloat, 1.0f / 32));
  b.initializer("relu_scale", Tensor::scalar<float>(DType::kFloat, 1.0f / 16));
  b.initializer("trunc_out_scale", Tensor::scalar<float>(DType::kFloat, 0.125f));
  b.initializer("zero", Tensor::scalar<float>(DType::kFloat, 0.0f));
  b.initializer("bits8", Tensor::scalar<float>(DType::kFloat, 8.0f));
  b.initializer("bits4", Tensor::scalar<float>(DType::kFloat, 4.0f));
  b.node(dialect::kQuantOp, {"x", "act_scale", "zero", "bits8"}, {"x_q"}, q).attr("signed", 1).attr("narrow", 0).attr("rounding_mode", "ROUND");
  b.node(dialect::kQuantOp, {"w1", "w1_scale", "zero", "bits4"}, {"w1_q"}, q).attr("signed", 1).attr("narrow", 1).attr("rounding_mode", "ROUND");
  b.node("MatMul", {"x_q", "w1_q"}, {"h1"});
  b.node("Add", {"h1", "b1"}, {"h1b"});
  b.node("Relu", {"h1b"}, {"h1r"});
  b.node(dialect::kQuantOp, {"h1r", "relu_scale", "zero", "bits8"}, {"h1_q"}, q).attr("signed", 0).attr("narrow", 0).attr("rounding_mode", "ROUND");
  b.node(dialect::kTruncOp, {"h1_q", "relu_scale", "zero", "bits8", "trunc_out_scale", "bits4"}, {"h1_t"}, q)
      .attr("rounding_mode", "FLOOR").attr("signed", 0).attr("narrow", 0);
  b.node(dialect::kBipolarQuantOp, {"w2", "w2_scale"}, {"w2_q"}, q);
  b.node("MatMul", {"h1_t", "w2_q"}, {"y"});
  b.annotate("x_q", "SCALEDINT<8>");
  b.annotate("w1_q", "SCALEDINT<4>");
  b.annotate("h1_q", "SCALEDINT<8>");
  b.annotate("h1_t", "SCALEDINT<4>");
  return b.build();
}

}  // namespace qonnx::demo
