#include "ir/tensor_codec.h"

#include <cstring>
#include <fstream>
#include <system_error>

#include <fmt/format.h>

#include "qonnx/support/limits.h"

namespace qonnx::ir {
namespace fs = std::filesystem;

namespace {

bool path_is_inside(const fs::path& child, const fs::path& root) {
  auto c = child.begin();
  for (auto r = root.begin(); r != root.end(); ++r, ++c) {
    if (c == child.end() || *c != *r) return false;
  }
  return true;
}

Status invalid(const onnx::TensorProto& proto, const std::string& what) {
  return Status(Code::kInvalidModel, fmt::format("tensor '{}': {}", proto.name(), what));
}

template <typename Dst, typename Src>
void copy_convert(const Src& src, Tensor& t) {
  Dst* out = t.data<Dst>();
  for (int64_t i = 0; i < t.numel(); ++i) out[i] = static_cast<Dst>(src[static_cast<int>(i)]);
}

}  // namespace

Result<ExternalSlice> resolve_external(const onnx::TensorProto& proto, const fs::path& base_dir) {
  ExternalSlice slice;
  std::string location;
  bool has_length = false;
  // Decimal digits only (std::stoull would take "-1" as 2^64-1 and "12abc" as 12), no overflow.
  auto parse = [](const std::string& text, uint64_t& out) {
    if (text.empty() || text.size() > 20) return false;
    uint64_t v = 0;
    for (char c : text) {
      if (c < '0' || c > '9') return false;
      uint64_t d = static_cast<uint64_t>(c - '0');
      if (v > (UINT64_MAX - d) / 10) return false;
      v = v * 10 + d;
    }
    out = v;
    return true;
  };
  for (const auto& kv : proto.external_data()) {
    if (kv.key() == "location") {
      location = kv.value();
    } else if (kv.key() == "offset" || kv.key() == "length") {
      if (!parse(kv.value(), kv.key() == "offset" ? slice.offset : slice.length))
        return invalid(proto, fmt::format("external_data '{}' is not a number: '{}'", kv.key(), kv.value()));
      has_length |= kv.key() == "length";
    }
  }
  if (location.empty()) return invalid(proto, "external data has no location");
  fs::path rel(location);
  if (rel.is_absolute()) return invalid(proto, fmt::format("external data location '{}' is absolute", location));
  std::error_code ec;
  fs::path root = fs::weakly_canonical(base_dir.empty() ? fs::current_path() : base_dir, ec);
  fs::path lexical = (root / rel).lexically_normal();
  if (!path_is_inside(lexical, root))
    return invalid(proto, fmt::format("external data location '{}' escapes the model folder", location));
  fs::path real = fs::weakly_canonical(lexical, ec);
  if (ec || !path_is_inside(real, root))
    return invalid(proto, fmt::format("external data location '{}' resolves outside the model folder", location));
  if (!fs::is_regular_file(real, ec))
    return invalid(proto, fmt::format("external data file '{}' does not exist or is not a file", location));
  uint64_t file_size = fs::file_size(real, ec);
  if (ec) return invalid(proto, fmt::format("cannot stat external data file '{}'", location));
  int64_t numel = checked_numel(Dims(proto.dims().begin(), proto.dims().end()));
  DType dtype = static_cast<DType>(proto.data_type());
  size_t esize = dtype_size(dtype);
  if (numel < 0 || esize == 0) return invalid(proto, "external data needs a fixed-size type and valid dims");
  uint64_t expected = static_cast<uint64_t>(numel) * esize;
  if (!has_length) slice.length = expected;
  if (slice.length != expected)
    return invalid(proto, fmt::format("external data length {} does not match {} bytes of dims", slice.length, expected));
  if (slice.offset > file_size || slice.length > file_size - slice.offset)
    return invalid(proto, fmt::format("external data offset {} + length {} is past the end of '{}' ({} bytes)",
                                      slice.offset, slice.length, location, file_size));
  slice.file = real;
  return slice;
}

namespace {

// Number of stored values for the typed field the dtype uses.
int typed_count(const onnx::TensorProto& proto, DType dtype) {
  switch (dtype) {
    case DType::kFloat: return proto.float_data_size();
    case DType::kDouble: return proto.double_data_size();
    case DType::kInt64: return proto.int64_data_size();
    case DType::kUInt32:
    case DType::kUInt64: return proto.uint64_data_size();
    case DType::kString: return proto.string_data_size();
    default: return proto.int32_data_size();
  }
}

Result<Tensor> decode_checked(const onnx::TensorProto& proto, const fs::path& base_dir) {
  if (!dtype_known(proto.data_type()))
    return Status(Code::kUnsupported, fmt::format("tensor '{}': unsupported data type {}", proto.name(), proto.data_type()));
  DType dtype = static_cast<DType>(proto.data_type());
  Dims dims(proto.dims().begin(), proto.dims().end());
  int64_t numel = checked_numel(dims);
  if (numel < 0) return invalid(proto, fmt::format("dims {} are negative or overflow", dims_to_string(dims)));
  if (proto.has_segment()) return Status(Code::kUnsupported, fmt::format("tensor '{}': segmented tensors are not supported", proto.name()));
  if (dtype == DType::kComplex64 || dtype == DType::kComplex128)
    return Status(Code::kUnsupported, fmt::format("tensor '{}': complex tensors are not supported", proto.name()));
  const size_t esize = dtype_size(dtype);
  // Every size is checked against the stored data before anything is allocated.
  if (esize != 0 && static_cast<uint64_t>(numel) > (uint64_t{1} << 62) / esize)
    return invalid(proto, fmt::format("dims {} are too large", dims_to_string(dims)));
  const uint64_t nbytes = static_cast<uint64_t>(numel) * esize;

  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    QONNX_ASSIGN_OR_RETURN(ExternalSlice slice, resolve_external(proto, base_dir));
    Tensor t(dtype, dims);
    std::ifstream in(slice.file, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(slice.offset));
    in.read(static_cast<char*>(t.raw()), static_cast<std::streamsize>(slice.length));
    if (!in) return Status(Code::kCannotRead, fmt::format("tensor '{}': cannot read external data from '{}'", proto.name(), slice.file.string()));
    return t;
  }
  if (dtype != DType::kString && proto.has_raw_data()) {
    if (proto.raw_data().size() != nbytes)
      return invalid(proto, fmt::format("raw_data has {} bytes, dims {} of {} need {}", proto.raw_data().size(),
                                        dims_to_string(dims), dtype_name(dtype), nbytes));
    Tensor t(dtype, dims);
    if (numel > 0) std::memcpy(t.raw(), proto.raw_data().data(), proto.raw_data().size());
    return t;
  }
  int count = typed_count(proto, dtype);
  if (count != numel)
    return invalid(proto, fmt::format("holds {} values, dims {} need {}", count, dims_to_string(dims), numel));
  Tensor t(dtype, dims);
  switch (dtype) {
    case DType::kString:
      for (int64_t i = 0; i < numel; ++i) t.strings()[static_cast<size_t>(i)] = proto.string_data(static_cast<int>(i));
      break;
    case DType::kFloat: copy_convert<float>(proto.float_data(), t); break;
    case DType::kDouble: copy_convert<double>(proto.double_data(), t); break;
    case DType::kInt64: copy_convert<int64_t>(proto.int64_data(), t); break;
    case DType::kUInt32: copy_convert<uint32_t>(proto.uint64_data(), t); break;
    case DType::kUInt64: copy_convert<uint64_t>(proto.uint64_data(), t); break;
    case DType::kInt32: copy_convert<int32_t>(proto.int32_data(), t); break;
    case DType::kInt16: copy_convert<int16_t>(proto.int32_data(), t); break;
    case DType::kUInt16:
    case DType::kFloat16:
    case DType::kBFloat16: copy_convert<uint16_t>(proto.int32_data(), t); break;
    case DType::kInt8: copy_convert<int8_t>(proto.int32_data(), t); break;
    case DType::kUInt8: copy_convert<uint8_t>(proto.int32_data(), t); break;
    case DType::kBool: {
      uint8_t* out = t.data<uint8_t>();
      for (int64_t i = 0; i < numel; ++i) out[i] = proto.int32_data(static_cast<int>(i)) != 0;
      break;
    }
    default:
      return Status(Code::kUnsupported, fmt::format("tensor '{}': unsupported data type {}", proto.name(), dtype_name(dtype)));
  }
  return t;
}

}  // namespace

Result<Tensor> decode_tensor(const onnx::TensorProto& proto, const fs::path& base_dir) {
  if (proto.dims_size() > kMaxRank)
    return invalid(proto, fmt::format("rank {} is over the supported maximum of {}", proto.dims_size(), kMaxRank));
  try {
    return decode_checked(proto, base_dir);
  } catch (const MemoryLimitError& e) {
    return Status(Code::kFailed, fmt::format("tensor '{}': {}", proto.name(), e.what()));
  } catch (const std::bad_alloc&) {
    return Status(Code::kFailed, fmt::format("tensor '{}': out of memory", proto.name()));
  } catch (const std::length_error& e) {
    return invalid(proto, e.what());
  }
}

void encode_tensor(const Tensor& tensor, onnx::TensorProto* proto) {
  proto->set_data_type(static_cast<int32_t>(tensor.dtype()));
  proto->clear_dims();
  for (int64_t d : tensor.dims()) proto->add_dims(d);
  if (tensor.dtype() == DType::kString) {
    for (const auto& s : tensor.strings()) proto->add_string_data(s);
  } else {
    proto->set_raw_data(tensor.raw(), tensor.nbytes());
  }
}

}  // namespace qonnx::ir
