// Model I/O: lossless, deterministic round trips; external data inside the model folder only.
#include <filesystem>
#include <fstream>

#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "qonnx/io/model_builder.h"
#include "qonnx/io/model_io.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {
namespace fs = std::filesystem;

std::vector<fs::path> find_models(const fs::path& root, const std::string& file_name = "") {
  std::vector<fs::path> out;
  if (!fs::is_directory(root)) return out;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file() && e.path().extension() == ".onnx" && (file_name.empty() || e.path().filename() == file_name))
      out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// Loads, serializes twice, and compares with the original protobuf message.
void expect_lossless(const fs::path& path) {
  auto bytes = io::read_file(path);
  ASSERT_TRUE(bytes.is_ok());
  onnx::ModelProto original;
  ASSERT_TRUE(original.ParseFromString(bytes.value())) << path;
  auto model = io::load_model(path);
  ASSERT_TRUE(model.is_ok()) << path << ": " << model.status().to_string();
  auto first = io::serialize_model(model.value());
  auto second = io::serialize_model(model.value());
  ASSERT_TRUE(first.is_ok() && second.is_ok());
  EXPECT_EQ(first.value(), second.value()) << path << ": two saves differ";
  onnx::ModelProto round_tripped;
  ASSERT_TRUE(round_tripped.ParseFromString(first.value()));
  std::string diff;
  google::protobuf::util::MessageDifferencer differ;
  differ.ReportDifferencesToString(&diff);
  EXPECT_TRUE(differ.Compare(original, round_tripped)) << path << ":\n" << diff.substr(0, 2000);
}

TEST(ModelIo, SharedQonnxModelsRoundTripLosslessly) {
  auto models = find_models(QONNX_SHARED_MODELS);
  if (models.empty()) GTEST_SKIP() << "no models under " << QONNX_SHARED_MODELS << " (../shared absent)";
  for (const auto& m : models) expect_lossless(m);
  std::printf("round-tripped %zu shared models\n", models.size());
}

TEST(ModelIo, OnnxNodeTestModelsRoundTripLosslessly) {
  auto models = find_models(fs::path(QONNX_ONNX_TESTDATA) / "node", "model.onnx");
  ASSERT_GE(models.size(), 900u) << "libonnx-testdata missing?";
  for (const auto& m : models) expect_lossless(m);
  std::printf("round-tripped %zu node models\n", models.size());
}

TEST(ModelIo, AnnotationsMetadataAndDocStringsSurviveSave) {
  io::ModelBuilder b(13);
  b.import("qonnx.custom_op.general", 1);
  b.input("x", DType::kFloat, {1, 4}).output("y", DType::kFloat, {1, 4});
  b.initializer("s", f32s(0.5f)).initializer("z", f32s(0)).initializer("bw", f32s(4));
  b.node("Quant", {"x", "s", "z", "bw"}, {"y"}, "qonnx.custom_op.general").attr("signed", 1);
  b.annotate("y", "INT4").metadata("author", "test");
  auto model = b.build();
  ASSERT_TRUE(model.is_ok());
  fs::path dir = fs::temp_directory_path() / "qonnx_io_meta";
  fs::create_directories(dir);
  ASSERT_TRUE(io::save_model(model.value(), dir / "m.onnx").is_ok());
  onnx::ModelProto saved;
  std::ifstream in(dir / "m.onnx", std::ios::binary);
  ASSERT_TRUE(saved.ParseFromIstream(&in));
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(saved, b.proto()));
  ASSERT_EQ(saved.graph().quantization_annotation_size(), 1);
  EXPECT_EQ(saved.graph().quantization_annotation(0).quant_parameter_tensor_names(0).value(), "INT4");
  // No temp files left next to the output.
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
  fs::remove_all(dir);
}

class ExternalData : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("qonnx_ext_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "model");
    io::ModelBuilder b(13);
    b.input("x", DType::kFloat, {2, 512}).output("y", DType::kFloat, {2, 512});
    std::vector<float> w(1024);
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i) * 0.5f;
    b.initializer("w", f32({2, 512}, w));
    b.node("Add", {"x", "w"}, {"y"});
    auto m = b.build();
    ASSERT_TRUE(m.is_ok());
    io::SaveOptions opts;
    opts.external_data = io::ExternalData::kAlways;
    ASSERT_TRUE(io::save_model(m.value(), model_path(), opts).is_ok());
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path model_path() const { return dir_ / "model" / "m.onnx"; }

  // Rewrites the saved model's external_data entry `key` to `value`.
  void set_external(const std::string& key, const std::string& value) {
    onnx::ModelProto p;
    std::ifstream in(model_path(), std::ios::binary);
    ASSERT_TRUE(p.ParseFromIstream(&in));
    for (auto& kv : *p.mutable_graph()->mutable_initializer(0)->mutable_external_data())
      if (kv.key() == key) kv.set_value(value);
    std::ofstream out(model_path(), std::ios::binary | std::ios::trunc);
    p.SerializeToOstream(&out);
  }

  fs::path dir_;
};

TEST_F(ExternalData, LoadsAndRunsAlignedSlices) {
  ASSERT_TRUE(fs::exists(dir_ / "model" / "m.onnx.data"));
  auto m = io::load_model(model_path());
  ASSERT_TRUE(m.is_ok()) << m.status().to_string();
  auto w = m->graph().initializer_tensor(m->graph().find_value("w"));
  ASSERT_TRUE(w.is_ok());
  EXPECT_EQ(w->data<float>()[1023], 511.5f);
  // Saving inline gives the same tensor data.
  io::SaveOptions inline_opts;
  inline_opts.external_data = io::ExternalData::kNever;
  ASSERT_TRUE(io::save_model(m.value(), dir_ / "inline.onnx", inline_opts).is_ok());
  auto again = io::load_model(dir_ / "inline.onnx");
  ASSERT_TRUE(again.is_ok());
  EXPECT_TRUE(again->graph().initializer_tensor(again->graph().find_value("w"))->identical(w.value()));
}

TEST_F(ExternalData, RejectsLocationsOutsideTheModelFolder) {
  std::ofstream(dir_ / "outside.bin", std::ios::binary) << std::string(8192, '\0');
  fs::create_symlink(dir_ / "outside.bin", dir_ / "model" / "link.bin");
  const std::pair<std::string, std::string> cases[] = {
      {"../outside.bin", "escapes the model folder"},
      {(dir_ / "outside.bin").string(), "is absolute"},
      {"link.bin", "resolves outside the model folder"},
      {"missing.bin", "does not exist"},
  };
  for (const auto& [location, needle] : cases) {
    set_external("location", location);
    auto m = io::load_model(model_path());
    ASSERT_FALSE(m.is_ok()) << location;
    EXPECT_EQ(m.status().code(), Code::kInvalidModel);
    EXPECT_NE(m.status().to_string().find(needle), std::string::npos) << m.status().to_string();
    EXPECT_NE(m.status().to_string().find("initializer 'w'"), std::string::npos);
  }
}

TEST_F(ExternalData, RejectsSlicesPastTheEnd) {
  set_external("offset", "4096");  // file holds 4096 bytes at offset 0: 4096 + 4096 is past the end
  auto m = io::load_model(model_path());
  ASSERT_FALSE(m.is_ok());
  EXPECT_NE(m.status().to_string().find("past the end"), std::string::npos) << m.status().to_string();
  set_external("offset", "18446744073709551615");
  m = io::load_model(model_path());
  ASSERT_FALSE(m.is_ok());
  EXPECT_EQ(m.status().code(), Code::kInvalidModel);
}

TEST(ModelIo, BadFiles) {
  fs::path dir = fs::temp_directory_path() / "qonnx_bad_files";
  fs::create_directories(dir);
  auto missing = io::load_model(dir / "nope.onnx");
  EXPECT_EQ(missing.status().code(), Code::kCannotRead);
  EXPECT_EQ(io::load_model(dir).status().code(), Code::kCannotRead);
  std::ofstream(dir / "empty.onnx").close();
  EXPECT_EQ(io::load_model(dir / "empty.onnx").status().code(), Code::kInvalidModel);
  std::ofstream(dir / "text.onnx") << "this is not a protobuf file at all";
  EXPECT_EQ(io::load_model(dir / "text.onnx").status().code(), Code::kInvalidModel);
  // A real model cut in half.
  io::ModelBuilder b(13);
  b.input("x", DType::kFloat, {4}).output("y", DType::kFloat, {4});
  b.initializer("w", f32({4}, {1, 2, 3, 4}));
  b.node("Add", {"x", "w"}, {"y"});
  std::string full = b.serialize();
  std::ofstream(dir / "cut.onnx", std::ios::binary) << full.substr(0, full.size() / 2);
  auto cut = io::load_model(dir / "cut.onnx");
  ASSERT_FALSE(cut.is_ok());
  EXPECT_EQ(cut.status().code(), Code::kInvalidModel);
  EXPECT_NE(cut.status().to_string().find("cut.onnx"), std::string::npos);
  fs::remove_all(dir);
}

TEST(ModelIo, UndefinedAndDuplicateNamesAreInvalid) {
  io::ModelBuilder undefined(13);
  undefined.input("x", DType::kFloat, {4}).output("y", DType::kFloat, {4});
  undefined.node("Add", {"x", "nowhere"}, {"y"});
  auto m = undefined.build();
  ASSERT_FALSE(m.is_ok());
  EXPECT_NE(m.status().to_string().find("'nowhere' is not defined"), std::string::npos);

  io::ModelBuilder dup(13);
  dup.input("x", DType::kFloat, {4}).output("y", DType::kFloat, {4});
  dup.node("Relu", {"x"}, {"y"});
  dup.node("Relu", {"x"}, {"y"});
  auto d = dup.build();
  ASSERT_FALSE(d.is_ok());
  EXPECT_NE(d.status().to_string().find("already defined"), std::string::npos);
}

}  // namespace
}  // namespace qonnx::test
