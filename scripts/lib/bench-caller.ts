/**
 * One simulated caller of the voice benchmark (scripts/bench-voice.ts), and what it measured.
 *
 * The caller hears the greeting, then takes its turns in order. A `normal` turn speaks the clip
 * once the agent is quiet and waits for the whole reply. A `lead-in` turn speaks the clip and,
 * once ~200 ms of the (long) reply have arrived, the next turn, a `barge-in`, speaks the clip over
 * it: the agent is cut off (`clear`) and answers the barge-in, which is waited for whole. With the
 * agent's `min_words` 1 the barge-in happens at the VAD's speech start (`vad_start_secs` 0.2).
 *
 * Caller-side measures, epoch ms from the fake phone:
 * - greeting latency: stream opened → first non-silent greeting frame received;
 * - turn latency: first non-silent reply frame received − (the caller's end of speech + vad_stop_secs);
 * - barge-in latency: the caller's speech start over the agent → `clear` received.
 */
import { FRAME_MS, nowMs, type PhoneCaller, type PlayedFrame } from '../../test/fakes/phone-caller';
import type { FakeTelephony } from '../../test/fakes/telephony-fakes';
import { fakeSpeechMs } from '../../test/fakes/fake-tts-audio';
import { firstSpeechReceivedAfter, isSpeech, speechTimes, underruns, type SpeechClip } from './caller-audio';

export type TurnKind = 'normal' | 'lead-in' | 'barge-in';

export interface ScriptedTurn {
  kind: TurnKind;
  /** What the agent answers this turn (the LLM fake is scripted with the same list). */
  reply: string;
}

/** K normal turns, then `bargeIns` × (a lead-in drawing a long reply + the barge-in over it). */
export function callScript(normalReplies: string[], turns: number, bargeIns: number, longReply: string, afterBargeIn: string): ScriptedTurn[] {
  const script: ScriptedTurn[] = [];
  for (let k = 0; k < turns; k++) script.push({ kind: 'normal', reply: normalReplies[k % normalReplies.length]! });
  for (let b = 0; b < bargeIns; b++) script.push({ kind: 'lead-in', reply: longReply }, { kind: 'barge-in', reply: afterBargeIn });
  return script;
}

export const expectedFrames = (text: string) => fakeSpeechMs(text) / FRAME_MS;

/** Reply audio the caller hears before it talks over the agent. */
const HEARD_BEFORE_BARGE_IN_FRAMES = 10;

export interface Turn {
  kind: TurnKind;
  speechStartMs: number;
  speechEndMs: number;
  /** Caller side: first agent speech received − (speech end + vad_stop_secs). */
  latencyMs: number | null;
  /** Barge-in turns: the caller's speech start → `clear` received (null: no clear came). */
  bargeInMs?: number | null;
  /** Barge-in turns: the caller's speech start → the end of the last agent frame they heard (0: none after it). */
  silenceMs?: number | null;
}

/** A frame the caller heard, without its audio: what the analysis needs, cheap to pass between threads. */
export type HeardFrame = Omit<PlayedFrame, 'audio' | 'dueAtMs'>;

/** What one call measured: plain data (it crosses from the callers' thread, scripts/lib/callers.ts). */
export interface CallResult {
  index: number;
  callId?: string;
  connectedAtMs?: number;
  hungUpAtMs?: number;
  /** Turned away at admission (the vendor's busy answer): no gateway had room. */
  refused?: boolean;
  /** Busy answers this caller got (with --redial, some before it got through). */
  busyAnswers?: number;
  /** Stream opened → first non-silent greeting frame received. */
  greetingMs?: number | null;
  turns: Turn[];
  /** Every agent frame the caller heard, and the `clear`s it got. */
  played: HeardFrame[];
  clears: Array<{ atMs: number }>;
  error?: string;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Agent frames received after `afterMs`; resolves once `expected` of them played, or 1.5 s after the last arrived. */
async function heard(caller: PhoneCaller, afterMs: number, expected: number, timeoutMs: number): Promise<void> {
  const deadline = nowMs() + timeoutMs;
  for (;;) {
    const played = caller.played;
    let n = 0;
    let lastReceived = 0;
    for (let i = played.length - 1; i >= 0 && played[i]!.receivedAtMs >= afterMs; i--) {
      n++;
      lastReceived = Math.max(lastReceived, played[i]!.receivedAtMs);
    }
    const drained = caller.bufferedMs() === 0;
    if (drained && n >= expected) return;
    if (drained && n > 0 && nowMs() - lastReceived > 1500) return; // it stopped short: counted as dropped
    if (!caller.isOpen) return;
    if (nowMs() > deadline) throw new Error(`no complete agent utterance within ${timeoutMs / 1000} s (${n}/${expected} frames)`);
    await sleep(40);
  }
}

/** Waits until `frames` non-silent agent frames arrived after `afterMs`. */
async function heardSpeech(caller: PhoneCaller, afterMs: number, frames: number, timeoutMs: number): Promise<void> {
  const deadline = nowMs() + timeoutMs;
  // Counted from the newest frame back: a scan of the whole call every 20 ms, for 100 callers, was
  // garbage enough to pause this process (the callers' clock) in major collections.
  const speechSince = () => {
    let n = 0;
    for (let i = caller.played.length - 1; i >= 0 && caller.played[i]!.receivedAtMs >= afterMs; i--) if (isSpeech(caller.played[i]!)) n++;
    return n;
  };
  while (speechSince() < frames) {
    if (!caller.isOpen) throw new Error('the call ended before the agent answered');
    if (nowMs() > deadline) throw new Error(`the agent did not start answering within ${timeoutMs / 1000} s`);
    await sleep(20);
  }
}

async function clearedAfter(caller: PhoneCaller, fromMs: number, timeoutMs: number): Promise<number | null> {
  const deadline = nowMs() + timeoutMs;
  for (;;) {
    const clear = caller.clears.find((c) => c.atMs >= fromMs);
    if (clear) return clear.atMs;
    if (!caller.isOpen || nowMs() > deadline) return null;
    await sleep(10);
  }
}

/** One call to place: plain data, sent to the callers' thread. */
export interface CallSpec {
  index: number;
  webhookUrl: string;
  greeting: string;
  script: ScriptedTurn[];
  from: string;
  to: string;
  /** Times to dial again after a busy answer, waiting redialAfterMs first (a dialler honouring Retry-After). */
  redial?: number;
  redialAfterMs?: number;
}

export interface CallContext extends CallSpec {
  phone: FakeTelephony;
  clip: SpeechClip;
}

/** Runs one call; `live` (optional) gets its result object at once, to watch progress. */
export async function runCall(ctx: CallContext, live?: CallResult[]): Promise<CallResult> {
  const result: CallResult = { index: ctx.index, turns: [], played: [], clears: [] };
  live?.push(result);
  let caller: PhoneCaller | undefined;
  try {
    let fake = await ctx.phone.ringInbound({ webhookUrl: ctx.webhookUrl, from: ctx.from, to: ctx.to });
    // Every vendor's busy answer says so (Twilio <Reject reason="busy">, Plivo <Hangup reason="busy">, Exotel's detail).
    const busy = () => !fake.callId && /busy/i.test(fake.answer.body);
    result.busyAnswers = 0;
    while (busy() && result.busyAnswers < (ctx.redial ?? 0)) {
      result.busyAnswers++;
      await sleep(ctx.redialAfterMs ?? 5000);
      fake = await ctx.phone.ringInbound({ webhookUrl: ctx.webhookUrl, from: ctx.from, to: ctx.to });
    }
    if (busy()) {
      result.busyAnswers++;
      result.refused = true;
      return result;
    }
    if (!fake.caller || !fake.callId) throw new Error(`not connected: ${fake.answer.status} ${fake.answer.body.slice(0, 200)}`);
    caller = fake.caller;
    result.callId = fake.callId;
    result.connectedAtMs = caller.connectedAtMs;
    await heard(caller, 0, expectedFrames(ctx.greeting), 20_000);
    const greetingFrame = firstSpeechReceivedAfter(caller.played, caller.connectedAtMs);
    result.greetingMs = greetingFrame ? greetingFrame.receivedAtMs - caller.connectedAtMs : null;
    for (const step of ctx.script) {
      if (step.kind !== 'barge-in') await sleep(200 + Math.random() * 800);
      // Speech queued on a closed line would wait forever: a call that ended early is an error.
      if (!caller.isOpen) throw new Error(`the call ended before turn ${result.turns.length + 1} (closed by ${(await caller.closed).by})`);
      const span = await caller.say(ctx.clip.path);
      const { startMs, endMs } = speechTimes(ctx.clip, span);
      const turn: Turn = { kind: step.kind, speechStartMs: startMs, speechEndMs: endMs, latencyMs: null };
      result.turns.push(turn);
      if (step.kind === 'barge-in') {
        const clearedAt = await clearedAfter(caller, startMs, 5000);
        turn.bargeInMs = clearedAt === null ? null : clearedAt - startMs;
        // What the caller's ear got: agent speech stops playing here (the clear dropped the rest).
        const last = clearedAt === null ? undefined : caller.played.filter((f) => isSpeech(f) && f.playedAtMs >= startMs && f.playedAtMs <= clearedAt).at(-1);
        turn.silenceMs = clearedAt === null ? null : last ? last.playedAtMs + FRAME_MS - startMs : 0;
      }
      if (step.kind === 'lead-in') await heardSpeech(caller, endMs, HEARD_BEFORE_BARGE_IN_FRAMES, 15_000);
      else await heard(caller, endMs, expectedFrames(step.reply), 15_000);
    }
    await sleep(300);
    result.hungUpAtMs = nowMs();
    await caller.hangup();
  } catch (err) {
    result.error = (err as Error).message;
    result.hungUpAtMs ??= nowMs();
    if (caller?.isOpen) await caller.hangup().catch(() => undefined);
  }
  if (caller) {
    result.played = caller.played.map(({ receivedAtMs, playedAtMs, peak }) => ({ receivedAtMs, playedAtMs, peak }));
    result.clears = caller.clears.map(({ atMs }) => ({ atMs }));
  }
  return result;
}

export interface CallFrames {
  expected: number;
  received: number;
  dropped: number;
  late: number;
  maxGapMs: number;
  lateAt: Array<{ atMs: number; gapMs: number }>;
}

/**
 * Frames per agent utterance: the greeting before the first turn, turn k's reply between its end
 * of speech and the next turn's start of speech. A reply cut off by a barge-in is expected only
 * as far as it was heard (no frames count as dropped), but its gaps count as late frames.
 * Also sets each turn's caller-side latency.
 */
export function analyseCall(r: CallResult, greeting: string, script: ScriptedTurn[], vadStopSecs: number, lateGapMs: number): CallFrames {
  const played = r.played;
  const out: CallFrames = { expected: 0, received: 0, dropped: 0, late: 0, maxGapMs: 0, lateAt: [] };
  for (let u = 0; u <= r.turns.length; u++) {
    const from = u === 0 ? 0 : r.turns[u - 1]!.speechEndMs;
    const to = r.turns[u]?.speechStartMs ?? Infinity;
    const frames = played.filter((f) => f.receivedAtMs >= from && f.receivedAtMs < to);
    const cutOff = r.turns[u]?.kind === 'barge-in';
    const want = cutOff ? frames.length : expectedFrames(u === 0 ? greeting : script[u - 1]!.reply);
    out.expected += want;
    out.received += frames.length;
    out.dropped += Math.max(0, want - frames.length);
    const gaps = underruns(frames.map((f) => f.receivedAtMs), lateGapMs);
    out.late += gaps.count;
    out.lateAt.push(...gaps.late);
    out.maxGapMs = Math.max(out.maxGapMs, gaps.maxGapMs);
    if (u > 0) {
      const turn = r.turns[u - 1]!;
      const first = frames.find(isSpeech);
      turn.latencyMs = first ? first.receivedAtMs - (turn.speechEndMs + vadStopSecs * 1000) : null;
    }
  }
  return out;
}

/**
 * Whether a call following `script` ended with the transcript it should have (a cut-off reply:
 * any non-empty start of its text); null when it did, else where it first differs.
 */
export function transcriptDifference(transcript: Array<{ role: string; text: string }>, greeting: string, callerText: string, script: ScriptedTurn[]): string | null {
  const want: Array<{ role: string; text: string; prefix?: boolean }> = [{ role: 'assistant', text: greeting }];
  script.forEach((step, k) => {
    want.push({ role: 'user', text: callerText }, { role: 'assistant', text: step.reply, prefix: script[k + 1]?.kind === 'barge-in' });
  });
  for (let i = 0; i < Math.max(want.length, transcript.length); i++) {
    const w = want[i];
    const t = transcript[i];
    const same = w && t && t.role === w.role && (w.prefix ? t.text.length > 0 && w.text.startsWith(t.text) : t.text === w.text);
    if (!same) return `transcript differs at entry ${i + 1} of ${want.length}: ${t ? `${t.role} "${t.text.slice(0, 40)}"` : 'missing'}`;
  }
  return null;
}
