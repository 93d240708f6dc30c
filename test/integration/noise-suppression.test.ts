/**
 * `pipeline_settings.noise_suppression` on a real call: the gateway runs RNNoise on the caller's
 * audio before the VAD and the STT, the recording keeps what the caller sent. Real gateway, real
 * Temporal (the probe workflow drives the gateway as the call workflow does), the Twilio caller
 * (8 kHz μ-law) with noise from the sox/eSpeak fixtures (-32 dBFS RMS, 10 dB under the speech)
 * on its line while the agent talks, and the Deepgram fake.
 *
 * What it pins is what bench:noise measured (docs/media-gateway.md#noise): street noise never
 * interrupts the agent, with or without RNNoise (Silero ignores it), and with RNNoise the caller's
 * words in that noise are still a turn; babble — voices — interrupts with either setting, since
 * RNNoise keeps speech and babble is speech.
 */
import path from 'node:path';
import { channelOf, readWavFile } from '../../src/audio/wav';
import { loadSpeechWav } from '../fakes/twilio-caller';
import { deepgram, eventually, FIXTURES, h, heardSpeechMs, HELLO_WAV, newCall, speak, type TestCall } from '../support/gateway-probe-stack';
import { useGatewayProbe } from '../support/gateway-probe-stack';

useGatewayProbe();

const RATE = 8000;
// 50 characters: 3 s of the TTS fake's audio.
const REPLY = 'Your appointment is confirmed for Tuesday at ten.';
const noise = (name: string) => loadSpeechWav(path.join(FIXTURES, `noise-${name}.wav`), RATE);

function dbfs(pcm: Int16Array): number {
  let sum = 0;
  for (const v of pcm) sum += v * v;
  return 10 * Math.log10(sum / pcm.length / 32768 ** 2);
}

/** The agent talks while the caller's line carries `pcm` (the caller says nothing). */
async function agentOverNoise(call: TestCall, pcm: Int16Array) {
  const speaking = speak(call, 's1', REPLY);
  await eventually(async () => heardSpeechMs(call.caller) >= 200, 10_000, 'agent audio');
  void call.caller.say(pcm);
  return speaking;
}

describe('street noise under the agent', () => {
  it.each(['off', 'rnnoise'] as const)('noise_suppression %s: the agent is never interrupted', async (mode) => {
    const call = await newCall({ noise_suppression: mode, min_words: 1 });
    const outcome = await agentOverNoise(call, noise('street').subarray(0, 3 * RATE));
    expect(outcome).toMatchObject({ interrupted: false });
    expect(call.caller.clears).toHaveLength(0);
  });

  it('rnnoise: the caller speaking in the noise is still a turn, and the recording has the noise they sent', async () => {
    const call = await newCall({ noise_suppression: 'rnnoise', min_words: 1 });
    deepgram.script(['I would like to book an appointment for tomorrow.']);
    const street = noise('street');
    const hello = loadSpeechWav(HELLO_WAV, RATE).subarray(RATE / 2); // its 0.5 s lead-in left out
    // 1 s of noise alone, then the caller speaks over it.
    const pcm = new Int16Array(RATE + hello.length).map((_, i) => {
      const v = street[i % street.length]! + (i >= RATE ? hello[i - RATE]! : 0);
      return Math.max(-32768, Math.min(32767, v));
    });
    await call.caller.say(pcm);
    const state = await eventually(async () => {
      const s = await call.state();
      return s.utterances.length > 0 && s;
    }, 15_000, 'utterance');
    expect(state.utterances[0]).toMatchObject({ text: 'I would like to book an appointment for tomorrow.' });

    await call.caller.hangup();
    const file = path.join(h.config.dataDir, 'recordings', `${call.callId}.wav`);
    const caller = await eventually(async () => {
      try {
        const wav = readWavFile(file);
        const left = channelOf(wav, 0);
        return left.length >= pcm.length && left;
      } catch {
        return undefined;
      }
    }, 10_000, 'final recording');
    // Somewhere a second of the caller's channel is the raw noise (-32 dBFS), not RNNoise's
    // output (below -55 dBFS): the recording is what the caller sent.
    const windows = [];
    for (let i = 0; i + RATE <= caller.length; i += RATE / 10) windows.push(dbfs(caller.subarray(i, i + RATE)));
    expect(windows.some((db) => db > -33.5 && db < -30.5)).toBe(true);
  });
});

describe('babble under the agent', () => {
  it.each(['off', 'rnnoise'] as const)('noise_suppression %s: voices interrupt the agent (RNNoise keeps speech)', async (mode) => {
    const call = await newCall({ noise_suppression: mode, min_words: 1 });
    const outcome = await agentOverNoise(call, noise('babble').subarray(0, 2 * RATE));
    expect(outcome).toMatchObject({ interrupted: true });
    expect(call.caller.clears.length).toBeGreaterThanOrEqual(1);
  });
});
