/**
 * The VAD's share of the voice benchmark's caller-side latency (scripts/bench-voice.ts).
 */
import { decodeMulaw, encodeMulaw } from '../../src/audio/g711';
import { sharedSileroModel } from '../../src/gateway/vad/silero';
import { VadAnalyzer } from '../../src/gateway/vad/vad-analyzer';
import { FRAME_MS } from '../../test/fakes/phone-caller';
import type { SpeechClip } from './caller-audio';

/**
 * When the gateway's VAD (same model and settings) decides the caller stopped, relative to
 * "end of speech + vad_stop_secs" as the callers measure it: the clip goes in as mu-law frames
 * like the fake phone sends them (frame i at i × 20 ms), after 8 different amounts of leading
 * silence so that every alignment of the VAD's 32 ms windows with the frames occurs. The result
 * is the frame time at which the decision can be made minus (the last speech frame's time +
 * vad_stop_secs): the VAD's share of the turn latency, before any platform work.
 */
export async function vadDecisionOffsets(clip: SpeechClip, vadStopSecs: number): Promise<number[]> {
  const model = await sharedSileroModel();
  const out: number[] = [];
  for (let m = 0; m < 8; m++) {
    const leadFrames = 100 + m; // 160·m mod 256 runs through all 8 window phases
    const pcm = new Int16Array((leadFrames + clip.frames + 50) * 160);
    pcm.set(clip.pcm, leadFrames * 160);
    const audio = decodeMulaw(encodeMulaw(pcm));
    const vad = new VadAnalyzer(model.createStream(), { confidence: 0.5, start_secs: 0.2, stop_secs: vadStopSecs, min_volume: 0.4 });
    let stopped = false;
    vad.onEvent((e) => {
      if (e.type === 'speech_stopped') stopped = true;
    });
    for (let frame = 0; frame * 160 < audio.length; frame++) {
      vad.push(audio.subarray(frame * 160, frame * 160 + 160));
      await vad.idle();
      if (stopped) {
        out.push((frame - leadFrames - clip.lastSpeechFrame) * FRAME_MS - vadStopSecs * 1000);
        break;
      }
    }
  }
  return out;
}

