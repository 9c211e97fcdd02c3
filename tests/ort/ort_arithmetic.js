#!/usr/bin/env node
'use strict';
// Bit-level comparison of qonnx-cc's float arithmetic with onnxruntime's CPU provider (docs/ort-arithmetic.md):
// runs every case of arith_cases.js in `qonnx-cc exec` and in onnxruntime-node (graph optimizations off,
// one thread) on the same inputs, and checks what the case promises: bit-identical outputs, or at most N
// ulps apart. Prints one line per op (passed/failed/skipped, the largest distance seen) and every failure.
//
//   node ort_arithmetic.js --qonnx-cc BIN [--seed S] [--filter SUBSTR] [--threads N] [--opt-level L] [--all]
//
// --all prints every case with its distance (the measurement behind the docs). A case is skipped when
// onnxruntime has no kernel for it, or when its promise is about MLAS kernels this CPU does not run (see
// `isa` in arith_cases.js). Exit 0 when nothing failed, 1 on a failure, 2 on usage errors, 77 when
// onnxruntime-node cannot be loaded (ctest SKIP_RETURN_CODE).
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');
const { decodeTensorProto, encodeTensorProto } = require('../../tools/ort/tensor_proto.js');
const { caseList, encodeModel } = require('./arith_cases.js');

const USAGE = 'usage: node ort_arithmetic.js --qonnx-cc BIN [--seed S] [--filter SUBSTR] [--threads N] [--opt-level L] [--all]';

function parseArgs(argv) {
  const o = { qcc: null, seed: 1, filter: '', threads: 1, optLevel: 'disabled', all: false };
  for (let i = 0; i < argv.length; ++i) {
    const value = () => {
      if (i + 1 >= argv.length) usage(`${argv[i]} needs a value`);
      return argv[++i];
    };
    switch (argv[i]) {
      case '--qonnx-cc': o.qcc = value(); break;
      case '--seed': o.seed = Number(value()); break;
      case '--filter': o.filter = value(); break;
      case '--threads': o.threads = Number(value()); break;
      case '--opt-level': o.optLevel = value(); break;
      case '--all': o.all = true; break;
      default: usage(`unknown argument '${argv[i]}'`);
    }
  }
  if (!o.qcc) usage('--qonnx-cc BIN is required');
  if (!Number.isInteger(o.seed) || !Number.isInteger(o.threads) || o.threads < 1) usage('--seed and --threads take integers');
  return o;
}

function usage(message) {
  process.stderr.write(`ort_arithmetic: ${message}\n${USAGE}\n`);
  process.exit(2);
}

// The MLAS kernel families onnxruntime picks on this CPU (x86-64 Linux; elsewhere none is assumed).
function cpuKernels() {
  let flags = [];
  try {
    const line = fs.readFileSync('/proc/cpuinfo', 'utf8').split('\n').find((l) => l.startsWith('flags'));
    flags = line ? line.split(':')[1].trim().split(/\s+/) : [];
  } catch (e) { /* not Linux: no MLAS-specific promise applies */ }
  const fma3 = process.arch === 'x64' && flags.includes('avx2') && flags.includes('fma');
  return { fma3, 'fma3-softmax': fma3 && !flags.includes('avx512f') };
}

// Distance in units in the last place between two float32 values; NaN equals NaN.
function ulpDistance(a, b) {
  if (Number.isNaN(a) && Number.isNaN(b)) return 0;
  if (Number.isNaN(a) || Number.isNaN(b)) return Infinity;
  const bits = (v) => { const x = new Int32Array(new Float32Array([v]).buffer)[0]; return x < 0 ? -2147483648 - x : x; };
  return Math.abs(bits(a) - bits(b));
}

// Largest ulp distance between two decoded tensors, and where; Infinity for a type or shape mismatch.
function distance(ort, ours) {
  if (ort.dataType !== ours.dataType || JSON.stringify(ort.dims) !== JSON.stringify(ours.dims))
    return { ulps: Infinity, text: `ort ${ort.dataType}${JSON.stringify(ort.dims)} vs qonnx-cc ${ours.dataType}${JSON.stringify(ours.dims)}` };
  let worst = 0, at = -1, differing = 0, abs = 0;
  for (let i = 0; i < ort.data.length; ++i) {
    const d = ulpDistance(ort.data[i], ours.data[i]);
    if (d > 0) ++differing;
    if (d > worst) { worst = d; at = i; }
    if (d > 0) abs = Math.max(abs, Number.isFinite(d) ? Math.abs(ort.data[i] - ours.data[i]) : Infinity);
  }
  const text = worst === 0 ? 'identical'
    : `${differing} of ${ort.data.length} differ, worst ${worst} ulps at ${at}: ort ${ort.data[at]} vs qonnx-cc ${ours.data[at]}; `
      + `largest absolute difference ${abs.toPrecision(3)}`;
  return { ulps: worst, abs, text };
}

function runQonnx(o, dir, c) {
  const args = ['exec', path.join(dir, 'model.onnx'), '--output-dir', path.join(dir, 'qonnx'), '--threads', String(o.threads), '-q'];
  if (c.inputs.some((t) => t.name !== '' && !t.constant)) args.push('--input-dir', dir);
  const r = spawnSync(o.qcc, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`qonnx-cc exec exit ${r.status}: ${(r.stderr || '').trim().split('\n').pop()}`);
  return c.outputs.map((_, k) => decodeTensorProto(fs.readFileSync(path.join(dir, 'qonnx', `output_${k}.pb`))));
}

async function runOrt(ort, o, model, c) {
  const session = await ort.InferenceSession.create(model, {
    graphOptimizationLevel: o.optLevel, intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential',
  });
  const feeds = {};
  for (const t of c.inputs.filter((t) => t.name !== '' && !t.constant))
    feeds[t.name] = new ort.Tensor('float32', t.data, t.dims);
  const results = await session.run(feeds);
  return c.outputs.map((t) => ({ dataType: t.dataType, dims: results[t.name].dims.map(Number), data: results[t.name].data }));
}

// onnxruntime-node, installed by scripts/install-ort.sh when missing; exit 77 (skip) when that fails.
function loadOrt() {
  const module = path.join(__dirname, '../../tools/ort/node_modules/onnxruntime-node');
  try {
    return require(module);
  } catch (e) {
    console.log(`ort_arithmetic: onnxruntime-node is not installed (${e.message.split('\n')[0]}); running scripts/install-ort.sh`);
  }
  spawnSync('bash', [path.join(__dirname, '../../scripts/install-ort.sh')], { stdio: ['ignore', 'inherit', 'inherit'] });
  try {
    return require(module);
  } catch (e) {
    console.log('SKIP: onnxruntime-node cannot be installed on this machine (scripts/install-ort.sh failed)');
    process.exit(77);
  }
}

function promise(c) {
  if (c.expect === 'exact') return 'bit-identical';
  return `${c.expect.ulps !== undefined ? `<= ${c.expect.ulps} ulps` : `within ${c.expect.abs} absolute`} (${c.expect.why})`;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const ort = loadOrt();
  const version = require(path.join(__dirname, '../../tools/ort/node_modules/onnxruntime-node/package.json')).version;
  console.log(`ort_arithmetic: onnxruntime-node ${version}, seed ${o.seed}, qonnx-cc --threads ${o.threads}, onnxruntime optimizations ${o.optLevel}`);
  const kernels = cpuKernels();
  console.log(`ort_arithmetic: MLAS AVX2/FMA3 kernels on this CPU: ${kernels.fma3 ? 'yes' : 'no'}, its softmax kernels: ${kernels['fma3-softmax'] ? 'yes' : 'no'}`);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'qonnx_ort_arith.'));
  const perOp = new Map();
  const failures = [];
  try {
    const cases = caseList(o.seed).filter((c) => c.name.includes(o.filter));
    if (cases.length === 0) usage(`no case matches '${o.filter}'`);
    for (const c of cases) {
      const s = perOp.get(c.op) || { passed: 0, failed: 0, skipped: 0, worst: 0 };
      perOp.set(c.op, s);
      if (c.isa && !kernels[c.isa]) {
        ++s.skipped;
        if (o.all) console.log(`SKIP  ${c.name}: the promise is about MLAS's ${c.isa} kernels, which onnxruntime does not use on this CPU`);
        continue;
      }
      const dir = path.join(work, c.name);
      fs.mkdirSync(dir, { recursive: true });
      const model = encodeModel(c);
      fs.writeFileSync(path.join(dir, 'model.onnx'), model);
      c.inputs.filter((t) => t.name !== '' && !t.constant)
        .forEach((t, k) => fs.writeFileSync(path.join(dir, `input_${k}.pb`), encodeTensorProto(t)));
      let theirs;
      try {
        theirs = await runOrt(ort, o, model, c);
      } catch (e) {
        ++s.skipped;
        if (o.all) console.log(`SKIP  ${c.name}: onnxruntime: ${e.message.split('\n')[0]}`);
        continue;
      }
      let line;
      try {
        const ours = runQonnx(o, dir, c);
        const d = ours.map((t, k) => distance(theirs[k], t));
        const worst = Math.max(...d.map((x) => x.ulps));
        const worstAbs = Math.max(...d.map((x) => x.abs));
        const ok = c.expect === 'exact' ? worst === 0 : c.expect.ulps !== undefined ? worst <= c.expect.ulps : worstAbs <= c.expect.abs;
        s.worst = Math.max(s.worst, worst);
        ok ? ++s.passed : ++s.failed;
        line = `${ok ? 'PASS' : 'FAIL'}  ${c.name}: ${d.map((x, k) => `y${k} ${x.text}`).join('; ')}; promised ${promise(c)}`;
      } catch (e) {
        ++s.failed;
        line = `FAIL  ${c.name}: ${e.message}`;
      }
      if (line.startsWith('FAIL')) failures.push(line);
      if (o.all || line.startsWith('FAIL')) console.log(line);
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  console.log('\nop                          passed failed skipped  max ulps');
  let passed = 0, failed = 0, skipped = 0;
  for (const [op, s] of perOp) {
    console.log(`${op.padEnd(28)}${String(s.passed).padStart(6)}${String(s.failed).padStart(7)}${String(s.skipped).padStart(8)}  ${s.worst}`);
    passed += s.passed; failed += s.failed; skipped += s.skipped;
  }
  console.log(`\n${passed} passed, ${failed} failed, ${skipped} skipped (no onnxruntime kernel, or other MLAS kernels on this CPU)`);
  process.exit(failures.length ? 1 : 0);
}

main().catch((e) => {
  console.error(`ort_arithmetic: ${e.stack || e.message}`);
  process.exit(1);
});
