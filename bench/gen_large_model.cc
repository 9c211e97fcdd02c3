// Writes a deep QONNX MLP whose weights live in external data, streamed to disk in chunks so the
// generator itself never holds more than one chunk:
// `gen_large_model OUT.onnx --layers L --width W [--opset N] [--weight-bits B]` makes L layers of W x W
// float32 weights (12 x 8192 x 8192 = 3 GiB), each behind a per-channel B-bit Quant (default 4), with an
// 8-bit Quant on every activation.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace {

void add_float_initializer(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& dims,
                           const std::vector<float>& values) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(values.data(), values.size() * sizeof(float));
}

onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& in,
                          const std::string& out, const std::string& domain = "") {
  auto* n = g->add_node();
  n->set_name(out + "_node");
  n->set_op_type(op);
  if (!domain.empty()) n->set_domain(domain);
  for (const auto& i : in) n->add_input(i);
  n->add_output(out);
  return n;
}

void set_int_attr(onnx::NodeProto* n, const char* name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: gen_large_model OUT.onnx [--layers L] [--width W] [--opset N] [--weight-bits B]\n");
    return 2;
  }
  std::filesystem::path out = argv[1];
  int64_t layers = 12, width = 8192, opset = 13, weight_bits = 4;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--layers") layers = std::atoll(argv[i + 1]);
    else if (a == "--width") width = std::atoll(argv[i + 1]);
    else if (a == "--opset") opset = std::atoll(argv[i + 1]);
    else if (a == "--weight-bits") weight_bits = std::atoll(argv[i + 1]);
    else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    }
  }
  const std::string domain = "qonnx.custom_op.general";
  const std::string data_name = out.filename().string() + ".data";
  std::ofstream data(out.string() + ".data", std::ios::binary | std::ios::trunc);
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("qonnx-cc gen_large_model");
  auto* op = m.add_opset_import();
  op->set_version(opset);
  auto* q = m.add_opset_import();
  q->set_domain(domain);
  q->set_version(1);
  auto* g = m.mutable_graph();
  g->set_name("large_mlp");
  auto value_info = [&](onnx::ValueInfoProto* vi, const std::string& name) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    tt->mutable_shape()->add_dim()->set_dim_value(1);
    tt->mutable_shape()->add_dim()->set_dim_value(width);
  };
  value_info(g->add_input(), "x");
  add_float_initializer(g, "act_scale", {}, {1.0f / 64});
  add_float_initializer(g, "zero", {}, {0.0f});
  add_float_initializer(g, "bits8", {}, {8.0f});
  add_float_initializer(g, "weight_bits", {}, {static_cast<float>(weight_bits)});
  std::vector<float> chunk;
  const int64_t rows_per_chunk = std::max<int64_t>(1, (int64_t{16} << 20) / (width * 4));
  uint64_t offset = 0;
  std::string act = "x";
  for (int64_t l = 0; l < layers; ++l) {
    std::string w = "w" + std::to_string(l);
    // Weights: a cheap deterministic pattern, written chunk by chunk at a 4 KiB aligned offset.
    offset = (offset + 4095) / 4096 * 4096;
    data.seekp(static_cast<std::streamoff>(offset));
    uint64_t state = 0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(l + 1);
    for (int64_t r = 0; r < width; r += rows_per_chunk) {
      int64_t rows = std::min(rows_per_chunk, width - r);
      chunk.resize(static_cast<size_t>(rows * width));
      for (auto& v : chunk) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        v = static_cast<float>(static_cast<int64_t>(state >> 40) % 2001 - 1000) * (0.02f / 1000.0f);
      }
      data.write(reinterpret_cast<const char*>(chunk.data()), static_cast<std::streamsize>(chunk.size() * 4));
    }
    auto* t = g->add_initializer();
    t->set_name(w);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(width);
    t->add_dims(width);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto kv = [&](const char* k, const std::string& v) {
      auto* e = t->add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    uint64_t bytes = static_cast<uint64_t>(width) * static_cast<uint64_t>(width) * 4;
    kv("location", data_name);
    kv("offset", std::to_string(offset));
    kv("length", std::to_string(bytes));
    offset += bytes;
    std::vector<float> scales(static_cast<size_t>(width));
    for (int64_t c = 0; c < width; ++c) scales[static_cast<size_t>(c)] = 0.002f * static_cast<float>(1 + c % 4);
    add_float_initializer(g, w + "_scale", {1, width}, scales);
    std::string aq = "a" + std::to_string(l) + "_q", wq = w + "_q", mm = "h" + std::to_string(l);
    set_int_attr(add_node(g, "Quant", {act, "act_scale", "zero", "bits8"}, aq, domain), "signed", 1);
    auto* wn = add_node(g, "Quant", {w, w + "_scale", "zero", "weight_bits"}, wq, domain);
    set_int_attr(wn, "narrow", 1);
    add_node(g, "MatMul", {aq, wq}, mm);
    act = "r" + std::to_string(l);
    add_node(g, "Relu", {mm}, act);
  }
  value_info(g->add_output(), act);
  data.close();
  std::ofstream model(out, std::ios::binary | std::ios::trunc);
  m.SerializeToOstream(&model);
  std::printf("wrote %s and %s: %lld layers of %lldx%lld float32 (%.2f GiB)\n", out.c_str(), data_name.c_str(),
              static_cast<long long>(layers), static_cast<long long>(width), static_cast<long long>(width),
              static_cast<double>(offset) / (1u << 30));
  return model && data ? 0 : 1;
}
