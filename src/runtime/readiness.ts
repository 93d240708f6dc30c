/**
 * Which parts of this process accept work. `npm start` runs the API, the call worker and the media
 * gateway in one process, and starts the API first; its /healthz must not say ready while the
 * worker is still bundling workflow code or the gateway is not yet listening, or a provider
 * connecting a stream in that window would be refused.
 */
/** `draining`: a gateway serving only the calls it holds (the API itself still serves). */
export type PartState = 'ok' | 'starting' | 'down' | 'draining';

export class Readiness {
  private readonly parts = new Map<string, (() => boolean | PartState) | null>();

  /** A part this process will run; it is `starting` until `started` is called. */
  expect(name: string): void {
    if (!this.parts.has(name)) this.parts.set(name, null);
  }

  /** The part accepts work as long as `running` says so (true: `ok`, false: `down`). */
  started(name: string, running: () => boolean | PartState): void {
    this.parts.set(name, running);
  }

  states(): Record<string, PartState> {
    const states: Record<string, PartState> = {};
    for (const [name, running] of this.parts) {
      const state = running === null ? 'starting' : running();
      states[name] = state === true ? 'ok' : state === false ? 'down' : state;
    }
    return states;
  }
}
