#!/usr/bin/env node
'use strict';
// Runs an ONNX model with onnxruntime (npm package onnxruntime-node, CPU) on ONNX backend-test style
// files: D/input_K.pb for the K-th runtime input (session.inputNames order), O/output_K.pb for the K-th
// output (session.outputNames order, with the output names). Optionally compares the outputs with
// DIR/output_K.pb (e.g. what `qonnx-cc exec --output-dir` wrote).
//
// Exit codes (as qonnx-cc where they overlap): 0 ok, 1 onnxruntime failed while running, 2 usage,
// 3 cannot read an input or expected file, 4 cannot write, 5 invalid tensor file, 6 onnxruntime cannot
// load the model (unsupported op/domain, invalid model), 7 outputs differ from --expect,
// 10 onnxruntime-node is not installed (run scripts/install-ort.sh).
const fs = require('fs');
const os = require('os');
const path = require('path');
const { TYPES, ORT_TO_ONNX, typeName, decodeTensorProto, encodeTensorProto } = require('./tensor_proto');

const USAGE = `usage: node run_ort.js MODEL.onnx [--input-dir D] [--output-dir O] [--threads N]
                   [--opt-level disabled|basic|extended|all] [--repeat N] [--expect DIR [--atol A] [--rtol R] [--max-mismatch F]] [--quiet]
                   [--batch-size B]
  --input-dir D    read D/input_K.pb for the K-th model input (session.inputNames order)
  --output-dir O   write O/output_K.pb for the K-th output (session.outputNames order)
  --threads N      intra-op threads (default 1: deterministic)
  --opt-level L    onnxruntime graph optimization level (default disabled: every node runs as written)
  --repeat N       then run N more times on the same inputs (same session) and print the steady-state
                   time per run (min and median, ms) to stderr: onnxruntime's own time per run (its
                   profiler's model_run events, as qonnx-cc exec times its runs), then the wall time of
                   each session.run() call, which adds onnxruntime-node's copy of the outputs into
                   JavaScript buffers (fresh pages each run: 2-3 ms per run on some VMs)
  --expect DIR     compare with DIR/output_K.pb: integers and bools exactly, floats within
                   |ort - expected| <= atol + rtol * |expected| (default atol 1e-5, rtol 1e-4; NaN == NaN)
  --max-mismatch F  accept up to this fraction of float elements beyond tolerance (default 0)
  --batch-size B   dataset mode, as qonnx-cc exec --batch-size: every input holds N samples along axis 0;
                   run them B at a time (the last run takes the rest) and print samples/s of the runs
                   (onnxruntime's own run times, as --repeat; not with --output-dir, --expect or --repeat)`;

class ExitError extends Error {
  constructor(code, message) { super(message); this.code = code; }
}

function parseArgs(argv) {
  const o = { model: null, inputDir: null, outputDir: null, threads: 1, optLevel: 'disabled', expect: null, atol: 1e-5, rtol: 1e-4, maxMismatch: 0, quiet: false, repeat: 0, batchSize: 0 };
  const needValue = (i, flag) => {
    if (i + 1 >= argv.length) throw new ExitError(2, `${flag} needs a value\n${USAGE}`);
    return argv[i + 1];
  };
  const number = (v, flag, { integer = false, min = 0 } = {}) => {
    const n = Number(v);
    if (v === '' || !Number.isFinite(n) || n < min || (integer && !Number.isInteger(n)))
      throw new ExitError(2, `${flag}: invalid value '${v}'`);
    return n;
  };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    switch (a) {
      case '--input-dir': o.inputDir = needValue(i++, a); break;
      case '--output-dir': o.outputDir = needValue(i++, a); break;
      case '--threads': o.threads = number(needValue(i++, a), a, { integer: true, min: 1 }); break;
      case '--opt-level': o.optLevel = needValue(i++, a); break;
      case '--repeat': o.repeat = number(needValue(i++, a), a, { integer: true, min: 0 }); break;
      case '--expect': o.expect = needValue(i++, a); break;
      case '--atol': o.atol = number(needValue(i++, a), a); break;
      case '--rtol': o.rtol = number(needValue(i++, a), a); break;
      case '--max-mismatch': o.maxMismatch = number(needValue(i++, a), a); break;
      case '--batch-size': o.batchSize = number(needValue(i++, a), a, { integer: true, min: 1 }); break;
      case '--quiet': case '-q': o.quiet = true; break;
      case '--help': case '-h': process.stdout.write(USAGE + '\n'); process.exit(0); break;
      default:
        if (a.startsWith('-')) throw new ExitError(2, `unknown option '${a}'\n${USAGE}`);
        if (o.model !== null) throw new ExitError(2, `more than one model given ('${o.model}', '${a}')\n${USAGE}`);
        o.model = a;
    }
  }
  if (o.model === null) throw new ExitError(2, `no model given\n${USAGE}`);
  if (!['disabled', 'basic', 'extended', 'all'].includes(o.optLevel))
    throw new ExitError(2, `--opt-level: '${o.optLevel}' is not one of disabled, basic, extended, all`);
  if (o.batchSize > 0 && (o.outputDir !== null || o.expect !== null || o.repeat > 0))
    throw new ExitError(2, `--batch-size runs a data set and prints samples/s only: not with --output-dir, --expect or --repeat`);
  return o;
}

function loadOrt() {
  try {
    return require('onnxruntime-node');
  } catch (e) {
    throw new ExitError(10, `cannot load onnxruntime-node (${e.message.split('\n')[0]}); run scripts/install-ort.sh`);
  }
}

// Session options that time each run with onnxruntime's profiler: its model_run events span
// InferenceSession::Run (the graph, the outputs' allocation) and leave out onnxruntime-node's conversion of
// the outputs to JavaScript buffers, which is not inference and which qonnx-cc exec's timings have no
// counterpart of. The profile goes to a temporary folder, read back by profiledRunMs.
function profiling() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'run_ort-'));
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));  // on every path out
  return { dir, options: { enableProfiling: true, profileFilePrefix: path.join(dir, 'profile') } };
}

// The durations (ms) of the session's model_run events, in run order; ends the profiling.
function profiledRunMs(session, prof) {
  session.endProfiling();
  const files = fs.readdirSync(prof.dir).filter((f) => f.endsWith('.json'));
  if (files.length !== 1) throw new ExitError(1, `onnxruntime wrote ${files.length} profile files, not 1`);
  const events = JSON.parse(fs.readFileSync(path.join(prof.dir, files[0]), 'utf8'));
  return events.filter((e) => e.name === 'model_run').sort((a, b) => a.ts - b.ts).map((e) => e.dur / 1e3);
}

function minAndMedian(values) {
  const ms = [...values].sort((x, y) => x - y);
  const h = ms.length >> 1;
  return { min: ms[0], median: ms.length % 2 ? ms[h] : (ms[h - 1] + ms[h]) / 2 };
}

function readTensorFile(file) {
  let buf;
  try {
    buf = fs.readFileSync(file);
  } catch (e) {
    throw new ExitError(3, `cannot read ${file}: ${e.code === 'ENOENT' ? 'no such file' : e.message}`);
  }
  try {
    return decodeTensorProto(buf, file);
  } catch (e) {
    throw new ExitError(5, e.message);
  }
}

// f16 bits -> number, for comparisons and statistics.
function halfToNumber(h) {
  const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

// ORT output tensor -> { dataType, dims, data } in tensor_proto's representation.
function fromOrt(t, name) {
  if (!t || typeof t.type !== 'string' || !t.dims)
    throw new ExitError(6, `output '${name}' is not a tensor (sequence, map or optional); run_ort.js handles tensors only`);
  const dataType = ORT_TO_ONNX[t.type];
  if (!dataType) throw new ExitError(6, `output '${name}': onnxruntime type '${t.type}' is not supported by run_ort.js`);
  let data = t.data;
  if (t.type === 'float16' && !(data instanceof Uint16Array)) {
    // Float16Array where the JS engine has it: take the bits.
    data = new Uint16Array(data.buffer, data.byteOffset, data.length);
  }
  if (t.type === 'bool' && !(data instanceof Uint8Array)) data = Uint8Array.from(data, (v) => (v ? 1 : 0));
  return { name, dataType, dims: t.dims.map(Number), data };
}

const isFloatType = (dt) => dt === 1 || dt === 10 || dt === 11;
const valueAt = (t, i) => (t.dataType === 10 ? halfToNumber(t.data[i]) : t.data[i]);

function stats(t) {
  const head = `${TYPES[t.dataType].ort}${JSON.stringify(t.dims)}`;
  if (t.data.length === 0 || t.dataType === 8) return head;
  let lo = Number(valueAt(t, 0)), hi = lo, sum = 0;
  for (let i = 0; i < t.data.length; ++i) {
    const v = Number(valueAt(t, i));
    if (v < lo) lo = v;
    if (v > hi) hi = v;
    sum += v;
  }
  const g = (x) => Number(x.toPrecision(6));
  return `${head} min ${g(lo)} max ${g(hi)} mean ${g(sum / t.data.length)}`;
}

// Compares an ORT output with an expected tensor; returns { ok, text }.
function compare(actual, expected, atol, rtol, maxMismatch = 0) {
  const problems = [];
  if (expected.name && expected.name !== actual.name) problems.push(`name '${actual.name}' vs expected '${expected.name}'`);
  if (actual.dataType !== expected.dataType)
    return { ok: false, text: `type ${typeName(actual.dataType)} vs expected ${typeName(expected.dataType)}` };
  if (JSON.stringify(actual.dims) !== JSON.stringify(expected.dims))
    return { ok: false, text: `shape ${JSON.stringify(actual.dims)} vs expected ${JSON.stringify(expected.dims)}` };
  const n = actual.data.length;
  if (actual.dataType === 8) {
    let bad = 0, first = -1;
    for (let i = 0; i < n; ++i) if (actual.data[i] !== expected.data[i]) { ++bad; if (first < 0) first = i; }
    problems.unshift(bad === 0 ? 'strings equal'
      : `${bad} of ${n} strings differ, first at flat index ${first}: ort ${JSON.stringify(actual.data[first])} vs expected ${JSON.stringify(expected.data[first])}`);
    return { ok: bad === 0 && problems.length === 1, text: problems.join('; ') };
  }
  let bad = 0, worst = -1, maxAbs = 0, maxRel = 0;
  if (isFloatType(actual.dataType)) {
    let worstExcess = -Infinity;
    for (let i = 0; i < n; ++i) {
      const a = valueAt(actual, i), e = valueAt(expected, i);
      if (Number.isNaN(a) && Number.isNaN(e)) continue;
      if (a === e) continue;  // includes equal infinities
      const diff = Math.abs(a - e);  // NaN vs number or inf vs other: NaN or inf
      const d = Number.isNaN(diff) ? Infinity : diff;
      if (d > maxAbs) maxAbs = d;
      const rel = e !== 0 ? d / Math.abs(e) : d === 0 ? 0 : Infinity;
      if (rel > maxRel) maxRel = rel;
      const excess = d - (atol + rtol * Math.abs(e));
      if (!(excess <= 0) || !Number.isFinite(d)) {
        ++bad;
        if (!(excess <= worstExcess)) { worstExcess = excess; worst = i; }
      }
    }
  } else {
    for (let i = 0; i < n; ++i) {
      const a = actual.data[i], e = expected.data[i];
      if (a === e) continue;
      const d = Math.abs(Number(a) - Number(e));
      if (d > maxAbs || worst < 0) { maxAbs = Math.max(maxAbs, d); worst = i; }
      ++bad;
    }
  }
  const e3 = (x) => (x === 0 ? '0' : x.toExponential(2));
  let text = `max abs err ${e3(maxAbs)}`;
  if (isFloatType(actual.dataType)) text += `, max rel err ${e3(maxRel)}`;
  if (bad > 0) {
    text += `; ${bad} of ${n} elements differ beyond tolerance, worst at flat index ${worst}: ` +
      `ort ${valueAt(actual, worst)} vs expected ${valueAt(expected, worst)}`;
  }
  if (problems.length) text += `; ${problems.join('; ')}`;
  const allowed = isFloatType(actual.dataType) ? Math.floor(maxMismatch * n) : 0;
  if (bad > 0 && bad <= allowed) text += ` (accepted: --max-mismatch ${maxMismatch} allows ${allowed})`;
  return { ok: bad <= allowed && problems.length === 0, text };
}

// Dataset mode: the fed tensors hold N samples along axis 0; runs them o.batchSize at a time (each batch a
// view of the inputs, no copy) and prints the rate of the runs, in qonnx-cc exec --batch-size's words.
async function runDataset(ort, session, feeds, o, prof) {
  const names = Object.keys(feeds);
  const samples = names.length ? feeds[names[0]].dims[0] : 0;
  for (const name of names) {
    const n = feeds[name].dims[0];
    if (feeds[name].dims.length === 0 || n !== samples)
      throw new ExitError(2, `--batch-size: input '${name}' has ${feeds[name].dims.length ? n : 'no'} samples along axis 0, '${names[0]}' ${samples}`);
  }
  if (!samples) throw new ExitError(2, '--batch-size: the inputs hold no samples');
  const batchOf = (t, start, count) => {
    const perSample = t.data.length / samples;
    return new ort.Tensor(t.type, t.data.subarray(start * perSample, (start + count) * perSample), [count, ...t.dims.slice(1)]);
  };
  try {
    for (let start = 0; start < samples; start += o.batchSize) {
      const count = Math.min(o.batchSize, samples - start);
      const batch = {};
      for (const name of names) batch[name] = batchOf(feeds[name], start, count);
      await session.run(batch);
    }
  } catch (e) {
    throw new ExitError(1, `${o.model}: onnxruntime failed: ${e.message}`);
  }
  const runs = profiledRunMs(session, prof);
  const seconds = runs.reduce((a, b) => a + b, 0) / 1e3;
  console.log(`${samples} samples in ${seconds.toFixed(3)} s: ${(samples / seconds).toFixed(1)} samples/s (batch size ${o.batchSize}, threads ${o.threads}; onnxruntime's own run times)`);
  return 0;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (!fs.existsSync(o.model)) throw new ExitError(3, `cannot read ${o.model}: no such file`);
  if (fs.statSync(o.model).isDirectory()) throw new ExitError(3, `cannot read ${o.model}: is a directory`);
  const ort = loadOrt();
  // Timed modes take the run times from onnxruntime's profiler (see profiling()).
  const prof = o.repeat > 0 || o.batchSize > 0 ? profiling() : null;
  let session;
  try {
    session = await ort.InferenceSession.create(o.model, {
      ...(prof ? prof.options : {}),
      graphOptimizationLevel: o.optLevel,
      intraOpNumThreads: o.threads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      executionProviders: ['cpu'],
      logSeverityLevel: 3,
    });
  } catch (e) {
    throw new ExitError(6, `${o.model}: onnxruntime cannot load the model: ${e.message}`);
  }

  const feeds = {};
  if (session.inputNames.length > 0 && o.inputDir === null)
    throw new ExitError(2, `the model has ${session.inputNames.length} input(s) (${session.inputNames.join(', ')}): give --input-dir`);
  session.inputNames.forEach((name, k) => {
    const meta = session.inputMetadata ? session.inputMetadata[k] : null;
    if (meta && meta.isTensor === false) throw new ExitError(6, `input #${k} '${name}' is not a tensor; run_ort.js feeds tensors only`);
    const file = path.join(o.inputDir, `input_${k}.pb`);
    const t = readTensorFile(file);
    if (t.name && t.name !== name && !o.quiet)
      process.stderr.write(`run_ort: note: ${file} names '${t.name}', fed by position to input #${k} '${name}'\n`);
    if (meta && meta.type && meta.type !== TYPES[t.dataType].ort)
      throw new ExitError(5, `${file}: ${typeName(t.dataType)} data for input #${k} '${name}' declared ${meta.type}`);
    try {
      feeds[name] = new ort.Tensor(TYPES[t.dataType].ort, t.data, t.dims);
    } catch (e) {
      throw new ExitError(5, `${file}: cannot make an onnxruntime tensor: ${e.message}`);
    }
  });

  if (o.batchSize > 0) return runDataset(ort, session, feeds, o, prof);

  let results;
  try {
    results = await session.run(feeds);
  } catch (e) {
    throw new ExitError(1, `${o.model}: onnxruntime failed: ${e.message}`);
  }
  if (o.repeat > 0) {
    // Steady state: the same session again on the same inputs, after the run above (the warm-up).
    const ms = [];
    try {
      for (let r = 0; r < o.repeat; ++r) {
        const t0 = process.hrtime.bigint();
        await session.run(feeds);
        ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
    } catch (e) {
      throw new ExitError(1, `${o.model}: onnxruntime failed: ${e.message}`);
    }
    // The profiler's runs: the warm-up, then the timed ones.
    const runs = profiledRunMs(session, prof);
    if (runs.length !== o.repeat + 1) throw new ExitError(1, `onnxruntime's profile holds ${runs.length} runs, not ${o.repeat + 1}`);
    const own = minAndMedian(runs.slice(1)), wall = minAndMedian(ms);
    process.stderr.write(`steady state: ${o.repeat} runs, threads ${o.threads}: min ${own.min.toFixed(3)} ms, median ${own.median.toFixed(3)} ms (onnxruntime's own run time)\n`);
    process.stderr.write(`session.run wall time: min ${wall.min.toFixed(3)} ms, median ${wall.median.toFixed(3)} ms (with onnxruntime-node's output conversion)\n`);
  }
  const outputs = session.outputNames.map((name) => fromOrt(results[name], name));
  outputs.forEach((t, k) => { if (!o.quiet) console.log(`output ${k} '${t.name}': ${stats(t)}`); });

  if (o.outputDir !== null) {
    try {
      fs.mkdirSync(o.outputDir, { recursive: true });
      outputs.forEach((t, k) => {
        const file = path.join(o.outputDir, `output_${k}.pb`);
        const tmp = `${file}.tmp${process.pid}`;
        fs.writeFileSync(tmp, encodeTensorProto(t));
        fs.renameSync(tmp, file);
      });
    } catch (e) {
      throw new ExitError(4, `cannot write to ${o.outputDir}: ${e.message}`);
    }
  }

  if (o.expect === null) return 0;
  let allOk = true;
  outputs.forEach((t, k) => {
    const expected = readTensorFile(path.join(o.expect, `output_${k}.pb`));
    const c = compare(t, expected, o.atol, o.rtol, o.maxMismatch);
    allOk = allOk && c.ok;
    console.log(`expect output ${k} '${t.name}': ${c.ok ? 'match' : 'MISMATCH'} (${c.text})`);
  });
  const extra = path.join(o.expect, `output_${outputs.length}.pb`);
  if (fs.existsSync(extra)) {
    allOk = false;
    console.log(`expect: MISMATCH: ${extra} exists but the model has ${outputs.length} output(s)`);
  }
  if (!allOk) throw new ExitError(7, `outputs differ from ${o.expect} (atol ${o.atol}, rtol ${o.rtol})`);
  return 0;
}

// Also a module: tests/differential/run_corpus.js runs many models in one process with these.
module.exports = { ExitError, loadOrt, readTensorFile, fromOrt, compare };

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (e) => {
      process.stderr.write(`run_ort: error: ${e.message}\n`);
      process.exit(e instanceof ExitError ? e.code : 1);
    });
}
