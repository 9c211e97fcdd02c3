// The training optimizers of domain ai.onnx.preview.training (version 1): Adagrad, Momentum and Adam.
// Each takes a learning rate R and an update count T (scalars), then n tensors X, their n gradients G
// and n state tensors per state (Adagrad: H; Momentum: V; Adam: V, H), and returns the n updated X
// followed by the updated states, every group in input order. Per element, with G' = norm_coefficient *
// X + G:
//   Adagrad:  r = R / (1 + T * decay_factor); H' = H + G'^2; X' = X - r * G' / (sqrt(H') + epsilon)
//   Momentum: b = T > 0 ? beta : 1; V' = alpha * V + b * G';
//             standard: X' = X - R * V'    nesterov: X' = X - R * (G' + alpha * V')
//   Adam:     V' = alpha * V + (1 - alpha) * G'; H' = beta * H + (1 - beta) * G'^2;
//             r = T > 0 ? R * sqrt(1 - beta^T) / (1 - alpha^T) : R;
//             X' = (1 - norm_coefficient_post) * (X - r * V' / (sqrt(H') + epsilon))
// computed in double and rounded once to each tensor's type (float or double).
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/common/attr_check.h"
#include "kernels/onnx/elementwise_common.h"
#include "kernels/onnx/onnx_kernels.h"

namespace qonnx::kernels {
namespace {

constexpr const char* kTrainingDomain = "ai.onnx.preview.training";

enum class Optimizer { kAdagrad, kMomentum, kAdam };

struct OptimizerAttrs {
  Optimizer kind = Optimizer::kAdagrad;
  double alpha = 0, beta = 0, epsilon = 0, decay_factor = 0, norm_coefficient = 0, norm_coefficient_post = 0;
  bool nesterov = false;
};

Result<float> required_float(const ir::Node& node, const char* name) {
  if (!node.has_attr(name)) return Status(Code::kInvalidModel, fmt::format("attribute '{}' is required", name));
  return float_attr(node, name, 0.0f);
}

template <Optimizer K>
Result<OptimizerAttrs> prepare_optimizer(const ir::Node& node, int64_t) {
  OptimizerAttrs a;
  a.kind = K;
  if constexpr (K == Optimizer::kAdagrad) {
    QONNX_ASSIGN_OR_RETURN(a.decay_factor, float_attr(node, "decay_factor", 0.0f));
    QONNX_ASSIGN_OR_RETURN(a.epsilon, float_attr(node, "epsilon", 1e-6f));
    QONNX_ASSIGN_OR_RETURN(a.norm_coefficient, float_attr(node, "norm_coefficient", 0.0f));
  } else if constexpr (K == Optimizer::kMomentum) {
    QONNX_ASSIGN_OR_RETURN(a.alpha, required_float(node, "alpha"));
    QONNX_ASSIGN_OR_RETURN(a.beta, required_float(node, "beta"));
    QONNX_ASSIGN_OR_RETURN(a.norm_coefficient, required_float(node, "norm_coefficient"));
    if (!node.has_attr("mode")) return Status(Code::kInvalidModel, "attribute 'mode' is required");
    QONNX_ASSIGN_OR_RETURN(const std::string mode, string_attr(node, "mode", "standard"));
    QONNX_RETURN_IF_ERROR(check_one_of("mode", mode, {"standard", "nesterov"}));
    a.nesterov = mode == "nesterov";
  } else {
    QONNX_ASSIGN_OR_RETURN(a.alpha, float_attr(node, "alpha", 0.9f));
    QONNX_ASSIGN_OR_RETURN(a.beta, float_attr(node, "beta", 0.999f));
    QONNX_ASSIGN_OR_RETURN(a.epsilon, float_attr(node, "epsilon", 1e-6f));
    QONNX_ASSIGN_OR_RETURN(a.norm_coefficient, float_attr(node, "norm_coefficient", 0.0f));
    QONNX_ASSIGN_OR_RETURN(a.norm_coefficient_post, float_attr(node, "norm_coefficient_post", 0.0f));
  }
  return a;
}

Status optimize(exec::KernelContext& ctx, const OptimizerAttrs& a) {
  const size_t states = a.kind == Optimizer::kAdam ? 2 : 1;
  const size_t groups = 2 + states;  // X, G, states
  const size_t tensors = ctx.num_inputs() < 2 ? 0 : ctx.num_inputs() - 2;
  if (tensors == 0 || tensors % groups != 0)
    return ctx.error(Code::kInvalidModel, "takes R, T and {} groups of n tensors (X, G{}), got {} inputs", groups,
                     a.kind == Optimizer::kAdam ? ", V, H" : a.kind == Optimizer::kMomentum ? ", V" : ", H", ctx.num_inputs());
  const size_t n = tensors / groups;
  if (ctx.num_outputs() > n * (1 + states))
    return ctx.error(Code::kInvalidModel, "has {} outputs, more than the {} it computes", ctx.num_outputs(), n * (1 + states));
  QONNX_ASSIGN_OR_RETURN(const Tensor* r, ctx.required(0, "R"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* t, ctx.required(1, "T"));
  if (r->dtype() != DType::kFloat && r->dtype() != DType::kDouble) return unsupported_type(ctx, 0, r->dtype());
  if (t->dtype() != DType::kInt64) return unsupported_type(ctx, 1, t->dtype());
  if (r->numel() != 1) return ctx.input_error(Code::kInvalidModel, 0, "must be a scalar, got shape {}", dims_to_string(r->dims()));
  if (t->numel() != 1) return ctx.input_error(Code::kInvalidModel, 1, "must be a scalar, got shape {}", dims_to_string(t->dims()));
  const double rate = exec::element_as_double(*r, 0);
  const int64_t step = t->data<int64_t>()[0];
  for (size_t i = 0; i < n; ++i) {
    std::vector<const Tensor*> in(groups);
    for (size_t g = 0; g < groups; ++g) {
      const size_t index = 2 + g * n + i;
      QONNX_ASSIGN_OR_RETURN(in[g], ctx.required(index, "optimizer tensor"));
      if (in[g]->dtype() != DType::kFloat && in[g]->dtype() != DType::kDouble) return unsupported_type(ctx, index, in[g]->dtype());
      if (g > 0 && in[g]->dims() != in[0]->dims())
        return ctx.input_error(Code::kInvalidModel, index, "must have the shape {} of input #{}, got {}", dims_to_string(in[0]->dims()),
                               2 + i, dims_to_string(in[g]->dims()));
    }
    const Tensor& x = *in[0];
    const Tensor& grad = *in[1];
    Tensor x_new(x.dtype(), x.dims());
    std::vector<Tensor> state_new;
    for (size_t s = 0; s < states; ++s) state_new.emplace_back(in[2 + s]->dtype(), in[2 + s]->dims());
    auto put = [](Tensor& dst, int64_t k, double v) {
      if (dst.dtype() == DType::kFloat) dst.data<float>()[k] = static_cast<float>(v);
      else dst.data<double>()[k] = v;
    };
    for (int64_t k = 0; k < x.numel(); ++k) {
      const double xv = exec::element_as_double(x, k);
      const double g = a.norm_coefficient * xv + exec::element_as_double(grad, k);
      switch (a.kind) {
        case Optimizer::kAdagrad: {
          const double lr = rate / (1.0 + static_cast<double>(step) * a.decay_factor);
          const double h = exec::element_as_double(*in[2], k) + g * g;
          put(x_new, k, xv - lr * g / (std::sqrt(h) + a.epsilon));
          put(state_new[0], k, h);
          break;
        }
        case Optimizer::kMomentum: {
          const double b = step > 0 ? a.beta : 1.0;
          const double v = a.alpha * exec::element_as_double(*in[2], k) + b * g;
          put(x_new, k, a.nesterov ? xv - rate * (g + a.alpha * v) : xv - rate * v);
          put(state_new[0], k, v);
          break;
        }
        case Optimizer::kAdam: {
          const double v = a.alpha * exec::element_as_double(*in[2], k) + (1 - a.alpha) * g;
          const double h = a.beta * exec::element_as_double(*in[3], k) + (1 - a.beta) * g * g;
          const double tt = static_cast<double>(step);
          const double lr = step > 0 ? rate * std::sqrt(1 - std::pow(a.beta, tt)) / (1 - std::pow(a.alpha, tt)) : rate;
          put(x_new, k, (1 - a.norm_coefficient_post) * (xv - lr * v / (std::sqrt(h) + a.epsilon)));
          put(state_new[0], k, v);
          put(state_new[1], k, h);
          break;
        }
      }
    }
    ctx.set_output(i, std::move(x_new));
    for (size_t s = 0; s < states; ++s) ctx.set_output(n * (1 + s) + i, std::move(state_new[s]));
  }
  return Status::ok();
}

}  // namespace

void register_optimizer_kernels(exec::KernelRegistry& r) {
  r.add(kTrainingDomain, "Adagrad", {1, exec::kNoUpperVersion},
        exec::typed_kernel<OptimizerAttrs, prepare_optimizer<Optimizer::kAdagrad>, optimize>());
  r.add(kTrainingDomain, "Momentum", {1, exec::kNoUpperVersion},
        exec::typed_kernel<OptimizerAttrs, prepare_optimizer<Optimizer::kMomentum>, optimize>());
  r.add(kTrainingDomain, "Adam", {1, exec::kNoUpperVersion},
        exec::typed_kernel<OptimizerAttrs, prepare_optimizer<Optimizer::kAdam>, optimize>());
}

}  // namespace qonnx::kernels
