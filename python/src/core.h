// What the _core sources share: the loaded model handle and the exception guard of library calls.
#pragma once

#include <memory>
#include <new>

#include <pybind11/pybind11.h>

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

// A loaded model, shared by the sessions made from it (an executor must not outlive its model).
struct Model {
  std::shared_ptr<ir::Model> model;
};

// qonnx_cc._core.convert / cleanup / channels_last / cost (commands.cc).
void add_commands(py::module_& m);

}  // namespace qonnx::python
