#include "qonnx/exec/buffer_pool.h"

#include <algorithm>
#include <iterator>

namespace qonnx::exec {

void BufferPool::give(Tensor t) {
  if (!t.defined() || t.dtype() == DType::kString || t.nbytes() < kMinBytes || !t.storage_unique()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  free_[{t.dtype(), t.numel()}].push_back(Kept{std::move(t), run_});
}

Tensor BufferPool::take(DType dtype, const Dims& dims) {
  const int64_t numel = checked_numel(dims);
  if (dtype == DType::kString || numel < 0 || static_cast<size_t>(numel) * dtype_size(dtype) < kMinBytes) return Tensor();
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = free_.find({dtype, numel});
  if (it == free_.end() || it->second.empty()) return Tensor();
  Tensor t = std::move(it->second.back().tensor);
  it->second.pop_back();
  return t.dims() == dims ? t : t.reshaped(dims);
}

void BufferPool::end_run() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = free_.begin(); it != free_.end();) {
    auto& kept = it->second;
    // Given in an earlier run: this whole run went by without a use for it.
    kept.erase(std::remove_if(kept.begin(), kept.end(), [&](const Kept& k) { return k.run < run_; }), kept.end());
    it = kept.empty() ? free_.erase(it) : std::next(it);
  }
  ++run_;
}

size_t BufferPool::held_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t bytes = 0;
  for (const auto& [key, kept] : free_)
    for (const Kept& k : kept) bytes += k.tensor.nbytes();
  return bytes;
}

}  // namespace qonnx::exec
