// Integer forms (exec::IntegerForm: integers times scales) of quantizer outputs, and the pieces the
// integer path of Conv/MatMul/Gemm is built from: the operands' integers, checked against the float
// values they stand for, and the one scaling of the exact sums (docs/arithmetic.md).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/common/igemm.h"
#include "kernels/common/quant_avx2.h"
#include "qonnx/exec/kernel.h"
#include "qonnx/tensor.h"

namespace qonnx::kernels {

// The form of (q - zero_point) * scale for integer codes q in [qmin, qmax], with scale and zero point
// broadcast against an operand of rank `rank` (-1: unknown): one value each, or values along one
// axis (the same for both). nullopt when a zero point is not an integer, a scale is not finite and
// non-zero, the layout is neither, or q - zero_point is not exact in float32 (|q|, |zero point| > 2^24).
// `zero_point` may be undefined (0).
std::optional<exec::IntegerForm> scaled_integer_form(const Tensor& scale, const Tensor& zero_point, int64_t qmin,
                                                     int64_t qmax, int64_t rank);

// The rank of a node's input i known at plan time (its constant's, else its declared type's), or -1.
int64_t known_input_rank(const exec::PrepackContext& context, size_t i);

// Integers of a constant float operand with form `form`, in the operand's element order: v = round(x /
// scale) for each element's scale; false unless every v is in [-128, 127] and float32 v * scale is
// the element bit for bit.
bool int8_values(const Tensor& x, const exec::IntegerForm& form, std::vector<int8_t>* values);

// An activation operand of the integer path: one scale, integers in [lo, hi], stored as u = v - lo in
// a byte (hi - lo <= 255), so 0 (a padding tap) is u = -lo (needs lo <= 0 <= hi).
struct ByteActivation {
  float scale = 1.0f;
  int64_t lo = 0, hi = 0;
  uint8_t zero_byte() const { return static_cast<uint8_t>(-lo); }
  int max_byte() const { return static_cast<int>(hi - lo); }
};
// Where a layer puts its output's byte codes (exec::KernelContext::set_output_codes): their form, the
// (N, positions, C) buffer, whether the floats are written too, and whether every code could be made (a
// block that could not clears it).
struct OutputCodes {
  ByteActivation form;
  uint8_t* bytes = nullptr;
  bool floats = true;
  std::atomic<bool> made{true};
};

// Where requantize_run writes `form`'s activation bytes: u.
inline avx2::CodeTarget code_target(const ByteActivation& form, uint8_t* u) {
  return {1.0f / form.scale, form.scale, static_cast<float>(form.lo), static_cast<float>(form.hi), u};
}

// The byte form of an activation with integer form `form`, or nullopt (per-channel scale, too wide a
// range, or 0 outside it).
std::optional<ByteActivation> byte_activation(const exec::IntegerForm* form);

// u[i] = round(x[i] / a.scale) - a.lo for i < n; false unless every x[i] is float32 v * a.scale bit for
// bit with an integer v in [a.lo, a.hi] (a NaN, or a value the form does not describe: the caller
// takes the float path). Split between threads.
bool activation_bytes(const float* x, int64_t n, const ByteActivation& a, uint8_t* u);
// The same on the calling thread (a layer making its output's byte codes block by block).
bool activation_bytes_serial(const float* x, int64_t n, const ByteActivation& a, uint8_t* u);

// An epilogue that is one elementwise step (Relu, a per-tensor Quant, BipolarQuant), which the integer path
// can run in registers right after its rounding (avx2::requantize_run).
class SteppedEpilogue : public exec::Epilogue {
 public:
  virtual avx2::ElementwiseStep step() const = 0;
};
// The steps of every part of `epilogue` (none: an empty list); false when a part is not a SteppedEpilogue.
bool epilogue_steps(const exec::Epilogue* epilogue, std::vector<avx2::ElementwiseStep>* steps);

// A layer's constant weights on the integer path, made at plan time: per group, the weights' integers
// packed as the right operand of int8_gemm (output columns = the layer's output channels of the group),
// and per output channel the scaling of its exact sums.
struct IntegerLayer {
  ByteActivation x;
  // Per group. On AVX2 without VNNI, 8-bit weights against full-range bytes would need the exact 16-bit
  // path (vpmaddwd, float speed); their nibbles w = 16 * (w >> 4) + (w & 15) each stay under vpmaddubsw's
  // bound, so they are packed as two products (groups: w & 15, high_groups: w >> 4) whose exact sums
  // combine into the same integer: faster, and the same bits.
  std::vector<Int8Weights> groups;
  std::vector<Int8Weights> high_groups;
  std::vector<float> weight_scale;  // per output channel
  std::vector<double> scale;    // per output channel: double(x scale) * double(weight scale)
  // Per output channel: x.lo * (sum of its weights), undoing the byte shift; |x.lo| <= the max byte, so
  // make_integer_layer's bound keeps it (and every exact sum) inside int32.
  std::vector<int32_t> offset;
  std::vector<double> bias;     // per output channel; empty: no bias
  int64_t max_abs_weight = 0;

  // sum_k v_k * w_k over K taps for output channel `channel`, from int8_gemm's sum of bytes u_k * w_k.
  int64_t exact_sum(int32_t byte_sum, int64_t channel) const {
    return int64_t{byte_sum} + offset[static_cast<size_t>(channel)];
  }
  inline float output(int32_t byte_sum, int64_t channel) const;
  // y[j] = output(byte_sums[j], channel0 + j) for j < count (vectorized where the CPU allows; the same bits).
  void outputs(const int32_t* byte_sums, int64_t count, int64_t channel0, float* y) const;
  // For `rows` rows of `count` channels from channel0 (sums row i at byte_sums + i * count, y at y + i * y_ld):
  // outputs(), then `epilogue` on y, then with `codes` the activation bytes of y under `form` (row i at codes +
  // i * codes_ld); false unless all of them could be made (true without codes). In one pass in registers where `steps`
  // (epilogue_steps of `epilogue`, or null) and the CPU allow; the same bits either way. `floats` false: only
  // the codes are wanted, and y is scratch that may be left unwritten.
  bool outputs_through(const int32_t* byte_sums, int64_t rows, int64_t count, int64_t channel0,
                       const exec::Epilogue* epilogue, const std::vector<avx2::ElementwiseStep>* steps, float* y,
                       int64_t y_ld, const ByteActivation* form, uint8_t* codes, int64_t codes_ld,
                       bool floats = true) const;
  // c (m x n, row stride n) = the exact sums of a (m x k bytes, row stride lda) times group g's weights:
  // int8_gemm's, once or on both nibbles.
  void group_sums(size_t g, int64_t m, const uint8_t* a, int64_t lda, int32_t* c) const;
  // The same with left row i at rows[i], read in `slices` when not null (int8_gemm_rows).
  void group_sums(size_t g, int64_t m, const uint8_t* const* rows, const Int8Slices* slices, int32_t* c) const;
  // y (rows x n) = a (rows x k floats) x the weights, scaled (MatMul, Gemm); false (nothing written) when a
  // holds a value its form does not describe (a NaN): the caller takes the float path. `epilogue` (may be
  // null) is applied to each row of y. With `a_codes` (a's byte codes in its own order, as a producer made
  // them) a is not read. With `out`, y's codes under out->form (rows x n) too; out->made cleared when they
  // could not all be made, and then every float of y is written whatever out->floats says.
  // With `row_offset`, row i's sums plus row_offset[i] are the exact sums (a runtime B's shift).
  bool rows_product(int64_t rows, int64_t k, const float* a, float* y, const exec::Epilogue* epilogue = nullptr,
                    const uint8_t* a_codes = nullptr, OutputCodes* out = nullptr,
                    const int32_t* row_offset = nullptr) const;
  // The weights as the float32 tensor (dims `dims`, laid out as make_integer_layer's `values`) they came
  // from: each v * scale, which the plan checked equals the original bit for bit. The plan holds no float
  // copy (PrepackContext::captured_inputs); a run whose input the integer path cannot take needs one.
  Tensor float_weights(const Dims& dims, bool transposed) const;
};

// A matrix product's integer run (MatMul, Gemm without transA) into y (ctx's output 0 buffer, rows x n):
// rows_product on the byte codes of A the executor hands over (in A's own order) or on A's floats, publishing
// y's codes when asked; the epilogue is marked done. false when A's floats hold a value its form does not
// describe (the caller takes the float path).
bool matrix_product_run(exec::KernelContext& ctx, const IntegerLayer& layer, int64_t rows, int64_t k, const float* a,
                        Tensor& y);

// Where a matrix product's prepack says it reads and writes byte codes in the value's own order.
void declare_stored_codes(const exec::PrepackContext& c);

// The integer layer of weights with integers `values` laid out as `groups` blocks of (k x n), each row-major
// with row stride ld (or n x k, transposed, as a Conv's and a Gemm transB's (M, K) weights), the weight
// scale per output channel in `weight_scales` (one value: every channel), and an optional bias per output
// channel. nullopt with `why` set when the sums could leave int32 (k * max byte * max |w| >= 2^31).
std::optional<IntegerLayer> make_integer_layer(const ByteActivation& x, const std::vector<int8_t>& values, int64_t groups,
                                               int64_t k, int64_t n, bool transposed,
                                               const std::vector<float>& weight_scales, const Tensor* bias,
                                               std::string* why);

// The integer layer of a runtime right operand of one scale (MatMul's B between two activations): its
// integers packed (Int8Weights::pack_offset_bytes), every output column scaled by x.scale * weight_scale, no
// bias. nullopt with `why` set when the sums could leave int32.
std::optional<IntegerLayer> runtime_weights_layer(const ByteActivation& x, Int8Weights packed, float weight_scale,
                                                  std::string* why);

// The prepack of a layer that takes the float path: records "float: <why>" as the step's path note
// (PrepackContext::path_note) and returns nothing for the plan to hold.
exec::PreparedState float_path(const exec::PrepackContext& c, std::string why);

// A one-line description of the integer path for PrepackContext::path_note.
std::string integer_path_note(const IntegerLayer& layer);

// Storage a kernel writes in full before reading it: not zero-filled (a std::vector would clear it), and
// from the tensor allocator, so it counts against the memory limit and reuses a run's freed blocks.
template <typename T>
class Scratch {
 public:
  explicit Scratch(int64_t n)
      : buffer_(Tensor::uninitialized(DType::kUInt8, {std::max<int64_t>(n, 1) * static_cast<int64_t>(sizeof(T))})),
        data_(reinterpret_cast<T*>(buffer_.data<uint8_t>())) {}
  T* get() const { return data_; }
  T& operator[](int64_t i) const { return data_[i]; }

 private:
  Tensor buffer_;
  T* data_;
};
template <typename T>
Scratch<T> scratch(int64_t n) {
  return Scratch<T>(n);
}

// An integer layer's input as channels-last activation bytes (N, positions, C) under `form`: `given` (the
// producer's codes, exec::KernelContext::input_codes) as they are, else made from x (N, C, positions) into
// `storage`; null when x holds a value the form does not describe (a NaN: the caller takes the float path).
const uint8_t* channels_last_bytes(const uint8_t* given, const float* x, int64_t batch, int64_t channels,
                                   int64_t positions, const ByteActivation& form, Scratch<uint8_t>& storage);

// The one rounding of the integer path: y = float32(double(sum) * scale + bias), scale = double(activation
// scale) * double(weight scale) (exact in double), bias 0 when absent.
inline float scale_sum(int64_t sum, double scale, double bias) {
  return static_cast<float>(static_cast<double>(sum) * scale + bias);
}

float IntegerLayer::output(int32_t byte_sum, int64_t channel) const {
  const size_t c = static_cast<size_t>(channel);
  return scale_sum(exact_sum(byte_sum, channel), scale[c], bias.empty() ? 0.0 : bias[c]);
}

}  // namespace qonnx::kernels
