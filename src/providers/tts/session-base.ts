/**
 * Utterance bookkeeping shared by the streaming TTS sessions: unique utterance ids, exactly one
 * `done` per utterance, errors reported as events (logged when nobody listens), and what a lost
 * connection does to the utterances in flight on a session that keeps one socket per call.
 */
import { EventEmitter } from 'node:events';
import type { Logger } from '../../shared/logger';
import { SpeechProviderError } from '../speech-socket';
import type { TtsDoneReason, TtsEvents } from './types';

export interface UtteranceState {
  id: string;
  characters: number;
  ended: boolean;
}

export abstract class TtsSessionBase<U extends UtteranceState> extends EventEmitter<TtsEvents> {
  protected readonly utterances = new Map<string, U>();
  private readonly usedIds = new Set<string>();
  /** A failure of the idle session was reported since the last successful open. */
  private failureReported = false;

  protected constructor(private readonly log: Logger) {
    super();
  }

  /** Ids must be unique within the session: events of different utterances never mix. */
  protected claimId(id: string): void {
    if (this.usedIds.has(id)) throw new Error(`TTS utterance id "${id}" was already used in this session`);
    this.usedIds.add(id);
  }

  protected finish(utt: U, reason: TtsDoneReason): void {
    if (this.utterances.get(utt.id) !== utt) return;
    this.utterances.delete(utt.id);
    utt.ended = true;
    this.emit('done', { id: utt.id, reason, characters: utt.characters });
  }

  protected emitError(err: SpeechProviderError): void {
    if (this.listenerCount('error') > 0) this.emit('error', err);
    else this.log.warn(err.message);
  }

  /** A connection opened: the next failure of the idle session is news again. */
  protected connectionOpened(): void {
    this.failureReported = false;
  }

  /**
   * Utterances in flight die with their connection; the session itself reconnects unless the
   * error is fatal. The vendor decides which utterances were in flight (and drops what it queued
   * for the lost socket) before calling this.
   */
  protected failInFlight(err: SpeechProviderError, active: U[]): void {
    for (const utt of active) {
      this.emitError(new SpeechProviderError(err.message, { ...err.details, utteranceId: utt.id }));
      this.finish(utt, 'error');
    }
    // The vendor closing an idle socket cleanly is routine (we just reconnect); other failures of
    // an idle session are reported once until a connection works again, not on every retry.
    const routine = err.details.closeCode === 1000 || err.details.closeCode === 1001;
    if (active.length === 0 && !routine && !this.failureReported) {
      this.failureReported = true;
      this.emitError(err);
    }
    if (err.details.fatal) return; // the next startUtterance tries again
    this.reconnectAfterLoss();
  }

  /**
   * Reopens the session's socket after failInFlight (with backoff). Sessions without one
   * long-lived socket have nothing to reopen.
   */
  protected reconnectAfterLoss(): void {}
}
