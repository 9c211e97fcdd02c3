#include "numpy_tensor.h"

#include <cstring>
#include <memory>
#include <optional>

#include <fmt/format.h>

namespace qonnx::python {

namespace {

std::optional<DType> dtype_from_numpy(const py::dtype& dt) {
  const char kind = dt.kind();
  const auto size = dt.itemsize();
  switch (kind) {
    case 'f':
      if (size == 4) return DType::kFloat;
      if (size == 8) return DType::kDouble;
      if (size == 2) return DType::kFloat16;
      return std::nullopt;
    case 'i':
      if (size == 1) return DType::kInt8;
      if (size == 2) return DType::kInt16;
      if (size == 4) return DType::kInt32;
      if (size == 8) return DType::kInt64;
      return std::nullopt;
    case 'u':
      if (size == 1) return DType::kUInt8;
      if (size == 2) return DType::kUInt16;
      if (size == 4) return DType::kUInt32;
      if (size == 8) return DType::kUInt64;
      return std::nullopt;
    case 'b': return DType::kBool;
    case 'U':
    case 'S':
    case 'O': return DType::kString;
    default: return std::nullopt;
  }
}

// The numpy dtype holding a tensor's in-memory elements.
py::dtype numpy_dtype(DType dtype) {
  switch (dtype) {
    case DType::kFloat: return py::dtype::of<float>();
    case DType::kDouble: return py::dtype::of<double>();
    case DType::kFloat16: return py::dtype("float16");
    case DType::kInt8:
    case DType::kInt4: return py::dtype::of<int8_t>();
    case DType::kInt16: return py::dtype::of<int16_t>();
    case DType::kInt32: return py::dtype::of<int32_t>();
    case DType::kInt64: return py::dtype::of<int64_t>();
    case DType::kUInt8:
    case DType::kUInt4:
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ: return py::dtype::of<uint8_t>();
    case DType::kUInt16:
    case DType::kBFloat16: return py::dtype::of<uint16_t>();
    case DType::kUInt32: return py::dtype::of<uint32_t>();
    case DType::kUInt64: return py::dtype::of<uint64_t>();
    case DType::kBool: return py::dtype::of<bool>();
    default:
      raise_status(Status(Code::kUnsupported, fmt::format("a {} tensor has no numpy dtype", dtype_name(dtype))));
  }
}

Dims dims_of(const py::array& a) {
  Dims dims;
  for (py::ssize_t i = 0; i < a.ndim(); ++i) dims.push_back(static_cast<int64_t>(a.shape(i)));
  return dims;
}

}  // namespace

Tensor tensor_from_python(const py::handle& obj, const std::string& name) {
  py::array array = py::isinstance<py::array>(obj) ? py::reinterpret_borrow<py::array>(obj)
                                                    : py::array(py::module_::import("numpy").attr("asarray")(obj));
  const auto dtype = dtype_from_numpy(array.dtype());
  if (!dtype)
    raise_status(Status(Code::kUnsupported, fmt::format("input '{}': numpy dtype {} has no ONNX tensor type", name,
                                                        py::str(array.dtype()).cast<std::string>())));
  Dims dims = dims_of(array);
  if (*dtype == DType::kString) {
    Tensor t(DType::kString, dims);
    py::list flat = array.attr("ravel")().attr("tolist")();
    for (size_t i = 0; i < flat.size(); ++i) {
      py::object item = flat[i];
      t.strings()[i] = py::isinstance<py::bytes>(item) ? item.cast<std::string>() : py::str(item).cast<std::string>();
    }
    return t;
  }
  const bool in_place = (array.flags() & py::detail::npy_api::NPY_ARRAY_C_CONTIGUOUS_) &&
                        (array.flags() & py::detail::npy_api::NPY_ARRAY_ALIGNED_) &&
                        array.dtype().attr("isnative").cast<bool>();
  if (!in_place)  // the one copy: C order, aligned, native byte order
    array = py::array(py::module_::import("numpy").attr("ascontiguousarray")(
        array, py::arg("dtype") = array.dtype().attr("newbyteorder")("=")));
  // The tensor holds a reference to the array; whoever drops the last copy of the tensor may not hold
  // the GIL (a kernel thread), so the release takes it.
  auto* ref = new py::object(array);
  std::shared_ptr<const void> owner(ref, [](const void* p) {
    py::gil_scoped_acquire gil;
    delete static_cast<const py::object*>(p);
  });
  return Tensor::borrowed(*dtype, std::move(dims), array.data(), std::move(owner));
}

py::array tensor_to_numpy(const Tensor& tensor) {
  std::vector<py::ssize_t> shape(tensor.dims().begin(), tensor.dims().end());
  if (tensor.dtype() == DType::kString) {
    py::list items;
    for (const std::string& s : tensor.strings()) items.append(py::str(s));
    py::module_ np = py::module_::import("numpy");
    return np.attr("array")(items, py::arg("dtype") = py::dtype("O")).attr("reshape")(py::tuple(py::cast(shape)));
  }
  py::array out(numpy_dtype(tensor.dtype()), shape);
  if (tensor.nbytes() > 0) std::memcpy(out.mutable_data(), tensor.raw(), tensor.nbytes());
  return out;
}

std::map<std::string, Tensor> tensors_from_dict(const py::dict& feed) {
  std::map<std::string, Tensor> tensors;
  for (const auto& [key, value] : feed) {
    std::string name = py::str(key).cast<std::string>();
    tensors[name] = tensor_from_python(value, name);
  }
  return tensors;
}

}  // namespace qonnx::python
