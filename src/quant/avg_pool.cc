#include "qonnx/quant/avg_pool.h"

#include <fmt/format.h>

#include "qonnx/ir/model.h"

namespace qonnx::quant {
namespace {

Status out_of_range(const char* name, int64_t value, const std::string& allowed) {
  return Status(Code::kInvalidModel, fmt::format("attribute '{}': must be {}, got {}", name, allowed, value));
}

}  // namespace

Result<AvgPoolParams> read_avg_pool_params(const ir::Node& node) {
  AvgPoolParams p;
  QONNX_ASSIGN_OR_RETURN(p.kernel, node.attr<int64_t>("kernel", 1));
  QONNX_ASSIGN_OR_RETURN(p.stride, node.attr<int64_t>("stride", 1));
  QONNX_ASSIGN_OR_RETURN(p.ibits, node.attr<int64_t>("ibits", 1));
  QONNX_ASSIGN_OR_RETURN(p.obits, node.attr<int64_t>("obits", 1));
  QONNX_ASSIGN_OR_RETURN(p.is_signed, node.attr<bool>("signed", false));
  QONNX_ASSIGN_OR_RETURN(const std::string layout, node.attr<std::string>("data_layout", "NCHW"));
  if (p.kernel < 1 || p.kernel > kAvgPoolMaxKernel) return out_of_range("kernel", p.kernel, fmt::format("in [1, {}]", kAvgPoolMaxKernel));
  if (p.stride < 1) return out_of_range("stride", p.stride, ">= 1");
  if (p.ibits < 0 || p.ibits > kAvgPoolMaxBits) return out_of_range("ibits", p.ibits, fmt::format("in [0, {}]", kAvgPoolMaxBits));
  if (p.obits < 1 || p.obits > kAvgPoolMaxBits) return out_of_range("obits", p.obits, fmt::format("in [1, {}]", kAvgPoolMaxBits));
  if (layout != "NCHW" && layout != "NHWC")
    return Status(Code::kInvalidModel, fmt::format("attribute 'data_layout': must be NCHW or NHWC, got '{}'", layout));
  p.channels_last = layout == "NHWC";
  return p;
}

int64_t avg_pool_accumulator_bits(int64_t ibits, int64_t kernel) {
  // (2^64 - 1) * 2^30 < 2^94: exact in 128 bits.
  unsigned __int128 v = ((static_cast<unsigned __int128>(1) << ibits) - 1) * static_cast<unsigned __int128>(kernel * kernel);
  int64_t bits = 0;
  for (; v != 0; v >>= 1) ++bits;
  return bits;
}

int64_t avg_pool_shift(const AvgPoolParams& p) {
  const int64_t shift = avg_pool_accumulator_bits(p.ibits, p.kernel) - p.obits;
  return shift > 0 ? shift : 0;
}

int64_t avg_pool_output_dim(int64_t in, int64_t kernel, int64_t stride) {
  if (in < kernel) return -1;
  return (in - kernel) / stride + 1;
}

}  // namespace qonnx::quant
