// Einsum with numpy semantics: any number of operands, explicit ("ij,jk->ik") and implicit
// ("ij,jk") outputs, ellipsis broadcasting, repeated labels (diagonals) and sums over labels that
// are not in the output. Evaluated as one nested loop over all labels, contracted labels innermost.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/common/attr_check.h"
#include "kernels/onnx/onnx_kernels.h"
#include "qonnx/exec/dtype_dispatch.h"

namespace qonnx::kernels {
namespace {

constexpr int kLetters = 52;  // a-z then A-Z map to 0..51; ellipsis dims get kLetters + j

int letter_id(char c) { return std::islower(static_cast<unsigned char>(c)) ? c - 'a' : c - 'A' + 26; }
// Labels sort like numpy's characters: 'A'..'Z' before 'a'..'z'.
int letter_order(int id) { return id < 26 ? id + 26 : id - 26; }

// A term's labels with "..." kept as a marker (-1).
Result<std::vector<int>> parse_term(const exec::KernelContext& ctx, const std::string& term) {
  std::vector<int> labels;
  bool ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    const char c = term[i];
    if (std::isalpha(static_cast<unsigned char>(c))) {
      labels.push_back(letter_id(c));
    } else if (term.compare(i, 3, "...") == 0 && !ellipsis) {
      labels.push_back(-1);
      ellipsis = true;
      i += 2;
    } else {
      return ctx.error(Code::kInvalidModel, "einsum term '{}' has an unexpected character at {}", term, i);
    }
  }
  return labels;
}

struct EinsumPlan {
  std::vector<int64_t> sizes;                 // per label id
  std::vector<int> loop;                      // output labels, then contracted labels
  size_t out_rank = 0;
  Dims out_dims;
  std::vector<std::vector<int64_t>> strides;  // [operand][loop position]
};

// The equation without white space, required.
struct EinsumAttrs {
  std::string equation;
};

Result<EinsumAttrs> prepare_einsum(const ir::Node& node, int64_t) {
  EinsumAttrs a;
  QONNX_ASSIGN_OR_RETURN(const std::string equation, string_attr(node, "equation", ""));
  for (char c : equation)
    if (!std::isspace(static_cast<unsigned char>(c))) a.equation += c;
  if (a.equation.empty()) return Status(Code::kInvalidModel, "attribute equation is required");
  return a;
}

Result<EinsumPlan> plan_einsum(const exec::KernelContext& ctx, const std::string& eq) {
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::vector<int>> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    QONNX_ASSIGN_OR_RETURN(std::vector<int> t, parse_term(ctx, lhs.substr(start, comma - start)));
    terms.push_back(std::move(t));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != ctx.num_inputs())
    return ctx.error(Code::kInvalidModel, "equation '{}' has {} operands but the node has {} inputs", eq,
                     terms.size(), ctx.num_inputs());
  // Expand each ellipsis into its operand's broadcast dims, right-aligned across operands.
  size_t ell_rank = 0;
  std::vector<size_t> ell_dims(terms.size(), 0);
  for (size_t i = 0; i < terms.size(); ++i) {
    QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(i, "operand"));
    const bool has_ell = std::count(terms[i].begin(), terms[i].end(), -1) > 0;
    const size_t named = terms[i].size() - (has_ell ? 1 : 0);
    if (x->rank() < named || (!has_ell && x->rank() != named))
      return ctx.input_error(Code::kInvalidModel, i, "rank {} does not match the equation's {} labels", x->rank(),
                             named);
    ell_dims[i] = x->rank() - named;
    ell_rank = std::max(ell_rank, ell_dims[i]);
  }
  EinsumPlan p;
  p.sizes.assign(kLetters + ell_rank, -1);
  std::vector<int> count(p.sizes.size(), 0);
  std::vector<std::vector<int>> dims_labels(terms.size());
  for (size_t i = 0; i < terms.size(); ++i) {
    for (int l : terms[i]) {
      if (l >= 0) {
        dims_labels[i].push_back(l);
        continue;
      }
      for (size_t j = ell_rank - ell_dims[i]; j < ell_rank; ++j) dims_labels[i].push_back(kLetters + static_cast<int>(j));
    }
    const Tensor* x = ctx.input(i);
    for (size_t d = 0; d < dims_labels[i].size(); ++d) {
      const int l = dims_labels[i][d];
      const int64_t size = x->dim(d);
      ++count[static_cast<size_t>(l)];
      int64_t& known = p.sizes[static_cast<size_t>(l)];
      if (known < 0 || known == 1) known = size;
      else if (size != known && size != 1)
        return ctx.input_error(Code::kInvalidModel, i, "dim {} has size {} but its label has size {} elsewhere", d,
                               size, known);
    }
  }
  std::vector<int> out;
  if (arrow != std::string::npos) {
    QONNX_ASSIGN_OR_RETURN(std::vector<int> rhs, parse_term(ctx, eq.substr(arrow + 2)));
    for (int l : rhs) {
      if (l < 0) {
        for (size_t j = 0; j < ell_rank; ++j) out.push_back(kLetters + static_cast<int>(j));
        continue;
      }
      if (count[static_cast<size_t>(l)] == 0 || std::count(out.begin(), out.end(), l) > 0)
        return ctx.error(Code::kInvalidModel, "output label '{}' of '{}' is unknown or repeated",
                         l < 26 ? static_cast<char>('a' + l) : static_cast<char>('A' + l - 26), eq);
      out.push_back(l);
    }
  } else {
    for (size_t j = 0; j < ell_rank; ++j) out.push_back(kLetters + static_cast<int>(j));
    std::vector<int> once;
    for (int l = 0; l < kLetters; ++l)
      if (count[static_cast<size_t>(l)] == 1) once.push_back(l);
    std::sort(once.begin(), once.end(), [](int a, int b) { return letter_order(a) < letter_order(b); });
    out.insert(out.end(), once.begin(), once.end());
  }
  p.loop = out;
  p.out_rank = out.size();
  for (size_t l = 0; l < p.sizes.size(); ++l)
    if (count[l] > 0 && std::count(out.begin(), out.end(), static_cast<int>(l)) == 0) p.loop.push_back(static_cast<int>(l));
  for (size_t k = 0; k < p.out_rank; ++k) p.out_dims.push_back(p.sizes[static_cast<size_t>(out[k])]);
  if (checked_numel(p.out_dims) < 0) return ctx.error(Code::kInvalidModel, "output {} is too large", dims_to_string(p.out_dims));
  // Element stride of each loop label in each operand: repeated labels add up (a diagonal walk),
  // broadcast dims of size 1 contribute 0.
  for (size_t i = 0; i < terms.size(); ++i) {
    const Tensor* x = ctx.input(i);
    std::vector<int64_t> s(p.loop.size(), 0);
    int64_t stride = 1;
    for (size_t d = dims_labels[i].size(); d-- > 0;) {
      const int l = dims_labels[i][d];
      const size_t pos = static_cast<size_t>(std::find(p.loop.begin(), p.loop.end(), l) - p.loop.begin());
      if (x->dim(d) != 1) s[pos] += stride;
      stride *= x->dim(d);
    }
    p.strides.push_back(std::move(s));
  }
  return p;
}

// Moves a multi-index over loop labels [from, to) one step (row-major), keeping each operand's offset
// in step; an index past the end wraps back to 0.
inline void advance(const EinsumPlan& p, const std::vector<int64_t>& extent, size_t from, size_t to,
                    std::vector<int64_t>& idx, std::vector<int64_t>& off) {
  for (size_t k = to; k-- > from;) {
    for (size_t i = 0; i < off.size(); ++i) off[i] += p.strides[i][k];
    if (++idx[k] < extent[k]) return;
    for (size_t i = 0; i < off.size(); ++i) off[i] -= p.strides[i][k] * extent[k];
    idx[k] = 0;
  }
}

// out[o] = sum over contracted labels of the product of the operands, accumulated in Acc. The last
// contracted label runs in a tight loop, the others through `advance`.
template <typename T, typename Acc>
void run_einsum(const EinsumPlan& p, const std::vector<const T*>& ops, T* out) {
  const size_t nl = p.loop.size(), no = ops.size();
  std::vector<int64_t> extent(nl);
  for (size_t k = 0; k < nl; ++k) extent[k] = p.sizes[static_cast<size_t>(p.loop[k])];
  for (int64_t e : extent)
    if (e == 0) return;  // an empty output, or an empty sum (the output stays 0)
  const bool contracts = nl > p.out_rank;
  const size_t counted_end = contracts ? nl - 1 : nl;
  const int64_t tight = contracts ? extent[nl - 1] : 1;
  std::vector<int64_t> tight_stride(no, 0);
  if (contracts)
    for (size_t i = 0; i < no; ++i) tight_stride[i] = p.strides[i][nl - 1];
  int64_t outer_terms = 1;
  for (size_t k = p.out_rank; k < counted_end; ++k) outer_terms *= extent[k];
  std::vector<int64_t> idx(nl, 0), off(no, 0);
  const int64_t total = checked_numel(p.out_dims);
  for (int64_t o = 0; o < total; ++o) {
    Acc sum = 0;
    for (int64_t c = 0; c < outer_terms; ++c) {
      if (no == 2) {
        const T* a = ops[0] + off[0];
        const T* b = ops[1] + off[1];
        for (int64_t j = 0; j < tight; ++j)
          sum += static_cast<Acc>(a[j * tight_stride[0]]) * static_cast<Acc>(b[j * tight_stride[1]]);
      } else {
        for (int64_t j = 0; j < tight; ++j) {
          Acc prod = static_cast<Acc>(ops[0][off[0] + j * tight_stride[0]]);
          for (size_t i = 1; i < no; ++i) prod *= static_cast<Acc>(ops[i][off[i] + j * tight_stride[i]]);
          sum += prod;
        }
      }
      advance(p, extent, p.out_rank, counted_end, idx, off);
    }
    out[o] = static_cast<T>(sum);
    advance(p, extent, 0, p.out_rank, idx, off);
  }
}

Status einsum(exec::KernelContext& ctx, const EinsumAttrs& attrs) {
  if (ctx.num_inputs() == 0) return ctx.error(Code::kInvalidModel, "Einsum needs at least one input");
  QONNX_ASSIGN_OR_RETURN(const Tensor* first, ctx.required(0, "Inputs"));
  const DType dt = first->dtype();
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(i, "Inputs"));
    if (x->dtype() != dt)
      return ctx.input_error(Code::kInvalidModel, i, "type {} differs from input #0's {}", dtype_name(x->dtype()),
                             dtype_name(dt));
  }
  QONNX_ASSIGN_OR_RETURN(EinsumPlan plan, plan_einsum(ctx, attrs.equation));
  // float16 / bfloat16 compute in float.
  const DType ct = (dt == DType::kFloat16 || dt == DType::kBFloat16) ? DType::kFloat : dt;
  std::vector<Tensor> converted;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    QONNX_ASSIGN_OR_RETURN(Tensor c, exec::cast_tensor(*ctx.input(i), ct));
    converted.push_back(std::move(c));
  }
  Tensor out(ct, plan.out_dims);
  bool supported = false;
  exec::visit_dtype(ct, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
      // Integers accumulate in 64-bit unsigned arithmetic, which wraps like the narrow type.
      using Acc = std::conditional_t<std::is_floating_point_v<T>, T, uint64_t>;
      std::vector<const T*> ops;
      for (const Tensor& t : converted) ops.push_back(t.data<T>());
      run_einsum<T, Acc>(plan, ops, out.data<T>());
      supported = true;
    }
  });
  if (!supported) return ctx.error(Code::kUnsupported, "Einsum on {} is not supported", dtype_name(dt));
  QONNX_ASSIGN_OR_RETURN(Tensor y, exec::cast_tensor(out, dt));
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_einsum_kernels(exec::KernelRegistry& r) {
  r.add("", "Einsum", {12, exec::kNoUpperVersion}, exec::typed_kernel<EinsumAttrs, prepare_einsum, einsum>());
}

}  // namespace qonnx::kernels
