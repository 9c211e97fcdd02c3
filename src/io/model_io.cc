#include "qonnx/io/model_io.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <onnx/onnx_pb.h>

#include "io/model_proto.h"
#include "ir/spill_store.h"
#include "ir/tensor_codec.h"
#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/support/limits.h"

namespace qonnx::io {
namespace fs = std::filesystem;

Result<std::string> read_file(const fs::path& path) {
  std::error_code ec;
  auto status = fs::status(path, ec);
  if (ec || !fs::exists(status))
    return Status(Code::kCannotRead, fmt::format("cannot read '{}': no such file", path.string()));
  if (fs::is_directory(status))
    return Status(Code::kCannotRead, fmt::format("cannot read '{}': it is a directory", path.string()));
  // A FIFO without a writer would block the open forever, a device such as /dev/zero never ends.
  if (!fs::is_regular_file(status))
    return Status(Code::kCannotRead, fmt::format("cannot read '{}': not a regular file ({})", path.string(),
                                                 fs::is_fifo(status) ? "a FIFO" : fs::is_character_file(status) ? "a character device" : "a special file"));
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(Code::kCannotRead, fmt::format("cannot read '{}': {}", path.string(), std::strerror(errno)));
  // Into a string of the file's size (a stream buffer would grow by copies), then whatever a file still
  // growing has added.
  std::string bytes(static_cast<size_t>(fs::file_size(path, ec)), '\0');
  if (ec) bytes.clear();
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  bytes.resize(static_cast<size_t>(in.gcount()));
  if (in && in.peek() != std::char_traits<char>::eof()) {
    std::ostringstream rest;
    rest << in.rdbuf();
    bytes += rest.str();
  }
  if (in.bad()) return Status(Code::kCannotRead, fmt::format("cannot read '{}': read error", path.string()));
  return bytes;
}

namespace {

// Atomic writes. The data goes to an unnamed file (O_TMPFILE) in the target's folder, is fsynced,
// and only then gets a name: linkat() to a unique temp name and rename() over the target, then the
// folder is fsynced. A process killed while writing (SIGKILL included) leaves the previous target
// intact and no file behind: the kernel frees the unnamed inode. Only the few microseconds between
// linkat and rename, or file systems without O_TMPFILE (then a named temp file is written), can leave
// a temp file; its name, ".<target>.qonnx-tmp-<pid>-<hex>", lets the next write of that target remove
// it once process <pid> is gone. QONNX_ATOMIC_WRITE=named forces the named fallback (tests).
constexpr const char* kTempTag = ".qonnx-tmp-";

Status write_error(const fs::path& path, int err) {
  return Status(Code::kCannotWrite, fmt::format("cannot write '{}': {}", path.string(), std::strerror(err)));
}

fs::path folder_of(const fs::path& path) { return path.has_parent_path() ? path.parent_path() : fs::path("."); }

// Removes temp files of `target` left by processes that no longer exist.
void remove_stale_temps(const fs::path& target) {
  std::string prefix = "." + target.filename().string() + kTempTag;
  std::error_code ec;
  for (fs::directory_iterator it(folder_of(target), ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    char* rest = nullptr;
    long pid = std::strtol(name.c_str() + prefix.size(), &rest, 10);
    if (pid <= 0 || !rest || *rest != '-') continue;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) ::unlink(it->path().c_str());
  }
}

fs::path unique_temp_name(const fs::path& target) {
  static std::random_device rd;
  return folder_of(target) /
         fmt::format(".{}{}{}-{:08x}{:08x}", target.filename().string(), kTempTag, ::getpid(), rd(), rd());
}

// One file being written: an unnamed O_TMPFILE inode, or the named fallback.
class PendingFile {
 public:
  explicit PendingFile(fs::path target) : target_(std::move(target)) {}
  PendingFile(const PendingFile&) = delete;
  PendingFile& operator=(const PendingFile&) = delete;
  ~PendingFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!named_.empty()) ::unlink(named_.c_str());
  }

  // Creates the (unnamed) file; append() then adds data.
  Status open() {
    remove_stale_temps(target_);
    const char* mode = std::getenv("QONNX_ATOMIC_WRITE");
    bool named_only = mode && std::string(mode) == "named";
    if (!named_only && ::access("/proc/self/fd", X_OK) == 0)
      fd_ = ::open(folder_of(target_).c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
    if (fd_ < 0) {  // no O_TMPFILE here (file system, kernel, no /proc): a named temp file
      fs::path tmp = unique_temp_name(target_);
      fd_ = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      if (fd_ < 0) return write_error(target_, errno);
      named_ = tmp;
    }
    return Status::ok();
  }

  Status append(const void* data, size_t size) {
    size_t done = 0;
    while (done < size) {
      ssize_t n = ::write(fd_, static_cast<const char*>(data) + done, size - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        return write_error(target_, errno);
      }
      done += static_cast<size_t>(n);
    }
    written_ += size;
    return Status::ok();
  }

  uint64_t size() const { return written_; }

  Status write(const std::string& bytes) {
    QONNX_RETURN_IF_ERROR(open());
    return append(bytes.data(), bytes.size());
  }

  // Gives the written data the target's name (replacing any previous file).
  Status commit() {
    if (::fsync(fd_) != 0) return write_error(target_, errno);
    if (named_.empty()) {
      fs::path tmp = unique_temp_name(target_);
      std::string proc = fmt::format("/proc/self/fd/{}", fd_);
      if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, tmp.c_str(), AT_SYMLINK_FOLLOW) != 0)
        return write_error(target_, errno);
      named_ = tmp;
    }
    if (::close(fd_) != 0) {
      fd_ = -1;
      return write_error(target_, errno);
    }
    fd_ = -1;
    if (::rename(named_.c_str(), target_.c_str()) != 0) return write_error(target_, errno);
    named_.clear();
    int dir = ::open(folder_of(target_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
      ::fsync(dir);  // durability of the rename; failing here loses nothing already written
      ::close(dir);
    }
    return Status::ok();
  }

 private:
  fs::path target_;
  int fd_ = -1;
  fs::path named_;
  uint64_t written_ = 0;
};

}  // namespace

Status write_files_atomic(const std::vector<std::pair<fs::path, std::string>>& files) {
  // Everything is written and flushed before the first rename, so the renames follow each other
  // within microseconds: a kill can no longer pair a new data file with an old model for long.
  std::vector<std::unique_ptr<PendingFile>> pending;
  for (const auto& [path, bytes] : files) {
    pending.push_back(std::make_unique<PendingFile>(path));
    QONNX_RETURN_IF_ERROR(pending.back()->write(bytes));
  }
  for (auto& p : pending) QONNX_RETURN_IF_ERROR(p->commit());
  return Status::ok();
}

Status write_file_atomic(const fs::path& path, const std::string& bytes) { return write_files_atomic({{path, bytes}}); }

namespace {

// Tensors held by node attributes (Constant's value, ConstantOfShape's value, ...): their storage is
// checked like an initializer's. They are decoded without the model's folder, so a model whose attribute
// tensor points into a data file cannot be read: an invalid model for this loader, named as such (ONNX's
// own savers keep attribute tensors inline unless asked otherwise).
Status check_attribute_tensors(const onnx::NodeProto& np, const fs::path& base_dir) {
  auto check = [&](const onnx::AttributeProto& attr, const onnx::TensorProto& t) -> Status {
    if (t.data_location() == onnx::TensorProto::EXTERNAL)
      return Status(Code::kInvalidModel,
                    fmt::format("tensor '{}' keeps its data in an external file, which node attributes cannot do here: "
                                "store attribute tensors inline (onnx.save_model(..., convert_attribute=False))", t.name()))
          .with_context(fmt::format("attribute '{}'", attr.name()));
    auto storage = ir::validate_tensor_storage(t, base_dir);
    return storage.is_ok() ? Status::ok() : std::move(storage).status().with_context(fmt::format("attribute '{}'", attr.name()));
  };
  for (const auto& attr : np.attribute()) {
    if (attr.has_t()) QONNX_RETURN_IF_ERROR(check(attr, attr.t()));
    for (const auto& t : attr.tensors()) QONNX_RETURN_IF_ERROR(check(attr, t));
    if (attr.has_sparse_tensor()) {
      QONNX_RETURN_IF_ERROR(check(attr, attr.sparse_tensor().values()));
      QONNX_RETURN_IF_ERROR(check(attr, attr.sparse_tensor().indices()));
    }
  }
  return Status::ok();
}

// A sparse initializer: values and indices are tensors of their own, and their shapes must agree
// with the dense dims (values [NNZ], indices [NNZ] or [NNZ, rank] within the dense shape's range).
Status check_sparse_storage(const onnx::SparseTensorProto& sp, const fs::path& base_dir) {
  const std::string context = fmt::format("sparse initializer '{}'", sp.values().name());
  auto values = ir::validate_tensor_storage(sp.values(), base_dir);
  if (!values.is_ok()) return std::move(values).status().with_context(context);
  auto indices = ir::validate_tensor_storage(sp.indices(), base_dir);
  if (!indices.is_ok()) return std::move(indices).status().with_context(context);
  Dims dense(sp.dims().begin(), sp.dims().end());
  const int64_t dense_numel = checked_numel(dense);
  auto fail = [&](const std::string& what) { return Status(Code::kInvalidModel, what).with_context(context); };
  if (static_cast<int64_t>(dense.size()) > kMaxRank || dense_numel < 0)
    return fail(fmt::format("dense dims {} are negative, overflow or exceed rank {}", dims_to_string(dense), kMaxRank));
  if (values->dims.size() != 1) return fail(fmt::format("values have dims {}, expected [NNZ]", dims_to_string(values->dims)));
  const int64_t nnz = values->dims[0];
  if (nnz > dense_numel) return fail(fmt::format("{} values for {} dense elements", nnz, dense_numel));
  const Dims& idims = indices->dims;
  const bool flat = idims.size() == 1 && idims[0] == nnz;
  const bool coordinates = idims.size() == 2 && idims[0] == nnz && idims[1] == static_cast<int64_t>(dense.size());
  if (!flat && !coordinates)
    return fail(fmt::format("indices have dims {}, expected [{}] or [{}, {}]", dims_to_string(idims), nnz, nnz, dense.size()));
  if (indices->dtype != DType::kInt64) return fail(fmt::format("indices are {}, expected int64", dtype_name(indices->dtype)));
  return Status::ok();
}

// Declared shapes: a dim_value is a size, so it cannot be negative (unknown dims use dim_param or nothing).
Status check_declared_dims(const onnx::ValueInfoProto& vi, const char* what) {
  if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return Status::ok();
  const auto& shape = vi.type().tensor_type().shape();
  if (shape.dim_size() > kMaxRank)
    return Status(Code::kInvalidModel, fmt::format("{} '{}': rank {} is over the supported maximum of {}", what, vi.name(),
                                                   shape.dim_size(), kMaxRank));
  for (int k = 0; k < shape.dim_size(); ++k)
    if (shape.dim(k).has_dim_value() && shape.dim(k).dim_value() < 0)
      return Status(Code::kInvalidModel, fmt::format("{} '{}': dim #{} is {}; a declared dim is a size >= 0 (unknown dims "
                                                     "have no value or a dim_param)", what, vi.name(), k, shape.dim(k).dim_value()));
  return Status::ok();
}

Status build_graph(onnx::GraphProto& g, const fs::path& base_dir, const std::vector<const ir::Initializer*>& shared,
                   ir::Graph& graph) {
  // Definitions first: inputs, initializers, sparse initializers; then nodes in stored order.
  for (const auto& in : g.input()) QONNX_RETURN_IF_ERROR(check_declared_dims(in, "graph input"));
  for (const auto& out : g.output()) QONNX_RETURN_IF_ERROR(check_declared_dims(out, "graph output"));
  for (const auto& vi : g.value_info()) QONNX_RETURN_IF_ERROR(check_declared_dims(vi, "value_info"));
  for (auto& in : *g.mutable_input()) {
    ir::Value* v = graph.get_or_create_value(in.name());
    if (v->is_graph_input())
      return Status(Code::kInvalidModel, fmt::format("graph input '{}' is declared twice", in.name()));
    graph.add_input(v, std::make_unique<onnx::ValueInfoProto>(std::move(in)));
  }
  for (auto& t : *g.mutable_initializer()) {
    if (t.name().empty()) return Status(Code::kInvalidModel, "an initializer has no name");
    ir::Initializer init;
    init.value = graph.get_or_create_value(t.name());
    init.base_dir = base_dir;
    // Sizes and fields of every tensor are checked here, used or not (nothing is decoded).
    if (auto storage = ir::validate_tensor_storage(t, base_dir); !storage.is_ok())
      return std::move(storage).status().with_context(fmt::format("initializer '{}'", t.name()));
    init.external_in_source = t.data_location() == onnx::TensorProto::EXTERNAL;
    init.proto = std::make_shared<onnx::TensorProto>(std::move(t));
    QONNX_RETURN_IF_ERROR(graph.add_initializer(std::move(init)));
  }
  for (const ir::Initializer* init : shared) {
    ir::Initializer copy;
    copy.value = graph.get_or_create_value(init->value->name());
    copy.proto = init->proto;
    copy.base_dir = init->base_dir;
    copy.external_in_source = init->external_in_source;
    QONNX_RETURN_IF_ERROR(graph.add_initializer(std::move(copy)));
  }
  for (const auto& sp : g.sparse_initializer()) {
    QONNX_RETURN_IF_ERROR(check_sparse_storage(sp, base_dir));
    graph.get_or_create_value(sp.values().name());
  }

  for (auto& np : *g.mutable_node()) {
    std::vector<std::string> ins(np.input().begin(), np.input().end());
    std::vector<std::string> outs(np.output().begin(), np.output().end());
    std::string name = np.name(), op = np.op_type(), domain = np.domain();
    auto node = graph.add_node(name, op, domain, ins, outs);
    if (!node.is_ok()) return std::move(node).status();
    QONNX_RETURN_IF_ERROR(check_attribute_tensors(np, base_dir).with_context(node.value()->describe()));
    // Bodies become IR graphs; the attribute keeps its name and type (and its place among the others).
    for (auto& attr : *np.mutable_attribute()) {
      if (attr.has_g()) {
        Status st = build_graph(*attr.mutable_g(), base_dir, {}, *graph.add_body(node.value(), attr.name()));
        if (!st.is_ok()) return std::move(st).with_context(fmt::format("body '{}'", attr.name())).with_context(node.value()->describe());
        attr.clear_g();
      }
      for (int k = 0; k < attr.graphs_size(); ++k) {
        Status st = build_graph(*attr.mutable_graphs(k), base_dir, {}, *graph.add_body(node.value(), attr.name(), k));
        if (!st.is_ok()) return std::move(st).with_context(fmt::format("body '{}'[{}]", attr.name(), k)).with_context(node.value()->describe());
      }
      attr.clear_graphs();
    }
    np.clear_input();
    np.clear_output();
    node.value()->mutable_rest().Swap(&np);
  }
  // Every consumed name must be defined somewhere in this graph (or, for a body, an enclosing one).
  auto defined = [&](const ir::Value* v) {
    return v->producer() || v->is_initializer() || v->is_graph_input() || v->graph() != &graph;
  };
  for (const auto& node : graph.nodes()) {
    for (size_t k = 0; k < node->inputs().size(); ++k) {
      const ir::Value* v = node->inputs()[k];
      if (v && !defined(v)) {
        bool sparse = false;
        for (const auto& sp : g.sparse_initializer()) sparse |= sp.values().name() == v->name();
        if (!sparse)
          return Status(Code::kInvalidModel, fmt::format("input #{} '{}' is not defined in the graph", k, v->name()))
              .with_context(node->describe());
      }
    }
  }
  for (auto& out : *g.mutable_output()) {
    // An output nothing defines is invalid (and crashes the ONNX library's version converter).
    ir::Value* v = graph.resolve_value(out.name());
    bool sparse = false;
    for (const auto& sp : g.sparse_initializer()) sparse |= sp.values().name() == out.name();
    if (!sparse && (!v || !defined(v)))
      return Status(Code::kInvalidModel,
                    fmt::format("graph output '{}' is not produced by any node, initializer or input", out.name()));
    if (!v) v = graph.get_or_create_value(out.name());
    graph.add_output(v, std::make_unique<onnx::ValueInfoProto>(std::move(out)));
  }
  for (auto& vi : *g.mutable_value_info()) graph.add_value_info(std::make_unique<onnx::ValueInfoProto>(std::move(vi)));
  g.clear_input();
  g.clear_initializer();
  g.clear_node();
  g.clear_output();
  g.clear_value_info();
  graph.mutable_rest().Swap(&g);
  return Status::ok();
}

// What the loader needs before building the graph; the rest of the rules are check_model_rules().
Status validate_header(const onnx::ModelProto& m) {
  if (!m.has_graph()) return Status(Code::kInvalidModel, "not an ONNX model: no graph");
  if (m.ir_version() <= 0) return Status(Code::kInvalidModel, "not an ONNX model: ir_version is missing");
  return Status::ok();
}

// Element types inside a declared type (tensors, and the tensors of sequences, optionals and maps).
Status check_type(const onnx::TypeProto& type, const std::string& value) {
  // ONNX's DataType numbers run 0..26 today (FLOAT4E2M1 23, FLOAT8E8M0 24, UINT2 25, INT2 26); the
  // installed ONNX library's enum may be older than the types qonnx-cc reads, so it is not asked.
  constexpr int32_t kLastOnnxDataType = 26;
  auto elem = [&](int32_t t) -> Status {
    if (t >= 0 && t <= kLastOnnxDataType) return Status::ok();
    return Status(Code::kInvalidModel, fmt::format("'{}' is declared with elem_type {}, which is not an ONNX data type", value, t));
  };
  if (type.has_tensor_type()) return elem(type.tensor_type().elem_type());
  if (type.has_sparse_tensor_type()) return elem(type.sparse_tensor_type().elem_type());
  if (type.has_sequence_type() && type.sequence_type().has_elem_type()) return check_type(type.sequence_type().elem_type(), value);
  if (type.has_optional_type() && type.optional_type().has_elem_type()) return check_type(type.optional_type().elem_type(), value);
  if (type.has_map_type()) {
    QONNX_RETURN_IF_ERROR(elem(type.map_type().key_type()));
    if (type.map_type().has_value_type()) return check_type(type.map_type().value_type(), value);
  }
  return Status::ok();
}

}  // namespace

Status check_model_rules(const ir::Model& model) {
  const onnx::ModelProto& m = model.header();
  if (m.ir_version() <= 0) return Status(Code::kInvalidModel, "not an ONNX model: ir_version is missing");
  // The version every standard op runs at. IR 1 and 2 had no opset imports (opset 1 implied).
  std::vector<std::string> seen;
  for (const auto& op : m.opset_import()) {
    const std::string domain = ir::is_default_domain(op.domain()) ? "" : op.domain();
    if (std::find(seen.begin(), seen.end(), domain) != seen.end())
      return Status(Code::kInvalidModel, fmt::format("opset_import lists the domain '{}' twice", op.domain()));
    seen.push_back(domain);
    if (op.version() < 1)
      return Status(Code::kInvalidModel, fmt::format("opset_import of domain '{}' has version {}; versions start at 1",
                                                     op.domain(), op.version()));
  }
  if (m.opset_import().empty() && m.ir_version() >= 3)
    return Status(Code::kInvalidModel,
                  fmt::format("the model has no opset_import: the versions of its ops are undefined (IR version {}; a file "
                              "cut short after its graph looks like this)", m.ir_version()));
  const bool needs_default = !model.opset("") && m.ir_version() >= 3;
  Status status = Status::ok();
  model.graph().visit_graphs([&](const ir::Graph& g) {
    if (!status.is_ok()) return;
    if (needs_default)
      for (const auto& node : g.nodes())
        if (status.is_ok() && ir::is_default_domain(node->domain()))
          status = Status(Code::kInvalidModel, "the model has no opset_import for the default ONNX domain ('' or ai.onnx): "
                                               "the version of its standard ops is undefined")
                       .with_context(node->describe());
    auto check_infos = [&](const onnx::ValueInfoProto* info) {
      if (status.is_ok() && info && info->has_type()) status = check_type(info->type(), info->name());
    };
    for (size_t i = 0; i < g.inputs().size(); ++i) check_infos(g.input_info(i));
    for (size_t i = 0; i < g.outputs().size(); ++i) check_infos(g.output_info(i));
    for (const auto& info : g.value_infos()) check_infos(info.get());
  });
  return status;
}

Result<ir::Model> load_model_from_bytes(const std::string& bytes, const fs::path& base_dir) {
  if (bytes.empty()) return Status(Code::kInvalidModel, "not an ONNX model: the file is empty");
  onnx::ModelProto proto;
  google::protobuf::io::CodedInputStream stream(reinterpret_cast<const uint8_t*>(bytes.data()),
                                                static_cast<int>(std::min<size_t>(bytes.size(), INT32_MAX)));
  stream.SetRecursionLimit(100);
  if (!proto.ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage())
    return Status(Code::kInvalidModel, "not an ONNX model: protobuf parsing failed (truncated, not protobuf, or nested deeper than 100 levels)");
  return model_from_proto(std::move(proto), base_dir, {});
}

Result<ir::Model> model_from_proto(onnx::ModelProto proto, const fs::path& base_dir,
                                   const std::vector<const ir::Initializer*>& shared) {
  QONNX_RETURN_IF_ERROR(validate_header(proto));
  ir::Model model;
  std::unique_ptr<onnx::GraphProto> g(proto.release_graph());
  model.mutable_header().Swap(&proto);
  QONNX_RETURN_IF_ERROR(build_graph(*g, base_dir, shared, model.graph()));
  QONNX_RETURN_IF_ERROR(check_model_rules(model));
  // Every QONNX node is verified here, whichever path (exec, a pass, a fold) would reach it later.
  QONNX_RETURN_IF_ERROR(dialect::verify_model(model));
  static_cast<const ir::Graph&>(model.graph()).visit_graphs([&](const ir::Graph& g) {
    for (const auto& init : g.initializers())
      model.set_source_used_external_data(model.source_used_external_data() || init.external_in_source);
  });
  return model;
}

Result<ir::Model> load_model(const fs::path& path) {
  QONNX_ASSIGN_OR_RETURN(std::string bytes, read_file(path));
  fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  auto model = load_model_from_bytes(bytes, dir);
  if (!model.is_ok()) return std::move(model).status().with_context(path.string());
  model->set_source_path(path);
  return model;
}

namespace {

// Writes external data tensor by tensor into "<model>.data" (never the whole payload in memory).
// Initializer bytes beyond which `auto` writes external data even for an inline input model.
constexpr size_t kAutoExternalBytes = size_t{1800} << 20;

class ExternalWriter {
 public:
  ExternalWriter(fs::path file, std::string location, size_t alignment)
      : file_(std::move(file)), location_(std::move(location)), alignment_(alignment == 0 ? 1 : alignment) {}

  // The next tensor's bytes (`nbytes` of `dtype`, handed to the sink by `write`) into the file, and
  // `proto` made a reference to them.
  Status place(DType dtype, uint64_t nbytes, const std::function<Status(const ir::ByteSink&)>& write,
               onnx::TensorProto* proto) {
    if (!pending_) {
      pending_ = std::make_unique<PendingFile>(file_);
      QONNX_RETURN_IF_ERROR(pending_->open());
    }
    uint64_t offset = (pending_->size() + alignment_ - 1) / alignment_ * alignment_;
    if (offset > pending_->size()) {
      std::string pad(static_cast<size_t>(offset - pending_->size()), '\0');
      QONNX_RETURN_IF_ERROR(pending_->append(pad.data(), pad.size()));
    }
    QONNX_RETURN_IF_ERROR(write([&](const void* data, size_t bytes) { return pending_->append(data, bytes); }));
    if (pending_->size() - offset != nbytes)
      return Status(Code::kFailed, fmt::format("tensor '{}': {} bytes written, not {}", proto->name(), pending_->size() - offset, nbytes));
    proto->clear_raw_data();
    proto->clear_float_data();
    proto->clear_int32_data();
    proto->clear_int64_data();
    proto->clear_double_data();
    proto->clear_uint64_data();
    proto->clear_external_data();
    proto->set_data_type(static_cast<int32_t>(dtype));
    proto->set_data_location(onnx::TensorProto::EXTERNAL);
    auto add = [&](const char* k, const std::string& v) {
      auto* e = proto->add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    add("location", location_);
    add("offset", std::to_string(offset));
    add("length", std::to_string(nbytes));
    return Status::ok();
  }

  Status place(const Tensor& t, onnx::TensorProto* proto) {
    const ir::StoredBytes bytes(t);
    return place(t.dtype(), bytes.size(), [&](const ir::ByteSink& sink) { return sink(bytes.data(), bytes.size()); }, proto);
  }

  // Nothing written (no tensor went external), or the data file with its final name.
  PendingFile* pending() { return pending_.get(); }

 private:
  fs::path file_;
  std::string location_;
  size_t alignment_;
  std::unique_ptr<PendingFile> pending_;
};

size_t stored_bytes(const onnx::TensorProto& p) {
  int64_t n = checked_numel(Dims(p.dims().begin(), p.dims().end()));
  return n < 0 ? 0 : static_cast<size_t>(stored_nbytes(static_cast<DType>(p.data_type()), n));
}

// One graph (and, recursively, the bodies of its nodes) into `g`.
Status graph_to_proto(const ir::Graph& graph, const SaveOptions& options, ExternalWriter* ext, bool auto_external,
                      onnx::GraphProto* g) {
  g->CopyFrom(graph.rest());
  for (const auto& node : graph.nodes()) {
    onnx::NodeProto* np = g->add_node();
    np->CopyFrom(node->rest());
    for (const ir::Value* v : node->inputs()) np->add_input(v ? v->name() : "");
    for (const ir::Value* v : node->outputs()) np->add_output(v ? v->name() : "");
    if (np->name() != node->name()) np->set_name(node->name());
    if (np->op_type() != node->op_type()) np->set_op_type(node->op_type());
    if (np->domain() != node->domain()) np->set_domain(node->domain());
    for (const auto& body : node->bodies()) {
      onnx::AttributeProto* attr = nullptr;
      for (auto& a : *np->mutable_attribute())
        if (a.name() == body.attribute) attr = &a;
      if (!attr) return Status(Code::kFailed, fmt::format("body attribute '{}' is missing", body.attribute)).with_context(node->describe());
      onnx::GraphProto* bg = body.index < 0 ? attr->mutable_g() : attr->add_graphs();
      QONNX_RETURN_IF_ERROR(graph_to_proto(*body.graph, options, ext, auto_external, bg));
    }
  }
  auto nbytes = stored_bytes;
  for (const auto& init : graph.initializers()) {
    onnx::TensorProto* tp = g->add_initializer();
    bool was_external = init.proto->data_location() == onnx::TensorProto::EXTERNAL;
    if (nbytes(*init.proto) > options.max_inline_bytes) {
      // Structure only: an external reference nothing can resolve, so a reader that needs the
      // values fails loudly instead of seeing zeros.
      tp->set_name(init.proto->name());
      tp->set_data_type(init.proto->data_type());
      tp->mutable_dims()->CopyFrom(init.proto->dims());
      tp->set_data_location(onnx::TensorProto::EXTERNAL);
      auto* e = tp->add_external_data();
      e->set_key("location");
      e->set_value("<not loaded>");
      continue;
    }
    bool large = nbytes(*init.proto) >= options.external_threshold;
    bool go_external = false;
    // Where a pass's result waited (memory or the scratch file) is no reason to place it either way.
    if (ext && options.external_data == ExternalData::kAuto) go_external = auto_external && (large || init.external_in_source);
    if (ext && options.external_data == ExternalData::kAlways) go_external = large;
    if (!was_external && !go_external) {
      tp->CopyFrom(*init.proto);
      continue;
    }
    tp->CopyFrom(*init.proto);
    if (go_external && ir::is_deferred_tensor(*init.proto, init.base_dir)) {
      // Computed block by block as it is written, never whole.
      QONNX_RETURN_IF_ERROR(ext->place(static_cast<DType>(tp->data_type()), nbytes(*init.proto), [&](const ir::ByteSink& sink) {
        return ir::stream_deferred_tensor(*init.proto, init.base_dir, sink);
      }, tp));
      continue;
    }
    auto t = graph.initializer_tensor(init.value);
    if (!t.is_ok()) return std::move(t).status();
    if (go_external) {
      QONNX_RETURN_IF_ERROR(ext->place(t.value(), tp));
    } else {
      tp->clear_external_data();
      tp->clear_data_location();
      ir::encode_tensor(t.value(), tp);
    }
  }
  for (size_t i = 0; i < graph.inputs().size(); ++i) g->add_input()->CopyFrom(*graph.input_info(i));
  for (size_t i = 0; i < graph.outputs().size(); ++i) g->add_output()->CopyFrom(*graph.output_info(i));
  for (const auto& vi : graph.value_infos()) g->add_value_info()->CopyFrom(*vi);
  return Status::ok();
}

Result<onnx::ModelProto> to_proto(const ir::Model& model, const SaveOptions& options, ExternalWriter* ext) {
  // Nothing is written that would not load again.
  if (Status st = check_model_rules(model); !st.is_ok()) return std::move(st).with_context("refusing to write an invalid model");
  onnx::ModelProto m(model.header());
  // auto: external data when the loaded model had it, or when the model would not fit protobuf's 2 GB.
  size_t total = 0;
  model.graph().visit_graphs([&](const ir::Graph& g) {
    for (const auto& init : g.initializers()) total += stored_bytes(*init.proto);
  });
  bool auto_external = model.source_used_external_data() || total > kAutoExternalBytes;
  QONNX_RETURN_IF_ERROR(graph_to_proto(model.graph(), options, ext, auto_external, m.mutable_graph()));
  return m;
}

Result<std::string> serialize(const onnx::ModelProto& m) {
  size_t size = m.ByteSizeLong();
  if (size > static_cast<size_t>(INT32_MAX))
    return Status(Code::kCannotWrite, fmt::format("model is {} bytes, over protobuf's 2 GB limit: use external data", size));
  std::string out;
  {
    google::protobuf::io::StringOutputStream raw(&out);
    google::protobuf::io::CodedOutputStream coded(&raw);
    coded.SetSerializationDeterministic(true);
    m.SerializeToCodedStream(&coded);
  }
  return out;
}

}  // namespace

Result<std::string> serialize_model(const ir::Model& model) {
  SaveOptions inline_all;
  inline_all.external_data = ExternalData::kNever;
  QONNX_ASSIGN_OR_RETURN(onnx::ModelProto m, to_proto(model, inline_all, nullptr));
  return serialize(m);
}

Result<onnx::ModelProto> structure_proto(const ir::Model& model, size_t max_inline_bytes) {
  SaveOptions inline_all;
  inline_all.external_data = ExternalData::kNever;
  inline_all.max_inline_bytes = max_inline_bytes;
  return to_proto(model, inline_all, nullptr);
}

std::vector<fs::path> external_data_files(const ir::Model& model) {
  std::vector<fs::path> files;
  model.graph().visit_graphs([&](const ir::Graph& g) {
    for (const auto& init : g.initializers()) {
      if (init.proto->data_location() != onnx::TensorProto::EXTERNAL) continue;
      auto slice = ir::resolve_external(*init.proto, init.base_dir);
      if (slice.is_ok() && std::find(files.begin(), files.end(), slice->file) == files.end()) files.push_back(slice->file);
    }
  });
  std::sort(files.begin(), files.end());
  return files;
}

Status save_model(const ir::Model& model, const fs::path& path, const SaveOptions& options) {
  std::string location = path.filename().string() + ".data";
  ExternalWriter ext(folder_of(path) / location, location, options.external_alignment);
  auto proto = to_proto(model, options, options.external_data == ExternalData::kNever ? nullptr : &ext);
  if (!proto.is_ok()) return std::move(proto).status().with_context(path.string());
  auto bytes = serialize(proto.value());
  if (!bytes.is_ok()) return std::move(bytes).status().with_context(path.string());
  PendingFile model_file(path);
  QONNX_RETURN_IF_ERROR(model_file.write(bytes.value()));
  // Data first, model second: the two renames follow each other within microseconds.
  if (PendingFile* data = ext.pending()) QONNX_RETURN_IF_ERROR(data->commit());
  return model_file.commit();
}

}  // namespace qonnx::io
