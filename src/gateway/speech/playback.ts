/**
 * A call's outgoing agent audio: TTS audio (in the stream's format) re-framed into frames of the
 * stream's frame length (20 ms unless the vendor needs longer) and sent in real time, so the
 * provider holds only ~LEAD_MS of it and a `clear` on barge-in silences the line at once.
 *
 * Each agent utterance (`speak` text or one LLM reply) is an AgentSpeech; they play in order.
 * The pacing model is one number per call, `lineFreePerf`: the moment the provider's buffer
 * runs empty (the end of the last frame sent). A frame is sent while the buffer would then hold
 * at most the lead (LEAD_MS, or two frames when frames are longer), and it plays in the slot
 * [max(now, lineFreePerf), +frameMs) — an underrun
 * simply restarts the timeline. After the last frame of an utterance a mark `<ttsId>:end` goes out; its
 * echo means the caller heard it all. Marks `<ttsId>:<k>` after the estimated end of sentence k
 * report progress (Twilio echoes marks once the audio before them has played). While `hold()`
 * is true (the VAD suspects the caller is starting to speak) nothing new is sent; `takeBack()`
 * (a pause decided) also clears what the provider still holds and queues it again, so a vendor
 * with a deep buffer (Exotel's 200 ms chunks) goes quiet at once and resumes where it stopped.
 *
 * What the caller heard (`heardText`) on barge-in: the frames whose slot had started when the
 * `clear` went out, mapped to text by characters — TTS audio length is close to proportional to
 * the characters spoken — with whole sentences before that point and the same proportion of the
 * words of the sentence it fell in. The ms-per-character rate is the utterance's own once its
 * TTS is complete, else the call's running estimate from earlier utterances.
 */
import { countCharacters } from '../../providers/speech-socket';
import { bytesForMs, MULAW_8K, type AudioFormat } from '../../audio/format';
import { FRAME_MS } from '../../audio/pcm';
import { AgentSpeech, type SpeechFraming, type SpeechResult, type SpeechState } from './agent-speech';
import { sharedPacer, type Pacer, type Paced } from './pacer';

/**
 * Audio the provider holds ahead of what is playing: enough to ride out a late timer tick. Not
 * more: while the VAD is deciding whether the caller started talking, nothing new is sent and the
 * line goes silent after this much (a 100 ms buffer hid more ramp-up stalls, but left the agent
 * talking over the caller 40 ms longer).
 */
export const LEAD_MS = 60;
/** A pause takes back the frame playing only when more than this is left of it (Exotel's 200 ms chunks). */
export const TAKE_BACK_MIN_MS = 40;
/** Without the end mark's echo, an utterance counts as played this long after its last frame. */
export const END_MARK_GRACE_MS = 1500;
/** A typical speaking rate (≈15 characters/s) until a call has measured its voice. */
export const DEFAULT_MS_PER_CHAR = 65;

/** The stream's audio format and outgoing frame length. */
export interface PlaybackFraming {
  /** Default μ-law 8 kHz. */
  format?: AudioFormat;
  /** Default 20 ms. */
  frameMs?: number;
}

export interface PlaybackOutput {
  media(frame: Buffer): void;
  mark(name: string): void;
  clear(): void;
  /** A frame that was just sent; it plays from `slotPerf` (performance.now() time). */
  sent(frame: Buffer, slotPerf: number): void;
}

export interface PlaybackListener {
  /** The first frame of an utterance went out. */
  started(speech: AgentSpeech, atPerf: number): void;
  /** An utterance finished playing or was cut off; called once per utterance. */
  finished(speech: AgentSpeech, result: SpeechResult): void;
}

export class Playback implements Paced {
  private readonly speeches: AgentSpeech[] = [];
  private lineFreePerf = 0;
  private closed = false;
  /** See only(). */
  private onlyId: string | null = null;
  private idleWaiters: Array<() => void> = [];
  /** Running estimate of the voice's ms per character (exponential average over utterances). */
  msPerChar = DEFAULT_MS_PER_CHAR;
  private readonly framing: SpeechFraming;
  private readonly frameMs: number;
  private readonly leadMs: number;

  constructor(
    private readonly out: PlaybackOutput,
    private readonly listener: PlaybackListener,
    /**
     * While true no new frames are sent (the provider plays out its ~LEAD_MS buffer): the VAD
     * suspects the caller started talking over the agent. A blip shorter than the lead is
     * inaudible; a confirmed barge-in then finds the line already silent.
     */
    private readonly hold: () => boolean = () => false,
    framing: PlaybackFraming = {},
    private readonly pacer: Pacer = sharedPacer,
  ) {
    const format = framing.format ?? MULAW_8K;
    this.frameMs = framing.frameMs ?? FRAME_MS;
    this.framing = { format, frameMs: this.frameMs, frameBytes: bytesForMs(format, this.frameMs) };
    // Longer frames (a vendor's minimum chunk) need a deeper buffer to stay gapless.
    this.leadMs = Math.max(LEAD_MS, 2 * this.frameMs);
  }

  /** True while any utterance is being generated, queued or played. */
  get speaking(): boolean {
    return this.speeches.length > 0;
  }

  /** Milliseconds of agent audio sent but not yet played (at `nowPerf`). */
  bufferedMs(nowPerf = performance.now()): number {
    return Math.max(0, this.lineFreePerf - nowPerf);
  }

  /**
   * Only the utterance `id` may start from now on (an answering machine answered: nothing but the
   * voicemail message is spoken); others begin already cut off, like after close.
   */
  only(id: string): void {
    this.onlyId = id;
  }

  start(id: string, ttsId: string): AgentSpeech {
    const speech = new AgentSpeech(id, ttsId, performance.now(), this.framing);
    if (this.closed || (this.onlyId !== null && id !== this.onlyId)) {
      speech.state = 'interrupted';
      speech.resolve({ heardText: '', interrupted: true, playedMs: 0, whole: false });
      return speech;
    }
    this.speeches.push(speech);
    return speech;
  }

  /** Records a sentence sent to TTS for this utterance (for heardText and progress marks). */
  addSentence(speech: AgentSpeech, sentence: string): void {
    if (speech.state !== 'active') return;
    speech.firstTextPerf ??= performance.now();
    speech.sentences.push(sentence);
    speech.characters += countCharacters(sentence);
    speech.sentenceEnds.push(speech.characters);
  }

  /** TTS audio in the stream's format, any chunk size. */
  audio(ttsId: string, audio: Buffer): void {
    const speech = this.find(ttsId);
    if (!speech || speech.ttsDone) return;
    speech.firstAudioPerf ??= performance.now();
    speech.audioBytes += audio.length;
    for (const frame of speech.splitter.push(audio)) speech.frames.push(frame);
    this.kick();
  }

  /** The TTS utterance ended (`completed`, or `error`/`cancelled` with whatever audio came). */
  ttsFinished(ttsId: string, completed: boolean): void {
    const speech = this.find(ttsId);
    if (!speech || speech.ttsDone) return;
    speech.ttsDone = true;
    speech.ttsCompleted = completed;
    const last = speech.splitter.flush();
    if (last) speech.frames.push(last);
    if (completed && speech.characters > 0 && speech.audioBytes > 0) {
      this.msPerChar = 0.7 * this.msPerChar + 0.3 * (speech.audioMs / speech.characters);
    }
    this.kick();
  }

  onMark(name: string): void {
    const sep = name.lastIndexOf(':');
    if (sep < 0) return;
    const speech = this.find(name.slice(0, sep));
    if (!speech) return;
    const tag = name.slice(sep + 1);
    if (tag === 'end') {
      this.finish(speech, this.playedOut(speech));
      this.removeDone();
    } else {
      const k = Number(tag);
      if (Number.isInteger(k)) speech.sentencesConfirmed = Math.max(speech.sentencesConfirmed, k + 1);
    }
  }

  /**
   * Barge-in: `clear` the provider's buffer and cut off every utterance, returning them with what
   * the caller heard. The caller (SpeechOut) cancels their TTS and LLM.
   */
  interrupt(nowPerf = performance.now()): AgentSpeech[] {
    const cut = this.speeches.filter((s) => s.state === 'active');
    if (cut.length === 0) return [];
    // Even when our timeline says the buffer ran dry: audio still in flight on the network is dropped too.
    if (cut.some((s) => s.framesSent > 0)) this.out.clear();
    this.cutOff(cut, nowPerf);
    return cut;
  }

  /**
   * Pause at once: `clear` the audio the provider still holds of the utterance playing and put it
   * back at the head of its queue, to play when the hold ends. Nothing when the line already ran
   * dry (Twilio's 60 ms lead, held since the VAD's first suspicion), when two utterances share the
   * buffer, or when the end mark is out (a clear would report the utterance heard). The frames
   * taken back were already written to the recording's agent channel at their first slot, and a
   * progress mark among them may be echoed by the clear (heardText counts that sentence heard).
   */
  takeBack(nowPerf = performance.now()): boolean {
    const playing = this.speeches.filter((s) => s.state === 'active' && s.framesSent > 0);
    const s = playing[0];
    if (playing.length !== 1 || !s || s.allSent) return false;
    // Frames not yet begun, and the one playing when more than TAKE_BACK_MIN_MS of it is left
    // (a 200 ms chunk would otherwise talk on over the caller; it is heard again from its start).
    const ahead = (this.lineFreePerf - nowPerf) / this.frameMs;
    const whole = Math.floor(ahead);
    const partial = (ahead - whole) * this.frameMs > TAKE_BACK_MIN_MS ? 1 : 0;
    const unplayed = Math.min(s.recent.length, whole + partial);
    if (unplayed <= 0) return false;
    this.out.clear();
    const back = s.recent.splice(s.recent.length - unplayed, unplayed);
    s.frames = [...back, ...s.frames.slice(s.head)];
    s.head = 0;
    s.framesSent -= unplayed;
    this.lineFreePerf = nowPerf;
    return true;
  }

  /** Cuts off one utterance (its activity was cancelled); later ones play on. */
  stop(speech: AgentSpeech, nowPerf = performance.now()): void {
    if (speech.state !== 'active') return;
    const others = this.speeches.filter((s) => s !== speech && s.state === 'active' && s.framesSent > 0);
    // Only clear when nothing else is audible: a clear drops every utterance's buffered audio.
    if (speech.framesSent > 0 && others.length === 0 && this.lineFreePerf > nowPerf) this.out.clear();
    this.cutOff([speech], nowPerf);
  }

  /** The stream is gone: every utterance ends with what had played. */
  close(nowPerf = performance.now()): void {
    if (this.closed) return;
    this.closed = true;
    this.cutOff(this.speeches.filter((s) => s.state === 'active'), nowPerf);
    this.pacer.remove(this);
    for (const w of this.idleWaiters.splice(0)) w();
  }

  /** Resolves true once nothing is left to play, false after `timeoutMs`. */
  idle(timeoutMs: number): Promise<boolean> {
    if (!this.speaking) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = () => {
        clearTimeout(timer);
        resolve(!this.speaking);
      };
      const timer = setTimeout(() => {
        this.idleWaiters = this.idleWaiters.filter((w) => w !== waiter);
        resolve(false);
      }, timeoutMs);
      this.idleWaiters.push(waiter);
    });
  }

  pace(nowPerf: number): boolean {
    if (this.closed) return false;
    const holding = this.hold();
    for (const s of this.speeches) {
      if (s.state !== 'active') continue;
      if (s.allSent) {
        // Played out but the end mark was never echoed (a provider that drops marks).
        if (nowPerf >= s.endDeadlinePerf) this.finish(s, this.playedOut(s));
        continue;
      }
      if (holding) break;
      this.sendFrames(s, nowPerf);
      if (s.head < s.frames.length || !s.ttsDone) break; // lead full, or waiting for TTS audio
      s.allSent = true;
      if (s.framesSent === 0) {
        // Nothing to play: no text, or TTS produced no audio (the caller heard nothing).
        this.finish(s, { heardText: '', interrupted: false, playedMs: 0, whole: s.ttsCompleted && s.characters === 0 });
        continue;
      }
      this.out.mark(s.endMark);
      s.endDeadlinePerf = this.lineFreePerf + END_MARK_GRACE_MS;
    }
    this.removeDone();
    return this.speeches.length > 0;
  }

  private sendFrames(s: AgentSpeech, nowPerf: number): void {
    // Send while the provider would then hold at most the lead of unplayed audio.
    while (s.head < s.frames.length && Math.max(this.lineFreePerf, nowPerf) + this.frameMs - nowPerf <= this.leadMs) {
      const frame = s.frames[s.head]!;
      s.frames[s.head++] = undefined;
      const slot = Math.max(nowPerf, this.lineFreePerf);
      this.lineFreePerf = slot + this.frameMs;
      this.out.media(frame);
      this.out.sent(frame, slot);
      s.recent.push(frame);
      if (s.recent.length * this.frameMs > this.leadMs + this.frameMs) s.recent.shift();
      if (s.framesSent++ === 0) {
        s.firstFramePerf = nowPerf;
        this.listener.started(s, nowPerf);
      }
      this.markSentences(s);
    }
    if (s.head > 256 && s.head * 2 > s.frames.length) {
      s.frames = s.frames.slice(s.head);
      s.head = 0;
    }
  }

  /** A progress mark once the audio sent passes the estimated end of a sentence (not the last). */
  private markSentences(s: AgentSpeech): void {
    const rate = this.rateOf(s);
    const sentMs = s.framesSent * this.frameMs;
    while (s.sentenceMarks < s.sentences.length - 1 && s.sentenceEnds[s.sentenceMarks]! * rate <= sentMs) {
      this.out.mark(`${s.ttsId}:${s.sentenceMarks}`);
      s.sentenceMarks++;
    }
  }

  private cutOff(speeches: AgentSpeech[], nowPerf: number): void {
    // Frames whose slot has not begun are still in the provider's buffer: unheard.
    let buffered = Math.max(0, Math.floor((this.lineFreePerf - nowPerf) / this.frameMs));
    for (let i = this.speeches.length - 1; i >= 0; i--) {
      const s = this.speeches[i]!;
      s.buffered = Math.min(buffered, s.framesSent);
      buffered -= s.buffered;
    }
    if (speeches.length === this.speeches.filter((s) => s.state === 'active').length) this.lineFreePerf = Math.min(this.lineFreePerf, nowPerf);
    for (const s of speeches) {
      const playedMs = (s.framesSent - s.buffered) * this.frameMs;
      s.frames = [];
      s.head = 0;
      s.splitter.reset();
      this.finish(s, { heardText: this.heardText(s, playedMs), interrupted: true, playedMs, whole: false }, 'interrupted');
    }
    this.removeDone();
  }

  /** Whole sentences before the played position, then that share of the current one's words. */
  heardText(s: AgentSpeech, playedMs: number): string {
    if (playedMs <= 0 || s.characters === 0) return '';
    const position = playedMs / this.rateOf(s);
    const heard: string[] = [];
    let start = 0;
    for (let k = 0; k < s.sentences.length; k++) {
      const end = s.sentenceEnds[k]!;
      const sentence = s.sentences[k]!;
      if (end <= position || k < s.sentencesConfirmed) {
        heard.push(sentence);
      } else {
        const words = sentence.split(/\s+/).filter(Boolean);
        const share = Math.floor(((position - start) / (end - start)) * words.length);
        if (share > 0) heard.push(words.slice(0, share).join(' '));
        break;
      }
      start = end;
    }
    return heard.join(' ');
  }

  /** An utterance that played to its end: all its text, unless TTS failed part-way. */
  private playedOut(s: AgentSpeech): SpeechResult {
    const playedMs = s.framesSent * this.frameMs;
    return { heardText: s.ttsCompleted ? s.text : this.heardText(s, playedMs), interrupted: false, playedMs, whole: s.ttsCompleted };
  }

  private rateOf(s: AgentSpeech): number {
    return s.ttsCompleted && s.characters > 0 && s.audioBytes > 0 ? s.audioMs / s.characters : this.msPerChar;
  }

  private finish(s: AgentSpeech, result: SpeechResult, state: SpeechState = 'finished'): void {
    if (s.state !== 'active') return;
    s.state = state;
    try {
      this.listener.finished(s, result);
    } finally {
      s.resolve(result);
    }
  }

  private removeDone(): void {
    for (let i = this.speeches.length - 1; i >= 0; i--) if (this.speeches[i]!.state !== 'active') this.speeches.splice(i, 1);
    if (this.speeches.length === 0) for (const w of this.idleWaiters.splice(0)) w();
  }

  private find(ttsId: string): AgentSpeech | undefined {
    for (const s of this.speeches) if (s.ttsId === ttsId && s.state === 'active') return s;
    return undefined;
  }

  private kick(): void {
    if (this.closed) return;
    // Send what is due right away (the first frame of a reply must not wait for a timer tick).
    const more = this.pace(performance.now());
    if (more) this.pacer.add(this);
  }
}
