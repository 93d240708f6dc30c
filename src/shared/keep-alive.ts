/**
 * Sends `ping` whenever nothing went out for `intervalMs` (e.g. Deepgram closes a listen stream
 * after 10 s without audio and asks for a KeepAlive every 3–5 s). Call touch() on every send.
 */
export class KeepAlive {
  private lastSentAt = Date.now();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly intervalMs: number,
    private readonly ping: () => void,
  ) {}

  touch(): void {
    this.lastSentAt = Date.now();
  }

  start(): void {
    this.stop();
    this.touch();
    // Checking at half the interval keeps the longest silence on the wire below 1.5 intervals.
    const tickMs = Math.max(10, Math.floor(this.intervalMs / 2));
    this.timer = setInterval(() => {
      if (Date.now() - this.lastSentAt >= this.intervalMs) {
        this.ping();
        this.touch();
      }
    }, tickMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
