/**
 * The call workflow's patches. Every `patched()` that comes true records a marker and upserts the
 * `TemporalChangeVersion` search attribute: two history events and a visibility write each, and a
 * call used to meet six of them — a tenth of its history. Calls started since `call-patches-1`
 * record that one patch and take every earlier one as applied; older calls replay asking for each
 * patch as they did. Workflow code.
 *
 * `call-patches-2` folds `call-patches-1` and the changes made since, the same way. A new change to
 * the call workflow still gets a `patched('…')` of its own (calls started before it must replay
 * without it); when the list grows long again, a `call-patches-3` folds it.
 *
 * `call-patches-3` folds `call-patches-2` and `armed-turn-runs`; `call-patches-4` folds
 * `call-patches-3` and `setup-writes-deferred`.
 */
import { patched } from '@temporalio/workflow';

/** The patches `call-patches-1` stands for: a call that has it took each of these paths. */
const FOLDED = new Set([
  'client-managed-call-is-silent',
  'gateway-presence',
  'armed-turns',
  'persist-local',
  'spoken-reply-after-hangup',
  'provider-hangup-on-end',
  'gateway-failure-fails-call',
  'voicemail-ends-call',
  'gateway-drained-ends-call',
  'arm-during-greeting',
  'greeting-write-unawaited',
  'voicemail-end-reason',
  'post-call-analysis',
]);

/** The patches `call-patches-2` stands for: those of `call-patches-1` and the ones after it. */
const FOLDED_2 = new Set([...FOLDED, 'arm-released-with-media']);

/** The patches `call-patches-3` stands for. */
const FOLDED_3 = new Set([...FOLDED_2, 'armed-turn-runs']);

/** The patches `call-patches-4` stands for. */
const FOLDED_4 = new Set([...FOLDED_3, 'setup-writes-deferred']);

export class CallPatches {
  /** This call started with `call-patches-1` or later: the folded patches apply, and so do its own changes. */
  readonly folded: boolean;
  private readonly folded2: boolean;
  private readonly folded3: boolean;
  private readonly folded4: boolean;

  constructor() {
    // One marker per call: the newest fold; a call started before it replays asking for the older.
    this.folded4 = patched('call-patches-4');
    this.folded3 = this.folded4 || patched('call-patches-3');
    this.folded2 = this.folded3 || patched('call-patches-2');
    this.folded = this.folded2 || patched('call-patches-1');
  }

  /** `patched(id)`, without a marker of its own on calls that folded it. */
  has(id: string): boolean {
    if (this.folded4 && FOLDED_4.has(id)) return true;
    if (this.folded3 && FOLDED_3.has(id)) return true;
    if (this.folded2 && FOLDED_2.has(id)) return true;
    if (this.folded && FOLDED.has(id)) return true;
    return patched(id);
  }
}
