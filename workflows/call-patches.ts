/**
 * The call workflow's patches. Every `patched()` that comes true records a marker and upserts the
 * `TemporalChangeVersion` search attribute: two history events and a visibility write each, and a
 * call used to meet six of them — a tenth of its history. Calls started since `call-patches-1`
 * record that one patch and take every earlier one as applied; older calls replay asking for each
 * patch as they did. Workflow code.
 *
 * A new change to the call workflow still gets a `patched('…')` of its own (calls started before it
 * must replay without it); when the list grows long again, a `call-patches-2` folds it the same way.
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

export class CallPatches {
  /** This call started with `call-patches-1`: the folded patches apply, and so do its own changes. */
  readonly folded: boolean;

  constructor() {
    this.folded = patched('call-patches-1');
  }

  /** `patched(id)`, without a marker of its own on calls that folded it. */
  has(id: string): boolean {
    if (this.folded && FOLDED.has(id)) return true;
    return patched(id);
  }
}
