// Kernel benchmarks (Google Benchmark): the quantization loops on 16M float32 elements beside a
// plain memory copy of the same bytes, one thread. Bytes per second counts bytes read + written, so
// the copy and each kernel are compared on the memory traffic they need; bench/run_bench.sh prints
// kernel / copy ratios. The loops are the ones the kernels run (kernels/qonnx/fast_kernels.h) on
// preallocated outputs, on the best instruction set the CPU has (kernels/isa/isa.h);
// *_Scalar are the former per-element reference loop and the portable path, for comparison, and
// *_Kernel goes through the registry (input checks + output allocation included).
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

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

QuantParams quant_params(bool per_channel_scale, RoundingMode mode) {
  QuantParams p;
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
  QuantParams p = quant_params(false, static_cast<RoundingMode>(state.range(0)));
  std::vector<float> y(static_cast<size_t>(kN));
  for (auto _ : state) {
    quant_into(kDims, x, p, y.data());
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetLabel(rounding_mode_name(p.mode));
  set_bytes(state, kN * 4, kN * 4);
}
BENCHMARK(BM_Quant_PerTensor)->DenseRange(0, 6)->Unit(benchmark::kMillisecond);

void BM_Quant_PerChannel(benchmark::State& state) {
  const Tensor& x = input_x();
  QuantParams p = quant_params(true, static_cast<RoundingMode>(state.range(0)));
  std::vector<float> y(static_cast<size_t>(kN));
  for (auto _ : state) {
    quant_into(kDims, x, p, y.data());
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetLabel(rounding_mode_name(p.mode));
  set_bytes(state, kN * 4, kN * 4);
}
BENCHMARK(BM_Quant_PerChannel)->Arg(0)->Arg(2)->Unit(benchmark::kMillisecond);

// The former implementation: per-element broadcast walk, switch on the mode per element.
void BM_Quant_PerTensor_Scalar(benchmark::State& state) {
  const Tensor& x = input_x();
  QuantParams p = quant_params(false, RoundingMode::kRound);
  std::vector<float> y(static_cast<size_t>(kN));
  const IntRange range = quant_int_range(p.bits, p.is_signed, p.narrow);
  for (auto _ : state) {
    const float *xs = x.data<float>(), *ss = p.scale.data<float>(), *zs = p.zeropt.data<float>();
    exec::for_each_broadcast<3>(kDims, {&x.dims(), &p.scale.dims(), &p.zeropt.dims()}, [&](int64_t o, const auto& off) {
      const float s = ss[off[1]], z = zs[off[2]];
      y[static_cast<size_t>(o)] = (quant_code(xs[off[0]], s, z, range, p) - z) * s;
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
    trunc_v1_into(kDims, x, s, z, 8, 4, RoundingMode::kFloor, y.data());
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
  QuantParams p = quant_params(false, RoundingMode::kRound);
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

}  // namespace

int main(int argc, char** argv) {
  qonnx::register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
