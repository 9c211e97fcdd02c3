// RNN, GRU and LSTM (opset 7 onwards; `layout` from 14): forward, reverse and bidirectional, the
// activation functions of the spec with their alpha/beta, clip, sequence_lens, initial states, LSTM
// peepholes and input_forget, GRU linear_before_reset. Computed in double, one step at a time in the
// spec's equations, and rounded to the input type at the end.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels/common/attr_check.h"
#include "kernels/common/element_copy.h"
#include "kernels/onnx/onnx_kernels.h"
#include "qonnx/exec/dtype_dispatch.h"

namespace qonnx::kernels {
namespace {

enum class Cell { kRnn, kGru, kLstm };

int gate_count(Cell c) { return c == Cell::kRnn ? 1 : c == Cell::kGru ? 3 : 4; }
// Activation functions per direction: RNN f; GRU f, g; LSTM f, g, h.
size_t function_count(Cell c) { return c == Cell::kRnn ? 1 : c == Cell::kGru ? 2 : 3; }
const char* cell_name(Cell c) { return c == Cell::kRnn ? "RNN" : c == Cell::kGru ? "GRU" : "LSTM"; }

enum class Fn { kRelu, kTanh, kSigmoid, kAffine, kLeakyRelu, kThresholdedRelu, kScaledTanh, kHardSigmoid, kElu, kSoftsign, kSoftplus };

struct Activation {
  Fn fn = Fn::kTanh;
  double alpha = 0, beta = 0;
};

double apply(const Activation& a, double x) {
  switch (a.fn) {
    case Fn::kRelu: return x > 0 ? x : 0;
    case Fn::kTanh: return std::tanh(x);
    case Fn::kSigmoid: return 1.0 / (1.0 + std::exp(-x));
    case Fn::kAffine: return a.alpha * x + a.beta;
    case Fn::kLeakyRelu: return x >= 0 ? x : a.alpha * x;
    case Fn::kThresholdedRelu: return x > a.alpha ? x : 0;
    case Fn::kScaledTanh: return a.alpha * std::tanh(a.beta * x);
    case Fn::kHardSigmoid: return std::max(0.0, std::min(1.0, a.alpha * x + a.beta));
    case Fn::kElu: return x >= 0 ? x : a.alpha * (std::exp(x) - 1);
    case Fn::kSoftsign: return x / (1 + std::fabs(x));
    case Fn::kSoftplus: return x > 30 ? x : std::log1p(std::exp(x));
  }
  return x;
}

struct FnInfo {
  const char* name;
  Fn fn;
  int params;  // 0: none, 1: alpha, 2: alpha and beta
  double alpha, beta;  // the defaults of the ONNX operator of that name
};

constexpr FnInfo kFunctions[] = {
    {"relu", Fn::kRelu, 0, 0, 0},
    {"tanh", Fn::kTanh, 0, 0, 0},
    {"sigmoid", Fn::kSigmoid, 0, 0, 0},
    {"affine", Fn::kAffine, 2, 1.0, 0.0},
    {"leakyrelu", Fn::kLeakyRelu, 1, 0.01, 0},
    {"thresholdedrelu", Fn::kThresholdedRelu, 1, 1.0, 0},
    {"scaledtanh", Fn::kScaledTanh, 2, 1.0, 1.0},
    {"hardsigmoid", Fn::kHardSigmoid, 2, 0.2, 0.5},
    {"elu", Fn::kElu, 1, 1.0, 0},
    {"softsign", Fn::kSoftsign, 0, 0, 0},
    {"softplus", Fn::kSoftplus, 0, 0, 0},
};

struct RecurrentAttrs {
  Cell cell = Cell::kRnn;
  int64_t hidden_size = 0;  // 0: from R
  int num_directions = 1;
  bool reverse_only = false;
  std::vector<Activation> activations;  // function_count per direction, forward first
  bool has_clip = false;
  double clip = 0;
  int64_t layout = 0;
  bool linear_before_reset = false;  // GRU
  bool input_forget = false;         // LSTM
};

template <Cell C>
Result<RecurrentAttrs> prepare_recurrent(const ir::Node& node, int64_t version) {
  RecurrentAttrs a;
  a.cell = C;
  QONNX_ASSIGN_OR_RETURN(a.hidden_size, int_attr(node, "hidden_size", 0));
  if (a.hidden_size < 0) return Status(Code::kInvalidModel, fmt::format("attribute 'hidden_size': {} is negative", a.hidden_size));
  QONNX_ASSIGN_OR_RETURN(std::string direction, string_attr(node, "direction", "forward"));
  QONNX_RETURN_IF_ERROR(check_one_of("direction", direction, {"forward", "reverse", "bidirectional"}));
  a.num_directions = direction == "bidirectional" ? 2 : 1;
  a.reverse_only = direction == "reverse";
  if (version >= 14) {
    QONNX_ASSIGN_OR_RETURN(a.layout, int_attr(node, "layout", 0));
    if (a.layout != 0 && a.layout != 1) return Status(Code::kInvalidModel, fmt::format("attribute 'layout': {} is not 0 or 1", a.layout));
  } else if (node.has_attr("layout")) {
    return Status(Code::kInvalidModel, fmt::format("attribute 'layout' is not part of {}-{} (it exists from 14)", cell_name(C), version));
  }
  if (node.has_attr("clip")) {
    QONNX_ASSIGN_OR_RETURN(float c, float_attr(node, "clip", 0.0f));
    if (!(c > 0)) return Status(Code::kInvalidModel, fmt::format("attribute 'clip': {} must be positive", c));
    a.has_clip = true;
    a.clip = c;
  }
  if constexpr (C == Cell::kGru) {
    QONNX_ASSIGN_OR_RETURN(a.linear_before_reset, flag_attr(node, "linear_before_reset", false));
  }
  if constexpr (C == Cell::kLstm) {
    QONNX_ASSIGN_OR_RETURN(a.input_forget, flag_attr(node, "input_forget", false));
  }
  QONNX_ASSIGN_OR_RETURN(std::vector<std::string> names, node.attr<std::vector<std::string>>("activations", {}));
  QONNX_ASSIGN_OR_RETURN(std::vector<float> alphas, floats_attr(node, "activation_alpha"));
  QONNX_ASSIGN_OR_RETURN(std::vector<float> betas, floats_attr(node, "activation_beta"));
  const size_t per_dir = function_count(C);
  if (names.empty()) {
    const std::vector<std::string> defaults = C == Cell::kRnn   ? std::vector<std::string>{"Tanh"}
                                              : C == Cell::kGru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                                : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
    for (int d = 0; d < a.num_directions; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  } else if (a.num_directions == 2 && names.size() == per_dir) {
    std::vector<std::string> twice = names;  // one set given for both directions
    names.insert(names.end(), twice.begin(), twice.end());
  }
  if (names.size() != per_dir * static_cast<size_t>(a.num_directions))
    return Status(Code::kInvalidModel, fmt::format("attribute 'activations': {} needs {} functions for {} direction(s), got {}",
                                                   cell_name(C), per_dir * static_cast<size_t>(a.num_directions),
                                                   a.num_directions, names.size()));
  size_t next_alpha = 0, next_beta = 0;
  for (const std::string& name : names) {
    std::string lower;
    for (char ch : name) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
    const FnInfo* info = nullptr;
    for (const FnInfo& f : kFunctions)
      if (lower == f.name) info = &f;
    if (!info)
      return Status(Code::kInvalidModel, fmt::format("attribute 'activations': '{}' is not an activation function of the "
                                                     "spec (Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, "
                                                     "ScaledTanh, HardSigmoid, Elu, Softsign, Softplus)", name));
    Activation act{info->fn, info->alpha, info->beta};
    if (info->params >= 1 && next_alpha < alphas.size()) act.alpha = alphas[next_alpha++];
    if (info->params >= 2 && next_beta < betas.size()) act.beta = betas[next_beta++];
    a.activations.push_back(act);
  }
  return a;
}

// A float input as doubles; checks its dims.
Result<Tensor> as_double(const exec::KernelContext& ctx, size_t i, const Tensor& t, DType dtype, const Dims& expect,
                         const char* what) {
  if (t.dtype() != dtype)
    return ctx.input_error(Code::kInvalidModel, i, "{} is {}, X is {}", what, dtype_name(t.dtype()), dtype_name(dtype));
  if (t.dims() != expect)
    return ctx.input_error(Code::kInvalidModel, i, "{} must have shape {}, got {}", what, dims_to_string(expect),
                           dims_to_string(t.dims()));
  return exec::cast_tensor(t, DType::kDouble);
}

Status recurrent(exec::KernelContext& ctx, const RecurrentAttrs& a) {
  const Cell cell = a.cell;
  const int64_t G = gate_count(cell);
  const int64_t D = a.num_directions;
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "X"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* w, ctx.required(1, "W"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* r, ctx.required(2, "R"));
  const DType dtype = x->dtype();
  if (!dtype_is_float(dtype))
    return ctx.input_error(Code::kUnsupported, 0, "type {} is not supported (float types)", dtype_name(dtype));
  if (x->rank() != 3) return ctx.input_error(Code::kInvalidModel, 0, "X must be 3-D, got shape {}", dims_to_string(x->dims()));
  const int64_t S = a.layout == 0 ? x->dim(0) : x->dim(1);
  const int64_t B = a.layout == 0 ? x->dim(1) : x->dim(0);
  const int64_t I = x->dim(2);
  if (r->rank() != 3) return ctx.input_error(Code::kInvalidModel, 2, "R must be 3-D, got shape {}", dims_to_string(r->dims()));
  const int64_t H = a.hidden_size > 0 ? a.hidden_size : r->dim(2);
  if (H <= 0 || H > (int64_t{1} << 24) || I > (int64_t{1} << 30))
    return ctx.error(Code::kInvalidModel, "hidden size {} (input size {}) is out of range", H, I);
  // Every product below stays far from overflow: check the largest buffers once.
  for (const Dims& dims : {Dims{S, D, B, H}, Dims{D, G * H, I}, Dims{D, G * H, H}, Dims{S, B, G * H}})
    QONNX_RETURN_IF_ERROR(check_output_dims(ctx, dims, DType::kDouble));

  QONNX_ASSIGN_OR_RETURN(Tensor xd, exec::cast_tensor(*x, DType::kDouble));
  QONNX_ASSIGN_OR_RETURN(Tensor wd, as_double(ctx, 1, *w, dtype, {D, G * H, I}, "W"));
  QONNX_ASSIGN_OR_RETURN(Tensor rd, as_double(ctx, 2, *r, dtype, {D, G * H, H}, "R"));
  Tensor bd;
  if (const Tensor* b = ctx.input(3)) {
    QONNX_ASSIGN_OR_RETURN(bd, as_double(ctx, 3, *b, dtype, {D, 2 * G * H}, "B"));
  }
  std::vector<int64_t> lens(static_cast<size_t>(B), S);
  if (const Tensor* sl = ctx.input(4)) {
    if (sl->dtype() != DType::kInt32 || sl->dims() != Dims{B})
      return ctx.input_error(Code::kInvalidModel, 4, "sequence_lens must be int32 of shape [{}], got {} {}", B,
                             dtype_name(sl->dtype()), dims_to_string(sl->dims()));
    for (int64_t b = 0; b < B; ++b) {
      const int32_t len = sl->data<int32_t>()[b];
      if (len < 0 || len > S)
        return ctx.input_error(Code::kInvalidModel, 4, "sequence_lens[{}] = {} is outside [0, {}]", b, len, S);
      lens[static_cast<size_t>(b)] = len;
    }
  }
  const Dims state_dims = a.layout == 0 ? Dims{D, B, H} : Dims{B, D, H};
  auto state_index = [&](int64_t d, int64_t b, int64_t h) {
    return a.layout == 0 ? (d * B + b) * H + h : (b * D + d) * H + h;
  };
  Tensor h0, c0, pd;
  if (const Tensor* t = ctx.input(5)) {
    QONNX_ASSIGN_OR_RETURN(h0, as_double(ctx, 5, *t, dtype, state_dims, "initial_h"));
  }
  if (cell == Cell::kLstm) {
    if (const Tensor* t = ctx.input(6)) {
      QONNX_ASSIGN_OR_RETURN(c0, as_double(ctx, 6, *t, dtype, state_dims, "initial_c"));
    }
    if (const Tensor* t = ctx.input(7)) {
      QONNX_ASSIGN_OR_RETURN(pd, as_double(ctx, 7, *t, dtype, {D, 3 * H}, "P"));
    }
  }

  const Dims y_dims = a.layout == 0 ? Dims{S, D, B, H} : Dims{B, S, D, H};
  Tensor y(DType::kDouble, y_dims);  // zero: steps past a batch entry's length stay 0
  Tensor yh(DType::kDouble, state_dims), yc(DType::kDouble, state_dims);
  auto y_index = [&](int64_t t, int64_t d, int64_t b, int64_t h) {
    return a.layout == 0 ? ((t * D + d) * B + b) * H + h : ((b * S + t) * D + d) * H + h;
  };
  auto x_at = [&](int64_t t, int64_t b) {
    return xd.data<double>() + (a.layout == 0 ? (t * B + b) * I : (b * S + t) * I);
  };
  auto clip = [&](double v) { return a.has_clip ? std::max(-a.clip, std::min(a.clip, v)) : v; };

  const size_t nf = function_count(cell);
  std::vector<double> h(static_cast<size_t>(H)), c(static_cast<size_t>(H)), pre(static_cast<size_t>(G * H)),
      rec(static_cast<size_t>(G * H)), next(static_cast<size_t>(H)), gated(static_cast<size_t>(H)), zv(static_cast<size_t>(H)),
      rv(static_cast<size_t>(H)), rh(static_cast<size_t>(H));
  for (int64_t d = 0; d < D; ++d) {
    const bool backward = a.reverse_only || d == 1;
    const Activation* fns = &a.activations[static_cast<size_t>(d) * nf];
    const double* W = wd.data<double>() + d * G * H * I;
    const double* R = rd.data<double>() + d * G * H * H;
    const double* Wb = bd.defined() ? bd.data<double>() + d * 2 * G * H : nullptr;
    const double* Rb = Wb ? Wb + G * H : nullptr;
    const double* P = pd.defined() ? pd.data<double>() + d * 3 * H : nullptr;
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t k = 0; k < H; ++k) {
        h[static_cast<size_t>(k)] = h0.defined() ? h0.data<double>()[state_index(d, b, k)] : 0.0;
        c[static_cast<size_t>(k)] = c0.defined() ? c0.data<double>()[state_index(d, b, k)] : 0.0;
      }
      const int64_t len = lens[static_cast<size_t>(b)];
      for (int64_t step = 0; step < len; ++step) {
        const int64_t t = backward ? len - 1 - step : step;
        const double* xt = x_at(t, b);
        // pre = W x + Wb; rec = R h + Rb (GRU's hidden gate reads r (.) h below unless linear_before_reset).
        for (int64_t j = 0; j < G * H; ++j) {
          double s = Wb ? Wb[j] : 0.0;
          const double* row = W + j * I;
          for (int64_t i = 0; i < I; ++i) s += row[i] * xt[i];
          pre[static_cast<size_t>(j)] = s;
          double q = Rb ? Rb[j] : 0.0;
          const double* rrow = R + j * H;
          for (int64_t i = 0; i < H; ++i) q += rrow[i] * h[static_cast<size_t>(i)];
          rec[static_cast<size_t>(j)] = q;
        }
        if (cell == Cell::kRnn) {
          for (int64_t k = 0; k < H; ++k) next[static_cast<size_t>(k)] = apply(fns[0], clip(pre[static_cast<size_t>(k)] + rec[static_cast<size_t>(k)]));
        } else if (cell == Cell::kGru) {
          // Gates z, r, h.
          for (int64_t k = 0; k < H; ++k) {
            const size_t z = static_cast<size_t>(k), rr = static_cast<size_t>(H + k);
            zv[z] = apply(fns[0], clip(pre[z] + rec[z]));
            rv[z] = apply(fns[0], clip(pre[rr] + rec[rr]));
          }
          if (a.linear_before_reset) {
            // ht = g(W_h x + Wb_h + r (.) (R_h h_prev + Rb_h))
            for (int64_t k = 0; k < H; ++k) {
              const size_t hh = static_cast<size_t>(2 * H + k);
              gated[static_cast<size_t>(k)] = apply(fns[1], clip(pre[hh] + rv[static_cast<size_t>(k)] * rec[hh]));
            }
          } else {
            // ht = g(W_h x + Wb_h + R_h (r (.) h_prev) + Rb_h)
            for (int64_t i = 0; i < H; ++i) rh[static_cast<size_t>(i)] = rv[static_cast<size_t>(i)] * h[static_cast<size_t>(i)];
            for (int64_t k = 0; k < H; ++k) {
              double q = Rb ? Rb[2 * H + k] : 0.0;
              const double* rrow = R + (2 * H + k) * H;
              for (int64_t i = 0; i < H; ++i) q += rrow[i] * rh[static_cast<size_t>(i)];
              gated[static_cast<size_t>(k)] = apply(fns[1], clip(pre[static_cast<size_t>(2 * H + k)] + q));
            }
          }
          for (int64_t k = 0; k < H; ++k) {
            const size_t u = static_cast<size_t>(k);
            next[u] = (1 - zv[u]) * gated[u] + zv[u] * h[u];
          }
        } else {
          // Gates i, o, f, c; peepholes P: i, o, f.
          for (int64_t k = 0; k < H; ++k) {
            const size_t ki = static_cast<size_t>(k), ko = static_cast<size_t>(H + k), kf = static_cast<size_t>(2 * H + k),
                         kc = static_cast<size_t>(3 * H + k);
            const double cprev = c[ki];
            const double it = apply(fns[0], clip(pre[ki] + rec[ki] + (P ? P[k] * cprev : 0.0)));
            const double ft = a.input_forget ? 1.0 - it : apply(fns[0], clip(pre[kf] + rec[kf] + (P ? P[2 * H + k] * cprev : 0.0)));
            const double ct = apply(fns[1], clip(pre[kc] + rec[kc]));
            const double cnew = ft * cprev + it * ct;
            const double ot = apply(fns[0], clip(pre[ko] + rec[ko] + (P ? P[H + k] * cnew : 0.0)));
            gated[ki] = cnew;
            next[ki] = ot * apply(fns[2], cnew);
          }
          c = gated;
        }
        h = next;
        for (int64_t k = 0; k < H; ++k) y.data<double>()[y_index(t, d, b, k)] = h[static_cast<size_t>(k)];
      }
      for (int64_t k = 0; k < H; ++k) {
        yh.data<double>()[state_index(d, b, k)] = h[static_cast<size_t>(k)];
        yc.data<double>()[state_index(d, b, k)] = c[static_cast<size_t>(k)];
      }
    }
  }
  QONNX_ASSIGN_OR_RETURN(Tensor y_out, exec::cast_tensor(y, dtype));
  QONNX_ASSIGN_OR_RETURN(Tensor yh_out, exec::cast_tensor(yh, dtype));
  ctx.set_output(0, std::move(y_out));
  ctx.set_output(1, std::move(yh_out));
  if (cell == Cell::kLstm && ctx.num_outputs() > 2) {
    QONNX_ASSIGN_OR_RETURN(Tensor yc_out, exec::cast_tensor(yc, dtype));
    ctx.set_output(2, std::move(yc_out));
  }
  return Status::ok();
}

template <Cell C>
exec::Kernel recurrent_kernel() {
  return exec::typed_kernel<RecurrentAttrs, prepare_recurrent<C>, recurrent>();
}

}  // namespace

void register_recurrent_kernels(exec::KernelRegistry& r) {
  // Version 1 (and GRU-3) had an `output_sequence` attribute; 7 dropped it, 14 added `layout`.
  r.add("", "RNN", {7, 13}, recurrent_kernel<Cell::kRnn>());
  r.add("", "RNN", {14, exec::kNoUpperVersion}, recurrent_kernel<Cell::kRnn>());
  r.add("", "GRU", {7, 13}, recurrent_kernel<Cell::kGru>());
  r.add("", "GRU", {14, exec::kNoUpperVersion}, recurrent_kernel<Cell::kGru>());
  r.add("", "LSTM", {7, 13}, recurrent_kernel<Cell::kLstm>());
  r.add("", "LSTM", {14, exec::kNoUpperVersion}, recurrent_kernel<Cell::kLstm>());
}

}  // namespace qonnx::kernels
