// The int8 GEMM register tile, written once over a vector type V and compiled once per path
// (igemm_micro_*.cc include this inside their own anonymous namespace, after their target pragma).
// Sums are exact int32 (see igemm.h), so the tile's order of terms does not matter for the result.
//
// V provides: acc (the accumulator of kCols columns), wreg (a loaded group of kCols columns x 4 k),
// areg (four left values broadcast), zero(), load_w(p) (4 * kCols packed bytes), broadcast(four left
// bytes as one little-endian uint32), madd(acc, a, w) (acc + the column-wise dot products of the
// group), store(c, acc, cols) (the first `cols` <= kCols columns).
//
// No standard-library template may be instantiated below the target pragma of an including file: the
// linker could keep that copy for every caller.

// Left values a[0..3] as one uint32; past `count` (< 4, the tail of a row) zeros.
inline uint32_t left_group(const uint8_t* a, int count) {
  uint32_t g = 0;
  for (int e = 0; e < count; ++e) g |= static_cast<uint32_t>(a[e]) << (8 * e);
  return g;
}

// `groups` k-groups of the panel from w (advanced past them) against the rows' values from a[i] + at.
template <typename V, int R, int NV>
__attribute__((always_inline)) inline void int8_groups(typename V::acc (&acc)[R][NV], int64_t groups,
                                                       const uint8_t* const* a, int64_t at, const int8_t*& w) {
  constexpr int kGroupBytes = 4 * NV * V::kCols;  // one k-group of the panel
  const uint8_t* row[R];
  for (int i = 0; i < R; ++i) row[i] = a[i] + at;
  for (int64_t g = 0; g < groups; ++g, w += kGroupBytes) {
    typename V::wreg wv[NV];
    for (int v = 0; v < NV; ++v) wv[v] = V::load_w(w + v * 4 * V::kCols);
    for (int i = 0; i < R; ++i) {
      uint32_t four;
      __builtin_memcpy(&four, row[i] + 4 * g, 4);
      const typename V::areg av = V::broadcast(four);
      for (int v = 0; v < NV; ++v) acc[i][v] = V::madd(acc[i][v], av, wv[v]);
    }
  }
}

template <typename V, int R, int NV>
void int8_tile(int64_t k, const uint8_t* const* a, const int8_t* w, int32_t* c, int64_t ldc, int cols,
               const Int8Slices* slices) {
  typename V::acc acc[R][NV];
  for (int i = 0; i < R; ++i)
    for (int v = 0; v < NV; ++v) acc[i][v] = V::zero();
  if (slices) {  // whole k-groups in every slice
    const int64_t count = k / slices->slice_k, groups = slices->slice_k / 4;
    for (int64_t s = 0; s < count; ++s) int8_groups<V, R, NV>(acc, groups, a, slices->offsets[s], w);
  } else {
    // The partial last k-group first (the packed panel holds zeros past k; the sums are exact in any order):
    // nothing but the sums is then live after the main loop, which keeps every row pointer in a register.
    const int64_t full_groups = k / 4;
    if (const int tail = static_cast<int>(k % 4)) {
      const int8_t* last = w + full_groups * 4 * NV * V::kCols;
      typename V::wreg wv[NV];
      for (int v = 0; v < NV; ++v) wv[v] = V::load_w(last + v * 4 * V::kCols);
      for (int i = 0; i < R; ++i) {
        const typename V::areg av = V::broadcast(left_group(a[i] + 4 * full_groups, tail));
        for (int v = 0; v < NV; ++v) acc[i][v] = V::madd(acc[i][v], av, wv[v]);
      }
    }
    int8_groups<V, R, NV>(acc, full_groups, a, 0, w);
  }
  for (int i = 0; i < R; ++i)
    for (int v = 0; v < NV; ++v) {
      const int left = cols - v * V::kCols;
      if (left > 0) V::store(c + i * ldc + v * V::kCols, acc[i][v], left < V::kCols ? left : V::kCols);
    }
}

// The tiles for 1..MR rows (make_int8_micro<V, MR, NV>(name, std::make_integer_sequence<int, MR>())).
template <typename V, int MR, int NV, int... Rows>
Int8MicroKernel make_int8_micro(const char* name, std::integer_sequence<int, Rows...>) {
  const Int8TileFn fns[] = {&int8_tile<V, Rows + 1, NV>...};
  Int8MicroKernel k;
  k.name = name;
  k.mr = MR;
  k.nr = NV * V::kCols;
  for (int r = 0; r < MR; ++r) k.tile[r] = fns[r];
  return k;
}
