// qonnx's finn_datatype sanity check: annotated tensors must hold values their datatype allows.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "qonnx/ir/model.h"
#include "qonnx/support/status.h"
#include "qonnx/tensor.h"

namespace qonnx::analysis {

// Names of the graph's tensors that carry a finn_datatype annotation (sorted).
std::vector<std::string> annotated_tensors(const ir::Graph& graph);

// Integer datatypes (BINARY, BIPOLAR, TERNARY, INTk, UINTk) must hold integers in range; float and
// scaled types (FLOAT32, SCALEDINT<k>, FIXED<..>) and unknown names are not checked.
// Error (kMismatch) naming the tensor, its datatype, the first offending index and value.
Status check_datatype(const std::string& tensor, const std::string& datatype, const Tensor& values);

// check_datatype for every annotated tensor present in `values`; returns how many were checked.
Result<int> check_finn_datatypes(const ir::Graph& graph, const std::map<std::string, Tensor>& values);

}  // namespace qonnx::analysis
