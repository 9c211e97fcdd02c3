#include "ir/spill_store.h"

#include <fcntl.h>
#include <unistd.h>

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

  const fs::path& dir() const { return dir_; }
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

}  // namespace

Result<fs::path> spill_tensor(const Tensor& tensor, onnx::TensorProto* proto) {
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
  return file.dir();
}

}  // namespace qonnx::ir
