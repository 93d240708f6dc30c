/** Waiting in the demo scenarios (scripts/lib/demo-*.ts): a pause, and a condition with a deadline that names what did not happen. */

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function until<T>(what: string, check: () => Promise<T | undefined | null | false> | T | undefined | null | false, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`demo: ${what} did not happen within ${timeoutMs / 1000} s`);
    await sleep(50);
  }
}
