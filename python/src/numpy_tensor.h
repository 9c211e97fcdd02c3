// numpy arrays <-> qonnx::Tensor at the Python edge.
#pragma once

#include <map>
#include <string>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "core.h"
#include "qonnx/tensor.h"

namespace qonnx::python {

namespace py = pybind11;

// `obj` as a tensor: a C-contiguous, aligned array of a supported dtype is used in place (the tensor
// keeps the array alive); anything else is converted once (np.ascontiguousarray). `name` is for errors.
Tensor tensor_from_python(const py::handle& obj, const std::string& name);

// A new array owning a copy of the tensor's elements. 4-bit integers come as int8/uint8 (one per
// element); float8 and bfloat16, which numpy lacks, as their bit patterns (uint8 / uint16).
py::array tensor_to_numpy(const Tensor& tensor);

// A dict of name -> array-like as tensors (in name order).
std::map<std::string, Tensor> tensors_from_dict(const py::dict& feed);

}  // namespace qonnx::python
