/**
 * Who answered an outbound call, from its first seconds of audio (docs/phone-operations.md#voicemail-on-outbound-calls):
 *
 * - **long greeting → machine**: the callee's first burst of speech (pauses shorter than
 *   `mergeGapMs` joined) still going after `longGreetingMs`. People answer with a word or two
 *   ("Hello?", "Yes, speaking") and wait; a recorded greeting talks on for 5–15 s.
 * - **short first burst → human**: that burst ended (a pause of `mergeGapMs`) before the bound.
 * - **beep → machine**: a steady tone (beep-detector.ts) within `beepWindowMs` of the start —
 *   also after a short greeting ("Leave a message." then the beep), overriding a `human` verdict.
 *
 * Pure and synchronous: fed the caller's PCM and the call's VAD events (same audio clock).
 * Nothing here delays the agent: the greeting plays meanwhile; a machine verdict stops it.
 */
import type { AnsweredBy } from './settings';
import { BeepDetector, DEFAULT_BEEP_PARAMS, type BeepEvent, type BeepParams } from './beep-detector';

export interface MachineDetectorParams {
  /** The first burst of speech longer than this is a recorded greeting, ms. */
  longGreetingMs: number;
  /** Pauses shorter than this do not end a burst, ms (a greeting's commas and full stops). */
  mergeGapMs: number;
  /** How late the VAD reports a start (its start_secs, plus a window): a pause is judged this much later. */
  vadStartDelayMs: number;
  /** Only a burst that starts this early is judged, ms since the stream started. */
  firstSpeechWindowMs: number;
  /** A beep this early is a machine, ms since the stream started (beeps later are still reported). */
  beepWindowMs: number;
  /** Beeps are looked for until this, ms since the stream started. */
  listenMs: number;
  beep: BeepParams;
}

export const DEFAULT_MACHINE_PARAMS: MachineDetectorParams = {
  longGreetingMs: 4000,
  mergeGapMs: 800,
  vadStartDelayMs: 250,
  firstSpeechWindowMs: 10_000,
  beepWindowMs: 30_000,
  listenMs: 60_000,
  beep: DEFAULT_BEEP_PARAMS,
};

export interface MachineVerdict {
  answered_by: AnsweredBy;
  reason: 'long_greeting' | 'short_greeting' | 'beep';
  /** Audio ms since the stream started when decided. */
  at_ms: number;
  /** The first burst of speech, ms (so far, for long_greeting). */
  speech_ms?: number;
  beep_hz?: number;
}

export interface MachineListener {
  verdict(v: MachineVerdict): void;
  /** A beep (any time while listening): `ended` once the tone stopped. */
  beep?(e: BeepEvent, ended: boolean): void;
  /** Caller speech started / stopped (audio ms), for waiting on silence. */
  speech?(speaking: boolean, atMs: number): void;
}

export class MachineDetector {
  private readonly beeps: BeepDetector;
  private burstStartMs: number | null = null;
  private lastStopMs: number | null = null;
  private speaking = false;
  private greetingJudged = false;
  private verdictGiven: AnsweredBy | null = null;
  private audioMs = 0;

  constructor(
    readonly sampleRate: number,
    private readonly listener: MachineListener,
    readonly params: MachineDetectorParams = DEFAULT_MACHINE_PARAMS,
  ) {
    this.beeps = new BeepDetector(sampleRate, { beep: (e) => this.onBeep(e, false), beepEnded: (e) => this.onBeep(e, true) }, params.beep);
  }

  get verdict(): AnsweredBy | null {
    return this.verdictGiven;
  }

  /** True while the callee's VAD says speech. */
  get callerSpeaking(): boolean {
    return this.speaking;
  }

  /** Audio ms since the last caller speech ended (null: speaking, or never spoke). */
  silentForMs(): number | null {
    if (this.speaking) return null;
    return this.lastStopMs === null ? null : this.audioMs - this.lastStopMs;
  }

  get listening(): boolean {
    return this.audioMs < this.params.listenMs;
  }

  push(pcm: Int16Array): void {
    if (!this.listening) {
      this.audioMs += (pcm.length * 1000) / this.sampleRate;
      return;
    }
    this.beeps.push(pcm);
    this.audioMs = this.beeps.audioMs;
    this.judgeGreeting();
  }

  onVad(e: { type: 'speech_started' | 'speech_stopped'; at_ms: number }): void {
    if (e.type === 'speech_started') {
      // A pause longer than mergeGapMs (reported late by the VAD) ended the first burst.
      if (!this.greetingJudged && this.burstStartMs !== null && this.lastStopMs !== null && e.at_ms - this.lastStopMs >= this.params.mergeGapMs) {
        this.judgeEnded(this.lastStopMs - this.burstStartMs);
      }
      this.speaking = true;
      if (this.burstStartMs === null && !this.greetingJudged && e.at_ms <= this.params.firstSpeechWindowMs) this.burstStartMs = e.at_ms;
    } else {
      this.speaking = false;
      this.lastStopMs = e.at_ms;
    }
    this.listener.speech?.(this.speaking, e.at_ms);
  }

  private judgeGreeting(): void {
    if (this.greetingJudged || this.burstStartMs === null) return;
    const { longGreetingMs, mergeGapMs, vadStartDelayMs } = this.params;
    const gapMs = this.speaking || this.lastStopMs === null || this.lastStopMs < this.burstStartMs ? 0 : this.audioMs - this.lastStopMs;
    const spokenMs = (gapMs > 0 ? this.lastStopMs! : this.audioMs) - this.burstStartMs;
    // A start reported now may have begun vadStartDelayMs ago: the pause is over only past both.
    if (gapMs >= mergeGapMs + vadStartDelayMs) {
      this.judgeEnded(spokenMs);
      return;
    }
    if (spokenMs >= longGreetingMs) {
      this.greetingJudged = true;
      this.decide({ answered_by: 'machine', reason: 'long_greeting', at_ms: Math.round(this.audioMs), speech_ms: Math.round(spokenMs) });
    }
  }

  /** The first burst ended after `spokenMs` (shorter than a recorded greeting, or it would be judged). */
  private judgeEnded(spokenMs: number): void {
    this.greetingJudged = true;
    if (spokenMs < this.params.longGreetingMs) {
      this.decide({ answered_by: 'human', reason: 'short_greeting', at_ms: Math.round(this.audioMs), speech_ms: Math.round(spokenMs) });
    }
  }

  private onBeep(e: BeepEvent, ended: boolean): void {
    if (!ended && e.startMs <= this.params.beepWindowMs && this.verdictGiven !== 'machine') {
      this.greetingJudged = true;
      this.decide({ answered_by: 'machine', reason: 'beep', at_ms: e.atMs, beep_hz: e.frequencyHz });
    }
    this.listener.beep?.(e, ended);
  }

  private decide(v: MachineVerdict): void {
    if (this.verdictGiven === 'machine') return;
    this.verdictGiven = v.answered_by;
    this.listener.verdict(v);
  }
}
