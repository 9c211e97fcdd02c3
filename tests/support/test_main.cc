// The test binary's main: explicit registration first, as the CLI does.
#include <gtest/gtest.h>

#include "qonnx/register_all.h"

int main(int argc, char** argv) {
  qonnx::register_all();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
