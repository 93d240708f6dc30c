/**
 * A call's latency figures, taken from the side of its pipeline (a PipelineObserver): the
 * greeting (stream start → its first audio), the turn end to end (the caller's end of speech, and
 * the VAD's stop decision → the reply's first audio) and its stages (VAD, STT final, the handoff
 * through the workflow), and barge-in (VAD speech start → the line cleared). The end-to-end and
 * STT figures also go to the workflow as `ttfb_metric` events.
 */
import { observeBargeInFromSpeech, observeBargeInLatency, observeGreetingLatency, observeHandoff, observeTurnLatency, observeTurnStage } from '../../observability/metrics';
import type { GatewayEventLog } from '../workflow-link/events';
import type { AgentSpeech } from '../speech/agent-speech';
import type { PipelineObserver } from './pipeline-observer';
import type { CompletedTurn } from '../turns/turn-detector';

/** An utterance on its way to a reply: its end of speech, for the e2e latency of that reply. */
interface PendingReply {
  speechEndPerf: number;
  vadStopPerf: number;
  signalledPerf: number;
  handoffTimed?: boolean;
}

export class LatencyMetrics implements PipelineObserver {
  private pendingReply: PendingReply | null = null;
  /** When the VAD last decided the caller started speaking. */
  private vadStartPerf: number | null = null;
  /** When the audio of that speech's onset arrived. */
  private speechOnsetPerf: number | null = null;
  private greetingTimed = false;

  constructor(
    private readonly events: GatewayEventLog,
    /** performance.now() when the stream started. */
    private readonly startPerf: number,
  ) {}

  callerSpeechStarted(atPerf: number, onsetPerf: number | null = null): void {
    this.vadStartPerf = atPerf;
    this.speechOnsetPerf = onsetPerf;
  }

  utterance(turn: CompletedTurn): void {
    this.greetingTimed = true;
    if (turn.sttTtfbMs !== null) this.events.add('ttfb_metric', { processor: 'stt', ms: turn.sttTtfbMs });
    if (turn.sttTtfbMs !== null) observeTurnStage('stt_final', turn.sttTtfbMs);
    if (turn.speechEndPerf !== null && turn.vadStopPerf !== null) observeTurnStage('vad', turn.vadStopPerf - turn.speechEndPerf);
    if (!turn.duringAgentSpeech && turn.speechEndPerf !== null && turn.vadStopPerf !== null) {
      this.pendingReply = { speechEndPerf: turn.speechEndPerf, vadStopPerf: turn.vadStopPerf, signalledPerf: performance.now() };
    }
  }

  turnStarted(): void {
    const pending = this.pendingReply;
    if (pending && !pending.handoffTimed) {
      pending.handoffTimed = true;
      observeHandoff(performance.now() - pending.signalledPerf);
    }
  }

  agentSpeechStarted(speech: AgentSpeech, atPerf: number): void {
    if (!this.greetingTimed) {
      // The call's first audio, before the caller said anything: the greeting.
      this.greetingTimed = true;
      if (!this.pendingReply) observeGreetingLatency(atPerf - this.startPerf);
    }
    const pending = this.pendingReply;
    if (pending && speech.createdPerf >= pending.signalledPerf) {
      this.pendingReply = null;
      observeTurnLatency(atPerf - pending.speechEndPerf, 'speech_end');
      observeTurnLatency(atPerf - pending.vadStopPerf, 'vad_stop');
      this.events.add(
        'ttfb_metric',
        { processor: 'e2e', ms: Math.round(atPerf - pending.speechEndPerf), after_vad_stop_ms: Math.round(atPerf - pending.vadStopPerf), utterance_id: speech.id },
        atPerf,
      );
    }
  }

  bargedIn(cut: readonly AgentSpeech[]): void {
    // Only a cut that cleared audible speech counts: the line went silent now.
    if (this.vadStartPerf === null || !cut.some((s) => s.framesSent > 0)) return;
    const now = performance.now();
    observeBargeInLatency(now - this.vadStartPerf);
    if (this.speechOnsetPerf !== null) observeBargeInFromSpeech(now - this.speechOnsetPerf);
  }
}
