// Hostile inputs: every malformed, oversized or malicious model gets a precise message and a documented
// exit code, never a crash; killed writes lose nothing; the fuzzers' corpora and crash reproducers
// replay through the fuzz target bodies.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <thread>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "../fuzz/fuzz_targets.h"
#include "qonnx/io/model_builder.h"
#include "qonnx/io/model_io.h"
#include "support/cli.h"
#include "support/temp_dir.h"
#include "support/test_util.h"

extern char** environ;

namespace qonnx::test {
namespace {
namespace fs = std::filesystem;

const std::string kQ = "qonnx.custom_op.general";

class Hostile : public TempDirTest {
 protected:
  std::string write(const std::string& name, const onnx::ModelProto& m) {
    std::string bytes;
    m.SerializeToString(&bytes);
    std::ofstream(path(name), std::ios::binary) << bytes;
    return path(name);
  }

  // Runs `args` (the model path is "$M") and checks exit code and message.
  void expect(const std::string& model, const std::string& args, int code, const std::string& needle) {
    std::string cmd = args;
    for (auto at = cmd.find("$M"); at != std::string::npos; at = cmd.find("$M")) cmd.replace(at, 2, model);
    auto r = run_cli(cmd);
    EXPECT_EQ(r.exit_code, code) << cmd << "\n" << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << cmd << "\nexpected '" << needle << "' in:\n" << r.err;
    EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  }

};

onnx::ModelProto relu_model() {
  io::ModelBuilder b(13);
  b.input("x", DType::kFloat, {2, 2}).output("y", DType::kFloat, {2, 2});
  b.node("Relu", {"x"}, {"y"});
  return b.proto();
}

// x -> Add(x, w) with w a [4] float initializer.
onnx::ModelProto add_model() {
  io::ModelBuilder b(13);
  b.input("x", DType::kFloat, {4}).output("y", DType::kFloat, {4});
  b.initializer("w", f32({4}, {1, 2, 3, 4}));
  b.node("Add", {"x", "w"}, {"y"});
  return b.proto();
}

onnx::TensorProto* initializer(onnx::ModelProto& m, const std::string& name) {
  for (auto& t : *m.mutable_graph()->mutable_initializer())
    if (t.name() == name) return &t;
  return nullptr;
}

// Quant(x, scale, zeropt, bitwidth) with the given parameter values.
onnx::ModelProto quant_model(float scale, float bits, const std::string& rounding = "ROUND") {
  io::ModelBuilder b(13);
  b.import(kQ, 2);
  b.input("x", DType::kFloat, {4}).output("y", DType::kFloat, {4});
  b.initializer("s", f32s(scale)).initializer("z", f32s(0)).initializer("bw", f32s(bits));
  b.node("Quant", {"x", "s", "z", "bw"}, {"y"}, kQ).attr("signed", 1).attr("narrow", 0).attr("rounding_mode", rounding);
  return b.proto();
}

// ---- files that are not models ----

TEST_F(Hostile, EmptyFileAndDirectory) {
  std::ofstream(path("empty.onnx")).close();
  expect(path("empty.onnx"), "info $M", 5, "the file is empty");
  expect(path("empty.onnx"), "exec $M --random-inputs", 5, "the file is empty");
  fs::create_directory(path("dir.onnx"));
  expect(path("dir.onnx"), "check $M", 3, "it is a directory");
  expect(path("dir.onnx"), "convert $M -o " + path("out.onnx"), 3, "it is a directory");
  expect(path("missing.onnx"), "exec $M --random-inputs", 3, "no such file");
  std::ofstream(path("garbage.onnx")) << "\x0a\xff\xff\xff\xff\x0f garbage";
  expect(path("garbage.onnx"), "info $M", 5, "protobuf parsing failed");
}

// ---- external data (the library-level cases are in model_io_test.cc, ExternalData) ----

TEST_F(Hostile, ExternalDataOutsideTheFolderOrPastTheFile) {
  fs::create_directories(dir_ / "m");
  std::ofstream(dir_ / "m" / "w.bin", std::ios::binary) << std::string(16, '\0');
  std::ofstream(dir_ / "secret.bin", std::ios::binary) << std::string(16, '\0');
  fs::create_symlink(dir_ / "secret.bin", dir_ / "m" / "link.bin");
  fs::create_directory_symlink(dir_, dir_ / "m" / "up");
  struct Case {
    std::string location, offset, length, needle;
  };
  const Case cases[] = {
      {"../secret.bin", "0", "16", "escapes the model folder"},
      {"sub/../../secret.bin", "0", "16", "escapes the model folder"},
      {(dir_ / "secret.bin").string(), "0", "16", "is absolute"},
      {"link.bin", "0", "16", "resolves outside the model folder"},
      {"up/secret.bin", "0", "16", "resolves outside the model folder"},
      {"missing.bin", "0", "16", "does not exist"},
      {".", "0", "16", "does not exist or is not a file"},
      {"w.bin", "4", "16", "past the end"},
      {"w.bin", "17", "0", "does not match"},
      {"w.bin", "18446744073709551615", "16", "past the end"},
      {"w.bin", "0", "18446744073709551615", "does not match"},
      {"w.bin", "18446744073709551600", "16", "past the end"},
      {"w.bin", "-1", "16", "not a number"},
      {"w.bin", "12abc", "16", "not a number"},
      {"w.bin", "0", "99999999999999999999999", "not a number"},
      {"", "0", "16", "has no location"},
  };
  for (const auto& c : cases) {
    onnx::ModelProto m = add_model();
    auto* w = initializer(m, "w");
    w->clear_float_data();
    w->clear_raw_data();
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    for (const auto& [k, v] : {std::pair<std::string, std::string>{"location", c.location}, {"offset", c.offset}, {"length", c.length}}) {
      auto* e = w->add_external_data();
      e->set_key(k);
      e->set_value(v);
    }
    std::string file = write("m/model.onnx", m);
    SCOPED_TRACE(c.location + " " + c.offset + " " + c.length);
    expect(file, "exec $M --random-inputs", 5, c.needle);
  }
}

// ---- dims and sizes ----

TEST_F(Hostile, DimsThatOverflowAreNegativeOrMismatchTheData) {
  onnx::ModelProto overflow = add_model();
  auto* w = initializer(overflow, "w");
  w->clear_dims();
  w->add_dims(int64_t{1} << 40);
  w->add_dims(int64_t{1} << 40);
  expect(write("overflow.onnx", overflow), "exec $M --random-inputs", 5, "are negative or overflow");

  onnx::ModelProto negative = add_model();
  initializer(negative, "w")->set_dims(0, -4);
  expect(write("negative.onnx", negative), "exec $M --random-inputs", 5, "are negative or overflow");

  onnx::ModelProto raw = add_model();
  w = initializer(raw, "w");
  w->clear_float_data();
  w->set_raw_data(std::string(12, '\0'));  // dims [4] float need 16
  expect(write("raw.onnx", raw), "exec $M --random-inputs", 5, "raw_data has 12 bytes, dims [4] of float need 16");

  onnx::ModelProto typed = add_model();
  w = initializer(typed, "w");
  w->clear_raw_data();
  for (float v : {1.f, 2.f, 3.f, 4.f, 5.f}) w->add_float_data(v);  // 5 values for dims [4]
  expect(write("typed.onnx", typed), "exec $M --random-inputs", 5, "holds 5 values, dims [4] need 4");

  // A huge declared input: random inputs would need 2^40 floats.
  onnx::ModelProto input = relu_model();
  auto* shape = input.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  shape->mutable_dim(0)->set_dim_value(int64_t{1} << 20);
  shape->mutable_dim(1)->set_dim_value(int64_t{1} << 20);
  expect(write("big_input.onnx", input), "exec $M --random-inputs", 1, "over the memory limit");
  shape->mutable_dim(1)->set_dim_value(int64_t{1} << 50);  // 2^70 elements
  expect(write("overflow_input.onnx", input), "exec $M --random-inputs", 5, "shape [1048576, 1125899906842624] is not valid");
}

TEST_F(Hostile, MaxMemoryLimitsKernelOutputsAndInputs) {
  // ConstantOfShape([65536, 65536]) wants 16 GiB.
  io::ModelBuilder b(13);
  b.input("x", DType::kInt64, {2}).output("y", DType::kFloat);
  b.node("ConstantOfShape", {"x"}, {"y"});
  std::string file = path("cos.onnx");
  std::ofstream(file, std::ios::binary) << b.serialize();
  Tensor shape = i64({2}, {65536, 65536});
  onnx::TensorProto tp;
  tp.set_data_type(onnx::TensorProto::INT64);
  tp.add_dims(2);
  tp.add_int64_data(65536);
  tp.add_int64_data(65536);
  std::ofstream(path("shape.pb"), std::ios::binary) << tp.SerializeAsString();
  expect(file, "exec $M --input x=" + path("shape.pb") + " --max-memory 64M", 1,
         "node 'ConstantOfShape_0' (ai.onnx::ConstantOfShape)");
  expect(file, "exec $M --input x=" + path("shape.pb") + " --max-memory 64M", 1,
         "over the memory limit of 67108864 bytes");
  // Within the limit it runs.
  tp.set_int64_data(0, 4);
  tp.set_int64_data(1, 4);
  std::ofstream(path("shape.pb"), std::ios::binary | std::ios::trunc) << tp.SerializeAsString();
  EXPECT_EQ(run_cli("exec " + file + " --input x=" + path("shape.pb") + " --max-memory 1M").exit_code, 0);
  // The limit also covers graph inputs and model data.
  onnx::ModelProto input = relu_model();
  auto* shape_proto = input.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  shape_proto->mutable_dim(0)->set_dim_value(1024);
  shape_proto->mutable_dim(1)->set_dim_value(1024);
  expect(write("in.onnx", input), "exec $M --random-inputs --max-memory 1M", 1, "graph input 'x'");
  expect(path("in.onnx"), "exec $M --random-inputs --max-memory 1M", 1, "over the memory limit of 1048576 bytes");
  expect(path("in.onnx"), "exec $M --random-inputs --max-memory lots", 2, "--max-memory");
  io::ModelBuilder big(13);
  big.input("x", DType::kFloat, {1}).output("y", DType::kFloat);
  big.initializer("w", Tensor(DType::kFloat, {512, 1024}));
  big.node("Add", {"x", "w"}, {"y"});
  std::ofstream(path("big.onnx"), std::ios::binary) << big.serialize();
  expect(path("big.onnx"), "exec $M --random-inputs --max-memory 1M", 1, "tensor 'w'");
  // Constant folding is bounded too: ConstantOfShape of a constant [65536, 65536].
  io::ModelBuilder fold(13);
  fold.input("x", DType::kFloat, {1}).output("y", DType::kFloat);
  fold.initializer("shape", i64({2}, {65536, 65536}));
  fold.node("ConstantOfShape", {"shape"}, {"c"});
  fold.node("Add", {"x", "c"}, {"y"});
  std::ofstream(path("fold.onnx"), std::ios::binary) << fold.serialize();
  expect(path("fold.onnx"), "convert $M -o " + path("fold.out.onnx") + " --max-memory 64M", 1,
         "node 'ConstantOfShape_0' (ai.onnx::ConstantOfShape): a float tensor of dims [65536, 65536] needs 17179869184 "
         "bytes, over the memory limit of 67108864 bytes");
  EXPECT_FALSE(fs::exists(path("fold.out.onnx")));
}

// ---- graph structure ----

TEST_F(Hostile, CyclesDuplicateAndUndefinedNames) {
  io::ModelBuilder cycle(13);
  cycle.input("x", DType::kFloat, {2}).output("y", DType::kFloat, {2});
  cycle.node("Add", {"x", "b"}, {"a"});
  cycle.node("Relu", {"a"}, {"b"});
  cycle.node("Identity", {"a"}, {"y"});
  onnx::ModelProto c = cycle.proto();
  expect(write("cycle.onnx", c), "exec $M --random-inputs", 5, "the graph has a cycle");
  expect(path("cycle.onnx"), "convert $M -o " + path("o.onnx"), 5, "cycle");

  io::ModelBuilder self(13);
  self.input("x", DType::kFloat, {2}).output("y", DType::kFloat, {2});
  self.node("Add", {"x", "y"}, {"y"});
  expect(write("self.onnx", self.proto()), "exec $M --random-inputs", 5, "cycle");

  io::ModelBuilder dup(13);
  dup.input("x", DType::kFloat, {2}).output("y", DType::kFloat, {2});
  dup.node("Relu", {"x"}, {"y"});
  dup.node("Neg", {"x"}, {"y"});
  expect(write("dup.onnx", dup.proto()), "check $M", 5, "already defined");

  onnx::ModelProto dup_init = add_model();
  dup_init.mutable_graph()->add_initializer()->CopyFrom(*initializer(dup_init, "w"));
  expect(write("dup_init.onnx", dup_init), "exec $M --random-inputs", 5, "'w'");

  onnx::ModelProto dup_input = relu_model();
  dup_input.mutable_graph()->add_input()->CopyFrom(dup_input.graph().input(0));
  expect(write("dup_input.onnx", dup_input), "info $M", 5, "graph input 'x' is declared twice");

  io::ModelBuilder undefined(13);
  undefined.input("x", DType::kFloat, {2}).output("y", DType::kFloat, {2});
  undefined.node("Add", {"x", "ghost"}, {"y"});
  expect(write("undef.onnx", undefined.proto()), "exec $M --random-inputs", 5, "input #1 'ghost' is not defined");

  onnx::ModelProto unproduced = relu_model();
  unproduced.mutable_graph()->mutable_output(0)->set_name("nothing");
  expect(write("unproduced.onnx", unproduced), "exec $M --random-inputs", 5, "graph output 'nothing' is not produced by any node, initializer or input");
}

TEST_F(Hostile, DeeplyNestedSubgraphs) {
  // If -> then_branch -> If -> ... 200 levels: past protobuf's recursion limit.
  onnx::ModelProto m = relu_model();
  onnx::GraphProto* g = m.mutable_graph();
  for (int depth = 0; depth < 200; ++depth) {
    auto* node = g->add_node();
    node->set_op_type("If");
    node->add_input("c");
    node->add_output("o" + std::to_string(depth));
    auto* a = node->add_attribute();
    a->set_name("then_branch");
    a->set_type(onnx::AttributeProto::GRAPH);
    g = a->mutable_g();
  }
  expect(write("deep.onnx", m), "info $M", 5, "nested deeper than");
}

TEST_F(Hostile, GiantAttributes) {
  // Transpose with a perm of a million entries, a Constant whose tensor dims promise 2^40 floats.
  io::ModelBuilder b(13);
  b.input("x", DType::kFloat, {2, 3}).output("y", DType::kFloat);
  std::vector<int64_t> perm(1 << 20, 0);
  b.node("Transpose", {"x"}, {"y"}).attr("perm", perm);
  expect(write("perm.onnx", b.proto()), "exec $M --random-inputs", 5, "more characters)");
  EXPECT_LT(run_cli("exec " + path("perm.onnx") + " --random-inputs").err.size(), 5000u);

  io::ModelBuilder c(13);
  c.input("x", DType::kFloat, {1}).output("y", DType::kFloat);
  c.node("Constant", {}, {"k"}).attr("value", f32({1}, {1}));
  c.node("Add", {"x", "k"}, {"y"});
  onnx::ModelProto cm = c.proto();
  auto* value = cm.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_t();
  value->clear_dims();
  value->add_dims(int64_t{1} << 40);
  expect(write("const.onnx", cm), "exec $M --random-inputs", 5, "attribute 'value': tensor '': raw_data has 4 bytes, dims [1099511627776] of float need 4398046511104");

  // A 32 MB string attribute is data, not an error.
  onnx::ModelProto big = relu_model();
  auto* attr = big.mutable_graph()->mutable_node(0)->add_attribute();
  attr->set_name("comment");
  attr->set_type(onnx::AttributeProto::STRING);
  attr->set_s(std::string(32 << 20, 'x'));
  auto r = run_cli("exec " + write("bigattr.onnx", big) + " --random-inputs");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// ---- quantizer parameters ----

TEST_F(Hostile, QuantParameters) {
  const float inf = std::numeric_limits<float>::infinity();
  struct Case {
    float scale, bits;
    std::string rounding;
    int code;
    std::string needle;
  };
  const Case cases[] = {
      {0.0f, 8, "ROUND", 1, "scale"},
      {std::nanf(""), 8, "ROUND", 1, "scale"},
      {inf, 8, "ROUND", 1, "scale"},
      {-inf, 8, "ROUND", 1, "scale"},
      {0.5f, 0, "ROUND", 1, "bitwidth must be a positive integer, got 0"},
      {0.5f, -3, "ROUND", 1, "bitwidth must be a positive integer, got -3"},
      {0.5f, 2.5f, "ROUND", 1, "bitwidth must be a positive integer, got 2.5"},
      {0.5f, std::nanf(""), "ROUND", 1, "bitwidth"},
      {0.5f, 65, "ROUND", 6, "65"},
      {0.5f, 8, "ROUND_TO_NOWHERE", 6, "ROUND_TO_NOWHERE"},
      {0.5f, 8, "", 6, "rounding"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::to_string(c.scale) + " " + std::to_string(c.bits) + " " + c.rounding);
    std::string file = write("q.onnx", quant_model(c.scale, c.bits, c.rounding));
    expect(file, "exec $M --random-inputs", c.code, c.needle);
    expect(file, "exec $M --random-inputs", c.code, "node 'Quant_0' (qonnx.custom_op.general::Quant)");
    auto conv = run_cli("convert " + file + " --target qdq -o " + path("q.qdq.onnx"));
    EXPECT_NE(conv.exit_code, 0) << conv.err;
    EXPECT_FALSE(fs::exists(path("q.qdq.onnx")));
  }
}

TEST_F(Hostile, TruncInputCountMustMatchItsVersion) {
  io::ModelBuilder b(13);
  b.import(kQ, 2);
  b.input("x", DType::kFloat, {4}).output("y", DType::kFloat, {4});
  b.initializer("s", f32s(0.5f)).initializer("z", f32s(0)).initializer("ib", f32s(8)).initializer("ob", f32s(4));
  b.node("Trunc", {"x", "s", "z", "ib", "ob"}, {"y"}, kQ).attr("rounding_mode", "FLOOR");
  std::string file = write("trunc.onnx", b.proto());
  expect(file, "exec $M --random-inputs", 5, "Trunc");
  expect(file, "exec $M --random-inputs", 5, "node 'Trunc_0'");
}

// ---- outputs: atomic, never the input ----

TEST_F(Hostile, OutputEqualToInputIsRefused) {
  std::string in = write("m.onnx", relu_model());
  fs::create_symlink(in, path("alias.onnx"));
  expect(in, "convert $M -o $M", 2, "refusing to overwrite the input");
  auto r = run_cli("convert " + in + " -o " + path("alias.onnx"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = run_cli("convert " + in + " -o " + path("./m.onnx") + " --in-place");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// Starts qonnx-cc with `args`, stdout and stderr to /dev/null.
pid_t spawn_cli(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  std::string exe = QONNX_CLI_PATH;
  argv.push_back(exe.data());
  std::vector<std::string> copy = args;
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  if (posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  return pid;
}

// True once `pid` holds a file open for writing in `dir` (the atomic writer's temp file).
bool writing_into(pid_t pid, const fs::path& dir) {
  std::error_code ec;
  fs::path fds = fs::path("/proc") / std::to_string(pid) / "fd";
  std::string prefix = dir.string() + "/";
  for (fs::directory_iterator it(fds, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code lec;
    std::string target = fs::read_symlink(it->path(), lec).string();
    if (lec || target.compare(0, prefix.size(), prefix) != 0) continue;
    std::string name = target.substr(prefix.size());
    if (name[0] == '#' || name.find(".qonnx-tmp-") != std::string::npos) return true;
  }
  return false;
}

class KilledConvert : public Hostile {
 protected:
  // Generates a 96 MB model, converts it into out/ over a previous output and SIGKILLs the convert
  // while it writes. Returns false if the write could not be caught in time (then the test retries).
  bool kill_mid_write(const std::vector<std::string>& extra_env_unused = {}) {
    fs::create_directories(dir_ / "out");
    if (!fs::exists(path("big.onnx"))) {
      io::ModelBuilder b(13);
      b.input("x", DType::kFloat, {1}).output("y", DType::kFloat);
      Tensor w(DType::kFloat, {24 << 20});
      for (int64_t i = 0; i < w.numel(); ++i) w.data<float>()[i] = static_cast<float>(i % 1000);
      b.initializer("w", w);
      b.node("Add", {"x", "w"}, {"y"});
      std::ofstream(path("big.onnx"), std::ios::binary) << b.serialize();
    }
    std::ofstream(dir_ / "out" / "m.onnx", std::ios::binary | std::ios::trunc) << "previous output";
    pid_t pid = spawn_cli({"convert", path("big.onnx"), "--passes", "cleanup", "-o", (dir_ / "out" / "m.onnx").string()});
    if (pid <= 0) return false;
    bool caught = false;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (std::chrono::steady_clock::now() < deadline) {
      if (writing_into(pid, dir_ / "out")) {
        ::kill(pid, SIGKILL);
        caught = true;
        break;
      }
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) return false;  // finished before we caught it
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return caught && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  }

  std::vector<std::string> out_files() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_ / "out")) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
};

TEST_F(KilledConvert, LeavesThePreviousOutputAndNoTempFile) {
  bool killed = false;
  for (int attempt = 0; attempt < 5 && !killed; ++attempt) killed = kill_mid_write();
  ASSERT_TRUE(killed) << "could not catch the convert while it was writing";
  EXPECT_EQ(io::read_file(dir_ / "out" / "m.onnx").value(), "previous output");
  EXPECT_EQ(out_files(), std::vector<std::string>{"m.onnx"});
}

TEST_F(KilledConvert, NamedTempFallbackIsCleanedByTheNextRun) {
  ::setenv("QONNX_ATOMIC_WRITE", "named", 1);
  bool killed = false;
  for (int attempt = 0; attempt < 5 && !killed; ++attempt) killed = kill_mid_write();
  ::unsetenv("QONNX_ATOMIC_WRITE");
  ASSERT_TRUE(killed) << "could not catch the convert while it was writing";
  EXPECT_EQ(io::read_file(dir_ / "out" / "m.onnx").value(), "previous output");
  auto files = out_files();
  ASSERT_EQ(files.size(), 2u) << "the killed run's temp file is expected here";
  EXPECT_NE(files[0].find(".m.onnx.qonnx-tmp-"), std::string::npos) << files[0];
  // The next write of that output removes it (its process is gone).
  std::ofstream(path("small.onnx"), std::ios::binary) << relu_model().SerializeAsString();
  auto r = run_cli("convert " + path("small.onnx") + " --passes cleanup -o " + (dir_ / "out" / "m.onnx").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(out_files(), std::vector<std::string>{"m.onnx"});
}

// ---- fuzz corpora and crash reproducers ----

void replay(const std::string& target, int (*one)(const uint8_t*, size_t)) {
  // Not __FILE__: ccache (base_dir) makes it relative to the build folder.
  fs::path fuzz_dir = fs::path(QONNX_SOURCE_DIR) / "fuzz";
  uint64_t saved_limit = memory_limit();
  auto saved_level = log::level();
  fuzz::init();
  set_memory_limit(fuzz::kFuzzMemoryLimit);
  int files = 0;
  for (const char* kind : {"corpus", "regressions"}) {
    fs::path d = fuzz_dir / kind / target;
    if (!fs::is_directory(d)) continue;
    std::vector<fs::path> inputs;
    for (const auto& e : fs::directory_iterator(d))
      if (e.is_regular_file()) inputs.push_back(e.path());
    std::sort(inputs.begin(), inputs.end());
    for (const auto& p : inputs) {
      SCOPED_TRACE(p.string());
      auto bytes = io::read_file(p);
      ASSERT_TRUE(bytes.is_ok());
      one(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size());
      ++files;
    }
  }
  set_memory_limit(saved_limit);
  log::set_level(saved_level);
  EXPECT_GT(files, 0) << "no inputs under " << fuzz_dir << "/{corpus,regressions}/" << target;
}

TEST(FuzzReplay, Load) { replay("load", fuzz::load_one); }
TEST(FuzzReplay, Exec) { replay("exec", fuzz::exec_one); }
TEST(FuzzReplay, Convert) { replay("convert", fuzz::convert_one); }

}  // namespace
}  // namespace qonnx::test
