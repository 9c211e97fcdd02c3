// A dense tensor: element type, dims and a shared, 64-byte aligned buffer. Tensors are values:
// once a kernel has produced one nobody writes to it, so copies share storage safely.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace qonnx {

// Numbers match onnx.TensorProto.DataType so conversions at the protobuf edge are casts.
enum class DType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBFloat16 = 16,
  // Opset 19 float8 formats and opset 21 4-bit integers. In memory every element takes one byte
  // (an int4/uint4 element is a sign- or zero-extended int8/uint8); the protobuf edge packs 4-bit
  // tensors two per byte, low nibble first, as ONNX stores them.
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUInt4 = 21,
  kInt4 = 22,
};

using Dims = std::vector<int64_t>;

// Byte size of one element in memory; 0 for kString and kUndefined.
size_t dtype_size(DType dtype);
// Bytes ONNX stores for `numel` elements (raw_data, external data): 4-bit types pack two per byte.
uint64_t stored_nbytes(DType dtype, int64_t numel);
bool dtype_is_4bit(DType dtype);     // int4, uint4
// ONNX spelling, e.g. "float", "int8", "bool".
const char* dtype_name(DType dtype);
bool dtype_is_float(DType dtype);    // float16, bfloat16, float, double (not float8)
bool dtype_is_float8(DType dtype);   // the four opset-19 float8 formats
bool dtype_is_integer(DType dtype);  // signed and unsigned integers, 4-bit included (not bool)
bool dtype_is_signed(DType dtype);
bool dtype_known(int32_t value);     // value is a DType this build handles

// Product of dims, or -1 when it overflows int64 or a dim is negative.
int64_t checked_numel(const Dims& dims);
std::string dims_to_string(const Dims& dims);

// IEEE half and bfloat16 conversions (round half to even on narrowing).
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
float bfloat16_to_float(uint16_t b);
uint16_t float_to_bfloat16(float f);

// Process-wide cap on the bytes held by live tensors (`--max-memory`). A Tensor whose storage would
// push the total past it throws MemoryLimitError naming its dims, the limit and the bytes in use; the
// executor and the tensor decoder turn that into a Status (exit code 1). The default is 3/4 of the
// physical memory (8 GiB when that is unknown); 0 means no limit.
uint64_t default_memory_limit();
void set_memory_limit(uint64_t bytes);
uint64_t memory_limit();
uint64_t memory_in_use();

class MemoryLimitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What a value is: a dense tensor, or one of the ONNX container types the sequence and optional ops
// carry: seq(tensor(T)), optional(tensor(T)) and optional(seq(tensor(T))).
enum class ValueKind : uint8_t { kTensor, kSequence, kOptional };

class Tensor {
 public:
  Tensor() = default;
  // Allocates zero-initialised storage. dims must have a representable element count.
  Tensor(DType dtype, Dims dims);
  // Storage with unspecified contents, for a kernel output whose every element is written
  // (string tensors still get empty strings).
  static Tensor uninitialized(DType dtype, Dims dims);

  // A tensor over storage someone else keeps alive (a numpy array's buffer, zero-copy): `owner` is
  // released when the last copy of the tensor goes. Not counted against the memory limit (the owner
  // allocated it); elements are only aligned to their size. Not for string tensors.
  static Tensor borrowed(DType dtype, Dims dims, const void* data, std::shared_ptr<const void> owner);

  template <typename T>
  static Tensor scalar(DType dtype, T value) {
    Tensor t(dtype, {});
    *t.data<T>() = value;
    return t;
  }

  // A sequence of tensors of element type `elem` (kUndefined: not known, as for an empty sequence
  // read from a file). Containers have dtype() = their element type, dims [0] and no storage: only
  // kernels registered with Kernel::containers see them (the executor rejects them elsewhere).
  static Tensor sequence(DType elem, std::vector<Tensor> elements);
  // An optional holding `value` (a tensor or a sequence).
  static Tensor optional_of(Tensor value);
  // An empty optional of a tensor, or (of_sequence) of a sequence, of element type `elem`.
  static Tensor optional_none(DType elem, bool of_sequence);

  ValueKind kind() const { return kind_; }
  bool is_tensor() const { return kind_ == ValueKind::kTensor; }
  bool is_sequence() const { return kind_ == ValueKind::kSequence; }
  bool is_optional() const { return kind_ == ValueKind::kOptional; }
  // A sequence's tensors in order; an optional's value (none or one); empty for a tensor.
  const std::vector<Tensor>& elements() const;
  // An optional that holds (or would hold) a sequence.
  bool optional_of_sequence() const { return of_sequence_; }
  // "tensor(float)", "seq(tensor(int64))", "optional(seq(tensor(float)))": the ONNX type's spelling.
  std::string type_string() const;

  bool defined() const { return dtype_ != DType::kUndefined || kind_ != ValueKind::kTensor; }
  DType dtype() const { return dtype_; }
  const Dims& dims() const { return dims_; }
  size_t rank() const { return dims_.size(); }
  int64_t dim(size_t i) const { return dims_[i]; }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * dtype_size(dtype_); }

  template <typename T>
  T* data() { return reinterpret_cast<T*>(buffer_.get()); }
  template <typename T>
  const T* data() const { return reinterpret_cast<const T*>(buffer_.get()); }
  void* raw() { return buffer_.get(); }
  const void* raw() const { return buffer_.get(); }

  // String tensors keep their elements here instead of in the byte buffer.
  std::vector<std::string>& strings() { return *strings_; }
  const std::vector<std::string>& strings() const { return *strings_; }

  // Same storage, other dims (element counts must agree).
  Tensor reshaped(Dims dims) const;
  // Deep copy.
  Tensor clone() const;
  // No other tensor shares this storage (the executor may then let a kernel write into it).
  bool storage_unique() const { return buffer_ && buffer_.use_count() == 1 && (!strings_ || strings_.use_count() == 1); }
  // Byte-for-byte equality of dtype, dims and contents.
  bool identical(const Tensor& other) const;

 private:
  DType dtype_ = DType::kUndefined;
  Dims dims_;
  int64_t numel_ = 0;
  std::shared_ptr<uint8_t> buffer_;
  std::shared_ptr<std::vector<std::string>> strings_;
  ValueKind kind_ = ValueKind::kTensor;
  bool of_sequence_ = false;
  std::shared_ptr<const std::vector<Tensor>> elements_;  // containers only

  Tensor(DType dtype, Dims dims, bool zero);
};

}  // namespace qonnx
