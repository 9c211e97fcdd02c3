// Writes the fuzzers' seed corpora: tiny models built in code, one file each, under
// OUT/{load,exec,convert}/. Deterministic (no RNG), so re-running it reproduces the committed files.
//   gen_corpus fuzz/corpus
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "qonnx/demo/demo_model.h"
#include "qonnx/io/model_builder.h"
#include "qonnx/io/model_io.h"

namespace fs = std::filesystem;
using qonnx::Dims;
using qonnx::DType;
using qonnx::Tensor;
using qonnx::io::ModelBuilder;

namespace {

const std::string kQ = "qonnx.custom_op.general";

Tensor floats(Dims dims, float start = 0.25f, float step = 0.5f) {
  Tensor t(DType::kFloat, std::move(dims));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = start + step * static_cast<float>(i % 7) - 1.0f;
  return t;
}

Tensor ints(std::vector<int64_t> v) {
  Tensor t(DType::kInt64, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.data<int64_t>()[i] = v[i];
  return t;
}

Tensor scalar(float v) { return Tensor::scalar<float>(DType::kFloat, v); }

void write(const fs::path& file, const std::string& bytes) {
  fs::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary) << bytes;
}

// exec seeds: [u32 LE model length][model][tensor bytes]
std::string exec_seed(const std::string& model) {
  std::string out;
  uint32_t n = static_cast<uint32_t>(model.size());
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  out += model;
  for (int i = 0; i < 32; ++i) out.push_back(static_cast<char>((i * 37 + 11) & 0xff));
  return out;
}

// A single-node model: input x (float [2,3]) through `op`.
ModelBuilder unary(const std::string& op, int64_t opset = 13) {
  ModelBuilder b(opset);
  b.input("x", DType::kFloat, {2, 3});
  b.output("y", DType::kFloat);
  b.node(op, {"x"}, {"y"});
  return b;
}

ModelBuilder quant_model(int bits, bool is_signed, bool narrow, const char* rounding) {
  ModelBuilder b(13);
  b.import(kQ, 2);
  b.input("x", DType::kFloat, {-1, 4});
  b.output("y", DType::kFloat, {-1, 4});
  b.initializer("s", scalar(0.125f));
  b.initializer("z", scalar(0.0f));
  b.initializer("b", scalar(static_cast<float>(bits)));
  b.node("Quant", {"x", "s", "z", "b"}, {"y"}, kQ).attr("signed", is_signed ? 1 : 0).attr("narrow", narrow ? 1 : 0)
      .attr("rounding_mode", rounding);
  return b;
}

// Quant on activations and weights feeding a MatMul: the QDQ / ascend lowering patterns.
ModelBuilder quant_matmul() {
  ModelBuilder b(13);
  b.import(kQ, 2);
  b.input("x", DType::kFloat, {1, 4});
  b.output("y", DType::kFloat, {1, 3});
  b.initializer("w", floats({4, 3}));
  b.initializer("sx", scalar(0.0625f));
  b.initializer("sw", floats({1, 3}, 0.5f, 0.125f));
  b.initializer("z", scalar(0.0f));
  b.initializer("b8", scalar(8.0f));
  b.node("Quant", {"x", "sx", "z", "b8"}, {"xq"}, kQ).attr("signed", 1).attr("narrow", 0).attr("rounding_mode", "ROUND");
  b.node("Quant", {"w", "sw", "z", "b8"}, {"wq"}, kQ).attr("signed", 1).attr("narrow", 1).attr("rounding_mode", "ROUND");
  b.node("MatMul", {"xq", "wq"}, {"y"});
  return b;
}

ModelBuilder trunc_model() {
  ModelBuilder b(13);
  b.import(kQ, 2);
  b.input("x", DType::kFloat, {2, 2});
  b.output("y", DType::kFloat, {2, 2});
  b.initializer("s", scalar(0.25f));
  b.initializer("z", scalar(0.0f));
  b.initializer("ib", scalar(8.0f));
  b.initializer("os", scalar(1.0f));
  b.initializer("ob", scalar(4.0f));
  b.node("Trunc", {"x", "s", "z", "ib", "os", "ob"}, {"y"}, kQ).attr("rounding_mode", "FLOOR").attr("signed", 1).attr("narrow", 0);
  return b;
}

ModelBuilder bipolar_model() {
  ModelBuilder b(13);
  b.import(kQ, 1);
  b.input("x", DType::kFloat, {3});
  b.output("y", DType::kFloat, {3});
  b.initializer("s", scalar(0.5f));
  b.node("BipolarQuant", {"x", "s"}, {"y"}, kQ);
  return b;
}

ModelBuilder multithreshold_model() {
  ModelBuilder b(13);
  b.import(kQ, 1);
  b.input("x", DType::kFloat, {1, 2, 2, 2});
  b.output("y", DType::kFloat);
  b.initializer("t", floats({2, 3}));
  b.node("MultiThreshold", {"x", "t"}, {"y"}, kQ).attr("out_dtype", "UINT2").attr("out_scale", 1.0f).attr("out_bias", 0.0f);
  return b;
}

ModelBuilder conv_model() {
  ModelBuilder b(13);
  b.input("x", DType::kFloat, {1, 1, 4, 4});
  b.output("y", DType::kFloat);
  b.initializer("w", floats({2, 1, 2, 2}));
  b.initializer("bias", floats({2}));
  b.node("Conv", {"x", "w", "bias"}, {"y"}).attr("kernel_shape", std::vector<int64_t>{2, 2})
      .attr("pads", std::vector<int64_t>{0, 0, 1, 1}).attr("strides", std::vector<int64_t>{1, 1});
  return b;
}

ModelBuilder shape_model() {
  ModelBuilder b(13);
  b.input("x", DType::kFloat, {2, 3, 4});
  b.output("y", DType::kFloat);
  b.initializer("shape", ints({4, 6}));
  b.initializer("starts", ints({0, 1}));
  b.initializer("ends", ints({3, 5}));
  b.initializer("axes", ints({0, 1}));
  b.initializer("idx", ints({2, 0}));
  b.node("Reshape", {"x", "shape"}, {"r"});
  b.node("Slice", {"r", "starts", "ends", "axes"}, {"s"});
  b.node("Transpose", {"s"}, {"t"}).attr("perm", std::vector<int64_t>{1, 0});
  b.node("Gather", {"t", "idx"}, {"g"}).attr("axis", 1);
  b.node("Concat", {"g", "g"}, {"c"}).attr("axis", 0);
  b.node("ReduceSum", {"c"}, {"y"}).attr("keepdims", 0);
  return b;
}

ModelBuilder binary(const std::string& op, DType dtype) {
  ModelBuilder b(13);
  b.input("a", dtype, {2, 1, 3});
  b.input("c", dtype, {4, 1});
  b.output("y", dtype);
  b.node(op, {"a", "c"}, {"y"});
  return b;
}

ModelBuilder qdq_model() {
  ModelBuilder b(13);
  b.input("x", DType::kFloat, {2, 3});
  b.output("y", DType::kFloat);
  b.initializer("s", scalar(0.1f));
  b.initializer("zp", Tensor::scalar<int8_t>(DType::kInt8, 3));
  b.node("QuantizeLinear", {"x", "s", "zp"}, {"q"});
  b.node("DequantizeLinear", {"q", "s", "zp"}, {"y"});
  return b;
}

ModelBuilder misc_model() {
  ModelBuilder b(13);
  b.input("x", DType::kFloat, {1, 2, 3, 3});
  b.output("y", DType::kFloat);
  b.output("idx", DType::kInt64);
  b.initializer("k", ints({2}));
  b.initializer("scales", floats({4}, 1.0f, 0.0f));
  b.node("MaxPool", {"x"}, {"p"}).attr("kernel_shape", std::vector<int64_t>{2, 2});
  b.node("Softmax", {"p"}, {"sm"}).attr("axis", -1);
  b.node("Flatten", {"sm"}, {"f"}).attr("axis", 1);
  b.node("TopK", {"f", "k"}, {"y", "idx"}).attr("axis", 1);
  return b;
}

ModelBuilder external_data_model() {
  ModelBuilder b(13);
  b.input("x", DType::kFloat, {4, 4});
  b.output("y", DType::kFloat);
  b.initializer("w", floats({4, 4}));
  b.node("Add", {"x", "w"}, {"y"});
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: gen_corpus OUT_DIR\n");
    return 2;
  }
  fs::path out(argv[1]);
  std::vector<std::pair<std::string, ModelBuilder>> models;
  models.emplace_back("quant8", quant_model(8, true, false, "ROUND"));
  models.emplace_back("quant4_unsigned_narrow", quant_model(4, false, true, "HALF_UP"));
  models.emplace_back("quant_matmul", quant_matmul());
  models.emplace_back("trunc", trunc_model());
  models.emplace_back("bipolar", bipolar_model());
  models.emplace_back("multithreshold", multithreshold_model());
  models.emplace_back("conv", conv_model());
  models.emplace_back("shape_ops", shape_model());
  models.emplace_back("add_broadcast", binary("Add", DType::kFloat));
  models.emplace_back("div_int32", binary("Div", DType::kInt32));
  models.emplace_back("qdq", qdq_model());
  models.emplace_back("misc", misc_model());
  models.emplace_back("relu", unary("Relu"));
  models.emplace_back("sigmoid", unary("Sigmoid"));

  for (auto& [name, b] : models) {
    std::string bytes = b.serialize();
    write(out / "load" / (name + ".onnx"), bytes);
    write(out / "exec" / (name + ".bin"), exec_seed(bytes));
  }
  // convert seeds: the quantized models under every target selector (0..3).
  const char* convert_models[] = {"quant8", "quant_matmul", "trunc", "bipolar", "multithreshold", "conv", "shape_ops"};
  int selector = 0;
  for (const char* name : convert_models) {
    for (auto& [n, b] : models) {
      if (n != name) continue;
      write(out / "convert" / (n + ".bin"), std::string(1, static_cast<char>(selector++ % 4)) + b.serialize());
    }
  }
  auto demo = qonnx::demo::build_demo_model();
  if (demo.is_ok()) {
    auto bytes = qonnx::io::serialize_model(demo.value());
    if (bytes.is_ok()) {
      write(out / "load" / "demo.onnx", bytes.value());
      write(out / "convert" / "demo.bin", std::string(1, '\x01') + bytes.value());
    }
  }
  // External data: "w" stored in the fuzzers' base folder's w.bin (64 bytes = 16 floats).
  {
    onnx::ModelProto m = external_data_model().proto();
    auto* w = m.mutable_graph()->mutable_initializer(0);
    w->clear_raw_data();
    w->clear_float_data();
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    auto add = [&](const char* k, const char* v) {
      auto* e = w->add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    add("location", "w.bin");
    add("offset", "0");
    add("length", "64");
    std::string bytes;
    m.SerializeToString(&bytes);
    write(out / "load" / "external_data.onnx", bytes);
    write(out / "exec" / "external_data.bin", exec_seed(bytes));
  }
  // A subgraph: If with two one-node branches.
  {
    onnx::ModelProto m = unary("Relu").proto();
    onnx::GraphProto* g = m.mutable_graph();
    auto* cond_in = g->add_input();
    cond_in->CopyFrom(g->input(0));
    cond_in->set_name("cond");
    cond_in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::BOOL);
    cond_in->mutable_type()->mutable_tensor_type()->clear_shape();
    auto* node = g->add_node();
    node->set_op_type("If");
    node->set_name("If_0");
    node->add_input("cond");
    node->add_output("z");
    for (const char* branch : {"then_branch", "else_branch"}) {
      auto* a = node->add_attribute();
      a->set_name(branch);
      a->set_type(onnx::AttributeProto::GRAPH);
      auto* sg = a->mutable_g();
      sg->set_name(branch);
      auto* n = sg->add_node();
      n->set_op_type("Neg");
      n->add_input("y");
      n->add_output("zb");
      auto* o = sg->add_output();
      o->set_name("zb");
      o->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    }
    auto* zo = g->add_output();
    zo->set_name("z");
    zo->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    std::string bytes;
    m.SerializeToString(&bytes);
    write(out / "load" / "subgraph.onnx", bytes);
  }
  return 0;
}
