#include "qonnx/tensor.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <new>
#include <stdexcept>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace qonnx {

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kBool:
    case DType::kUInt8:
    case DType::kInt8:
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
    case DType::kUInt4:
    case DType::kInt4: return 1;
    case DType::kUInt16:
    case DType::kInt16:
    case DType::kFloat16:
    case DType::kBFloat16: return 2;
    case DType::kFloat:
    case DType::kInt32:
    case DType::kUInt32: return 4;
    case DType::kDouble:
    case DType::kInt64:
    case DType::kUInt64:
    case DType::kComplex64: return 8;
    case DType::kComplex128: return 16;
    case DType::kString:
    case DType::kUndefined: return 0;
  }
  return 0;
}

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kUndefined: return "undefined";
    case DType::kFloat: return "float";
    case DType::kUInt8: return "uint8";
    case DType::kInt8: return "int8";
    case DType::kUInt16: return "uint16";
    case DType::kInt16: return "int16";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kString: return "string";
    case DType::kBool: return "bool";
    case DType::kFloat16: return "float16";
    case DType::kDouble: return "double";
    case DType::kUInt32: return "uint32";
    case DType::kUInt64: return "uint64";
    case DType::kComplex64: return "complex64";
    case DType::kComplex128: return "complex128";
    case DType::kBFloat16: return "bfloat16";
    case DType::kFloat8E4M3FN: return "float8e4m3fn";
    case DType::kFloat8E4M3FNUZ: return "float8e4m3fnuz";
    case DType::kFloat8E5M2: return "float8e5m2";
    case DType::kFloat8E5M2FNUZ: return "float8e5m2fnuz";
    case DType::kUInt4: return "uint4";
    case DType::kInt4: return "int4";
  }
  return "unknown";
}

bool dtype_is_float(DType d) {
  return d == DType::kFloat || d == DType::kDouble || d == DType::kFloat16 || d == DType::kBFloat16;
}

bool dtype_is_float8(DType d) {
  return d == DType::kFloat8E4M3FN || d == DType::kFloat8E4M3FNUZ || d == DType::kFloat8E5M2 ||
         d == DType::kFloat8E5M2FNUZ;
}

bool dtype_is_integer(DType d) {
  switch (d) {
    case DType::kUInt4: case DType::kInt4:
    case DType::kUInt8: case DType::kInt8: case DType::kUInt16: case DType::kInt16:
    case DType::kInt32: case DType::kInt64: case DType::kUInt32: case DType::kUInt64: return true;
    default: return false;
  }
}

bool dtype_is_signed(DType d) {
  return d == DType::kInt4 || d == DType::kInt8 || d == DType::kInt16 || d == DType::kInt32 || d == DType::kInt64 ||
         dtype_is_float(d);
}

bool dtype_is_4bit(DType d) { return d == DType::kInt4 || d == DType::kUInt4; }

uint64_t stored_nbytes(DType dtype, int64_t numel) {
  const uint64_t n = static_cast<uint64_t>(std::max<int64_t>(numel, 0));
  return dtype_is_4bit(dtype) ? (n + 1) / 2 : n * dtype_size(dtype);
}

// Everything up to int4 (22); FLOAT4E2M1 (23) and later types are not handled.
bool dtype_known(int32_t value) { return value >= 1 && value <= 22; }

int64_t checked_numel(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return -1;
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) return -1;
    n *= d;
  }
  return n;
}

std::string dims_to_string(const Dims& dims) { return fmt::format("[{}]", fmt::join(dims, ", ")); }

float half_to_float(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      bits = sign | (static_cast<uint32_t>(112 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0));
  if (absx >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (absx < 0x38800000u) {  // result is subnormal or zero
    if (absx < 0x33000000u) return static_cast<uint16_t>(sign);
    uint32_t e = absx >> 23;
    uint32_t mant = (absx & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - e;  // 14 + (113 - e) - 1
    uint32_t result = mant >> (shift);
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (result & 1u))) ++result;
    return static_cast<uint16_t>(sign | result);
  }
  uint32_t result = absx - 0x38000000u;  // rebias exponent 127 -> 15
  uint32_t rem = result & 0x1fffu;
  result >>= 13;
  if (rem > 0x1000u || (rem == 0x1000u && (result & 1u))) ++result;
  return static_cast<uint16_t>(sign | result);
}

float bfloat16_to_float(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t float_to_bfloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

uint64_t default_memory_limit() {
  long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return uint64_t{8} << 30;
  return static_cast<uint64_t>(pages) / 4 * 3 * static_cast<uint64_t>(page);
}

namespace {

std::atomic<uint64_t> g_limit{default_memory_limit()};
std::atomic<uint64_t> g_in_use{0};

// Counts `bytes` against the limit before anything is allocated.
void reserve(uint64_t bytes, DType dtype, const Dims& dims) {
  uint64_t limit = g_limit.load(std::memory_order_relaxed);
  uint64_t before = g_in_use.fetch_add(bytes, std::memory_order_relaxed);
  if (limit != 0 && (bytes > limit || before > limit - bytes)) {
    g_in_use.fetch_sub(bytes, std::memory_order_relaxed);
    throw MemoryLimitError(fmt::format("a {} tensor of dims {} needs {} bytes, over the memory limit of {} bytes "
                                       "({} in use)",
                                       dtype_name(dtype), dims_to_string(dims), bytes, limit, before));
  }
}

void release(uint64_t bytes) { g_in_use.fetch_sub(bytes, std::memory_order_relaxed); }

// Large buffers come from malloc at a 64-byte aligned offset rather than from aligned_alloc: an
// aligned_alloc block asks for a little more than its size, so the hole a freed one leaves is too small
// for the next one of the same size and stays in the heap (converting a model that makes one 16 MiB
// weight per layer grew by every weight, although the tensors were long gone). Same-size malloc requests
// reuse their holes; small buffers keep aligned_alloc, which wastes nothing at their sizes. From malloc's
// first mmap threshold (128 KiB) on: a block malloc would map and unmap costs its page faults at every run
// (about 220 per run of a small Conv1d model at batch 16 when this was 1 MiB, none now).
constexpr size_t kOffsetAlignedBytes = size_t{128} << 10;
// From this size on (malloc's own largest mmap threshold) buffers are pages of their own, mapped here so
// that they can ask for 2 MiB pages: a 256 MiB weight then costs 128 page faults, not 65536. Sanitizer
// builds keep malloc, whose checks then cover these buffers too.
#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kMappedBytes = SIZE_MAX;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr size_t kMappedBytes = SIZE_MAX;
#else
constexpr size_t kMappedBytes = size_t{32} << 20;
#endif
#else
constexpr size_t kMappedBytes = size_t{32} << 20;
#endif

// Freed large blocks wait here for the next request of the same size: an inference repeats its sizes run
// after run, and a block given back to the system costs its page faults again (a 38 MiB output mapped
// afresh at every run spent a third of the run clearing pages). Offset-aligned malloc blocks wait up to
// kReusableBytes in all, mapped ones up to kReusableMappedBytes. The bytes waiting are free, not counted
// against the memory limit.
constexpr size_t kReusableBytes = size_t{64} << 20;
constexpr size_t kReusableMappedBytes = size_t{256} << 20;

class ReusableBlocks {
 public:
  using Release = void (*)(void* block, size_t rounded);
  ReusableBlocks(size_t capacity, Release release) : capacity_(capacity), release_(release) {}

  void* take(size_t rounded) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = 0; i < blocks_.size(); ++i)
      if (blocks_[i].first == rounded) {
        void* block = blocks_[i].second;
        blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(i));
        held_ -= rounded;
        return block;
      }
    return nullptr;
  }
  // Keeps the block, or releases the oldest ones to make room, or releases this one when it alone is too big.
  void give(size_t rounded, void* block) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (rounded <= capacity_) {
        while (held_ + rounded > capacity_) {
          release_(blocks_.front().second, blocks_.front().first);
          held_ -= blocks_.front().first;
          blocks_.erase(blocks_.begin());
        }
        blocks_.emplace_back(rounded, block);
        held_ += rounded;
        return;
      }
    }
    release_(block, rounded);
  }

 private:
  const size_t capacity_;
  const Release release_;
  std::mutex mutex_;
  std::vector<std::pair<size_t, void*>> blocks_;  // oldest first
  size_t held_ = 0;
};

// Never destroyed: tensors may outlive statics.
ReusableBlocks& reusable_blocks() {
  static ReusableBlocks* blocks = new ReusableBlocks(kReusableBytes, [](void* block, size_t) { std::free(block); });
  return *blocks;
}
ReusableBlocks& reusable_mappings() {
  static ReusableBlocks* blocks =
      new ReusableBlocks(kReusableMappedBytes, [](void* block, size_t rounded) { ::munmap(block, rounded); });
  return *blocks;
}

// 64-byte aligned storage of `bytes`, zeroed when `zero`; `extra` more bytes (held elsewhere, e.g.
// string headers) are counted against the limit for as long as the storage lives.
std::shared_ptr<uint8_t> allocate(size_t bytes, bool zero, DType dtype, const Dims& dims, uint64_t extra = 0) {
  size_t rounded = ((bytes + 63) / 64) * 64;
  if (rounded == 0) rounded = 64;
  uint64_t counted = rounded + extra;
  reserve(counted, dtype, dims);
  if (rounded >= kMappedBytes) {
    void* p = reusable_mappings().take(rounded);
    if (p) {
      if (zero) std::memset(p, 0, rounded);
    } else {
      p = ::mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) {
        release(counted);
        throw std::bad_alloc();
      }
#ifdef MADV_HUGEPAGE
      ::madvise(p, rounded, MADV_HUGEPAGE);  // where the system allows it
#endif
      // Fresh pages are zero already.
    }
    return std::shared_ptr<uint8_t>(static_cast<uint8_t*>(p), [counted, rounded](uint8_t* q) {
      reusable_mappings().give(rounded, q);
      release(counted);
    });
  }
  if (rounded >= kOffsetAlignedBytes) {
    void* block = reusable_blocks().take(rounded);
    if (!block) block = std::malloc(rounded + 64);
    if (!block) {
      release(counted);
      throw std::bad_alloc();
    }
    auto* p = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(block) + 64) & ~uintptr_t{63});
    if (zero) std::memset(p, 0, rounded);
    return std::shared_ptr<uint8_t>(p, [block, counted, rounded](uint8_t*) {
      reusable_blocks().give(rounded, block);
      release(counted);
    });
  }
  void* p = std::aligned_alloc(64, rounded);
  if (!p) {
    release(counted);
    throw std::bad_alloc();
  }
  if (zero) std::memset(p, 0, rounded);
  return std::shared_ptr<uint8_t>(static_cast<uint8_t*>(p), [counted](uint8_t* q) {
    std::free(q);
    release(counted);
  });
}

}  // namespace

void set_memory_limit(uint64_t bytes) { g_limit.store(bytes, std::memory_order_relaxed); }
uint64_t memory_limit() { return g_limit.load(std::memory_order_relaxed); }
uint64_t memory_in_use() { return g_in_use.load(std::memory_order_relaxed); }

Tensor::Tensor(DType dtype, Dims dims) : Tensor(dtype, std::move(dims), true) {}

Tensor Tensor::uninitialized(DType dtype, Dims dims) { return Tensor(dtype, std::move(dims), false); }

Tensor::Tensor(DType dtype, Dims dims, bool zero) : dtype_(dtype), dims_(std::move(dims)) {
  numel_ = checked_numel(dims_);
  if (numel_ < 0) throw std::length_error("tensor dims " + dims_to_string(dims_) + " are not allocatable");
  if (dtype_ == DType::kString) {
    // The element strings themselves are not counted; their headers are.
    size_t header = sizeof(std::string);
    if (static_cast<uint64_t>(numel_) > std::numeric_limits<size_t>::max() / header / 2)
      throw std::length_error("tensor dims " + dims_to_string(dims_) + " are too large");
    buffer_ = allocate(0, true, dtype_, dims_, static_cast<uint64_t>(numel_) * header);
    strings_ = std::make_shared<std::vector<std::string>>(static_cast<size_t>(numel_));
  } else {
    size_t esize = dtype_size(dtype_);
    if (esize != 0 && static_cast<uint64_t>(numel_) > std::numeric_limits<size_t>::max() / esize / 2)
      throw std::length_error("tensor dims " + dims_to_string(dims_) + " are too large");
    buffer_ = allocate(static_cast<size_t>(numel_) * esize, zero, dtype_, dims_);
  }
}

Tensor Tensor::borrowed(DType dtype, Dims dims, const void* data, std::shared_ptr<const void> owner) {
  Tensor t;
  t.dtype_ = dtype;
  t.dims_ = std::move(dims);
  t.numel_ = checked_numel(t.dims_);
  if (t.numel_ < 0 || dtype == DType::kString || dtype_size(dtype) == 0)
    throw std::invalid_argument("Tensor::borrowed: dims " + dims_to_string(t.dims_) + " of " + dtype_name(dtype));
  // Aliasing constructor: shares the owner's lifetime, points at the data. Kernels never write into
  // a tensor someone else holds (storage_unique), so the const_cast is never acted on.
  t.buffer_ = std::shared_ptr<uint8_t>(std::const_pointer_cast<void>(std::move(owner)),
                                       static_cast<uint8_t*>(const_cast<void*>(data)));
  return t;
}

Tensor Tensor::sequence(DType elem, std::vector<Tensor> elements) {
  Tensor t;
  t.kind_ = ValueKind::kSequence;
  t.dtype_ = elem;
  t.dims_ = {0};
  t.elements_ = std::make_shared<const std::vector<Tensor>>(std::move(elements));
  return t;
}

Tensor Tensor::optional_of(Tensor value) {
  Tensor t;
  t.kind_ = ValueKind::kOptional;
  t.dtype_ = value.dtype();
  t.of_sequence_ = value.is_sequence();
  t.dims_ = {0};
  t.elements_ = std::make_shared<const std::vector<Tensor>>(std::vector<Tensor>{std::move(value)});
  return t;
}

Tensor Tensor::optional_none(DType elem, bool of_sequence) {
  Tensor t;
  t.kind_ = ValueKind::kOptional;
  t.dtype_ = elem;
  t.of_sequence_ = of_sequence;
  t.dims_ = {0};
  t.elements_ = std::make_shared<const std::vector<Tensor>>();
  return t;
}

const std::vector<Tensor>& Tensor::elements() const {
  static const std::vector<Tensor> none;
  return elements_ ? *elements_ : none;
}

std::string Tensor::type_string() const {
  const std::string tensor = std::string("tensor(") + dtype_name(dtype_) + ")";
  switch (kind_) {
    case ValueKind::kTensor: return tensor;
    case ValueKind::kSequence: return "seq(" + tensor + ")";
    case ValueKind::kOptional: return "optional(" + (of_sequence_ ? "seq(" + tensor + ")" : tensor) + ")";
  }
  return tensor;
}

Tensor Tensor::reshaped(Dims dims) const {
  Tensor t = *this;
  int64_t n = checked_numel(dims);
  if (n != numel_) throw std::invalid_argument("reshape changes the element count");
  t.dims_ = std::move(dims);
  return t;
}

Tensor Tensor::clone() const {
  if (kind_ != ValueKind::kTensor) return *this;  // containers are immutable values
  Tensor t = uninitialized(dtype_, dims_);
  if (dtype_ == DType::kString) {
    *t.strings_ = *strings_;
  } else if (nbytes() > 0) {
    std::memcpy(t.buffer_.get(), buffer_.get(), nbytes());
  }
  return t;
}

bool Tensor::identical(const Tensor& other) const {
  if (dtype_ != other.dtype_ || dims_ != other.dims_ || kind_ != other.kind_ || of_sequence_ != other.of_sequence_) return false;
  if (kind_ != ValueKind::kTensor) {
    const auto& a = elements();
    const auto& b = other.elements();
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!a[i].identical(b[i])) return false;
    return true;
  }
  if (dtype_ == DType::kString) return *strings_ == *other.strings_;
  return nbytes() == 0 || std::memcmp(buffer_.get(), other.buffer_.get(), nbytes()) == 0;
}

}  // namespace qonnx
