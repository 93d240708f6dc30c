/**
 * A voice call's audio stream on its media gateway, as the workflow sees it: waiting for the stream
 * to connect, holding the media session while it lasts (the gateway's presence is its liveness),
 * what its end means for the call (hang-up, a gateway failure, voicemail, a drain), probing a
 * gateway the watchdog suspects, and closing the stream at the end. Workflow code: deterministic,
 * no I/O.
 */
import { condition } from '@temporalio/workflow';
import { GATEWAY_PROBE_TIMEOUT_SECS, type CallRecordPatch, type MediaSessionResult } from './call-definitions';
import { GatewayLost, VoiceChannel } from './channels';
import { isFinal } from './call-status';
import { TransferTurns } from './call-transfer';
import { MEDIA_CLOSE_WAIT, MEDIA_CONNECT_TIMEOUT } from './call-limits';

export abstract class CallMediaSession extends TransferTurns {
  /**
   * While a call greeted by its gateway sets up: its writes join the one after the greeting
   * (CallRecorder.defer), so the workflow task that answers `mediaConnected` sends the greeting and
   * the first turn to the gateway at once. The gateway wrote `in_progress` and itself as the call's
   * gateway at stream start (src/gateway/answered-calls.ts): the watchdog knows the call already.
   */
  protected deferSetupWrites = false;

  /** Calls whose set-up writes are deferred: voice calls the gateway greets at stream start. */
  protected greetedByGateway(): boolean {
    const { input } = this;
    return input.channel === 'voice' && !input.carried && !!input.agent.greeting && !this.clientManaged && !this.voicemail.detects;
  }

  /** A write of the set-up: deferred (see deferSetupWrites) or queued now. */
  protected setupWrite(patch: CallRecordPatch): void {
    if (this.deferSetupWrites && !isFinal(this.status)) this.recorder.defer(patch);
    else void this.recorder.flush(patch);
  }

  protected async connectMedia(): Promise<void> {
    if (isFinal(this.status) || this.endRequest !== null) return;
    const connected = await condition(() => this.gatewayTaskQueue !== null || this.endRequest !== null || isFinal(this.status), MEDIA_CONNECT_TIMEOUT);
    if (!connected) return this.fail('the audio stream never connected to a media gateway', 'gateway');
    if (this.gatewayTaskQueue === null) return;
    this.holdMediaSession();
  }

  /** The media session waits on the gateway (no heartbeats: its presence is its liveness). */
  private holdMediaSession(): void {
    const channel = this.channel as VoiceChannel;
    this.setupWrite({ ...(this.recordingPath ? { recording_path: this.recordingPath } : {}), gateway_id: this.gatewayTaskQueue });
    const generation = this.mediaGeneration;
    channel.mediaSession().then(
      (result) => this.onMediaSessionEnd(result, generation),
      (err: unknown) => {
        if (generation !== this.mediaGeneration) return; // a stream the call left for a transfer
        this.mediaClosed = true;
        const message = err instanceof GatewayLost ? err.message : `media gateway lost: ${((err as Error).cause as Error | undefined)?.message ?? (err as Error).message}`;
        if (!isFinal(this.status)) this.fail(message, 'gateway');
      },
    );
  }

  private onMediaSessionEnd(result: MediaSessionResult, generation = this.mediaGeneration): void {
    this.recordGatewayEvents(result.events);
    this.arming?.releaseWithMedia(result.releasedArm);
    // The stream the vendor closed to dial a transfer destination: not the caller hanging up.
    if (generation !== this.mediaGeneration || (this.transferring && result.reason === 'hangup')) return;
    this.mediaClosed = true;
    if (result.reason === 'hangup') this.requestEnd('user_ended');
    else if (result.reason === 'failed' && !isFinal(this.status)) {
      this.fail(result.error?.message ?? 'the media gateway gave up on the call', result.error?.context ?? 'gateway');
    }
    else if (result.reason === 'voicemail' && !isFinal(this.status)) {
      if (result.goodbye) {
        this.recorder.record('agent_spoke', { text: result.goodbye });
        this.conv.history.push({ role: 'assistant', content: result.goodbye });
      }
      this.requestEnd('voicemail');
    }
    else if (result.reason === 'drained' && !isFinal(this.status)) this.onDrained(result.goodbye);
  }

  /**
   * The call's gateway drained (a deploy, a scale-down) and its deadline passed: it said goodbye
   * and closed the stream. The call ends as the agent's decision, with an event saying why.
   */
  private onDrained(goodbye: string | undefined): void {
    if (goodbye) {
      this.recorder.record('agent_spoke', { text: goodbye });
      this.conv.history.push({ role: 'assistant', content: goodbye });
    }
    this.recorder.record('call_status', { status: 'drained', source: 'gateway' });
    this.requestEnd('agent_ended');
  }

  /**
   * When the watchdog reports the gateway lost, ask the gateway itself. One that
   * answers keeps the call (it only lost the database for a moment); one that does not is gone,
   * and everything waiting on it is released with GatewayLost (the call ends failed, once).
   */
  protected async watchGateway(): Promise<void> {
    for (;;) {
      await condition(() => this.gatewaySuspect !== null || isFinal(this.status));
      const suspect = this.gatewaySuspect;
      if (!suspect || isFinal(this.status)) return;
      const channel = this.channel instanceof VoiceChannel && suspect.gatewayTaskQueue === this.gatewayTaskQueue ? this.channel : null;
      const alive = channel ? await channel.probe() : true;
      this.gatewaySuspect = null;
      if (alive) {
        this.recorder.record('call_status', { status: 'gateway_probed', source: 'watchdog', alive: true, reason: suspect.reason });
        continue;
      }
      channel!.abandon(`${suspect.reason}; the gateway did not answer a probe within ${GATEWAY_PROBE_TIMEOUT_SECS} s`);
    }
  }

  /** Voice calls: let the goodbye play, then close the provider stream (which hangs up). */
  protected async closeMedia(): Promise<void> {
    if (this.gatewayTaskQueue === null || this.mediaClosed) return;
    const channel = this.channel as VoiceChannel;
    if (channel.isAbandoned) return;
    try {
      await channel.endMedia(this.endReason ?? 'user_ended');
      // The last utterance's gateway events come with the media session's result.
      await condition(() => this.mediaClosed, MEDIA_CLOSE_WAIT);
    } catch {
      // The gateway is gone; its socket went with it.
    }
  }
}
