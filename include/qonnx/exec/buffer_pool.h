// Buffers of released intermediate values, kept by the executor for later outputs of the same dtype
// and element count, in the same run and the next ones: a steady-state run allocates no new large
// buffer, so it neither page-faults nor zero-fills. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "qonnx/tensor.h"

namespace qonnx::exec {

class BufferPool {
 public:
  // Smaller buffers are left to the allocator, which recycles them without faults anyway.
  static constexpr size_t kMinBytes = 64 * 1024;

  // Keeps t's buffer when nobody else holds it (and it is not a string tensor).
  void give(Tensor t);
  // A kept buffer of `dtype` with as many elements as `dims`, shaped as dims (contents unspecified);
  // an undefined Tensor when there is none.
  Tensor take(DType dtype, const Dims& dims);
  // Ends a run: buffers given before the previous run ended and not taken since are released.
  void end_run();
  size_t held_bytes() const;

 private:
  struct Kept {
    Tensor tensor;
    uint64_t run;  // the run that gave it
  };
  mutable std::mutex mutex_;
  std::map<std::pair<DType, int64_t>, std::vector<Kept>> free_;
  uint64_t run_ = 0;
};

}  // namespace qonnx::exec
