// The QONNX dialect module: every domain spelling names the same ops, and kernels, schemas and passes
// agree with it (a spelling known to one and not the others was a bug: bare `finn` Quant had no kernel).
#include <gtest/gtest.h>
#include <onnx/defs/schema.h>

#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/exec/kernel.h"
#include "qonnx/schemas/schemas.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {

using dialect::Op;

TEST(Dialect, ClassifiesEverySpelling) {
  for (const std::string& d : dialect::general_domain_spellings()) {
    EXPECT_EQ(dialect::classify(d, "Quant"), Op::kQuant) << d;
    EXPECT_EQ(dialect::classify(d, "IntQuant"), Op::kQuant) << d;
    EXPECT_EQ(dialect::classify(d, "BipolarQuant"), Op::kBipolarQuant) << d;
    EXPECT_EQ(dialect::classify(d, "Trunc"), Op::kTrunc) << d;
    EXPECT_EQ(dialect::classify(d, "FloatQuant"), Op::kFloatQuant) << d;
    EXPECT_EQ(dialect::classify(d, "MultiThreshold"), Op::kMultiThreshold) << d;
    EXPECT_EQ(dialect::classify(d, "Conv"), Op::kNone) << d;
  }
  EXPECT_EQ(dialect::classify("finn", "Quant"), Op::kQuant);
  // 2021 exports: the quantizers in the default domain, under either spelling of it.
  EXPECT_EQ(dialect::classify("", "Quant"), Op::kQuant);
  EXPECT_EQ(dialect::classify("ai.onnx", "BipolarQuant"), Op::kBipolarQuant);
  EXPECT_EQ(dialect::classify("", "Trunc"), Op::kTrunc);
  EXPECT_EQ(dialect::classify("", "MultiThreshold"), Op::kNone);
  EXPECT_EQ(dialect::classify("", "Conv"), Op::kNone);
  EXPECT_EQ(dialect::classify("com.example", "Quant"), Op::kNone);
  EXPECT_EQ(dialect::classify(dialect::kChannelsLastDomain, "Conv"), Op::kChannelsLastConv);
  EXPECT_EQ(dialect::classify(dialect::kChannelsLastDomain, "Quant"), Op::kNone);
  EXPECT_TRUE(dialect::is_quantizer(Op::kFloatQuant));
  EXPECT_FALSE(dialect::is_quantizer(Op::kMultiThreshold));
}

// Every op the dialect names has a kernel and a schema in every spelling it is allowed in.
TEST(Dialect, KernelsAndSchemasCoverEverySpelling) {
  const auto& registry = exec::KernelRegistry::global();
  schemas::register_qonnx_schemas();
  std::vector<std::string> domains = dialect::general_domain_spellings();
  domains.push_back("");
  for (const std::string& d : domains)
    for (const std::string& op : dialect::general_op_types()) {
      if (dialect::classify(d, op) == Op::kNone) continue;
      EXPECT_NE(registry.find(d, op, 1), nullptr) << d << "::" << op;
      if (op == "FloatQuant" || op == "IntQuant") continue;  // no ONNX schema: inference stops at them
      EXPECT_NE(onnx::OpSchemaRegistry::Schema(op, 1, d), nullptr) << d << "::" << op;
    }
}

TEST(Dialect, BareFinnDomainQuantRuns) {
  NodeCase c;
  c.op = "Quant";
  c.domain = "finn";
  c.inputs = {f32({3}, {0.3f, -0.6f, 2.0f}), f32s(0.5f), f32s(0), f32s(2)};
  auto r = run_node(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values_f32(r.value()[0]), (std::vector<float>{0.5f, -0.5f, 0.5f}));
}

}  // namespace
}  // namespace qonnx::test
