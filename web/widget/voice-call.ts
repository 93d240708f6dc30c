/**
 * A web call from the browser (docs/web-calls.md), shared by the dashboard's Talk button and the
 * embeddable widget: the microphone goes to the media gateway's /media/web socket as 16-bit PCM,
 * the agent's audio is played through a jitter buffer, `clear` (barge-in) empties it, and marks
 * are echoed once the audio before them has been heard. Standard Web APIs only (Chromium, Firefox).
 */
import { AGENT_RATE, WIRE_RATES, WORKLET_SOURCE } from './worklets';

/** What POST /api/calls/web answers. */
export interface WebCallGrant {
  call_id: string;
  stream_url: string;
  token: string;
  expires_at: string;
}

export type Speaker = 'agent' | 'you' | null;

export interface VoiceCallEvents {
  /** The socket is open and the stream started; or the call is over (`detail`: why, when not a normal end). */
  onState?(state: 'live' | 'ended', detail?: string): void;
  /** Microphone level, 0…1 (RMS of the last 20 ms). */
  onLevel?(rms: number): void;
  onSpeaker?(who: Speaker): void;
  /** End of the caller's speech → the agent's answer starting to play, measured here. */
  onTurnLatency?(ms: number): void;
}

export interface VoiceCallStats {
  /** Agent audio heard: ms during which the played output was above the analyser's silence floor. */
  heardMs: number;
  /** Barge-ins: `clear`s received. */
  clears: number;
  turnLatenciesMs: number[];
}

/** RMS above which a microphone frame counts as the caller speaking (about −34 dBFS). */
const VOICE_RMS = 0.02;
/** The caller "is speaking" for this long after a voiced frame. */
const SPEAKING_HANGOVER_MS = 300;
const ANALYSER_TICK_MS = 50;
const HEARD_RMS = 0.01;

/** Asks for the microphone, with the browser's echo cancellation, noise suppression and gain control. */
export function openMicrophone(): Promise<MediaStream> {
  return navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true, channelCount: 1 } });
}

let workletUrl: string | null = null;

export class WebVoiceCall {
  readonly stats: VoiceCallStats = { heardMs: 0, clears: 0, turnLatenciesMs: [] };
  private readonly ws: WebSocket;
  private readonly pendingMarks: Array<{ name: string; at: number }> = [];
  private received = 0;
  private lastVoiceAt = -Infinity;
  private lastPlayAt = -Infinity;
  private speaker: Speaker = null;
  private agentPlaying = false;
  private ended = false;
  private readonly timer: ReturnType<typeof setInterval>;

  private constructor(
    grant: WebCallGrant,
    private readonly mic: MediaStream,
    private readonly ctx: AudioContext,
    private readonly capture: AudioWorkletNode,
    private readonly playback: AudioWorkletNode,
    private readonly analyser: AnalyserNode,
    private readonly events: VoiceCallEvents,
  ) {
    const wireRate = WIRE_RATES.includes(ctx.sampleRate) ? ctx.sampleRate : AGENT_RATE;
    this.ws = new WebSocket(grant.stream_url);
    this.ws.binaryType = 'arraybuffer';
    this.ws.onopen = () => {
      this.ws.send(JSON.stringify({ event: 'start', call_id: grant.call_id, token: grant.token, sample_rate: wireRate }));
      events.onState?.('live');
    };
    this.ws.onmessage = (e) => this.onGatewayMessage(e.data as ArrayBuffer | string);
    this.ws.onclose = (e) => this.finish(e.code === 1000 || e.code === 1005 ? undefined : e.reason || `connection closed (${e.code})`);
    capture.port.onmessage = (e) => this.onMicFrame(e.data as { type: string; pcm?: ArrayBuffer; rms?: number });
    playback.port.onmessage = (e) => this.onPlayback(e.data as { type: string; consumed?: number });
    this.timer = setInterval(() => this.listen(), ANALYSER_TICK_MS);
  }

  /** Opens the call's stream with the microphone `mic` (see openMicrophone). */
  static async start(grant: WebCallGrant, mic: MediaStream, events: VoiceCallEvents = {}): Promise<WebVoiceCall> {
    const ctx = new AudioContext({ latencyHint: 'interactive' });
    workletUrl ??= URL.createObjectURL(new Blob([WORKLET_SOURCE], { type: 'text/javascript' }));
    await ctx.audioWorklet.addModule(workletUrl);
    await ctx.resume();
    const capture = new AudioWorkletNode(ctx, 'vap-capture', { numberOfInputs: 1, numberOfOutputs: 1, outputChannelCount: [1] });
    ctx.createMediaStreamSource(mic).connect(capture);
    // A node must reach the destination to be run; the capture's output is silence.
    capture.connect(ctx.destination);
    const playback = new AudioWorkletNode(ctx, 'vap-playback', { numberOfInputs: 0, numberOfOutputs: 1, outputChannelCount: [1] });
    const analyser = ctx.createAnalyser();
    analyser.fftSize = 1024;
    playback.connect(analyser).connect(ctx.destination);
    return new WebVoiceCall(grant, mic, ctx, capture, playback, analyser, events);
  }

  /** Hangs up: the call ends `completed` (end_reason user_ended). */
  hangup(): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ event: 'stop' }));
    this.ws.close(1000);
    this.finish();
  }

  private onGatewayMessage(data: ArrayBuffer | string): void {
    if (typeof data !== 'string') {
      this.received += data.byteLength / 2;
      this.playback.port.postMessage({ type: 'audio', pcm: data }, [data]);
      return;
    }
    let msg: { event?: string; name?: string };
    try {
      msg = JSON.parse(data);
    } catch {
      return;
    }
    if (msg.event === 'mark' && msg.name) this.pendingMarks.push({ name: msg.name, at: this.received });
    if (msg.event === 'clear') {
      this.stats.clears++;
      this.playback.port.postMessage({ type: 'clear' });
      // What was queued will never play: its marks are answered now, as telephony vendors do.
      for (const mark of this.pendingMarks.splice(0)) this.send({ event: 'mark', name: mark.name });
    }
  }

  private onMicFrame(m: { type: string; pcm?: ArrayBuffer; rms?: number }): void {
    if (m.type !== 'frame' || !m.pcm) return;
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(m.pcm);
    const now = performance.now();
    if ((m.rms ?? 0) > VOICE_RMS) this.lastVoiceAt = now;
    this.events.onLevel?.(m.rms ?? 0);
    this.updateSpeaker(now);
  }

  private onPlayback(m: { type: string; consumed?: number }): void {
    const now = performance.now();
    if (m.type === 'consumed') {
      while (this.pendingMarks.length && this.pendingMarks[0]!.at <= m.consumed!) this.send({ event: 'mark', name: this.pendingMarks.shift()!.name });
    } else if (m.type === 'playing') {
      // The first audio of a reply after the caller spoke: the turn's latency as the caller lives it.
      if (this.lastVoiceAt > this.lastPlayAt) {
        const ms = Math.round(now - this.lastVoiceAt);
        this.stats.turnLatenciesMs.push(ms);
        this.events.onTurnLatency?.(ms);
      }
      this.lastPlayAt = now;
      this.agentPlaying = true;
    } else if (m.type === 'idle') {
      this.lastPlayAt = now;
      this.agentPlaying = false;
    }
    this.updateSpeaker(now);
  }

  /** The analyser on the played output: how much agent audio was actually heard. */
  private listen(): void {
    const samples = new Float32Array(this.analyser.fftSize);
    this.analyser.getFloatTimeDomainData(samples);
    let energy = 0;
    for (const s of samples) energy += s * s;
    if (Math.sqrt(energy / samples.length) > HEARD_RMS) this.stats.heardMs += ANALYSER_TICK_MS;
  }

  private updateSpeaker(now: number): void {
    const who: Speaker = this.agentPlaying ? 'agent' : now - this.lastVoiceAt < SPEAKING_HANGOVER_MS ? 'you' : null;
    if (who !== this.speaker) {
      this.speaker = who;
      this.events.onSpeaker?.(who);
    }
  }

  private send(msg: object): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(msg));
  }

  private finish(detail?: string): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.timer);
    for (const track of this.mic.getTracks()) track.stop();
    this.capture.disconnect();
    void this.ctx.close();
    this.events.onSpeaker?.(null);
    this.events.onState?.('ended', detail);
  }
}
