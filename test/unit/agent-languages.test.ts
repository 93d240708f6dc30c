import { agentLanguages } from '../../src/api/assistant/languages';

describe('generated agent languages', () => {
  it('gives STT a regional tag and TTS the bare language', () => {
    expect(agentLanguages('hi')).toEqual({ stt_language: 'hi-IN', tts_language: 'hi', label: 'Hindi (hi-IN)' });
    expect(agentLanguages('mr')).toMatchObject({ stt_language: 'mr-IN', tts_language: 'mr' });
    expect(agentLanguages('en')).toMatchObject({ stt_language: 'en-US', tts_language: 'en' });
  });

  it('keeps a region that was given, with canonical casing', () => {
    expect(agentLanguages('EN-in')).toMatchObject({ stt_language: 'en-IN', tts_language: 'en', label: 'English (en-IN)' });
    expect(agentLanguages('zh-hant-TW')).toMatchObject({ stt_language: 'zh-Hant-TW', tts_language: 'zh' });
  });

  it('passes unknown languages through', () => {
    expect(agentLanguages('sw')).toEqual({ stt_language: 'sw', tts_language: 'sw', label: 'sw' });
  });
});
