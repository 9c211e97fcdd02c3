#include "ir/tensor_codec.h"

#include <cstring>
#include <string>
#include <vector>
#include <fstream>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

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

// ONNX packs 4-bit elements two per byte, element 2k in the low nibble; in memory each takes a byte,
// sign-extended for int4.
void unpack_4bit(const uint8_t* packed, Tensor& t) {
  uint8_t* out = t.data<uint8_t>();
  const bool is_signed = t.dtype() == DType::kInt4;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const uint8_t nibble = (packed[i / 2] >> (4 * (i % 2))) & 0x0F;
    out[i] = is_signed && (nibble & 0x08) ? static_cast<uint8_t>(nibble | 0xF0) : nibble;
  }
}

template <typename Dst, typename Src>
void copy_convert(const Src& src, Tensor& t) {
  Dst* out = t.data<Dst>();
  for (int64_t i = 0; i < t.numel(); ++i) out[i] = static_cast<Dst>(src[static_cast<int>(i)]);
}

// The inverse of unpack_4bit; an odd count leaves the last high nibble 0.
std::string pack_4bit(const Tensor& tensor) {
  std::string packed(static_cast<size_t>(stored_nbytes(tensor.dtype(), tensor.numel())), '\0');
  const uint8_t* in = tensor.data<uint8_t>();
  for (int64_t i = 0; i < tensor.numel(); ++i)
    packed[static_cast<size_t>(i / 2)] = static_cast<char>(packed[static_cast<size_t>(i / 2)] | ((in[i] & 0x0F) << (4 * (i % 2))));
  return packed;
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
  if (numel < 0 || dtype_size(dtype) == 0) return invalid(proto, "external data needs a fixed-size type and valid dims");
  uint64_t expected = stored_nbytes(dtype, numel);
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

// The typed field a dtype's values live in, and how many values an element takes there.
struct TypedField {
  const char* name;
  int count;
  int per_element;
};

TypedField typed_field(const onnx::TensorProto& proto, DType dtype) {
  switch (dtype) {
    case DType::kFloat: return {"float_data", proto.float_data_size(), 1};
    case DType::kComplex64: return {"float_data", proto.float_data_size(), 2};
    case DType::kDouble: return {"double_data", proto.double_data_size(), 1};
    case DType::kComplex128: return {"double_data", proto.double_data_size(), 2};
    case DType::kInt64: return {"int64_data", proto.int64_data_size(), 1};
    case DType::kUInt32:
    case DType::kUInt64: return {"uint64_data", proto.uint64_data_size(), 1};
    case DType::kString: return {"string_data", proto.string_data_size(), 1};
    default: return {"int32_data", proto.int32_data_size(), 1};
  }
}

Result<StorageInfo> check_storage(const onnx::TensorProto& proto, const fs::path& base_dir) {
  if (proto.dims_size() > kMaxRank)
    return invalid(proto, fmt::format("rank {} is over the supported maximum of {}", proto.dims_size(), kMaxRank));
  const int32_t type = proto.data_type();
  if (type == 0) return invalid(proto, "data_type is UNDEFINED (0)");
  // 23 (FLOAT4E2M1): a type of later ONNX releases this build does not handle.
  if (type == 23)
    return Status(Code::kUnsupported, fmt::format("tensor '{}': data type {} (an ONNX type newer than this build supports) "
                                                  "is not supported", proto.name(), type));
  if (!dtype_known(type)) return invalid(proto, fmt::format("data_type {} is not an ONNX data type", type));
  StorageInfo info;
  info.dtype = static_cast<DType>(type);
  info.dims.assign(proto.dims().begin(), proto.dims().end());
  info.numel = checked_numel(info.dims);
  if (info.numel < 0) return invalid(proto, fmt::format("dims {} are negative or overflow", dims_to_string(info.dims)));
  const size_t esize = dtype_size(info.dtype);
  if (esize != 0 && static_cast<uint64_t>(info.numel) > (uint64_t{1} << 62) / esize)
    return invalid(proto, fmt::format("dims {} are too large", dims_to_string(info.dims)));
  info.nbytes = static_cast<uint64_t>(info.numel) * esize;

  // The values a segment holds: [begin, end) of the flat tensor.
  int64_t stored = info.numel;
  if (proto.has_segment()) {
    const int64_t begin = proto.segment().begin(), end = proto.segment().end();
    if (begin < 0 || end < begin || end > info.numel)
      return invalid(proto, fmt::format("segment [{}, {}) is not within the {} elements of dims {}", begin, end,
                                        info.numel, dims_to_string(info.dims)));
    stored = end - begin;
  }

  // Which value fields hold anything: exactly one may (none for an empty tensor).
  std::vector<std::string> fields;
  if (proto.has_raw_data()) fields.push_back("raw_data");
  if (proto.float_data_size() > 0) fields.push_back("float_data");
  if (proto.int32_data_size() > 0) fields.push_back("int32_data");
  if (proto.int64_data_size() > 0) fields.push_back("int64_data");
  if (proto.double_data_size() > 0) fields.push_back("double_data");
  if (proto.uint64_data_size() > 0) fields.push_back("uint64_data");
  if (proto.string_data_size() > 0) fields.push_back("string_data");

  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    if (!fields.empty())
      return invalid(proto, fmt::format("data_location is EXTERNAL but it also holds values in {}", fmt::join(fields, " and ")));
    if (info.dtype == DType::kString) return invalid(proto, "string tensors cannot use external data");
    if (proto.has_segment()) return invalid(proto, "a segment cannot use external data");
    QONNX_ASSIGN_OR_RETURN(info.external, resolve_external(proto, base_dir));
    return info;
  }
  if (fields.size() > 1) return invalid(proto, fmt::format("holds values in both {}", fmt::join(fields, " and ")));
  const std::string field = fields.empty() ? "" : fields[0];
  if (dtype_is_4bit(info.dtype) && proto.has_segment())
    return invalid(proto, fmt::format("a {} tensor cannot be segmented (its values are packed two per byte)", dtype_name(info.dtype)));
  if (field == "raw_data") {
    if (info.dtype == DType::kString) return invalid(proto, "a string tensor cannot use raw_data (string_data only)");
    const uint64_t expected = stored_nbytes(info.dtype, stored);
    if (proto.raw_data().size() != expected)
      return invalid(proto, fmt::format("raw_data has {} bytes, dims {} of {} need {}", proto.raw_data().size(),
                                        dims_to_string(info.dims), dtype_name(info.dtype), expected));
    return info;
  }
  const TypedField typed = typed_field(proto, info.dtype);
  if (!field.empty() && field != typed.name)
    return invalid(proto, fmt::format("a {} tensor keeps its values in {}, not {}", dtype_name(info.dtype), typed.name, field));
  // 4-bit values are packed two per int32_data entry as in raw_data.
  const int64_t expected = dtype_is_4bit(info.dtype) ? (stored + 1) / 2 : stored * typed.per_element;
  if (typed.count != expected)
    return invalid(proto, fmt::format("holds {} values, dims {} need {}", typed.count, dims_to_string(info.dims), expected));
  return info;
}

Result<Tensor> decode_checked(const onnx::TensorProto& proto, const fs::path& base_dir) {
  QONNX_ASSIGN_OR_RETURN(StorageInfo info, check_storage(proto, base_dir));
  const DType dtype = info.dtype;
  const Dims& dims = info.dims;
  const int64_t numel = info.numel;
  if (proto.has_segment()) return Status(Code::kUnsupported, fmt::format("tensor '{}': segmented tensors are not supported", proto.name()));
  if (dtype == DType::kComplex64 || dtype == DType::kComplex128)
    return Status(Code::kUnsupported, fmt::format("tensor '{}': complex tensors are not supported", proto.name()));

  if (info.external) {
    const ExternalSlice& slice = *info.external;
    Tensor t(dtype, dims);
    std::string packed;
    if (dtype_is_4bit(dtype)) packed.resize(slice.length);
    std::ifstream in(slice.file, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(slice.offset));
    in.read(dtype_is_4bit(dtype) ? packed.data() : static_cast<char*>(t.raw()), static_cast<std::streamsize>(slice.length));
    if (!in) return Status(Code::kCannotRead, fmt::format("tensor '{}': cannot read external data from '{}'", proto.name(), slice.file.string()));
    if (dtype_is_4bit(dtype)) unpack_4bit(reinterpret_cast<const uint8_t*>(packed.data()), t);
    return t;
  }
  if (proto.has_raw_data()) {  // sized and typed by check_storage
    Tensor t(dtype, dims);
    if (dtype_is_4bit(dtype)) unpack_4bit(reinterpret_cast<const uint8_t*>(proto.raw_data().data()), t);
    else if (numel > 0) std::memcpy(t.raw(), proto.raw_data().data(), proto.raw_data().size());
    return t;
  }
  Tensor t(dtype, dims);
  switch (dtype) {
    case DType::kInt4:
    case DType::kUInt4: {
      std::vector<uint8_t> packed(static_cast<size_t>(proto.int32_data_size()));
      for (size_t i = 0; i < packed.size(); ++i) packed[i] = static_cast<uint8_t>(proto.int32_data(static_cast<int>(i)));
      unpack_4bit(packed.data(), t);
      break;
    }
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ: copy_convert<uint8_t>(proto.int32_data(), t); break;
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

Result<StorageInfo> validate_tensor_storage(const onnx::TensorProto& proto, const fs::path& base_dir) {
  return check_storage(proto, base_dir);
}

Result<Tensor> decode_tensor(const onnx::TensorProto& proto, const fs::path& base_dir) {
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

StoredBytes::StoredBytes(const Tensor& tensor) : data_(tensor.raw()), size_(tensor.nbytes()) {
  if (dtype_is_4bit(tensor.dtype())) {
    packed_ = pack_4bit(tensor);
    data_ = packed_.data();
    size_ = packed_.size();
  }
}

void encode_tensor(const Tensor& tensor, onnx::TensorProto* proto) {
  proto->set_data_type(static_cast<int32_t>(tensor.dtype()));
  proto->clear_dims();
  for (int64_t d : tensor.dims()) proto->add_dims(d);
  if (tensor.dtype() == DType::kString) {
    for (const auto& s : tensor.strings()) proto->add_string_data(s);
  } else if (dtype_is_4bit(tensor.dtype())) {
    proto->set_raw_data(pack_4bit(tensor));
  } else {
    proto->set_raw_data(tensor.raw(), tensor.nbytes());
  }
}

}  // namespace qonnx::ir
