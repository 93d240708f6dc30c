/**
 * How a phone conversation feels (the turn policy on a real call): an interruption word stops the
 * agent at its first interim transcript, an agent's own backchannel phrases of any length do not;
 * a caller dictating a number with a 700 ms pause in it is one utterance, while a plain sentence
 * still ends at vad_stop_secs. Real gateway, real
 * Temporal (the probe workflow drives the gateway as the call workflow does), the Twilio caller
 * and the Deepgram fake (which finalizes each stretch of speech with the next scripted text).
 */
import path from 'node:path';
import { FRAME_MS, loadSpeechWav, nowMs } from '../fakes/twilio-caller';
import { deepgram, eventually, FIXTURES, heardSpeechMs, HELLO_WAV, newCall, speak, STOP_ONSET_MS, STOP_WAV, useGatewayProbe } from '../support/gateway-probe-stack';

/** One stretch of speech (320–820 ms), no pause inside it. */
const QUESTION_WAV = path.join(FIXTURES, 'hello-question.wav');

useGatewayProbe();

/** The clip's speech: its first and last 20 ms frames above -40 dBFS (ms). */
function speechSpan(pcm: Int16Array, rate: number): { startMs: number; endMs: number } {
  const frame = (rate * FRAME_MS) / 1000;
  const loud: number[] = [];
  for (let i = 0; i + frame <= pcm.length; i += frame) {
    let sum = 0;
    for (let j = i; j < i + frame; j++) sum += pcm[j]! * pcm[j]!;
    if (Math.sqrt(sum / frame) > 300) loud.push((i / rate) * 1000);
  }
  return { startMs: loud[0]!, endMs: loud.at(-1)! + FRAME_MS };
}

const RATE = 8000;
const PAUSE_MS = 700;

describe('end of turn', () => {
  const clip = loadSpeechWav(QUESTION_WAV, RATE);
  const span = speechSpan(clip, RATE);
  /** Speech, then silence up to the clip's end: the caller stops talking at span.endMs. */
  const withTail = (tailMs: number) => {
    const pcm = new Int16Array(Math.round(((span.endMs + tailMs) * RATE) / 1000));
    pcm.set(clip.subarray(0, Math.min(clip.length, Math.round((span.endMs * RATE) / 1000))));
    return pcm;
  };

  async function utteranceAfter(call: Awaited<ReturnType<typeof newCall>>, count: number) {
    const state = await eventually(async () => {
      const s = await call.state();
      return s.utterances.length >= count && s;
    }, 15_000, 'utterance');
    return { state, atMs: nowMs() };
  }

  it('a number dictated with a 700 ms pause is one utterance; a plain sentence ends at vad_stop_secs', async () => {
    const call = await newCall({ min_words: 3, vad_stop_secs: 0.2, dictation_wait_secs: 1.2 });

    // A plain sentence: the turn ends once the VAD has heard 0.2 s of silence (plus the STT's final).
    deepgram.script(['I would like to book a table.']);
    const saying = call.caller.say(withTail(1500));
    const first = await utteranceAfter(call, 1);
    const plainEndMs = call.caller.sentAtOffset(await saying, span.endMs);
    const plainDelayMs = first.atMs - plainEndMs;
    expect(first.state.utterances[0]).toMatchObject({ text: 'I would like to book a table.' });

    // "My number is nine eight seven six five … four three two one zero": 700 ms of silence in between.
    deepgram.script(['My number is nine eight seven six five.', 'Four three two one zero.']);
    const pause = new Int16Array(Math.round(((PAUSE_MS - span.startMs) * RATE) / 1000)); // the clip leads with span.startMs of silence
    const firstHalf = withTail(0);
    const dictation = new Int16Array(firstHalf.length + pause.length + clip.length);
    dictation.set(firstHalf, 0);
    dictation.set(clip, firstHalf.length + pause.length);
    const dictating = call.caller.say(dictation);
    const second = await utteranceAfter(call, 2);
    const secondHalfMs = ((firstHalf.length + pause.length) / RATE) * 1000;
    const dictationEndMs = call.caller.sentAtOffset(await dictating, secondHalfMs + span.endMs);
    await new Promise((r) => setTimeout(r, 1500)); // nothing more comes: the number was one turn
    const { utterances } = await call.state();
    expect(utterances.map((u) => u.text)).toEqual(['I would like to book a table.', 'My number is nine eight seven six five. Four three two one zero.']);
    // Ended mid-number (digits last): it waited dictation_wait_secs, about a second longer than the plain sentence.
    const dictationDelayMs = second.atMs - dictationEndMs;
    expect(dictationDelayMs).toBeGreaterThanOrEqual(1100);
    expect(dictationDelayMs - plainDelayMs).toBeGreaterThanOrEqual(700);
    expect(plainDelayMs).toBeLessThan(1000);
  });
});

describe('interruption words and backchannels', () => {
  const reply = 'Your appointment is confirmed for Tuesday at ten. We will send you a reminder the day before. Please bring your insurance card.';

  it('"Stop, stop please." over the agent clears the line at its first word, not at min_words', async () => {
    const call = await newCall({ min_words: 3 });
    deepgram.script(['Stop, stop please.']);
    const speaking = speak(call, 's1', reply);
    await eventually(async () => heardSpeechMs(call.caller) >= 500, 10_000, 'agent audio');
    const said = call.caller.say(STOP_WAV);
    const outcome = await speaking;
    expect(outcome.interrupted).toBe(true);
    expect(call.caller.clears).toHaveLength(1);
    // The fake streams one word per 500 ms of speech: the third word would come 1.5 s in.
    const onsetSentMs = call.caller.sentAtOffset(await said, STOP_ONSET_MS);
    expect(call.caller.clears[0]!.atMs - onsetSentMs).toBeLessThan(1200);
  });

  it("an agent's own backchannel phrases never interrupt, however many words: the agent pauses while the caller speaks, then resumes where it stopped", async () => {
    // false_interruption_secs past the speech's length: this test is about the phrases, and the
    // fake's first interim comes ~0.4 s after the pause, later on a loaded machine — past the
    // default 1 s the agent rightly resumes for want of words (`no_words`) while the caller talks.
    const call = await newCall({ min_words: 3, false_interruption_secs: 3, backchannel_phrases: { mode: 'add', phrases: ['haan ji', 'theek hai'] } });
    deepgram.script(['Haan ji, theek hai.']);
    const speaking = speak(call, 's1', reply);
    await eventually(async () => heardSpeechMs(call.caller) >= 500, 10_000, 'agent audio');
    // 2.66 s of speech without a pause (hello-appointment.wav's 1200–3860 ms), from 100 ms in.
    const said = await call.caller.say(loadSpeechWav(HELLO_WAV, 8000).subarray(8 * 1100, 8 * 4000));
    const state = await eventually(async () => {
      const s = await call.state();
      return s.utterances.length > 0 && s;
    }, 15_000, 'utterance');
    expect(state.utterances[0]).toMatchObject({ text: 'Haan ji, theek hai.', duringAgentSpeech: true });
    expect((state.utterances[0]!.events ?? []).filter((e) => e.type === 'agent_resumed').map((e) => e.data)).toEqual([{ reason: 'backchannel' }]);
    expect(await speaking).toMatchObject({ interrupted: false, heardText: reply });
    expect(call.caller.clears).toHaveLength(0);
    // The agent's audio stopped while the caller spoke (the VAD's 0.2 s onset plus the 60 ms the provider holds) and went on after.
    const onsetMs = call.caller.sentAtOffset(said, 100);
    const endMs = call.caller.sentAtOffset(said, 2760);
    const agentDuring = call.caller.speechFrames().filter((f) => f.playedAtMs > onsetMs + 400 && f.playedAtMs < endMs);
    expect(agentDuring).toEqual([]);
    expect(call.caller.speechFrames().filter((f) => f.playedAtMs > endMs).length).toBeGreaterThan(0);
  });
});
