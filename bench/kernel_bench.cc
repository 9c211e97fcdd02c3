// Kernel benchmarks (Google Benchmark): the quantization loops on 16M float32 elements beside a
// plain memory copy of the same bytes, one thread. Bytes per second counts bytes read + written, so
// the copy and each kernel are compared on the memory traffic they need; bench/run_bench.sh prints
// kernel / copy ratios. The loops are the ones the kernels run (kernels/qonnx/fast_kernels.h) on
// preallocated outputs, on the best instruction set the CPU has (kernels/isa/isa.h);
// *_Scalar are the former per-element reference loop and the portable path, for comparison, and
// *_Kernel goes through the registry (input checks + output allocation included).
// BM_Int8Gemm / BM_FloatGemm: the exact int8 GEMM (kernels/common/igemm.h) on each path this CPU runs
// against the float GEMM on the same shapes, one thread, in multiply-adds per second (MACs counter).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/common/gemm_core.h"
#include "kernels/common/igemm.h"
#include "kernels/onnx/quantize_linear.h"
#include "kernels/qonnx/fast_kernels.h"
#include "kernels/isa/isa.h"
#include "qonnx/exec/broadcast.h"
#include "qonnx/exec/executor.h"
#include "qonnx/io/model_builder.h"
#include "qonnx/register_all.h"
#include "qonnx/kernels/quant.h"

namespace {
using namespace qonnx;
using namespace qonnx::kernels;

constexpr int64_t kN = int64_t{16} << 20;  // 16M elements
const Dims kDims = {64, 256, 32, 32};      // N, C, H, W: per-channel scale on C (runs of 1024)

const Tensor& input_x() {
  static const Tensor x = [] {
    Tensor t(DType::kFloat, kDims);
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> d(-4.0f, 4.0f);
    float* p = t.data<float>();
    for (int64_t i = 0; i < kN; ++i) p[i] = d(rng);
    return t;
  }();
  return x;
}

Tensor scalar(float v) { return Tensor::scalar<float>(DType::kFloat, v); }
Tensor per_channel(float base) {
  Tensor t(DType::kFloat, {1, 256, 1, 1});
  for (int i = 0; i < 256; ++i) t.data<float>()[i] = base * static_cast<float>(1 + i % 7);
  return t;
}

void set_bytes(benchmark::State& state, int64_t in_bytes, int64_t out_bytes) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * (in_bytes + out_bytes));
}

void BM_Copy(benchmark::State& state) {
  const Tensor& x = input_x();
  std::vector<float> y(static_cast<size_t>(kN));
  for (auto _ : state) {
    std::memcpy(y.data(), x.data<float>(), static_cast<size_t>(kN) * 4);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  set_bytes(state, kN * 4, kN * 4);
}
BENCHMARK(BM_Copy)->Unit(benchmark::kMillisecond);

quant::QuantParams quant_params(bool per_channel_scale, quant::RoundingMode mode) {
  quant::QuantParams p;
  p.scale = per_channel_scale ? per_channel(0.03125f) : scalar(0.03125f);
  p.zeropt = scalar(0.0f);
  p.bits = 8;
  p.is_signed = true;
  p.narrow = false;
  p.mode = mode;
  return p;
}

void BM_Quant_PerTensor(benchmark::State& state) {
  const Tensor& x = input_x();
  quant::QuantParams p = quant_params(false, static_cast<quant::RoundingMode>(state.range(0)));
  std::vector<float> y(static_cast<size_t>(kN));
  for (auto _ : state) {
    quant_into(kDims, x, p, y.data());
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetLabel(quant::rounding_mode_name(p.mode));
  set_bytes(state, kN * 4, kN * 4);
}
BENCHMARK(BM_Quant_PerTensor)->DenseRange(0, 6)->Unit(benchmark::kMillisecond);

void BM_Quant_PerChannel(benchmark::State& state) {
  const Tensor& x = input_x();
  quant::QuantParams p = quant_params(true, static_cast<quant::RoundingMode>(state.range(0)));
  std::vector<float> y(static_cast<size_t>(kN));
  for (auto _ : state) {
    quant_into(kDims, x, p, y.data());
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetLabel(quant::rounding_mode_name(p.mode));
  set_bytes(state, kN * 4, kN * 4);
}
BENCHMARK(BM_Quant_PerChannel)->Arg(0)->Arg(2)->Unit(benchmark::kMillisecond);

// The former implementation: per-element broadcast walk, switch on the mode per element.
void BM_Quant_PerTensor_Scalar(benchmark::State& state) {
  const Tensor& x = input_x();
  quant::QuantParams p = quant_params(false, quant::RoundingMode::kRound);
  std::vector<float> y(static_cast<size_t>(kN));
  const quant::IntRange range = quant::quant_int_range(p.bits, p.is_signed, p.narrow);
  for (auto _ : state) {
    const float *xs = x.data<float>(), *ss = p.scale.data<float>(), *zs = p.zeropt.data<float>();
    exec::for_each_broadcast<3>(kDims, {&x.dims(), &p.scale.dims(), &p.zeropt.dims()}, [&](int64_t o, const auto& off) {
      const float s = ss[off[1]], z = zs[off[2]];
      y[static_cast<size_t>(o)] = (quant::quant_code(xs[off[0]], s, z, range, p) - z) * s;
    });
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  set_bytes(state, kN * 4, kN * 4);
}
BENCHMARK(BM_Quant_PerTensor_Scalar)->Unit(benchmark::kMillisecond);

void BM_BipolarQuant(benchmark::State& state) {
  const Tensor& x = input_x();
  Tensor s = state.range(0) ? per_channel(0.25f) : scalar(0.25f);
  std::vector<float> y(static_cast<size_t>(kN));
  for (auto _ : state) {
    bipolar_quant_into(kDims, x, s, y.data());
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetLabel(state.range(0) ? "per-channel" : "per-tensor");
  set_bytes(state, kN * 4, kN * 4);
}
BENCHMARK(BM_BipolarQuant)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_Trunc(benchmark::State& state) {
  const Tensor& x = input_x();
  Tensor s = state.range(0) ? per_channel(0.03125f) : scalar(0.03125f), z = scalar(0.0f);
  std::vector<float> y(static_cast<size_t>(kN));
  for (auto _ : state) {
    trunc_v1_into(kDims, x, s, z, 8, 4, quant::RoundingMode::kFloor, y.data());
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetLabel(state.range(0) ? "per-channel FLOOR" : "per-tensor FLOOR");
  set_bytes(state, kN * 4, kN * 4);
}
BENCHMARK(BM_Trunc)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_QuantizeLinear(benchmark::State& state) {
  const Tensor& x = input_x();
  const bool pc = state.range(0) != 0;
  std::vector<float> s(256), z(256, 3.0f);
  for (int i = 0; i < 256; ++i) s[static_cast<size_t>(i)] = 0.03125f * static_cast<float>(1 + i % 7);
  std::vector<int8_t> y(static_cast<size_t>(kN));
  for (auto _ : state) {
    quantize_linear_into(x.data<float>(), kN, s.data(), z.data(), pc ? 256 : 1, pc ? 1024 : 1, DType::kInt8, y.data());
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetLabel(pc ? "per-axis int8" : "per-tensor int8");
  set_bytes(state, kN * 4, kN * 1);
}
BENCHMARK(BM_QuantizeLinear)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_DequantizeLinear(benchmark::State& state) {
  const bool pc = state.range(0) != 0;
  std::vector<int8_t> x(static_cast<size_t>(kN));
  for (int64_t i = 0; i < kN; ++i) x[static_cast<size_t>(i)] = static_cast<int8_t>(i * 37);
  std::vector<float> s(256);
  std::vector<int8_t> z(256, 3);
  for (int i = 0; i < 256; ++i) s[static_cast<size_t>(i)] = 0.03125f * static_cast<float>(1 + i % 7);
  std::vector<float> y(static_cast<size_t>(kN));
  for (auto _ : state) {
    dequantize_linear_into(x.data(), DType::kInt8, kN, s.data(), z.data(), pc ? 256 : 1, pc ? 1024 : 1, y.data());
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetLabel(pc ? "per-axis int8" : "per-tensor int8");
  set_bytes(state, kN * 1, kN * 4);
}
BENCHMARK(BM_DequantizeLinear)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// MultiThreshold (float32), thresholds per channel: NCHW (runs of 1024 with one threshold row) or
// channels last (NHWC: the row changes with every element). Arg: layout (0 NCHW, 1 NHWC), steps.
void BM_MultiThreshold(benchmark::State& state) {
  const Tensor& x = input_x();
  const bool nhwc = state.range(0) != 0;
  const int64_t steps = state.range(1), channels = 256;
  std::vector<double> thr(static_cast<size_t>(channels * steps));
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t t = 0; t < steps; ++t)  // ascending in [-4, 4) per channel, shifted by channel
      thr[static_cast<size_t>(c * steps + t)] = -4.0 + 8.0 * static_cast<double>(t) / static_cast<double>(steps) +
                                                0.001 * static_cast<double>(c);
  const int64_t outer = nhwc ? kN / channels : 64, inner = nhwc ? 1 : 1024;
  std::vector<float> y(static_cast<size_t>(kN));
  for (auto _ : state) {
    multithreshold_into(x.data<float>(), outer, channels, inner, thr.data(), false, steps, 0.5f, -1.0f, y.data());
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetLabel((nhwc ? "NHWC " : "NCHW ") + std::to_string(steps) + " thresholds");
  set_bytes(state, kN * 4, kN * 4);
}
BENCHMARK(BM_MultiThreshold)->Args({0, 3})->Args({0, 15})->Args({1, 3})->Args({1, 15})->Unit(benchmark::kMillisecond);

// The portable path (what a CPU without AVX2, or QONNX_SIMD=portable, runs), for comparison.
void BM_Quant_PerTensor_Portable_Scalar(benchmark::State& state) {
  const Tensor& x = input_x();
  quant::QuantParams p = quant_params(false, quant::RoundingMode::kRound);
  std::vector<float> y(static_cast<size_t>(kN));
  const isa::Isa previous = isa::use(isa::Family::kQuant, isa::Isa::kPortable);
  for (auto _ : state) {
    quant_into(kDims, x, p, y.data());
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  isa::use(isa::Family::kQuant, previous);
  state.SetLabel("ROUND");
  set_bytes(state, kN * 4, kN * 4);
}
BENCHMARK(BM_Quant_PerTensor_Portable_Scalar)->Unit(benchmark::kMillisecond);

// Whole kernel through the executor: parameter checks, output allocation (zero-filled by Tensor)
// included. One Quant node, per-tensor scale.
void BM_Quant_Kernel(benchmark::State& state) {
  io::ModelBuilder b(13);
  b.import("qonnx.custom_op.general", 1)
      .input("x", DType::kFloat, kDims)
      .output("y", DType::kFloat, kDims)
      .initializer("s", scalar(0.03125f))
      .initializer("z", scalar(0.0f))
      .initializer("b", scalar(8.0f));
  b.node("Quant", {"x", "s", "z", "b"}, {"y"}, "qonnx.custom_op.general").attr("signed", 1).attr("narrow", 0);
  auto model = b.build();
  if (!model.is_ok()) {
    state.SkipWithError(model.status().message().c_str());
    return;
  }
  auto ex = exec::Executor::create(model.value());
  std::map<std::string, Tensor> feeds{{"x", input_x()}};
  for (auto _ : state) {
    auto r = ex->run(feeds);
    benchmark::DoNotOptimize(r);
  }
  set_bytes(state, kN * 4, kN * 4);
}
BENCHMARK(BM_Quant_Kernel)->Unit(benchmark::kMillisecond);

// C (m x n) = A (m x k) x W (k x n): a conv as im2col rows (output positions) x weights, batch-1 and
// batch-16 fully connected layers.
struct GemmShape {
  const char* what;
  int64_t m, k, n;
};
const GemmShape kGemmShapes[] = {
    {"conv3x3 64ch 56x56", 3136, 576, 64},
    {"conv3x3 128ch 28x28", 784, 1152, 128},
    {"fc 4096 batch 1", 1, 4096, 4096},
    {"fc 4096 batch 16", 16, 4096, 4096},
};

// Multiply-adds per second, and the label "<path> <shape>".
void set_macs(benchmark::State& state, const GemmShape& s, const char* path) {
  state.counters["MACs"] = benchmark::Counter(double(s.m) * double(s.k) * double(s.n),
                                              benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(std::string(path) + " " + s.what);
}

// One int8 path: the family level, and the weights' range, which picks among the AVX2 paths
// (left values up to 255: 4-bit weights take avx2-maddubs-k16, 7-bit avx2-maddubs, 8-bit avx2-madd16).
struct Int8Case {
  isa::Isa level;
  int w_max;  // weights in [-w_max - 1, w_max]
  const char* path;
};

void BM_Int8Gemm(benchmark::State& state, Int8Case c, GemmShape s) {
  std::mt19937 rng(1);
  std::uniform_int_distribution<int> left(0, 255), weight(-c.w_max - 1, c.w_max);
  std::vector<uint8_t> a(static_cast<size_t>(s.m * s.k));
  std::vector<int8_t> w(static_cast<size_t>(s.k * s.n));
  for (uint8_t& x : a) x = static_cast<uint8_t>(left(rng));
  for (int8_t& x : w) x = static_cast<int8_t>(weight(rng));
  std::vector<int32_t> out(static_cast<size_t>(s.m * s.n));
  const isa::Isa previous = isa::use(isa::Family::kInt8, c.level);
  const Int8Weights packed = Int8Weights::pack(s.k, s.n, w.data(), s.n, false, 255);
  isa::use(isa::Family::kInt8, previous);
  for (auto _ : state) {
    int8_gemm(s.m, s.k, a.data(), s.k, packed, out.data(), s.n);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_macs(state, s, packed.path());
}

void BM_FloatGemm(benchmark::State& state, GemmShape s) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> a(static_cast<size_t>(s.m * s.k)), w(static_cast<size_t>(s.k * s.n));
  for (float& x : a) x = d(rng);
  for (float& x : w) x = d(rng);
  std::vector<float> out(static_cast<size_t>(s.m * s.n));
  const FloatRowMajorSource source(w.data(), s.n);
  FloatGemm g;
  g.m = s.m, g.n = s.n, g.k = s.k, g.a = a.data(), g.lda = s.k, g.b = &source, g.c = out.data(), g.ldc = s.n;
  for (auto _ : state) {
    float_gemm(g);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_macs(state, s, isa::name(isa::current(isa::Family::kFloat)));
}

// Registered per path this CPU runs; the paths it cannot run are named on stderr.
void register_gemm_benchmarks() {
  const Int8Case cases[] = {{isa::Isa::kPortable, 127, "portable"},     {isa::Isa::kAvx2, 7, "avx2-maddubs-k16"},
                            {isa::Isa::kAvx2, 63, "avx2-maddubs"},          {isa::Isa::kAvx2, 127, "avx2-madd16"},
                            {isa::Isa::kAvxVnni, 127, "avxvnni"},           {isa::Isa::kAvx512, 127, "avx512vnni"}};
  for (const GemmShape& s : kGemmShapes) {
    const std::string shape = std::to_string(s.m) + "x" + std::to_string(s.k) + "x" + std::to_string(s.n);
    benchmark::RegisterBenchmark(("BM_FloatGemm/" + shape).c_str(), BM_FloatGemm, s)->Unit(benchmark::kMillisecond);
    for (const Int8Case& c : cases) {
      const std::string path = c.path;
      if (!isa::supports(isa::Family::kInt8, c.level, isa::cpu_features())) {
        if (&s == &kGemmShapes[0]) std::fprintf(stderr, "BM_Int8Gemm: this CPU does not run the %s path: skipped\n", path.c_str());
        continue;
      }
      benchmark::RegisterBenchmark(("BM_Int8Gemm/" + shape + "/" + path).c_str(), BM_Int8Gemm, c, s)
          ->Unit(benchmark::kMillisecond);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  qonnx::register_all();
  register_gemm_benchmarks();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
