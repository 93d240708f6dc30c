/**
 * RNNoise (Xiph's recurrent noise suppressor, with its trained weights) from the npm package
 * `@echogarden/rnnoise-wasm`: one WebAssembly instance per process, one denoise state per call.
 *
 * Why this package and why loaded by hand: `@shiguredo/rnnoise-wasm`'s glue refuses to run outside
 * a browser ("not compiled for this environment") and its build (3.6 MB, assertions on) took 1.6 ms
 * per 10 ms frame here; `@jitsi/rnnoise-wasm`'s `.wasm` is RNNoise 0.1 and its glue is browser-only
 * ES modules. Echogarden's build ships RNNoise 0.2's weights inside a 125 kB `.wasm` (~0.25 ms per
 * frame on the 2-core VM). All three glues are ES modules using `import.meta`, which neither this
 * CommonJS build nor jest load, so the `.wasm` is instantiated here directly: it needs only two
 * imports (a memcpy and a heap resize). Emscripten minifies the export and import names; they are
 * read from the package's own glue (`_rnnoise_create=Module["_rnnoise_create"]=…wasmExports["h"]`),
 * so a rebuilt package version still maps, and a glue this does not understand fails loudly at the
 * first call that asks for noise suppression rather than silently passing audio through.
 */
import fs from 'node:fs';
import path from 'node:path';

/** Samples per RNNoise frame: 10 ms at 48 kHz. */
export const RNNOISE_FRAME = 480;
export const RNNOISE_RATE = 48_000;

interface Exports {
  memory: WasmMemory;
  create(model: number): number;
  destroy(state: number): void;
  process(state: number, out: number, input: number): number;
  malloc(bytes: number): number;
  free(ptr: number): void;
}

/** One call's RNNoise state and its frame buffer inside the shared instance. */
export interface DenoiseState {
  /**
   * Denoises 480 samples in place (int16-scaled floats, as RNNoise expects) and returns RNNoise's
   * own speech probability for the frame.
   */
  processFrame(frame: Float32Array): number;
  /** Frees the state in the WASM heap; processFrame throws afterwards. */
  destroy(): void;
}

/** The little of the WebAssembly API used here (this project's `lib` has no WebAssembly types). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
const Wasm = (
  globalThis as unknown as {
    WebAssembly: {
      Module: new (bytes: Uint8Array) => object;
      Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
      Memory: abstract new (...args: never[]) => WasmMemory;
    };
  }
).WebAssembly;

let loaded: Exports | null = null;
/** States alive in the shared instance (a leak check for tests and /healthz-like diagnostics). */
let liveStates = 0;

function packageFile(name: string): string {
  return path.join(path.dirname(require.resolve('@echogarden/rnnoise-wasm/package.json')), name);
}

/** Minified name of each `_name` export, as the glue maps them. */
function exportNames(glue: string): Map<string, string> {
  const names = new Map<string, string>();
  for (const m of glue.matchAll(/_(\w+)=Module\["_\1"\]=[^;]*?wasmExports\["(\w+)"\]/g)) names.set(m[1]!, m[2]!);
  return names;
}

function load(): Exports {
  const glue = fs.readFileSync(packageFile('rnnoise.js'), 'utf8');
  const names = exportNames(glue);
  const imports = /wasmImports=\{([^}]*)\}/.exec(glue)?.[1];
  const need = ['rnnoise_create', 'rnnoise_destroy', 'rnnoise_process_frame', 'rnnoise_get_frame_size', 'malloc', 'free'];
  const missing = need.filter((n) => !names.has(n));
  if (missing.length > 0 || !imports) throw new Error(`@echogarden/rnnoise-wasm: cannot map the WASM exports (${missing.join(', ') || 'imports'})`);
  const importName = new Map(imports.split(',').map((pair) => pair.split(':').reverse() as [string, string]));
  let memory: WasmMemory | undefined;
  const env: Record<string, (...args: number[]) => number | void> = {};
  const memcpy = importName.get('__emscripten_memcpy_js') ?? importName.get('_emscripten_memcpy_big');
  const resize = importName.get('_emscripten_resize_heap');
  if (!memcpy || !resize || importName.size !== 2) throw new Error(`@echogarden/rnnoise-wasm: unexpected WASM imports (${imports})`);
  env[memcpy] = (dest, src, n) => void new Uint8Array(memory!.buffer).copyWithin(dest!, src!, src! + n!);
  env[resize] = (requested) => {
    try {
      memory!.grow(Math.ceil((requested! - memory!.buffer.byteLength) / 65_536));
      return 1;
    } catch {
      return 0;
    }
  };
  const module = new Wasm.Module(fs.readFileSync(packageFile('rnnoise.wasm')));
  const ex = new Wasm.Instance(module, { a: env }).exports;
  memory = Object.values(ex).find((v): v is WasmMemory => v instanceof Wasm.Memory);
  if (!memory) throw new Error('@echogarden/rnnoise-wasm: no memory export');
  const fn = (name: string) => ex[names.get(name)!] as (...args: number[]) => number;
  // Static constructors (emscripten's __wasm_call_ctors), which the glue runs at start-up.
  const ctors = /addOnInit\(wasmExports\["(\w+)"\]\)/.exec(glue)?.[1];
  if (ctors) (ex[ctors] as () => void)();
  if (fn('rnnoise_get_frame_size')() !== RNNOISE_FRAME) throw new Error('@echogarden/rnnoise-wasm: unexpected frame size');
  return {
    memory,
    create: fn('rnnoise_create'),
    destroy: fn('rnnoise_destroy'),
    process: fn('rnnoise_process_frame'),
    malloc: fn('malloc'),
    free: fn('free'),
  };
}

/** The process's RNNoise instance, loaded (synchronously, ~ms) at the first call that asks. */
function rnnoise(): Exports {
  loaded ??= load();
  return loaded;
}

/** A new call's denoise state (18 kB in the shared instance, plus a 2 kB frame buffer). */
export function createDenoiseState(): DenoiseState {
  const ex = rnnoise();
  let state = ex.create(0);
  const buffer = ex.malloc(RNNOISE_FRAME * 4);
  if (!state || !buffer) throw new Error('RNNoise: out of WASM memory');
  liveStates++;
  return {
    processFrame(frame) {
      if (!state) throw new Error('RNNoise state already destroyed');
      // A view per frame: growing the memory (another call's state) detaches older views.
      const heap = new Float32Array(ex.memory.buffer, buffer, RNNOISE_FRAME);
      heap.set(frame);
      const vad = ex.process(state, buffer, buffer);
      frame.set(heap);
      return vad;
    },
    destroy() {
      if (!state) return;
      ex.destroy(state);
      ex.free(buffer);
      state = 0;
      liveStates--;
    },
  };
}

/** Denoise states not yet destroyed in this process. */
export function liveDenoiseStates(): number {
  return liveStates;
}
