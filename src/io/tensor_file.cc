#include "qonnx/io/tensor_file.h"

#include <cstring>
#include <regex>
#include <sstream>

#include <fmt/format.h>
#include <onnx/onnx-data_pb.h>
#include <onnx/onnx_pb.h>

#include "ir/tensor_codec.h"
#include "qonnx/ir/model.h"
#include "qonnx/io/model_io.h"
#include "qonnx/support/limits.h"

namespace qonnx::io {
namespace fs = std::filesystem;

namespace {

struct NpyType {
  const char* descr;
  DType dtype;
};

constexpr NpyType kNpyTypes[] = {
    {"f4", DType::kFloat},  {"f8", DType::kDouble}, {"f2", DType::kFloat16}, {"i1", DType::kInt8},
    {"u1", DType::kUInt8},  {"i2", DType::kInt16},  {"u2", DType::kUInt16},  {"i4", DType::kInt32},
    {"u4", DType::kUInt32}, {"i8", DType::kInt64},  {"u8", DType::kUInt64},  {"b1", DType::kBool},
};

Status npy_error(const std::string& what) { return Status(Code::kCannotRead, "not a readable .npy file: " + what); }

}  // namespace

Result<Tensor> parse_npy(const std::string& bytes) {
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) return npy_error("bad magic");
  uint8_t major = static_cast<uint8_t>(bytes[6]);
  size_t header_len, header_start;
  if (major == 1) {
    header_len = static_cast<uint8_t>(bytes[8]) | (static_cast<size_t>(static_cast<uint8_t>(bytes[9])) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return npy_error("truncated header");
    header_len = 0;
    for (int i = 0; i < 4; ++i) header_len |= static_cast<size_t>(static_cast<uint8_t>(bytes[8 + i])) << (8 * i);
    header_start = 12;
  } else {
    return npy_error(fmt::format("unsupported version {}", major));
  }
  if (header_start + header_len > bytes.size()) return npy_error("truncated header");
  std::string header = bytes.substr(header_start, header_len);

  std::smatch m;
  static const std::regex descr_re("'descr'\\s*:\\s*'([<>|=])([a-z][0-9]+)'");
  static const std::regex fortran_re("'fortran_order'\\s*:\\s*(True|False)");
  static const std::regex shape_re("'shape'\\s*:\\s*\\(([^)]*)\\)");
  if (!std::regex_search(header, m, descr_re)) return npy_error("no supported 'descr' in header");
  if (m[1] == ">") return npy_error("big-endian data is not supported");
  std::string code = m[2];
  DType dtype = DType::kUndefined;
  for (const auto& t : kNpyTypes)
    if (code == t.descr) dtype = t.dtype;
  if (dtype == DType::kUndefined) return npy_error(fmt::format("unsupported dtype '{}'", code));
  if (!std::regex_search(header, m, fortran_re)) return npy_error("no 'fortran_order' in header");
  bool fortran = m[1] == "True";
  if (!std::regex_search(header, m, shape_re)) return npy_error("no 'shape' in header");
  Dims dims;
  std::string shape = m[1];
  // Comma-separated non-negative integers, a trailing comma allowed ("(3,)").
  static const std::regex dim_re("^\\s*([0-9]{1,18})\\s*$");
  std::stringstream items(shape);
  std::string item;
  while (std::getline(items, item, ',')) {
    std::smatch d;
    if (std::regex_match(item, d, dim_re)) {
      dims.push_back(std::stoll(d[1].str()));
    } else if (item.find_first_not_of(" \t") != std::string::npos) {
      return npy_error(fmt::format("shape entry '{}' is not a non-negative integer", item));
    }
  }
  if (dims.size() > static_cast<size_t>(kMaxRank))
    return npy_error(fmt::format("rank {} is over the supported maximum of {}", dims.size(), kMaxRank));
  int64_t numel = checked_numel(dims);
  if (numel < 0) return npy_error("shape overflows");
  size_t data_start = header_start + header_len;
  size_t nbytes = static_cast<size_t>(numel) * dtype_size(dtype);
  if (bytes.size() - data_start != nbytes)
    return npy_error(fmt::format("has {} data bytes, shape {} needs {}", bytes.size() - data_start,
                                 dims_to_string(dims), nbytes));
  Tensor t(dtype, dims);
  if (!fortran || dims.size() < 2) {
    if (nbytes) std::memcpy(t.raw(), bytes.data() + data_start, nbytes);
    return t;
  }
  // Column-major on disk: element (i0..in) lives at sum(ik * prod(d0..dk-1)).
  size_t es = dtype_size(dtype);
  std::vector<int64_t> idx(dims.size(), 0);
  const char* src = bytes.data() + data_start;
  char* dst = static_cast<char*>(t.raw());
  for (int64_t c = 0; c < numel; ++c) {
    int64_t f = 0, stride = 1;
    for (size_t k = 0; k < dims.size(); ++k) {
      f += idx[k] * stride;
      stride *= dims[k];
    }
    std::memcpy(dst + c * es, src + f * es, es);
    for (size_t k = dims.size(); k-- > 0;) {
      if (++idx[k] < dims[k]) break;
      idx[k] = 0;
    }
  }
  return t;
}

std::string serialize_npy(const Tensor& tensor) {
  // numpy has no 4-bit types: int4/uint4 are written as the int8/uint8 bytes they occupy in memory.
  const DType stored = tensor.dtype() == DType::kInt4 ? DType::kInt8 : tensor.dtype() == DType::kUInt4 ? DType::kUInt8 : tensor.dtype();
  const char* descr = nullptr;
  for (const auto& t : kNpyTypes)
    if (t.dtype == stored) descr = t.descr;
  std::string shape;
  for (size_t i = 0; i < tensor.rank(); ++i) shape += fmt::format("{}, ", tensor.dim(i));
  if (tensor.rank() > 1) shape.resize(shape.size() - 2);
  if (tensor.rank() == 1) shape.resize(shape.size() - 1);
  std::string header = fmt::format("{{'descr': '{}{}', 'fortran_order': False, 'shape': ({}), }}",
                                   descr && descr[0] == 'b' ? "|" : (dtype_size(tensor.dtype()) == 1 ? "|" : "<"),
                                   descr ? descr : "V", shape);
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::string out("\x93NUMPY\x01\x00", 8);
  out.push_back(static_cast<char>(header.size() & 0xff));
  out.push_back(static_cast<char>(header.size() >> 8));
  out += header;
  out.append(static_cast<const char*>(tensor.raw()), tensor.nbytes());
  return out;
}

Result<NamedTensor> read_tensor_file(const fs::path& path) {
  QONNX_ASSIGN_OR_RETURN(std::string bytes, read_file(path));
  NamedTensor out;
  if (path.extension() == ".npy") {
    auto t = parse_npy(bytes);
    if (!t.is_ok()) return std::move(t).status().with_context(path.string());
    out.tensor = std::move(t).value();
    return out;
  }
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes) || !proto.has_data_type())
    return Status(Code::kCannotRead, "not a TensorProto (.pb) file").with_context(path.string());
  fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  auto t = ir::decode_tensor(proto, dir);
  if (!t.is_ok()) return std::move(t).status().with_context(path.string());
  out.name = proto.name();
  out.tensor = std::move(t).value();
  return out;
}

namespace {

Result<Tensor> decode_sequence(const onnx::SequenceProto& proto, const fs::path& dir, DType elem) {
  if (proto.elem_type() != onnx::SequenceProto::TENSOR && proto.elem_type() != onnx::SequenceProto::UNDEFINED)
    return Status(Code::kUnsupported, fmt::format("a sequence of element kind {} (only sequences of tensors)", proto.elem_type()));
  std::vector<Tensor> elements;
  for (const auto& t : proto.tensor_values()) {
    QONNX_ASSIGN_OR_RETURN(Tensor e, ir::decode_tensor(t, dir));
    if (!elements.empty() && e.dtype() != elements.front().dtype())
      return Status(Code::kInvalidModel, "the sequence's tensors have different element types");
    elements.push_back(std::move(e));
  }
  const DType dtype = elements.empty() ? elem : elements.front().dtype();
  return Tensor::sequence(dtype, std::move(elements));
}

}  // namespace

Result<NamedTensor> read_container_file(const fs::path& path, ValueKind kind, DType elem, bool of_sequence) {
  QONNX_ASSIGN_OR_RETURN(std::string bytes, read_file(path));
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  NamedTensor out;
  if (kind == ValueKind::kSequence) {
    onnx::SequenceProto proto;
    if (!proto.ParseFromString(bytes)) return Status(Code::kCannotRead, "not a SequenceProto (.pb) file").with_context(path.string());
    auto t = decode_sequence(proto, dir, elem);
    if (!t.is_ok()) return std::move(t).status().with_context(path.string());
    out.name = proto.name();
    out.tensor = std::move(t).value();
    return out;
  }
  if (kind != ValueKind::kOptional) return read_tensor_file(path);
  onnx::OptionalProto proto;
  if (!proto.ParseFromString(bytes)) return Status(Code::kCannotRead, "not an OptionalProto (.pb) file").with_context(path.string());
  out.name = proto.name();
  if (proto.has_tensor_value()) {
    auto t = ir::decode_tensor(proto.tensor_value(), dir);
    if (!t.is_ok()) return std::move(t).status().with_context(path.string());
    out.tensor = Tensor::optional_of(std::move(t).value());
  } else if (proto.has_sequence_value()) {
    auto t = decode_sequence(proto.sequence_value(), dir, elem);
    if (!t.is_ok()) return std::move(t).status().with_context(path.string());
    out.tensor = Tensor::optional_of(std::move(t).value());
  } else if (proto.elem_type() == onnx::OptionalProto::UNDEFINED || proto.elem_type() == onnx::OptionalProto::TENSOR ||
             proto.elem_type() == onnx::OptionalProto::SEQUENCE) {
    out.tensor = Tensor::optional_none(elem, of_sequence);
  } else {
    return Status(Code::kUnsupported, fmt::format("an optional of element kind {}", proto.elem_type())).with_context(path.string());
  }
  return out;
}

Result<NamedTensor> read_value_file(const fs::path& path, const ir::Graph& graph, const std::string& name) {
  const onnx::ValueInfoProto* info = nullptr;
  for (size_t i = 0; !info && i < graph.inputs().size(); ++i)
    if (graph.input_info(i) && graph.input_info(i)->name() == name) info = graph.input_info(i);
  for (size_t i = 0; !info && i < graph.outputs().size(); ++i)
    if (graph.output_info(i) && graph.output_info(i)->name() == name) info = graph.output_info(i);
  if (!info) return read_tensor_file(path);
  const onnx::TypeProto* t = &info->type();
  ValueKind kind = ValueKind::kTensor;
  bool of_sequence = false;
  if (t->has_optional_type()) {
    kind = ValueKind::kOptional;
    t = &t->optional_type().elem_type();
    if (t->has_sequence_type()) {
      of_sequence = true;
      t = &t->sequence_type().elem_type();
    }
  } else if (t->has_sequence_type()) {
    kind = ValueKind::kSequence;
    t = &t->sequence_type().elem_type();
  }
  if (kind == ValueKind::kTensor) return read_tensor_file(path);
  const DType elem = t->has_tensor_type() && dtype_known(t->tensor_type().elem_type())
                         ? static_cast<DType>(t->tensor_type().elem_type())
                         : DType::kUndefined;
  return read_container_file(path, kind, elem, of_sequence);
}

Status write_tensor_pb(const fs::path& path, const std::string& name, const Tensor& tensor) {
  if (!tensor.is_tensor())
    return Status(Code::kUnsupported, fmt::format("cannot write a {} value as a tensor file", tensor.type_string())).with_context(path.string());
  onnx::TensorProto proto;
  ir::encode_tensor(tensor, &proto);
  proto.set_name(name);
  return write_file_atomic(path, proto.SerializeAsString());
}

Status write_tensor_npy(const fs::path& path, const Tensor& tensor) {
  if (!tensor.is_tensor())
    return Status(Code::kUnsupported, fmt::format("cannot write a {} value as .npy", tensor.type_string())).with_context(path.string());
  if (tensor.dtype() == DType::kString || tensor.dtype() == DType::kBFloat16)
    return Status(Code::kCannotWrite, fmt::format("cannot write {} tensors as .npy", dtype_name(tensor.dtype())));
  // numpy itself has no float8 type (only the ml_dtypes extension): use the .pb output instead.
  if (dtype_is_float8(tensor.dtype()))
    return Status(Code::kUnsupported, fmt::format("cannot write {} tensors as .npy (numpy has no float8 type; the .pb "
                                                  "file holds them)", dtype_name(tensor.dtype())))
        .with_context(path.string());
  return write_file_atomic(path, serialize_npy(tensor));
}

}  // namespace qonnx::io
