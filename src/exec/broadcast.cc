#include "qonnx/exec/broadcast.h"

#include <algorithm>

#include "qonnx/exec/kernel.h"

namespace qonnx::exec {

bool broadcast_dims(const Dims& a, const Dims& b, Dims* out) {
  size_t rank = std::max(a.size(), b.size());
  Dims r(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == db || db == 1) r[i] = da;
    else if (da == 1) r[i] = db;
    else return false;
  }
  *out = std::move(r);
  return true;
}

std::vector<int64_t> broadcast_strides(const Dims& in, const Dims& out) {
  std::vector<int64_t> strides(out.size(), 0);
  int64_t stride = 1;
  for (size_t i = in.size(); i-- > 0;) {
    size_t o = out.size() - in.size() + i;
    strides[o] = in[i] == 1 ? 0 : stride;
    stride *= in[i];
  }
  return strides;
}

Result<Dims> broadcast_input_dims(const ir::Node& node, const std::vector<std::pair<size_t, const Tensor*>>& inputs) {
  Dims out = inputs.front().second->dims();
  for (size_t k = 1; k < inputs.size(); ++k) {
    if (!broadcast_dims(out, inputs[k].second->dims(), &out))
      return Status(Code::kInvalidModel, fmt::format("shape {} does not broadcast with {}", dims_to_string(inputs[k].second->dims()),
                                                     dims_to_string(out)))
          .with_context(input_label(node, inputs[k].first));
  }
  return out;
}

Result<Dims> broadcast_input_dims(const KernelContext& ctx, const std::vector<std::pair<size_t, const Tensor*>>& inputs) {
  return broadcast_input_dims(ctx.node(), inputs);
}

}  // namespace qonnx::exec
