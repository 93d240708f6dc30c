/**
 * A voice call's audio stream on its media gateway, as the workflow sees it: the stream connecting
 * (the `mediaConnected` signal), the media session held while it lasts (the gateway's presence is
 * its liveness, no heartbeats), what its end means for the call (hang-up, a gateway failure,
 * voicemail, a drain), probing a gateway the watchdog suspects (`gatewayLost`), leaving a stream
 * for a transfer, and closing the stream at the end. Workflow code: deterministic, no I/O.
 */
import { condition } from '@temporalio/workflow';
import { GATEWAY_PROBE_TIMEOUT_SECS, type CallRecordPatch, type GatewayLostSignal, type MediaConnectedSignal, type MediaSessionResult } from './call-definitions';
import type { CallContext } from './call-context';
import { GatewayLost } from './channels';
import { isFinal } from './call-status';
import type { TurnArming } from './turn-arming';
import { MEDIA_CLOSE_WAIT, MEDIA_CONNECT_TIMEOUT } from './call-limits';

export class CallMedia {
  /** The stream closed (or the media session failed): nothing to close at the end. */
  closed = false;
  /**
   * While a call greeted by its gateway sets up: its writes join the one after the greeting
   * (CallRecorder.defer), so the workflow task that answers `mediaConnected` sends the greeting and
   * the first turn to the gateway at once. The gateway wrote `in_progress` and itself as the call's
   * gateway at stream start (src/gateway/stream/answered-calls.ts): the watchdog knows the call already.
   */
  deferSetupWrites = false;
  /** Bumped when the call's stream goes away for a transfer: reports of the old stream are stale. */
  private generation = 0;
  /** The current stream's media session has not ended yet. */
  private sessionLive = false;
  /** The gateway the watchdog reported lost, until the probe has answered. */
  private suspect: GatewayLostSignal | null = null;

  constructor(
    private readonly ctx: CallContext,
    private readonly arming: TurnArming | null,
  ) {}

  /** Calls whose set-up writes are deferred: voice calls the gateway greets at stream start. */
  greetedByGateway(): boolean {
    const { input, clientManaged, voicemail } = this.ctx;
    return input.channel === 'voice' && !input.carried && !!input.agent.greeting && !clientManaged && !voicemail.detects;
  }

  /** A write of the set-up: deferred (see deferSetupWrites) or queued now. */
  setupWrite(patch: CallRecordPatch): void {
    if (this.deferSetupWrites && !isFinal(this.ctx.status)) this.ctx.recorder.defer(patch);
    else void this.ctx.recorder.flush(patch);
  }

  /** The provider's audio stream reached a media gateway (signal): the call is answered. */
  onConnected(signal: MediaConnectedSignal): void {
    const { ctx } = this;
    if (isFinal(ctx.status) || ctx.gatewayTaskQueue !== null) return;
    ctx.recordGatewayEvents(signal.events);
    ctx.gatewayTaskQueue = signal.gatewayTaskQueue;
    // A stream after a transfer records a part of its own: recording_path stays the first.
    ctx.recordingPath ??= signal.recordingPath;
    if (signal.recordingPath && !ctx.recordingParts.includes(signal.recordingPath)) ctx.recordingParts.push(signal.recordingPath);
    ctx.channel = ctx.voiceChannel(signal.gatewayTaskQueue);
    // At the gateway's time: the greeting may already be playing (its events come later, earlier dated).
    const reported = (signal.events ?? []).map((e) => e?.timestampMs).filter((t): t is number => Number.isFinite(t));
    const at = Number.isFinite(signal.connectedAtMs) ? Math.min(Date.now(), Math.max(signal.connectedAtMs!, ...reported)) : Date.now();
    ctx.recorder.record('call_status', { status: 'media_connected', source: 'gateway', stream_sid: signal.streamSid }, at);
    if (ctx.status === 'ringing') ctx.moveTo('in_progress', undefined, at);
  }

  /** Waits for the call's stream to (re)connect and holds its media session. */
  async connect(): Promise<void> {
    const { ctx } = this;
    if (isFinal(ctx.status) || ctx.endRequest !== null) return;
    const connected = await condition(() => ctx.gatewayTaskQueue !== null || ctx.endRequest !== null || isFinal(ctx.status), MEDIA_CONNECT_TIMEOUT);
    if (!connected) return ctx.fail('the audio stream never connected to a media gateway', 'gateway');
    if (ctx.gatewayTaskQueue === null) return;
    const recording = ctx.recordingPath ? { recording_path: ctx.recordingPath, recording_parts: [...ctx.recordingParts] } : {};
    this.setupWrite({ ...recording, gateway_id: ctx.gatewayTaskQueue });
    const generation = this.generation;
    this.sessionLive = true;
    ctx.voice!.mediaSession().then(
      (result) => this.onSessionEnd(result, generation),
      (err: unknown) => {
        if (generation === this.generation) this.sessionLive = false;
        if (generation !== this.generation) return; // a stream the call left for a transfer
        this.closed = true;
        const message = err instanceof GatewayLost ? err.message : `media gateway lost: ${((err as Error).cause as Error | undefined)?.message ?? (err as Error).message}`;
        if (!isFinal(ctx.status)) ctx.fail(message, 'gateway');
      },
    );
  }

  private onSessionEnd(result: MediaSessionResult, generation: number): void {
    const { ctx } = this;
    if (generation === this.generation) this.sessionLive = false;
    ctx.recordGatewayEvents(result.events);
    this.arming?.releaseWithMedia(result.releasedArm);
    // The stream the vendor closed to dial a transfer destination: not the caller hanging up.
    if (generation !== this.generation || (ctx.transfer !== null && result.reason === 'hangup')) return;
    this.closed = true;
    if (result.reason === 'hangup') ctx.requestEnd('user_ended');
    else if (isFinal(ctx.status)) return;
    else if (result.reason === 'failed') ctx.fail(result.error?.message ?? 'the media gateway gave up on the call', result.error?.context ?? 'gateway');
    else if (result.reason === 'voicemail') {
      this.goodbye(result.goodbye);
      ctx.requestEnd('voicemail');
    } else if (result.reason === 'drained') {
      // The gateway drained (a deploy, a scale-down) and its deadline passed: it said goodbye and
      // closed the stream. The call ends as the agent's decision, with an event saying why.
      this.goodbye(result.goodbye);
      ctx.recorder.record('call_status', { status: 'drained', source: 'gateway' });
      ctx.requestEnd('agent_ended');
    }
  }

  /** The goodbye the gateway said itself (voicemail, drain). */
  private goodbye(text: string | undefined): void {
    if (!text) return;
    this.ctx.recorder.record('agent_spoke', { text });
    this.ctx.conv.history.push({ role: 'assistant', content: text });
  }

  /** The call's stream ended for a transfer's hand-over; a new one (same call) may come back later. */
  detach(): void {
    this.generation++;
    this.ctx.gatewayTaskQueue = null;
    this.ctx.channel = null;
    this.closed = false;
  }

  /** The current stream's media session is still up (a warm transfer's briefing: the destination has not hung up). */
  get sessionOpen(): boolean {
    return this.sessionLive;
  }

  /**
   * A warm transfer's briefing stream, ended on purpose: the gateway closes it (which hangs that
   * leg up) and the call waits for its session to end, so the caller's next stream is welcome.
   */
  async leave(): Promise<void> {
    const channel = this.ctx.voice;
    if (channel && this.sessionLive && !channel.isAbandoned) {
      try {
        await channel.endMedia('transferred');
        await condition(() => !this.sessionLive, MEDIA_CLOSE_WAIT);
      } catch {
        // The gateway is gone; the stream went with it.
      }
    }
    this.detach();
  }

  /** The watchdog says the call's gateway has no presence (signal): watch() probes it. */
  onGatewayLost(signal: GatewayLostSignal): void {
    if (typeof signal?.gatewayTaskQueue !== 'string') throw new TypeError('gatewayTaskQueue is not a string');
    if (isFinal(this.ctx.status) || signal.gatewayTaskQueue !== this.ctx.gatewayTaskQueue) return;
    this.suspect ??= { gatewayTaskQueue: signal.gatewayTaskQueue, reason: String(signal.reason ?? 'no presence') };
  }

  /**
   * When the watchdog reports the gateway lost, ask the gateway itself. One that answers keeps the
   * call (it only lost the database for a moment); one that does not is gone, and everything
   * waiting on it is released with GatewayLost (the call ends failed, once).
   */
  async watch(): Promise<void> {
    const { ctx } = this;
    for (;;) {
      await condition(() => this.suspect !== null || isFinal(ctx.status));
      const suspect = this.suspect;
      if (!suspect || isFinal(ctx.status)) return;
      const channel = suspect.gatewayTaskQueue === ctx.gatewayTaskQueue ? ctx.voice : null;
      const alive = channel ? await channel.probe() : true;
      this.suspect = null;
      if (alive) {
        ctx.recorder.record('call_status', { status: 'gateway_probed', source: 'watchdog', alive: true, reason: suspect.reason });
        continue;
      }
      channel!.abandon(`${suspect.reason}; the gateway did not answer a probe within ${GATEWAY_PROBE_TIMEOUT_SECS} s`);
    }
  }

  /** At the end: let the goodbye play, then close the provider stream (which hangs up). */
  async close(): Promise<void> {
    const { ctx } = this;
    const channel = ctx.voice;
    if (ctx.gatewayTaskQueue === null || this.closed || !channel || channel.isAbandoned) return;
    try {
      await channel.endMedia(ctx.endReason ?? 'user_ended');
      // The last utterance's gateway events come with the media session's result.
      await condition(() => this.closed, MEDIA_CLOSE_WAIT);
    } catch {
      // The gateway is gone; its socket went with it.
    }
  }
}
