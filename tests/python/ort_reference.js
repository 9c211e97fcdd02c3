// The onnxruntime-node side of the Python suite: reads {model, inputs: {name: {dtype, dims, data(hex)}}} on
// stdin, writes {inputs, outputs (metadata: name, type, shape), outputs: {name: {dtype, dims, data}}}.
'use strict';
const ort = require('onnxruntime-node');

const kArrays = {
  float32: Float32Array, float64: Float64Array, int8: Int8Array, uint8: Uint8Array, int16: Int16Array,
  uint16: Uint16Array, int32: Int32Array, uint32: Uint32Array, int64: BigInt64Array, uint64: BigUint64Array,
  bool: Uint8Array,
};
const kTypes = { float32: 'float32', float64: 'float64', bool: 'bool' };

function fromHex(hex, dtype) {
  const bytes = Buffer.from(hex, 'hex');
  const Ctor = kArrays[dtype];
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  return new Ctor(copy.buffer, 0, bytes.length / Ctor.BYTES_PER_ELEMENT);
}

function metadata(list) {
  return list.map((m) => ({ name: m.name, type: m.type, shape: m.shape }));
}

async function main() {
  let text = '';
  for await (const chunk of process.stdin) text += chunk;
  const request = JSON.parse(text);
  const session = await ort.InferenceSession.create(request.model, { graphOptimizationLevel: 'all' });
  const feeds = {};
  for (const [name, t] of Object.entries(request.inputs)) {
    feeds[name] = new ort.Tensor(kTypes[t.dtype] || t.dtype, fromHex(t.data, t.dtype), t.dims);
  }
  const results = await session.run(feeds);
  const outputs = {};
  for (const [name, t] of Object.entries(results)) {
    const dtype = t.type === 'float32' ? 'float32' : t.type === 'float64' ? 'float64' : t.type;
    outputs[name] = { dtype, dims: t.dims, data: Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength).toString('hex') };
  }
  process.stdout.write(JSON.stringify({
    input_metadata: metadata(session.inputMetadata), output_metadata: metadata(session.outputMetadata), outputs,
  }));
}

main().catch((e) => { process.stderr.write(String(e && e.stack || e)); process.exit(1); });
