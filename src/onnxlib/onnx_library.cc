#include "qonnx/onnxlib/onnx_library.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <set>

#include <fmt/format.h>
#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include "io/model_proto.h"
#include "qonnx/schemas/schemas.h"

namespace qonnx::onnxlib {
namespace {

// Initializers above this size are handed over as typed graph inputs. The library reads constant
// values only for shape arithmetic (Reshape shapes, Resize scales, ...), which is far smaller.
constexpr size_t kInlineLimit = size_t{64} << 10;
// A library call on a model of any real size finishes in seconds; longer means it loops.
constexpr int kTimeoutSeconds = 120;

size_t tensor_bytes(const onnx::TensorProto& p) {
  int64_t n = checked_numel(Dims(p.dims().begin(), p.dims().end()));
  return n < 0 ? 0 : static_cast<size_t>(stored_nbytes(static_cast<DType>(p.data_type()), n));
}

// What is handed to the library: the structure, large initializers as graph inputs of their type.
struct LibraryModel {
  onnx::ModelProto proto;
  std::vector<std::string> by_reference;  // initializers handed over as inputs
  std::set<std::string> original_inputs;
};

Result<LibraryModel> library_model(const ir::Model& model) {
  schemas::register_qonnx_schemas();
  LibraryModel out;
  const ir::Graph& g = model.graph();
  for (const ir::Value* v : g.inputs()) out.original_inputs.insert(v->name());
  std::map<std::string, const onnx::TensorProto*> large;
  for (const auto& init : g.initializers())
    if (tensor_bytes(*init.proto) > kInlineLimit) large[init.value->name()] = init.proto.get();
  QONNX_ASSIGN_OR_RETURN(out.proto, io::structure_proto(model, kInlineLimit));
  onnx::GraphProto* graph = out.proto.mutable_graph();
  auto* inits = graph->mutable_initializer();
  for (int i = inits->size() - 1; i >= 0; --i) {
    auto it = large.find(inits->Get(i).name());
    if (it == large.end()) continue;
    out.by_reference.push_back(it->first);
    if (!out.original_inputs.count(it->first)) {
      onnx::ValueInfoProto* in = graph->add_input();
      in->set_name(it->first);
      auto* tt = in->mutable_type()->mutable_tensor_type();
      tt->set_elem_type(it->second->data_type());
      auto* shape = tt->mutable_shape();
      for (int64_t d : it->second->dims()) shape->add_dim()->set_dim_value(d);
    }
    inits->DeleteSubrange(i, 1);
  }
  // QONNX exports often use their custom domain without importing it; qonnx accepts that too. A
  // missing default-domain import is left for the checker to reject.
  for (const auto& d : model.unimported_domains()) {
    if (ir::is_default_domain(d)) continue;
    auto* op = out.proto.add_opset_import();
    op->set_domain(d);
    op->set_version(1);
  }
  return out;
}

// ONNX 1.12's checker wants a shape on every graph input and output, where the format (and every
// runtime) allows leaving it out. Shapeless ones get an empty shape in the checker's copy only:
// the checker does not infer, so the rank it sees is irrelevant.
bool needs_shape(const onnx::ValueInfoProto& vi) {
  return vi.type().has_tensor_type() && !vi.type().tensor_type().has_shape();
}

Status checker(const onnx::ModelProto& proto) {
  const onnx::GraphProto& g = proto.graph();
  bool shapeless = std::any_of(g.input().begin(), g.input().end(), needs_shape) ||
                   std::any_of(g.output().begin(), g.output().end(), needs_shape);
  onnx::ModelProto shaped;
  if (shapeless) {
    shaped = proto;
    for (auto* list : {shaped.mutable_graph()->mutable_input(), shaped.mutable_graph()->mutable_output()})
      for (auto& vi : *list)
        if (needs_shape(vi)) vi.mutable_type()->mutable_tensor_type()->mutable_shape();
  }
  try {
    onnx::checker::check_model(shapeless ? shaped : proto);
  } catch (const std::exception& e) {
    return Status(Code::kInvalidModel, fmt::format("ONNX checker: {}", e.what()));
  }
  return Status::ok();
}

// Shape inference; `strict`: any type or shape conflict throws.
Status infer(onnx::ModelProto& proto, bool strict) {
  try {
    onnx::shape_inference::InferShapes(proto, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(strict, strict ? 1 : 0, !strict));
  } catch (const std::exception& e) {
    return Status(Code::kFailed, fmt::format("ONNX {}shape inference: {}", strict ? "strict type and " : "", e.what()));
  }
  return Status::ok();
}

// The explanation in an ONNX assertion, without its source location and condition:
// "./onnx/...h:53: adapt_x: Assertion `c` failed: Version conversion ... unknown." -> "Version ... unknown."
std::string assertion_reason(const std::string& what) {
  std::string text = what;
  if (auto p = text.find("failed:"); p != std::string::npos) text = text.substr(p + 7);
  else if (auto q = text.find("Assertion"); q != std::string::npos) text = "an internal check failed";
  size_t b = text.find_first_not_of(" \n");
  size_t e = text.find_last_not_of(" \n");
  text = b == std::string::npos ? std::string() : text.substr(b, e - b + 1);
  return text.empty() ? "an internal check failed" : text;
}

// One node of an inferred model, alone in a model of its own: inputs typed where inference knew them.
onnx::ModelProto single_node_model(const onnx::ModelProto& full, int index) {
  onnx::ModelProto m;
  m.set_ir_version(full.ir_version());
  m.mutable_opset_import()->CopyFrom(full.opset_import());
  const onnx::GraphProto& g = full.graph();
  const onnx::NodeProto& node = g.node(index);
  onnx::GraphProto* out = m.mutable_graph();
  out->set_name("single");
  out->add_node()->CopyFrom(node);
  auto typed = [&](const std::string& name, onnx::ValueInfoProto* vi) {
    vi->set_name(name);
    for (const auto* list : {&g.input(), &g.value_info(), &g.output()})
      for (const auto& v : *list)
        if (v.name() == name) {
          vi->CopyFrom(v);
          return;
        }
    for (const auto& t : g.initializer())
      if (t.name() == name) {
        auto* tt = vi->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(t.data_type());
        for (int64_t d : t.dims()) tt->mutable_shape()->add_dim()->set_dim_value(d);
      }
  };
  std::set<std::string> seen;
  for (const auto& in : node.input()) {
    if (in.empty() || !seen.insert(in).second) continue;
    bool constant = false;
    for (const auto& t : g.initializer())
      if (t.name() == in) {
        out->add_initializer()->CopyFrom(t);
        constant = true;
      }
    if (!constant) typed(in, out->add_input());
  }
  for (const auto& o : node.output())
    if (!o.empty()) typed(o, out->add_output());
  return m;
}

// The converter says what failed but not where: converting each default-domain node alone finds it.
Status converter_error(const onnx::ModelProto& inferred, int64_t from, int64_t to, const std::string& what) {
  for (int i = 0; i < inferred.graph().node_size(); ++i) {
    const onnx::NodeProto& n = inferred.graph().node(i);
    if (!ir::is_default_domain(n.domain())) continue;
    try {
      onnx::version_conversion::ConvertVersion(single_node_model(inferred, i), static_cast<int>(to));
    } catch (const std::exception& e) {
      return Status(Code::kUnsupported,
                    fmt::format("the ONNX version converter cannot convert {} from opset {} to {}: {}", n.op_type(), from,
                                to, assertion_reason(e.what())))
          .with_context(fmt::format("node '{}' ({})", n.name(), n.op_type()));
    }
  }
  return Status(Code::kUnsupported, fmt::format("the ONNX version converter cannot convert the model from opset {} to {}: {}",
                                                from, to, assertion_reason(what)));
}

// Child -> parent framing: 'K' + payload, or 'E' + one byte of Code + message.
std::string encode(const Result<std::string>& r) {
  if (r.is_ok()) return "K" + r.value();
  // The code as its enumerator's position: the child and its parent are the same binary.
  return std::string("E") + static_cast<char>(r.status().code()) + r.status().to_string();
}

bool write_all(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

Result<std::string> serialized(const google::protobuf::MessageLite& m) {
  std::string out;
  if (!m.SerializeToString(&out)) return Status(Code::kFailed, "cannot serialize the library's result");
  return out;
}

}  // namespace

Result<std::string> run_isolated(const std::string& what, const std::function<Result<std::string>()>& work,
                                 int timeout_seconds) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Status(Code::kFailed, fmt::format("{}: cannot create a pipe: {}", what, std::strerror(errno)));
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return Status(Code::kFailed, fmt::format("{}: cannot fork: {}", what, std::strerror(errno)));
  }
  if (pid == 0) {
    ::close(fds[0]);
    std::string reply;
    try {
      reply = encode(work());
    } catch (const std::exception& e) {
      reply = encode(Status(Code::kFailed, fmt::format("{}: {}", what, e.what())));
    } catch (...) {
      reply = encode(Status(Code::kFailed, fmt::format("{}: unknown exception", what)));
    }
    _exit(write_all(fds[1], reply) ? 0 : 1);
  }
  ::close(fds[1]);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
  std::string reply;
  bool timed_out = false;
  char buf[1 << 16];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the child is done (or died)
    reply.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out)
    return Status(Code::kInvalidModel, fmt::format("the ONNX library did not finish {} within {} s (stopped)", what, timeout_seconds));
  if (WIFSIGNALED(status))
    return Status(Code::kInvalidModel, fmt::format("the ONNX library crashed in {} ({}): the model is malformed", what,
                                                   strsignal(WTERMSIG(status))));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || reply.empty())
    return Status(Code::kInvalidModel, fmt::format("the ONNX library stopped in {} without an answer", what));
  if (reply[0] == 'K') return reply.substr(1);
  if (reply.size() < 2) return Status(Code::kFailed, fmt::format("{}: malformed answer", what));
  return Status(static_cast<Code>(reply[1]), reply.substr(2));
}

int64_t onnx_library_opset() {
  return onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at(onnx::ONNX_DOMAIN).second;
}

Status onnx_check(const ir::Model& model) {
  QONNX_ASSIGN_OR_RETURN(LibraryModel lib, library_model(model));
  auto r = run_isolated("the checker", [&]() -> Result<std::string> {
    QONNX_RETURN_IF_ERROR(checker(lib.proto));
    return std::string();
  }, kTimeoutSeconds);
  return r.status();
}

Status onnx_check_types(const ir::Model& model) {
  QONNX_ASSIGN_OR_RETURN(LibraryModel lib, library_model(model));
  auto r = run_isolated("strict type and shape inference", [&]() -> Result<std::string> {
    QONNX_RETURN_IF_ERROR(checker(lib.proto));
    QONNX_RETURN_IF_ERROR(infer(lib.proto, true));
    return std::string();
  }, kTimeoutSeconds);
  return r.status();
}

namespace {

// Shape inference on the model in a child process; the value_info it leaves, or with `outputs` the graph
// outputs' types merged with what it inferred.
Result<std::vector<std::unique_ptr<onnx::ValueInfoProto>>> inferred_value_infos(const ir::Model& model, bool outputs) {
  QONNX_ASSIGN_OR_RETURN(LibraryModel lib, library_model(model));
  QONNX_ASSIGN_OR_RETURN(std::string bytes, run_isolated("shape inference", [&]() -> Result<std::string> {
    QONNX_RETURN_IF_ERROR(checker(lib.proto));
    QONNX_RETURN_IF_ERROR(infer(lib.proto, false));
    onnx::GraphProto types;
    types.mutable_value_info()->Swap(outputs ? lib.proto.mutable_graph()->mutable_output()
                                             : lib.proto.mutable_graph()->mutable_value_info());
    return serialized(types);
  }, kTimeoutSeconds));
  onnx::GraphProto types;
  if (!types.ParseFromString(bytes)) return Status(Code::kFailed, "shape inference: malformed answer");
  std::vector<std::unique_ptr<onnx::ValueInfoProto>> out;
  for (auto& vi : *types.mutable_value_info()) out.push_back(std::make_unique<onnx::ValueInfoProto>(std::move(vi)));
  return out;
}

}  // namespace

Result<std::vector<std::unique_ptr<onnx::ValueInfoProto>>> onnx_infer_shapes(const ir::Model& model) {
  return inferred_value_infos(model, false);
}

Result<std::vector<std::unique_ptr<onnx::ValueInfoProto>>> onnx_infer_output_types(const ir::Model& model) {
  return inferred_value_infos(model, true);
}

namespace {

bool fully_known(const ir::TypeInfo& t) {
  if (!t.has_shape) return false;
  for (int64_t d : t.dims)
    if (d < 0) return false;
  return true;
}

bool fully_known(const onnx::TypeProto& t) {
  if (!t.has_tensor_type() || !t.tensor_type().has_shape()) return false;
  for (const auto& d : t.tensor_type().shape().dim())
    if (!d.has_dim_value()) return false;
  return true;
}

}  // namespace

Result<int> onnx_infer_shapes_into(ir::Model& model) {
  QONNX_ASSIGN_OR_RETURN(auto inferred, onnx_infer_shapes(model));
  ir::Graph& g = model.graph();
  // Decide everything first: adding value_info invalidates the graph's type index.
  std::vector<std::unique_ptr<onnx::ValueInfoProto>> fresh;
  std::vector<std::string> refined;
  for (auto& vi : inferred) {
    const ir::Value* v = g.find_value(vi->name());
    if (!v) continue;
    auto known = g.type_of(v);
    // A value_info without a full shape (e.g. a Reshape's output before its target was folded) gives
    // way to an inferred full shape; graph inputs and outputs keep what they declare.
    const bool refine = known && !v->is_graph_input() && !v->is_graph_output() && !fully_known(*known) &&
                        fully_known(vi->type());
    if (refine) refined.push_back(vi->name());
    if (!known || refine) fresh.push_back(std::move(vi));
  }
  g.remove_value_infos(refined);
  for (auto& vi : fresh) g.add_value_info(std::move(vi));
  return static_cast<int>(fresh.size());
}

Result<ir::Model> onnx_convert_version(const ir::Model& model, int64_t opset) {
  int64_t from = model.opset("").value_or(1);
  QONNX_ASSIGN_OR_RETURN(LibraryModel lib, library_model(model));
  std::string what = fmt::format("the version converter (opset {} -> {})", from, opset);
  QONNX_ASSIGN_OR_RETURN(std::string bytes, run_isolated(what, [&]() -> Result<std::string> {
    QONNX_RETURN_IF_ERROR(checker(lib.proto));
    // The converter's adapters read input shapes (Gemm, broadcasting, Softmax): give it all there are.
    onnx::ModelProto inferred = lib.proto;
    (void)infer(inferred, false);
    onnx::ModelProto converted;
    try {
      converted = onnx::version_conversion::ConvertVersion(inferred, static_cast<int>(opset));
    } catch (const std::exception& e) {
      return converter_error(inferred, from, opset, e.what());
    }
    // Keep the model's own value_info only: the pipeline's infer-shapes adds what is missing.
    std::set<std::string> declared;
    for (const auto& vi : lib.proto.graph().value_info()) declared.insert(vi.name());
    auto* vis = converted.mutable_graph()->mutable_value_info();
    for (int i = vis->size() - 1; i >= 0; --i)
      if (!declared.count(vis->Get(i).name())) vis->DeleteSubrange(i, 1);
    return serialized(converted);
  }, kTimeoutSeconds));
  onnx::ModelProto converted;
  if (!converted.ParseFromString(bytes)) return Status(Code::kFailed, fmt::format("{}: malformed answer", what));
  // The weights handed over as inputs come back as the model's own initializers.
  std::set<std::string> reattached(lib.by_reference.begin(), lib.by_reference.end());
  auto* inputs = converted.mutable_graph()->mutable_input();
  for (int i = inputs->size() - 1; i >= 0; --i)
    if (reattached.count(inputs->Get(i).name()) && !lib.original_inputs.count(inputs->Get(i).name()))
      inputs->DeleteSubrange(i, 1);
  std::vector<const ir::Initializer*> shared;
  for (const auto& init : model.graph().initializers())
    if (reattached.count(init.value->name())) shared.push_back(&init);
  auto base = model.source_path().has_parent_path() ? model.source_path().parent_path() : std::filesystem::path(".");
  auto result = io::model_from_proto(std::move(converted), base, shared);
  if (!result.is_ok()) return std::move(result).status().with_context(fmt::format("after {}", what));
  result->set_source_path(model.source_path());
  result->set_source_used_external_data(model.source_used_external_data());
  return result;
}

}  // namespace qonnx::onnxlib
