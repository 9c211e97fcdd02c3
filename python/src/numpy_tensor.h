// numpy arrays <-> qonnx::Tensor at the Python edge, and Status -> qonnx_cc exceptions.
#pragma once

#include <map>
#include <string>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "qonnx/support/status.h"
#include "qonnx/tensor.h"

namespace qonnx::python {

namespace py = pybind11;

// Raises the qonnx_cc exception class of the status' code (qonnx_cc._errors), with its message.
[[noreturn]] void raise_status(const Status& status);

template <typename T>
T value_or_raise(Result<T>&& result) {
  if (!result.is_ok()) raise_status(result.status());
  return std::move(result).value();
}

// `obj` as a tensor: a C-contiguous, aligned array of a supported dtype is used in place (the tensor
// keeps the array alive); anything else is converted once (np.ascontiguousarray). `name` is for errors.
Tensor tensor_from_python(const py::handle& obj, const std::string& name);

// A new array owning a copy of the tensor's elements. 4-bit integers come as int8/uint8 (one per
// element); float8 and bfloat16, which numpy lacks, as their bit patterns (uint8 / uint16).
py::array tensor_to_numpy(const Tensor& tensor);

// A dict of name -> array-like as tensors (in name order).
std::map<std::string, Tensor> tensors_from_dict(const py::dict& feed);

}  // namespace qonnx::python
