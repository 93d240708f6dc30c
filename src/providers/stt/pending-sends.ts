/**
 * What a streaming STT adapter was asked to send before its socket opened. The adapters open the
 * socket in their constructor and accept audio at once, so the gateway never waits for the
 * handshake; this holds that work until the socket (or a fallback transport) can take it.
 *
 * Audio is bounded so a vendor that never answers cannot grow memory without bound; the oldest
 * audio goes first because the newest is what the caller is saying now. Control messages
 * (finalize, close) are never dropped: losing one would leave the gateway waiting for a final.
 */
export type PendingSend<Control> = { kind: 'audio'; data: Buffer } | { kind: 'control'; control: Control };

export class PendingSends<Control> {
  private items: Array<PendingSend<Control>> = [];
  private audioBytes = 0;

  constructor(private readonly maxAudioBytes: number) {}

  pushAudio(data: Buffer): void {
    this.items.push({ kind: 'audio', data });
    this.audioBytes += data.length;
    while (this.audioBytes > this.maxAudioBytes) {
      const i = this.items.findIndex((item) => item.kind === 'audio');
      const dropped = this.items.splice(i, 1)[0] as { data: Buffer };
      this.audioBytes -= dropped.data.length;
    }
  }

  pushControl(control: Control): void {
    this.items.push({ kind: 'control', control });
  }

  clear(): void {
    this.items = [];
    this.audioBytes = 0;
  }

  /**
   * Hands everything over in the order it was asked for. Emptied first, so a handler that queues
   * again (the socket closed meanwhile) starts a fresh queue rather than re-entering this one.
   */
  drain(audio: (data: Buffer) => void, control: (control: Control) => void): void {
    const items = this.items;
    this.clear();
    for (const item of items) {
      if (item.kind === 'audio') audio(item.data);
      else control(item.control);
    }
  }
}
