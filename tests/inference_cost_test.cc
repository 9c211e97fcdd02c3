// `cost`: qonnx's inference cost, to the unit. TFC_2W2A is one of the three public models of qonnx's own
// test file (tests/analysis/test_inference_cost.py) and among the shared models: its expected totals are
// qonnx's. FINN-CNV_W2A2 and RadioML_VGG10 are not available offline: the graphs below use the same
// idioms (8-bit scaled input into 2-bit weights, 2-bit activations, grouped conv, 8-bit scaled Conv1d and
// Gemm with transB) and their expected numbers are worked out by hand from qonnx's rules, in the comments.
#include <gtest/gtest.h>

#include "qonnx/analysis/inference_cost.h"
#include "qonnx/io/model_builder.h"
#include "qonnx/io/model_io.h"
#include "qonnx/ir/finn_datatype.h"
#include "support/cli.h"
#include "support/temp_dir.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {

const char* kQ = "qonnx.custom_op.general";

Result<analysis::InferenceCost> cost_of(ir::Model& m, bool discount = true, bool clip_aware = false, bool qonnx_only = false) {
  QONNX_RETURN_IF_ERROR(run_passes(m, analysis::cost_preprocess_pipeline(clip_aware)).status());
  return analysis::inference_cost(m, {discount, qonnx_only});
}

std::string total_json(ir::Model& m, bool discount) {
  auto c = cost_of(m, discount);
  EXPECT_TRUE(c.is_ok()) << c.status().to_string();
  return c.is_ok() ? analysis::cost_json(c.value(), false, false) : "";
}

// qonnx's expected dicts for FINN-TFC_W2A2, as Python's json.dump(sort_keys=True, indent=2) writes them.
const char* kTfcDense = R"json({
  "total_cost": {
    "discount_sparsity": false,
    "mem_o_INT32": 202.0,
    "mem_w_INT2": 59008.0,
    "op_mac_INT2_INT2": 59008.0,
    "total_bops": 236032.0,
    "total_macs": 59008.0,
    "total_mem_o_bits": 6464.0,
    "total_mem_o_elems": 202.0,
    "total_mem_w_bits": 118016.0,
    "total_mem_w_elems": 59008.0,
    "unsupported": "set()"
  }
}
)json";
const char* kTfcSparse = R"json({
  "total_cost": {
    "discount_sparsity": true,
    "mem_o_INT32": 202.0,
    "mem_w_INT2": 22355.0,
    "op_mac_INT2_INT2": 22355.0,
    "total_bops": 89420.0,
    "total_macs": 22355.0,
    "total_mem_o_bits": 6464.0,
    "total_mem_o_elems": 202.0,
    "total_mem_w_bits": 44710.0,
    "total_mem_w_elems": 22355.0,
    "unsupported": "set()"
  }
}
)json";

std::string tfc_path() { return std::string(QONNX_SHARED_MODELS) + "/qonnx_model_zoo/TFC_2W2A.onnx"; }

TEST(InferenceCost, TfcW2A2MatchesQonnxTestFile) {
  auto loaded = io::load_model(tfc_path());
  if (!loaded.is_ok()) GTEST_SKIP() << "shared model absent: " << tfc_path();
  EXPECT_EQ(total_json(loaded.value(), false), kTfcDense);
  auto again = io::load_model(tfc_path());
  EXPECT_EQ(total_json(again.value(), true), kTfcSparse);
}

class CostCli : public TempDirTest {};

TEST_F(CostCli, TfcW2A2AfterCleanupIsUnchanged) {
  // qonnx's test cleans the model first (download_model(do_cleanup=True)).
  auto m = io::load_model(tfc_path());
  if (!m.is_ok()) GTEST_SKIP() << "shared model absent";
  const std::string clean = path("tfc_clean.onnx");
  ASSERT_EQ(run_cli("cleanup " + tfc_path() + " -o " + clean).exit_code, 0);
  auto r = run_cli("cost " + clean + " --no-discount-sparsity");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, kTfcDense);
  r = run_cli("cost " + clean);
  EXPECT_EQ(r.out, kTfcSparse);
}

// Weights as integers -2, -1, 0, 1 repeating: a 2-bit signed Quant at unit scale keeps them, and a
// quarter of them is zero (density 0.75, exact in binary).
Tensor int2_weights(Dims dims) {
  Tensor t(DType::kFloat, dims);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(i % 4 - 2);
  return t;
}

// CNV-like: x -> Quant(8 bit, scale 0.5) -> Conv(3->4, 3x3, 2-bit weights) -> Quant(2 bit, unit)
//   -> Conv(4->2, 1x1, group 2) -> Flatten -> Quant(2 bit) -> MatMul(32x3, 2-bit weights).
io::ModelBuilder cnv_like() {
  io::ModelBuilder b(13);
  b.import(kQ, 1);
  b.input("x", DType::kFloat, {1, 3, 6, 6}).output("y", DType::kFloat, {1, 3});
  b.initializer("half", f32s(0.5f)).initializer("one", f32s(1)).initializer("zero", f32s(0));
  b.initializer("b8", f32s(8)).initializer("b2", f32s(2));
  b.initializer("w1", int2_weights({4, 3, 3, 3})).initializer("w2", int2_weights({2, 2, 1, 1}));
  b.initializer("w3", int2_weights({32, 3}));
  b.node("Quant", {"x", "half", "zero", "b8"}, {"xq"}, kQ).attr("signed", 1);
  b.node("Quant", {"w1", "one", "zero", "b2"}, {"w1q"}, kQ).attr("signed", 1);
  b.node("Conv", {"xq", "w1q"}, {"c1"}).attr("kernel_shape", std::vector<int64_t>{3, 3});
  b.node("Quant", {"c1", "one", "zero", "b2"}, {"a1"}, kQ).attr("signed", 1);
  b.node("Quant", {"w2", "one", "zero", "b2"}, {"w2q"}, kQ).attr("signed", 1);
  b.node("Conv", {"a1", "w2q"}, {"c2"}).attr("kernel_shape", std::vector<int64_t>{1, 1}).attr("group", 2);
  b.node("Flatten", {"c2"}, {"f"});
  b.node("Quant", {"f", "one", "zero", "b2"}, {"fq"}, kQ).attr("signed", 1);
  b.node("Quant", {"w3", "one", "zero", "b2"}, {"w3q"}, kQ).attr("signed", 1);
  b.node("MatMul", {"fq", "w3q"}, {"y"});
  return b;
}

TEST(InferenceCost, CnvIdiomsByHand) {
  // Conv1: 1 x 4 x 3 x 9 x (4x4 pixels) = 1728 MACs, SCALEDINT<8> x INT2 -> SCALEDINT<32>, 108 weights, 64 outputs.
  // Conv2: 1 x (2/2) x 4 x 1 x 16 = 64 MACs, INT2 x INT2 -> INT32, 4 weights, 32 outputs.
  // MatMul: 32 x (1x3) = 96 MACs, 96 weights, 3 outputs (INT32).
  // BOPs: 8*2*1728 + 2*2*(64+96) = 28288; output bits 32*64 + 32*35 = 3168.
  const char* dense = R"json({
  "total_cost": {
    "discount_sparsity": false,
    "mem_o_INT32": 35.0,
    "mem_o_SCALEDINT<32>": 64.0,
    "mem_w_INT2": 208.0,
    "op_mac_INT2_INT2": 160.0,
    "op_mac_SCALEDINT<8>_INT2": 1728.0,
    "total_bops": 28288.0,
    "total_macs": 1888.0,
    "total_mem_o_bits": 3168.0,
    "total_mem_o_elems": 99.0,
    "total_mem_w_bits": 416.0,
    "total_mem_w_elems": 208.0,
    "unsupported": "set()"
  }
}
)json";
  auto m = cnv_like().build();
  ASSERT_TRUE(m.is_ok());
  EXPECT_EQ(total_json(m.value(), false), dense);
  // Sparse: every weight tensor has density 0.75: 1296 + (48 + 72) MACs, 81 + 3 + 72 weights;
  // BOPs 16*1296 + 4*120 = 21216.
  auto s = cnv_like().build();
  auto c = cost_of(s.value(), true);
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  const analysis::CostTotals t = analysis::cost_totals(c->total);
  EXPECT_EQ(t.macs, 1416.0);
  EXPECT_EQ(t.bops, 21216.0);
  EXPECT_EQ(t.mem_w_elems, 156.0);
  EXPECT_EQ(t.mem_w_bits, 312.0);
  EXPECT_EQ(t.mem_o_elems, 99.0);
}

// RadioML-like: x[1,2,16] -> Quant(8 bit, scale 0.25) -> Conv1d(2->4, k3, pad 1, 8-bit weights at scale
// 0.5) -> Quant(8 bit) -> Flatten -> Gemm(transB, W[5,64] 8 bit at scale 0.5).
// Weights -1, 0, 0.1, 0.5 repeating: 0.1 quantizes to 0 at scale 0.5, so half are zero.
io::ModelBuilder radioml_like() {
  io::ModelBuilder b(13);
  b.import(kQ, 1);
  b.input("x", DType::kFloat, {1, 2, 16}).output("y", DType::kFloat, {1, 5});
  b.initializer("quarter", f32s(0.25f)).initializer("half", f32s(0.5f)).initializer("zero", f32s(0)).initializer("b8", f32s(8));
  auto weights = [](Dims dims) {
    Tensor t(DType::kFloat, dims);
    const float pattern[] = {-1.0f, 0.0f, 0.1f, 0.5f};
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = pattern[i % 4];
    return t;
  };
  b.initializer("w1", weights({4, 2, 3})).initializer("w2", weights({5, 64}));
  b.node("Quant", {"x", "quarter", "zero", "b8"}, {"xq"}, kQ).attr("signed", 1);
  b.node("Quant", {"w1", "half", "zero", "b8"}, {"w1q"}, kQ).attr("signed", 1);
  b.node("Conv", {"xq", "w1q"}, {"c1"}).attr("kernel_shape", std::vector<int64_t>{3}).attr("pads", std::vector<int64_t>{1, 1});
  b.node("Quant", {"c1", "quarter", "zero", "b8"}, {"a1"}, kQ).attr("signed", 1);
  b.node("Flatten", {"a1"}, {"f"});
  b.node("Quant", {"w2", "half", "zero", "b8"}, {"w2q"}, kQ).attr("signed", 1);
  b.node("Gemm", {"f", "w2q"}, {"y"}).attr("transB", 1);
  return b;
}

TEST(InferenceCost, RadioMlIdiomsByHand) {
  // Conv1d: 1 x 4 x 2 x 3 x 16 = 384 MACs, 24 weights, 64 outputs; Gemm: 64 x (1x5) = 320 MACs, 320
  // weights, 5 outputs. All SCALEDINT<8> x SCALEDINT<8> -> SCALEDINT<32>: BOPs 64 x 704 = 45056.
  const char* dense = R"json({
  "total_cost": {
    "discount_sparsity": false,
    "mem_o_SCALEDINT<32>": 69.0,
    "mem_w_SCALEDINT<8>": 344.0,
    "op_mac_SCALEDINT<8>_SCALEDINT<8>": 704.0,
    "total_bops": 45056.0,
    "total_macs": 704.0,
    "total_mem_o_bits": 2208.0,
    "total_mem_o_elems": 69.0,
    "total_mem_w_bits": 2752.0,
    "total_mem_w_elems": 344.0,
    "unsupported": "set()"
  }
}
)json";
  auto m = radioml_like().build();
  ASSERT_TRUE(m.is_ok());
  EXPECT_EQ(total_json(m.value(), false), dense);
  // Sparse: density 0.5 everywhere: 192 + 160 MACs, 12 + 160 weights.
  auto s = radioml_like().build();
  auto c = cost_of(s.value(), true);
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  const analysis::CostTotals t = analysis::cost_totals(c->total);
  EXPECT_EQ(t.macs, 352.0);
  EXPECT_EQ(t.bops, 22528.0);
  EXPECT_EQ(t.mem_w_elems, 172.0);
}

TEST(InferenceCost, BreakdownNamesNodesAsQonnx) {
  auto m = cnv_like().build();
  auto c = cost_of(m.value(), false);
  ASSERT_TRUE(c.is_ok());
  const std::string json = analysis::cost_json(c.value(), true, false);
  // qonnx names the remaining nodes <op>_<k> after folding the weight quantizers.
  EXPECT_NE(json.find("\"Conv_0\": {"), std::string::npos) << json;
  EXPECT_NE(json.find("\"Conv_1\": {"), std::string::npos) << json;
  EXPECT_NE(json.find("\"MatMul_0\": {"), std::string::npos) << json;
  EXPECT_NE(json.find("\"optype_cost\": {\n    \"Conv\": {"), std::string::npos) << json;
  ASSERT_EQ(c->optypes.size(), 2u);
  EXPECT_EQ(analysis::cost_totals(c->optypes[0].second).macs, 1728.0 + 64.0);
  // The flat 2021 layout has the totals at the top level.
  const std::string flat = analysis::cost_json(c.value(), false, true);
  EXPECT_EQ(flat.find("total_cost"), std::string::npos);
  EXPECT_NE(flat.find("\n  \"total_macs\": 1888.0,"), std::string::npos) << flat;
}

TEST(InferenceCost, UnsupportedOpsAndTheExtendedOnes) {
  io::ModelBuilder b(13);
  b.input("x", DType::kFloat, {1, 2, 4, 4}).output("y", DType::kFloat, {1, 3});
  b.initializer("w", int2_weights({2, 3, 2, 2})).initializer("roi", f32({0}, {})).initializer("scales", f32({4}, {1, 1, 2, 2}));
  // ConvTranspose: 1 x 2 x 16 pixels x (3 x 2x2) = 384 MACs -> [1,3,5,5]; Resize linear doubles H and W:
  // 2 MACs x 2 scaled dims x 100 output pixels x 3 channels; GlobalAveragePool adds 300 elements.
  b.node("ConvTranspose", {"x", "w"}, {"t"}).attr("kernel_shape", std::vector<int64_t>{2, 2});
  b.node("Resize", {"t", "roi", "scales"}, {"r"}).attr("mode", "linear");
  b.node("GlobalAveragePool", {"r"}, {"p"});
  b.node("Softmax", {"p"}, {"s"});
  b.node("Flatten", {"s"}, {"y"});
  auto m = b.build();
  auto c = cost_of(m.value(), false);
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  EXPECT_EQ(c->unsupported, std::set<std::string>{"Softmax"});
  ASSERT_EQ(c->nodes.size(), 3u);
  EXPECT_EQ(analysis::cost_totals(c->nodes[0].costs).macs, 384.0);   // ConvTranspose -> [1,3,5,5]
  EXPECT_EQ(analysis::cost_totals(c->nodes[1].costs).macs, 2.0 * 2 * 100 * 3);  // -> [1,3,10,10]
  EXPECT_EQ(analysis::cost_totals(c->nodes[2].costs).macs, 300.0);   // one add per input element
  auto q = b.build();
  auto strict = cost_of(q.value(), false, false, /*qonnx_only=*/true);
  ASSERT_TRUE(strict.is_ok());
  EXPECT_EQ(strict->unsupported, (std::set<std::string>{"ConvTranspose", "GlobalAveragePool", "Resize", "Softmax"}));
  EXPECT_NE(analysis::cost_json(strict.value(), false, false).find("\"{'ConvTranspose', 'GlobalAveragePool', 'Resize', 'Softmax'}\""),
            std::string::npos);
}

// QCDQ with 4-bit ranges in int8 containers: Clip(-8, 7) on activations, Clip(-7, 7) on weights.
io::ModelBuilder qcdq_4bit() {
  io::ModelBuilder b(13);
  b.input("x", DType::kFloat, {1, 2, 3, 3}).output("y", DType::kFloat, {1, 2, 2, 2});
  Tensor w(DType::kInt8, {2, 2, 2, 2});
  for (int64_t i = 0; i < w.numel(); ++i) w.data<int8_t>()[i] = static_cast<int8_t>(i % 15 - 7);
  b.initializer("w", w).initializer("s", f32s(0.1f)).initializer("zp", make<int8_t>(DType::kInt8, {}, {0}));
  b.initializer("lo", make<int8_t>(DType::kInt8, {}, {-8})).initializer("hi", make<int8_t>(DType::kInt8, {}, {7}));
  b.initializer("wlo", make<int8_t>(DType::kInt8, {}, {-7}));
  b.node("QuantizeLinear", {"x", "s", "zp"}, {"q"});
  b.node("Clip", {"q", "lo", "hi"}, {"qc"});
  b.node("DequantizeLinear", {"qc", "s", "zp"}, {"xd"});
  b.node("Clip", {"w", "wlo", "hi"}, {"wc"});
  b.node("DequantizeLinear", {"wc", "s", "zp"}, {"wd"});
  b.node("Conv", {"xd", "wd"}, {"y"}).attr("kernel_shape", std::vector<int64_t>{2, 2});
  return b;
}

TEST(InferenceCost, ClipAwareGivesTheQcdqBitWidth) {
  auto plain = qcdq_4bit().build();
  auto c8 = cost_of(plain.value(), false);
  ASSERT_TRUE(c8.is_ok()) << c8.status().to_string();
  ASSERT_EQ(c8->nodes.size(), 1u);
  EXPECT_EQ(c8->nodes[0].costs[0].first, "op_mac_SCALEDINT<8>_SCALEDINT<8>");
  auto aware = qcdq_4bit().build();
  auto c4 = cost_of(aware.value(), false, /*clip_aware=*/true);
  ASSERT_TRUE(c4.is_ok()) << c4.status().to_string();
  EXPECT_EQ(c4->nodes[0].costs[0].first, "op_mac_SCALEDINT<4>_SCALEDINT<4>");
  EXPECT_EQ(analysis::cost_totals(c4->total).bops * 4, analysis::cost_totals(c8->total).bops);
}

TEST(InferenceCost, PythonFloatRepr) {
  EXPECT_EQ(analysis::python_float(1345500.0), "1345500.0");
  EXPECT_EQ(analysis::python_float(0.0), "0.0");
  EXPECT_EQ(analysis::python_float(0.75), "0.75");
  EXPECT_EQ(analysis::python_float(1e16), "1e+16");
  EXPECT_EQ(analysis::python_float(1.5e-5), "1.5e-05");
  EXPECT_EQ(analysis::python_float(0.0001), "0.0001");
  EXPECT_EQ(analysis::python_float(123456789012345.67), "123456789012345.67");
  EXPECT_EQ(analysis::python_float(2.0 / 3.0), "0.6666666666666666");
  EXPECT_EQ(analysis::python_float(-2.5e20), "-2.5e+20");
}

TEST(InferenceCost, HtmlIsSelfContainedWithOneBarPerLayer) {
  auto m = cnv_like().build();
  auto c = cost_of(m.value(), true);
  ASSERT_TRUE(c.is_ok());
  const std::string html = analysis::cost_html(c.value(), "cnv<&>");
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), html.find("<svg"));
  EXPECT_EQ(html.find("src="), std::string::npos);  // nothing loaded from elsewhere
  EXPECT_NE(html.find("cnv&lt;&amp;&gt;"), std::string::npos);
  size_t bars = 0, weighted = 0;
  for (size_t pos = 0; (pos = html.find("data-value=", pos)) != std::string::npos; ++pos) ++bars;
  for (const auto& n : c->nodes) weighted += n.weight_datatype.empty() ? 0 : 1;
  // MACs, weight bits, then input and weight bit widths (no accumulators: those come from api::cost).
  EXPECT_EQ(bars, 3 * c->nodes.size() + weighted);
}

TEST_F(CostCli, ExitCodesAndFiles) {
  auto help = run_cli("cost --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("Example:"), std::string::npos);
  EXPECT_EQ(run_cli("cost " + path("missing.onnx")).exit_code, 3);
  auto m = cnv_like();
  const std::string model = path("cnv.onnx");
  ASSERT_TRUE(io::write_file_atomic(model, m.serialize()).is_ok());
  const std::string json = path("c.json"), html = path("c.html");
  auto r = run_cli("cost " + model + " --json " + json + " --html " + html + " --breakdown");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty());
  auto text = io::read_file(json);
  ASSERT_TRUE(text.is_ok());
  EXPECT_NE(text->find("\"node_cost\""), std::string::npos);
  EXPECT_TRUE(io::read_file(html).is_ok());
  // Same input, same bytes.
  auto again = run_cli("cost " + model + " --breakdown");
  EXPECT_EQ(again.out, text.value());
  EXPECT_EQ(run_cli("cost " + model + " --json " + path("no/such/dir/c.json")).exit_code, 4);
}

}  // namespace
}  // namespace qonnx::test

namespace qonnx::test {
namespace {

// qonnx's InferDataTypes rules, one output per rule.
TEST(InferDatatypes, QonnxRulesAndFallbacks) {
  io::ModelBuilder b(13);
  b.import(kQ, 1);
  b.input("x", DType::kFloat, {4}).output("y", DType::kFloat, {4});
  b.initializer("one", f32s(1)).initializer("half", f32s(0.5f)).initializer("zero", f32s(0)).initializer("zp", f32s(1));
  b.initializer("b3", f32s(3)).initializer("b1", f32s(1)).initializer("b3_rank1", f32({1}, {3}));
  b.initializer("thr", f32({1, 3}, {0, 1, 2}));
  b.node("Quant", {"x", "one", "zero", "b3"}, {"int3"}, kQ).attr("signed", 1);
  b.node("Quant", {"x", "one", "zero", "b3"}, {"uint3"}, kQ).attr("signed", 0);
  b.node("Quant", {"x", "half", "zero", "b3"}, {"scaled3"}, kQ).attr("signed", 1);
  b.node("Quant", {"x", "one", "zp", "b3"}, {"zeropt"}, kQ).attr("signed", 1);        // zero point 1: FLOAT32
  b.node("Quant", {"x", "one", "zero", "b3_rank1"}, {"rank1"}, kQ).attr("signed", 1);  // bit width of shape [1]: FLOAT32
  b.node("Quant", {"x", "one", "zero", "b1"}, {"bin"}, kQ).attr("signed", 0);
  b.node("BipolarQuant", {"x", "one"}, {"bip"}, kQ);
  b.node("BipolarQuant", {"x", "half"}, {"bip_scaled"}, kQ);
  b.node("Mul", {"int3", "uint3"}, {"int_mul"});
  b.node("Mul", {"uint3", "bin"}, {"uint_mul"});
  b.node("Sub", {"uint3", "bin"}, {"uint_sub"});        // subtraction may negate: INT32
  b.node("Mul", {"scaled3", "int3"}, {"scaled_mul"});
  b.node("Mul", {"scaled3", "x"}, {"float_mul"});
  b.node("Reshape", {"bip", "shape"}, {"reshaped"});
  b.initializer("shape", i64({1}, {4}));
  b.node("MultiThreshold", {"x", "thr"}, {"mt"}, kQ).attr("out_dtype", "UINT2");
  b.node("Relu", {"int3"}, {"relu"});
  b.node("Add", {"mt", "relu"}, {"y"});
  auto m = b.build();
  ASSERT_TRUE(m.is_ok()) << m.status().to_string();
  ASSERT_TRUE(run_passes(m.value(), "infer-datatypes{scaled-int=1}").is_ok());
  const ir::Graph& g = m->graph();
  const std::map<std::string, std::string> expected = {
      {"int3", "INT3"},        {"uint3", "UINT3"},      {"scaled3", "SCALEDINT<3>"},       {"zeropt", "FLOAT32"},
      {"rank1", "FLOAT32"},    {"bin", "BINARY"},       {"bip", "BIPOLAR"},                {"bip_scaled", "FLOAT32"},
      {"int_mul", "INT32"},    {"uint_mul", "UINT32"},  {"uint_sub", "INT32"},             {"scaled_mul", "SCALEDINT<32>"},
      {"float_mul", "FLOAT32"}, {"reshaped", "BIPOLAR"}, {"mt", "UINT2"},                  {"relu", "FLOAT32"}};
  for (const auto& [tensor, dt] : expected) EXPECT_EQ(g.finn_datatype(tensor), dt) << tensor;
  // qonnx's default turns scaled integers into FLOAT32.
  auto plain = b.build();
  ASSERT_TRUE(run_passes(plain.value(), "infer-datatypes").is_ok());
  EXPECT_EQ(plain->graph().finn_datatype("scaled3"), "FLOAT32");
  EXPECT_EQ(plain->graph().finn_datatype("scaled_mul"), "FLOAT32");
  EXPECT_EQ(plain->graph().finn_datatype("int3"), "INT3");
}

TEST(InferDatatypes, DatatypeNames) {
  EXPECT_EQ(ir::parse_finn_datatype("SCALEDINT<8>")->bits, 8);
  EXPECT_TRUE(ir::parse_finn_datatype("SCALEDINT<8>")->is_scaled_int());
  EXPECT_FALSE(ir::parse_finn_datatype("SCALEDINT<8>")->is_integer());
  EXPECT_EQ(ir::parse_finn_datatype("UINT1")->name, "BINARY");
  EXPECT_EQ(ir::parse_finn_datatype("TERNARY")->bits, 2);
  EXPECT_EQ(ir::parse_finn_datatype("FIXED<8,3>")->bits, 8);
  EXPECT_FALSE(ir::parse_finn_datatype("FIXED<8,8>").has_value());
  EXPECT_EQ(ir::parse_finn_datatype("FLOAT<4,3>")->name, "FLOAT<4,3,7>");
  EXPECT_EQ(ir::parse_finn_datatype("FLOAT<4,3>")->bits, 8);
  EXPECT_TRUE(ir::parse_finn_datatype("FLOAT<4,3>")->is_float());
  EXPECT_EQ(ir::parse_finn_datatype("FLOAT32")->name, "FLOAT32");
  EXPECT_FALSE(ir::parse_finn_datatype("INT").has_value());
  EXPECT_FALSE(ir::parse_finn_datatype("DOUBLE").has_value());
}

}  // namespace
}  // namespace qonnx::test
