// Text ops: TfIdfVectorizer (opset 9) and StringNormalizer (opset 10). Case changes are ASCII only:
// other bytes (UTF-8 sequences included) are kept as they are, whatever the `locale`.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kernels/common/attr_check.h"
#include "kernels/common/element_copy.h"
#include "kernels/onnx/onnx_kernels.h"

namespace qonnx::kernels {
namespace {

// An n-gram: its items as int64 values or strings (one of the two is used).
struct Gram {
  std::vector<int64_t> ints;
  std::vector<std::string> strs;
  bool operator<(const Gram& o) const { return ints != o.ints ? ints < o.ints : strs < o.strs; }
};

enum class TfIdfMode { kTf, kIdf, kTfIdf };

struct TfIdfAttrs {
  int64_t min_n = 1, max_n = 1, max_skip = 0;
  TfIdfMode mode = TfIdfMode::kTf;
  bool strings = false;
  std::map<Gram, size_t> pool;  // n-gram -> its position in the pool (ngram_indexes/weights index)
  std::vector<int64_t> indexes;
  std::vector<float> weights;   // empty: all 1
  int64_t out_size = 0;         // max(ngram_indexes) + 1
};

Result<TfIdfAttrs> prepare_tfidf(const ir::Node& node, int64_t) {
  TfIdfAttrs a;
  QONNX_ASSIGN_OR_RETURN(a.min_n, node.attr<int64_t>("min_gram_length"));
  QONNX_ASSIGN_OR_RETURN(a.max_n, node.attr<int64_t>("max_gram_length"));
  QONNX_ASSIGN_OR_RETURN(a.max_skip, node.attr<int64_t>("max_skip_count"));
  QONNX_ASSIGN_OR_RETURN(std::string mode, node.attr<std::string>("mode"));
  QONNX_RETURN_IF_ERROR(check_one_of("mode", mode, {"TF", "IDF", "TFIDF"}));
  a.mode = mode == "TF" ? TfIdfMode::kTf : mode == "IDF" ? TfIdfMode::kIdf : TfIdfMode::kTfIdf;
  if (a.min_n < 1 || a.max_n < a.min_n)
    return Status(Code::kInvalidModel, fmt::format("gram lengths must satisfy 1 <= min_gram_length <= max_gram_length, got {} and {}", a.min_n, a.max_n));
  if (a.max_skip < 0) return Status(Code::kInvalidModel, fmt::format("attribute 'max_skip_count': {} is negative", a.max_skip));
  QONNX_ASSIGN_OR_RETURN(std::vector<int64_t> counts, node.attr<std::vector<int64_t>>("ngram_counts"));
  QONNX_ASSIGN_OR_RETURN(a.indexes, node.attr<std::vector<int64_t>>("ngram_indexes"));
  QONNX_ASSIGN_OR_RETURN(std::vector<int64_t> pool_ints, node.attr<std::vector<int64_t>>("pool_int64s", {}));
  QONNX_ASSIGN_OR_RETURN(std::vector<std::string> pool_strs, node.attr<std::vector<std::string>>("pool_strings", {}));
  QONNX_ASSIGN_OR_RETURN(a.weights, floats_attr(node, "weights"));
  if (node.has_attr("pool_int64s") == node.has_attr("pool_strings"))
    return Status(Code::kInvalidModel, "exactly one of the attributes 'pool_int64s' and 'pool_strings' must be given");
  a.strings = node.has_attr("pool_strings");
  const int64_t pool_size = static_cast<int64_t>(a.strings ? pool_strs.size() : pool_ints.size());
  // ngram_counts[k]: where the (k+1)-grams start in the pool.
  size_t gram = 0;
  for (size_t k = 0; k < counts.size(); ++k) {
    const int64_t n = static_cast<int64_t>(k) + 1;
    const int64_t begin = counts[k], end = k + 1 < counts.size() ? counts[k + 1] : pool_size;
    if (begin < 0 || end < begin || end > pool_size || (end - begin) % n != 0)
      return Status(Code::kInvalidModel, fmt::format("attribute 'ngram_counts': the {}-grams span [{}, {}) of a pool of {}, "
                                                     "not a whole number of {}-grams", n, begin, end, pool_size, n));
    for (int64_t p = begin; p < end; p += n, ++gram) {
      Gram g;
      for (int64_t j = 0; j < n; ++j) {
        if (a.strings) g.strs.push_back(pool_strs[static_cast<size_t>(p + j)]);
        else g.ints.push_back(pool_ints[static_cast<size_t>(p + j)]);
      }
      a.pool.emplace(std::move(g), gram);  // a repeated n-gram keeps its first position
    }
  }
  // Grams longer than the pool's longest never match.
  a.max_n = std::min<int64_t>(a.max_n, static_cast<int64_t>(counts.size()));
  if (a.indexes.size() != gram)
    return Status(Code::kInvalidModel, fmt::format("attribute 'ngram_indexes' has {} entries, the pool holds {} n-grams", a.indexes.size(), gram));
  if (!a.weights.empty() && a.weights.size() != gram)
    return Status(Code::kInvalidModel, fmt::format("attribute 'weights' has {} entries, the pool holds {} n-grams", a.weights.size(), gram));
  for (int64_t i : a.indexes) {
    if (i < 0 || i >= (int64_t{1} << 31)) return Status(Code::kInvalidModel, fmt::format("attribute 'ngram_indexes': {} is out of range", i));
    a.out_size = std::max(a.out_size, i + 1);
  }
  return a;
}

Status tfidf(exec::KernelContext& ctx, const TfIdfAttrs& a) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "X"));
  const DType dt = x->dtype();
  const bool ok_type = a.strings ? dt == DType::kString : (dt == DType::kInt32 || dt == DType::kInt64);
  if (!ok_type)
    return ctx.input_error(Code::kInvalidModel, 0, "is {}, the pool is {}", dtype_name(dt), a.strings ? "strings" : "int64");
  if (x->rank() != 1 && x->rank() != 2)
    return ctx.input_error(Code::kInvalidModel, 0, "must be [C] or [N, C], got shape {}", dims_to_string(x->dims()));
  const int64_t rows = x->rank() == 2 ? x->dim(0) : 1;
  const int64_t cols = x->dims().back();
  const Dims out_dims = x->rank() == 2 ? Dims{rows, a.out_size} : Dims{a.out_size};
  QONNX_RETURN_IF_ERROR(check_output_dims(ctx, out_dims, DType::kFloat));
  std::vector<double> counts(a.indexes.size());
  Tensor y(DType::kFloat, out_dims);
  Gram g;
  for (int64_t r = 0; r < rows; ++r) {
    std::fill(counts.begin(), counts.end(), 0.0);
    auto item_into = [&](int64_t c) {
      const int64_t i = r * cols + c;
      if (a.strings) g.strs.push_back(x->strings()[static_cast<size_t>(i)]);
      else g.ints.push_back(dt == DType::kInt32 ? int64_t{x->data<int32_t>()[i]} : x->data<int64_t>()[i]);
    };
    for (int64_t start = 0; start < cols; ++start)
      for (int64_t n = a.min_n; n <= a.max_n && start + n - 1 < cols; ++n) {
        // Unigrams once; longer grams once per skip distance that fits the row.
        const int64_t skips = n == 1 ? 0 : a.max_skip;
        for (int64_t s = 0; s <= skips; ++s) {
          if (start + (n - 1) * (s + 1) >= cols) break;
          g.ints.clear();
          g.strs.clear();
          for (int64_t j = 0; j < n; ++j) item_into(start + j * (s + 1));
          auto it = a.pool.find(g);
          if (it != a.pool.end()) counts[it->second] += 1;
        }
      }
    float* out = y.data<float>() + r * a.out_size;
    for (size_t i = 0; i < counts.size(); ++i) {
      if (counts[i] == 0) continue;
      const double w = a.weights.empty() ? 1.0 : a.weights[i];
      const double v = a.mode == TfIdfMode::kTf ? counts[i] : a.mode == TfIdfMode::kIdf ? w : counts[i] * w;
      out[a.indexes[i]] = static_cast<float>(v);
    }
  }
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

enum class CaseChange { kNone, kLower, kUpper };

struct NormalizerAttrs {
  CaseChange change = CaseChange::kNone;
  bool case_sensitive = false;
  std::vector<std::string> stopwords;  // lowercased when not case sensitive
};

std::string ascii_lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
std::string ascii_upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

Result<NormalizerAttrs> prepare_normalizer(const ir::Node& node, int64_t) {
  NormalizerAttrs a;
  QONNX_ASSIGN_OR_RETURN(std::string change, string_attr(node, "case_change_action", "NONE"));
  QONNX_RETURN_IF_ERROR(check_one_of("case_change_action", change, {"NONE", "LOWER", "UPPER"}));
  a.change = change == "LOWER" ? CaseChange::kLower : change == "UPPER" ? CaseChange::kUpper : CaseChange::kNone;
  QONNX_ASSIGN_OR_RETURN(a.case_sensitive, flag_attr(node, "is_case_sensitive", false));
  QONNX_ASSIGN_OR_RETURN(a.stopwords, node.attr<std::vector<std::string>>("stopwords", {}));
  QONNX_ASSIGN_OR_RETURN(std::string locale, string_attr(node, "locale", ""));
  (void)locale;  // case changes are ASCII (see the file comment)
  if (!a.case_sensitive)
    for (auto& w : a.stopwords) w = ascii_lower(w);
  std::sort(a.stopwords.begin(), a.stopwords.end());
  return a;
}

Status string_normalizer(exec::KernelContext& ctx, const NormalizerAttrs& a) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "X"));
  if (x->dtype() != DType::kString) return ctx.input_error(Code::kInvalidModel, 0, "must be a string tensor, got {}", dtype_name(x->dtype()));
  const bool two_d = x->rank() == 2;
  if (!(x->rank() == 1 || (two_d && x->dim(0) == 1)))
    return ctx.input_error(Code::kInvalidModel, 0, "must be [C] or [1, C], got shape {}", dims_to_string(x->dims()));
  std::vector<std::string> kept;
  for (const std::string& s : x->strings()) {
    const std::string key = a.case_sensitive ? s : ascii_lower(s);
    if (std::binary_search(a.stopwords.begin(), a.stopwords.end(), key)) continue;
    kept.push_back(a.change == CaseChange::kLower ? ascii_lower(s) : a.change == CaseChange::kUpper ? ascii_upper(s) : s);
  }
  if (kept.empty()) kept.emplace_back();  // all dropped: one empty string
  const int64_t n = static_cast<int64_t>(kept.size());
  Tensor y(DType::kString, two_d ? Dims{1, n} : Dims{n});
  y.strings() = std::move(kept);
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_text_kernels(exec::KernelRegistry& r) {
  r.add("", "TfIdfVectorizer", {9, exec::kNoUpperVersion}, exec::typed_kernel<TfIdfAttrs, prepare_tfidf, tfidf>());
  r.add("", "StringNormalizer", {10, exec::kNoUpperVersion},
        exec::typed_kernel<NormalizerAttrs, prepare_normalizer, string_normalizer>());
}

}  // namespace qonnx::kernels
