/**
 * Utterance bookkeeping shared by the streaming TTS sessions: unique utterance ids, exactly one
 * `done` per utterance, and errors reported as events (logged when nobody listens).
 */
import { EventEmitter } from 'node:events';
import type { Logger } from '../../shared/logger';
import type { SpeechProviderError } from '../speech-socket';
import type { TtsDoneReason, TtsEvents } from './types';

export interface UtteranceState {
  id: string;
  characters: number;
  ended: boolean;
}

export abstract class TtsSessionBase<U extends UtteranceState> extends EventEmitter<TtsEvents> {
  protected readonly utterances = new Map<string, U>();
  private readonly usedIds = new Set<string>();

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
}
