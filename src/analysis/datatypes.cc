#include "qonnx/analysis/datatypes.h"

#include <cmath>

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include "qonnx/exec/dtype_dispatch.h"
#include "qonnx/ir/finn_datatype.h"

namespace qonnx::analysis {

std::vector<std::string> annotated_tensors(const ir::Graph& graph) {
  std::vector<std::string> names;
  for (const auto& qa : graph.rest().quantization_annotation())
    if (!graph.finn_datatype(qa.tensor_name()).empty()) names.push_back(qa.tensor_name());
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

Status check_datatype(const std::string& tensor, const std::string& datatype, const Tensor& values) {
  auto range = ir::integer_datatype_range(datatype);
  if (!range || values.dtype() == DType::kString) return Status::ok();
  for (int64_t i = 0; i < values.numel(); ++i) {
    double v = exec::element_as_double(values, i);
    bool ok = std::isfinite(v) && v == std::floor(v) && v >= range->min && v <= range->max &&
              !(range->excludes_zero && v == 0);
    if (!ok)
      return Status(Code::kMismatch, fmt::format("tensor '{}' is annotated {} but holds {} at flat index {}", tensor,
                                                 datatype, v, i));
  }
  return Status::ok();
}

Result<int> check_finn_datatypes(const ir::Graph& graph, const std::map<std::string, Tensor>& values) {
  int checked = 0;
  for (const auto& name : annotated_tensors(graph)) {
    auto it = values.find(name);
    if (it == values.end()) continue;
    QONNX_RETURN_IF_ERROR(check_datatype(name, graph.finn_datatype(name), it->second));
    ++checked;
  }
  return checked;
}

}  // namespace qonnx::analysis
