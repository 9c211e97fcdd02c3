'use strict';
// Seeded single-op models for the arithmetic comparison with onnxruntime (tests/ort/ort_arithmetic.js,
// docs/ort-arithmetic.md): every op whose float arithmetic ONNX leaves open, on random inputs of several
// shapes (sizes that are not multiples of 4/8/16, so vectorized tails show) and value ranges.
//
// Each case says what qonnx-cc promises against onnxruntime's CPU provider:
//   expect: 'exact'           bit-identical outputs;
//   expect: { ulps: N, why }  at most N units in the last place apart (the reason in `why`);
//   expect: { abs: E, why }   at most E apart (where outputs near 0 make ulps meaningless);
// and, for ops onnxruntime computes with MLAS kernels chosen by the CPU, which kernel the promise is about:
//   isa: 'fma3'               MLAS's AVX2/FMA3 kernels (also used on AVX-512 CPUs for these ops);
//   isa: 'fma3-softmax'       MLAS's AVX2/FMA3 softmax kernels (AVX-512 CPUs use others).
//
//   node arith_cases.js --out DIR [--seed S] [--filter SUBSTR]
// writes DIR/<case>/model.onnx and DIR/<case>/input_K.pb (the layout of `qonnx-cc exec --input-dir`).
const fs = require('fs');
const path = require('path');
const { encodeTensorProto, keyBytes, lenDelimited, varintBytes } = require('../../tools/ort/tensor_proto.js');

const FLOAT = 1;
const INT64 = 7;

// ---- a minimal ModelProto writer (field numbers from onnx.proto) ----

const varintField = (field, v) => Buffer.from([...keyBytes(field, 0), ...varintBytes(v)]);
const stringField = (field, s) => lenDelimited(field, Buffer.from(s, 'utf8'));
function float32Field(field, v) {
  const b = Buffer.alloc(4);
  b.writeFloatLE(v);
  return Buffer.concat([Buffer.from(keyBytes(field, 5)), b]);
}

// Attribute values: float(x), int(x), str(s), ints([..]), floats([..]).
const float = (v) => ({ kind: 'float', v });
const int = (v) => ({ kind: 'int', v });
const str = (v) => ({ kind: 'string', v });
const ints = (v) => ({ kind: 'ints', v });
const floats = (v) => ({ kind: 'floats', v });

function encodeAttribute(name, a) {
  const parts = [stringField(1, name)];
  switch (a.kind) {
    case 'float': parts.push(float32Field(2, a.v), varintField(20, 1)); break;
    case 'int': parts.push(varintField(3, a.v), varintField(20, 2)); break;
    case 'string': parts.push(stringField(4, a.v), varintField(20, 3)); break;
    case 'floats': parts.push(...a.v.map((x) => float32Field(7, x)), varintField(20, 6)); break;
    case 'ints': parts.push(...a.v.map((x) => varintField(8, x)), varintField(20, 7)); break;
    default: throw new Error(`attribute ${name}: unknown kind ${a.kind}`);
  }
  return Buffer.concat(parts);
}

function encodeValueInfo(name, dataType, dims) {
  const dimProtos = (dims || []).map((d) => lenDelimited(1, varintField(1, d)));
  const tensorType = Buffer.concat([varintField(1, dataType), ...(dims ? [lenDelimited(2, Buffer.concat(dimProtos))] : [])]);
  return Buffer.concat([stringField(1, name), lenDelimited(2, lenDelimited(1, tensorType))]);
}

// One node in the default domain; inputs { name, dataType, dims, data, constant } (a constant becomes an
// initializer, an empty name an omitted optional input); outputs { name, dataType } (shape left open).
function encodeModel({ op, opset, attrs, inputs, outputs }) {
  const node = Buffer.concat([
    ...inputs.map((t) => stringField(1, t.name)),
    ...outputs.map((t) => stringField(2, t.name)),
    stringField(3, `${op}_0`),
    stringField(4, op),
    ...Object.entries(attrs || {}).map(([k, a]) => lenDelimited(5, encodeAttribute(k, a))),
  ]);
  const present = inputs.filter((t) => t.name !== '');
  const graph = Buffer.concat([
    lenDelimited(1, node),
    stringField(2, `${op}_graph`),
    ...present.filter((t) => t.constant).map((t) => lenDelimited(5, encodeTensorProto(t))),
    ...present.filter((t) => !t.constant).map((t) => lenDelimited(11, encodeValueInfo(t.name, t.dataType, t.dims))),
    ...outputs.map((t) => lenDelimited(12, encodeValueInfo(t.name, t.dataType, null))),
  ]);
  const ir = opset >= 21 ? 10 : opset >= 19 ? 9 : opset >= 15 ? 8 : 7;
  return Buffer.concat([
    varintField(1, ir),
    stringField(2, 'qonnx-cc tests/ort/arith_cases.js'),
    lenDelimited(7, graph),
    lenDelimited(8, Buffer.concat([stringField(1, ''), varintField(2, opset)])),
  ]);
}

// ---- seeded values ----

// mulberry32: a small, well-mixed 32-bit generator; the same seed gives the same cases everywhere.
function makeRng(seed) {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    uniform: (lo, hi) => lo + (hi - lo) * next(),
    normal: () => Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next()),
    pick: (list) => list[Math.floor(next() * list.length)],
  };
}

// Value generators: (rng) => number.
const uniform = (lo, hi) => (rng) => rng.uniform(lo, hi);
const normal = (mean, sd) => (rng) => mean + sd * rng.normal();
const logUniform = (lo, hi) => (rng) => Math.exp(rng.uniform(Math.log(lo), Math.log(hi)));
const smallInts = (lo, hi) => (rng) => Math.floor(rng.uniform(lo, hi + 1));
// Mostly `base`, sometimes large magnitudes (1e2..1e4) and zeros: the ranges where formulas part.
const withLarge = (base) => (rng) => {
  const r = rng.uniform(0, 1);
  if (r < 0.1) return (rng.uniform(0, 1) < 0.5 ? -1 : 1) * Math.exp(rng.uniform(Math.log(100), Math.log(1e4)));
  if (r < 0.12) return 0;
  return base(rng);
};

const numel = (dims) => dims.reduce((a, b) => a * b, 1);

function tensor(rng, name, dims, gen) {
  const data = new Float32Array(numel(dims));
  for (let i = 0; i < data.length; ++i) data[i] = gen(rng);
  return { name, dataType: FLOAT, dims, data, constant: false };
}
const int64s = (name, values) => ({ name, dataType: INT64, dims: [values.length], data: BigInt64Array.from(values.map(BigInt)), constant: true });
const floatConst = (name, values, dims = [values.length]) => ({ name, dataType: FLOAT, dims, data: Float32Array.from(values), constant: true });
const omitted = { name: '' };

// ---- the cases ----

const EXACT = 'exact';
const ulps = (n, why) => ({ ulps: n, why });
const EIGEN_MATH = 'onnxruntime evaluates it with Eigen\'s vectorized exp/log/sin/... approximations';

// Shapes for elementwise ops: 7, 51, 198 and 1031 elements.
const ELEMENTWISE_SHAPES = [[7], [3, 17], [2, 3, 33], [1, 1031]];
// NCHW shapes for per-channel ops: spatial sizes 1, 15, 49, 130.
const NCHW_SHAPES = [[2, 3, 1, 1], [1, 4, 3, 5], [2, 5, 7, 7], [1, 3, 10, 13]];
// Row lengths for Softmax-like ops: 1, 3, 7, 17, 33, 100, 1000.
const ROW_SHAPES = [[4, 1], [5, 3], [3, 7], [2, 17], [3, 33], [2, 100], [2, 1000], [2, 3, 19]];

function caseList(seed) {
  const rng = makeRng(seed);
  const cases = [];
  // add(op, variant, spec): spec = { opset, attrs, inputs: [tensor...], outputs: n | [dataType...], expect }.
  const add = (op, variant, spec) => {
    const outTypes = Array.isArray(spec.outputs) ? spec.outputs : Array(spec.outputs || 1).fill(spec.inputs[0].dataType || FLOAT);
    cases.push({
      name: `${op}.${variant}`,
      op,
      opset: spec.opset,
      attrs: spec.attrs || {},
      inputs: spec.inputs,
      outputs: outTypes.map((dataType, k) => ({ name: `y${k}`, dataType })),
      expect: spec.expect,
      isa: spec.isa,
    });
  };
  const shapeName = (dims) => dims.join('x');

  // Unary elementwise ops over every elementwise shape.
  const unary = (op, opset, gen, expect, attrs, variant = '', isa) => {
    for (const dims of ELEMENTWISE_SHAPES)
      add(op, `${variant}${shapeName(dims)}`, { opset, attrs, inputs: [tensor(rng, 'x', dims, gen)], expect, isa });
  };
  const wide = withLarge(uniform(-5, 5));
  unary('Exp', 13, uniform(-88, 88), ulps(1, EIGEN_MATH));
  unary('Log', 13, logUniform(1e-6, 1e6), ulps(2, EIGEN_MATH));
  unary('Sqrt', 13, logUniform(1e-6, 1e6), EXACT);
  unary('Reciprocal', 13, wide, EXACT);
  unary('Erf', 13, uniform(-4, 4), EXACT, {}, '', 'fma3');
  unary('Sigmoid', 13, withLarge(uniform(-20, 20)), EXACT, {}, '', 'fma3');
  unary('Tanh', 13, withLarge(uniform(-10, 10)), EXACT, {}, '', 'fma3');
  unary('HardSigmoid', 6, wide, EXACT, { alpha: float(0.3), beta: float(0.4) });
  unary('HardSwish', 14, wide, EXACT);
  unary('Elu', 6, wide, ulps(8, EIGEN_MATH), { alpha: float(0.7) });
  unary('Selu', 6, wide, ulps(8, EIGEN_MATH));
  unary('Celu', 12, wide, ulps(8, EIGEN_MATH), { alpha: float(1.3) });
  unary('Softplus', 1, withLarge(uniform(-20, 20)), ulps(4, EIGEN_MATH));
  unary('Softsign', 1, wide, ulps(2, 'onnxruntime divides by 1 + |x| in Eigen\'s vectorized form'));
  unary('Mish', 18, withLarge(uniform(-20, 20)), ulps(256, `${EIGEN_MATH}; near 0 the output is tiny, so the ulps are small in absolute terms`));
  unary('LeakyRelu', 6, wide, EXACT, { alpha: float(0.13) });
  unary('ThresholdedRelu', 10, wide, EXACT, { alpha: float(0.5) });
  unary('Gelu', 20, withLarge(uniform(-6, 6)), EXACT, {}, 'none.', 'fma3');
  unary('Gelu', 20, withLarge(uniform(-6, 6)), EXACT, { approximate: str('tanh') }, 'tanh.', 'fma3');
  for (const fn of ['Sin', 'Cos', 'Atan']) unary(fn, 7, uniform(-3, 3), ulps(4, EIGEN_MATH));
  unary('Tan', 7, uniform(-3, 3), EXACT);
  for (const fn of ['Asin', 'Acos']) unary(fn, 7, uniform(-0.999, 0.999), ulps(8, EIGEN_MATH));
  unary('Acosh', 9, uniform(1, 100), EXACT);
  unary('Round', 11, wide, EXACT);

  // Binary arithmetic: a tensor with a tensor, a per-row vector and a constant scalar.
  for (const op of ['Div', 'Pow']) {
    const base = op === 'Pow' ? logUniform(0.01, 100) : wide;
    const exponent = op === 'Pow' ? uniform(-4, 4) : withLarge(uniform(0.1, 5));
    for (const dims of ELEMENTWISE_SHAPES) {
      add(op, `tensor.${shapeName(dims)}`, { opset: 13, inputs: [tensor(rng, 'a', dims, base), tensor(rng, 'b', dims, exponent)], expect: EXACT });
      add(op, `row.${shapeName(dims)}`, { opset: 13, inputs: [tensor(rng, 'a', dims, base), tensor(rng, 'b', [dims[dims.length - 1]], exponent)], expect: EXACT });
    }
  }
  for (const [label, e] of [['square', 2], ['cube', 3], ['sqrt', 0.5], ['inverse', -1], ['frac', 1.7]])
    add('Pow', `const_${label}`, { opset: 13, inputs: [tensor(rng, 'a', [3, 101], logUniform(0.01, 100)), floatConst('b', [e], [])], expect: EXACT });
  for (const d of [3, 7, 0.1, 255])
    add('Div', `const_${d}`, { opset: 13, inputs: [tensor(rng, 'a', [3, 101], wide), floatConst('b', [d], [])], expect: EXACT });
  for (const n of [2, 3, 5])
    add('Mean', `${n}_inputs`, { opset: 13, inputs: Array.from({ length: n }, (_, k) => tensor(rng, `x${k}`, [3, 37], wide)), expect: EXACT });
  add('Mean', 'broadcast', { opset: 13, inputs: [tensor(rng, 'x0', [3, 37], wide), tensor(rng, 'x1', [37], wide), tensor(rng, 'x2', [3, 1], wide)], expect: EXACT });

  // Softmax family: the last axis and an inner axis (opset 13), the 2-D coercion (opset 11).
  for (const op of ['Softmax', 'LogSoftmax', 'Hardmax']) {
    const isa = op === 'Hardmax' ? undefined : 'fma3-softmax';
    for (const dims of ROW_SHAPES) {
      add(op, `last.${shapeName(dims)}`, { opset: 13, inputs: [tensor(rng, 'x', dims, uniform(-10, 10))], expect: EXACT, isa });
      add(op, `large.${shapeName(dims)}`, { opset: 13, inputs: [tensor(rng, 'x', dims, uniform(-1000, 1000))], expect: EXACT, isa });
    }
    add(op, 'axis1.2x17x5', { opset: 13, attrs: { axis: int(1) }, inputs: [tensor(rng, 'x', [2, 17, 5], uniform(-10, 10))], expect: EXACT, isa });
    add(op, 'coerce1.2x3x7', { opset: 11, attrs: { axis: int(1) }, inputs: [tensor(rng, 'x', [2, 3, 7], uniform(-10, 10))], expect: EXACT, isa });
  }

  // Normalizations.
  for (const dims of NCHW_SHAPES) {
    const c = dims[1];
    const params = () => [
      tensor(rng, 'scale', [c], uniform(-2, 2)), tensor(rng, 'bias', [c], uniform(-2, 2)),
      tensor(rng, 'mean', [c], uniform(-1, 1)), tensor(rng, 'var', [c], uniform(0, 3)),
    ];
    for (const opset of [9, 15])
      add('BatchNormalization', `opset${opset}.${shapeName(dims)}`, {
        opset, attrs: { epsilon: float(1e-3) }, inputs: [tensor(rng, 'x', dims, wide), ...params()], expect: EXACT });
    add('BatchNormalization', `const_params.${shapeName(dims)}`, {
      opset: 15, inputs: [tensor(rng, 'x', dims, wide), ...params().map((t) => ({ ...t, constant: true }))], expect: EXACT });
    add('InstanceNormalization', shapeName(dims), {
      opset: 6, attrs: { epsilon: float(1e-4) },
      inputs: [tensor(rng, 'x', dims, wide), tensor(rng, 'scale', [c], uniform(-2, 2)), tensor(rng, 'bias', [c], uniform(-2, 2))], expect: EXACT });
    add('MeanVarianceNormalization', shapeName(dims), { opset: 13, inputs: [tensor(rng, 'x', dims, uniform(-3, 3))], expect: EXACT });
    for (const size of [3, 5])
      add('LRN', `size${size}.${shapeName(dims)}`, { opset: 13, attrs: { size: int(size), alpha: float(2e-4), beta: float(0.75), bias: float(1.5) },
        inputs: [tensor(rng, 'x', dims, uniform(-3, 3))], expect: ulps(4, 'onnxruntime raises to -beta with Eigen\'s vectorized pow') });
  }
  // LayerNormalization: bit-identical with a bias and a Scale of more than one dimension over rows of 8
  // or more; onnxruntime takes other paths otherwise, not reproduced.
  const LAYER_NORM = 'with a 1-D Scale, without a bias or on rows shorter than 8 onnxruntime 1.30 takes other paths '
    + '(float ones, going by InvStdDev), not reproduced';
  const layerNorm = (variant, dims, axis, { withBias = true } = {}) => {
    const norm = dims.slice(axis < 0 ? dims.length + axis : axis);
    const inputs = [tensor(rng, 'x', dims, withLarge(uniform(-3, 3))), tensor(rng, 'scale', norm, uniform(-2, 2))];
    if (withBias) inputs.push(tensor(rng, 'bias', norm, uniform(-2, 2)));
    add('LayerNormalization', `${variant}axis${axis}.${shapeName(dims)}`, { opset: 17, attrs: { axis: int(axis), epsilon: float(1e-5) },
      inputs, outputs: [FLOAT, FLOAT, FLOAT],
      expect: norm.length > 1 && withBias && numel(norm) >= 8 ? EXACT : { abs: 8e-6, why: LAYER_NORM } });
  };
  for (const dims of [[2, 7], [3, 33], [2, 5, 100], [1, 3, 1031]])
    for (const axis of [-1, 1]) layerNorm('', dims, axis);
  for (const [dims, groups] of [[[2, 4, 3, 5], 2], [[1, 6, 7, 7], 3], [[2, 8, 17], 4]]) {
    add('GroupNormalization', `opset18.${shapeName(dims)}`, { opset: 18, attrs: { num_groups: int(groups), epsilon: float(1e-5) },
      inputs: [tensor(rng, 'x', dims, uniform(-3, 3)), tensor(rng, 'scale', [groups], uniform(-2, 2)), tensor(rng, 'bias', [groups], uniform(-2, 2))], expect: EXACT });
    add('GroupNormalization', `opset21.${shapeName(dims)}`, { opset: 21, attrs: { num_groups: int(groups), epsilon: float(1e-5) },
      inputs: [tensor(rng, 'x', dims, uniform(-3, 3)), tensor(rng, 'scale', [dims[1]], uniform(-2, 2)), tensor(rng, 'bias', [dims[1]], uniform(-2, 2))], expect: EXACT });
  }

  // Reductions: the last axis, an inner axis, everything.
  const reductions = [
    ['ReduceSum', uniform(-5, 5)], ['ReduceMean', uniform(-5, 5)], ['ReduceSumSquare', uniform(-5, 5)],
    ['ReduceL1', uniform(-5, 5)], ['ReduceL2', uniform(-5, 5)], ['ReduceLogSum', uniform(0.01, 5)],
    ['ReduceLogSumExp', uniform(-20, 20)], ['ReduceProd', uniform(0.5, 1.5)], ['ReduceMax', uniform(-5, 5)], ['ReduceMin', uniform(-5, 5)],
  ];
  for (const [op, gen] of reductions) {
    // KR, KR, KR, KRK, RKR, R (no axes), RK, RK (merged), KRK (merged), RKR (merged), and a pattern without fast path.
    for (const [dims, axes] of [[[3, 7], [1]], [[2, 33], [-1]], [[2, 1031], [1]], [[4, 17, 5], [1]], [[3, 5, 7], [0, 2]],
      [[2, 3, 19], null], [[7, 33], [0]], [[5, 3, 7], [0, 1]], [[2, 3, 4, 5], [1, 2]], [[2, 3, 4, 5], [0, 3]], [[2, 3, 4, 5], [0, 2]]]) {
      const label = `${axes ? axes.join('_') : 'all'}.${shapeName(dims)}`;
      const opset = op === 'ReduceSum' ? 13 : 18;
      const inputs = [tensor(rng, 'x', dims, gen), axes ? int64s('axes', axes) : omitted];
      add(op, label, { opset, attrs: { keepdims: int(0) }, inputs, expect: EXACT });
    }
  }

  // Pools: global, padded with and without counting the pads, strided.
  for (const dims of NCHW_SHAPES) add('GlobalAveragePool', shapeName(dims), { opset: 1, inputs: [tensor(rng, 'x', dims, wide)], expect: EXACT });
  for (const [variant, attrs] of [
    ['3x3', { kernel_shape: ints([3, 3]) }],
    ['3x3_pad', { kernel_shape: ints([3, 3]), pads: ints([1, 1, 1, 1]) }],
    ['3x3_pad_count', { kernel_shape: ints([3, 3]), pads: ints([1, 1, 1, 1]), count_include_pad: int(1) }],
    ['2x2_s2_ceil', { kernel_shape: ints([2, 2]), strides: ints([2, 2]), ceil_mode: int(1) }],
    ['5x1', { kernel_shape: ints([5, 1]) }],
  ]) add('AveragePool', variant, { opset: 19, attrs, inputs: [tensor(rng, 'x', [2, 3, 11, 13], wide)], expect: EXACT });
  add('AveragePool', '1d_k7', { opset: 19, attrs: { kernel_shape: ints([7]) }, inputs: [tensor(rng, 'x', [2, 3, 40], wide)], expect: EXACT });
  add('LpPool', 'p2_3x3', { opset: 18, attrs: { kernel_shape: ints([3, 3]), p: int(2) }, inputs: [tensor(rng, 'x', [2, 3, 11, 13], wide)], expect: EXACT });

  // Gemm's alpha and beta: small integers make every product sum exact, so only their application shows.
  for (const [m, k, n] of [[3, 5, 7], [17, 9, 33]]) {
    for (const cDims of [[n], [m, n], []]) {
      const label = `${m}x${k}x${n}.c${cDims.length ? shapeName(cDims) : 'none'}`;
      const inputs = [tensor(rng, 'a', [m, k], smallInts(-8, 8)), tensor(rng, 'b', [k, n], smallInts(-8, 8))];
      if (cDims.length) inputs.push(tensor(rng, 'c', cDims, uniform(-5, 5)));
      add('Gemm', label, { opset: 13, attrs: { alpha: float(0.37), beta: float(1.9) }, inputs, expect: EXACT, isa: 'fma3' });
    }
  }

  // Resize: linear and cubic weights on the two innermost axes (the only ones onnxruntime scales).
  // align_corners is left out: there onnxruntime departs from the ONNX reference (tests/ort/README.md).
  const RESIZE = 'with exclude_outside onnxruntime renormalizes its cubic weights in a way not reproduced';
  const resizeModes = [
    ['linear', 'half_pixel'], ['linear', 'asymmetric'], ['linear', 'pytorch_half_pixel'], ['cubic', 'half_pixel'], ['cubic', 'asymmetric'],
  ];
  for (const [mode, ctm] of resizeModes) {
    for (const [label, scales] of [['up', [1, 1, 1.7, 2.3]], ['down', [1, 1, 0.6, 0.45]]]) {
      const attrs = { mode: str(mode), coordinate_transformation_mode: str(ctm) };
      add('Resize', `${mode}.${ctm}.${label}`, { opset: 13, attrs,
        inputs: [tensor(rng, 'x', [1, 2, 9, 11], uniform(-5, 5)), omitted, floatConst('scales', scales)], expect: EXACT });
    }
  }
  add('Resize', 'cubic.a-0.5.exclude_outside', { opset: 13,
    attrs: { mode: str('cubic'), cubic_coeff_a: float(-0.5), exclude_outside: int(1) },
    inputs: [tensor(rng, 'x', [1, 2, 9, 11], uniform(-5, 5)), omitted, floatConst('scales', [1, 1, 1.9, 0.7])], expect: { abs: 1.6e-5, why: RESIZE } });

  // Einsum: contractions on small integers, where every order of summation gives the same sum (the
  // order is qonnx-cc's own, like Conv's and MatMul's): what remains is that nothing else differs.
  for (const [eq, dims] of [['ij,jk->ik', [[5, 7], [7, 3]]], ['bij,bjk->bik', [[2, 3, 4], [2, 4, 5]]], ['ii->i', [[6, 6]]], ['ij->', [[5, 9]]]])
    add('Einsum', eq.replace(/[,>-]/g, '_'), { opset: 12, attrs: { equation: str(eq) },
      inputs: dims.map((d, k) => tensor(rng, `x${k}`, d, smallInts(-4, 4))), expect: EXACT });

  layerNorm('', [3, 2, 3], 1);
  layerNorm('', [2, 3, 17], -2);
  layerNorm('nobias.', [2, 4, 9], 1, { withBias: false });
  // Resize of a 2-D tensor, cubic with pytorch_half_pixel, and output sizes instead of scales.
  add('Resize', 'linear.half_pixel.rank2', { opset: 13, attrs: { mode: str('linear') },
    inputs: [tensor(rng, 'x', [9, 11], uniform(-5, 5)), omitted, floatConst('scales', [1.7, 0.6])], expect: EXACT });
  add('Resize', 'cubic.pytorch_half_pixel.up', { opset: 13, attrs: { mode: str('cubic'), coordinate_transformation_mode: str('pytorch_half_pixel') },
    inputs: [tensor(rng, 'x', [1, 3, 7, 5], uniform(-5, 5)), omitted, floatConst('scales', [1, 1, 2.5, 3.1])], expect: EXACT });
  for (const mode of ['linear', 'cubic'])
    add('Resize', `${mode}.sizes`, { opset: 13, attrs: { mode: str(mode) },
      inputs: [tensor(rng, 'x', [2, 2, 7, 9], uniform(-5, 5)), omitted, omitted, int64s('sizes', [2, 2, 13, 5])], expect: EXACT });
  // BatchNormalization in training mode: the batch's statistics, and the running ones as outputs.
  for (const dims of [[2, 3, 5, 7], [3, 4, 1, 1], [1, 2, 33, 1]]) {
    const c = dims[1];
    add('BatchNormalization', `training.${shapeName(dims)}`, {
      opset: 15, attrs: { training_mode: int(1), epsilon: float(1e-3), momentum: float(0.8) },
      inputs: [tensor(rng, 'x', dims, wide), tensor(rng, 'scale', [c], uniform(-2, 2)), tensor(rng, 'bias', [c], uniform(-2, 2)),
        tensor(rng, 'mean', [c], uniform(-1, 1)), tensor(rng, 'var', [c], uniform(0, 3))],
      outputs: [FLOAT, FLOAT, FLOAT], expect: EXACT });
  }
  return cases;
}

// Writes every case (or those whose name contains `filter`) to DIR/<case>/.
function writeCases(dir, seed, filter) {
  for (const c of caseList(seed)) {
    if (filter && !c.name.includes(filter)) continue;
    const d = path.join(dir, c.name);
    fs.mkdirSync(d, { recursive: true });
    fs.writeFileSync(path.join(d, 'model.onnx'), encodeModel(c));
    c.inputs.filter((t) => t.name !== '' && !t.constant)
      .forEach((t, k) => fs.writeFileSync(path.join(d, `input_${k}.pb`), encodeTensorProto(t)));
  }
}

module.exports = { caseList, encodeModel };

if (require.main === module) {
  const args = process.argv.slice(2);
  const value = (flag, fallback) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : fallback);
  const out = value('--out', null);
  if (!out) {
    process.stderr.write('usage: node arith_cases.js --out DIR [--seed S] [--filter SUBSTR]\n');
    process.exit(2);
  }
  writeCases(out, Number(value('--seed', '1')), value('--filter', ''));
}
