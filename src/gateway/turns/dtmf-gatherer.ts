/**
 * A caller's keypresses gathered into one input for the conversation, as an IVR gathers them:
 * digits collect until `#` (which ends the input and is not part of it), a pause of
 * `dtmf_timeout_secs` after the last key, or `dtmf_max_digits` keys. The input then reaches the
 * LLM as the caller's turn, `The caller pressed: 1 2 3 4` (see call-media.ts): the same path as
 * speech, so an armed turn takes it at once and a flow node's function can be chosen by it.
 *
 * A `#` alone (nothing gathered) is still an input: "press pound to continue" is a real prompt.
 */
export interface DtmfGathering {
  /** Seconds of no keypress that end the input. */
  timeoutSecs: number;
  /** Keys that end the input on their own. */
  maxDigits: number;
}

export const DTMF_DEFAULTS: DtmfGathering = { timeoutSecs: 2, maxDigits: 32 };

/** What the LLM reads for gathered keys (spaced, so "1234" is not read as a number). */
export function dtmfInputText(digits: string): string {
  return `The caller pressed: ${[...digits].join(' ')}`;
}

export class DtmfGatherer {
  private digits = '';
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly settings: DtmfGathering,
    /** The gathered keys (without the ending `#`; `#` when it was pressed alone). */
    private readonly onInput: (digits: string) => void,
  ) {}

  /** Whether keys are being gathered (an input is on its way). */
  get pending(): boolean {
    return this.digits.length > 0;
  }

  push(digit: string): void {
    if (this.closed) return;
    if (digit === '#') return this.flush(this.digits || '#');
    this.digits += digit;
    if (this.digits.length >= this.settings.maxDigits) return this.flush(this.digits);
    this.arm();
  }

  close(): void {
    this.closed = true;
    this.clearTimer();
  }

  private arm(): void {
    this.clearTimer();
    this.timer = setTimeout(() => this.flush(this.digits), this.settings.timeoutSecs * 1000);
  }

  private flush(digits: string): void {
    this.clearTimer();
    this.digits = '';
    if (digits) this.onInput(digits);
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
