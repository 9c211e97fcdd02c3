// The float GEMM register tile, written once over a vector type V and compiled once per instruction
// set (gemm_micro_{avx512,avx2,portable}.cc include this inside their own anonymous namespace, after
// their target pragma). Every output element is c = fma(a[i][p], b[p][j], c) for p = 0, 1, ..., kc-1
// starting from 0 or from c, whatever V's width, the tile size or the rows/cols in use, so all
// instruction sets and all tile shapes give the same bits.
//
// V provides: reg, kWidth, zero(), load(p), load_n(p, n), store(p, r), store_n(p, r, n),
// broadcast(x), fma(a, b, c) (a * b + c rounded once).
//
// No standard-library template may be instantiated below the target pragma of an including file: the
// linker could keep that copy for every caller.

template <typename V, int R, int NV>
void float_tile(int64_t kc, const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
                int cols, bool load_c) {
  using Reg = typename V::reg;
  constexpr int W = V::kWidth;
  const bool full = cols == NV * W;
  int width[NV];  // columns of each vector in use
  for (int v = 0; v < NV; ++v) {
    const int left = cols - v * W;
    width[v] = left <= 0 ? 0 : (left < W ? left : W);
  }
  Reg acc[R][NV];
  for (int i = 0; i < R; ++i)
    for (int v = 0; v < NV; ++v)
      acc[i][v] = !load_c ? V::zero() : full ? V::load(c + i * ldc + v * W) : V::load_n(c + i * ldc + v * W, width[v]);
  if (full) {
    for (int64_t p = 0; p < kc; ++p) {
      Reg bv[NV];
      for (int v = 0; v < NV; ++v) bv[v] = V::load(b + p * ldb + v * W);
      for (int i = 0; i < R; ++i) {
        const Reg av = V::broadcast(a[i * lda + p]);
        for (int v = 0; v < NV; ++v) acc[i][v] = V::fma(av, bv[v], acc[i][v]);
      }
    }
  } else {
    for (int64_t p = 0; p < kc; ++p) {
      Reg bv[NV];
      for (int v = 0; v < NV; ++v) bv[v] = V::load_n(b + p * ldb + v * W, width[v]);
      for (int i = 0; i < R; ++i) {
        const Reg av = V::broadcast(a[i * lda + p]);
        for (int v = 0; v < NV; ++v) acc[i][v] = V::fma(av, bv[v], acc[i][v]);
      }
    }
  }
  for (int i = 0; i < R; ++i)
    for (int v = 0; v < NV; ++v) {
      if (full)
        V::store(c + i * ldc + v * W, acc[i][v]);
      else
        V::store_n(c + i * ldc + v * W, acc[i][v], width[v]);
    }
}

// The tiles for 1..MR rows (make_float_micro<V, MR, NV>(name, std::make_integer_sequence<int, MR>())).
template <typename V, int MR, int NV, int... Rows>
FloatMicroKernel make_float_micro(const char* name, std::integer_sequence<int, Rows...>) {
  const FloatTileFn fns[] = {&float_tile<V, Rows + 1, NV>...};
  FloatMicroKernel k;
  k.name = name;
  k.mr = MR;
  k.nr = NV * V::kWidth;
  for (int r = 0; r < MR; ++r) k.tile[r] = fns[r];
  return k;
}
