// The ONNX-library boundary (io/onnx_library.h): library calls run isolated, so a crash or a hang
// on a malformed model is an error naming the pass; the checker guards every call; upgrade-opset
// never aborts and keeps the numbers; convert validates what it writes.
#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/exec/executor.h"
#include "qonnx/io/model_builder.h"
#include "qonnx/io/model_io.h"
#include "qonnx/onnxlib/onnx_library.h"
#include "support/cli.h"
#include "support/temp_dir.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {
namespace fs = std::filesystem;

const std::string kQ = "qonnx.custom_op.general";

class OnnxBoundary : public TempDirTest {
 protected:
  std::string write(const std::string& name, const std::string& bytes) const {
    std::ofstream(path(name), std::ios::binary) << bytes;
    return path(name);
  }
};

// ---- isolation ----

TEST(RunIsolated, ReturnsTheChildsBytesAndStatus) {
  auto ok = onnxlib::run_isolated("a test", [] { return Result<std::string>(std::string(200000, 'x') + "end"); }, 10);
  ASSERT_TRUE(ok.is_ok()) << ok.status().to_string();
  EXPECT_EQ(ok.value().size(), 200003u);
  EXPECT_EQ(ok.value().substr(200000), "end");
  auto err = onnxlib::run_isolated("a test", [] { return Result<std::string>(Status(Code::kUnsupported, "no such thing")); }, 10);
  ASSERT_FALSE(err.is_ok());
  EXPECT_EQ(err.status().code(), Code::kUnsupported);
  EXPECT_NE(err.status().to_string().find("no such thing"), std::string::npos);
}

TEST(RunIsolated, CrashAbortAndHangBecomeInvalidModel) {
  auto segv = onnxlib::run_isolated("the crash test", []() -> Result<std::string> {
    ::raise(SIGSEGV);
    return std::string();
  }, 10);
  ASSERT_FALSE(segv.is_ok());
  EXPECT_EQ(segv.status().code(), Code::kInvalidModel);
  EXPECT_NE(segv.status().message().find("crashed in the crash test"), std::string::npos) << segv.status().message();
  auto abort = onnxlib::run_isolated("the abort test", []() -> Result<std::string> {
    std::abort();
  }, 10);
  ASSERT_FALSE(abort.is_ok());
  EXPECT_EQ(abort.status().code(), Code::kInvalidModel);
  auto start = std::chrono::steady_clock::now();
  auto hang = onnxlib::run_isolated("the hang test", []() -> Result<std::string> {
    for (;;) ::pause();
  }, 1);
  ASSERT_FALSE(hang.is_ok());
  EXPECT_EQ(hang.status().code(), Code::kInvalidModel);
  EXPECT_NE(hang.status().message().find("did not finish the hang test within 1 s"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  auto thrown = onnxlib::run_isolated("the throw test", []() -> Result<std::string> { throw std::runtime_error("boom"); }, 10);
  ASSERT_FALSE(thrown.is_ok());
  EXPECT_NE(thrown.status().message().find("boom"), std::string::npos);
}

// ---- the crash class of issue 14 item 5: garbled attributes reach the library ----

// The fuzzer's model: a Conv whose attribute names are garbled (SIGSEGV in ONNX 1.12's
// convPoolShapeInference when handed over unchecked).
const unsigned char kConvSegv[] = {
  0x08, 0x08, 0x12, 0x08, 0x71, 0x6f, 0x6e, 0x6e, 0x78, 0x2d, 0x63, 0x63,
  0x3a, 0xda, 0x01, 0x0a, 0x59, 0x0a, 0x01, 0x78, 0x0a, 0x01, 0x77, 0x0a,
  0x04, 0x62, 0x69, 0x61, 0x73, 0x12, 0x01, 0x79, 0x1a, 0x06, 0x43, 0x6f,
  0x9d, 0x76, 0x5f, 0x30, 0x22, 0x04, 0x43, 0x6f, 0x6e, 0x76, 0x2a, 0x15,
  0x0a, 0x0c, 0x6b, 0x65, 0x72, 0x2e, 0x65, 0x6c, 0x5f, 0x73, 0x68, 0x61,
  0x70, 0x65, 0x40, 0x02, 0x40, 0x02, 0xa0, 0x01, 0x07, 0x2a, 0x11, 0x0a,
  0x04, 0x70, 0x61, 0x64, 0x73, 0x40, 0x01, 0x40, 0x00, 0x40, 0x01, 0x40,
  0x01, 0xa0, 0x01, 0x07, 0x2a, 0x10, 0x0a, 0x07, 0x73, 0x74, 0xff, 0xff,
  0xff, 0x05, 0x73, 0x40, 0x01, 0x40, 0x01, 0xa0, 0x01, 0x07, 0x12, 0x0e,
  0x71, 0x6f, 0x6e, 0x6e, 0x78, 0x5f, 0x63, 0x63, 0x5f, 0x67, 0x72, 0x61,
  0x70, 0x68, 0x2a, 0x2f, 0x08, 0x02, 0x08, 0x01, 0x08, 0x02, 0x08, 0x02,
  0x10, 0x01, 0x42, 0x01, 0x77, 0x4a, 0x20, 0x00, 0x00, 0x40, 0xbf, 0x00,
  0x00, 0x80, 0xbe, 0x00, 0x00, 0x80, 0x3e, 0x00, 0x00, 0x40, 0x3f, 0x00,
  0x00, 0xa0, 0x3f, 0x00, 0x00, 0xe0, 0x3f, 0x00, 0x00, 0x10, 0x40, 0x00,
  0x00, 0x40, 0xbf, 0x2a, 0x14, 0x08, 0x02, 0x10, 0x01, 0x42, 0x04, 0x62,
  0x69, 0x61, 0x73, 0x4a, 0x08, 0x00, 0x00, 0x40, 0xbf, 0x00, 0x00, 0x80,
  0xbe, 0x5a, 0x1b, 0x0a, 0x01, 0x78, 0x12, 0x16, 0x0a, 0x14, 0x08, 0x01,
  0x12, 0x10, 0x0a, 0x02, 0x08, 0x01, 0x0a, 0x02, 0x08, 0x01, 0xf5, 0x02,
  0x08, 0x04, 0x0a, 0x02, 0x08, 0x04, 0x11, 0x09, 0x0a, 0x01, 0x79, 0x12,
  0x04, 0x0a, 0x02, 0x08, 0x01, 0x42, 0x04, 0x0a, 0x00, 0x10, 0x0d
};

TEST_F(OnnxBoundary, GarbledConvFromTheFuzzerIsExit5ForEveryTarget) {
  std::string model = write("conv_segv.onnx", std::string(reinterpret_cast<const char*>(kConvSegv), sizeof kConvSegv));
  for (const char* target : {"qdq", "ngraph", "ascend"}) {
    auto r = run_cli(std::string("convert ") + model + " --target " + target + " -o " + path("out.onnx"));
    EXPECT_EQ(r.exit_code, 5) << target << "\n" << r.err;
    EXPECT_NE(r.err.find("[infer-shapes]"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("OpType: Conv"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(path("out.onnx")));
  }
  EXPECT_EQ(run_cli("check " + model).exit_code, 5);
}

// One node with a valid neighbourhood and one attribute broken: garbled name, wrong type.
struct BrokenNode {
  std::string op;
  std::function<void(io::ModelBuilder&)> build;
};

std::vector<BrokenNode> broken_nodes(const std::string& bad_attr_mode) {
  bool wrong_type = bad_attr_mode == "type";
  auto ints = [wrong_type](io::NodeBuilder& n, const std::string& name, std::vector<int64_t> v) {
    if (wrong_type) n.attr(name, 1.5f);
    else n.attr(name.substr(0, 2) + "\x9d" + name.substr(3), v);
  };
  std::vector<BrokenNode> out;
  auto conv_like = [&](const std::string& op, bool weighted) {
    out.push_back({op, [=](io::ModelBuilder& b) {
                     b.input("x", DType::kFloat, {1, 2, 5, 5}).output("y", DType::kFloat);
                     std::vector<std::string> ins = {"x"};
                     if (weighted) {
                       b.initializer("w", Tensor(DType::kFloat, {2, 2, 3, 3}));
                       ins.push_back("w");
                     }
                     auto n = b.node(op, ins, {"y"});
                     n.name("broken");
                     ints(n, "kernel_shape", {3, 3});
                     ints(n, "strides", {1, 1});
                   }});
  };
  conv_like("Conv", true);
  conv_like("ConvTranspose", true);
  conv_like("MaxPool", false);
  conv_like("AveragePool", false);
  conv_like("LpPool", false);
  out.push_back({"Gemm", [=](io::ModelBuilder& b) {
                   b.input("x", DType::kFloat, {2, 3}).output("y", DType::kFloat);
                   b.initializer("w", Tensor(DType::kFloat, {4, 3}));
                   auto n = b.node("Gemm", {"x", "w"}, {"y"});
                   n.name("broken");
                   if (wrong_type) n.attr("transB", 1.5f);
                   else n.attr("tr\x9dnsB", int64_t{1});
                 }});
  out.push_back({"Reshape", [=](io::ModelBuilder& b) {
                   b.input("x", DType::kFloat, {2, 3}).output("y", DType::kFloat);
                   b.initializer("s", i64({1}, {6}));
                   auto n = b.node("Reshape", {"x", "s"}, {"y"});
                   n.name("broken");
                   ints(n, "allowzero", {0});
                 }});
  out.push_back({"Transpose", [=](io::ModelBuilder& b) {
                   b.input("x", DType::kFloat, {2, 3}).output("y", DType::kFloat);
                   auto n = b.node("Transpose", {"x"}, {"y"});
                   n.name("broken");
                   ints(n, "perm", {1, 0});
                 }});
  out.push_back({"Concat", [=](io::ModelBuilder& b) {
                   b.input("x", DType::kFloat, {2, 3}).output("y", DType::kFloat);
                   auto n = b.node("Concat", {"x", "x"}, {"y"});
                   n.name("broken");
                   if (wrong_type) n.attr("axis", 1.5f);
                   else n.attr("ax\x9ds", int64_t{1});
                 }});
  return out;
}

TEST_F(OnnxBoundary, GarbledOrMistypedAttributesAreExit5NamingTheNode) {
  for (const char* mode : {"name", "type"}) {
    for (const auto& c : broken_nodes(mode)) {
      io::ModelBuilder b(13);
      c.build(b);
      std::string model = write("m.onnx", b.serialize());
      for (const char* target : {"qdq", "ngraph", "ascend", "fold"}) {
        auto r = run_cli(std::string("convert ") + model + " --target " + target + " -o " + path("out.onnx"));
        EXPECT_EQ(r.exit_code, 5) << c.op << " " << mode << " " << target << "\n" << r.err;
        EXPECT_NE(r.err.find("broken"), std::string::npos) << c.op << " " << mode << " " << target << "\n" << r.err;
        EXPECT_FALSE(fs::exists(path("out.onnx")));
      }
    }
  }
}

// ---- opset upgrade ----

Tensor random_tensor(DType dtype, const Dims& dims, uint32_t seed) {
  Tensor t(dtype, dims);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2.f, 2.f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

// A CNN at default-domain opset `v` touching every op family whose form changed between 7 and 13+:
// Quant -> Conv -> BatchNormalization -> Relu -> Pad -> Clip -> MaxPool -> Upsample/Resize -> Dropout
// -> Flatten -> Gemm -> Reshape -> Softmax (axis 1 of a rank-3 tensor, so flattening matters).
io::ModelBuilder cnn_at(int64_t v) {
  io::ModelBuilder b(v);
  b.import(kQ, 1);
  b.input("x", DType::kFloat, {1, 2, 6, 6}).output("y", DType::kFloat);
  b.initializer("qs", f32s(0.125f)).initializer("qz", f32s(0)).initializer("qb", f32s(4));
  b.node("Quant", {"x", "qs", "qz", "qb"}, {"xq"}, kQ).attr("signed", 1).attr("narrow", 0).attr("rounding_mode", "ROUND");
  b.initializer("w", random_tensor(DType::kFloat, {3, 2, 3, 3}, 1)).initializer("wb", random_tensor(DType::kFloat, {3}, 2));
  b.node("Conv", {"xq", "w", "wb"}, {"c"}).attr("kernel_shape", std::vector<int64_t>{3, 3}).attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  b.initializer("g", random_tensor(DType::kFloat, {3}, 3)).initializer("beta", random_tensor(DType::kFloat, {3}, 4));
  b.initializer("mean", random_tensor(DType::kFloat, {3}, 5));
  b.initializer("var", make<float>(DType::kFloat, {3}, {0.5f, 1.0f, 2.0f}));
  b.node("BatchNormalization", {"c", "g", "beta", "mean", "var"}, {"bn"}).attr("epsilon", 1e-3f);
  b.node("Relu", {"bn"}, {"r"});
  if (v < 11) {
    b.node("Pad", {"r"}, {"p"}).attr("pads", std::vector<int64_t>{0, 0, 1, 1, 0, 0, 1, 1}).attr("value", 0.5f);
    b.node("Clip", {"p"}, {"cl"}).attr("min", -1.0f).attr("max", 1.5f);
  } else {
    b.initializer("pads", i64({8}, {0, 0, 1, 1, 0, 0, 1, 1})).initializer("pv", f32s(0.5f));
    b.node("Pad", {"r", "pads", "pv"}, {"p"});
    b.initializer("lo", f32s(-1.0f)).initializer("hi", f32s(1.5f));
    b.node("Clip", {"p", "lo", "hi"}, {"cl"});
  }
  b.node("MaxPool", {"cl"}, {"mp"}).attr("kernel_shape", std::vector<int64_t>{2, 2}).attr("strides", std::vector<int64_t>{2, 2});
  if (v < 9) {
    b.node("Upsample", {"mp"}, {"up"}).attr("scales", std::vector<float>{1, 1, 2, 2}).attr("mode", "nearest");
  } else if (v < 10) {
    b.initializer("scales", f32({4}, {1, 1, 2, 2}));
    b.node("Upsample", {"mp", "scales"}, {"up"}).attr("mode", "nearest");
  } else if (v < 11) {
    b.initializer("scales", f32({4}, {1, 1, 2, 2}));
    b.node("Resize", {"mp", "scales"}, {"up"}).attr("mode", "nearest");
  } else {
    b.initializer("roi", Tensor(DType::kFloat, {0})).initializer("scales", f32({4}, {1, 1, 2, 2}));
    b.node("Resize", {"mp", "roi", "scales"}, {"up"}).attr("mode", "nearest");
  }
  b.node("Dropout", {"up"}, {"dr"});
  b.node("Flatten", {"dr"}, {"fl"}).attr("axis", int64_t{1});
  b.initializer("fw", random_tensor(DType::kFloat, {12, 3 * 8 * 8}, 6)).initializer("fb", random_tensor(DType::kFloat, {12}, 7));
  b.node("Gemm", {"fl", "fw", "fb"}, {"gm"}).attr("transB", int64_t{1});
  b.initializer("shape", i64({3}, {1, 3, 4}));
  b.node("Reshape", {"gm", "shape"}, {"rs"});
  b.node("Softmax", {"rs"}, {"y"}).attr("axis", int64_t{1});
  return b;
}

// Heads on a tensor whose shape nobody knows (the input is declared without one): Softmax,
// LogSoftmax and Hardmax at their default axis and at the last axis.
io::ModelBuilder unknown_shape_heads_at(int64_t v) {
  io::ModelBuilder b(v);
  b.input("x", DType::kFloat, {2, 3, 4}).output("a", DType::kFloat).output("l", DType::kFloat).output("h", DType::kFloat);
  b.output("s2", DType::kFloat);
  b.node("Relu", {"x"}, {"r"});
  b.node("Softmax", {"r"}, {"a"});
  b.node("LogSoftmax", {"r"}, {"l"}).attr("axis", int64_t{0});
  b.node("Hardmax", {"r"}, {"h"}).attr("axis", int64_t{2});
  b.node("Softmax", {"r"}, {"s2"}).attr("axis", int64_t{-1});
  return b;
}

// The builder's model with the input's shape removed.
ir::Model without_input_shape(const io::ModelBuilder& b) {
  onnx::ModelProto m = b.proto();
  m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  std::string bytes;
  m.SerializeToString(&bytes);
  return io::load_model_from_bytes(bytes, ".").value();
}

void expect_same_outputs(const ir::Model& a, const ir::Model& b, const Tensor& x, const std::string& what) {
  auto ea = exec::Executor::create(a);
  auto eb = exec::Executor::create(b);
  ASSERT_TRUE(ea.is_ok()) << what << ": " << ea.status().to_string();
  ASSERT_TRUE(eb.is_ok()) << what << ": " << eb.status().to_string();
  auto ra = ea->run({{"x", x}});
  auto rb = eb->run({{"x", x}});
  ASSERT_TRUE(ra.is_ok()) << what << ": " << ra.status().to_string();
  ASSERT_TRUE(rb.is_ok()) << what << ": " << rb.status().to_string();
  ASSERT_EQ(ra->outputs.size(), rb->outputs.size());
  for (size_t k = 0; k < ra->outputs.size(); ++k) {
    ASSERT_EQ(ra->outputs[k].dims(), rb->outputs[k].dims()) << what << " output " << k;
    auto va = values_f32(ra->outputs[k]), vb = values_f32(rb->outputs[k]);
    for (size_t i = 0; i < va.size(); ++i)
      ASSERT_NEAR(va[i], vb[i], 1e-5f * (1 + std::fabs(va[i]))) << what << " output " << k << " element " << i;
  }
}

TEST(UpgradeOpset, EveryOpFamilyFromEveryOpsetKeepsTheNumbers) {
  for (int64_t from = 7; from <= 16; ++from) {
    for (int64_t to : {13, 17, 21}) {  // 21: the library's step to 17, then upgrade-opset's own
      if (to <= from) continue;
      std::string what = "opset " + std::to_string(from) + " -> " + std::to_string(to);
      auto original = cnn_at(from).build();
      ASSERT_TRUE(original.is_ok()) << what << ": " << original.status().to_string();
      auto upgraded = cnn_at(from).build().value();
      auto r = run_passes(upgraded, "upgrade-opset{version=" + std::to_string(to) + "}");
      ASSERT_TRUE(r.is_ok()) << what << ": " << r.status().to_string();
      EXPECT_EQ(upgraded.opset(""), to);
      if (to <= onnxlib::onnx_library_opset()) {
        EXPECT_TRUE(onnxlib::onnx_check_types(upgraded).is_ok()) << what << ": " << onnxlib::onnx_check_types(upgraded).to_string();
      }
      expect_same_outputs(original.value(), upgraded, random_tensor(DType::kFloat, {1, 2, 6, 6}, 11), what);
    }
  }
}

// Every QONNX op under every domain spelling, in a model at an old opset: ONNX's version converter needs
// a schema for each (an op it has none for stopped it with "unordered_map::at"; the differential corpus
// found IntQuant that way), and the upgraded model computes what the original did.
TEST(UpgradeOpset, EveryQonnxOpInEveryDomainSpellingUpgrades) {
  struct OpCase {
    std::string op;
    std::vector<std::string> params;  // initializers after x
  };
  const std::vector<OpCase> ops = {{"Quant", {"s", "z", "b"}},
                                   {"IntQuant", {"s", "z", "b"}},
                                   {"BipolarQuant", {"s"}},
                                   {"Trunc", {"s", "z", "b", "ob"}},
                                   {"FloatQuant", {"s", "e", "m", "eb", "mx"}},
                                   {"MultiThreshold", {"thr"}}};
  for (const std::string& domain : dialect::general_domain_spellings()) {
    for (const OpCase& c : ops) {
      ASSERT_NE(dialect::classify(domain, c.op), dialect::Op::kNone) << c.op;
      for (int64_t from : {7, 9, 11, 12}) {
        std::string what = domain + "::" + c.op + " at opset " + std::to_string(from);
        auto build = [&] {
          io::ModelBuilder b(from);
          b.import(domain, 1);
          b.input("x", DType::kFloat, {1, 4}).output("y", DType::kFloat);
          b.initializer("s", f32s(0.25f)).initializer("z", f32s(0)).initializer("b", f32s(4)).initializer("ob", f32s(3));
          b.initializer("e", f32s(4)).initializer("m", f32s(3)).initializer("eb", f32s(7)).initializer("mx", f32s(448));
          b.initializer("thr", f32({1, 3}, {-0.5f, 0.0f, 0.5f}));
          b.node("Relu", {"x"}, {"r"});
          std::vector<std::string> in = {"r"};
          in.insert(in.end(), c.params.begin(), c.params.end());
          auto n = b.node(c.op, in, {"y"}, domain);
          if (c.op == "MultiThreshold") n.attr("out_dtype", "UINT2");
          return b.build();
        };
        auto original = build();
        ASSERT_TRUE(original.is_ok()) << what << ": " << original.status().to_string();
        auto upgraded = build().value();
        auto r = run_passes(upgraded, "upgrade-opset{version=13}");
        ASSERT_TRUE(r.is_ok()) << what << ": " << r.status().to_string();
        EXPECT_EQ(upgraded.opset(""), 13) << what;
        expect_same_outputs(original.value(), upgraded, random_tensor(DType::kFloat, {1, 4}, 13), what);
      }
    }
  }
}

TEST(UpgradeOpset, SoftmaxFamilyHeadsWithUnknownShapes) {
  for (int64_t from = 7; from <= 12; ++from) {
    std::string what = "opset " + std::to_string(from);
    ir::Model original = without_input_shape(unknown_shape_heads_at(from));
    ir::Model upgraded = without_input_shape(unknown_shape_heads_at(from));
    auto r = run_passes(upgraded, "upgrade-opset{version=13}");
    ASSERT_TRUE(r.is_ok()) << what << ": " << r.status().to_string();
    for (const auto& n : upgraded.graph().nodes()) EXPECT_TRUE(ir::is_default_domain(n->domain())) << n->describe();
    expect_same_outputs(original, upgraded, random_tensor(DType::kFloat, {2, 3, 4}, 12), what);
  }
}

TEST(UpgradeOpset, BatchNormalizationOpset6AndItsUnconvertibleForms) {
  auto bn6 = [](int64_t is_test, int64_t spatial) {
    io::ModelBuilder b(6);
    b.input("x", DType::kFloat, {2, 3}).output("y", DType::kFloat);
    b.initializer("w", random_tensor(DType::kFloat, {3, 3}, 1)).initializer("c", random_tensor(DType::kFloat, {3}, 2));
    b.node("Gemm", {"x", "w", "c"}, {"g"}).attr("broadcast", int64_t{1}).attr("transB", int64_t{1});
    b.node("Unsqueeze", {"g"}, {"u"}).attr("axes", std::vector<int64_t>{2});
    for (const char* n : {"s", "bb", "m"}) b.initializer(n, random_tensor(DType::kFloat, {3}, 3));
    b.initializer("v", make<float>(DType::kFloat, {3}, {1, 2, 3}));
    b.node("BatchNormalization", {"u", "s", "bb", "m", "v"}, {"bn"}).name("the_bn").attr("is_test", is_test).attr("spatial", spatial).attr("epsilon", 1e-5f);
    b.node("Squeeze", {"bn"}, {"sq"}).attr("axes", std::vector<int64_t>{2});
    b.node("Gemm", {"sq", "w", "c"}, {"y"}).attr("broadcast", int64_t{1}).attr("transB", int64_t{1});
    return b;
  };
  auto original = bn6(1, 1).build().value();
  auto upgraded = bn6(1, 1).build().value();
  auto r = run_passes(upgraded, "upgrade-opset{version=13}");
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  expect_same_outputs(original, upgraded, random_tensor(DType::kFloat, {2, 3}, 13), "BatchNormalization 6");
  for (auto [is_test, spatial, needle] : {std::tuple<int64_t, int64_t, const char*>{0, 1, "is_test=0"}, {1, 0, "spatial=0"}}) {
    auto m = bn6(is_test, spatial).build().value();
    auto bad = run_passes(m, "upgrade-opset{version=13}");
    ASSERT_FALSE(bad.is_ok());
    std::string msg = bad.status().to_string();
    EXPECT_EQ(bad.status().code(), Code::kUnsupported);
    EXPECT_NE(msg.find("the_bn"), std::string::npos) << msg;
    EXPECT_NE(msg.find(needle), std::string::npos) << msg;
    EXPECT_NE(msg.find("opset 6 to 13"), std::string::npos) << msg;
  }
}

TEST(UpgradeOpset, OldOpsetSharedModelsConvertWithEveryTarget) {
  int seen = 0;
  for (const auto& model : shared_models()) {
    if (model.parent_path().filename() != "old_opset") continue;
    ++seen;
    for (const char* target : {"qdq", "ngraph", "ascend", "fold"}) {
      fs::path out = fs::temp_directory_path() / ("qonnx_old_opset_" + std::to_string(::getpid()) + ".onnx");
      auto r = run_cli("convert " + model.string() + " --target " + target + " -o " + out.string());
      EXPECT_EQ(r.exit_code, 0) << model << " " << target << "\n" << r.err;
      EXPECT_EQ(r.err.find("Assertion"), std::string::npos) << r.err;
      fs::remove(out);
    }
  }
  if (!shared_models().empty()) {
    EXPECT_GE(seen, 5);
  }
}

// The converter's messages never reach the user raw: a failure names the node, op and opsets.
TEST(UpgradeOpset, ConverterFailuresNameTheNodeNotAnAssertion) {
  // Gemm 6 -> 7 needs the shapes of all three inputs; here C comes from an input of unknown shape.
  io::ModelBuilder b(6);
  b.input("x", DType::kFloat, {2, 3}).input("c", DType::kFloat, {3}).output("y", DType::kFloat);
  b.initializer("w", random_tensor(DType::kFloat, {3, 3}, 1));
  b.node("Gemm", {"x", "w", "c"}, {"y"}).name("the_gemm").attr("broadcast", int64_t{1}).attr("transB", int64_t{1});
  onnx::ModelProto m = b.proto();
  m.mutable_graph()->mutable_input(1)->mutable_type()->mutable_tensor_type()->clear_shape();
  std::string bytes;
  m.SerializeToString(&bytes);
  auto model = io::load_model_from_bytes(bytes, ".").value();
  auto r = run_passes(model, "upgrade-opset{version=13}");
  ASSERT_FALSE(r.is_ok());
  std::string msg = r.status().to_string();
  EXPECT_EQ(msg.find("Assertion"), std::string::npos) << msg;
  EXPECT_EQ(msg.find(".h:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("the_gemm"), std::string::npos) << msg;
  EXPECT_NE(msg.find("from opset 6 to 13"), std::string::npos) << msg;
}

}  // namespace
}  // namespace qonnx::test
