#include "kernels/onnx/element_copy.h"

#include <optional>

namespace qonnx::kernels {

void copy_by_axis_tables(const Tensor& src, Tensor& dst, const std::vector<std::vector<int64_t>>& tables,
                         const Tensor* fill) {
  const int64_t total = dst.numel();
  if (total <= 0) return;
  const ElementCopier from_src(src, dst);
  std::optional<ElementCopier> from_fill;
  if (fill) from_fill.emplace(*fill, dst);
  const size_t rank = dst.rank();
  if (rank == 0) {
    from_src.copy(0, 0);
    return;
  }
  const std::vector<int64_t>& inner = tables[rank - 1];
  const int64_t n_inner = dst.dim(rank - 1);
  bool inner_contiguous = true;
  for (int64_t i = 0; i < n_inner; ++i)
    if (inner[static_cast<size_t>(i)] == kOutside || inner[static_cast<size_t>(i)] != inner[0] + i) inner_contiguous = false;
  std::vector<int64_t> counter(rank, 0);
  for (int64_t o = 0; o < total; o += n_inner) {
    int64_t base = 0;
    bool outside = false;
    for (size_t a = 0; a + 1 < rank; ++a) {
      int64_t v = tables[a][static_cast<size_t>(counter[a])];
      if (v == kOutside) outside = true;
      else base += v;
    }
    if (outside) {
      for (int64_t i = 0; i < n_inner; ++i) from_fill->copy(o + i, 0);
    } else if (inner_contiguous) {
      from_src.copy_run(o, base + inner[0], n_inner);
    } else {
      for (int64_t i = 0; i < n_inner; ++i) {
        int64_t v = inner[static_cast<size_t>(i)];
        if (v == kOutside) from_fill->copy(o + i, 0);
        else from_src.copy(o + i, base + v);
      }
    }
    for (size_t a = rank - 1; a-- > 0;) {
      if (++counter[a] < dst.dim(a)) break;
      counter[a] = 0;
    }
  }
}

}  // namespace qonnx::kernels
