/**
 * Reads a process's `GET /metrics` (Prometheus text format) for the benchmark: a scrape before and
 * one after the calls, and the histograms' difference between them (what the run added), with
 * quantiles estimated from the buckets the way Prometheus's histogram_quantile does.
 */

/** Series key (`name{a="b",…}` with the labels sorted) → value. */
export type Scrape = Map<string, number>;

export async function scrapeMetrics(url: string, token?: string): Promise<Scrape> {
  const res = await fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  if (!res.ok) throw new Error(`GET ${url} → ${res.status}`);
  return parseMetrics(await res.text());
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseMetrics(text: string): Scrape {
  const out: Scrape = new Map();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = SAMPLE.exec(line);
    if (!m) continue;
    const labels = [...(m[2] ?? '').matchAll(LABEL)].map((l) => [l[1]!, l[2]!] as const);
    out.set(seriesKey(m[1]!, Object.fromEntries(labels)), Number(m[3]));
  }
  return out;
}

function seriesKey(name: string, labels: Record<string, string>): string {
  const parts = Object.keys(labels)
    .sort()
    .map((k) => `${k}="${labels[k]}"`);
  return parts.length ? `${name}{${parts.join(',')}}` : name;
}

export interface HistogramDelta {
  count: number;
  /** Seconds. */
  sum: number;
  /** Cumulative counts by upper bound (seconds), ascending, +Inf last. */
  buckets: Array<{ le: number; count: number }>;
}

/** What a histogram (with these labels, besides `le`) gained between two scrapes. */
export function histogramDelta(before: Scrape, after: Scrape, name: string, labels: Record<string, string> = {}): HistogramDelta {
  const diff = (key: string) => (after.get(key) ?? 0) - (before.get(key) ?? 0);
  const buckets: HistogramDelta['buckets'] = [];
  const prefix = `${name}_bucket{`;
  for (const key of after.keys()) {
    if (!key.startsWith(prefix)) continue;
    const labelText = key.slice(prefix.length, -1);
    const map = Object.fromEntries([...labelText.matchAll(LABEL)].map((l) => [l[1]!, l[2]!]));
    if (Object.entries(labels).some(([k, v]) => map[k] !== v)) continue;
    if (Object.keys(map).length !== Object.keys(labels).length + 1) continue;
    buckets.push({ le: map.le === '+Inf' ? Infinity : Number(map.le), count: diff(key) });
  }
  buckets.sort((a, b) => a.le - b.le);
  return { count: diff(seriesKey(`${name}_count`, labels)), sum: diff(seriesKey(`${name}_sum`, labels)), buckets };
}

/** The q-quantile (0–1) in ms, interpolated inside its bucket; NaN without observations. */
export function histogramQuantileMs(h: HistogramDelta, q: number): number {
  if (h.count <= 0) return NaN;
  const rank = q * h.count;
  let lowerLe = 0;
  let lowerCount = 0;
  for (const b of h.buckets) {
    if (b.count >= rank) {
      // Beyond the largest finite bucket there is nothing to interpolate: its bound stands.
      if (b.le === Infinity) return lowerLe * 1000;
      const within = b.count - lowerCount;
      return (lowerLe + (within > 0 ? ((rank - lowerCount) / within) * (b.le - lowerLe) : 0)) * 1000;
    }
    lowerLe = b.le;
    lowerCount = b.count;
  }
  return NaN;
}

export const histogramMeanMs = (h: HistogramDelta): number => (h.count > 0 ? (h.sum / h.count) * 1000 : NaN);

/** What a counter (all its series whose labels match) gained between two scrapes. */
export function counterDelta(before: Scrape, after: Scrape, name: string): Array<{ labels: string; delta: number }> {
  const out: Array<{ labels: string; delta: number }> = [];
  for (const [key, value] of after) {
    if (key !== name && !key.startsWith(`${name}{`)) continue;
    const delta = value - (before.get(key) ?? 0);
    if (delta) out.push({ labels: key.slice(name.length), delta });
  }
  return out;
}
