// Generates QONNX models for the `convert` scaling benchmark (bench/run_bench.sh):
//   gen_graph OUT.onnx --blocks B [--width W]
// A chain of B blocks, each 4 nodes:  Quant(act) -> MatMul(., Quant(W_k)) -> Relu, with W_k a
// float32 (W x W) initializer quantized per output channel (4-bit, narrow) and the activation
// quantizer 8-bit per tensor. Nodes = 4 * B; initializer bytes ~ 4 * W * W * B. Deterministic.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "qonnx/io/model_builder.h"

using namespace qonnx;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: gen_graph OUT.onnx --blocks B [--width W]\n");
    return 2;
  }
  std::string out = argv[1];
  long blocks = 1, width = 8;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--blocks") blocks = std::atol(argv[i + 1]);
    else if (a == "--width") width = std::atol(argv[i + 1]);
    else {
      std::fprintf(stderr, "gen_graph: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  if (blocks < 1 || width < 1) {
    std::fprintf(stderr, "gen_graph: --blocks and --width must be positive\n");
    return 2;
  }
  const int64_t w = width;
  io::ModelBuilder b(13);
  b.import("qonnx.custom_op.general", 1);
  b.input("x", DType::kFloat, {1, w});
  b.initializer("act_scale", Tensor::scalar<float>(DType::kFloat, 0.0625f));
  b.initializer("zero", Tensor::scalar<float>(DType::kFloat, 0.0f));
  b.initializer("bits8", Tensor::scalar<float>(DType::kFloat, 8.0f));
  b.initializer("bits4", Tensor::scalar<float>(DType::kFloat, 4.0f));
  Tensor wscale(DType::kFloat, {1, w});
  for (int64_t j = 0; j < w; ++j) wscale.data<float>()[j] = 0.125f / static_cast<float>(1 + j % 3);
  b.initializer("w_scale", wscale);
  uint32_t state = 12345;
  std::string cur = "x";
  for (long k = 0; k < blocks; ++k) {
    const std::string id = std::to_string(k);
    Tensor wt(DType::kFloat, {w, w});
    float* p = wt.data<float>();
    for (int64_t i = 0; i < w * w; ++i) {
      state = state * 1664525u + 1013904223u;
      p[i] = (static_cast<float>(state >> 8) / 16777216.0f - 0.5f) * 0.5f;
    }
    b.initializer("W" + id, wt);
    b.node("Quant", {cur, "act_scale", "zero", "bits8"}, {"qa" + id}, "qonnx.custom_op.general")
        .attr("signed", 1).attr("narrow", 0).attr("rounding_mode", "ROUND");
    b.node("Quant", {"W" + id, "w_scale", "zero", "bits4"}, {"qw" + id}, "qonnx.custom_op.general")
        .attr("signed", 1).attr("narrow", 1).attr("rounding_mode", "ROUND");
    b.node("MatMul", {"qa" + id, "qw" + id}, {"mm" + id});
    const std::string next = k + 1 == blocks ? "y" : "r" + id;
    b.node("Relu", {"mm" + id}, {next});
    cur = next;
  }
  b.output("y", DType::kFloat, {1, w});
  std::ofstream f(out, std::ios::binary);
  const std::string bytes = b.serialize();
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f) {
    std::fprintf(stderr, "gen_graph: cannot write %s\n", out.c_str());
    return 4;
  }
  std::printf("%s: %ld nodes, %lld initializer bytes\n", out.c_str(), blocks * 4,
              static_cast<long long>(blocks) * w * w * 4);
  return 0;
}
