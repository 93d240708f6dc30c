/**
 * The call status machine. The spec lists the statuses; this table is the design:
 *
 *   ringing     → in_progress  answered / media stream connected / client-managed start
 *   ringing     → no_answer    no-answer, busy, canceled, ring timeout, ended before answer
 *   ringing     → failed       provider or pipeline failure
 *   in_progress → completed    hang-up, end_call, idle timeout, POST /api/calls/end
 *   in_progress → failed       provider or pipeline failure (end_reason `error`)
 *
 * completed, failed and no_answer are final. Any other move is ignored (and recorded as a
 * `call_status` event with `ignored: true`), never an error. Workflow-safe: pure.
 */
import type { CallStatus } from './call-definitions';

const NEXT: Record<CallStatus, readonly CallStatus[]> = {
  ringing: ['in_progress', 'no_answer', 'failed'],
  in_progress: ['completed', 'failed'],
  completed: [],
  failed: [],
  no_answer: [],
};

export function canMove(from: CallStatus, to: CallStatus): boolean {
  return NEXT[from].includes(to);
}

export function isFinal(status: CallStatus): boolean {
  return NEXT[status].length === 0;
}

export const CALL_STATUSES_FINAL = (Object.keys(NEXT) as CallStatus[]).filter(isFinal);
