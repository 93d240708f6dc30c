/**
 * G.711 mu-law, bit-exact with the Sun reference implementation (and so with CPython's `audioop`
 * `lin2ulaw`/`ulaw2lin`). Every component that turns mu-law into PCM or back — the gateway and
 * the vendor fakes in tests — uses this module, so audio round-trips are deterministic.
 *
 * Both directions go through lookup tables built once at load: 64 KiB for encoding (indexed by
 * the 16-bit sample) and 256 entries for decoding, so a 160-byte frame costs 160 array reads.
 */

/** mu-law code of a zero sample; what telephony silence looks like on the wire. */
export const MULAW_SILENCE = 0xff;

const SEGMENT_ENDS = [0x3f, 0x7f, 0xff, 0x1ff, 0x3ff, 0x7ff, 0xfff, 0x1fff];
// The reference encoder works on 14-bit magnitudes: clip, then add the bias (0x84 >> 2).
const CLIP_14 = 8159;
const BIAS_14 = 0x21;

/** The reference formula for one 16-bit sample; the table below is built from it. */
function encodeSample(x: number): number {
  let s = x >> 2;
  let mask = 0xff;
  if (s < 0) {
    s = -s;
    mask = 0x7f;
  }
  s = Math.min(s, CLIP_14) + BIAS_14;
  let seg = 0;
  while (seg < 8 && s > SEGMENT_ENDS[seg]) seg++;
  if (seg >= 8) return 0x7f ^ mask;
  return ((seg << 4) | ((s >> (seg + 1)) & 0x0f)) ^ mask;
}

function decodeSample(code: number): number {
  const u = ~code & 0xff;
  let t = ((u & 0x0f) << 3) + 0x84;
  t <<= (u & 0x70) >> 4;
  return u & 0x80 ? 0x84 - t : t - 0x84;
}

const ENCODE_TABLE = new Uint8Array(65536);
for (let i = 0; i < 65536; i++) ENCODE_TABLE[i] = encodeSample((i << 16) >> 16);

const DECODE_TABLE = new Int16Array(256);
for (let i = 0; i < 256; i++) DECODE_TABLE[i] = decodeSample(i);

export function mulawToLinear(code: number): number {
  return DECODE_TABLE[code & 0xff];
}

export function linearToMulaw(sample: number): number {
  return ENCODE_TABLE[sample & 0xffff];
}

/** Decodes mu-law bytes into 16-bit PCM; pass `out` (at least as long as `buf`) to avoid allocating. */
export function decodeMulaw(buf: Uint8Array, out?: Int16Array): Int16Array {
  const n = buf.length;
  const pcm = out ?? new Int16Array(n);
  if (pcm.length < n) throw new RangeError(`decodeMulaw: output holds ${pcm.length} samples, need ${n}`);
  for (let i = 0; i < n; i++) pcm[i] = DECODE_TABLE[buf[i]];
  return out ? pcm.subarray(0, n) : pcm;
}

/** Encodes 16-bit PCM as mu-law; pass `out` (at least as long as `pcm`) to avoid allocating. */
export function encodeMulaw(pcm: Int16Array, out?: Buffer): Buffer {
  const n = pcm.length;
  const buf = out ?? Buffer.allocUnsafe(n);
  if (buf.length < n) throw new RangeError(`encodeMulaw: output holds ${buf.length} bytes, need ${n}`);
  for (let i = 0; i < n; i++) buf[i] = ENCODE_TABLE[pcm[i] & 0xffff];
  return out ? buf.subarray(0, n) : buf;
}

/** A buffer of mu-law silence, e.g. to pad the last frame of an utterance. */
export function mulawSilence(bytes: number): Buffer {
  return Buffer.alloc(bytes, MULAW_SILENCE);
}
