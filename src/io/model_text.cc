#include "qonnx/io/model_text.h"

#include <cstring>
#include <sstream>

#include <fmt/format.h>
#include <onnx/defs/parser.h>
#include <onnx/defs/printer.h>
#include <onnx/onnx_pb.h>

#include "qonnx/io/model_io.h"

namespace qonnx::io {

Result<ir::Model> load_model_from_text(const std::string& text, const std::filesystem::path& base_dir) {
  onnx::ModelProto proto;
  auto parsed = onnx::OnnxParser::Parse(proto, text.c_str());
  if (!parsed.IsOK()) return Status(Code::kInvalidModel, fmt::format("ONNX text does not parse: {}", parsed.ErrorMessage()));
  std::string bytes;
  proto.SerializeToString(&bytes);
  return load_model_from_bytes(bytes, base_dir);
}

namespace {

int64_t element_count(const onnx::TensorProto& t) {
  int64_t n = 1;
  for (int64_t d : t.dims()) n *= d;
  return n;
}

template <typename Stored, typename Field>
void unpack_raw(const std::string& raw, Field* field) {
  const size_t n = raw.size() / sizeof(Stored);
  for (size_t i = 0; i < n; ++i) {
    Stored v;
    std::memcpy(&v, raw.data() + i * sizeof(Stored), sizeof(Stored));
    field->Add(v);
  }
}

// The printer shows typed fields only: raw_data (how integers are usually stored) moves there.
void raw_to_typed_fields(onnx::TensorProto& t) {
  if (!t.has_raw_data()) return;
  const std::string raw = t.raw_data();
  switch (t.data_type()) {
    case onnx::TensorProto::FLOAT: unpack_raw<float>(raw, t.mutable_float_data()); break;
    case onnx::TensorProto::DOUBLE: unpack_raw<double>(raw, t.mutable_double_data()); break;
    case onnx::TensorProto::INT8: unpack_raw<int8_t>(raw, t.mutable_int32_data()); break;
    case onnx::TensorProto::UINT8: unpack_raw<uint8_t>(raw, t.mutable_int32_data()); break;
    case onnx::TensorProto::INT16: unpack_raw<int16_t>(raw, t.mutable_int32_data()); break;
    case onnx::TensorProto::UINT16: unpack_raw<uint16_t>(raw, t.mutable_int32_data()); break;
    case onnx::TensorProto::INT32: unpack_raw<int32_t>(raw, t.mutable_int32_data()); break;
    case onnx::TensorProto::BOOL: unpack_raw<uint8_t>(raw, t.mutable_int32_data()); break;
    case onnx::TensorProto::INT64: unpack_raw<int64_t>(raw, t.mutable_int64_data()); break;
    case onnx::TensorProto::UINT32: unpack_raw<uint32_t>(raw, t.mutable_uint64_data()); break;
    case onnx::TensorProto::UINT64: unpack_raw<uint64_t>(raw, t.mutable_uint64_data()); break;
    default: return;  // float16 and friends stay raw (shown as "...")
  }
  t.clear_raw_data();
}

}  // namespace

std::string to_onnx_text(const ir::Model& model, int64_t max_inline_elements) {
  auto bytes = serialize_model(model);
  if (!bytes.is_ok()) return bytes.status().to_string();
  onnx::ModelProto proto;
  proto.ParseFromString(bytes.value());
  std::ostringstream os;
  os << "<ir_version: " << proto.ir_version() << ", opset_import: [";
  for (int i = 0; i < proto.opset_import_size(); ++i)
    os << (i ? ", " : "") << '"' << proto.opset_import(i).domain() << "\" : " << proto.opset_import(i).version();
  os << "]>\n";
  os << proto.graph();
  // ONNX 1.12's printer leaves initializers out: one line each, values only for small ones.
  for (auto& t : *proto.mutable_graph()->mutable_initializer()) {
    if (element_count(t) > max_inline_elements) {
      t.clear_raw_data();
      t.clear_float_data();
      t.clear_int32_data();
      t.clear_int64_data();
      t.clear_double_data();
      t.clear_uint64_data();
      t.clear_string_data();
    } else {
      raw_to_typed_fields(t);
    }
    os << "\n" << t;
  }
  return os.str();
}

}  // namespace qonnx::io
