// Seeded generator of QONNX models in the idioms real exporters write (the differential test,
// tests/differential/README.md). Each model has one idiom: the feature it exercises on top of a
// baseline (opset 13, IR 8, qonnx.custom_op.general, float32 initializers, per-tensor activations);
// "mixed" randomizes every feature at once. A model is a pure function of (idiom, seed).
//
//   qonnx_diffgen --out DIR --count N [--seed S]      N models + DIR/manifest.tsv
//   qonnx_diffgen --idiom TAG --seed S FILE.onnx       one model (the reproducer of a manifest line)
//   qonnx_diffgen --list-idioms
//
// manifest.tsv: file, idiom, seed, exact outputs (indices compared bit for bit; the others are float
// results such as Softmax, compared with a tolerance). Every value that reaches an exact output is
// computed exactly in float32 whatever the summation order (dyadic scales, bounded integer ranges),
// so onnxruntime and qonnx-cc have to agree to the bit there.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include "ir/tensor_codec.h"
#include "qonnx/tensor.h"

namespace {

namespace fs = std::filesystem;
using qonnx::Dims;
using qonnx::DType;
using qonnx::Tensor;

const std::string kQonnx = "qonnx.custom_op.general";
const std::string kFinnGeneral = "finn.custom_op.general";
const std::string kFinn = "finn";
const std::string kBrevitas = "onnx.brevitas";
const std::string kChannelsLast = "qonnx.custom_op.channels_last";

// splitmix64 (fixed algorithm: the same models on every platform).
struct Rng {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  int range(int lo, int hi) { return lo + static_cast<int>(next() % static_cast<uint64_t>(hi - lo + 1)); }
  bool coin(double p = 0.5) { return uniform() < p; }
  template <typename T>
  const T& pick(const std::vector<T>& v) { return v[next() % v.size()]; }
};

enum class Form { kInitializer, kConstantNode, kConstSubgraph, kMixed };
enum class ParamType { kFloat32, kFloat64, kInt32, kInt64, kMixed };
enum class Granularity { kPerTensor, kPerChannel, kPerElement };
enum class Head { kNone, kSoftmax, kBatchNorm, kReshape, kFlatten, kReduceMax, kSplit };
enum class Topology { kMlp, kConv, kChannelsLast, kIf, kLoop };
enum class Op { kQuant, kIntQuant, kBipolar, kTruncV1, kTruncV2, kMultiThreshold, kFloatQuant, kClConv, kClMaxPool, kClBatchNorm };

const std::vector<std::string> kRoundingModes = {"ROUND", "HALF_EVEN", "CEIL", "FLOOR", "UP", "DOWN", "HALF_UP", "HALF_DOWN"};

struct Recipe {
  int64_t opset = 13, ir = 8;
  std::string domain = kQonnx;
  int64_t domain_version = 2;
  bool import_domain = true;
  bool init_inputs = false;  // initializers also listed as graph inputs (IR < 4 convention)
  Form form = Form::kInitializer;
  ParamType ptype = ParamType::kFloat32;
  Granularity gran = Granularity::kPerTensor;
  bool weight_per_channel = false;
  bool unknown_shapes = false;
  Head head = Head::kNone;
  Topology topo = Topology::kMlp;
  Op op = Op::kQuant;
  std::string rounding = "ROUND";
  int bits = 4;
  bool is_signed = true, narrow = false;
  bool grid = false;      // inputs snapped to half steps of the first quantizer: many rounding ties
  bool zero_point = false;  // a nonzero integer zero point on the first quantizer
};

// The IR version exporters write for an opset.
int64_t ir_for_opset(int64_t opset) {
  if (opset <= 8) return 3;
  if (opset == 9) return 4;
  if (opset == 10) return 5;
  if (opset == 11) return 6;
  if (opset <= 14) return 7;
  if (opset <= 18) return 8;
  return opset <= 20 ? 9 : 10;
}

Head random_head(Rng& r) { return r.pick(std::vector<Head>{Head::kNone, Head::kSoftmax, Head::kBatchNorm, Head::kReshape, Head::kFlatten}); }

// ---- idioms --------------------------------------------------------------------------------------

struct Idiom {
  std::string tag;
  std::function<void(Recipe&, Rng&)> apply;
};

std::vector<Idiom> make_idioms() {
  std::vector<Idiom> out;
  out.push_back({"baseline", [](Recipe&, Rng&) {}});
  // 18..21: above the ONNX library's opsets (docs/opset18-21.md); convert keeps them (never lowers).
  for (int64_t opset = 7; opset <= 21; ++opset)
    out.push_back({fmt::format("opset/{}", opset), [opset](Recipe& r, Rng& g) {
                     r.opset = opset;
                     r.ir = ir_for_opset(opset);
                     r.init_inputs = r.ir < 4;
                     r.head = random_head(g);
                   }});
  for (int64_t ir = 3; ir <= 8; ++ir)
    out.push_back({fmt::format("ir/{}", ir), [ir](Recipe& r, Rng& g) {
                     static const std::map<int64_t, std::vector<int64_t>> opsets = {
                         {3, {7, 8}}, {4, {9}}, {5, {10}}, {6, {11}}, {7, {12, 13, 14}}, {8, {15, 16, 17}}};
                     r.ir = ir;
                     r.opset = g.pick(opsets.at(ir));
                     r.init_inputs = ir < 4;
                   }});
  // Brevitas-style exports list initializers as inputs and often compute bit widths (Ceil, Cast, ...).
  out.push_back({"params/initializer-inputs", [](Recipe& r, Rng& g) {
                   r.init_inputs = true;
                   r.form = g.pick(std::vector<Form>{Form::kInitializer, Form::kConstSubgraph, Form::kMixed});
                 }});
  out.push_back({"params/constant-node", [](Recipe& r, Rng&) { r.form = Form::kConstantNode; }});
  out.push_back({"params/const-subgraph", [](Recipe& r, Rng&) { r.form = Form::kConstSubgraph; }});
  out.push_back({"params/mixed-forms", [](Recipe& r, Rng& g) {
                   r.form = Form::kMixed;
                   r.init_inputs = g.coin();
                 }});
  const std::vector<std::pair<std::string, ParamType>> types = {{"float64", ParamType::kFloat64},
                                                               {"int32", ParamType::kInt32},
                                                               {"int64", ParamType::kInt64},
                                                               {"mixed", ParamType::kMixed}};
  for (const auto& [name, t] : types) {
    ParamType type = t;
    out.push_back({"dtype/" + name, [type](Recipe& r, Rng& g) {
                     r.ptype = type;
                     r.zero_point = g.coin();
                     r.rounding = g.pick(kRoundingModes);
                   }});
  }
  for (const std::string& d : {kQonnx, kFinnGeneral, kFinn, kBrevitas, std::string("ai.onnx")}) {
    out.push_back({"domain/" + d, [d](Recipe& r, Rng&) {
                     r.domain = d == "ai.onnx" ? "" : d;
                     r.domain_version = 1;
                   }});
    if (d != "ai.onnx")
      out.push_back({"domain/" + d + "/not-imported", [d](Recipe& r, Rng&) {
                       r.domain = d;
                       r.import_domain = false;
                     }});
  }
  out.push_back({"scale/per-channel", [](Recipe& r, Rng&) {
                   r.gran = Granularity::kPerChannel;
                   r.weight_per_channel = true;
                 }});
  out.push_back({"scale/per-element", [](Recipe& r, Rng&) {
                   r.gran = Granularity::kPerElement;
                   r.topo = Topology::kConv;
                 }});
  out.push_back({"shape/unknown", [](Recipe& r, Rng& g) {
                   r.unknown_shapes = true;
                   r.head = random_head(g);
                 }});
  out.push_back({"head/softmax", [](Recipe& r, Rng&) { r.head = Head::kSoftmax; }});
  out.push_back({"head/batchnorm", [](Recipe& r, Rng&) { r.head = Head::kBatchNorm; }});
  out.push_back({"head/reshape", [](Recipe& r, Rng&) { r.head = Head::kReshape; }});
  out.push_back({"head/flatten", [](Recipe& r, Rng&) { r.head = Head::kFlatten; }});
  // Ops whose form changed at opset 18 (axes and split sizes from attributes to inputs), at 13..21.
  out.push_back({"head/reducemax", [](Recipe& r, Rng& g) {
                   r.head = Head::kReduceMax;
                   r.opset = g.range(13, 21);
                   r.ir = ir_for_opset(r.opset);
                 }});
  out.push_back({"head/split", [](Recipe& r, Rng& g) {
                   r.head = Head::kSplit;
                   r.opset = g.range(13, 21);
                   r.ir = ir_for_opset(r.opset);
                 }});
  out.push_back({"subgraph/if", [](Recipe& r, Rng&) { r.topo = Topology::kIf; }});
  out.push_back({"subgraph/loop", [](Recipe& r, Rng&) { r.topo = Topology::kLoop; }});
  const std::vector<std::pair<std::string, Op>> ops = {
      {"Quant", Op::kQuant},           {"IntQuant", Op::kIntQuant},       {"BipolarQuant", Op::kBipolar},
      {"Trunc-v1", Op::kTruncV1},      {"Trunc-v2", Op::kTruncV2},        {"MultiThreshold", Op::kMultiThreshold},
      {"FloatQuant", Op::kFloatQuant}, {"channels-last-Conv", Op::kClConv}, {"channels-last-MaxPool", Op::kClMaxPool},
      {"channels-last-BatchNormalization", Op::kClBatchNorm}};
  for (const auto& [name, o] : ops) {
    Op op = o;
    out.push_back({"op/" + name, [op](Recipe& r, Rng& g) {
                     r.op = op;
                     if (op == Op::kTruncV1) r.domain_version = 1;
                     if (op == Op::kTruncV2 && g.coin()) {
                       r.gran = Granularity::kPerChannel;
                       r.weight_per_channel = true;
                     }
                     if (op == Op::kClConv || op == Op::kClMaxPool || op == Op::kClBatchNorm) r.topo = Topology::kChannelsLast;
                     if (op == Op::kTruncV1 || op == Op::kTruncV2) r.rounding = g.pick(kRoundingModes);
                   }});
  }
  for (const std::string& mode : kRoundingModes)
    out.push_back({"round/" + mode, [mode](Recipe& r, Rng& g) {
                     r.rounding = mode;
                     r.grid = g.coin(0.75);
                   }});
  out.push_back({"round/lowercase", [](Recipe& r, Rng& g) {
                   std::string m = g.pick(kRoundingModes);
                   std::transform(m.begin(), m.end(), m.begin(), [](char c) { return static_cast<char>(std::tolower(c)); });
                   r.rounding = m;
                   r.grid = true;
                 }});
  for (int bits = 1; bits <= 16; ++bits)
    out.push_back({fmt::format("bits/{}", bits), [bits](Recipe& r, Rng& g) {
                     r.bits = bits;
                     r.rounding = g.coin() ? "ROUND" : g.pick(kRoundingModes);
                   }});
  out.push_back({"zeropoint/nonzero", [](Recipe& r, Rng& g) {
                   r.zero_point = true;
                   r.rounding = g.pick(kRoundingModes);
                 }});
  out.push_back({"mixed", [](Recipe& r, Rng& g) {
                   r.opset = g.range(7, 17);
                   r.ir = g.coin(0.7) ? ir_for_opset(r.opset) : std::max<int64_t>(ir_for_opset(r.opset), g.range(3, 8));
                   r.init_inputs = r.ir < 4 || g.coin(0.3);
                   r.form = g.pick(std::vector<Form>{Form::kInitializer, Form::kConstantNode, Form::kConstSubgraph, Form::kMixed});
                   r.ptype = g.pick(std::vector<ParamType>{ParamType::kFloat32, ParamType::kFloat64, ParamType::kInt32,
                                                           ParamType::kInt64, ParamType::kMixed});
                   r.gran = g.pick(std::vector<Granularity>{Granularity::kPerTensor, Granularity::kPerChannel, Granularity::kPerElement});
                   r.weight_per_channel = g.coin();
                   r.unknown_shapes = g.coin(0.3);
                   r.head = random_head(g);
                   r.topo = g.pick(std::vector<Topology>{Topology::kMlp, Topology::kConv, Topology::kIf, Topology::kLoop});
                   if (r.gran == Granularity::kPerElement) r.topo = Topology::kConv;
                   r.op = g.pick(std::vector<Op>{Op::kQuant, Op::kIntQuant, Op::kBipolar, Op::kTruncV1, Op::kTruncV2,
                                                 Op::kMultiThreshold, Op::kQuant});
                   r.domain = g.pick(std::vector<std::string>{kQonnx, kFinnGeneral, kBrevitas, kQonnx});
                   r.domain_version = r.op == Op::kTruncV1 ? 1 : 2;
                   r.import_domain = r.op == Op::kTruncV2 || g.coin(0.8);
                   r.rounding = g.pick(kRoundingModes);
                   r.bits = g.range(1, 16);
                   r.grid = g.coin();
                   r.zero_point = g.coin(0.3);
                 }});
  return out;
}

uint64_t mix_seed(const std::string& idiom, uint64_t seed) {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a of the idiom, then the seed
  for (char c : idiom) h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ULL;
  return h ^ (seed * 0x9e3779b97f4a7c15ULL);
}

// ---- model building --------------------------------------------------------------------------------

Tensor make_tensor(DType dtype, const Dims& dims, const std::vector<double>& values) {
  Tensor t(dtype, dims);
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = values[static_cast<size_t>(i) % values.size()];
    switch (dtype) {
      case DType::kFloat: t.data<float>()[i] = static_cast<float>(v); break;
      case DType::kDouble: t.data<double>()[i] = v; break;
      case DType::kInt32: t.data<int32_t>()[i] = static_cast<int32_t>(v); break;
      case DType::kInt64: t.data<int64_t>()[i] = static_cast<int64_t>(v); break;
      case DType::kBool: t.data<bool>()[i] = v != 0; break;
      default: std::fprintf(stderr, "qonnx_diffgen: internal error: no tensor of type %d\n", static_cast<int>(dtype)); std::exit(1);
    }
  }
  return t;
}

enum class Role { kScale, kZeroPoint, kBitWidth };

// One output of the model: its value name and whether it is compared bit for bit.
struct Output {
  std::string name;
  bool exact;
  Dims dims;
};

class Generator {
 public:
  Generator(const Recipe& recipe, uint64_t seed) : r_(recipe), rng_{seed} {
    g_ = model_.mutable_graph();
    g_->set_name("difftest");
  }

  onnx::ModelProto build(const std::string& idiom, uint64_t seed) {
    switch (r_.topo) {
      case Topology::kMlp:
      case Topology::kConv: chain(); break;
      case Topology::kChannelsLast: channels_last(); break;
      case Topology::kIf: if_model(); break;
      case Topology::kLoop: loop_model(); break;
    }
    finish(idiom, seed);
    return model_;
  }

  std::vector<int> exact_outputs() const {
    std::vector<int> out;
    for (size_t i = 0; i < outputs_.size(); ++i)
      if (outputs_[i].exact) out.push_back(static_cast<int>(i));
    return out;
  }

 private:
  std::string fresh(const std::string& prefix) { return fmt::format("{}_{}", prefix, counter_++); }

  onnx::NodeProto* node(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& ins,
                        const std::vector<std::string>& outs, const std::string& domain = "") {
    auto* n = g->add_node();
    n->set_name(fresh(op));
    n->set_op_type(op);
    if (!domain.empty()) n->set_domain(domain);
    for (const auto& i : ins) n->add_input(i);
    for (const auto& o : outs) n->add_output(o);
    if (!domain.empty()) domains_used_.insert(domain);
    return n;
  }
  static onnx::AttributeProto* attr(onnx::NodeProto* n, const std::string& name, onnx::AttributeProto::AttributeType t) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(t);
    return a;
  }
  static void attr_i(onnx::NodeProto* n, const std::string& name, int64_t v) { attr(n, name, onnx::AttributeProto::INT)->set_i(v); }
  static void attr_f(onnx::NodeProto* n, const std::string& name, float v) { attr(n, name, onnx::AttributeProto::FLOAT)->set_f(v); }
  static void attr_s(onnx::NodeProto* n, const std::string& name, const std::string& v) {
    attr(n, name, onnx::AttributeProto::STRING)->set_s(v);
  }
  static void attr_ints(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = attr(n, name, onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }

  std::string initializer(const std::string& hint, const Tensor& t) {
    std::string name = fresh(hint);
    auto* p = g_->add_initializer();
    qonnx::ir::encode_tensor(t, p);
    p->set_name(name);
    return name;
  }

  // A constant in the form the recipe asks for. Everything is emitted in the main graph, so bodies of
  // If/Loop read parameters from the outer scope, as exporters do.
  std::string constant(const std::string& hint, const Tensor& t) {
    Form form = r_.form == Form::kMixed ? rng_.pick(std::vector<Form>{Form::kInitializer, Form::kConstantNode, Form::kConstSubgraph})
                                        : r_.form;
    if (form == Form::kConstantNode) {
      std::string name = fresh(hint);
      auto* n = node(g_, "Constant", {}, {name});
      qonnx::ir::encode_tensor(t, attr(n, "value", onnx::AttributeProto::TENSOR)->mutable_t());
      return name;
    }
    if (form == Form::kConstSubgraph) return const_subgraph(hint, t);
    return initializer(hint, t);
  }

  // A small constant computation giving t: Ceil of a value just below an integer, a Cast, a Mul by
  // one, or a Reshape of the flat values.
  std::string const_subgraph(const std::string& hint, const Tensor& t) {
    std::vector<double> v(static_cast<size_t>(t.numel()));
    for (int64_t i = 0; i < t.numel(); ++i) {
      switch (t.dtype()) {
        case DType::kFloat: v[i] = t.data<float>()[i]; break;
        case DType::kDouble: v[i] = t.data<double>()[i]; break;
        case DType::kInt32: v[i] = t.data<int32_t>()[i]; break;
        case DType::kInt64: v[i] = static_cast<double>(t.data<int64_t>()[i]); break;
        default: return initializer(hint, t);
      }
    }
    const bool is_float = t.dtype() == DType::kFloat || t.dtype() == DType::kDouble;
    bool integral = std::all_of(v.begin(), v.end(), [](double x) { return x == std::floor(x); });
    std::vector<int> choices = {2};  // Mul by one
    if (is_float && integral) choices.push_back(0);
    if (integral || is_float) choices.push_back(1);
    if (t.rank() >= 1 && t.numel() > 1) choices.push_back(3);
    std::string out = fresh(hint);
    switch (rng_.pick(choices)) {
      case 0: {  // Ceil(v - 0.25)
        std::vector<double> below(v);
        for (double& x : below) x -= 0.25;
        node(g_, "Ceil", {initializer(hint + "_below", make_tensor(t.dtype(), t.dims(), below))}, {out});
        break;
      }
      case 1: {  // Cast from another type that holds the values exactly
        DType from = is_float ? (t.dtype() == DType::kFloat ? DType::kDouble : DType::kFloat)
                              : (t.dtype() == DType::kInt64 ? DType::kInt32 : DType::kInt64);
        if (is_float && !integral && from == DType::kFloat) from = DType::kDouble;  // float64 -> float32 is exact here
        auto* n = node(g_, "Cast", {initializer(hint + "_src", make_tensor(from, t.dims(), v))}, {out});
        attr_i(n, "to", static_cast<int64_t>(t.dtype()));
        break;
      }
      case 2: {  // Mul(v, 1)
        node(g_, "Mul", {initializer(hint + "_val", t), initializer(hint + "_one", make_tensor(t.dtype(), {}, {1.0}))}, {out});
        break;
      }
      default: {  // Reshape(flat, dims)
        Dims shape_dims = t.dims();
        std::vector<double> shape(shape_dims.begin(), shape_dims.end());
        node(g_, "Reshape",
             {initializer(hint + "_flat", t.reshaped({t.numel()})),
              initializer(hint + "_shape", make_tensor(DType::kInt64, {static_cast<int64_t>(shape.size())}, shape))},
             {out});
      }
    }
    return out;
  }

  DType param_dtype(Role role) {
    switch (r_.ptype) {
      case ParamType::kFloat32: return DType::kFloat;
      case ParamType::kFloat64: return DType::kDouble;
      case ParamType::kInt32: return role == Role::kScale ? DType::kFloat : DType::kInt32;
      case ParamType::kInt64: return role == Role::kScale ? DType::kFloat : DType::kInt64;
      case ParamType::kMixed:
        if (role == Role::kScale) return rng_.coin() ? DType::kFloat : DType::kDouble;
        return rng_.pick(std::vector<DType>{DType::kFloat, DType::kDouble, DType::kInt32, DType::kInt64});
    }
    return DType::kFloat;
  }

  std::string param(const std::string& hint, Role role, const Dims& dims, const std::vector<double>& values) {
    return constant(hint, make_tensor(param_dtype(role), dims, values));
  }

  // Quantizer domain for the QONNX ops of this model.
  const std::string& qdomain() const { return r_.domain; }

  struct QuantSpec {
    std::string op = "Quant";
    Dims scale_dims;
    std::vector<double> scale;
    double zero_point = 0;
    int bits = 8;
    bool is_signed = true, narrow = false;
    std::string rounding = "ROUND";
    bool omit_defaults = false;  // leave signed/narrow/rounding_mode at their defaults when they match
  };

  std::string quant(onnx::GraphProto* g, const std::string& x, const QuantSpec& q) {
    std::string y = fresh("quant");
    std::string s = param("scale", Role::kScale, q.scale_dims, q.scale);
    if (q.op == "BipolarQuant") {
      node(g, "BipolarQuant", {x, s}, {y}, qdomain());
      return y;
    }
    std::string z = param("zeropt", Role::kZeroPoint, {}, {q.zero_point});
    std::string b = param("bitwidth", Role::kBitWidth, {}, {static_cast<double>(q.bits)});
    auto* n = node(g, q.op, {x, s, z, b}, {y}, qdomain());
    if (!(q.omit_defaults && q.is_signed)) attr_i(n, "signed", q.is_signed ? 1 : 0);
    if (!(q.omit_defaults && !q.narrow)) attr_i(n, "narrow", q.narrow ? 1 : 0);
    if (!(q.omit_defaults && q.rounding == "ROUND")) attr_s(n, "rounding_mode", q.rounding);
    return y;
  }

  // ---- the input and the first (activation) quantizer ----

  // The first quantizer's scale exponent e (scale 2^-e per channel, e - shift[c]), chosen so that the
  // input range [-amp, amp) spans about the quantizer's range and the integers stay below 2^10.
  int act_exponent(int bits, int amp_log2) { return std::clamp(bits - 1 - amp_log2 + rng_.range(-1, 1), 0, 8); }

  // x -> [grid snap] -> [amplify]; returns the value and the amplitude exponent.
  std::string input(const Dims& dims, int grid_exp, int amp_log2) {
    Dims declared = dims;
    if (r_.unknown_shapes) declared[0] = -1;
    add_value_info(g_->add_input(), "x", DType::kFloat, declared, true);
    std::string v = "x";
    if (r_.grid) {
      double step = std::ldexp(1.0, grid_exp);
      std::string m = fresh("scaled"), f = fresh("floored"), d = fresh("snapped");
      node(g_, "Mul", {v, initializer("grid", make_tensor(DType::kFloat, {}, {step}))}, {m});
      node(g_, "Floor", {m}, {f});
      node(g_, "Div", {f, initializer("grid", make_tensor(DType::kFloat, {}, {step}))}, {d});
      v = d;
    }
    if (amp_log2 != 0) {
      std::string a = fresh("amplified");
      node(g_, "Mul", {v, initializer("amplitude", make_tensor(DType::kFloat, {}, {std::ldexp(1.0, amp_log2)}))}, {a});
      v = a;
    }
    return v;
  }

  // known_dims = false: every dim unknown, as a tf2onnx-style dim_param or an empty dim (the ONNX
  // checker wants the shape field itself on graph inputs and outputs).
  void add_value_info(onnx::ValueInfoProto* vi, const std::string& name, DType dtype, const Dims& dims, bool known_dims) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(static_cast<int32_t>(dtype));
    auto* shape = tt->mutable_shape();
    for (int64_t d : dims) {
      auto* dim = shape->add_dim();
      if (!known_dims) {
        if (rng_.coin()) dim->set_dim_param(fresh("unk"));
      } else if (d < 0) {
        dim->set_dim_param("N");
      } else {
        dim->set_dim_value(d);
      }
    }
  }

  // Scale values along `channels` channels for a per-channel quantizer: 2^-(e - shift) with shifts in 0..2.
  std::vector<double> channel_scales(int64_t channels, int e) {
    std::vector<double> s;
    for (int64_t c = 0; c < channels; ++c) s.push_back(std::ldexp(1.0, -std::max(0, e - rng_.range(0, 2))));
    return s;
  }

  // The activation quantizer under test on x of dims `dims` with channel axis `axis`. Returns its output;
  // *unit receives the smallest scale (every output value is an integer multiple of it).
  std::string first_quantizer(const std::string& x, const Dims& dims, size_t axis, int bits, int e, double* unit) {
    QuantSpec q;
    q.op = r_.op == Op::kIntQuant ? "IntQuant" : r_.op == Op::kBipolar ? "BipolarQuant" : "Quant";
    q.bits = bits;
    q.is_signed = r_.is_signed;
    q.narrow = r_.narrow;
    q.rounding = r_.rounding;
    q.omit_defaults = rng_.coin(0.3);
    if (r_.zero_point && bits >= 2) q.zero_point = q.is_signed ? rng_.range(-2, 2) : rng_.range(1, 3);
    switch (r_.gran) {
      case Granularity::kPerTensor:
        q.scale_dims = rng_.coin() ? Dims{} : Dims{1};
        q.scale = {std::ldexp(1.0, -e)};
        break;
      case Granularity::kPerChannel: {
        const int64_t c = dims[axis];
        // (1, C, 1, 1), (C, 1, 1) or for the last axis (C,)
        if (axis + 1 == dims.size()) q.scale_dims = rng_.coin() ? Dims{c} : Dims{1, c};
        else if (rng_.coin()) q.scale_dims = Dims(dims.size(), 1), q.scale_dims[axis] = c;
        else q.scale_dims = Dims(dims.size() - axis, 1), q.scale_dims[0] = c;
        q.scale = channel_scales(c, e);
        break;
      }
      case Granularity::kPerElement: {
        q.scale_dims = rng_.coin() ? dims : Dims(dims.begin() + 1, dims.end());
        int64_t n = 1;
        for (int64_t d : q.scale_dims) n *= d;
        q.scale = channel_scales(n, e);
        break;
      }
    }
    *unit = *std::min_element(q.scale.begin(), q.scale.end());
    if (r_.op == Op::kFloatQuant) return float_quant(x, q);
    return quant(g_, x, q);
  }

  std::string float_quant(const std::string& x, const QuantSpec& q) {
    struct Format { int e, m, bias; };
    const Format f = rng_.pick(std::vector<Format>{{4, 3, 7}, {5, 2, 15}, {3, 2, 3}, {2, 1, 1}, {4, 2, 8}});
    const double max_val = (2.0 - std::ldexp(1.0, -f.m)) * std::ldexp(1.0, (1 << f.e) - 1 - f.bias);
    std::string y = fresh("floatquant");
    auto* n = node(g_, "FloatQuant",
                   {x, param("scale", Role::kScale, q.scale_dims, q.scale), param("exponent_bitwidth", Role::kBitWidth, {}, {double(f.e)}),
                    param("mantissa_bitwidth", Role::kBitWidth, {}, {double(f.m)}),
                    param("exponent_bias", Role::kBitWidth, {}, {double(f.bias)}),
                    param("max_val", Role::kScale, {}, {rng_.coin() ? max_val : max_val / 2})},
                   {y}, qdomain());
    attr_i(n, "has_inf", 0);
    attr_i(n, "has_nan", 0);
    attr_i(n, "has_subnormal", 1);
    attr_i(n, "saturation", 1);
    attr_s(n, "rounding_mode", "ROUND");
    return y;
  }

  // A float weight tensor quantized by a constant quantizer (integers below 2^(bits-1), scale 2^-(bits-1)
  // or per output channel along `out_axis`). *units receives the per-output-channel scale.
  std::string weights(const Dims& dims, size_t out_axis, std::vector<double>* units) {
    const int wbits = r_.op == Op::kBipolar ? 1 : rng_.range(2, 8);
    const int64_t m = dims[out_axis];
    const int e = std::max(0, wbits - 1);
    std::vector<double> scales = r_.weight_per_channel ? channel_scales(m, e) : std::vector<double>{std::ldexp(1.0, -e)};
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    std::vector<double> w(static_cast<size_t>(n));
    for (double& v : w) v = (rng_.uniform() * 2.4 - 1.2);
    std::string winit = initializer("weight", make_tensor(DType::kFloat, dims, w));
    QuantSpec q;
    q.op = r_.op == Op::kBipolar ? "BipolarQuant" : "Quant";
    q.bits = wbits;
    q.narrow = rng_.coin();
    q.scale = scales;
    if (r_.weight_per_channel) {
      q.scale_dims = Dims(dims.size(), 1);
      q.scale_dims[out_axis] = m;
    }
    units->assign(static_cast<size_t>(m), 0);
    for (int64_t c = 0; c < m; ++c) (*units)[static_cast<size_t>(c)] = scales[scales.size() == 1 ? 0 : static_cast<size_t>(c)];
    return quant(g_, winit, q);
  }

  // The second quantizer (or the op under test that replaces it) on the accumulator `acc`, whose values
  // are integer multiples of units[c] along channel axis `axis`.
  std::string second_stage(const std::string& acc, const Dims& dims, size_t axis, const std::vector<double>& units, double magnitude) {
    const int64_t m = dims[axis];
    auto channel_dims = [&]() {
      Dims d(dims.size() - axis, 1);
      d[0] = m;
      if (axis + 1 == dims.size() && rng_.coin()) d = {m};
      return d;
    };
    const double unit = *std::min_element(units.begin(), units.end());
    if (r_.op == Op::kTruncV1 || r_.op == Op::kTruncV2) {
      const bool per_channel = r_.gran == Granularity::kPerChannel && r_.op == Op::kTruncV2;
      const int shift = rng_.range(1, 5), out_bits = rng_.range(2, 8);
      Dims sd = per_channel ? channel_dims() : Dims{};
      std::vector<double> s = per_channel ? units : std::vector<double>{unit}, out_s;
      for (double v : s) out_s.push_back(std::ldexp(v, shift));
      std::string y = fresh("trunc");
      std::vector<std::string> ins = {acc, param("scale", Role::kScale, sd, s), param("zeropt", Role::kZeroPoint, {}, {0}),
                                      param("in_bitwidth", Role::kBitWidth, {}, {24})};
      if (r_.op == Op::kTruncV2) ins.push_back(param("out_scale", Role::kScale, sd, out_s));
      ins.push_back(param("out_bitwidth", Role::kBitWidth, {}, {double(r_.op == Op::kTruncV1 ? 24 - shift : out_bits)}));
      auto* n = node(g_, "Trunc", ins, {y}, qdomain());
      if (r_.rounding != "FLOOR" || rng_.coin()) attr_s(n, "rounding_mode", r_.rounding);
      if (r_.op == Op::kTruncV2) {
        attr_i(n, "signed", 1);
        attr_i(n, "narrow", rng_.coin(0.3) ? 1 : 0);
      }
      return y;
    }
    std::string relu = fresh("relu");
    node(g_, "Relu", {acc}, {relu});
    if (r_.op == Op::kMultiThreshold) {
      const int bits = rng_.range(1, 4);
      const int64_t steps = (int64_t{1} << bits) - 1;
      const bool per_channel = rng_.coin();
      const int64_t rows = per_channel ? m : 1;
      std::vector<double> thr;
      for (int64_t c = 0; c < rows; ++c) {
        std::vector<double> row;
        for (int64_t t = 0; t < steps; ++t) row.push_back(std::round(rng_.uniform() * magnitude / unit) * unit);
        std::sort(row.begin(), row.end());
        thr.insert(thr.end(), row.begin(), row.end());
      }
      std::string y = fresh("thresholded");
      auto* n = node(g_, "MultiThreshold", {relu, initializer("thresholds", make_tensor(DType::kFloat, {rows, steps}, thr))}, {y},
                     r_.domain == kFinn || r_.domain == kFinnGeneral ? r_.domain : kQonnx);
      const bool is_signed = bits > 1 && rng_.coin();
      attr_s(n, "out_dtype", bits == 1 ? std::string("BINARY") : fmt::format("{}INT{}", is_signed ? "" : "U", bits));
      if (is_signed) attr_f(n, "out_bias", -static_cast<float>(int64_t{1} << (bits - 1)));
      if (rng_.coin()) attr_f(n, "out_scale", static_cast<float>(std::ldexp(1.0, -rng_.range(0, 3))));
      return y;
    }
    QuantSpec q;
    q.bits = r_.bits >= 9 ? r_.bits : rng_.range(2, 8);
    q.is_signed = rng_.coin(0.3);
    q.narrow = rng_.coin(0.3);
    q.rounding = r_.rounding;
    // A power of two or an arbitrary scale: the accumulator is exact, so x / scale is the same
    // correctly rounded division in both runtimes either way.
    double s = 2.0 * magnitude / std::ldexp(1.0, q.bits);
    s = rng_.coin() ? std::ldexp(1.0, static_cast<int>(std::floor(std::log2(s)))) : static_cast<double>(static_cast<float>(s * (0.7 + 0.6 * rng_.uniform())));
    q.scale = {s};
    return quant(g_, relu, q);
  }

  // BatchNormalization parameters (per channel) that keep the result exact: var + eps a power of four,
  // gamma a power of two, mean and beta multiples of `unit`.
  std::vector<std::string> exact_bn_params(int64_t c, double unit, float* eps) {
    *eps = 0x1.0p-20f;
    std::vector<double> gamma, beta, mean, var;
    for (int64_t i = 0; i < c; ++i) {
      gamma.push_back(std::ldexp(1.0, rng_.range(-1, 1)));
      beta.push_back(rng_.range(-4, 4) * unit);
      mean.push_back(rng_.range(-4, 4) * unit);
      var.push_back(std::ldexp(1.0, 2 * rng_.range(-1, 1)) - static_cast<double>(*eps));
    }
    return {constant("bn_gamma", make_tensor(DType::kFloat, {c}, gamma)), constant("bn_beta", make_tensor(DType::kFloat, {c}, beta)),
            constant("bn_mean", make_tensor(DType::kFloat, {c}, mean)), constant("bn_var", make_tensor(DType::kFloat, {c}, var))};
  }

  // A float head after the last quantizer; whether its result is exact (data movement only).
  std::string head(const std::string& x, const Dims& dims, bool* exact, Dims* out_dims) {
    *exact = true;
    *out_dims = dims;
    switch (r_.head) {
      case Head::kNone: return x;
      case Head::kSoftmax: {
        std::string y = fresh("softmax");
        auto* n = node(g_, "Softmax", {x}, {y});
        if (dims.size() == 2 && rng_.coin()) attr_i(n, "axis", 1);
        *exact = false;
        return y;
      }
      case Head::kBatchNorm: {
        const int64_t c = dims[1];
        std::vector<double> gamma, beta, mean, var;
        for (int64_t i = 0; i < c; ++i) {
          gamma.push_back(0.5 + rng_.uniform());
          beta.push_back(rng_.uniform() - 0.5);
          mean.push_back(rng_.uniform() - 0.5);
          var.push_back(0.1 + rng_.uniform());
        }
        std::string y = fresh("batchnorm");
        auto* n = node(g_, "BatchNormalization",
                       {x, constant("bn_gamma", make_tensor(DType::kFloat, {c}, gamma)), constant("bn_beta", make_tensor(DType::kFloat, {c}, beta)),
                        constant("bn_mean", make_tensor(DType::kFloat, {c}, mean)), constant("bn_var", make_tensor(DType::kFloat, {c}, var))},
                       {y});
        attr_f(n, "epsilon", rng_.coin() ? 1e-5f : 1e-3f);
        *exact = false;
        return y;
      }
      case Head::kReshape: {
        std::string y = fresh("reshaped");
        std::vector<double> shape = dims.size() == 2 ? std::vector<double>{-1} : std::vector<double>{0, -1};
        node(g_, "Reshape", {x, initializer("shape", make_tensor(DType::kInt64, {static_cast<int64_t>(shape.size())}, shape))}, {y});
        int64_t n = 1;
        for (int64_t d : dims) n *= d;
        *out_dims = dims.size() == 2 ? Dims{n} : Dims{dims[0], n / dims[0]};
        return y;
      }
      case Head::kReduceMax: {  // over the feature/channel axis (exact: a maximum is one of its inputs)
        std::string y = fresh("reducemax");
        const bool keep = rng_.coin();
        onnx::NodeProto* n;
        if (r_.opset >= 18) n = node(g_, "ReduceMax", {x, initializer("axes", make_tensor(DType::kInt64, {1}, {1}))}, {y});
        else attr_ints(n = node(g_, "ReduceMax", {x}, {y}), "axes", {1});
        attr_i(n, "keepdims", keep ? 1 : 0);
        out_dims->erase(out_dims->begin() + 1);
        if (keep) out_dims->insert(out_dims->begin() + 1, 1);
        return y;
      }
      case Head::kSplit: {  // the feature/channel axis in two parts, concatenated the other way round
        const int64_t c = dims[1];
        std::string a = fresh("split_a"), b = fresh("split_b"), y = fresh("split_swapped");
        onnx::NodeProto* n;
        if (c % 2 != 0 || rng_.coin()) {  // explicit sizes
          const int64_t first = (c + 1) / 2;
          const std::vector<double> sizes = {static_cast<double>(first), static_cast<double>(c - first)};
          n = node(g_, "Split", {x, initializer("split", make_tensor(DType::kInt64, {2}, sizes))}, {a, b});
        } else {
          n = node(g_, "Split", {x}, {a, b});
          if (r_.opset >= 18) attr_i(n, "num_outputs", 2);
        }
        attr_i(n, "axis", 1);
        attr_i(node(g_, "Concat", {b, a}, {y}), "axis", 1);
        return y;
      }
      case Head::kFlatten: {
        std::string y = fresh("flattened");
        auto* n = node(g_, "Flatten", {x}, {y});
        attr_i(n, "axis", 1);
        int64_t n_all = 1;
        for (int64_t d : dims) n_all *= d;
        *out_dims = {dims[0], n_all / dims[0]};
        return y;
      }
    }
    return x;
  }

  void add_output(const std::string& name, bool exact, const Dims& dims) { outputs_.push_back({name, exact, dims}); }

  // ---- topologies ----

  // x -> Q0 -> MatMul/Conv with quantized weights (+ bias) -> Q1 (or the op under test) -> head.
  void chain() {
    const bool conv = r_.topo == Topology::kConv;
    // Sums stay exact: at most 36 products below 2^17 units each (2^10 activation, 2^7 weight).
    const int64_t k = conv && rng_.coin() ? 3 : 1, batch = conv ? 1 : rng_.range(1, 3);
    const int64_t c = rng_.range(2, k == 3 ? 4 : 6), m = rng_.range(2, 6), hw = rng_.range(3, 5);
    Dims xd = conv ? Dims{batch, c, hw, hw} : Dims{batch, c};
    if (r_.unknown_shapes) xd[0] = 1;
    const int bits = r_.bits, amp = rng_.range(0, 2);
    const int e = act_exponent(bits, amp);
    std::string x = input(xd, e + 1, amp);
    double unit = 1;
    std::string q0 = first_quantizer(x, xd, 1, bits, e, &unit);
    add_output(q0, true, xd);

    std::vector<double> wunits;
    std::string acc = fresh("acc");
    Dims ad;
    if (conv) {
      std::string w = weights({m, c, k, k}, 0, &wunits);
      std::vector<double> bias;
      for (int64_t i = 0; i < m; ++i) bias.push_back(rng_.range(-8, 8) * unit * wunits[static_cast<size_t>(i)]);
      auto* n = node(g_, "Conv", {q0, w, constant("bias", make_tensor(DType::kFloat, {m}, bias))}, {acc});
      attr_ints(n, "kernel_shape", {k, k});
      attr_ints(n, "pads", {k / 2, k / 2, k / 2, k / 2});
      ad = {batch, m, hw, hw};
    } else {
      std::string w = weights({c, m}, 1, &wunits);
      std::string mm = fresh("matmul");
      node(g_, "MatMul", {q0, w}, {mm});
      std::vector<double> bias;
      for (int64_t i = 0; i < m; ++i) bias.push_back(rng_.range(-8, 8) * unit * wunits[static_cast<size_t>(i)]);
      node(g_, "Add", {mm, constant("bias", make_tensor(DType::kFloat, {m}, bias))}, {acc});
      ad = {batch, m};
    }
    std::vector<double> units;
    for (double u : wunits) units.push_back(u * unit);
    const double magnitude = std::ldexp(1.0, amp) * std::sqrt(static_cast<double>(c * (conv ? k * k : 1)));
    std::string q1 = second_stage(acc, ad, 1, units, magnitude);
    bool exact = true;
    Dims hd;
    std::string out = head(q1, ad, &exact, &hd);
    if (out != q1 && rng_.coin()) add_output(q1, true, ad);
    add_output(out, exact, hd);
  }

  // Channels-last input through the qonnx.custom_op.channels_last op under test.
  void channels_last() {
    const int64_t c = rng_.range(2, 4), m = rng_.range(2, 4), hw = 2 * rng_.range(2, 3), k = rng_.coin() ? 1 : 3;
    Dims xd = {1, hw, hw, c};
    const int bits = r_.bits, amp = rng_.range(0, 2), e = act_exponent(bits, amp);
    std::string x = input(xd, e + 1, amp);
    double unit = 1;
    std::string q0 = first_quantizer(x, xd, 3, bits, e, &unit);
    add_output(q0, true, xd);
    domains_used_.insert(kChannelsLast);
    if (r_.op == Op::kClMaxPool) {
      std::string y = fresh("maxpool");
      auto* n = node(g_, "MaxPool", {q0}, {y}, kChannelsLast);
      attr_ints(n, "kernel_shape", {2, 2});
      attr_ints(n, "strides", {2, 2});
      add_output(y, true, {1, hw / 2, hw / 2, c});
      return;
    }
    if (r_.op == Op::kClBatchNorm) {
      float eps = 0;
      std::vector<std::string> p = exact_bn_params(c, unit, &eps);
      std::string y = fresh("batchnorm");
      auto* n = node(g_, "BatchNormalization", {q0, p[0], p[1], p[2], p[3]}, {y}, kChannelsLast);
      attr_f(n, "epsilon", eps);
      Recipe keep = r_;
      r_.op = Op::kQuant;
      std::string q1 = second_stage(y, xd, 3, {unit / 2}, std::ldexp(1.0, amp + 1));
      r_ = keep;
      add_output(q1, true, xd);
      return;
    }
    std::vector<double> wunits;
    std::string w = weights({m, k, k, c}, 0, &wunits);
    std::vector<double> bias;
    for (int64_t i = 0; i < m; ++i) bias.push_back(rng_.range(-8, 8) * unit * wunits[static_cast<size_t>(i)]);
    std::string acc = fresh("acc");
    auto* n = node(g_, "Conv", {q0, w, constant("bias", make_tensor(DType::kFloat, {m}, bias))}, {acc}, kChannelsLast);
    attr_ints(n, "kernel_shape", {k, k});
    attr_ints(n, "pads", {k / 2, k / 2, k / 2, k / 2});
    std::vector<double> units;
    for (double u : wunits) units.push_back(u * unit);
    Recipe keep = r_;
    r_.op = Op::kQuant;
    std::string q1 = second_stage(acc, {1, hw, hw, m}, 3, units, std::ldexp(1.0, amp) * std::sqrt(double(c * k * k)));
    r_ = keep;
    add_output(q1, true, {1, hw, hw, m});
  }

  // Moves the main-graph node at `index` to the end: the constants its bodies read from the outer
  // scope are emitted while the bodies are built, after the node itself.
  void move_to_end(int index) {
    for (int i = index; i + 1 < g_->node_size(); ++i) g_->mutable_node()->SwapElements(i, i + 1);
  }

  onnx::GraphProto* body_graph(onnx::NodeProto* n, const std::string& attr_name) {
    auto* a = attr(n, attr_name, onnx::AttributeProto::GRAPH);
    a->mutable_g()->set_name(fresh(attr_name));
    return a->mutable_g();
  }

  // A quantizer in a subgraph body on an outer value; its parameters live in the outer graph.
  std::string body_quant(onnx::GraphProto* body, const std::string& x, int e) {
    QuantSpec q;
    q.op = r_.op == Op::kBipolar ? "BipolarQuant" : r_.op == Op::kIntQuant ? "IntQuant" : "Quant";
    q.bits = rng_.range(2, 8);
    q.is_signed = rng_.coin(0.7);
    q.narrow = rng_.coin(0.3);
    q.rounding = rng_.coin() ? r_.rounding : rng_.pick(kRoundingModes);
    q.scale = {std::ldexp(1.0, -std::max(0, e - rng_.range(0, 2)))};
    return quant(body, x, q);
  }

  // The input of the subgraph models, (batch, C), through the first quantizer (an output too).
  struct Quantized {
    Dims dims;
    int exponent;
    double unit;
    std::string value;
  };
  Quantized quantized_input(bool with_cond) {
    const int64_t batch = rng_.range(1, 2), c = rng_.range(2, 6);
    Quantized q{{batch, c}, 0, 1, ""};
    if (r_.unknown_shapes) q.dims[0] = 1;
    const int amp = rng_.range(0, 2);
    q.exponent = act_exponent(r_.bits, amp);
    std::string x = input(q.dims, q.exponent + 1, amp);
    if (with_cond) add_value_info(g_->add_input(), "cond", DType::kBool, {}, true);
    q.value = first_quantizer(x, q.dims, 1, r_.bits, q.exponent, &q.unit);
    add_output(q.value, true, q.dims);
    return q;
  }

  // x -> Q0 -> If(cond) { Quant_a(q0) } else { Quant_b(q0) }.
  void if_model() {
    const Quantized in = quantized_input(true);
    const Dims& xd = in.dims;
    const std::string& q0 = in.value;
    const int e = in.exponent;
    std::string y = fresh("if_out");
    auto* n = node(g_, "If", {"cond"}, {y});
    const int index = g_->node_size() - 1;
    for (const char* branch : {"then_branch", "else_branch"}) {
      onnx::GraphProto* body = body_graph(n, branch);
      std::string out = body_quant(body, q0, e);
      add_value_info(body->add_output(), out, DType::kFloat, xd, !r_.unknown_shapes);
    }
    move_to_end(index);
    add_output(y, true, xd);
  }

  // x -> Q0 -> Loop(M, true, q0) { v' = Quant(v + delta) } -> v_final.
  void loop_model() {
    const Quantized in = quantized_input(false);
    const Dims& xd = in.dims;
    const std::string& q0 = in.value;
    const int e = in.exponent;
    const double unit = in.unit;
    const int64_t c = xd[1];
    std::vector<double> delta;
    for (int64_t i = 0; i < c; ++i) delta.push_back(rng_.range(-4, 4) * unit);
    std::string trip = initializer("trip_count", make_tensor(DType::kInt64, {}, {double(rng_.range(1, 3))}));
    std::string cond = initializer("keep_going", make_tensor(DType::kBool, {}, {1}));
    std::string delta_name = constant("delta", make_tensor(DType::kFloat, {c}, delta));
    std::string y = fresh("loop_out");
    auto* n = node(g_, "Loop", {trip, cond, q0}, {y});
    const int index = g_->node_size() - 1;
    onnx::GraphProto* body = body_graph(n, "body");
    add_value_info(body->add_input(), "iteration", DType::kInt64, {}, true);
    add_value_info(body->add_input(), "cond_in", DType::kBool, {}, true);
    add_value_info(body->add_input(), "v_in", DType::kFloat, xd, !r_.unknown_shapes);
    std::string sum = fresh("sum");
    node(body, "Add", {"v_in", delta_name}, {sum});
    std::string v_out = body_quant(body, sum, e);
    std::string cond_out = fresh("cond_out");
    node(body, "Identity", {"cond_in"}, {cond_out});
    add_value_info(body->add_output(), cond_out, DType::kBool, {}, true);
    add_value_info(body->add_output(), v_out, DType::kFloat, xd, !r_.unknown_shapes);
    move_to_end(index);
    add_output(y, true, xd);
  }

  // ---- header, graph outputs, initializers as inputs ----

  void finish(const std::string& idiom, uint64_t seed) {
    model_.set_ir_version(r_.ir);
    model_.set_producer_name("qonnx-cc difftest");
    model_.set_producer_version(idiom);
    auto* def = model_.add_opset_import();
    def->set_domain("");
    def->set_version(r_.opset);
    for (const std::string& d : domains_used_) {
      if (d == r_.domain && !r_.import_domain) continue;
      auto* op = model_.add_opset_import();
      op->set_domain(d);
      op->set_version(d == kQonnx || d == kFinnGeneral || d == kBrevitas ? r_.domain_version : 1);
    }
    for (const Output& o : outputs_) add_value_info(g_->add_output(), o.name, DType::kFloat, o.dims, !r_.unknown_shapes);
    if (r_.init_inputs) {
      for (const auto& init : g_->initializer()) {
        Dims dims(init.dims().begin(), init.dims().end());
        add_value_info(g_->add_input(), init.name(), static_cast<DType>(init.data_type()), dims, true);
      }
    }
    auto* kv = model_.add_metadata_props();
    kv->set_key("qonnx-cc.difftest");
    kv->set_value(fmt::format("idiom={} seed={}", idiom, seed));
  }

  Recipe r_;
  Rng rng_;
  onnx::ModelProto model_;
  onnx::GraphProto* g_;
  int counter_ = 0;
  std::set<std::string> domains_used_;
  std::vector<Output> outputs_;
};

// The recipe of (idiom, seed): the baseline with random non-idiom choices, then the idiom's changes.
struct Generated {
  onnx::ModelProto model;
  std::vector<int> exact;
};

Generated generate(const Idiom& idiom, uint64_t seed) {
  Rng rng{mix_seed(idiom.tag, seed)};
  Recipe r;
  r.topo = rng.coin() ? Topology::kMlp : Topology::kConv;
  r.bits = rng.range(2, 8);
  r.is_signed = rng.coin();
  r.narrow = rng.coin(0.3);
  r.weight_per_channel = rng.coin();
  r.grid = rng.coin(0.3);
  idiom.apply(r, rng);
  Generator g(r, rng.next());
  Generated out;
  out.model = g.build(idiom.tag, seed);
  out.exact = g.exact_outputs();
  return out;
}

bool write_model(const fs::path& file, const onnx::ModelProto& m) {
  std::ofstream f(file, std::ios::binary);
  return f && m.SerializeToOstream(&f) && f.flush();
}

std::string exact_list(const std::vector<int>& v) {
  if (v.empty()) return "-";
  return fmt::format("{}", fmt::join(v, ","));
}

int usage() {
  std::fprintf(stderr,
               "usage: qonnx_diffgen --out DIR --count N [--seed S]   N models + DIR/manifest.tsv\n"
               "       qonnx_diffgen --idiom TAG --seed S FILE.onnx    one model\n"
               "       qonnx_diffgen --list-idioms\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string out_dir, idiom_tag, file;
  long long count = -1;
  unsigned long long seed = 1;
  bool list = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "qonnx_diffgen: %s needs a value\n", a.c_str());
        std::exit(usage());
      }
      return argv[++i];
    };
    try {
      if (a == "--out") out_dir = value();
      else if (a == "--count") count = std::stoll(value());
      else if (a == "--seed") seed = std::stoull(value());
      else if (a == "--idiom") idiom_tag = value();
      else if (a == "--list-idioms") list = true;
      else if (a == "-h" || a == "--help") return usage(), 0;
      else if (!a.empty() && a[0] != '-' && file.empty()) file = a;
      else return usage();
    } catch (const std::exception&) {
      std::fprintf(stderr, "qonnx_diffgen: bad number for %s\n", a.c_str());
      return 2;
    }
  }
  const std::vector<Idiom> idioms = make_idioms();
  if (list) {
    for (const auto& i : idioms) std::printf("%s\n", i.tag.c_str());
    return 0;
  }
  if (!idiom_tag.empty()) {
    if (file.empty()) return usage();
    auto it = std::find_if(idioms.begin(), idioms.end(), [&](const Idiom& i) { return i.tag == idiom_tag; });
    if (it == idioms.end()) {
      std::fprintf(stderr, "qonnx_diffgen: unknown idiom '%s' (--list-idioms)\n", idiom_tag.c_str());
      return 2;
    }
    Generated g = generate(*it, seed);
    if (!write_model(file, g.model)) {
      std::fprintf(stderr, "qonnx_diffgen: cannot write %s\n", file.c_str());
      return 4;
    }
    std::printf("%s\t%s\t%llu\t%s\n", file.c_str(), it->tag.c_str(), seed, exact_list(g.exact).c_str());
    return 0;
  }
  if (out_dir.empty() || count < 0) return usage();
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  std::ofstream manifest(fs::path(out_dir) / "manifest.tsv");
  if (ec || !manifest) {
    std::fprintf(stderr, "qonnx_diffgen: cannot write to %s\n", out_dir.c_str());
    return 4;
  }
  manifest << "# file\tidiom\tseed\texact_outputs\n";
  // Model i: idiom i mod K, seed S + i (so one --seed gives every idiom once per K models).
  for (long long i = 0; i < count; ++i) {
    const Idiom& idiom = idioms[static_cast<size_t>(i) % idioms.size()];
    const uint64_t model_seed = seed + static_cast<uint64_t>(i);
    Generated g = generate(idiom, model_seed);
    std::string name = fmt::format("m{:05d}.onnx", i);
    if (!write_model(fs::path(out_dir) / name, g.model)) {
      std::fprintf(stderr, "qonnx_diffgen: cannot write %s\n", name.c_str());
      return 4;
    }
    manifest << name << '\t' << idiom.tag << '\t' << model_seed << '\t' << exact_list(g.exact) << '\n';
  }
  if (!manifest.flush()) return 4;
  return 0;
}
