import {
  DEFAULT_DICTATION_WAIT_SECS,
  DEFAULT_MIN_WORDS,
  endOfTurnWaitMs,
  interruptsAgent,
  interruptsOnSpeechStart,
  isBackchannel,
  midDictation,
  minWordsOf,
  pausesOnSpeech,
  turnPolicyOf,
  wordCount,
  words,
} from '../../src/shared/turn-policy';
import { PIPELINE_DEFAULTS } from '../../src/shared/catalog';

describe('turn policy', () => {
  it('has one min_words default, the one new agents get', () => {
    expect(minWordsOf(undefined)).toBe(DEFAULT_MIN_WORDS);
    expect(minWordsOf({ min_words: null })).toBe(DEFAULT_MIN_WORDS);
    expect(minWordsOf({ min_words: 1 })).toBe(1);
    expect(PIPELINE_DEFAULTS.min_words).toBe(DEFAULT_MIN_WORDS);
    expect(PIPELINE_DEFAULTS.dictation_wait_secs).toBe(DEFAULT_DICTATION_WAIT_SECS);
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

  it.each([
    ['Uh-huh.', ['uh', 'huh']],
    ["That's it!", ['thats', 'it']],
    ['हाँ जी, ठीक है।', ['हाँ', 'जी', 'ठीक', 'है']],
    ['  HAAN   haan ', ['haan', 'haan']],
  ])('normalises %j', (text, ws) => {
    expect(words(text)).toEqual(ws);
  });

  // min_words, the caller's words over the agent so far → speech start interrupts, the words interrupt
  it.each([
    [0, '', true, true],
    [1, '', true, true],
    [1, 'stop', true, true],
    [2, 'stop', false, true],
    [2, 'stop please', false, true],
    [3, 'uh-huh', false, false],
    [3, 'Stop,', false, true],
    [3, 'stop, stop', false, true],
    [3, 'stop, stop please.', false, true],
    [3, 'please tell me', false, true],
    [3, 'please tell', false, false],
  ])('min_words %d, "%s": speech start interrupts %s, the words interrupt %s', (minWords, text, onStart, byWords) => {
    expect(interruptsOnSpeechStart(minWords)).toBe(onStart);
    expect(interruptsAgent(text, minWords)).toBe(byWords);
  });

  // language, the caller's words over the agent (min_words 3) → interrupt
  it.each([
    ['en', 'Wait.', true],
    ['en', 'no', true],
    ['en', 'hold on', true],
    ['en', 'Mm-hmm.', false],
    ['en', 'yeah yeah, okay, right, sure', false],
    ['en', 'okay so what about', true],
    ['en', 'okay so what', false],
    ['en', 'I know', false],
    ['hi', 'ruko', true],
    ['hi-IN', 'Ruko!', true],
    ['hi', 'bas bas', true],
    ['hi', 'ek minute', true],
    ['hi', 'रुकिए', true],
    ['hi', 'एक मिनट', true],
    ['hi', 'haan ji, theek hai', false],
    ['hi', 'haan haan haan', false],
    ['hi', 'accha accha, theek hai ji', false],
    ['hi', 'हाँ जी, ठीक है।', false],
    ['hi', 'हम्म', false],
    ['hi', 'haan ji, mera bill kitna hai', true],
    ['hi', 'haan ruko', true],
    ['ta', 'சரி சரி', false],
    ['ta', 'aama sari', false],
    ['ta', 'வேண்டாம்', true],
    ['ta', 'nillunga', true],
    ['te', 'సరే అండి', false],
    ['te', 'aagandi', true],
    ['te', 'ఆగండి', true],
    ['bn', 'হ্যাঁ, ঠিক আছে', false],
    ['bn', 'thamun', true],
    ['bn', 'থামো', true],
    ['mr', 'हो, बरोबर', false],
    ['mr', 'thamba', true],
    ['mr', 'थांबा', true],
    ['kn', 'ಹೌದು ಸರಿ', false],
    ['kn', 'beda', true],
    ['kn', 'ನಿಲ್ಲಿಸಿ', true],
    ['gu', 'હા, બરાબર', false],
    ['gu', 'thobho', true],
    ['gu', 'થોભો', true],
    // Hindi's words are not an English agent's... except English is every agent's.
    ['en', 'ruko', false],
    ['hi', 'stop', true],
    ['hi', 'okay okay', false],
  ])('language %s, "%s": interrupts %s', (language, text, interrupts) => {
    expect(interruptsAgent(text, turnPolicyOf({ min_words: 3 }, language))).toBe(interrupts);
  });

  // min_words, false_interruption_secs → speech over the agent pauses it at once
  it.each([
    [3, undefined, true],
    [3, 1.5, true],
    [3, 0, false],
    [1, 1, false],
  ])('min_words %d, false_interruption_secs %s: pauses on speech %s', (minWords, secs, pauses) => {
    expect(pausesOnSpeech(turnPolicyOf({ min_words: minWords, false_interruption_secs: secs ?? null }))).toBe(pauses);
  });

  it('knows every language when the agent’s is unknown (a bare min_words)', () => {
    expect(interruptsAgent('ruko', 3)).toBe(true);
    expect(interruptsAgent('haan ji theek hai', 3)).toBe(false);
    expect(interruptsAgent('ruko', turnPolicyOf({ min_words: 3 }, 'fr'))).toBe(true);
  });

  // an agent's own phrases: added or replacing the built-in ones; the longer phrase wins
  it.each([
    [{ backchannel_phrases: { mode: 'add' as const, phrases: ['no worries'] } }, 'no worries', false],
    [{ backchannel_phrases: { mode: 'add' as const, phrases: ['no worries'] } }, 'no', true],
    [{ backchannel_phrases: { mode: 'replace' as const, phrases: ['roger'] } }, 'uh-huh', false],
    [{ backchannel_phrases: { mode: 'replace' as const, phrases: ['roger'] } }, 'uh-huh okay', true],
    [{ backchannel_phrases: { mode: 'replace' as const, phrases: ['roger'] } }, 'roger roger roger', false],
    [{ interrupt_phrases: { mode: 'add' as const, phrases: ['Agent!'] } }, 'agent', true],
    [{ interrupt_phrases: { mode: 'add' as const, phrases: ['okay'] } }, 'okay', true],
    [{ interrupt_phrases: { mode: 'replace' as const, phrases: ['halt'] } }, 'stop', false],
    [{ interrupt_phrases: { mode: 'replace' as const, phrases: ['halt'] } }, 'halt', true],
  ])('own phrases %j, "%s": interrupts %s', (settings, text, interrupts) => {
    expect(interruptsAgent(text, turnPolicyOf({ min_words: 3, ...settings }, 'en'))).toBe(interrupts);
  });

  // an utterance completed while the agent still spoke (duringAgentSpeech) → backchannel?
  it.each([
    [3, 'uh-huh', true, true],
    [3, 'okay sure', true, true],
    [3, 'wait a second please', true, false],
    [3, 'uh-huh', false, false],
    [1, 'uh-huh', true, false],
    [2, 'yes', true, true],
    [3, 'ruko', true, false],
    [3, 'Stop,', true, false],
    [3, 'haan ji, theek hai', true, true],
    [3, 'haan ji, theek hai, accha', true, true],
  ])('min_words %d, "%s" during agent speech %s: backchannel %s', (minWords, text, duringAgentSpeech, backchannel) => {
    expect(isBackchannel({ text, duringAgentSpeech }, turnPolicyOf({ min_words: minWords }, 'hi'))).toBe(backchannel);
  });
});

describe('end of turn', () => {
  const policy = (language = 'en') => turnPolicyOf({ vad_stop_secs: 0.2, dictation_wait_secs: 1.2 }, language);

  // language, the turn's words so far → mid-dictation (waits dictation_wait_secs)
  it.each([
    ['en', 'My number is nine eight seven six five', true],
    ['en', 'My number is nine eight seven six five.', true],
    ['en', 'My number is 98765', true],
    ['en', 'My number is 987-65', true],
    ['en', 'My number is 9 8 7', true],
    ['en', 'it is nine eight double', true],
    ['en', 'I want two', false],
    ['en', 'I am 42', false],
    ['en', 'I would like to book a table and', true],
    ['en', 'Yes, but', true],
    ['en', 'My email is john.smith@', true],
    ['en', 'My email is john.smith@gmail', true],
    ['en', 'My email is john.smith@gmail.com', false],
    ['en', 'My email is john dot smith at', true],
    ['en', 'I would like to book a table.', false],
    ['en', 'Thank you', false],
    ['en', '', false],
    ['hi', 'mera number hai nau aath saat', true],
    ['hi', 'मेरा नंबर है नौ आठ सात', true],
    ['hi', 'haan theek hai aur', true],
    ['hi', 'लेकिन', true],
    ['hi', 'मेरा नाम राहुल है', false],
    ['ta', 'ஒன்பது எட்டு ஏழு', true],
    ['te', 'తొమ్మిది ఎనిమిది ఏడు', true],
    ['bn', 'নয় আট সাত', true],
    ['mr', 'नऊ आठ सात', true],
    ['kn', 'ಒಂಬತ್ತು ಎಂಟು ಏಳು', true],
    ['gu', 'નવ આઠ સાત', true],
    ['gu', 'મારું નામ રાહુલ છે અને', true],
  ])('language %s, "%s": mid-dictation %s', (language, text, mid) => {
    expect(midDictation(text, policy(language))).toBe(mid);
    expect(endOfTurnWaitMs(text, policy(language))).toBe(mid ? 1200 : 200);
  });

  it('never waits less than vad_stop_secs', () => {
    expect(endOfTurnWaitMs('one two three', turnPolicyOf({ vad_stop_secs: 1.5, dictation_wait_secs: 1.2 }))).toBe(1500);
    expect(endOfTurnWaitMs('one two three', turnPolicyOf({}))).toBe(DEFAULT_DICTATION_WAIT_SECS * 1000);
  });
});
