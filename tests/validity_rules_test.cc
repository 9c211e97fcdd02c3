// One set of validity rules (io::check_model_rules) for the loader, the pass verifier and the savers,
// and the library and the CLI agree on them (issue 27): for every opset-import defect and every
// target, a model the library's pipeline accepts is written and loads again, and the CLI accepts it
// too; a model the loader refuses is refused by the CLI with exit 5.
#include <fstream>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "qonnx/io/model_builder.h"
#include "qonnx/io/model_io.h"
#include "qonnx/pass/pass.h"
#include "qonnx/targets/target.h"
#include "support/cli.h"
#include "support/temp_dir.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {

constexpr const char* kQonnxDomain = "qonnx.custom_op.general";

// A QONNX graph: Quant on the input, MultiThreshold, and (optionally) a standard Relu.
onnx::ModelProto qonnx_graph(bool with_standard_op) {
  io::ModelBuilder b(13);
  b.input("x", DType::kFloat, {1, 3});
  b.initializer("s", f32s(0.25f)).initializer("z", f32s(0.f)).initializer("bw", f32s(4.f));
  b.initializer("t", f32({3, 3}, {-0.5f, 0.f, 0.5f, -0.5f, 0.f, 0.5f, -0.5f, 0.f, 0.5f}));
  b.node("Quant", {"x", "s", "z", "bw"}, {"q"}, kQonnxDomain).attr("signed", 1).attr("narrow", 0).attr("rounding_mode", "ROUND");
  b.node("MultiThreshold", {"q", "t"}, {with_standard_op ? "m" : "y"}, kQonnxDomain).attr("out_dtype", "UINT2");
  if (with_standard_op) b.node("Relu", {"m"}, {"y"});
  b.output("y", DType::kFloat, {1, 3});
  return b.proto();
}

struct ImportCase {
  std::string name;
  bool with_standard_op;
  std::vector<std::pair<std::string, int64_t>> imports;  // replaces the builder's
};

// Every way the imports can miss, misspell or duplicate the domains the nodes use.
std::vector<ImportCase> import_cases() {
  std::vector<ImportCase> cases;
  for (bool standard : {false, true}) {
    const std::string tag = standard ? "_with_relu" : "";
    cases.push_back({"misspelled_custom_domain_only" + tag, standard, {{"qonjx.custom_op.general", 1}}});
    cases.push_back({"default_and_misspelled" + tag, standard, {{"", 13}, {"qonjx.custom_op.general", 1}}});
    cases.push_back({"custom_domain_missing" + tag, standard, {{"", 13}}});
    cases.push_back({"custom_domain_only" + tag, standard, {{kQonnxDomain, 1}}});
    cases.push_back({"all_present" + tag, standard, {{"", 13}, {kQonnxDomain, 1}}});
    cases.push_back({"duplicate_default" + tag, standard, {{"", 13}, {"", 13}, {kQonnxDomain, 1}}});
    cases.push_back({"no_imports" + tag, standard, {}});
  }
  return cases;
}

std::string with_imports(const ImportCase& c) {
  onnx::ModelProto m = qonnx_graph(c.with_standard_op);
  m.clear_opset_import();
  for (const auto& [domain, version] : c.imports) {
    auto* op = m.add_opset_import();
    op->set_domain(domain);
    op->set_version(version);
  }
  return m.SerializeAsString();
}

class ValidityRules : public TempDirTest {};

TEST_F(ValidityRules, LibraryPipelineSaverAndCliAgreeForEveryImportDefectAndTarget) {
  const auto targets = targets::TargetRegistry::global().names();
  int accepted = 0, refused_at_load = 0, refused_by_pipeline = 0;
  for (const ImportCase& c : import_cases()) {
    const std::string bytes = with_imports(c);
    const std::string in = path(c.name + ".onnx");
    std::ofstream(in, std::ios::binary) << bytes;
    for (const std::string& target : targets) {
      SCOPED_TRACE(c.name + " --target " + target);
      const std::string out = path(c.name + "." + target + ".out.onnx");
      const CliResult cli = run_cli("convert " + in + " --target " + target + " -o " + out);
      auto model = io::load_model_from_bytes(bytes, dir_);
      if (!model.is_ok()) {
        EXPECT_EQ(model.status().code(), Code::kInvalidModel) << model.status().to_string();
        EXPECT_EQ(cli.exit_code, 5) << cli.err;
        EXPECT_FALSE(std::filesystem::exists(out));
        ++refused_at_load;
        continue;
      }
      auto pipeline = pass::parse_pipeline(targets::pipeline_text(target).value());
      ASSERT_TRUE(pipeline.is_ok());
      pass::PassContext ctx;
      auto run = pass::run_pipeline(model.value(), pipeline.value(), ctx);
      if (!run.is_ok()) {
        // A pass may refuse a pattern (exit 6 and the like), never break the rules (a verifier failure).
        EXPECT_NE(run.status().code(), Code::kFailed) << run.status().to_string();
        EXPECT_NE(cli.exit_code, 0) << "the CLI accepted what the library's pipeline refused: " << run.status().to_string();
        ++refused_by_pipeline;
        continue;
      }
      auto saved = io::serialize_model(model.value());
      ASSERT_TRUE(saved.is_ok()) << "the saver refuses what the pipeline accepted: " << saved.status().to_string();
      auto again = io::load_model_from_bytes(saved.value(), dir_);
      EXPECT_TRUE(again.is_ok()) << "a converted model does not load: " << again.status().to_string();
      EXPECT_EQ(cli.exit_code, 0) << "the library accepted what the CLI refuses: " << cli.err;
      if (cli.exit_code == 0) {
        EXPECT_TRUE(io::load_model(out).is_ok()) << "the CLI's output does not load";
      }
      ++accepted;
    }
  }
  std::printf("import defects x targets: %d converted and reloaded, %d refused at load (exit 5), %d refused by a pass\n",
              accepted, refused_at_load, refused_by_pipeline);
  EXPECT_GT(accepted, 0);
  EXPECT_GT(refused_at_load, 0);
}

TEST(ValidityRulesSaver, RefusesToWriteAModelTheLoaderWouldRefuse) {
  // Standard ops without the default domain's import: a pass could leave this; the saver must not write it.
  auto model = io::load_model_from_bytes(with_imports({"all", true, {{"", 13}, {kQonnxDomain, 1}}}), ".");
  ASSERT_TRUE(model.is_ok()) << model.status().to_string();
  model->remove_import("");
  auto saved = io::serialize_model(model.value());
  ASSERT_FALSE(saved.is_ok());
  EXPECT_EQ(saved.status().code(), Code::kInvalidModel);
  EXPECT_NE(saved.status().to_string().find("refusing to write an invalid model"), std::string::npos) << saved.status().to_string();
  // The verifier applies the same rule, so a pass leaving this state fails at once, naming itself.
  EXPECT_FALSE(pass::verify_graph(model.value()).is_ok());
}

}  // namespace
}  // namespace qonnx::test
