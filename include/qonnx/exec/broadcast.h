// numpy-style broadcasting: shape resolution and a strided walk with the innermost dim kept tight.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "qonnx/support/status.h"
#include "qonnx/tensor.h"

namespace qonnx::ir {
class Node;
}  // namespace qonnx::ir

namespace qonnx::exec {

class KernelContext;

// Broadcast of two shapes; false when incompatible.
bool broadcast_dims(const Dims& a, const Dims& b, Dims* out);

// Broadcast shape of a kernel's inputs, given as (input index, tensor); an invalid model error names
// the first input that does not fit.
Result<Dims> broadcast_input_dims(const KernelContext& ctx, const std::vector<std::pair<size_t, const Tensor*>>& inputs);
// The same for `node`'s inputs outside a kernel run (a pass reading a quantizer's constants).
Result<Dims> broadcast_input_dims(const ir::Node& node, const std::vector<std::pair<size_t, const Tensor*>>& inputs);

// Element strides of a tensor with dims `in` read as if it had dims `out` (0 on broadcast axes).
std::vector<int64_t> broadcast_strides(const Dims& in, const Dims& out);

// Calls f(out_index, offsets) for every element of `out` in row-major order, where offsets[k] is
// the element offset into input k (whose dims broadcast to `out`).
template <size_t N, typename F>
void for_each_broadcast(const Dims& out, const std::array<const Dims*, N>& ins, F&& f) {
  const size_t rank = out.size();
  int64_t total = checked_numel(out);
  if (total <= 0) return;
  std::array<std::vector<int64_t>, N> strides;
  for (size_t k = 0; k < N; ++k) strides[k] = broadcast_strides(*ins[k], out);
  if (rank == 0) {
    std::array<int64_t, N> offs{};
    f(int64_t{0}, offs);
    return;
  }
  const int64_t inner = out[rank - 1];
  std::array<int64_t, N> inner_stride;
  for (size_t k = 0; k < N; ++k) inner_stride[k] = strides[k][rank - 1];
  std::vector<int64_t> counter(rank, 0);
  std::array<int64_t, N> base{};
  for (int64_t o = 0; o < total; o += inner) {
    std::array<int64_t, N> offs = base;
    for (int64_t i = 0; i < inner; ++i) {
      f(o + i, offs);
      for (size_t k = 0; k < N; ++k) offs[k] += inner_stride[k];
    }
    // advance the outer counter
    for (size_t d = rank - 1; d-- > 0;) {
      ++counter[d];
      for (size_t k = 0; k < N; ++k) base[k] += strides[k][d];
      if (counter[d] < out[d]) break;
      for (size_t k = 0; k < N; ++k) base[k] -= strides[k][d] * out[d];
      counter[d] = 0;
    }
  }
}

}  // namespace qonnx::exec
