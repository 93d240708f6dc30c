/**
 * The benchmark's zero-latency vendor fakes (Deepgram, Cartesia, OpenAI) in a process of their
 * own, so the event loop that answers the gateway is not the one running the simulated callers.
 * Scripted by environment: every utterance is transcribed as BENCH_CALLER_TEXT; the LLM answers
 * the k-th user message with BENCH_REPLIES[k] (JSON array, cycled). Prints
 * `fakes ready {"deepgram":…,"cartesia":…,"openai":…}`; SIGTERM stops them.
 */
import { startFakeCartesia } from '../../test/fakes/cartesia-server';
import { startFakeDeepgram } from '../../test/fakes/deepgram-server';
import { startFakeOpenAI } from '../../test/fakes/openai-server';

async function main(): Promise<void> {
  const key = process.env.BENCH_VENDOR_KEY ?? 'bench-key';
  const callerText = process.env.BENCH_CALLER_TEXT ?? 'Hello.';
  const replies = JSON.parse(process.env.BENCH_REPLIES ?? '["OK."]') as string[];
  const deepgram = await startFakeDeepgram({ apiKey: key });
  const cartesia = await startFakeCartesia({ apiKey: key });
  const openai = await startFakeOpenAI();
  deepgram.script(() => callerText);
  openai.setResponder((body) => {
    const turn = (body.messages as Array<{ role: string }>).filter((m) => m.role === 'user').length - 1;
    return { content: replies[Math.max(0, turn) % replies.length]! };
  });
  const stop = () => {
    void Promise.allSettled([deepgram.stop(), cartesia.stop(), openai.stop()]).then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  process.stdout.write(`fakes ready ${JSON.stringify({ deepgram: deepgram.url, cartesia: cartesia.url, openai: openai.url })}\n`);
}

main().catch((err) => {
  process.stderr.write(`vendor fakes failed: ${(err as Error).stack}\n`);
  process.exit(1);
});
