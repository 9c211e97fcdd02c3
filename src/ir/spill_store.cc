#include "ir/spill_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include <fmt/format.h>

#include "ir/tensor_codec.h"

namespace qonnx::ir {
namespace fs = std::filesystem;

namespace {

// The scratch folder lives in TMPDIR and disappears with the process.
class SpillFile {
 public:
  ~SpillFile() {
    if (fd_ >= 0) ::close(fd_);
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }

  Result<uint64_t> append(const void* data, size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (fd_ < 0) QONNX_RETURN_IF_ERROR(open());
    uint64_t offset = size_;
    size_t done = 0;
    while (done < bytes) {
      ssize_t n = ::pwrite(fd_, static_cast<const char*>(data) + done, bytes - done, static_cast<off_t>(offset + done));
      if (n < 0) {
        if (errno == EINTR) continue;
        return Status(Code::kCannotWrite, fmt::format("cannot write scratch file in {}: {}", dir_.string(), std::strerror(errno)));
      }
      done += static_cast<size_t>(n);
    }
    size_ += bytes;
    return offset;
  }

  fs::path dir() {
    std::lock_guard<std::mutex> lock(mutex_);
    return dir_;
  }
  static constexpr const char* kName = "spill.bin";

 private:
  Status open() {
    std::string tmpl = (fs::temp_directory_path() / "qonnx-cc-spill-XXXXXX").string();
    if (!::mkdtemp(tmpl.data()))
      return Status(Code::kCannotWrite, fmt::format("cannot create a scratch folder in {}: {}", fs::temp_directory_path().string(), std::strerror(errno)));
    dir_ = tmpl;
    fd_ = ::open((dir_ / kName).c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd_ < 0) return Status(Code::kCannotWrite, fmt::format("cannot create scratch file: {}", std::strerror(errno)));
    return Status::ok();
  }

  std::mutex mutex_;
  fs::path dir_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

SpillFile& spill_file() {
  static SpillFile file;
  return file;
}

std::atomic<uint64_t> g_budget{kDefaultSpillBudget};
std::atomic<uint64_t> g_held{0};
std::atomic<uint64_t> g_peak{0};

void note_held(uint64_t now) {
  uint64_t peak = g_peak.load(std::memory_order_relaxed);
  while (now > peak && !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

// Counts `bytes` as held when the total stays within the budget.
bool try_hold(uint64_t bytes) {
  const uint64_t budget = g_budget.load(std::memory_order_relaxed);
  uint64_t held = g_held.load(std::memory_order_relaxed);
  do {
    if (bytes > budget || held > budget - bytes) return false;
  } while (!g_held.compare_exchange_weak(held, held + bytes, std::memory_order_relaxed));
  note_held(held + bytes);
  return true;
}

void hold(uint64_t bytes) { note_held(g_held.fetch_add(bytes, std::memory_order_relaxed) + bytes); }

// The deleter of a held proto: releases its bytes from the count.
struct HeldProto {
  uint64_t bytes;
  void operator()(onnx::TensorProto* proto) const {
    delete proto;
    g_held.fetch_sub(bytes, std::memory_order_relaxed);
  }
};

std::shared_ptr<onnx::TensorProto> held(std::unique_ptr<onnx::TensorProto> proto, uint64_t bytes) {
  return std::shared_ptr<onnx::TensorProto>(proto.release(), HeldProto{bytes});
}

// Bytes a proto keeps in memory for its data.
uint64_t data_bytes(const onnx::TensorProto& proto) {
  uint64_t bytes = proto.raw_data().size();
  for (const std::string& s : proto.string_data()) bytes += s.size() + sizeof(std::string);
  return bytes;
}

// Appends `tensor` to the scratch file and makes `proto` an external reference to it.
Status spill(const Tensor& tensor, onnx::TensorProto* proto) {
  SpillFile& file = spill_file();
  const StoredBytes bytes(tensor);
  QONNX_ASSIGN_OR_RETURN(uint64_t offset, file.append(bytes.data(), bytes.size()));
  proto->set_data_type(static_cast<int32_t>(tensor.dtype()));
  proto->clear_dims();
  for (int64_t d : tensor.dims()) proto->add_dims(d);
  proto->clear_raw_data();
  proto->set_data_location(onnx::TensorProto::EXTERNAL);
  proto->clear_external_data();
  auto add = [&](const char* k, const std::string& v) {
    auto* e = proto->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add("location", SpillFile::kName);
  add("offset", std::to_string(offset));
  add("length", std::to_string(bytes.size()));
  return Status::ok();
}

}  // namespace

void set_spill_budget(uint64_t bytes) { g_budget.store(bytes, std::memory_order_relaxed); }
uint64_t spill_budget() { return g_budget.load(std::memory_order_relaxed); }
uint64_t held_bytes() { return g_held.load(std::memory_order_relaxed); }
uint64_t peak_held_bytes() { return g_peak.load(std::memory_order_relaxed); }
void reset_peak_held_bytes() { g_peak.store(g_held.load(std::memory_order_relaxed), std::memory_order_relaxed); }

Result<std::shared_ptr<onnx::TensorProto>> make_stored_proto(const Tensor& tensor, fs::path* base_dir) {
  auto proto = std::make_unique<onnx::TensorProto>();
  if (tensor.dtype() == DType::kString) {
    // No byte form for the scratch file: inline and counted, whatever the budget.
    encode_tensor(tensor, proto.get());
    const uint64_t bytes = data_bytes(*proto);
    hold(bytes);
    return held(std::move(proto), bytes);
  }
  const uint64_t bytes = stored_nbytes(tensor.dtype(), tensor.numel());
  if (try_hold(bytes)) {
    encode_tensor(tensor, proto.get());
    return held(std::move(proto), bytes);
  }
  QONNX_RETURN_IF_ERROR(spill(tensor, proto.get()));
  *base_dir = spill_file().dir();
  return std::shared_ptr<onnx::TensorProto>(std::move(proto));
}

std::shared_ptr<onnx::TensorProto> copy_stored_proto(const std::shared_ptr<onnx::TensorProto>& proto) {
  auto copy = std::make_unique<onnx::TensorProto>(*proto);
  if (const HeldProto* h = std::get_deleter<HeldProto>(proto)) {
    hold(h->bytes);
    return held(std::move(copy), h->bytes);
  }
  return std::shared_ptr<onnx::TensorProto>(std::move(copy));
}

bool in_scratch_file(const fs::path& base_dir) {
  return !base_dir.empty() && base_dir == spill_file().dir();
}

}  // namespace qonnx::ir
