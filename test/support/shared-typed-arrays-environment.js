/**
 * Jest's node environment, with the test sandbox using Node's own typed-array constructors.
 *
 * Jest runs tests in a separate V8 context with its own Float32Array, Int16Array, …; native
 * addons create arrays with Node's. onnxruntime-node (Silero VAD) checks output tensors with
 * `data instanceof Float32Array` and fails in the sandbox ("A float32 tensor's data must be type
 * of Float32Array"). Jest already shares ArrayBuffer and Uint8Array for the same reason; this
 * shares the rest. Use it for any test that runs the VAD model (directly or via the gateway):
 * per file with a `@jest-environment ./test/support/shared-typed-arrays-environment.js` docblock,
 * or as `testEnvironment` in jest.config.js.
 */
const { TestEnvironment } = require('jest-environment-node');

const SHARED = [
  'Int8Array',
  'Uint8ClampedArray',
  'Int16Array',
  'Uint16Array',
  'Int32Array',
  'Uint32Array',
  'Float32Array',
  'Float64Array',
  'BigInt64Array',
  'BigUint64Array',
  'DataView',
  'SharedArrayBuffer',
];

class SharedTypedArraysEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    for (const name of SHARED) this.global[name] = globalThis[name];
  }
}

module.exports = SharedTypedArraysEnvironment;
