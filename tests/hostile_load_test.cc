// Hostile models refused at load, whichever command reads them (issue classes 2 and 3):
// - tensor storage: every tensor (initializer, body initializer, node attribute, sparse initializer)
//   has exactly the values its dims and type need, in exactly one field, and known dims and type,
//   used or not;
// - structure: a default-domain opset import, QONNX nodes with their version's arity, attributes of
//   the right type and value; unknown ops named by convert (an error with --strict);
// - declared input shapes without negative sizes (exec --random-inputs would otherwise allocate them).
// Cases are generated per data type / op / domain spelling, not picked one by one.
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/io/model_builder.h"
#include "qonnx/io/model_io.h"
#include "support/cli.h"
#include "support/temp_dir.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {
namespace fs = std::filesystem;

// ---- generated tensors ----

// A valid TensorProto of `dtype` and `dims` in its typed field (zeros).
onnx::TensorProto typed_tensor(const std::string& name, DType dtype, const Dims& dims) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(static_cast<int32_t>(dtype));
  int64_t n = 1;
  for (int64_t d : dims) {
    t.add_dims(d);
    n *= d;
  }
  if (dtype_is_4bit(dtype)) n = (n + 1) / 2;  // two values per int32_data entry
  for (int64_t i = 0; i < n; ++i) {
    switch (dtype) {
      case DType::kFloat: t.add_float_data(0.5f); break;
      case DType::kComplex64: t.add_float_data(0); t.add_float_data(1); break;
      case DType::kDouble: t.add_double_data(0.25); break;
      case DType::kComplex128: t.add_double_data(0); t.add_double_data(1); break;
      case DType::kInt64: t.add_int64_data(-3); break;
      case DType::kUInt32:
      case DType::kUInt64: t.add_uint64_data(7); break;
      case DType::kString: t.add_string_data("s"); break;
      default: t.add_int32_data(1); break;
    }
  }
  return t;
}

// The same tensor with raw_data instead (not for strings).
onnx::TensorProto raw_tensor(const std::string& name, DType dtype, const Dims& dims) {
  onnx::TensorProto t = typed_tensor(name, dtype, dims);
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  t.clear_float_data();
  t.clear_double_data();
  t.clear_int32_data();
  t.clear_int64_data();
  t.clear_uint64_data();
  t.set_raw_data(std::string(static_cast<size_t>(stored_nbytes(dtype, n)), '\x01'));
  return t;
}

const DType kFixedSizeTypes[] = {DType::kFloat,   DType::kDouble,  DType::kInt8,      DType::kUInt8,
                                 DType::kInt16,   DType::kUInt16,  DType::kInt32,     DType::kInt64,
                                 DType::kUInt32,  DType::kUInt64,  DType::kBool,      DType::kFloat16,
                                 DType::kBFloat16, DType::kComplex64, DType::kComplex128,
                                 DType::kFloat8E4M3FN, DType::kFloat8E4M3FNUZ, DType::kFloat8E5M2, DType::kFloat8E5M2FNUZ,
                                 DType::kInt4,    DType::kUInt4};

// Relu(x) -> y plus an initializer nothing reads.
onnx::ModelProto with_unused_initializer(const onnx::TensorProto& t) {
  io::ModelBuilder b(13);
  b.input("x", DType::kFloat, {2}).output("y", DType::kFloat, {2});
  b.node("Relu", {"x"}, {"y"});
  onnx::ModelProto m = b.proto();
  *m.mutable_graph()->add_initializer() = t;
  return m;
}

// The tensor as a Constant node's value whose output nothing reads.
onnx::ModelProto with_unused_constant(const onnx::TensorProto& t) {
  io::ModelBuilder b(13);
  b.input("x", DType::kFloat, {2}).output("y", DType::kFloat, {2});
  b.node("Relu", {"x"}, {"y"});
  onnx::ModelProto m = b.proto();
  auto* c = m.mutable_graph()->add_node();
  c->set_op_type("Constant");
  c->set_name("unused_constant");
  c->add_output("k");
  auto* a = c->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  *a->mutable_t() = t;
  return m;
}

// The tensor as an initializer of an If's then-branch (the If reads a constant condition).
onnx::ModelProto with_body_initializer(const onnx::TensorProto& t) {
  io::ModelBuilder body(13);
  body.output("b", DType::kFloat, {2});
  body.node("Identity", {"x"}, {"b"});
  io::ModelBuilder b(13);
  b.input("x", DType::kFloat, {2}).output("y", DType::kFloat, {2});
  Tensor cond(DType::kBool, {});
  cond.data<uint8_t>()[0] = 1;
  b.initializer("cond", cond);
  b.node("If", {"cond"}, {"y"}).attr("then_branch", body).attr("else_branch", body);
  onnx::ModelProto m = b.proto();
  *m.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g()->add_initializer() = t;
  return m;
}

class HostileLoad : public TempDirTest {
 protected:
  Result<ir::Model> load(const onnx::ModelProto& m) { return io::load_model_from_bytes(m.SerializeAsString(), dir_); }

  void expect_invalid(const onnx::ModelProto& m, Code code, const std::string& needle) {
    auto r = load(m);
    ASSERT_FALSE(r.is_ok()) << "loaded, expected: " << needle;
    EXPECT_EQ(r.status().code(), code) << r.status().to_string();
    EXPECT_NE(r.status().to_string().find(needle), std::string::npos) << "expected '" << needle << "' in: " << r.status().to_string();
  }

  std::string write(const std::string& name, const onnx::ModelProto& m) {
    std::ofstream(path(name), std::ios::binary) << m.SerializeAsString();
    return path(name);
  }

  // check, exec and convert all refuse it with `code`, name the file and `needle`, and write nothing.
  void expect_every_command_refuses(const onnx::ModelProto& m, int code, const std::string& needle) {
    std::string file = write("bad.onnx", m);
    for (std::string cmd : {"check " + file, "exec " + file + " --random-inputs", "info " + file,
                            "convert " + file + " --target qdq -o " + path("out.onnx"),
                            "convert " + file + " --target fold --check 1 -o " + path("out.onnx")}) {
      auto r = run_cli(cmd);
      EXPECT_EQ(r.exit_code, code) << cmd << "\n" << r.err;
      EXPECT_NE(r.err.find(file), std::string::npos) << cmd << "\n" << r.err;
      EXPECT_NE(r.err.find(needle), std::string::npos) << cmd << "\nexpected '" << needle << "' in:\n" << r.err;
      EXPECT_FALSE(fs::exists(path("out.onnx"))) << cmd;
    }
  }
};

// Every place a tensor can sit, for every storage defect: refused at load, naming the tensor.
TEST_F(HostileLoad, TensorStorageIsCheckedAtLoadWhereverTheTensorSits) {
  using Place = std::function<onnx::ModelProto(const onnx::TensorProto&)>;
  const std::pair<const char*, Place> places[] = {
      {"initializer", with_unused_initializer}, {"constant", with_unused_constant}, {"body", with_body_initializer}};
  for (const auto& [place, make] : places) {
    for (DType dtype : kFixedSizeTypes) {
      SCOPED_TRACE(std::string(place) + " " + dtype_name(dtype));
      const Dims dims = {2, 3};
      // Valid storage in either form loads.
      EXPECT_TRUE(load(make(typed_tensor("t", dtype, dims))).is_ok()) << load(make(typed_tensor("t", dtype, dims))).status().to_string();
      EXPECT_TRUE(load(make(raw_tensor("t", dtype, dims))).is_ok());

      onnx::TensorProto raw = raw_tensor("t", dtype, dims);
      for (int delta : {-1, 1}) {
        onnx::TensorProto bad = raw;
        bad.mutable_raw_data()->resize(bad.raw_data().size() + static_cast<size_t>(delta), '\0');
        expect_invalid(make(bad), Code::kInvalidModel, "tensor 't': raw_data has");
      }
      onnx::TensorProto extra = typed_tensor("t", dtype, dims), fewer = extra;
      onnx::TensorProto both = extra;
      both.set_raw_data(raw.raw_data());
      expect_invalid(make(both), Code::kInvalidModel, "holds values in both raw_data and");
      // One value more / less than the dims need.
      switch (dtype) {
        case DType::kFloat: case DType::kComplex64: extra.add_float_data(1); fewer.mutable_float_data()->RemoveLast(); break;
        case DType::kDouble: case DType::kComplex128: extra.add_double_data(1); fewer.mutable_double_data()->RemoveLast(); break;
        case DType::kInt64: extra.add_int64_data(1); fewer.mutable_int64_data()->RemoveLast(); break;
        case DType::kUInt32: case DType::kUInt64: extra.add_uint64_data(1); fewer.mutable_uint64_data()->RemoveLast(); break;
        default: extra.add_int32_data(1); fewer.mutable_int32_data()->RemoveLast(); break;
      }
      expect_invalid(make(extra), Code::kInvalidModel, "tensor 't': holds");
      expect_invalid(make(fewer), Code::kInvalidModel, "tensor 't': holds");
      // Values in a field of another type.
      onnx::TensorProto wrong = typed_tensor("t", dtype, {});
      wrong.clear_float_data();
      wrong.clear_double_data();
      wrong.clear_int32_data();
      wrong.clear_int64_data();
      wrong.clear_uint64_data();
      if (dtype == DType::kInt64) wrong.add_float_data(1);
      else wrong.add_int64_data(1);
      expect_invalid(make(wrong), Code::kInvalidModel, "keeps its values in");
      // Two negative dims whose product matches the data; negative and overflowing dims.
      onnx::TensorProto negative = typed_tensor("t", dtype, dims);
      negative.set_dims(0, -2);
      negative.set_dims(1, -3);
      expect_invalid(make(negative), Code::kInvalidModel, "dims [-2, -3] are negative or overflow");
      onnx::TensorProto huge = raw_tensor("t", dtype, {1});
      huge.set_dims(0, int64_t{1} << 40);
      huge.add_dims(int64_t{1} << 40);
      expect_invalid(make(huge), Code::kInvalidModel, "negative or overflow");
      onnx::TensorProto large = raw_tensor("t", dtype, {1});
      large.set_dims(0, int64_t{1} << 61);
      expect_invalid(make(large), Code::kInvalidModel, "tensor 't'");
      // A segment outside the tensor.
      onnx::TensorProto segment = typed_tensor("t", dtype, dims);
      segment.mutable_segment()->set_begin(4);
      segment.mutable_segment()->set_end(9);
      expect_invalid(make(segment), Code::kInvalidModel, "segment [4, 9) is not within the 6 elements");
    }
    // data_type: undefined, not an ONNX type, a type of later ONNX releases.
    SCOPED_TRACE(place);
    for (int32_t type : {0, 24, 99, -1, 1 << 20}) {
      onnx::TensorProto t = typed_tensor("t", DType::kFloat, {2});
      t.set_data_type(type);
      expect_invalid(make(t), Code::kInvalidModel, "tensor 't': data_type");
    }
    onnx::TensorProto float4 = raw_tensor("t", DType::kUInt8, {2});
    float4.set_data_type(23);
    expect_invalid(make(float4), Code::kUnsupported, "is not supported");
    // float8 (17..20) takes a byte per element; int4/uint4 (21, 22) pack two per byte.
    for (int32_t type : {17, 19, 21, 22}) {
      onnx::TensorProto t = raw_tensor("t", DType::kUInt8, {2});
      t.set_data_type(type);
      if (type < 21) EXPECT_TRUE(load(make(t)).is_ok()) << load(make(t)).status().to_string();
      else expect_invalid(make(t), Code::kInvalidModel, "raw_data has 2 bytes, dims [2] of");
    }
    // Strings: string_data only, one per element.
    onnx::TensorProto strings = typed_tensor("t", DType::kString, {3});
    EXPECT_TRUE(load(make(strings)).is_ok());
    strings.add_string_data("x");
    expect_invalid(make(strings), Code::kInvalidModel, "holds 4 values, dims [3] need 3");
    onnx::TensorProto raw_strings = typed_tensor("t", DType::kString, {0});
    raw_strings.set_raw_data("abc");
    expect_invalid(make(raw_strings), Code::kInvalidModel, "string tensor");
    // A rank past the limit.
    onnx::TensorProto deep = raw_tensor("t", DType::kFloat, {1});
    for (int i = 0; i < 100; ++i) deep.add_dims(1);
    expect_invalid(make(deep), Code::kInvalidModel, "rank 101 is over the supported maximum of 64");
  }
  // Empty tensors need no values; an empty raw_data is fine for them.
  onnx::TensorProto empty = raw_tensor("t", DType::kFloat, {0, 3});
  EXPECT_TRUE(load(with_unused_initializer(empty)).is_ok());
}

TEST_F(HostileLoad, ExternalDataIsCheckedAtLoadEvenWhenUnused) {
  std::ofstream(path("w.bin"), std::ios::binary) << std::string(24, '\0');
  auto external = [&](const std::string& location, const std::string& offset, const std::string& length) {
    onnx::TensorProto t = typed_tensor("t", DType::kFloat, {6});
    t.clear_float_data();
    t.set_data_location(onnx::TensorProto::EXTERNAL);
    for (const auto& [k, v] : {std::pair<std::string, std::string>{"location", location}, {"offset", offset}, {"length", length}}) {
      auto* e = t.add_external_data();
      e->set_key(k);
      e->set_value(v);
    }
    return t;
  };
  EXPECT_TRUE(load(with_unused_initializer(external("w.bin", "0", "24"))).is_ok());
  expect_invalid(with_unused_initializer(external("w.bin", "4", "24")), Code::kInvalidModel, "past the end");
  expect_invalid(with_unused_initializer(external("gone.bin", "0", "24")), Code::kInvalidModel, "does not exist");
  expect_invalid(with_unused_initializer(external("../w.bin", "0", "24")), Code::kInvalidModel, "escapes the model folder");
  expect_invalid(with_unused_initializer(external("/etc/hostname", "0", "24")), Code::kInvalidModel, "is absolute");
  expect_invalid(with_body_initializer(external("w.bin", "0", "20")), Code::kInvalidModel, "does not match");
  onnx::TensorProto mixed = external("w.bin", "0", "24");
  mixed.add_float_data(1);
  expect_invalid(with_unused_initializer(mixed), Code::kInvalidModel, "data_location is EXTERNAL but it also holds values in float_data");
  // Node attributes are decoded without the model's folder: external data there is an invalid model (exit 5).
  expect_invalid(with_unused_constant(external("w.bin", "0", "24")), Code::kInvalidModel, "node attributes cannot");
}

TEST_F(HostileLoad, SparseInitializersAreChecked) {
  auto sparse_model = [](int64_t nnz_values, int64_t nnz_indices, int64_t dense) {
    onnx::ModelProto m = with_unused_initializer(typed_tensor("w", DType::kFloat, {1}));
    auto* sp = m.mutable_graph()->add_sparse_initializer();
    *sp->mutable_values() = typed_tensor("sp", DType::kFloat, {nnz_values});
    *sp->mutable_indices() = typed_tensor("sp_idx", DType::kInt64, {nnz_indices});
    sp->add_dims(dense);
    return m;
  };
  EXPECT_TRUE(load(sparse_model(2, 2, 8)).is_ok());
  expect_invalid(sparse_model(2, 3, 8), Code::kInvalidModel, "sparse initializer 'sp': indices have dims [3]");
  expect_invalid(sparse_model(9, 9, 8), Code::kInvalidModel, "9 values for 8 dense elements");
  onnx::ModelProto bad_values = sparse_model(2, 2, 8);
  bad_values.mutable_graph()->mutable_sparse_initializer(0)->mutable_values()->add_float_data(3);
  expect_invalid(bad_values, Code::kInvalidModel, "tensor 'sp': holds 3 values");
}

// The cases through every command: exit 5 naming file and tensor, nothing written.
TEST_F(HostileLoad, EveryCommandRefusesBadStorage) {
  onnx::TensorProto raw17 = raw_tensor("w17", DType::kFloat, {4});
  raw17.mutable_raw_data()->push_back('\0');  // 17 bytes for 4 floats
  expect_every_command_refuses(with_unused_initializer(raw17), 5, "tensor 'w17': raw_data has 17 bytes, dims [4] of float need 16");
  onnx::TensorProto both = typed_tensor("wboth", DType::kFloat, {4});
  both.set_raw_data(std::string(16, '\0'));
  expect_every_command_refuses(with_unused_initializer(both), 5, "tensor 'wboth': holds values in both raw_data and float_data");
  onnx::TensorProto negative = typed_tensor("wneg", DType::kFloat, {2, 3});
  negative.set_dims(0, -2);
  negative.set_dims(1, -3);
  expect_every_command_refuses(with_unused_initializer(negative), 5, "tensor 'wneg': dims [-2, -3] are negative or overflow");
}

// ---- structure ----

TEST_F(HostileLoad, DefaultDomainOpsetImportIsRequired) {
  onnx::ModelProto cut = with_unused_initializer(typed_tensor("w", DType::kFloat, {1}));
  cut.clear_opset_import();
  expect_invalid(cut, Code::kInvalidModel, "the model has no opset_import");
  expect_every_command_refuses(cut, 5, "the model has no opset_import");
  // Only a QONNX domain imported: no version for Relu (a model of custom-domain ops only needs none).
  auto* q = cut.add_opset_import();
  q->set_domain(dialect::kGeneralDomain);
  q->set_version(1);
  expect_invalid(cut, Code::kInvalidModel, "node 'Relu_0' (ai.onnx::Relu): the model has no opset_import for the default ONNX domain");
  // "ai.onnx" is the default domain too; IR 1-2 models had no imports (opset 1).
  q->set_domain("ai.onnx");
  q->set_version(13);
  EXPECT_TRUE(load(cut).is_ok());
  onnx::ModelProto old = cut;
  old.clear_opset_import();
  old.set_ir_version(2);
  EXPECT_TRUE(load(old).is_ok());
  // Imported twice, or at version 0.
  onnx::ModelProto twice = cut;
  auto* again = twice.add_opset_import();
  again->set_domain("");
  again->set_version(11);
  expect_invalid(twice, Code::kInvalidModel, "lists the domain '' twice");
  onnx::ModelProto zero = cut;
  zero.mutable_opset_import(0)->set_version(0);
  expect_invalid(zero, Code::kInvalidModel, "versions start at 1");
}

// One QONNX node of `op` with `inputs` parameters (all float initializers) in `domain`, imported at
// `version` (0: not imported).
struct QonnxNode {
  std::string op, domain;
  int64_t version = 1;
  size_t inputs = 4;
  std::vector<std::pair<std::string, std::function<void(onnx::AttributeProto&)>>> attrs;
};

onnx::ModelProto qonnx_model(const QonnxNode& q) {
  io::ModelBuilder b(13);
  if (q.version > 0 && !q.domain.empty()) b.import(q.domain, q.version);
  b.input("x", DType::kFloat, {1, 4}).output("y", DType::kFloat, {1, 4});
  std::vector<std::string> ins = {"x"};
  for (size_t i = 1; i < q.inputs; ++i) {
    b.initializer("p" + std::to_string(i), f32s(i == 1 ? 0.5f : 2.0f));
    ins.push_back("p" + std::to_string(i));
  }
  b.node(q.op, ins, {"y"}, q.domain);
  onnx::ModelProto m = b.proto();
  for (const auto& [name, set] : q.attrs) {
    auto* a = m.mutable_graph()->mutable_node(0)->add_attribute();
    a->set_name(name);
    set(*a);
  }
  return m;
}

std::function<void(onnx::AttributeProto&)> int_attr(int64_t v) {
  return [v](onnx::AttributeProto& a) { a.set_type(onnx::AttributeProto::INT); a.set_i(v); };
}
std::function<void(onnx::AttributeProto&)> float_attr(float v) {
  return [v](onnx::AttributeProto& a) { a.set_type(onnx::AttributeProto::FLOAT); a.set_f(v); };
}
std::function<void(onnx::AttributeProto&)> string_attr(const std::string& v) {
  return [v](onnx::AttributeProto& a) { a.set_type(onnx::AttributeProto::STRING); a.set_s(v); };
}

struct OpCase {
  std::string op;
  size_t inputs;       // at the given version
  int64_t version;
  std::vector<std::pair<std::string, std::function<void(onnx::AttributeProto&)>>> valid_attrs;
  std::vector<std::string> bool_attrs;
  bool has_rounding;
};

std::vector<OpCase> op_cases() {
  return {
      {"Quant", 4, 1, {{"signed", int_attr(1)}, {"narrow", int_attr(0)}, {"rounding_mode", string_attr("round")}}, {"signed", "narrow"}, true},
      {"IntQuant", 4, 1, {{"signed", int_attr(0)}, {"narrow", int_attr(1)}, {"rounding_mode", string_attr("HALF_EVEN")}}, {"signed", "narrow"}, true},
      {"BipolarQuant", 2, 1, {}, {}, false},
      {"Trunc", 5, 1, {{"rounding_mode", string_attr("FLOOR")}, {"signed", int_attr(1)}}, {"signed", "narrow"}, true},
      {"Trunc", 6, 2, {{"rounding_mode", string_attr("ROUND")}, {"narrow", int_attr(0)}}, {"signed", "narrow"}, true},
      {"FloatQuant", 6, 1, {{"has_inf", int_attr(0)}, {"saturation", int_attr(1)}, {"rounding_mode", string_attr("ROUND")}},
       {"has_inf", "has_nan", "has_subnormal", "saturation"}, true},
      {"MultiThreshold", 2, 1, {{"out_dtype", string_attr("UINT4")}, {"out_scale", float_attr(0.5f)}, {"data_layout", string_attr("NHWC")}}, {}, false},
  };
}

TEST_F(HostileLoad, QonnxNodesAreVerifiedInEveryDomainSpelling) {
  std::vector<std::string> domains = dialect::general_domain_spellings();
  domains.push_back("");
  for (const std::string& domain : domains) {
    for (const OpCase& c : op_cases()) {
      const bool in_default = domain.empty();
      if (in_default && !(c.op == "Quant" || c.op == "IntQuant" || c.op == "BipolarQuant" || (c.op == "Trunc" && c.version == 1))) continue;
      SCOPED_TRACE(domain + "::" + c.op + " v" + std::to_string(c.version));
      QonnxNode q{c.op, domain, c.version, c.inputs, c.valid_attrs};
      auto ok = load(qonnx_model(q));
      EXPECT_TRUE(ok.is_ok()) << ok.status().to_string();
      // Arity: one input fewer, one more.
      for (size_t n : {c.inputs - 1, c.inputs + 1}) {
        QonnxNode bad = q;
        bad.inputs = n;
        expect_invalid(qonnx_model(bad), Code::kInvalidModel, fmt::format("takes {} inputs", c.inputs));
      }
      // An empty required input, a second output.
      onnx::ModelProto hole = qonnx_model(q);
      hole.mutable_graph()->mutable_node(0)->set_input(1, "");
      expect_invalid(hole, Code::kInvalidModel, "input #1");
      onnx::ModelProto two = qonnx_model(q);
      two.mutable_graph()->mutable_node(0)->add_output("y2");
      expect_invalid(two, Code::kInvalidModel, "has one output");
      // Unknown attribute, wrong attribute type, out-of-range flags, duplicate attribute.
      QonnxNode unknown = q;
      unknown.attrs.push_back({"sigend", int_attr(1)});
      expect_invalid(qonnx_model(unknown), Code::kInvalidModel, "attribute 'sigend'");
      for (const std::string& flag : c.bool_attrs) {
        for (int64_t v : {2, -1, 255}) {
          QonnxNode bad = q;
          bad.attrs = {{flag, int_attr(v)}};
          expect_invalid(qonnx_model(bad), Code::kInvalidModel, fmt::format("attribute '{}': must be 0 or 1, got {}", flag, v));
        }
        QonnxNode typed = q;
        typed.attrs = {{flag, float_attr(1.0f)}};
        expect_invalid(qonnx_model(typed), Code::kInvalidModel, fmt::format("attribute '{}': must be an int, got a float", flag));
        QonnxNode twice = q;
        twice.attrs = {{flag, int_attr(1)}, {flag, int_attr(0)}};
        expect_invalid(qonnx_model(twice), Code::kInvalidModel, "is given twice");
      }
      if (c.has_rounding) {
        QonnxNode bad = q;
        bad.attrs = {{"rounding_mode", string_attr("BANKERS")}};
        expect_invalid(qonnx_model(bad), Code::kUnsupported, "unknown rounding_mode 'BANKERS'");
        bad.attrs = {{"rounding_mode", int_attr(0)}};
        expect_invalid(qonnx_model(bad), Code::kInvalidModel, "attribute 'rounding_mode': must be a string, got an int");
      }
    }
  }
}

TEST_F(HostileLoad, TruncArityFollowsTheImportedVersion) {
  const std::string q = dialect::kGeneralDomain;
  // 5 inputs under an import that means v2, 6 inputs under v1 (imported, not imported, default domain).
  expect_invalid(qonnx_model({"Trunc", q, 2, 5, {}}), Code::kInvalidModel, "Trunc version 2 takes 6 inputs");
  expect_invalid(qonnx_model({"Trunc", q, 3, 5, {}}), Code::kInvalidModel, "Trunc version 3 takes 6 inputs");
  expect_invalid(qonnx_model({"Trunc", q, 1, 6, {}}), Code::kInvalidModel, "Trunc version 1 takes 5 inputs");
  expect_invalid(qonnx_model({"Trunc", q, 0, 6, {}}), Code::kInvalidModel, "Trunc version 1 takes 5 inputs");
  expect_invalid(qonnx_model({"Trunc", "", 0, 6, {}}), Code::kInvalidModel, "Trunc version 1 takes 5 inputs");
  // The case through convert --target fold: exit 5, nothing written.
  std::string file = write("trunc.onnx", qonnx_model({"Trunc", q, 2, 5, {}}));
  auto r = run_cli("convert " + file + " --target fold -o " + path("out.onnx"));
  EXPECT_EQ(r.exit_code, 5) << r.err;
  EXPECT_NE(r.err.find("node 'Trunc_0'"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("out.onnx")));
}

TEST_F(HostileLoad, MultiThresholdAttributes) {
  const std::string q = dialect::kGeneralDomain;
  expect_invalid(qonnx_model({"MultiThreshold", q, 1, 2, {}}), Code::kInvalidModel, "needs the attribute out_dtype");
  for (const char* dt : {"INT0", "UINT65", "FOO", "", "int4"})
    expect_invalid(qonnx_model({"MultiThreshold", q, 1, 2, {{"out_dtype", string_attr(dt)}}}), Code::kInvalidModel,
                   "is not a qonnx DataType");
  for (const char* dt : {"BIPOLAR", "BINARY", "TERNARY", "INT2", "UINT8", "FLOAT32", "FIXED<8,4>", "SCALEDINT<8>"})
    EXPECT_TRUE(load(qonnx_model({"MultiThreshold", q, 1, 2, {{"out_dtype", string_attr(dt)}}})).is_ok()) << dt;
  for (const char* layout : {"", "HW", "nchw", "NHCW"})
    expect_invalid(qonnx_model({"MultiThreshold", q, 1, 2, {{"out_dtype", string_attr("UINT2")}, {"data_layout", string_attr(layout)}}}),
                   Code::kInvalidModel, "is not a data layout");
  const float inf = std::numeric_limits<float>::infinity();
  expect_invalid(qonnx_model({"MultiThreshold", q, 1, 2, {{"out_dtype", string_attr("UINT2")}, {"out_scale", float_attr(inf)}}}),
                 Code::kInvalidModel, "attribute 'out_scale': must be finite");
  expect_invalid(qonnx_model({"MultiThreshold", q, 1, 2, {{"out_dtype", string_attr("UINT2")}, {"out_bias", int_attr(1)}}}),
                 Code::kInvalidModel, "attribute 'out_bias': must be a float, got an int");
}

TEST_F(HostileLoad, QonnxNodesInsideBodiesAreVerified) {
  io::ModelBuilder body(13);
  body.output("b", DType::kFloat, {4});
  body.node("Quant", {"x", "s", "s", "s"}, {"b"}, dialect::kGeneralDomain).attr("signed", 3);
  io::ModelBuilder b(13);
  b.import(dialect::kGeneralDomain, 1);
  b.input("x", DType::kFloat, {4}).output("y", DType::kFloat, {4});
  Tensor cond(DType::kBool, {});
  b.initializer("cond", cond).initializer("s", f32s(1));
  b.node("If", {"cond"}, {"y"}).attr("then_branch", body).attr("else_branch", body);
  expect_invalid(b.proto(), Code::kInvalidModel, "attribute 'signed': must be 0 or 1, got 3");
}

TEST_F(HostileLoad, UnknownOpsAreNamedAndAnErrorUnderStrict) {
  io::ModelBuilder b(13);
  b.import("com.example", 1);
  b.input("x", DType::kFloat, {2}).output("y", DType::kFloat, {2});
  b.node("Relu", {"x"}, {"r"});
  b.node("Frobnicate", {"r"}, {"y"}, "com.example");
  std::string file = write("unknown.onnx", b.proto());
  auto warned = run_cli("convert " + file + " --target qdq -o " + path("out.onnx"));
  EXPECT_EQ(warned.exit_code, 0) << warned.err;
  EXPECT_NE(warned.err.find("unknown to ONNX and to qonnx-cc: com.example::Frobnicate"), std::string::npos) << warned.err;
  EXPECT_TRUE(fs::exists(path("out.onnx")));
  fs::remove(path("out.onnx"));
  auto strict = run_cli("convert " + file + " --target qdq --strict -o " + path("out.onnx"));
  EXPECT_EQ(strict.exit_code, 6) << strict.err;
  EXPECT_NE(strict.err.find("com.example::Frobnicate"), std::string::npos) << strict.err;
  EXPECT_FALSE(fs::exists(path("out.onnx")));
  // --check cannot run it, and says so.
  auto check = run_cli("convert " + file + " --target qdq --check 1 -o " + path("out.onnx"));
  EXPECT_EQ(check.exit_code, 6) << check.err;
  EXPECT_NE(check.err.find("--check"), std::string::npos) << check.err;
  EXPECT_NE(check.err.find("com.example::Frobnicate"), std::string::npos) << check.err;
  EXPECT_FALSE(fs::exists(path("out.onnx")));
  // An op a QONNX domain does not have.
  io::ModelBuilder q(13);
  q.import(dialect::kGeneralDomain, 1);
  q.input("x", DType::kFloat, {2}).output("y", DType::kFloat, {2});
  q.node("QuantX", {"x"}, {"y"}, dialect::kGeneralDomain);
  auto r = run_cli("convert " + write("qx.onnx", q.proto()) + " --target fold --strict -o " + path("out.onnx"));
  EXPECT_EQ(r.exit_code, 6) << r.err;
  EXPECT_NE(r.err.find("qonnx.custom_op.general::QuantX"), std::string::npos) << r.err;
}

TEST_F(HostileLoad, NegativeDeclaredDimsAreRefused) {
  for (int64_t d : {int64_t{-1}, int64_t{-3}, std::numeric_limits<int64_t>::min()}) {
    io::ModelBuilder b(13);
    b.input("x", DType::kFloat, {2, 2}).output("y", DType::kFloat, {2, 2});
    b.node("Relu", {"x"}, {"y"});
    onnx::ModelProto m = b.proto();
    m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_value(d);
    auto r = run_cli("exec " + write("neg.onnx", m) + " --random-inputs");
    EXPECT_EQ(r.exit_code, 5) << r.err;
    EXPECT_NE(r.err.find(fmt::format("graph input 'x': dim #1 is {}", d)), std::string::npos) << r.err;
  }
  // Symbolic dims stay fine.
  io::ModelBuilder sym(13);
  sym.input("x", DType::kFloat, {-1, 2}).output("y", DType::kFloat, {-1, 2});
  sym.node("Relu", {"x"}, {"y"});
  EXPECT_EQ(run_cli("exec " + write("sym.onnx", sym.proto()) + " --random-inputs").exit_code, 0);
}

}  // namespace
}  // namespace qonnx::test
