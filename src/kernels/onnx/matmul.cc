// MatMul with numpy semantics (1-D promotion, batch broadcasting).
#include <type_traits>

#include "qonnx/exec/broadcast.h"
#include "qonnx/exec/dtype_dispatch.h"
#include "kernels/onnx/onnx_kernels.h"

namespace qonnx::kernels {
namespace {

Status matmul(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* a, ctx.required(0, "A"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* b, ctx.required(1, "B"));
  if (a->dtype() != b->dtype())
    return ctx.input_error(Code::kInvalidModel, 1, "type {} differs from input #0's {}", dtype_name(b->dtype()),
                           dtype_name(a->dtype()));
  if (a->rank() == 0 || b->rank() == 0) return ctx.error(Code::kInvalidModel, "MatMul inputs must have rank >= 1");
  Dims ad = a->dims(), bd = b->dims();
  bool a_vec = ad.size() == 1, b_vec = bd.size() == 1;
  if (a_vec) ad.insert(ad.begin(), 1);
  if (b_vec) bd.push_back(1);
  const int64_t m = ad[ad.size() - 2], k = ad.back(), n = bd.back();
  if (bd[bd.size() - 2] != k)
    return ctx.input_error(Code::kInvalidModel, 1, "inner dimension {} does not match input #0's {} ({} x {})",
                           bd[bd.size() - 2], k, dims_to_string(a->dims()), dims_to_string(b->dims()));
  Dims a_batch(ad.begin(), ad.end() - 2), b_batch(bd.begin(), bd.end() - 2), batch;
  if (!exec::broadcast_dims(a_batch, b_batch, &batch))
    return ctx.input_error(Code::kInvalidModel, 1, "batch dims {} do not broadcast with {}", dims_to_string(b_batch),
                           dims_to_string(a_batch));
  Dims out_dims = batch;
  if (!a_vec) out_dims.push_back(m);
  if (!b_vec) out_dims.push_back(n);
  Tensor out(a->dtype(), out_dims);
  Dims batch_full = batch;
  std::vector<int64_t> offsets_a, offsets_b;
  exec::for_each_broadcast<2>(batch_full, {&a_batch, &b_batch}, [&](int64_t, const auto& off) {
    offsets_a.push_back(off[0]);
    offsets_b.push_back(off[1]);
  });
  Status st;
  bool ok = exec::visit_dtype(a->dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, exec::Half> || std::is_same_v<T, exec::BFloat16>) {
      st = ctx.error(Code::kUnsupported, "MatMul on {} is not supported", dtype_name(a->dtype()));
    } else {
      using Acc = std::conditional_t<std::is_floating_point_v<T>, T, std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;
      const T* pa = a->data<T>();
      const T* pb = b->data<T>();
      T* pc = out.data<T>();
      for (size_t bi = 0; bi < offsets_a.size(); ++bi) {
        const T* A = pa + offsets_a[bi] * m * k;
        const T* B = pb + offsets_b[bi] * k * n;
        T* C = pc + static_cast<int64_t>(bi) * m * n;
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            Acc acc = 0;
            for (int64_t p = 0; p < k; ++p) acc += static_cast<Acc>(A[i * k + p]) * static_cast<Acc>(B[p * n + j]);
            C[i * n + j] = static_cast<T>(acc);
          }
        }
      }
    }
  });
  if (!ok) return ctx.error(Code::kUnsupported, "MatMul on {} is not supported", dtype_name(a->dtype()));
  QONNX_RETURN_IF_ERROR(st);
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_matmul_kernels(exec::KernelRegistry& r) { r.add("", "MatMul", 1, matmul); }

}  // namespace qonnx::kernels
