/**
 * The media gateway end to end over real sockets: a simulated Twilio caller on the Media Streams
 * WebSocket, the Deepgram / Cartesia / OpenAI protocol fakes, a real Temporal server, and a
 * stand-in call workflow that drives the gateway's activities as the call workflow does
 * (test/support/gateway-probe-stack.ts). Speech both ways, turns, barge-in and the end of a call;
 * what goes wrong (hang-ups, bad messages, vendor outages, a dead gateway) is in
 * gateway-failures.test.ts.
 */
import path from 'node:path';
import WebSocket from 'ws';
import { rms } from '../../src/audio/pcm';
import { readWavFile, channelOf } from '../../src/audio/wav';
import { streamToken, verifyStreamToken } from '../../src/gateway/stream/stream-token';
import { loadSpeechWav, nowMs } from '../fakes/twilio-caller';
import { lineSilentAfterMs } from '../support/barge-in-silence';
import { endMediaUpdate } from '../support/gateway-probe-workflow';
import {
  cartesia,
  deepgram,
  eventsOf,
  eventually,
  gateway,
  h,
  heardSpeechMs,
  HELLO_WAV,
  MS_PER_CHAR,
  newCall,
  openai,
  speak,
  STOP_ONSET_MS,
  STOP_WAV,
  useGatewayProbe,
  voiceTurn,
} from '../support/gateway-probe-stack';

useGatewayProbe();

describe('stream tokens', () => {
  it('accept only the HMAC of this call id under this secret', () => {
    const token = streamToken('secret-one-0123456789', 'call-1');
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(verifyStreamToken('secret-one-0123456789', 'call-1', token)).toBe(true);
    expect(verifyStreamToken('secret-one-0123456789', 'call-2', token)).toBe(false);
    expect(verifyStreamToken('secret-two-0123456789', 'call-1', token)).toBe(false);
    expect(verifyStreamToken('secret-one-0123456789', 'call-1', token.slice(1))).toBe(false);
    expect(verifyStreamToken('secret-one-0123456789', 'call-1', undefined)).toBe(false);
  });
});

describe('media gateway', () => {
  it('answers /healthz with its task queue, /livez, and unknown paths with 404', async () => {
    const health = await fetch(`${gateway.url.replace('ws:', 'http:')}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok', task_queue: gateway.taskQueue });
    expect(gateway.taskQueue).toMatch(/^gateway-.+-\d+-[0-9a-f]{8}$/);
    // Liveness (the Kubernetes chart's probe): 200 while the process answers, draining or not.
    const live = await fetch(`${gateway.url.replace('ws:', 'http:')}/livez`);
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ status: 'ok' });
    const other = new WebSocket(`${gateway.url}/media/other`);
    const refused = await new Promise<number | undefined>((resolve) => {
      other.on('unexpected-response', (_req, res) => resolve(res.statusCode));
      other.on('error', () => resolve(undefined));
    });
    expect(refused).toBe(404);
  });

  it('speaks a greeting the caller hears as audio, with tts events and usage', async () => {
    const call = await newCall();
    const connected = (await call.state()).connected!;
    expect(connected).toMatchObject({ gatewayTaskQueue: gateway.taskQueue, streamSid: call.caller.streamSid });
    expect(connected.recordingPath).toBe(path.join(h.config.dataDir, 'recordings', `${call.callId}.wav`));

    const text = 'Hello! Thanks for calling the clinic. How can I help?';
    const outcome = await speak(call, 'greeting', text);
    expect(outcome).toMatchObject({ heardText: text, interrupted: false, characters: text.length - 2 }); // 3 sentences, no separators
    const expectedMs = (text.length - 2) * MS_PER_CHAR; // the fake voices each sentence's trimmed text
    // Resolved only once played: everything was heard, at real-time speed.
    expect(heardSpeechMs(call.caller)).toBeGreaterThanOrEqual(expectedMs - 200);
    const frames = call.caller.speechFrames();
    const spanMs = frames[frames.length - 1]!.playedAtMs - frames[0]!.playedAtMs;
    expect(spanMs).toBeGreaterThan(expectedMs - 300);
    expect(call.caller.protocolErrors).toEqual([]);
    // Paced: the caller never held much more than the lead of unplayed audio.
    const maxAhead = Math.max(...call.caller.played.map((f) => f.playedAtMs - f.receivedAtMs));
    expect(maxAhead).toBeLessThan(150);

    expect(eventsOf(outcome.events, 'tts_started')).toEqual([expect.objectContaining({ data: { utterance_id: 'greeting' } })]);
    const [stopped] = eventsOf(outcome.events, 'tts_stopped');
    expect(stopped!.data).toMatchObject({ utterance_id: 'greeting', interrupted: false });
    expect(Math.abs((stopped!.data.duration_ms as number) - expectedMs)).toBeLessThanOrEqual(40);
    expect(eventsOf(outcome.events, 'tts_usage')[0]!.data).toMatchObject({ characters: outcome.characters, provider: 'cartesia' });
    expect(eventsOf(outcome.events, 'ttfb_metric').map((e) => e.data.processor)).toContain('tts');
    // Progress marks per sentence and one at the end, all echoed by the caller.
    const marks = call.caller.marksEchoed.map((m) => m.name);
    expect(marks).toEqual(['greeting:0', 'greeting:1', 'greeting:end']);
  });

  it('turns caller speech into an utterance signal with the transcript and STT latency', async () => {
    const call = await newCall();
    deepgram.script(['I would like to book an appointment for tomorrow.']);
    await call.caller.say(HELLO_WAV);
    const state = await eventually(async () => {
      const s = await call.state();
      return s.utterances.length > 0 && s;
    });
    expect(state.utterances).toHaveLength(1);
    const [u] = state.utterances;
    expect(u).toMatchObject({ text: 'I would like to book an appointment for tomorrow.', duringAgentSpeech: false });
    const stt = eventsOf(u!.events ?? [], 'ttfb_metric').find((e) => e.data.processor === 'stt');
    expect(stt!.data.ms).toBeGreaterThanOrEqual(0);
    // Finalize was asked of the STT when the VAD heard the caller stop.
    expect(deepgram.received.streams.at(-1)!.controls).toContain('Finalize');
  });

  it('streams an LLM reply into TTS sentence by sentence: the first audio plays before the LLM is done', async () => {
    const call = await newCall();
    deepgram.script(['I would like to book an appointment for tomorrow.']);
    await call.caller.say(HELLO_WAV);
    await eventually(async () => (await call.state()).utterances.length > 0);

    const reply = 'Sure, I can help with that. Let me see which times are still open for tomorrow morning at the clinic.';
    const chunkDelayMs = 80;
    let requestAt = 0;
    openai.setResponder(() => {
      requestAt = nowMs();
      return { content: reply, chunk_delay_ms: chunkDelayMs };
    });
    const result = await voiceTurn(call, 'u1');
    const llmDoneNotBefore = requestAt + reply.split(' ').length * chunkDelayMs;
    const firstAudio = call.caller.speechFrames()[0]!;
    expect(firstAudio.receivedAtMs).toBeLessThan(llmDoneNotBefore - 800);
    // The first sentence went to TTS on its own, before the rest existed.
    const context = cartesia.received.contexts.get('u1')!;
    expect(context.transcripts[0]).toBe('Sure, I can help with that.');

    expect(result).toMatchObject({ content: reply, heardText: reply, interrupted: false, toolCalls: [] });
    expect(result.usage.completion_tokens).toBeGreaterThan(0);
    expect(result.ttfbMs).toEqual(expect.any(Number));
    const metrics = Object.fromEntries(eventsOf(result.events, 'ttfb_metric').map((e) => [e.data.processor, e.data]));
    expect(metrics.tts).toBeDefined();
    // End of the caller's speech → first agent audio on the socket (includes vad_stop_secs).
    expect(metrics.e2e!.ms).toBeGreaterThan(metrics.e2e!.after_vad_stop_ms as number);
    console.log(`voice turn: LLM ttfb ${result.ttfbMs} ms, TTS ttfb ${metrics.tts!.ms} ms, e2e ${metrics.e2e!.ms} ms (${metrics.e2e!.after_vad_stop_ms} ms after the VAD stop)`);
    expect(heardSpeechMs(call.caller)).toBeGreaterThanOrEqual((reply.length - 1) * MS_PER_CHAR - 200);
  });

  it('returns a voice turn with tool calls as soon as the LLM is done, while its words still play', async () => {
    const call = await newCall();
    openai.enqueue({ content: 'Let me check the calendar for you.', tool_calls: [{ name: 'check_calendar', arguments: { day: 'tomorrow' } }] });
    const result = await voiceTurn(call, 'u-tools');
    expect(result.toolCalls).toEqual([{ id: expect.any(String), name: 'check_calendar', arguments: { day: 'tomorrow' } }]);
    expect(result).toMatchObject({ heardText: 'Let me check the calendar for you.', interrupted: false });
    // ~2 s of speech: the result came back while most of it was still to be heard.
    expect(heardSpeechMs(call.caller)).toBeLessThan(1000);
    const next = await speak(call, 'u-after', 'Found it.');
    const stopped = eventsOf(next.events, 'tts_stopped').map((e) => e.data.utterance_id);
    expect(stopped).toEqual(['u-tools', 'u-after']);
  });

  it('barge-in: the line is silent within ~300 ms of the caller starting to speak, and the turn reports what was heard', async () => {
    const call = await newCall({ min_words: 1 });
    const sentences = [
      'Our clinic is open from eight in the morning until six in the evening on weekdays.',
      'On Saturdays we open at nine and close at noon.',
      'We are closed on Sundays and on public holidays.',
      'You can also book online through our website at any time of the day.',
    ];
    const reply = sentences.join(' ');
    // The LLM is still writing when the caller interrupts: it must be aborted too.
    openai.setResponder(() => ({ content: reply, chunk_delay_ms: 120 }));
    deepgram.script(['Stop, wait a second.']);
    const turn = voiceTurn(call, 'u-long');
    await eventually(async () => heardSpeechMs(call.caller) >= 1500, 10_000, 'agent audio');
    const span = await call.caller.say(STOP_WAV);
    const result = await turn;
    const speechStart = call.caller.sentAtOffset(span, STOP_ONSET_MS);
    const silentAfterMs = lineSilentAfterMs(call.caller, span, STOP_ONSET_MS);
    console.log(`barge-in: caller's line silent ${silentAfterMs.toFixed(0)} ms after speech start (clear sent ${(call.caller.clears[0]!.atMs - speechStart).toFixed(0)} ms after)`);
    // The precise budget (the VAD's onset on this audio + 50 ms, this process's collections and
    // stalls left out) is barge-in-onset.test.ts's. Here, the whole line as the caller hears it,
    // with this process's heap and a neighbouring file on the two cores: the 300 ms this targets
    // was seen at 317 in CI, so the bound keeps 100 ms of room; late by more is a real miss.
    expect(silentAfterMs).toBeLessThanOrEqual(400);
    expect(call.caller.clears).toHaveLength(1);

    expect(result.interrupted).toBe(true);
    expect(result.toolCalls).toEqual([]);
    expect(result.content).toBe(result.heardText);
    const heardWords = result.heardText.split(' ');
    expect(heardWords.length).toBeGreaterThan(3);
    expect(reply.split(' ').slice(0, heardWords.length)).toEqual(heardWords);
    const expectedChars = heardSpeechMs(call.caller) / MS_PER_CHAR;
    expect(Math.abs(result.heardText.length - expectedChars)).toBeLessThan(25);
    const interruption = eventsOf(result.events, 'interruption');
    expect(interruption).toEqual([expect.objectContaining({ data: { utterance_id: 'u-long', heard_text: result.heardText } })]);
    expect(eventsOf(result.events, 'tts_stopped')[0]!.data).toMatchObject({ utterance_id: 'u-long', interrupted: true });
    // The TTS context was cancelled, and the utterance that interrupted is a normal turn.
    await eventually(async () => cartesia.received.contexts.get('u-long')?.cancelled);
    const state = await eventually(async () => {
      const s = await call.state();
      return s.utterances.length > 0 && s;
    });
    expect(state.utterances[0]).toMatchObject({ text: 'Stop, wait a second.', duringAgentSpeech: false });
  });

  it('min_words: a short backchannel does not interrupt; enough words do', async () => {
    const call = await newCall({ min_words: 3 });
    deepgram.script(['Uh-huh.']);
    const text = 'Your appointment is confirmed for Tuesday at ten. We will send you a reminder the day before. Please bring your insurance card.';
    const first = speak(call, 's1', text);
    await eventually(async () => heardSpeechMs(call.caller) >= 500, 10_000, 'agent audio');
    await call.caller.say(STOP_WAV);
    const state = await eventually(async () => {
      const s = await call.state();
      return s.utterances.length > 0 && s;
    });
    expect(state.utterances[0]).toMatchObject({ text: 'Uh-huh.', duringAgentSpeech: true });
    const outcome = await first;
    expect(outcome).toMatchObject({ interrupted: false, heardText: text });
    expect(call.caller.clears).toHaveLength(0);

    // Three words from the transcript: the agent is interrupted mid-speech.
    deepgram.script(['No, wait, stop please.']);
    const second = speak(call, 's2', text);
    await eventually(async () => heardSpeechMs(call.caller) >= text.length * MS_PER_CHAR + 500, 10_000, 'agent audio');
    await call.caller.say(STOP_WAV);
    const interrupted = await second;
    expect(interrupted.interrupted).toBe(true);
    expect(call.caller.clears).toHaveLength(1);
  });

  it('ends the call after queued speech has played, with a recording of the call', async () => {
    const call = await newCall();
    deepgram.script(['I would like to book an appointment for tomorrow.']);
    const greeting = 'Hello, this is the clinic.';
    await speak(call, 'g', greeting);
    await call.caller.say(HELLO_WAV);
    await eventually(async () => (await call.state()).utterances.length > 0);
    // The agent says goodbye and ends the call (end_call): the turn returns while the words play.
    const bye = 'Goodbye and have a nice day.';
    openai.enqueue({ content: bye, tool_calls: [{ name: 'end_call', arguments: {} }] });
    const heardBefore = heardSpeechMs(call.caller);
    const turn = await voiceTurn(call, 'bye');
    expect(turn.toolCalls.map((t) => t.name)).toEqual(['end_call']);
    await call.handle.executeUpdate(endMediaUpdate, { args: [{ reason: 'agent_ended' }] });
    const closed = await call.caller.closed;
    expect(closed.by).toBe('gateway');
    // The goodbye was heard in full before the socket closed.
    expect(heardSpeechMs(call.caller) - heardBefore).toBeGreaterThanOrEqual((bye.length - 1) * MS_PER_CHAR);
    const state = await eventually(async () => {
      const s = await call.state();
      return s.session && s;
    });
    expect(state.session!.result!.reason).toBe('closed');

    const wav = readWavFile(state.connected!.recordingPath!);
    expect(wav).toMatchObject({ channels: 2, sampleRate: 8000 });
    const callMs = closed.atMs - call.caller.connectedAtMs;
    const wavMs = (wav.samples.length / 2 / 8000) * 1000;
    expect(Math.abs(wavMs - callMs)).toBeLessThan(250);
    // Caller on the left where they spoke, agent on the right where it spoke; both aligned.
    const caller = channelOf(wav, 0);
    const agent = channelOf(wav, 1);
    const loud = (pcm: Int16Array) => {
      const out: number[] = [];
      for (let i = 0; i + 160 <= pcm.length; i += 160) if (rms(pcm, i, i + 160) > 300) out.push(i / 8);
      return out;
    };
    const callerLoud = loud(caller);
    const agentLoud = loud(agent);
    const greetingMs = greeting.length * MS_PER_CHAR;
    expect(agentLoud.length * 20).toBeGreaterThan(greetingMs + (bye.length - 1) * MS_PER_CHAR - 100);
    expect(callerLoud.length * 20).toBeGreaterThan(2500);
    // The caller spoke after the greeting had finished.
    expect(callerLoud[0]!).toBeGreaterThan(agentLoud[0]! + greetingMs - 200);
    const fixtureSpeech = loadSpeechWav(HELLO_WAV);
    expect(callerLoud.length * 20).toBeLessThanOrEqual((fixtureSpeech.length / 8) + 100);
  });

});
