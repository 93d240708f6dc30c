/**
 * Hold audio as a telephony vendor's media server plays it to a waiting leg (Twilio's conference
 * wait URL, Plivo's `waitSound`): the fakes of both record what the caller heard with this.
 */

/** 20 ms of hold audio a waiting leg heard, by its loudness. */
export interface HeardHoldFrame {
  atMs: number;
  /** Root mean square of the frame's 16-bit samples (0: silence). */
  rms: number;
}

const FRAME_MS = 20;

/**
 * Plays 8 kHz `samples` on a loop into `held` until `stop` settles, in real time by the wall clock
 * (a late timer plays the frames it owes, each stamped with its own time), as the vendor's media
 * server would, so a busy test process does not look like a silent line.
 */
export function playHoldLoop(held: HeardHoldFrame[], samples: Int16Array, stop: Promise<unknown>): Promise<void> {
  const frame = (8000 * FRAME_MS) / 1000;
  const startMs = Date.now();
  let played = 0;
  let at = 0;
  return new Promise((resolve) => {
    const timer = setInterval(() => {
      for (; startMs + played * FRAME_MS <= Date.now(); played++) {
        let sum = 0;
        for (let i = 0; i < frame; i++) {
          const v = samples[(at + i) % samples.length]!;
          sum += v * v;
        }
        at = (at + frame) % samples.length;
        held.push({ atMs: startMs + played * FRAME_MS, rms: Math.sqrt(sum / frame) });
      }
    }, FRAME_MS);
    void stop.then(() => {
      clearInterval(timer);
      resolve();
    });
  });
}
