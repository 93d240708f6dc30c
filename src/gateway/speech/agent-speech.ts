/**
 * One agent utterance as playback holds it: the sentences sent to TTS, its audio re-framed for
 * the stream, how much of it went out, and its result (what the caller heard) once it finished or
 * was cut off. Playback (playback.ts) owns the fields marked internal.
 */
import { bytesForMs, MULAW_8K, msForBytes, silenceByte, type AudioFormat } from '../../audio/format';
import { FRAME_MS, FrameSplitter } from '../../audio/pcm';

/** The stream's audio format, its outgoing frame length, and the bytes of one frame. */
export interface SpeechFraming {
  format: AudioFormat;
  frameMs: number;
  frameBytes: number;
}

export interface SpeechResult {
  heardText: string;
  interrupted: boolean;
  playedMs: number;
  /** Everything was synthesised and played (heardText is then all of the text). */
  whole: boolean;
}

export type SpeechState = 'active' | 'finished' | 'interrupted';

/** One agent utterance (`speak` text or one LLM reply): its text, its audio, and how it ended. */
export class AgentSpeech {
  readonly sentences: string[] = [];
  /** Cumulative character counts: sentence k ends at sentenceEnds[k]. */
  readonly sentenceEnds: number[] = [];
  characters = 0;
  audioBytes = 0;
  framesSent = 0;
  firstFramePerf: number | null = null;
  /** When its first sentence went to TTS, and its first TTS audio came back (the turn's trace). */
  firstTextPerf: number | null = null;
  firstAudioPerf: number | null = null;
  ttsDone = false;
  ttsCompleted = false;
  state: SpeechState = 'active';
  readonly result: Promise<SpeechResult>;

  /** @internal */ frames: Array<Buffer | undefined> = [];
  /** @internal */ head = 0;
  /** @internal */ allSent = false;
  /** @internal */ endDeadlinePerf = Infinity;
  /** @internal */ sentenceMarks = 0;
  /** @internal */ sentencesConfirmed = 0;
  /** @internal */ buffered = 0;
  /** @internal The last frames sent (at most the lead's worth): what a pause takes back from the provider. */
  recent: Buffer[] = [];
  /** @internal */ readonly splitter: FrameSplitter;
  /** @internal */ resolve!: (r: SpeechResult) => void;

  constructor(
    /** The activity's utterance id (names events). */
    readonly id: string,
    /** The TTS utterance id, unique per call (names marks). */
    readonly ttsId: string,
    readonly createdPerf: number,
    private readonly framing: SpeechFraming = { format: MULAW_8K, frameMs: FRAME_MS, frameBytes: bytesForMs(MULAW_8K, FRAME_MS) },
  ) {
    this.result = new Promise((resolve) => (this.resolve = resolve));
    this.splitter = new FrameSplitter(framing.frameBytes, silenceByte(framing.format));
  }

  get text(): string {
    return this.sentences.join(' ');
  }

  get audioMs(): number {
    return msForBytes(this.framing.format, this.audioBytes);
  }

  get endMark(): string {
    return `${this.ttsId}:end`;
  }
}
