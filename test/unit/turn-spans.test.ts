/**
 * The gateway's turn spans (src/gateway/metrics/turn-spans.ts) with tracing on, exported to
 * memory: a turn with its stage spans under the call's latest activity, the LLM request with its
 * usage, a barge-in; nothing at all for a call whose activities carried no trace.
 */
import { context, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { TurnSpans } from '../../src/gateway/metrics/turn-spans';
import { AgentSpeech } from '../../src/gateway/speech/agent-speech';
import * as tracing from '../../src/observability/tracing/tracing';

// Tracing counts as on (only whether activeTracing() returns something is asked).
jest.mock('../../src/observability/tracing/tracing', () => ({ ...jest.requireActual('../../src/observability/tracing/tracing'), activeTracing: () => ({}) }));

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const vendors = { stt: { provider: 'deepgram', model: 'nova-3' }, tts: { provider: 'cartesia', model: 'sonic-2', voice: 'v1' } };

beforeAll(() => {
  provider.register();
});
afterAll(() => {
  trace.disable();
  context.disable();
});
beforeEach(() => exporter.reset());

function speechOf(createdPerf: number): AgentSpeech {
  const speech = new AgentSpeech('u1', 't1', createdPerf);
  speech.firstTextPerf = createdPerf + 5;
  speech.firstAudioPerf = createdPerf + 25;
  speech.characters = 12;
  return speech;
}

it('makes a turn span with its stages under the activity that carried the call trace', () => {
  const spans = new TurnSpans('call-1', vendors);
  const activity = tracing.tracer().startSpan('RunActivity:armedTurn');
  spans.adopt(trace.setSpan(context.active(), activity));
  const now = performance.now();
  spans.utterance({ text: 'book me a table', duringAgentSpeech: false, speechEndPerf: now - 500, vadStopPerf: now - 100, sttTtfbMs: 80 });
  spans.turnStarted();
  const llm = spans.llm('openai', 'gpt-4o-mini');
  llm.firstToken();
  llm.end({ promptTokens: 20, completionTokens: 7 });
  spans.agentSpeechStarted(speechOf(performance.now()), performance.now() + 40);
  activity.end();

  const finished = exporter.getFinishedSpans();
  const byName = (name: string) => finished.find((s) => s.name === name)!;
  const turn = byName('turn');
  expect(turn.parentSpanId).toBe(activity.spanContext().spanId);
  expect(turn.attributes).toMatchObject({ 'call.id': 'call-1', 'turn.words': 4, 'turn.spoken': true, 'tts.characters': 12 });
  expect(turn.events.map((e) => e.name)).toEqual(['first_frame_out']);
  for (const stage of ['vad.end', 'stt.final', 'workflow.handoff', 'llm', 'tts.first_audio']) expect(byName(stage).parentSpanId).toBe(turn.spanContext().spanId);
  expect(byName('stt.final').attributes).toEqual({ 'stt.provider': 'deepgram', 'stt.model': 'nova-3' });
  expect(byName('llm').attributes).toMatchObject({ 'gen_ai.system': 'openai', 'gen_ai.usage.input_tokens': 20, 'gen_ai.usage.output_tokens': 7 });
  expect(byName('llm').events.map((e) => e.name)).toEqual(['llm.first_token']);
  expect(byName('tts.first_audio').attributes).toEqual({ 'tts.provider': 'cartesia', 'tts.model': 'sonic-2', 'tts.voice': 'v1' });
  // VAD end: from the end of speech to the stop decision, 400 ms.
  const ms = (s: { duration: [number, number] }) => s.duration[0] * 1000 + s.duration[1] / 1e6;
  expect(ms(byName('vad.end'))).toBeCloseTo(400, 0);
  expect(ms(byName('stt.final'))).toBeCloseTo(80, 0);
});

it('records a barge-in that cleared audible speech, and ends an open turn when the call closes', () => {
  const spans = new TurnSpans('call-2', vendors);
  const activity = tracing.tracer().startSpan('RunActivity:voiceTurn');
  spans.adopt(trace.setSpan(context.active(), activity));
  spans.utterance({ text: 'hello', duringAgentSpeech: false, speechEndPerf: null, vadStopPerf: null, sttTtfbMs: null });
  spans.callerSpeechStarted(performance.now() - 50);
  const playing = speechOf(performance.now());
  playing.framesSent = 3;
  spans.bargedIn([playing]);
  spans.bargedIn([speechOf(performance.now())]); // nothing audible was cut: no span
  spans.close();
  const finished = exporter.getFinishedSpans();
  expect(finished.map((s) => s.name).sort()).toEqual(['barge_in', 'turn']);
  expect(finished.find((s) => s.name === 'barge_in')!.attributes).toEqual({ 'call.id': 'call-2', 'barge_in.cut_utterances': 1 });
  expect(finished.find((s) => s.name === 'turn')!.attributes).toMatchObject({ 'turn.spoken': false });
});

it('makes nothing for a call whose activities carried no trace', () => {
  const spans = new TurnSpans('call-3', vendors);
  spans.adopt(context.active()); // no span in it
  spans.utterance({ text: 'hi', duringAgentSpeech: false, speechEndPerf: 1, vadStopPerf: 2, sttTtfbMs: 3 });
  spans.turnStarted();
  spans.llm('openai', 'm').end({});
  spans.agentSpeechStarted(speechOf(performance.now()), performance.now());
  spans.close();
  expect(exporter.getFinishedSpans()).toEqual([]);
});
