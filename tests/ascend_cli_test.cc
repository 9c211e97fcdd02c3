// `qonnx-cc trans-quant-param`: words, decoding, JSON, exit codes.
#include <gtest/gtest.h>

#include "support/cli.h"

namespace qonnx::test {
namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(AscendCli, WorkedWords) {
  auto r = run_cli("trans-quant-param --scale 1.0,0.3");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "0: 0x40003F800000 70369809530880 scale=1 offset=0 signed=1\n"
            "1: 0x40003E998000 70369794424832 scale=0.299804688 offset=0 signed=1\n");
  auto rounded = run_cli("trans-quant-param --scale 0.3 --round-mode 1");
  EXPECT_EQ(rounded.exit_code, 0) << rounded.err;
  EXPECT_TRUE(contains(rounded.out, "0x40003E99A000")) << rounded.out;
  auto offset = run_cli("trans-quant-param --scale 1 --offset=-1.5");
  EXPECT_EQ(offset.exit_code, 0) << offset.err;
  EXPECT_EQ(offset.out, "0: 0x7FC03F800000 140463675801600 scale=1 offset=-2 signed=1\n");
}

TEST(AscendCli, LengthOneBroadcasts) {
  auto r = run_cli("trans-quant-param --scale 0.5 --offset 1,2,300");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "0: ") && contains(r.out, "1: ") && contains(r.out, "2: ")) << r.out;
  EXPECT_TRUE(contains(r.out, "offset=255")) << r.out;
}

TEST(AscendCli, Json) {
  auto r = run_cli("trans-quant-param --scale 0.3 --offset=-1.5 --round-mode 1 --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "\"round_mode\": 1")) << r.out;
  EXPECT_TRUE(contains(r.out, "\"hex\": \"0x7FC03E99A000\"")) << r.out;
  EXPECT_TRUE(contains(r.out, "\"decimal\": 140463660703744")) << r.out;
  EXPECT_TRUE(contains(r.out, "\"scale\": 0.300048828125")) << r.out;
  EXPECT_TRUE(contains(r.out, "\"offset\": -2")) << r.out;
  EXPECT_TRUE(contains(r.out, "\"signed\": true")) << r.out;
}

TEST(AscendCli, Errors) {
  struct Case {
    const char* args;
    int exit_code;
    const char* message;
  };
  const Case cases[] = {
      {"trans-quant-param --scale nan", 1, "scale must be finite"},
      {"trans-quant-param --scale 1 --offset inf", 1, "offset must be finite"},
      {"trans-quant-param --scale abc", 2, "--scale"},
      {"trans-quant-param --scale 1,2 --offset 1,2,3", 2, "lengths"},
      {"trans-quant-param --scale 1 --round-mode 2", 2, "--round-mode"},
      {"trans-quant-param", 2, "--scale"},
  };
  for (const auto& c : cases) {
    auto r = run_cli(c.args);
    EXPECT_EQ(r.exit_code, c.exit_code) << c.args << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, c.message)) << c.args << "\n" << r.err;
    EXPECT_EQ(r.out, "") << c.args;
  }
}

}  // namespace
}  // namespace qonnx::test
