/**
 * The two AudioWorklet processors of a web call, as one module's source (loaded from a Blob URL,
 * so the dashboard and the one-file widget need no extra asset):
 *
 * - `vap-capture`: the microphone, downmixed to mono, as 16-bit PCM frames of 20 ms at the wire
 *   rate (the context's own when it is 16, 24 or 48 kHz — the gateway resamples those once —
 *   else resampled here to 16 kHz), plus the frame's level for the meter.
 * - `vap-playback`: agent audio (16-bit PCM, 16 kHz) through a small jitter buffer: playing starts
 *   once PREBUFFER_MS is queued (or the audio stops coming), an underrun waits for it again;
 *   `clear` drops the queue. It reports how many samples it has consumed (played or dropped), so
 *   marks are echoed when heard, and when playing starts and stops.
 */
export const WIRE_RATES = [16000, 24000, 48000];
export const AGENT_RATE = 16000;
export const PREBUFFER_MS = 60;

export const WORKLET_SOURCE = `
const WIRE_RATES = ${JSON.stringify(WIRE_RATES)};
const AGENT_RATE = ${AGENT_RATE};
const PREBUFFER_MS = ${PREBUFFER_MS};

class Capture extends AudioWorkletProcessor {
  constructor() {
    super();
    this.wireRate = WIRE_RATES.includes(sampleRate) ? sampleRate : 16000;
    this.step = sampleRate / this.wireRate;
    this.pos = 0;
    this.frame = new Int16Array(this.wireRate / 50);
    this.filled = 0;
    this.energy = 0;
    this.port.postMessage({ type: 'rate', wireRate: this.wireRate });
  }
  process(inputs) {
    const input = inputs[0];
    if (!input || input.length === 0) return true;
    const n = input[0].length;
    const mono = new Float32Array(n);
    for (const channel of input) for (let i = 0; i < n; i++) mono[i] += channel[i] / input.length;
    // Linear interpolation: exact for the wire rates (step 1), enough for 44.1 kHz → 16 kHz speech.
    for (; this.pos < n; this.pos += this.step) {
      const i = Math.floor(this.pos);
      const frac = this.pos - i;
      const next = i + 1 < n ? mono[i + 1] : mono[i];
      const v = Math.max(-1, Math.min(1, mono[i] * (1 - frac) + next * frac));
      this.energy += v * v;
      this.frame[this.filled++] = v < 0 ? v * 32768 : v * 32767;
      if (this.filled === this.frame.length) {
        const rms = Math.sqrt(this.energy / this.filled);
        this.port.postMessage({ type: 'frame', pcm: this.frame.buffer, rms }, [this.frame.buffer]);
        this.frame = new Int16Array(this.wireRate / 50);
        this.filled = 0;
        this.energy = 0;
      }
    }
    this.pos -= n;
    return true;
  }
}

class Playback extends AudioWorkletProcessor {
  constructor() {
    super();
    this.chunks = [];
    this.offset = 0;
    this.queued = 0;
    this.consumed = 0;
    this.playing = false;
    this.waitingSince = -1;
    this.step = AGENT_RATE / sampleRate;
    this.pos = 1;
    this.current = 0;
    this.ticks = 0;
    this.port.onmessage = (e) => {
      const m = e.data;
      if (m.type === 'audio') {
        const pcm = new Int16Array(m.pcm);
        this.chunks.push(pcm);
        this.queued += pcm.length;
        if (this.waitingSince < 0) this.waitingSince = currentTime;
      } else if (m.type === 'clear') {
        this.consumed += this.queued;
        this.chunks = [];
        this.offset = 0;
        this.queued = 0;
        this.pos = 1;
        this.stop();
        this.port.postMessage({ type: 'consumed', consumed: this.consumed });
      }
    };
  }
  stop() {
    this.waitingSince = -1;
    if (this.playing) {
      this.playing = false;
      this.port.postMessage({ type: 'idle' });
    }
  }
  sample() {
    const chunk = this.chunks[0];
    const v = chunk[this.offset] / 32768;
    if (++this.offset === chunk.length) {
      this.chunks.shift();
      this.offset = 0;
    }
    this.queued--;
    this.consumed++;
    return v;
  }
  process(_inputs, outputs) {
    const out = outputs[0][0];
    if (!this.playing && this.queued > 0) {
      // Start with enough queued to ride out network jitter, or when no more is coming for as long.
      const enough = this.queued >= (AGENT_RATE * PREBUFFER_MS) / 1000;
      const waited = this.waitingSince >= 0 && currentTime - this.waitingSince >= PREBUFFER_MS / 1000;
      if (enough || waited) {
        this.playing = true;
        this.port.postMessage({ type: 'playing' });
      }
    }
    if (this.playing) {
      for (let i = 0; i < out.length; i++) {
        while (this.pos >= 1 && this.queued > 0) {
          this.current = this.sample();
          this.pos -= 1;
        }
        if (this.pos >= 1) break; // ran dry: the rest of the block is silence
        const next = this.peek();
        out[i] = next === undefined ? this.current : this.current * (1 - this.pos) + next * this.pos;
        this.pos += this.step;
      }
      if (this.queued === 0 && this.pos >= 1) this.stop();
    }
    for (let c = 1; c < outputs[0].length; c++) outputs[0][c].set(out);
    if (++this.ticks % 8 === 0) this.port.postMessage({ type: 'consumed', consumed: this.consumed });
    return true;
  }
  peek() {
    const chunk = this.chunks[0];
    return chunk ? chunk[this.offset] / 32768 : undefined;
  }
}

registerProcessor('vap-capture', Capture);
registerProcessor('vap-playback', Playback);
`;
