/**
 * A call's answering-machine verdicts (docs/phone-operations.md#voicemail-on-outbound-calls), in the workflow: who
 * answered, and the vendor's machine the gateway must be told about. The first machine verdict
 * wins; a gateway's the gateway acts on itself, a vendor's goes to the gateway (`voicemail`
 * activity, call-workflow.ts). A human or unknown verdict only fills answered_by while nothing else
 * has. Workflow code: deterministic, types-only imports from src/.
 */
import { condition } from '@temporalio/workflow';
import type { AnsweredBy, AnsweredByVerdict, VoicemailAction } from '../src/voicemail/settings';
import type { VoiceChannel } from './channels';

/** The answeredBy signal's values (src/voicemail/settings.ts ANSWERED_BY). */
const WHO_ANSWERS: readonly AnsweredBy[] = ['human', 'machine', 'unknown'];
const DETAIL_KEYS = ['beep_heard', 'at_ms', 'speech_ms', 'beep_hz'] as const;

export class CallVoicemail {
  /** Null until a verdict (and on calls without detection). */
  answeredBy: AnsweredBy | null = null;
  /** A machine the vendor's AMD found, until the gateway is told. */
  vendorMachine: AnsweredByVerdict | null = null;

  /** `action` null: the call does not detect voicemail (inbound, web, detect off). */
  constructor(readonly action: VoicemailAction | null) {}

  get detects(): boolean {
    return this.action !== null;
  }

  /** Takes a verdict; returns the `voicemail_detected` event's data when it is the machine verdict. */
  verdict(v: AnsweredByVerdict): Record<string, unknown> | null {
    if (!WHO_ANSWERS.includes(v?.answered_by)) throw new TypeError(`answered_by is ${String(v?.answered_by)}`);
    if (!this.detects || this.answeredBy === 'machine') return null;
    const source = v.source === 'vendor' ? 'vendor' : 'gateway';
    if (v.answered_by !== 'machine') {
      if (this.answeredBy === null || (source === 'vendor' && this.answeredBy === 'unknown')) this.answeredBy = v.answered_by;
      return null;
    }
    this.answeredBy = 'machine';
    if (source === 'vendor') this.vendorMachine = { ...v, source };
    const detail: Record<string, unknown> = {};
    for (const k of DETAIL_KEYS) if (v[k] !== undefined) detail[k] = v[k];
    return { source, reason: String(v.reason ?? ''), action: this.action, ...detail };
  }

  /**
   * The vendor's AMD said machine: the gateway stops the agent and hangs up or leaves the message,
   * then closes the stream with reason `voicemail`. No commands until then, so calls without such
   * a verdict (and every recorded history) replay unchanged.
   */
  async handOverVendorMachine(call: { connected(): boolean; over(): boolean; channel(): VoiceChannel | null; lost(): void }): Promise<void> {
    await condition(() => (this.vendorMachine !== null && call.connected()) || call.over());
    const channel = call.channel();
    if (!this.vendorMachine || call.over() || !channel) return;
    try {
      await channel.voicemail(this.vendorMachine);
    } catch {
      // The gateway is gone or the stream closed meanwhile: the call ends as the session reports.
      if (!call.over()) call.lost();
    }
  }

  /** At the end: a call that detected and heard no verdict is `unknown` (if it was ever answered). */
  settle(answered: boolean): void {
    if (this.detects && this.answeredBy === null && answered) this.answeredBy = 'unknown';
  }
}
