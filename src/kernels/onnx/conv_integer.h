// The integer path of a convolution (docs/arithmetic.md), shared by Conv and by a stride-1 ConvTranspose,
// which computes as a Conv with its kernel flipped.
#pragma once

#include <cstdint>

#include "kernels/common/conv_util.h"
#include "kernels/common/integer_form.h"
#include "qonnx/exec/kernel.h"
#include "qonnx/tensor.h"

namespace qonnx::kernels {

struct ConvShape {
  int64_t batch = 0, channels = 0, filters = 0, group = 1;
  WindowGeometry geo;
  int64_t in_size = 1, kernel_size = 1, out_size = 1;  // products of the spatial dims
  Dims out_dims;
};

// Byte codes of a channels-first integer Conv (exec::KernelContext::input_codes): `input` the input's (x's
// floats are then not read), `output_form` the form whose codes to make of the output (nullptr: none), into
// `output` (left undefined when they could not be made); `floats_needed` false: y may be left unwritten
// when they are made.
struct CodesIo {
  const uint8_t* input = nullptr;
  const exec::IntegerForm* output_form = nullptr;
  bool floats_needed = true;
  Tensor output;
};

// The integer path's run of `layer` (W's integers packed as (M, kernel offsets, C/group) rows) over the
// shape s; `epilogue` (may be null) is applied to every output element. false (y untouched) when x holds a
// value its form does not describe (a NaN): the caller takes the float path.
bool conv_integer_path(const ConvShape& s, const IntegerLayer& layer, const float* x, bool channels_last, float* y,
                       const exec::Epilogue* epilogue, CodesIo* io = nullptr);

}  // namespace qonnx::kernels
