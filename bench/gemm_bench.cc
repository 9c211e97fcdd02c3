// Float GEMM: qonnx-cc's tiles (each instruction set) against the Debian BLAS-like libraries that are
// installed (OpenBLAS, BLIS, oneDNN; loaded with dlopen, so none is a build dependency), on the
// products of the shared CNNs (Conv as weights (M x K) x im2col (K x N)) and MLPs.
//
// Before the timings it checks each library for what qonnx-cc requires: the same bits with 1, 2 and 3
// threads. Run: build/bench/gemm_bench [--benchmark_filter=...]
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "kernels/common/gemm_core.h"
#include "qonnx/exec/threads.h"

namespace {

// The float family's instruction-set paths (kernels/isa).
using FloatIsa = qonnx::kernels::isa::Isa;
bool float_isa_supported(FloatIsa i) {
  return qonnx::kernels::isa::supports(qonnx::kernels::isa::Family::kFloat, i, qonnx::kernels::isa::cpu_features());
}
void use_float_isa(FloatIsa i) { qonnx::kernels::isa::use(qonnx::kernels::isa::Family::kFloat, i); }
const char* float_isa_name(FloatIsa i) { return qonnx::kernels::isa::name(i); }

struct Shape {
  const char* what;
  int64_t m, n, k;
};

// M x N x K: Conv is (filters) x (output positions) x (channels x kernel size).
const Shape kShapes[] = {
    {"espcn conv1 5x5 3->64 128x128", 64, 16384, 75},
    {"espcn conv2 3x3 64->64", 64, 16384, 576},
    {"espcn conv3 3x3 64->32", 32, 16384, 576},
    {"espcn conv4 3x3 32->27", 27, 16384, 288},
    {"branched 3x3 8->16 256x256", 16, 65536, 72},
    {"mlp batch 1 784->64", 1, 64, 784},
    {"mlp batch 64 1024->1024", 64, 1024, 1024},
};

// C = A x B, row-major, C overwritten.
using GemmFn = std::function<void(const Shape&, const float*, const float*, float*)>;

struct Library {
  std::string name;
  GemmFn gemm;
  std::function<void(int)> set_threads;
};

void* open_any(std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (void* h = dlopen(n, RTLD_NOW | RTLD_LOCAL)) return h;
  return nullptr;
}

using CblasSgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*,
                            int);
constexpr int kRowMajor = 101, kNoTrans = 111;

std::vector<Library> load_libraries() {
  std::vector<Library> libs;
  auto add_cblas = [&](const char* name, void* h, const char* threads_symbol) {
    auto sgemm = reinterpret_cast<CblasSgemm>(dlsym(h, "cblas_sgemm"));
    auto set = reinterpret_cast<void (*)(int)>(dlsym(h, threads_symbol));
    if (!sgemm || !set) return;
    libs.push_back({name,
                    [sgemm](const Shape& s, const float* a, const float* b, float* c) {
                      sgemm(kRowMajor, kNoTrans, kNoTrans, int(s.m), int(s.n), int(s.k), 1.0f, a, int(s.k), b,
                            int(s.n), 0.0f, c, int(s.n));
                    },
                    set});
  };
  if (void* h = open_any({"libopenblas.so.0", "libopenblas.so"})) add_cblas("openblas", h, "openblas_set_num_threads");
  if (void* h = open_any({"libblis.so.4", "libblis.so"})) add_cblas("blis", h, "bli_thread_set_num_threads");
  void* dnnl = open_any({"libdnnl.so.2", "libdnnl.so"});
  void* gomp = open_any({"libgomp.so.1"});
  if (dnnl && gomp) {
    using DnnlSgemm = int (*)(char, char, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*,
                              int64_t, float, float*, int64_t);
    auto sgemm = reinterpret_cast<DnnlSgemm>(dlsym(dnnl, "dnnl_sgemm"));
    auto set = reinterpret_cast<void (*)(int)>(dlsym(gomp, "omp_set_num_threads"));
    if (sgemm && set)
      libs.push_back({"onednn",
                      [sgemm](const Shape& s, const float* a, const float* b, float* c) {
                        sgemm('N', 'N', s.m, s.n, s.k, 1.0f, a, s.k, b, s.n, 0.0f, c, s.n);
                      },
                      set});
  }
  for (FloatIsa isa : {FloatIsa::kAvx512, FloatIsa::kAvx2, FloatIsa::kPortable}) {
    if (!float_isa_supported(isa)) continue;
    libs.push_back({std::string("qonnx-") + float_isa_name(isa),
                    [isa](const Shape& s, const float* a, const float* b, float* c) {
                      use_float_isa(isa);
                      const qonnx::kernels::FloatRowMajorSource src(b, s.n);
                      qonnx::kernels::FloatGemm g;
                      g.m = s.m, g.n = s.n, g.k = s.k, g.a = a, g.lda = s.k, g.b = &src, g.c = c, g.ldc = s.n;
                      qonnx::kernels::float_gemm(g);
                    },
                    [](int t) { qonnx::exec::set_threads(t); }});
  }
  return libs;
}

std::vector<float> random_values(int64_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(count));
  for (float& x : v) x = dist(rng);
  return v;
}

// Prints, per library and shape, whether 2 and 3 threads reproduce 1 thread's bits.
void check_thread_determinism(const std::vector<Library>& libs) {
  std::printf("bit-identical to 1 thread with 2 / 3 threads:\n");
  for (const Library& lib : libs) {
    if (lib.name == "qonnx-portable") continue;  // same driver as the others, only slower
    std::printf("  %-16s", lib.name.c_str());
    int differ = 0, total = 0;
    for (const Shape& s : kShapes) {
      const std::vector<float> a = random_values(s.m * s.k, 1), b = random_values(s.k * s.n, 2);
      std::vector<float> ref(static_cast<size_t>(s.m * s.n));
      lib.set_threads(1);
      lib.gemm(s, a.data(), b.data(), ref.data());
      for (int t : {2, 3}) {
        std::vector<float> c(ref.size());
        lib.set_threads(t);
        lib.gemm(s, a.data(), b.data(), c.data());
        ++total;
        if (std::memcmp(c.data(), ref.data(), ref.size() * sizeof(float)) != 0) {
          ++differ;
          std::printf(" [%s: %d threads differ]", s.what, t);
        }
      }
    }
    std::printf(" %s (%d of %d runs differ)\n", differ ? "NOT deterministic" : "identical", differ, total);
    lib.set_threads(1);
  }
  std::fflush(stdout);
}

void run_gemm(benchmark::State& state, const Library* lib, const Shape* s, int threads) {
  const std::vector<float> a = random_values(s->m * s->k, 1), b = random_values(s->k * s->n, 2);
  std::vector<float> c(static_cast<size_t>(s->m * s->n));
  lib->set_threads(threads);
  for (auto _ : state) {
    lib->gemm(*s, a.data(), b.data(), c.data());
    benchmark::DoNotOptimize(c.data());
  }
  lib->set_threads(1);
  state.counters["GFLOPS"] =
      benchmark::Counter(2.0 * double(s->m) * double(s->n) * double(s->k), benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

int main(int argc, char** argv) {
  static const std::vector<Library> libs = load_libraries();
  check_thread_determinism(libs);
  for (const Library& lib : libs)
    for (const Shape& s : kShapes)
      for (int t : {1, 2}) {
        if (lib.name == "qonnx-portable" && t > 1) continue;
        const std::string name = lib.name + "/" + s.what + "/" + std::to_string(s.m) + "x" + std::to_string(s.n) +
                                 "x" + std::to_string(s.k) + "/threads:" + std::to_string(t);
        benchmark::RegisterBenchmark(name.c_str(), run_gemm, &lib, &s, t)->Unit(benchmark::kMillisecond)->UseRealTime();
      }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
