/** Calling hours read in each contact's time zone (src/campaigns/windows.ts), at chosen instants. */
import { isOpen, localTime, nextOpening } from '../../src/campaigns/windows';
import type { CampaignSchedule } from '../../src/db/models/campaigns';

const schedule: CampaignSchedule = {
  start_at: null,
  end_at: null,
  windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat'], start: '10:00', end: '19:00' }],
  holidays: ['2026-12-08'],
};
const at = (iso: string) => new Date(iso);

describe('calling windows', () => {
  it('reads the wall clock of the zone, daylight saving included', () => {
    expect(localTime(at('2026-12-07T05:00:00Z'), 'Asia/Kolkata')).toEqual({ weekday: 'mon', date: '2026-12-07', minutes: 10 * 60 + 30 });
    expect(localTime(at('2026-12-07T05:00:00Z'), 'America/New_York')).toEqual({ weekday: 'mon', date: '2026-12-07', minutes: 0 });
    expect(localTime(at('2026-07-06T14:00:00Z'), 'America/New_York').minutes).toBe(10 * 60); // EDT
  });

  it.each([
    ['2026-12-07T05:00:00Z', 'Asia/Kolkata', true], // Mon 10:30
    ['2026-12-07T04:29:00Z', 'Asia/Kolkata', false], // Mon 09:59
    ['2026-12-07T13:29:00Z', 'Asia/Kolkata', true], // Mon 18:59
    ['2026-12-07T13:30:00Z', 'Asia/Kolkata', false], // Mon 19:00: the end is excluded
    ['2026-12-06T06:00:00Z', 'Asia/Kolkata', false], // Sunday
    ['2026-12-08T06:00:00Z', 'Asia/Kolkata', false], // a holiday
    ['2026-12-07T05:00:00Z', 'America/New_York', false], // Mon 00:00 there
    ['2026-12-07T15:30:00Z', 'America/New_York', true], // Mon 10:30 there
  ])('%s in %s: open %s', (instant, zone, open) => {
    expect(isOpen(schedule, zone, at(instant))).toBe(open);
  });

  it('finds the next opening to the minute, past Sundays and holidays', () => {
    expect(nextOpening(schedule, 'Asia/Kolkata', at('2026-12-07T05:00:00Z'))).toEqual(at('2026-12-07T05:00:00Z'));
    expect(nextOpening(schedule, 'America/New_York', at('2026-12-07T05:00:00Z'))).toEqual(at('2026-12-07T15:00:00Z'));
    // Monday evening in Kolkata: Tuesday is a holiday, so Wednesday 10:00.
    expect(nextOpening(schedule, 'Asia/Kolkata', at('2026-12-07T14:00:00Z'))).toEqual(at('2026-12-09T04:30:00Z'));
    // Saturday evening: Monday.
    expect(nextOpening(schedule, 'Asia/Kolkata', at('2026-12-12T14:00:00Z'))).toEqual(at('2026-12-14T04:30:00Z'));
    expect(nextOpening({ ...schedule, windows: [{ days: ['mon'], start: '10:07', end: '10:09' }] }, 'UTC', at('2026-12-07T10:09:00Z'))).toEqual(at('2026-12-14T10:07:00Z'));
  });

  it('finds the opening across a daylight-saving change', () => {
    const daily = { ...schedule, windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const, start: '10:00', end: '19:00' }].map((w) => ({ ...w, days: [...w.days] })) };
    // Saturday 20:00 EST; clocks go forward that night: Sunday 10:00 is EDT (14:00 UTC).
    expect(nextOpening(daily, 'America/New_York', at('2026-03-08T01:00:00Z'))).toEqual(at('2026-03-08T14:00:00Z'));
  });

  it('honours start_at and end_at', () => {
    const bounded = { ...schedule, windows: [], start_at: '2026-12-10T00:00:00Z', end_at: '2026-12-11T00:00:00Z' };
    expect(isOpen(bounded, 'UTC', at('2026-12-09T23:59:00Z'))).toBe(false);
    expect(nextOpening(bounded, 'UTC', at('2026-12-09T12:00:00Z'))).toEqual(at('2026-12-10T00:00:00Z'));
    expect(nextOpening(bounded, 'UTC', at('2026-12-11T00:00:00Z'))).toBeNull();
  });
});
