import { QUIET_CHUNK_MS, STT_CHUNK_MS, SttChunker } from '../../src/gateway/stt/stt-chunker';

const RATE = 8000;
const frame = (ms: number, value = 1) => new Int16Array((RATE * ms) / 1000).fill(value);
const msOf = (chunk: Buffer) => (chunk.length / 2 / RATE) * 1000;

function chunker() {
  const writes: Buffer[] = [];
  return { writes, c: new SttChunker(RATE, (b) => writes.push(b)) };
}

describe('SttChunker: caller audio grouped into STT writes', () => {
  it('sends 80 ms chunks while the caller may be talking', () => {
    const { writes, c } = chunker();
    for (let i = 0; i < 12; i++) c.push(frame(20), false);
    expect(writes.map(msOf)).toEqual([STT_CHUNK_MS, STT_CHUNK_MS, STT_CHUNK_MS]);
  });

  it('sends longer chunks while the VAD hears nobody: a third of the writes', () => {
    const { writes, c } = chunker();
    for (let i = 0; i < 36; i++) c.push(frame(20), true);
    expect(writes.map(msOf)).toEqual([QUIET_CHUNK_MS, QUIET_CHUNK_MS, QUIET_CHUNK_MS]);
  });

  it('sends buffered silence at once when speech begins, then the words in short chunks, in order', () => {
    const { writes, c } = chunker();
    for (let i = 0; i < 5; i++) c.push(frame(20, 0), true); // 100 ms of silence buffered
    expect(writes).toHaveLength(0);
    for (let i = 1; i <= 4; i++) c.push(frame(20, i), false);
    expect(writes.map(msOf)).toEqual([100, STT_CHUNK_MS]);
    // The words follow the silence, frame by frame (160 samples = 320 bytes a frame).
    const sent = Buffer.concat(writes);
    for (let i = 0; i < 5; i++) expect(sent.readInt16LE(i * 320)).toBe(0);
    expect([1, 2, 3, 4].map((_, i) => sent.readInt16LE((5 + i) * 320))).toEqual([1, 2, 3, 4]);
  });

  it('flush() sends a partial chunk (a finalize must carry every word); nothing is sent twice', () => {
    const { writes, c } = chunker();
    c.push(frame(20, 7), false);
    c.flush();
    c.flush();
    expect(writes.map(msOf)).toEqual([20]);
    expect(new Int16Array(writes[0]!.buffer, writes[0]!.byteOffset, 160).every((v) => v === 7)).toBe(true);
  });

  it('hands each write a buffer of its own (a socket may still hold the previous one)', () => {
    const { writes, c } = chunker();
    const reused = frame(20, 1);
    for (let i = 0; i < 4; i++) c.push(reused, false);
    reused.fill(9);
    for (let i = 0; i < 4; i++) c.push(reused, false);
    expect(writes[0]!.readInt16LE(0)).toBe(1);
    expect(writes[1]!.readInt16LE(0)).toBe(9);
  });

  it('discard() drops what is buffered', () => {
    const { writes, c } = chunker();
    c.push(frame(40), true);
    c.discard();
    c.flush();
    expect(writes).toHaveLength(0);
  });
});
