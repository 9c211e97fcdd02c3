'use strict';
// Unit test of tools/ort/tensor_proto.js: raw_data round trips for every supported type, the typed
// fields (packed and not), negative varints, and clear errors on bad data. Needs node only.
const assert = require('assert');
const path = require('path');
const { decodeTensorProto, encodeTensorProto } = require(path.join(__dirname, '../../tools/ort/tensor_proto.js'));

let failures = 0, passed = 0;
function check(name, fn) {
  try { fn(); ++passed; } catch (e) { ++failures; console.log(`FAIL ${name}: ${e.message}`); }
}

// Minimal protobuf writer for hand-made TensorProtos.
function varint(v) {
  let x = BigInt.asUintN(64, BigInt(v));
  const out = [];
  do { let b = Number(x & 0x7fn); x >>= 7n; if (x) b |= 0x80; out.push(b); } while (x);
  return out;
}
const key = (f, w) => varint((f << 3) | w);
const ld = (f, bytes) => [...key(f, 2), ...varint(bytes.length), ...bytes];
const f32 = (v) => { const b = Buffer.alloc(4); b.writeFloatLE(v); return [...b]; };
const f64 = (v) => { const b = Buffer.alloc(8); b.writeDoubleLE(v); return [...b]; };
const dims = (...ds) => ds.flatMap((d) => [...key(1, 0), ...varint(d)]);
const dtype = (t) => [...key(2, 0), ...varint(t)];
const buf = (...parts) => Buffer.from(parts.flat());

const same = (a, b) => assert.deepStrictEqual(Array.from(a), Array.from(b));

const roundTrips = [
  [1, Float32Array.from([-0, NaN, -3.25e-39])],
  [2, Uint8Array.from([0, 1, 255])],
  [3, Int8Array.from([-128, 0, 127])],
  [4, Uint16Array.from([0, 65535, 1234])],
  [5, Int16Array.from([-32768, 32767, -1])],
  [6, Int32Array.from([-2147483648, 2147483647, 0])],
  [7, BigInt64Array.from([-9223372036854775808n, 9223372036854775807n, -1n])],
  [9, Uint8Array.from([1, 0, 1])],
  [10, Uint16Array.from([0x3c00, 0x7e00, 0x8001])],
  [11, Float64Array.from([Math.PI, -1e300, NaN])],
  [12, Uint32Array.from([0, 4294967295, 7])],
  [13, BigUint64Array.from([0n, 18446744073709551615n, 5n])],
];
for (const [t, data] of roundTrips) {
  check(`raw round trip type ${t}`, () => {
    const enc = encodeTensorProto({ name: 'x', dataType: t, dims: [3, 1], data });
    const dec = decodeTensorProto(enc);
    assert.strictEqual(dec.name, 'x');
    assert.strictEqual(dec.dataType, t);
    assert.deepStrictEqual(dec.dims, [3, 1]);
    assert.ok(Buffer.from(new Uint8Array(dec.data.buffer, dec.data.byteOffset, dec.data.byteLength))
      .equals(Buffer.from(new Uint8Array(data.buffer, data.byteOffset, data.byteLength))), 'bytes differ');
    assert.ok(decodeTensorProto(encodeTensorProto(dec)).data.length === 3);
  });
}
check('strings', () => {
  const dec = decodeTensorProto(encodeTensorProto({ name: 's', dataType: 8, dims: [2], data: ['a b', 'é'] }));
  assert.deepStrictEqual(dec.data, ['a b', 'é']);
});
check('scalar and empty', () => {
  same(decodeTensorProto(encodeTensorProto({ name: '', dataType: 1, dims: [], data: Float32Array.of(2) })).data, [2]);
  const e = decodeTensorProto(encodeTensorProto({ name: 'e', dataType: 7, dims: [0, 3], data: new BigInt64Array(0) }));
  assert.deepStrictEqual(e.dims, [0, 3]);
  assert.strictEqual(e.data.length, 0);
});
check('float_data packed and unpacked', () => {
  same(decodeTensorProto(buf(dims(2), dtype(1), ld(4, [...f32(1.5), ...f32(-2)]))).data, [1.5, -2]);
  same(decodeTensorProto(buf(dims(2), dtype(1), key(4, 5), f32(1.5), key(4, 5), f32(-2))).data, [1.5, -2]);
});
check('int32_data for int8, uint16, bool and float16', () => {
  same(decodeTensorProto(buf(dims(3), dtype(3), ld(5, [...varint(-5), ...varint(127), ...varint(-128)]))).data, [-5, 127, -128]);
  same(decodeTensorProto(buf(dims(1), dtype(4), key(5, 0), varint(65535))).data, [65535]);
  same(decodeTensorProto(buf(dims(2), dtype(9), ld(5, [1, 0]))).data, [1, 0]);
  same(decodeTensorProto(buf(dims(1), dtype(10), key(5, 0), varint(0x3c00))).data, [0x3c00]);
});
check('int64_data, uint64_data, double_data', () => {
  same(decodeTensorProto(buf(dims(2), dtype(7), ld(7, [...varint(-1), ...varint(1n << 40n)]))).data, [-1n, 1n << 40n]);
  same(decodeTensorProto(buf(dims(1), dtype(13), key(11, 0), varint(18446744073709551615n))).data, [18446744073709551615n]);
  same(decodeTensorProto(buf(dims(1), dtype(12), ld(11, varint(4294967295)))).data, [4294967295]);
  same(decodeTensorProto(buf(dims(2), dtype(11), ld(10, [...f64(0.1), ...f64(-7)]))).data, [0.1, -7]);
});
check('unknown fields are skipped', () => {
  same(decodeTensorProto(buf(ld(12, [65]), dims(1), dtype(6), ld(5, varint(9)))).data, [9]);
});
const throwsWith = (b, re) => assert.throws(() => decodeTensorProto(b, 'f.pb'), re);
check('errors', () => {
  throwsWith(buf(dims(3), dtype(1), ld(9, [0, 0, 0, 0])), /f\.pb: raw_data has 4 bytes, FLOAT\[3\] needs 12/);
  throwsWith(buf(dims(2), dtype(6), ld(5, varint(1))), /1 values for INT32\[2\]/);
  throwsWith(buf(dims(1), dtype(16), ld(9, [0, 0])), /unsupported element type BFLOAT16/);
  throwsWith(buf(dims(1), dtype(1), [...key(14, 0), 1]), /external data/);
  throwsWith(Buffer.from([0x0a, 0x05, 1]), /length past the end/);
  throwsWith(Buffer.from([0x08, 0xff]), /truncated varint/);
});

console.log(`${passed} passed, ${failures} failed`);
process.exit(failures ? 1 : 0);
