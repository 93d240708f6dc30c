/** Toyspeech's side (protocol: ./toyspeech.ts): scripted transcripts, a tone as long as the text. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { synthesize } from '../../fakes/fake-tts-audio';

export interface FakeToyspeech {
  url: string;
  /** Each later utterance is transcribed as the next of these. */
  script(texts: string[]): void;
  /** What was asked to be spoken, in order. */
  spoken: string[];
  stop(): Promise<void>;
}

export async function startFakeToyspeech(apiKey: string): Promise<FakeToyspeech> {
  const queue: string[] = [];
  const spoken: string[] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    if (req.headers.authorization !== `Bearer ${apiKey}`) return void res.writeHead(401).end();
    if (req.method === 'POST' && req.url === '/transcribe') {
      const wav = body.subarray(0, 4).toString('latin1') === 'RIFF';
      return void res.writeHead(wav ? 200 : 422, { 'content-type': 'application/json' }).end(JSON.stringify(wav ? { text: queue.shift() ?? '' } : { error: 'not a WAV' }));
    }
    if (req.method === 'POST' && req.url === '/speak') {
      const { text, encoding, sample_rate: rate } = JSON.parse(body.toString('utf8')) as { text: string; encoding: string; sample_rate: number };
      spoken.push(text);
      const { audio } = synthesize(text, {}, 0, encoding === 'mulaw' ? 'mulaw' : 'pcm_s16le', rate);
      return void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(audio);
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    script: (texts) => void queue.push(...texts),
    spoken,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
