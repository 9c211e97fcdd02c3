// Golden pass tests: each tests/golden/NAME.onnxtxt holds a model in ONNX text syntax with its pipeline
// on a first line `# pipeline: ...`; the pipeline's output, printed as ONNX text (initializers of up to
// 64 elements with their values), must equal tests/golden/NAME.expected.
// After an intended change, regenerate every expected file with `make update-golden` and review the diff.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include <gtest/gtest.h>

#include "qonnx/io/model_io.h"
#include "qonnx/io/model_text.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {
namespace fs = std::filesystem;

constexpr int64_t kInlineElements = 64;

std::vector<fs::path> golden_cases() {
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(fs::path(QONNX_SOURCE_DIR) / "tests" / "golden"))
    if (e.path().extension() == ".onnxtxt") cases.push_back(e.path());
  std::sort(cases.begin(), cases.end());
  return cases;
}

// The first line that differs, with both versions, for a readable failure.
std::string first_difference(const std::string& expected, const std::string& actual) {
  std::istringstream e(expected), a(actual);
  std::string le, la;
  for (int line = 1;; ++line) {
    bool more_e = static_cast<bool>(std::getline(e, le)), more_a = static_cast<bool>(std::getline(a, la));
    if (!more_e && !more_a) return "identical";
    if (!more_e || !more_a || le != la)
      return "line " + std::to_string(line) + ":\n  expected: " + (more_e ? le : "<end>") + "\n  actual:   " + (more_a ? la : "<end>");
  }
}

TEST(Golden, PassOutputsMatchExpectedText) {
  const bool update = std::getenv("QONNX_UPDATE_GOLDEN") != nullptr;
  auto cases = golden_cases();
  ASSERT_FALSE(cases.empty());
  int passed = 0, failed = 0, updated = 0;
  for (const auto& path : cases) {
    SCOPED_TRACE(path.filename().string());
    std::string text = io::read_file(path).value();
    const std::string marker = "# pipeline: ";
    ASSERT_EQ(text.rfind(marker, 0), 0u) << "the first line must be '# pipeline: ...'";
    std::string pipeline = text.substr(marker.size(), text.find('\n') - marker.size());
    auto model = io::load_model_from_text(text.substr(text.find('\n') + 1), path.parent_path());
    ASSERT_TRUE(model.is_ok()) << model.status().to_string();
    auto ran = run_passes(model.value(), pipeline);
    ASSERT_TRUE(ran.is_ok()) << ran.status().to_string();
    std::string actual = "# pipeline: " + pipeline + "\n" + io::to_onnx_text(model.value(), kInlineElements) + "\n";
    fs::path expected_path = fs::path(path).replace_extension(".expected");
    auto expected = io::read_file(expected_path);
    if (update) {
      if (!expected.is_ok() || expected.value() != actual) {
        ASSERT_TRUE(io::write_file_atomic(expected_path, actual).is_ok());
        ++updated;
      }
      continue;
    }
    if (expected.is_ok() && expected.value() == actual) {
      ++passed;
      continue;
    }
    ++failed;
    ADD_FAILURE() << (expected.is_ok() ? first_difference(expected.value(), actual) : "no " + expected_path.string())
                  << "\nactual output:\n" << actual << "\n(regenerate with `make update-golden` and review the diff)";
  }
  std::printf("golden: %d passed, %d failed, %d updated\n", passed, failed, updated);
}

}  // namespace
}  // namespace qonnx::test
