/**
 * Concurrency of `npm run bench:campaign`, sampled: the fake's live legs every 250 ms (the phone
 * company's view, what max_concurrent and the lines are about) and the platform's campaign calls
 * ringing or in progress every second (a database count; costlier, so sparser). While inbound
 * calls are up, outbound + inbound legs are tracked against the lines less reserved_inbound — from
 * SETTLE_MS after they arrived, since calls already up when they came are not hung up for them.
 */
const SETTLE_MS = 4000;

export interface SamplerSources {
  liveLegs(): { outbound: number; inbound: number };
  platformLive(): Promise<number>;
  /** Runs on every fast tick (the benchmark re-scripts callees from the dial log here). */
  onTick(): void;
}

export class ConcurrencySampler {
  private fast: NodeJS.Timeout | undefined;
  private slow: NodeJS.Timeout | undefined;
  private inboundSince: number | null = null;
  private maxOutbound = 0;
  private maxPlatform = 0;
  private maxLinesDuringInbound = 0;
  private maxOutboundDuringInbound = 0;

  constructor(private readonly sources: SamplerSources) {}

  start(): void {
    this.fast = setInterval(() => {
      this.sources.onTick();
      const { outbound, inbound } = this.sources.liveLegs();
      this.maxOutbound = Math.max(this.maxOutbound, outbound);
      if (this.inboundSince !== null && Date.now() - this.inboundSince >= SETTLE_MS && inbound > 0) {
        this.maxLinesDuringInbound = Math.max(this.maxLinesDuringInbound, outbound + inbound);
        this.maxOutboundDuringInbound = Math.max(this.maxOutboundDuringInbound, outbound);
      }
    }, 250);
    this.slow = setInterval(() => {
      void this.sources.platformLive().then(
        (n) => (this.maxPlatform = Math.max(this.maxPlatform, n)),
        () => undefined,
      );
    }, 1000);
  }

  inboundStarted(): void {
    this.inboundSince = Date.now();
  }

  inboundEnded(): void {
    this.inboundSince = null;
  }

  stop(): void {
    clearInterval(this.fast);
    clearInterval(this.slow);
  }

  result() {
    return { maxOutbound: this.maxOutbound, maxPlatform: this.maxPlatform, maxLinesDuringInbound: this.maxLinesDuringInbound, maxOutboundDuringInbound: this.maxOutboundDuringInbound };
  }
}
