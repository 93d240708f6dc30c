/**
 * When each piece of caller audio arrived at the gateway, by its position in the call's audio
 * (the VAD's clock: samples since the first one analysed). The turn detector asks it when the
 * caller's last speech frame arrived, so latency figures start when the audio reached us — time
 * the audio then spent queued in the gateway (a busy event loop, the VAD batch) is inside them.
 * Keeps the last CAPACITY frames (~10 s of 20 ms frames).
 */
const CAPACITY = 512;

export class ArrivalClock {
  private readonly endSample = new Float64Array(CAPACITY);
  private readonly arrivedPerf = new Float64Array(CAPACITY);
  private count = 0;
  private samples = 0;

  constructor(private readonly sampleRate: number) {}

  /** A frame of `length` samples that arrived at `arrivedPerf` (performance.now()). */
  add(length: number, arrivedPerf: number): void {
    this.samples += length;
    const i = this.count++ % CAPACITY;
    this.endSample[i] = this.samples;
    this.arrivedPerf[i] = arrivedPerf;
  }

  /** Arrival of the frame holding the sample just before `audioMs`; null if no longer known. */
  arrivalOf(audioMs: number): number | null {
    const sample = Math.max(1, Math.round((audioMs * this.sampleRate) / 1000));
    if (sample > this.samples) return null;
    const oldest = Math.max(0, this.count - CAPACITY);
    // Newest first: the frames asked about are the recent ones.
    for (let n = this.count - 1; n >= oldest; n--) {
      if (n > 0 && n - 1 < oldest) return null; // where the oldest frame kept starts is forgotten
      const start = n === 0 ? 0 : this.endSample[(n - 1) % CAPACITY]!;
      if (sample > start) return this.arrivedPerf[n % CAPACITY]!;
    }
    return null;
  }
}
