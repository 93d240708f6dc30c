/**
 * Calling hours: whether a campaign may call a contact at an instant, read in the contact's time
 * zone (Intl, with the zone data Node ships), and when it next may. Runs in activities, not in
 * workflow code: the workflow passes its own clock (`now`), so a test can move time.
 */
import type { CampaignSchedule, CallingWindow } from '../db/models/campaigns';

const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
const formatters = new Map<string, Intl.DateTimeFormat>();

/**
 * Zones already found valid. Building a DateTimeFormat costs some 150 µs, which a 100 000-row
 * upload would pay per row; the names in use are few, and the cache is bounded all the same.
 */
const knownZones = new Set<string>();
const KNOWN_ZONES_MAX = 2000;

export function isTimeZone(zone: string): boolean {
  if (knownZones.has(zone)) return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
  } catch {
    return false;
  }
  if (knownZones.size < KNOWN_ZONES_MAX) knownZones.add(zone);
  return true;
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

const MINUTE = 60_000;
const HORIZON_DAYS = 15;

/** Minutes from the local time to the next window start after it, zone offsets aside. */
function minutesToNextStart(schedule: CampaignSchedule, local: ReturnType<typeof localTime>): number {
  // No windows (closed only by a holiday): the next local midnight.
  if (!schedule.windows.length) return 1440 - local.minutes;
  const today = WEEKDAYS.indexOf(local.weekday);
  let best = Infinity;
  for (let d = 0; d <= 7; d++) {
    const day = WEEKDAYS[(today + d) % 7];
    for (const w of schedule.windows) {
      const delta = d * 1440 + toMinutes(w.start) - local.minutes;
      if (delta > 0 && w.days.includes(day)) best = Math.min(best, delta);
    }
  }
  return best;
}

/**
 * The first minute at or after `from` when calls to `zone` may start; null when none within
 * 15 days (or the schedule has ended). Jumps from window start to window start in local time,
 * then looks up to an hour either side, for a daylight-saving change in between.
 */
export function nextOpening(schedule: CampaignSchedule, zone: string, from: Date): Date | null {
  const startAt = schedule.start_at ? new Date(schedule.start_at).getTime() : -Infinity;
  const endAt = schedule.end_at ? new Date(schedule.end_at).getTime() : Infinity;
  const origin = Math.max(from.getTime(), startAt);
  if (isOpen(schedule, zone, new Date(origin))) return new Date(origin);
  const firstOpen = (t: number) => t >= origin && isOpen(schedule, zone, new Date(t)) && !isOpen(schedule, zone, new Date(t - MINUTE));
  let t = Math.floor(origin / MINUTE) * MINUTE;
  while (t - origin <= HORIZON_DAYS * 1440 * MINUTE && t < endAt) {
    const delta = minutesToNextStart(schedule, localTime(new Date(t), zone));
    if (!Number.isFinite(delta)) return null;
    const candidate = t + delta * MINUTE;
    for (const shift of [0, -60, 60, -30, 30]) {
      const at = candidate + shift * MINUTE;
      if (at < endAt && firstOpen(at)) return new Date(at);
    }
    t = candidate;
  }
  return null;
}

export { WEEKDAYS };
