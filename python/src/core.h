// What the _core sources share: the loaded model handle, the exception guard of library calls, Status
// -> qonnx_cc exceptions, and running a library call without the GIL.
#pragma once

#include <memory>
#include <new>

#include <pybind11/pybind11.h>

#include <string>

#include "qonnx/exec/arithmetic.h"
#include "qonnx/ir/model.h"
#include "qonnx/support/status.h"
#include "qonnx/tensor.h"

namespace qonnx::python {

namespace py = pybind11;

// Library calls can throw (memory limit, allocation): every one is wrapped into a Status.
template <typename Fn>
auto guarded(Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const MemoryLimitError& e) {
    return Status(Code::kFailed, e.what());
  } catch (const std::bad_alloc&) {
    return Status(Code::kFailed, "out of memory");
  }
}

// Raises the qonnx_cc exception class of the status' code (qonnx_cc._errors), with its message.
[[noreturn]] void raise_status(const Status& status);

template <typename T>
T value_or_raise(Result<T>&& result) {
  if (!result.is_ok()) raise_status(result.status());
  return std::move(result).value();
}

// fn() (a library call returning Result<T>) guarded, with the GIL released while it runs; its value, or
// its error raised once the GIL is held again. Whatever fn reads must stay alive across the call.
template <typename Fn>
auto without_gil(Fn&& fn) -> decltype(value_or_raise(fn())) {
  decltype(fn()) result = Status::ok();
  {
    py::gil_scoped_release nogil;
    result = guarded(fn);
  }
  return value_or_raise(std::move(result));
}

// "int" or "float" (the arith= argument), else a UsageError.
inline exec::Arithmetic arithmetic_option(const std::string& text) {
  exec::Arithmetic arithmetic = exec::Arithmetic::kInt;
  if (!exec::parse_arithmetic(text, &arithmetic))
    raise_status(Status(Code::kUsage, "arith '" + text + "': use 'int' or 'float'"));
  return arithmetic;
}

// A loaded model, shared by the sessions made from it (an executor must not outlive its model).
struct Model {
  std::shared_ptr<ir::Model> model;
};

// qonnx_cc._core.convert / cleanup / channels_last / cost (commands.cc).
void add_commands(py::module_& m);

}  // namespace qonnx::python
