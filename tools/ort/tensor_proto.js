'use strict';
// A small ONNX TensorProto decoder/encoder (the protobuf wire format by hand, no dependency).
//
// Decodes raw_data and the typed fields (float_data, int32_data, int64_data, double_data, uint64_data,
// string_data), packed or not. Encodes with raw_data (little-endian), strings with string_data.
// Element types: the ONNX numbers 1..13 (float, uint8, int8, uint16, int16, int32, int64, string, bool,
// float16 as raw uint16 bits, double, uint32, uint64). External data, segments and complex/bfloat16/float8
// types are rejected with an error.

// ONNX TensorProto.DataType -> onnxruntime-node tensor type and typed-array constructor.
const TYPES = {
  1: { ort: 'float32', array: Float32Array, size: 4 },
  2: { ort: 'uint8', array: Uint8Array, size: 1 },
  3: { ort: 'int8', array: Int8Array, size: 1 },
  4: { ort: 'uint16', array: Uint16Array, size: 2 },
  5: { ort: 'int16', array: Int16Array, size: 2 },
  6: { ort: 'int32', array: Int32Array, size: 4 },
  7: { ort: 'int64', array: BigInt64Array, size: 8 },
  8: { ort: 'string', array: null, size: 0 },
  9: { ort: 'bool', array: Uint8Array, size: 1 },
  10: { ort: 'float16', array: Uint16Array, size: 2 },
  11: { ort: 'float64', array: Float64Array, size: 8 },
  12: { ort: 'uint32', array: Uint32Array, size: 4 },
  13: { ort: 'uint64', array: BigUint64Array, size: 8 },
};
const NAMES = {
  0: 'UNDEFINED', 1: 'FLOAT', 2: 'UINT8', 3: 'INT8', 4: 'UINT16', 5: 'INT16', 6: 'INT32', 7: 'INT64',
  8: 'STRING', 9: 'BOOL', 10: 'FLOAT16', 11: 'DOUBLE', 12: 'UINT32', 13: 'UINT64', 14: 'COMPLEX64',
  15: 'COMPLEX128', 16: 'BFLOAT16', 17: 'FLOAT8E4M3FN', 18: 'FLOAT8E4M3FNUZ', 19: 'FLOAT8E5M2',
  20: 'FLOAT8E5M2FNUZ', 21: 'UINT4', 22: 'INT4', 23: 'FLOAT4E2M1',
};
const ORT_TO_ONNX = {};
for (const [k, v] of Object.entries(TYPES)) ORT_TO_ONNX[v.ort] = Number(k);

function typeName(t) { return NAMES[t] || `type ${t}`; }

class Reader {
  constructor(buf, what) { this.buf = buf; this.pos = 0; this.what = what; }
  eof() { return this.pos >= this.buf.length; }
  fail(msg) { throw new Error(`${this.what}: invalid TensorProto: ${msg} (at byte ${this.pos})`); }
  varint() {  // as BigInt (uint64)
    let result = 0n, shift = 0n;
    for (;;) {
      if (this.pos >= this.buf.length) this.fail('truncated varint');
      const b = this.buf[this.pos++];
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) break;
      shift += 7n;
      if (shift > 63n) this.fail('varint longer than 10 bytes');
    }
    return BigInt.asUintN(64, result);
  }
  bytes(n) {
    if (n < 0 || this.pos + n > this.buf.length) this.fail('length past the end of the data');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  lengthDelimited() { return this.bytes(Number(this.varint())); }
  skip(wire) {
    if (wire === 0) this.varint();
    else if (wire === 1) this.bytes(8);
    else if (wire === 2) this.lengthDelimited();
    else if (wire === 5) this.bytes(4);
    else this.fail(`unsupported wire type ${wire}`);
  }
}

// Reads a repeated scalar field that may be packed (wire type 2) or not.
function readRepeated(r, wire, scalarWire, readOne, out) {
  if (wire === 2) {
    const sub = new Reader(r.lengthDelimited(), r.what);
    while (!sub.eof()) out.push(readOne(sub));
  } else if (wire === scalarWire) {
    out.push(readOne(r));
  } else {
    r.fail(`unexpected wire type ${wire}`);
  }
}
const readFixed32Float = (r) => Buffer.from(r.bytes(4)).readFloatLE(0);
const readFixed64Double = (r) => Buffer.from(r.bytes(8)).readDoubleLE(0);

// Returns { name, dataType, dims: number[], data } with data a typed array (string[] for strings),
// ready for new ort.Tensor(TYPES[dataType].ort, data, dims).
function decodeTensorProto(buf, what = 'tensor') {
  const r = new Reader(buf, what);
  const t = { name: '', dataType: 0, dims: [], raw: null, floats: [], int32s: [], int64s: [], doubles: [], uint64s: [], strings: [] };
  let external = false;
  while (!r.eof()) {
    const key = Number(r.varint());
    const field = key >>> 3, wire = key & 7;
    switch (field) {
      case 1: readRepeated(r, wire, 0, (s) => BigInt.asIntN(64, s.varint()), t.dims); break;
      case 2: if (wire !== 0) r.fail('data_type'); t.dataType = Number(r.varint()); break;
      case 3: r.fail('segmented tensors are not supported'); break;
      case 4: readRepeated(r, wire, 5, readFixed32Float, t.floats); break;
      case 5: readRepeated(r, wire, 0, (s) => Number(BigInt.asIntN(32, s.varint())), t.int32s); break;
      case 6: if (wire !== 2) r.fail('string_data'); t.strings.push(Buffer.from(r.lengthDelimited()).toString('utf8')); break;
      case 7: readRepeated(r, wire, 0, (s) => BigInt.asIntN(64, s.varint()), t.int64s); break;
      case 8: if (wire !== 2) r.fail('name'); t.name = Buffer.from(r.lengthDelimited()).toString('utf8'); break;
      case 9: if (wire !== 2) r.fail('raw_data'); t.raw = r.lengthDelimited(); break;
      case 10: readRepeated(r, wire, 1, readFixed64Double, t.doubles); break;
      case 11: readRepeated(r, wire, 0, (s) => s.varint(), t.uint64s); break;
      case 13: external = true; r.skip(wire); break;
      case 14: if (wire !== 0) r.fail('data_location'); if (Number(r.varint()) === 1) external = true; break;
      default: r.skip(wire);
    }
  }
  if (external) throw new Error(`${what}: tensors with external data are not supported`);
  const type = TYPES[t.dataType];
  if (!type) throw new Error(`${what}: unsupported element type ${typeName(t.dataType)}`);
  for (const d of t.dims) if (d < 0n) throw new Error(`${what}: negative dimension ${d}`);
  const dims = t.dims.map(Number);
  const numel = dims.reduce((a, b) => a * b, 1);
  let data;
  if (t.dataType === 8) {
    data = t.strings;
  } else if (t.raw !== null) {
    if (t.raw.length !== numel * type.size)
      throw new Error(`${what}: raw_data has ${t.raw.length} bytes, ${typeName(t.dataType)}${JSON.stringify(dims)} needs ${numel * type.size}`);
    // Copy into an aligned buffer (raw_data can start at any offset); the host is little-endian like the format.
    const copy = new Uint8Array(t.raw.length);
    copy.set(t.raw);
    data = new type.array(copy.buffer, 0, numel);
  } else {
    const Arr = type.array;
    switch (t.dataType) {
      case 1: data = Float32Array.from(t.floats); break;
      case 11: data = Float64Array.from(t.doubles); break;
      case 7: data = BigInt64Array.from(t.int64s); break;
      case 12: data = Uint32Array.from(t.uint64s.map(Number)); break;
      case 13: data = BigUint64Array.from(t.uint64s); break;
      default: data = Arr.from(t.int32s); break;  // int8/16/32, uint8/16, bool, float16 bits
    }
  }
  if (data.length !== numel)
    throw new Error(`${what}: ${data.length} values for ${typeName(t.dataType)}${JSON.stringify(dims)} (${numel} elements)`);
  return { name: t.name, dataType: t.dataType, dims, data };
}

function varintBytes(v) {  // v: BigInt or number, encoded as uint64 two's complement
  let x = BigInt.asUintN(64, BigInt(v));
  const out = [];
  do {
    let b = Number(x & 0x7fn);
    x >>= 7n;
    if (x !== 0n) b |= 0x80;
    out.push(b);
  } while (x !== 0n);
  return out;
}
function keyBytes(field, wire) { return varintBytes((field << 3) | wire); }
function lenDelimited(field, bytes) {
  return Buffer.concat([Buffer.from(keyBytes(field, 2)), Buffer.from(varintBytes(bytes.length)), Buffer.from(bytes)]);
}

// Encodes { name, dataType, dims, data } (data as decodeTensorProto returns it) as a TensorProto.
function encodeTensorProto({ name, dataType, dims, data }) {
  const parts = [];
  for (const d of dims) parts.push(Buffer.from([...keyBytes(1, 0), ...varintBytes(d)]));
  parts.push(Buffer.from([...keyBytes(2, 0), ...varintBytes(dataType)]));
  if (dataType === 8) {
    for (const s of data) parts.push(lenDelimited(6, Buffer.from(String(s), 'utf8')));
  }
  if (name) parts.push(lenDelimited(8, Buffer.from(name, 'utf8')));
  if (dataType !== 8) {
    const type = TYPES[dataType];
    if (!type) throw new Error(`cannot encode element type ${typeName(dataType)}`);
    let bytes;
    if (dataType === 9) bytes = Uint8Array.from(data, (v) => (v ? 1 : 0));
    else {
      const arr = data instanceof type.array ? data : type.array.from(data);
      bytes = new Uint8Array(arr.buffer, arr.byteOffset, arr.byteLength);
    }
    parts.push(lenDelimited(9, bytes));
  }
  return Buffer.concat(parts);
}

// varintBytes, keyBytes and lenDelimited are the protobuf writer tests/ort/arith_cases.js builds models with.
module.exports = { TYPES, ORT_TO_ONNX, typeName, decodeTensorProto, encodeTensorProto, Reader, varintBytes, keyBytes, lenDelimited };
