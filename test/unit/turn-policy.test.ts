import { DEFAULT_MIN_WORDS, interruptsAgent, interruptsOnSpeechStart, isBackchannel, minWordsOf, wordCount } from '../../src/shared/turn-policy';
import { PIPELINE_DEFAULTS } from '../../src/shared/catalog';

describe('turn policy', () => {
  it('has one min_words default, the one new agents get', () => {
    expect(minWordsOf(undefined)).toBe(DEFAULT_MIN_WORDS);
    expect(minWordsOf({ min_words: null })).toBe(DEFAULT_MIN_WORDS);
    expect(minWordsOf({ min_words: 1 })).toBe(1);
    expect(PIPELINE_DEFAULTS.min_words).toBe(DEFAULT_MIN_WORDS);
  });

  it.each([
    ['', 0],
    ['  ', 0],
    ['stop', 1],
    [' stop,  stop please. ', 3],
    ['haan ji\ttheek hai', 4],
  ])('counts the words of %j as %d', (text, n) => {
    expect(wordCount(text)).toBe(n);
  });

  // min_words, the caller's words over the agent so far → speech start interrupts, the words interrupt
  it.each([
    [0, '', true, true],
    [1, '', true, true],
    [1, 'stop', true, true],
    [2, 'stop', false, false],
    [2, 'stop please', false, true],
    [3, 'uh-huh', false, false],
    [3, 'stop, stop', false, false],
    [3, 'stop, stop please.', false, true],
  ])('min_words %d, "%s": speech start interrupts %s, the words interrupt %s', (minWords, text, onStart, byWords) => {
    expect(interruptsOnSpeechStart(minWords)).toBe(onStart);
    expect(interruptsAgent(text, minWords)).toBe(byWords);
  });

  // an utterance completed while the agent still spoke (duringAgentSpeech) → backchannel?
  it.each([
    [3, 'uh-huh', true, true],
    [3, 'okay sure', true, true],
    [3, 'wait a second please', true, false],
    [3, 'uh-huh', false, false],
    [1, 'uh-huh', true, false],
    [2, 'yes', true, true],
  ])('min_words %d, "%s" during agent speech %s: backchannel %s', (minWords, text, duringAgentSpeech, backchannel) => {
    expect(isBackchannel({ text, duringAgentSpeech }, minWords)).toBe(backchannel);
  });
});
