#!/usr/bin/env node
'use strict';
// The differential test (tests/differential/README.md). Every model converts with every target; the
// qdq result runs in onnxruntime (in this process, one session per model) and must equal
// `qonnx-cc exec` of the original (bit for bit on the outputs the manifest marks exact, within
// atol 1e-5 + rtol 1e-4 elsewhere); ngraph, ascend and fold results must pass `convert --check`.
// qdq, ngraph and ascend results must hold no QONNX op (FloatQuant is reported, not failed).
//
//   run_corpus.js --qonnx-cc BIN (--gen GEN --count N [--seed S] | --corpus DIR | --models DIR)
//                 [--jobs J] [--check N (2; 1 with --models)] [--targets qdq,ngraph,ascend,fold,finn,hls4ml] [--target-opset N]
//                 [--first K] [--work DIR] [--keep]
//
// --gen: GEN (qonnx_diffgen) writes N models first; --corpus: a folder qonnx_diffgen --out wrote;
// --models: every .onnx under DIR (real models: float sums can flip a quantizer near a tie, so up to
// 0.1% of the elements may differ beyond tolerance there, as in tests/ort/cases.txt).
// --target-opset N: every target converts with `--target-opset N` (13..21) and its result must state
// opset N (or the input's, when that is higher).
// Prints a per-idiom table, the distinct failure causes with one reproducer each, the first K failures,
// and `N passed, N failed`. Exit 0 when nothing failed, 1 otherwise, 2 on usage errors, 77 when
// onnxruntime-node cannot be installed.
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFile, execFileSync } = require('child_process');

const repo = path.resolve(__dirname, '../..');
const { Reader, TYPES } = require(path.join(repo, 'tools/ort/tensor_proto.js'));
const ortHarness = require(path.join(repo, 'tools/ort/run_ort.js'));

const USAGE = `usage: run_corpus.js --qonnx-cc BIN (--gen GEN --count N [--seed S] | --corpus DIR | --models DIR)
                     [--jobs J] [--check N] [--targets qdq,ngraph,ascend,fold,finn,hls4ml] [--target-opset N] [--first K] [--work DIR] [--keep]`;
const FLOAT_ATOL = 1e-5, FLOAT_RTOL = 1e-4, SHARED_MISMATCH = 0.001;
const COMMAND_TIMEOUT_MS = 600000;

function parseArgs(argv) {
  const o = { qcc: null, gen: null, count: null, seed: 1, corpus: null, models: null, jobs: 2, check: null,
              targets: ['qdq', 'ngraph', 'ascend', 'fold'], targetOpset: null, first: 10, work: null, keep: false };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i], v = () => { if (i + 1 >= argv.length) usage(`${a} needs a value`); return argv[++i]; };
    const int = (s) => { if (!/^\d+$/.test(s)) usage(`${a}: '${s}' is not a non-negative integer`); return Number(s); };
    switch (a) {
      case '--qonnx-cc': o.qcc = v(); break;
      case '--gen': o.gen = v(); break;
      case '--count': o.count = int(v()); break;
      case '--seed': o.seed = int(v()); break;
      case '--corpus': o.corpus = v(); break;
      case '--models': o.models = v(); break;
      case '--jobs': o.jobs = Math.max(1, int(v())); break;
      case '--check': o.check = int(v()); break;
      case '--targets': o.targets = v().split(',').filter(Boolean); break;
      case '--target-opset': o.targetOpset = int(v()); break;
      case '--first': o.first = int(v()); break;
      case '--work': o.work = v(); break;
      case '--keep': o.keep = true; break;
      case '-h': case '--help': process.stdout.write(USAGE + '\n'); process.exit(0); break;
      default: usage(`unknown argument '${a}'`);
    }
  }
  if (!o.qcc) usage('--qonnx-cc BIN is required');
  if ([o.gen, o.corpus, o.models].filter(Boolean).length !== 1) usage('give one of --gen, --corpus, --models');
  if (o.gen && o.count === null) usage('--gen needs --count');
  // Real models can be large (an input of 789444 rows): one --check run each (tests/convert_test.cc does 8).
  if (o.check === null) o.check = o.models ? 1 : 2;
  for (const t of o.targets) if (!['qdq', 'ngraph', 'ascend', 'fold', 'finn', 'hls4ml'].includes(t)) usage(`--targets: unknown target '${t}'`);
  if (o.targetOpset !== null && (o.targetOpset < 13 || o.targetOpset > 21)) usage('--target-opset: 13..21');
  return o;
}

function usage(msg) {
  process.stderr.write(`run_corpus: ${msg}\n${USAGE}\n`);
  process.exit(2);
}

// Runs a command; resolves to { code, out } (stdout + stderr), never rejects.
function run(cmd, args) {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: COMMAND_TIMEOUT_MS, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      let code = 0;
      if (err) code = err.killed ? 'timeout' : typeof err.code === 'number' ? err.code : `signal ${err.signal}`;
      resolve({ code, out: `${stdout}${stderr}` });
    });
  });
}

// ---- QONNX ops left in a model (the protobuf wire format by hand; descends into subgraphs) ----

const QONNX_DOMAINS = new Set(['qonnx.custom_op.general', 'finn.custom_op.general', 'finn', 'onnx.brevitas',
                               'qonnx.custom_op.channels_last']);
const QONNX_OPS = new Set(['Quant', 'IntQuant', 'BipolarQuant', 'Trunc', 'MultiThreshold', 'FloatQuant']);
const text = (bytes) => Buffer.from(bytes).toString('utf8');

function scanGraph(bytes, found) {
  const r = new Reader(bytes, 'graph');
  while (!r.eof()) {
    const key = Number(r.varint());
    if (key >>> 3 === 1 && (key & 7) === 2) scanNode(r.lengthDelimited(), found);
    else r.skip(key & 7);
  }
}

function scanNode(bytes, found) {
  const r = new Reader(bytes, 'node');
  let op = '', domain = '';
  while (!r.eof()) {
    const key = Number(r.varint()), field = key >>> 3, wire = key & 7;
    if (field === 4 && wire === 2) op = text(r.lengthDelimited());
    else if (field === 7 && wire === 2) domain = text(r.lengthDelimited());
    else if (field === 5 && wire === 2) scanAttribute(r.lengthDelimited(), found);
    else r.skip(wire);
  }
  const isDefault = domain === '' || domain === 'ai.onnx';
  if (QONNX_DOMAINS.has(domain) || (isDefault && QONNX_OPS.has(op))) found.add(`${isDefault ? 'ai.onnx' : domain}::${op}`);
}

function scanAttribute(bytes, found) {
  const r = new Reader(bytes, 'attribute');
  while (!r.eof()) {
    const key = Number(r.varint()), field = key >>> 3, wire = key & 7;
    if ((field === 6 || field === 11) && wire === 2) scanGraph(r.lengthDelimited(), found);
    else r.skip(wire);
  }
}

function qonnxOpsLeft(file) {
  const r = new Reader(fs.readFileSync(file), file);
  const found = new Set();
  while (!r.eof()) {
    const key = Number(r.varint());
    if (key >>> 3 === 7 && (key & 7) === 2) scanGraph(r.lengthDelimited(), found);
    else r.skip(key & 7);
  }
  return [...found].sort();
}

// The model's default-domain opset (ModelProto.opset_import, field 8), or null.
function defaultOpset(file) {
  const r = new Reader(fs.readFileSync(file), file);
  let version = null;
  while (!r.eof()) {
    const key = Number(r.varint());
    if (key >>> 3 !== 8 || (key & 7) !== 2) {
      r.skip(key & 7);
      continue;
    }
    const imp = new Reader(r.lengthDelimited(), 'opset_import');
    let domain = '', v = null;
    while (!imp.eof()) {
      const k = Number(imp.varint());
      if (k >>> 3 === 1 && (k & 7) === 2) domain = text(imp.lengthDelimited());
      else if (k >>> 3 === 2 && (k & 7) === 0) v = Number(imp.varint());
      else imp.skip(k & 7);
    }
    if (domain === '' || domain === 'ai.onnx') version = v;
  }
  return version;
}

// ---- one model ----

// What convert's --report says about the quantizers it did not lower.
function whyLeft(reportFile) {
  try {
    const r = JSON.parse(fs.readFileSync(reportFile, 'utf8'));
    const why = [...new Set(r.quantizers.filter((q) => q.outcome !== 'lowered' && q.outcome !== 'folded')
      .map((q) => `${q.op_type}: ${q.outcome}, ${q.detail}`))];
    return why.length ? ` (report: ${why.join('; ')})` : '';
  } catch (e) {
    return '';
  }
}

// The first line that says what went wrong, without the work folder.
function firstError(out, dir, model) {
  const lines = out.split('\n').filter((l) => l.trim());
  const line = lines.find((l) => /error|MISMATCH|Assertion|what\(\)/i.test(l)) || lines[lines.length - 1] || '(no output)';
  return line.split(model).join(path.basename(model)).split(dir + path.sep).join('').split(dir).join('').slice(0, 400);
}

async function runOrt(ort, model, inDir, refDir, exact, mismatch) {
  let session;
  try {
    session = await ort.InferenceSession.create(model, {
      graphOptimizationLevel: 'disabled', intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential',
      executionProviders: ['cpu'], logSeverityLevel: 3,
    });
  } catch (e) {
    return { ok: false, detail: `onnxruntime cannot load the qdq model: ${e.message.split('\n')[0]}` };
  }
  try {
    const feeds = {};
    session.inputNames.forEach((name, k) => {
      const t = ortHarness.readTensorFile(path.join(inDir, `input_${k}.pb`));
      feeds[name] = new ort.Tensor(TYPES[t.dataType].ort, t.data, t.dims);
    });
    const results = await session.run(feeds);
    const problems = [];
    session.outputNames.forEach((name, k) => {
      const actual = ortHarness.fromOrt(results[name], name);
      const expected = ortHarness.readTensorFile(path.join(refDir, `output_${k}.pb`));
      const isExact = exact.has(k);
      const c = ortHarness.compare(actual, expected, isExact ? 0 : FLOAT_ATOL, isExact ? 0 : FLOAT_RTOL, isExact ? 0 : mismatch);
      if (!c.ok) problems.push(`output ${k} '${name}' (${isExact ? 'exact' : 'float'}): ${c.text}`);
    });
    if (fs.existsSync(path.join(refDir, `output_${session.outputNames.length}.pb`)))
      problems.push(`qonnx-cc exec wrote more outputs than the qdq model has (${session.outputNames.length})`);
    if (problems.length) return { ok: false, detail: `onnxruntime differs from qonnx-cc exec: ${problems.join('; ')}` };
    return { ok: true };
  } catch (e) {
    return { ok: false, detail: `onnxruntime failed: ${e.message.split('\n')[0]}` };
  } finally {
    if (session.release) await session.release();
  }
}

// Returns { failures: [{stage, detail, repro}], notes: [] }.
async function runModel(o, ort, c, dir) {
  const failures = [], notes = [];
  const q = (args) => run(o.qcc, args);
  const fail = (stage, detail, repro) => failures.push({ stage, detail, repro });
  fs.mkdirSync(dir, { recursive: true });
  const inDir = path.join(dir, 'in'), refDir = path.join(dir, 'ref');
  const exec = await q(['exec', c.file, '--random-inputs', '--seed', String(c.seed), '--save-inputs', inDir, '--output-dir', refDir, '-q']);
  if (exec.code !== 0) fail('exec', `qonnx-cc exec of the original exits ${exec.code}: ${firstError(exec.out, dir, c.file)}`, c.repro(['exec']));
  for (const target of o.targets) {
    const out = path.join(dir, `${target}.onnx`);
    const report = path.join(dir, `${target}.report.json`);
    const args = ['convert', c.file, '-o', out, '--target', target, '-q', '--report', report];
    if (o.targetOpset !== null) args.push('--target-opset', String(o.targetOpset));
    if (target !== 'qdq' && o.check > 0 && exec.code === 0) args.push('--check', String(o.check), '--seed', String(c.seed));
    const conv = await q(args);
    if (conv.code !== 0) {
      const options = args.slice(4).filter((a, k, all) => a !== '-q' && a !== '--report' && all[k - 1] !== '--report').join(' ');
      fail(`convert-${target}`, `convert ${options} exits ${conv.code}: ${firstError(conv.out, dir, c.file)}`, c.repro([`convert-${target}`], options));
      continue;
    }
    if (o.targetOpset !== null) {
      const opset = defaultOpset(out), input = defaultOpset(c.file);
      const expected = Math.max(o.targetOpset, input || 0);
      if (opset !== expected)
        fail(`opset-${target}`, `--target-opset ${o.targetOpset} of an opset-${input} model gives opset ${opset}, expected ${expected}`,
             c.repro([`convert-${target}`]));
    }
    // fold, finn and hls4ml keep QONNX ops by design (activation quantizers, MultiThreshold, Quant nodes).
    if (['fold', 'finn', 'hls4ml'].includes(target)) continue;
    let left;
    try {
      left = qonnxOpsLeft(out);
    } catch (e) {
      fail(`convert-${target}`, `cannot read the converted model: ${e.message}`, c.repro([`convert-${target}`]));
      continue;
    }
    const floatQuant = left.filter((op) => op.endsWith('::FloatQuant'));
    const others = left.filter((op) => !op.endsWith('::FloatQuant'));
    if (floatQuant.length) notes.push(`${target}: FloatQuant kept`);
    if (others.length) {
      fail(`ops-left-${target}`, `--target ${target} exits 0 but leaves QONNX ops: ${others.join(', ')}${whyLeft(report)}`,
           c.repro([`convert-${target}`]));
      continue;
    }
    if (target === 'qdq' && exec.code === 0) {
      if (floatQuant.length) continue;  // onnxruntime has no FloatQuant: reported, not run
      const r = await runOrt(ort, out, inDir, refDir, c.exact, c.mismatch);
      if (!r.ok) fail('onnxruntime', r.detail, c.repro(['exec', 'convert-qdq', 'ort']));
    }
  }
  return { failures, notes };
}

// ---- the cases ----

function generatedCases(o, corpusDir) {
  const manifest = path.join(corpusDir, 'manifest.tsv');
  if (!fs.existsSync(manifest)) usage(`${manifest} does not exist (qonnx_diffgen --out DIR --count N writes it)`);
  const gen = path.resolve(o.gen || path.join(path.dirname(o.qcc), 'tests/qonnx_diffgen'));
  return fs.readFileSync(manifest, 'utf8').split('\n').filter((l) => l && !l.startsWith('#')).map((line) => {
    const [file, idiom, seed, exact] = line.split('\t');
    const c = { file: path.join(corpusDir, file), name: file, idiom, seed: Number(seed), mismatch: 0,
                exact: new Set(exact === '-' ? [] : exact.split(',').map(Number)) };
    c.repro = (stages, convertArgs) => reproducer(o, stages, `${gen} --idiom '${idiom}' --seed ${seed} /tmp/r.onnx`, '/tmp/r.onnx', c, convertArgs);
    return c;
  });
}

function modelCases(o) {
  const files = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.onnx')) files.push(p);
    }
  };
  if (!fs.existsSync(o.models)) {
    process.stderr.write(`SKIP: ${o.models} does not exist (the shared models are not on this machine)\n`);
    process.exit(77);
  }
  walk(o.models);
  return files.map((file) => {
    const rel = path.relative(o.models, file);
    const c = { file, name: rel, idiom: `shared:${rel}`, seed: 1, mismatch: SHARED_MISMATCH, exact: new Set() };
    c.repro = (stages, convertArgs) => reproducer(o, stages, null, file, c, convertArgs);
    return c;
  });
}

// Shell commands that reproduce the failing stage.
function reproducer(o, stages, genCommand, model, c, convertArgs) {
  const qcc = path.resolve(o.qcc);
  const cmds = genCommand ? [genCommand] : [];
  const target = stages.find((s) => s.startsWith('convert-'));
  if (stages.includes('ort')) {
    cmds.push(`${qcc} exec ${model} --random-inputs --seed ${c.seed} --save-inputs /tmp/r.in --output-dir /tmp/r.ref`);
    cmds.push(`${qcc} convert ${model} --target qdq${o.targetOpset !== null ? ` --target-opset ${o.targetOpset}` : ''} -o /tmp/r.qdq.onnx`);
    const exact = c.exact.size ? ` --atol 0 --rtol 0   # outputs ${[...c.exact].join(',')} are exact` : '';
    cmds.push(`node ${path.join(repo, 'tools/ort/run_ort.js')} /tmp/r.qdq.onnx --input-dir /tmp/r.in --expect /tmp/r.ref${exact}`);
  } else if (target) {
    const t = target.slice('convert-'.length);
    cmds.push(`${qcc} convert ${model} -o /tmp/r.${t}.onnx ${convertArgs || `--target ${t}`}`);
  } else {
    cmds.push(`${qcc} exec ${model} --random-inputs --seed ${c.seed}`);
  }
  return cmds.join(' && ');
}

// Groups failure messages into causes: numbers, quoted names, tensor values and the target become
// placeholders (the same cause under qdq, ngraph and ascend is one cause).
function causeKey(f) {
  const d = f.detail
    .replace(/--target (qdq|ngraph|ascend|fold|finn|hls4ml)/g, '--target T')
    .replace(/'[^']*'/g, "'_'")
    .replace(/"[^"]*"/g, '"_"')
    .replace(/\[[0-9, ]*\]/g, '[_]')
    .replace(/-?\d+(\.\d+)?(e[-+]?\d+)?/gi, 'N')
    .replace(/(; N of N elements differ beyond tolerance).*$/, '$1')
    .replace(/max abs err [^;)]*/g, 'max abs err N')
    .replace(/ --check N --seed N/g, '')
    .replace(/\/\S+\/(runs\/N\/)/g, '$1')
    .slice(0, 300);
  return `${f.stage.replace(/-(qdq|ngraph|ascend|fold|finn|hls4ml)$/, '')}: ${d}`;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (!fs.existsSync(o.qcc)) usage(`qonnx-cc binary '${o.qcc}' does not exist`);
  let ort;
  try {
    ort = ortHarness.loadOrt();
  } catch (e) {
    try {
      execFileSync('bash', [path.join(repo, 'scripts/install-ort.sh')], { stdio: ['ignore', 'inherit', 'inherit'] });
      ort = ortHarness.loadOrt();
    } catch (e2) {
      process.stderr.write(`SKIP: onnxruntime-node cannot be installed (scripts/install-ort.sh failed): ${e2.message}\n`);
      process.exit(77);
    }
  }
  const work = o.work ? path.resolve(o.work) : fs.mkdtempSync(path.join(os.tmpdir(), 'qonnx_difftest.'));
  fs.mkdirSync(work, { recursive: true });
  const start = Date.now();

  let cases;
  if (o.models) {
    cases = modelCases(o);
  } else {
    let corpus = o.corpus && path.resolve(o.corpus);
    if (o.gen) {
      corpus = path.join(work, 'corpus');
      fs.rmSync(corpus, { recursive: true, force: true });
      execFileSync(o.gen, ['--out', corpus, '--count', String(o.count), '--seed', String(o.seed)], { stdio: 'inherit' });
    }
    cases = generatedCases(o, corpus);
  }
  if (!cases.length) usage('no models');
  console.log(`run_corpus: ${cases.length} models, targets ${o.targets.join(',')}, --check ${o.check}, ${o.jobs} jobs, ` +
              `onnxruntime-node ${require(path.join(repo, 'tools/ort/node_modules/onnxruntime-node/package.json')).version}`);

  const results = new Array(cases.length);
  let next = 0, done = 0;
  const worker = async () => {
    while (next < cases.length) {
      const i = next++;
      const dir = path.join(work, 'runs', String(i));
      results[i] = await runModel(o, ort, cases[i], dir);
      if (!o.keep && results[i].failures.length === 0) fs.rmSync(dir, { recursive: true, force: true });
      if (++done % 100 === 0 && process.stderr.isTTY) process.stderr.write(`  ${done}/${cases.length}\r`);
    }
  };
  await Promise.all(Array.from({ length: o.jobs }, worker));

  // Per idiom (per model for --models).
  const table = new Map();
  const causes = new Map();
  const failed = [];
  cases.forEach((c, i) => {
    const r = results[i];
    if (!table.has(c.idiom)) table.set(c.idiom, { models: 0, passed: 0, failed: 0, notes: 0, stages: new Map() });
    const row = table.get(c.idiom);
    row.models++;
    if (r.notes.length) row.notes++;
    if (r.failures.length === 0) { row.passed++; return; }
    row.failed++;
    failed.push(i);
    for (const f of r.failures) {
      row.stages.set(f.stage, (row.stages.get(f.stage) || 0) + 1);
      const key = causeKey(f);
      if (!causes.has(key)) causes.set(key, { models: new Set(), idioms: new Set(), stages: new Set(), first: { c, f } });
      const cause = causes.get(key);
      cause.models.add(i);
      cause.idioms.add(c.idiom);
      cause.stages.add(f.stage);
    }
  });
  const width = Math.max(8, ...[...table.keys()].map((k) => k.length));
  console.log(`\n${'idiom'.padEnd(width)}  models  passed  failed  failing stages`);
  for (const [idiom, row] of table) {
    const stages = [...row.stages].map(([s, n]) => `${s} ${n}`).join(', ');
    const note = row.notes ? `${stages ? '; ' : ''}${row.notes} with FloatQuant kept (not run in onnxruntime)` : '';
    console.log(`${idiom.padEnd(width)}  ${String(row.models).padStart(6)}  ${String(row.passed).padStart(6)}  ${String(row.failed).padStart(6)}  ${stages}${note}`);
  }
  if (causes.size) {
    console.log(`\ndistinct failure causes (${causes.size}), most frequent first, one reproducer each:`);
    [...causes].sort((a, b) => b[1].models.size - a[1].models.size).forEach(([key, cause], k) => {
      const idioms = [...cause.idioms];
      console.log(`${k + 1}. [${cause.models.size} models; stages ${[...cause.stages].join(',')}; idioms: ` +
                  `${idioms.slice(0, 8).join(', ')}${idioms.length > 8 ? `, +${idioms.length - 8} more` : ''}] ${key}`);
      console.log(`   e.g. ${cause.first.c.name} (${cause.first.c.idiom}, seed ${cause.first.c.seed}): ${cause.first.f.detail.slice(0, 300)}`);
      console.log(`   repro: ${cause.first.f.repro}`);
    });
  }
  if (failed.length && o.first > 0) {
    console.log(`\nfirst ${Math.min(o.first, failed.length)} failures:`);
    for (const i of failed.slice(0, o.first)) {
      const c = cases[i];
      for (const f of results[i].failures) {
        console.log(`FAIL ${c.name} ${c.idiom} seed ${c.seed} [${f.stage}] ${f.detail}`);
        console.log(`     repro: ${f.repro}`);
      }
    }
  }
  const passed = cases.length - failed.length;
  console.log(`\nrun_corpus: ${cases.length} models in ${((Date.now() - start) / 1000).toFixed(1)} s` +
              `${o.keep || failed.length ? `; work files in ${work}` : ''}`);
  if (!o.keep && !o.work && failed.length === 0) fs.rmSync(work, { recursive: true, force: true });
  console.log(`${passed} passed, ${failed.length} failed`);
  return failed.length === 0 ? 0 : 1;
}

main().then((code) => process.exit(code), (e) => {
  process.stderr.write(`run_corpus: error: ${e.stack || e.message}\n`);
  process.exit(1);
});
