// Sequence and Optional values through the executor, the sequence ops, TfIdfVectorizer,
// StringNormalizer and Bernoulli: attributes, positions, dtypes and errors the ONNX backend data does
// not cover. Bernoulli is checked by its distribution and its determinism under a seed.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "qonnx/exec/executor.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {

// Runs a model built in `b` on `feeds`; output 0 or the error.
Result<std::vector<Tensor>> run_model(const io::ModelBuilder& b, const std::map<std::string, Tensor>& feeds) {
  QONNX_ASSIGN_OR_RETURN(ir::Model model, b.build());
  QONNX_ASSIGN_OR_RETURN(exec::Executor ex, exec::Executor::create(model));
  QONNX_ASSIGN_OR_RETURN(exec::RunResult r, ex.run(feeds));
  return r.outputs;
}

TEST(SequenceOps, ConstructInsertAtEraseLength) {
  io::ModelBuilder b(13);
  b.input("a", DType::kFloat, {2}).input("c", DType::kFloat, {1});
  b.output("first", DType::kFloat).output("last", DType::kFloat).output("len", DType::kInt64);
  b.initializer("zero", i64({}, {0})).initializer("minus1", i64({}, {-1}));
  b.node("SequenceConstruct", {"a", "a"}, {"s"});
  b.node("SequenceInsert", {"s", "c", "zero"}, {"s2"});  // [c, a, a]
  b.node("SequenceErase", {"s2", "minus1"}, {"s3"});     // [c, a]
  b.node("SequenceAt", {"s3", "zero"}, {"first"});
  b.node("SequenceAt", {"s3", "minus1"}, {"last"});
  b.node("SequenceLength", {"s3"}, {"len"});
  auto out = run_model(b, {{"a", f32({2}, {1, 2})}, {"c", f32({1}, {7})}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(values_f32(out.value()[0]), (std::vector<float>{7}));
  EXPECT_EQ(values_f32(out.value()[1]), (std::vector<float>{1, 2}));
  EXPECT_EQ(values<int64_t>(out.value()[2]), (std::vector<int64_t>{2}));
}

TEST(SequenceOps, PositionsOutOfRangeAndMixedTypesAreErrors) {
  io::ModelBuilder b(13);
  b.input("a", DType::kFloat, {2});
  b.output("y", DType::kFloat);
  b.initializer("five", i64({}, {5}));
  b.node("SequenceConstruct", {"a"}, {"s"});
  b.node("SequenceAt", {"s", "five"}, {"y"});
  auto r = run_model(b, {{"a", f32({2}, {1, 2})}});
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().to_string().find("position 5 is outside [-1, 0]"), std::string::npos) << r.status().to_string();

  io::ModelBuilder mixed(13);
  mixed.input("a", DType::kFloat, {2}).input("i", DType::kInt64, {1});
  mixed.output("y", DType::kFloat);
  mixed.node("SequenceConstruct", {"a"}, {"s"});
  mixed.node("SequenceInsert", {"s", "i"}, {"y"});
  r = run_model(mixed, {{"a", f32({2}, {1, 2})}, {"i", i64({1}, {3})}});
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().to_string().find("cannot join a sequence of float"), std::string::npos) << r.status().to_string();
}

TEST(SequenceOps, ATensorOpRejectsASequence) {
  io::ModelBuilder b(13);
  b.input("a", DType::kFloat, {2});
  b.output("y", DType::kFloat);
  b.node("SequenceConstruct", {"a"}, {"s"});
  b.node("Relu", {"s"}, {"y"});
  auto r = run_model(b, {{"a", f32({2}, {1, 2})}});
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().to_string().find("seq(tensor(float))"), std::string::npos) << r.status().to_string();
}

TEST(SequenceOps, SplitThenConcatRoundTrips) {
  io::ModelBuilder b(13);
  b.input("x", DType::kFloat, {2, 3});
  b.output("stacked", DType::kFloat).output("joined", DType::kFloat).output("n", DType::kInt64);
  b.initializer("two", i64({}, {2}));
  b.node("SplitToSequence", {"x"}, {"cols"}).attr("axis", 1).attr("keepdims", 0);  // three [2] tensors
  b.node("ConcatFromSequence", {"cols"}, {"stacked"}).attr("axis", 1).attr("new_axis", 1);  // back to [2, 3]
  b.node("SplitToSequence", {"x", "two"}, {"chunks"}).attr("axis", 1);                      // [2, 2] and [2, 1]
  b.node("ConcatFromSequence", {"chunks"}, {"joined"}).attr("axis", -1);
  b.node("SequenceLength", {"chunks"}, {"n"});
  const Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  auto out = run_model(b, {{"x", x}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(out.value()[0].dims(), (Dims{2, 3}));
  EXPECT_EQ(values_f32(out.value()[0]), values_f32(x));
  EXPECT_EQ(values_f32(out.value()[1]), values_f32(x));
  EXPECT_EQ(values<int64_t>(out.value()[2]), (std::vector<int64_t>{2}));
}

TEST(SequenceOps, SequenceOutputsAndEmptySequences) {
  io::ModelBuilder b(13);
  b.output("s", DType::kUndefined);
  b.node("SequenceEmpty", {}, {"s"}).attr("dtype", 7);
  auto out = run_model(b, {});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_TRUE(out.value()[0].is_sequence());
  EXPECT_EQ(out.value()[0].dtype(), DType::kInt64);
  EXPECT_TRUE(out.value()[0].elements().empty());
  EXPECT_EQ(out.value()[0].type_string(), "seq(tensor(int64))");
}

TEST(OptionalOps, WrapTestAndUnwrap) {
  io::ModelBuilder b(18);
  b.input("x", DType::kFloat, {2});
  b.output("has", DType::kBool).output("y", DType::kFloat).output("absent", DType::kBool).output("plain", DType::kFloat);
  b.node("Optional", {"x"}, {"o"});
  b.node("OptionalHasElement", {"o"}, {"has"});
  b.node("OptionalGetElement", {"o"}, {"y"});
  b.node("OptionalHasElement", {""}, {"absent"});  // 18: an omitted input is an empty optional
  b.node("OptionalGetElement", {"x"}, {"plain"});  // 18: a tensor is its own element
  auto out = run_model(b, {{"x", f32({2}, {3, 4})}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(bools(out.value()[0]), (std::vector<bool>{true}));
  EXPECT_EQ(values_f32(out.value()[1]), (std::vector<float>{3, 4}));
  EXPECT_EQ(bools(out.value()[2]), (std::vector<bool>{false}));
  EXPECT_EQ(values_f32(out.value()[3]), (std::vector<float>{3, 4}));
  // Before 18 a tensor is not an optional.
  // v15 takes only optionals: the type check names the allowed types before the kernel runs.
  expect_error(run_op("OptionalGetElement", {f32({1}, {1})}, nullptr, 15), Code::kInvalidModel, "OptionalGetElement type parameter O (v15) does not allow");
}

TEST(TfIdfVectorizer, ModesWeightsAndStringPools) {
  // Pool: 1-grams {1, 2}, 2-grams {(1, 2)}; X = [1, 2, 1, 2, 2].
  const auto pool = [](const std::string& mode) {
    return [mode](io::NodeBuilder& n) {
      n.attr("mode", mode).attr("min_gram_length", 1).attr("max_gram_length", 2).attr("max_skip_count", 0);
      n.attr("ngram_counts", std::vector<int64_t>{0, 2}).attr("ngram_indexes", std::vector<int64_t>{0, 1, 2});
      n.attr("pool_int64s", std::vector<int64_t>{1, 2, 1, 2}).attr("weights", std::vector<float>{0.5f, 2.0f, 3.0f});
    };
  };
  const Tensor x = i64({5}, {1, 2, 1, 2, 2});
  EXPECT_EQ(values_f32(run_ok("TfIdfVectorizer", {x}, pool("TF"), 9)), (std::vector<float>{2, 3, 2}));
  EXPECT_EQ(values_f32(run_ok("TfIdfVectorizer", {x}, pool("IDF"), 9)), (std::vector<float>{0.5f, 2, 3}));
  EXPECT_EQ(values_f32(run_ok("TfIdfVectorizer", {x}, pool("TFIDF"), 9)), (std::vector<float>{1, 6, 6}));
  const auto words = [](io::NodeBuilder& n) {
    n.attr("mode", "TF").attr("min_gram_length", 2).attr("max_gram_length", 2).attr("max_skip_count", 1);
    n.attr("ngram_counts", std::vector<int64_t>{0, 0}).attr("ngram_indexes", std::vector<int64_t>{1});
    n.attr("pool_strings", std::vector<std::string>{"a", "c"});
  };
  // (a, c) with one item skipped, in each of two rows.
  Tensor y = run_ok("TfIdfVectorizer", {strings({2, 3}, {"a", "b", "c", "a", "c", "x"})}, words, 9);
  EXPECT_EQ(y.dims(), (Dims{2, 2}));
  EXPECT_EQ(values_f32(y), (std::vector<float>{0, 1, 0, 1}));
  expect_error(run_op("TfIdfVectorizer", {i32({3}, {1, 2, 3})}, words, 9), Code::kInvalidModel, "the pool is strings");
  const auto ragged = [](io::NodeBuilder& n) {
    n.attr("mode", "TF").attr("min_gram_length", 1).attr("max_gram_length", 2).attr("max_skip_count", 0);
    n.attr("ngram_counts", std::vector<int64_t>{0, 1}).attr("ngram_indexes", std::vector<int64_t>{0, 1});
    n.attr("pool_int64s", std::vector<int64_t>{1, 2, 3, 4});
  };
  expect_error(run_op("TfIdfVectorizer", {x}, ragged, 9), Code::kInvalidModel, "not a whole number of 2-grams");
}

TEST(StringNormalizer, StopwordsAndCase) {
  const auto attrs = [](io::NodeBuilder& n) {
    n.attr("case_change_action", "LOWER").attr("stopwords", std::vector<std::string>{"THE"});
  };
  Tensor y = run_ok("StringNormalizer", {strings({4}, {"The", "Quick", "the", "FOX"})}, attrs, 10);
  EXPECT_EQ(y.strings(), (std::vector<std::string>{"quick", "fox"}));
  const auto sensitive = [](io::NodeBuilder& n) {
    n.attr("is_case_sensitive", 1).attr("stopwords", std::vector<std::string>{"THE"});
  };
  Tensor kept = run_ok("StringNormalizer", {strings({1, 2}, {"The", "THE"})}, sensitive, 10);
  EXPECT_EQ(kept.dims(), (Dims{1, 1}));
  EXPECT_EQ(kept.strings(), (std::vector<std::string>{"The"}));
  expect_error(run_op("StringNormalizer", {strings({2, 2}, {"a", "b", "c", "d"})}, nullptr, 10), Code::kInvalidModel,
               "must be [C] or [1, C]");
  expect_error(run_op("StringNormalizer", {strings({1}, {"a"})}, [](io::NodeBuilder& n) { n.attr("case_change_action", "TITLE"); }, 10),
               Code::kInvalidModel, "case_change_action");
}

TEST(Bernoulli, SeededRunsRepeatAndFollowTheProbabilities) {
  const int64_t n = 20000;
  std::vector<float> p(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) p[static_cast<size_t>(i)] = i < n / 2 ? 0.3f : 0.8f;
  const Tensor probs = f32({n}, p);
  const auto seeded = [](io::NodeBuilder& n) { n.attr("seed", 5.0f); };
  Tensor a = run_ok("Bernoulli", {probs}, seeded, 15);
  Tensor b = run_ok("Bernoulli", {probs}, seeded, 15);
  EXPECT_TRUE(a.identical(b));
  Tensor c = run_ok("Bernoulli", {probs}, [](io::NodeBuilder& n) { n.attr("seed", 6.0f); }, 15);
  EXPECT_FALSE(a.identical(c));
  double low = 0, high = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float v = a.data<float>()[i];
    ASSERT_TRUE(v == 0.0f || v == 1.0f);
    (i < n / 2 ? low : high) += v;
  }
  // 10000 draws each: the standard deviation of the mean is below 0.005.
  EXPECT_NEAR(low / (n / 2), 0.3, 0.025);
  EXPECT_NEAR(high / (n / 2), 0.8, 0.025);
  // Probabilities 0 and 1 are certain; dtype picks the output type.
  Tensor certain = run_ok("Bernoulli", {f32({4}, {0, 1, 0, 1})}, [](io::NodeBuilder& n) { n.attr("dtype", 9); }, 15);
  EXPECT_EQ(certain.dtype(), DType::kBool);
  EXPECT_EQ(bools(certain), (std::vector<bool>{false, true, false, true}));
  expect_error(run_op("Bernoulli", {f32({1}, {1.5f})}, nullptr, 15), Code::kInvalidModel, "not a probability");
}

// Without a seed every run draws anew, also when the probabilities are a constant (not folded at plan time).
TEST(Bernoulli, UnseededDrawsAreNotFoldedIntoAConstant) {
  io::ModelBuilder b(15);
  b.initializer("p", f32({1000}, std::vector<float>(1000, 0.5f)));
  b.output("y", DType::kFloat);
  b.node("Bernoulli", {"p"}, {"y"});
  auto model = b.build();
  ASSERT_TRUE(model.is_ok()) << model.status().to_string();
  auto ex = exec::Executor::create(model.value());
  ASSERT_TRUE(ex.is_ok()) << ex.status().to_string();
  auto first = ex.value().run({});
  auto second = ex.value().run({});
  ASSERT_TRUE(first.is_ok() && second.is_ok());
  EXPECT_FALSE(first.value().outputs[0].identical(second.value().outputs[0]));
}

}  // namespace
}  // namespace qonnx::test
