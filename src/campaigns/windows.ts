/**
 * Calling hours: whether a campaign may call a contact at an instant, read in the contact's time
 * zone (Intl, with the zone data Node ships), and when it next may. Runs in activities, not in
 * workflow code: the workflow passes its own clock (`now`), so a test can move time.
 */
import type { CampaignSchedule, CallingWindow } from '../db/models/campaigns';

const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
const formatters = new Map<string, Intl.DateTimeFormat>();

export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      weekday: 'short',
    });
    formatters.set(zone, f);
  }
  return f;
}

/** The wall clock in `zone` at `at`: weekday, date (YYYY-MM-DD) and minutes since midnight. */
export function localTime(at: Date, zone: string): { weekday: CallingWindow['days'][number]; date: string; minutes: number } {
  const parts = Object.fromEntries(formatter(zone).formatToParts(at).map((p) => [p.type, p.value]));
  return {
    weekday: parts.weekday.toLowerCase().slice(0, 3) as CallingWindow['days'][number],
    date: `${parts.year}-${parts.month}-${parts.day}`,
    minutes: Number(parts.hour) * 60 + Number(parts.minute),
  };
}

const toMinutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/** May the campaign call someone in `zone` at `at`? */
export function isOpen(schedule: CampaignSchedule, zone: string, at: Date): boolean {
  if (schedule.start_at && at < new Date(schedule.start_at)) return false;
  if (schedule.end_at && at >= new Date(schedule.end_at)) return false;
  const local = localTime(at, zone);
  if (schedule.holidays.includes(local.date)) return false;
  if (!schedule.windows.length) return true;
  return schedule.windows.some((w) => w.days.includes(local.weekday) && local.minutes >= toMinutes(w.start) && local.minutes < toMinutes(w.end));
}

const STEP_MS = 10 * 60_000;
const HORIZON_MS = 15 * 24 * 3600_000;

/**
 * The first minute at or after `from` when calls to `zone` may start; null when none within
 * 15 days (or the schedule has ended). Steps in 10 minutes, then back to the exact minute.
 */
export function nextOpening(schedule: CampaignSchedule, zone: string, from: Date): Date | null {
  if (isOpen(schedule, zone, from)) return from;
  const start = schedule.start_at ? Math.max(from.getTime(), new Date(schedule.start_at).getTime()) : from.getTime();
  if (start !== from.getTime() && isOpen(schedule, zone, new Date(start))) return new Date(start);
  const base = Math.ceil(start / 60_000) * 60_000;
  for (let t = base + STEP_MS; t - base <= HORIZON_MS; t += STEP_MS) {
    if (schedule.end_at && t >= new Date(schedule.end_at).getTime() + STEP_MS) return null;
    if (!isOpen(schedule, zone, new Date(t))) continue;
    let first = t;
    while (first - 60_000 > start && isOpen(schedule, zone, new Date(first - 60_000))) first -= 60_000;
    return new Date(first);
  }
  return null;
}

export { WEEKDAYS };
