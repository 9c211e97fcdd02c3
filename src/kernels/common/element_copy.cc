#include "kernels/common/element_copy.h"

#include <cstring>
#include <optional>

#include "qonnx/exec/threads.h"

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
  // An output row that reads the same source row as the one before it (nearest upsampling repeats
  // rows) is a copy of that output row.
  const bool bytes = dst.dtype() != DType::kString;
  const size_t element_bytes = dtype_size(dst.dtype()), row_bytes = static_cast<size_t>(n_inner) * element_bytes;
  auto* out = static_cast<uint8_t*>(dst.raw());
  // Rows are independent: threads take ranges of them.
  exec::parallel_for(n_inner > 0 ? total / n_inner : 0, n_inner, [&](int64_t r0, int64_t r1) {
    std::vector<int64_t> counter(rank, 0);
    for (int64_t rest = r0, a = static_cast<int64_t>(rank) - 2; a >= 0; --a) {
      counter[static_cast<size_t>(a)] = rest % dst.dim(static_cast<size_t>(a));
      rest /= dst.dim(static_cast<size_t>(a));
    }
    int64_t previous_base = -1;  // the source row of the previous output row of this share
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t o = r * n_inner;
      int64_t base = 0;
      bool outside = false;
      for (size_t a = 0; a + 1 < rank; ++a) {
        int64_t v = tables[a][static_cast<size_t>(counter[a])];
        if (v == kOutside) outside = true;
        else base += v;
      }
      if (outside) {
        for (int64_t i = 0; i < n_inner; ++i) from_fill->copy(o + i, 0);
        previous_base = -1;
      } else if (bytes && base == previous_base) {
        std::memcpy(out + static_cast<size_t>(o) * element_bytes, out + static_cast<size_t>(o - n_inner) * element_bytes,
                    row_bytes);
      } else if (inner_contiguous) {
        from_src.copy_run(o, base + inner[0], n_inner);
        previous_base = base;
      } else {
        for (int64_t i = 0; i < n_inner; ++i) {
          int64_t v = inner[static_cast<size_t>(i)];
          if (v == kOutside) from_fill->copy(o + i, 0);
          else from_src.copy(o + i, base + v);
        }
        previous_base = base;
      }
      for (size_t a = rank - 1; a-- > 0;) {
        if (++counter[a] < dst.dim(a)) break;
        counter[a] = 0;
      }
    }
  });
}

}  // namespace qonnx::kernels
