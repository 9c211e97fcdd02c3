#include "ir/spill_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
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
  // The location of deferred tensors (no such file): their offset is their key in the source table.
  static constexpr const char* kDeferredName = "deferred";

  // The folder, created on first use.
  Result<fs::path> folder() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (fd_ < 0) QONNX_RETURN_IF_ERROR(open());
    return dir_;
  }

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

void set_external(onnx::TensorProto* proto, DType dtype, const Dims& dims, const char* location, uint64_t offset,
                  uint64_t length);

// Appends `tensor` to the scratch file and makes `proto` an external reference to it.
Status spill(const Tensor& tensor, onnx::TensorProto* proto) {
  const StoredBytes bytes(tensor);
  QONNX_ASSIGN_OR_RETURN(uint64_t offset, spill_file().append(bytes.data(), bytes.size()));
  set_external(proto, tensor.dtype(), tensor.dims(), SpillFile::kName, offset, bytes.size());
  return Status::ok();
}

// Sources of deferred tensors by key, while a proto naming them lives.
class DeferredTable {
 public:
  uint64_t add(TensorStream source) {
    std::lock_guard<std::mutex> lock(mutex_);
    sources_.emplace(next_, std::move(source));
    return next_++;
  }
  void remove(uint64_t key) {
    std::lock_guard<std::mutex> lock(mutex_);
    sources_.erase(key);
  }
  TensorStream find(uint64_t key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = sources_.find(key);
    return it == sources_.end() ? TensorStream() : it->second;
  }

 private:
  std::mutex mutex_;
  std::map<uint64_t, TensorStream> sources_;
  uint64_t next_ = 0;
};

DeferredTable& deferred_table() {
  static DeferredTable table;
  return table;
}

// The deleter of a deferred tensor's proto: its source goes with it.
struct DeferredProto {
  uint64_t key;
  void operator()(onnx::TensorProto* proto) const {
    delete proto;
    deferred_table().remove(key);
  }
};

// Makes `proto` an external reference named `location` at `offset`, `length` bytes.
void set_external(onnx::TensorProto* proto, DType dtype, const Dims& dims, const char* location, uint64_t offset,
                  uint64_t length) {
  proto->set_data_type(static_cast<int32_t>(dtype));
  proto->clear_dims();
  for (int64_t d : dims) proto->add_dims(d);
  proto->clear_raw_data();
  proto->set_data_location(onnx::TensorProto::EXTERNAL);
  proto->clear_external_data();
  auto add = [&](const char* k, const std::string& v) {
    auto* e = proto->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add("location", location);
  add("offset", std::to_string(offset));
  add("length", std::to_string(length));
}

std::shared_ptr<onnx::TensorProto> deferred(std::unique_ptr<onnx::TensorProto> proto, TensorStream source) {
  const uint64_t key = deferred_table().add(std::move(source));
  const DType dtype = static_cast<DType>(proto->data_type());
  const Dims dims(proto->dims().begin(), proto->dims().end());
  set_external(proto.get(), dtype, dims, SpillFile::kDeferredName, key, stored_nbytes(dtype, checked_numel(dims)));
  return std::shared_ptr<onnx::TensorProto>(proto.release(), DeferredProto{key});
}

const std::string* external_entry(const onnx::TensorProto& proto, const char* key) {
  for (const auto& e : proto.external_data())
    if (e.key() == key) return &e.value();
  return nullptr;
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
  QONNX_ASSIGN_OR_RETURN(*base_dir, spill_file().folder());
  return std::shared_ptr<onnx::TensorProto>(std::move(proto));
}

Result<std::shared_ptr<onnx::TensorProto>> make_deferred_proto(DType dtype, const Dims& dims, TensorStream stream,
                                                               fs::path* base_dir) {
  // Stored bytes that are the buffer's bytes: what read_scratch_tensor fills a tensor with.
  if (dtype == DType::kString || dtype_is_4bit(dtype) || dtype_size(dtype) == 0)
    return Status(Code::kFailed, fmt::format("a deferred tensor cannot be {}", dtype_name(dtype)));
  QONNX_ASSIGN_OR_RETURN(*base_dir, spill_file().folder());
  auto proto = std::make_unique<onnx::TensorProto>();
  proto->set_data_type(static_cast<int32_t>(dtype));
  for (int64_t d : dims) proto->add_dims(d);
  return deferred(std::move(proto), std::move(stream));
}

namespace {

// The stream of a deferred tensor's proto; empty for any other proto.
Result<TensorStream> deferred_stream(const onnx::TensorProto& proto, const fs::path& base_dir) {
  if (!is_deferred_tensor(proto, base_dir)) return TensorStream();
  const std::string* offset = external_entry(proto, "offset");
  TensorStream stream = offset ? deferred_table().find(std::stoull(*offset)) : TensorStream();
  if (!stream) return Status(Code::kFailed, "a deferred tensor's source is gone");
  return stream;
}

// Runs `stream`, checking that it hands over the bytes `proto` promised, no more and no fewer.
Status run_stream(const TensorStream& stream, const onnx::TensorProto& proto, const ByteSink& sink) {
  const uint64_t expected = stored_nbytes(static_cast<DType>(proto.data_type()),
                                          checked_numel(Dims(proto.dims().begin(), proto.dims().end())));
  uint64_t handed = 0;
  QONNX_RETURN_IF_ERROR(stream([&](const void* data, size_t bytes) {
    if (bytes > expected - handed)
      return Status(Code::kFailed, fmt::format("a deferred tensor computed more than the {} bytes it promised", expected));
    handed += bytes;
    return sink(data, bytes);
  }));
  if (handed != expected)
    return Status(Code::kFailed, fmt::format("a deferred tensor computed {} bytes, not the {} it promised", handed, expected));
  return Status::ok();
}

}  // namespace

bool is_deferred_tensor(const onnx::TensorProto& proto, const fs::path& base_dir) {
  const std::string* location = external_entry(proto, "location");
  return in_scratch_file(base_dir) && location && *location == SpillFile::kDeferredName;
}

Status stream_deferred_tensor(const onnx::TensorProto& proto, const fs::path& base_dir, const ByteSink& sink) {
  QONNX_ASSIGN_OR_RETURN(TensorStream stream, deferred_stream(proto, base_dir));
  if (!stream) return Status(Code::kFailed, fmt::format("tensor '{}' is not a deferred one", proto.name()));
  return run_stream(stream, proto, sink);
}

Result<Tensor> read_scratch_tensor(const onnx::TensorProto& proto, const fs::path& base_dir) {
  QONNX_ASSIGN_OR_RETURN(TensorStream stream, deferred_stream(proto, base_dir));
  if (!stream) return decode_tensor(proto, base_dir);
  // A fixed-width dtype (make_deferred_proto): the stored bytes are the buffer's.
  Tensor t = Tensor::uninitialized(static_cast<DType>(proto.data_type()), Dims(proto.dims().begin(), proto.dims().end()));
  char* cursor = static_cast<char*>(t.raw());
  QONNX_RETURN_IF_ERROR(run_stream(stream, proto, [&](const void* data, size_t bytes) {
    std::memcpy(cursor, data, bytes);
    cursor += bytes;
    return Status::ok();
  }));
  return t;
}

Result<StoredTensorFile> StoredTensorFile::of(const onnx::TensorProto& proto, const fs::path& base_dir) {
  if (proto.data_location() != onnx::TensorProto::EXTERNAL)
    return Status(Code::kFailed, fmt::format("tensor '{}' is not in an external file", proto.name()));
  QONNX_ASSIGN_OR_RETURN(ExternalSlice slice, resolve_external(proto, base_dir));
  StoredTensorFile file;
  file.path_ = std::move(slice.file);
  file.offset_ = slice.offset;
  file.length_ = slice.length;
  return file;
}

Result<StoredTensorFile::Reader> StoredTensorFile::open() const {
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status(Code::kCannotRead, fmt::format("cannot read '{}': {}", path_.string(), std::strerror(errno)));
  return Reader(*this, fd);
}

StoredTensorFile::Reader::Reader(Reader&& other) noexcept : file_(other.file_), fd_(other.fd_) { other.fd_ = -1; }

StoredTensorFile::Reader::~Reader() {
  if (fd_ >= 0) ::close(fd_);
}

Status StoredTensorFile::Reader::read(uint64_t offset, void* dst, size_t bytes) const {
  if (offset > file_.length_ || bytes > file_.length_ - offset)
    return Status(Code::kFailed, fmt::format("bytes [{}, +{}) are outside a stored tensor of {}", offset, bytes, file_.length_));
  size_t done = 0;
  while (done < bytes) {
    const ssize_t n = ::pread(fd_, static_cast<char*>(dst) + done, bytes - done,
                              static_cast<off_t>(file_.offset_ + offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      return Status(Code::kCannotRead, fmt::format("cannot read '{}': {}", file_.path_.string(),
                                                   n < 0 ? std::strerror(errno) : "the file is shorter than its model says"));
    done += static_cast<size_t>(n);
  }
  return Status::ok();
}

std::shared_ptr<onnx::TensorProto> copy_stored_proto(const std::shared_ptr<onnx::TensorProto>& proto) {
  auto copy = std::make_unique<onnx::TensorProto>(*proto);
  if (const HeldProto* h = std::get_deleter<HeldProto>(proto)) {
    hold(h->bytes);
    return held(std::move(copy), h->bytes);
  }
  // A deferred copy has a key of its own, so that each releases its source when it goes.
  if (const DeferredProto* d = std::get_deleter<DeferredProto>(proto)) return deferred(std::move(copy), deferred_table().find(d->key));
  return std::shared_ptr<onnx::TensorProto>(std::move(copy));
}

bool in_scratch_file(const fs::path& base_dir) {
  return !base_dir.empty() && base_dir == spill_file().dir();
}

}  // namespace qonnx::ir
