// Type-agnostic element moves for data-movement kernels: they copy bytes by element size (and
// std::string for string tensors), so one kernel serves every dtype.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "qonnx/exec/kernel.h"
#include "qonnx/tensor.h"

namespace qonnx::kernels {

// Largest output a data-movement kernel will allocate (bytes); beyond it the model is rejected
// rather than the machine exhausted.
constexpr int64_t kMaxOutputBytes = int64_t{1} << 34;

// Checks that `dims` is a valid, allocatable shape for an output of `dtype`.
inline Status check_output_dims(const exec::KernelContext& ctx, const Dims& dims, DType dtype) {
  int64_t n = checked_numel(dims);
  if (n < 0) return ctx.error(Code::kInvalidModel, "output shape {} is invalid or overflows", dims_to_string(dims));
  int64_t esize = dtype == DType::kString ? 32 : static_cast<int64_t>(dtype_size(dtype));
  if (esize > 0 && n > kMaxOutputBytes / esize)
    return ctx.error(Code::kInvalidModel, "output shape {} is too large ({} elements)", dims_to_string(dims), n);
  return Status::ok();
}

// Copies elements from `src` to `dst` (same dtype) by flat index.
class ElementCopier {
 public:
  ElementCopier(const Tensor& src, Tensor& dst)
      : string_(src.dtype() == DType::kString),
        size_(dtype_size(src.dtype())),
        src_(static_cast<const uint8_t*>(src.raw())),
        dst_(static_cast<uint8_t*>(dst.raw())),
        src_strings_(string_ ? &src.strings() : nullptr),
        dst_strings_(string_ ? &dst.strings() : nullptr) {}

  // dst[d] = src[s]
  void copy(int64_t d, int64_t s) const {
    if (string_) {
      (*dst_strings_)[static_cast<size_t>(d)] = (*src_strings_)[static_cast<size_t>(s)];
      return;
    }
    switch (size_) {
      case 1: dst_[d] = src_[s]; break;
      case 2: std::memcpy(dst_ + d * 2, src_ + s * 2, 2); break;
      case 4: std::memcpy(dst_ + d * 4, src_ + s * 4, 4); break;
      case 8: std::memcpy(dst_ + d * 8, src_ + s * 8, 8); break;
      default: std::memcpy(dst_ + d * size_, src_ + s * size_, size_); break;
    }
  }

  // dst[d .. d+n) = src[s .. s+n)
  void copy_run(int64_t d, int64_t s, int64_t n) const {
    if (n <= 0) return;
    if (string_) {
      std::copy(src_strings_->begin() + s, src_strings_->begin() + s + n, dst_strings_->begin() + d);
      return;
    }
    std::memcpy(dst_ + d * static_cast<int64_t>(size_), src_ + s * static_cast<int64_t>(size_),
                static_cast<size_t>(n) * size_);
  }

 private:
  bool string_;
  size_t size_;
  const uint8_t* src_;
  uint8_t* dst_;
  const std::vector<std::string>* src_strings_;
  std::vector<std::string>* dst_strings_;
};

// Row-major strides of `dims` in elements.
inline std::vector<int64_t> row_major_strides(const Dims& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

// Marks a position outside the source in copy_by_axis_tables (e.g. constant padding).
constexpr int64_t kOutside = INT64_MIN;

// Fills `dst` from `src` where the source offset of dst[i0, ..., ik] is the sum of tables[a][i_a]
// over the axes a (tables[a] has dst.dim(a) entries). Transpose, Expand, Tile, Slice, Pad and
// nearest Resize are all of this form. An entry kOutside on any axis takes element 0 of `fill`
// instead (same dtype as dst; required when kOutside is used).
void copy_by_axis_tables(const Tensor& src, Tensor& dst, const std::vector<std::vector<int64_t>>& tables,
                         const Tensor* fill = nullptr);

}  // namespace qonnx::kernels
