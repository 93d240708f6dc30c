/**
 * Which parts of this process accept work. `npm start` runs the API, the call worker and the media
 * gateway in one process, and starts the API first; its /healthz must not say ready while the
 * worker is still bundling workflow code or the gateway is not yet listening, or a provider
 * connecting a stream in that window would be refused.
 */
export type PartState = 'ok' | 'starting' | 'down';

export class Readiness {
  private readonly parts = new Map<string, (() => boolean) | null>();

  /** A part this process will run; it is `starting` until `started` is called. */
  expect(name: string): void {
    if (!this.parts.has(name)) this.parts.set(name, null);
  }

  /** The part accepts work as long as `running` says so. */
  started(name: string, running: () => boolean): void {
    this.parts.set(name, running);
  }

  states(): Record<string, PartState> {
    const states: Record<string, PartState> = {};
    for (const [name, running] of this.parts) states[name] = running === null ? 'starting' : running() ? 'ok' : 'down';
    return states;
  }
}
