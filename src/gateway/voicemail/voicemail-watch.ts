/**
 * A call's answering-machine handling on the gateway (docs/phone-operations.md#voicemail-on-outbound-calls). The
 * detector (src/voicemail/machine-detector.ts) listens to the callee's first seconds while the
 * agent's greeting plays as usual — a person never waits on it. Verdicts go to the workflow as
 * `answeredBy` signals. On a machine (ours, or the vendor's AMD through the `voicemail` activity):
 * the agent stops at once and says nothing more; then either the call ends, or the gateway waits
 * for the beep (or the machine's silence) and speaks the message once; the stream closes with
 * reason `voicemail` either way.
 */
import type { Logger } from '../../shared/logger';
import type { SpeechOutcome } from '../../../workflows/call-definitions';
import type { AnsweredByVerdict, VoicemailPlan } from '../../voicemail/settings';
import type { BeepEvent } from '../../voicemail/beep-detector';
import { MachineDetector, type MachineVerdict } from '../../voicemail/machine-detector';
import type { GatewayEventLog } from '../workflow-link/events';

/** A machine with no beep: the message starts after this much silence once its greeting paused. */
const SILENCE_INSTEAD_OF_BEEP_MS = 3500;
/** Never wait longer than this for a beep once the machine was found. */
const MAX_BEEP_WAIT_MS = 30_000;
const POLL_MS = 50;

export interface VoicemailCall {
  callId: string;
  log: Logger;
  events: GatewayEventLog;
  /** Tell the workflow (the answeredBy signal, through the call's outbox). */
  report(verdict: AnsweredByVerdict): void;
  /** No further turns; the agent stops now; only `utteranceId` may speak from now on. */
  silence(utteranceId: string): void;
  speak(utteranceId: string, text: string): Promise<SpeechOutcome | undefined>;
  /** Close the stream with reason `voicemail` (`message`: what the machine recorded of ours). */
  finish(message: string | undefined, events: SpeechOutcome['events']): void;
}

type AfterWhat = 'beep' | 'vendor_beep' | 'silence' | 'timeout';

export class VoicemailWatch {
  private readonly detector: MachineDetector;
  private acting: Promise<void> | null = null;
  /** The last beep that ended (audio ms), and one still sounding. */
  private beepEnded: BeepEvent | null = null;
  private beepSounding: BeepEvent | null = null;
  private beepWaiter: (() => void) | null = null;
  private closed = false;
  private vendorGreetingEnded = false;

  constructor(
    private readonly call: VoicemailCall,
    private readonly plan: VoicemailPlan,
    sampleRate: number,
  ) {
    this.detector = new MachineDetector(sampleRate, {
      verdict: (v) => this.onVerdict(v),
      beep: (e, ended) => this.onBeep(e, ended),
    });
  }

  push(pcm: Int16Array): void {
    if (!this.closed) this.detector.push(pcm);
  }

  onVad(e: { type: 'speech_started' | 'speech_stopped'; at_ms: number }): void {
    if (!this.closed) this.detector.onVad(e);
  }

  close(): void {
    this.closed = true;
    this.beepWaiter?.();
  }

  /** A machine answered (once; later verdicts join the first). */
  machine(verdict: AnsweredByVerdict): Promise<void> {
    // The vendor says the greeting is over while we wait for the beep: the message may start.
    if (verdict.beep_heard) {
      this.vendorGreetingEnded = true;
      this.beepWaiter?.();
    }
    this.acting ??= this.act(verdict).catch((err: Error) => {
      this.call.log.error('voicemail handling failed', { callId: this.call.callId, error: err.message });
      this.call.finish(undefined, []);
    });
    return this.acting;
  }

  private onVerdict(v: MachineVerdict): void {
    const verdict: AnsweredByVerdict = { ...v, source: 'gateway' };
    this.call.log.info('answered by', { callId: this.call.callId, ...verdict });
    this.call.report(verdict);
    if (v.answered_by === 'machine') void this.machine(verdict);
  }

  private onBeep(e: BeepEvent, ended: boolean): void {
    if (ended) {
      this.beepSounding = null;
      this.beepEnded = e;
      this.beepWaiter?.();
    } else {
      this.beepSounding = e;
    }
  }

  private async act(verdict: AnsweredByVerdict): Promise<void> {
    this.call.silence(this.plan.utteranceId);
    if (this.plan.action === 'hang_up' || !this.plan.message) {
      this.call.finish(undefined, []);
      return;
    }
    const after = await this.waitForBeep(verdict);
    if (this.closed) return;
    const startedPerf = performance.now();
    const spoken = await this.call.speak(this.plan.utteranceId, this.plan.message);
    const beep = after === 'beep' ? this.beepEnded : null;
    this.call.events.add(
      'voicemail_message_left',
      {
        text: spoken?.heardText ?? '',
        complete: spoken ? !spoken.interrupted && spoken.heardText === this.plan.message : false,
        after,
        ...(beep ? { beep_hz: beep.frequencyHz, beep_ms: beep.durationMs } : {}),
      },
      startedPerf,
    );
    this.call.finish(spoken?.heardText, spoken?.events ?? []);
  }

  /** Resolves when the machine is recording: after its beep (or the vendor's word that it beeped). */
  private async waitForBeep(verdict: AnsweredByVerdict): Promise<AfterWhat> {
    if (this.beepEnded && !this.beepSounding) return 'beep';
    const deadline = performance.now() + MAX_BEEP_WAIT_MS;
    for (;;) {
      if (this.closed) return 'timeout';
      if (this.beepEnded && !this.beepSounding) return 'beep';
      if (this.vendorGreetingEnded || verdict.beep_heard) return 'vendor_beep';
      const quiet = this.detector.silentForMs();
      if (!this.beepSounding && quiet !== null && quiet >= SILENCE_INSTEAD_OF_BEEP_MS) return 'silence';
      if (performance.now() >= deadline) return 'timeout';
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, POLL_MS);
        function done() {
          clearTimeout(timer);
          resolve();
        }
        this.beepWaiter = done;
      });
      this.beepWaiter = null;
    }
  }
}
