/**
 * What a call costs Temporal, read from its workflow history: workflow tasks, activities by type,
 * signals, timers, markers and history events — the units Temporal Cloud bills by ("actions" are
 * roughly workflow starts, activities, signals, timers and markers) and what the dev server's CPU
 * goes into. bench:voice sums them over its calls and divides by the turns spoken.
 */
import { temporal } from '@temporalio/proto';

type History = temporal.api.history.v1.IHistory;
const T = temporal.api.enums.v1.EventType;

export interface TemporalCost {
  events: number;
  workflowTasks: number;
  activities: number;
  activitiesByType: Record<string, number>;
  signals: number;
  timers: number;
  markers: number;
}

export const noCost = (): TemporalCost => ({ events: 0, workflowTasks: 0, activities: 0, activitiesByType: {}, signals: 0, timers: 0, markers: 0 });

export function historyCost(history: History): TemporalCost {
  const cost = noCost();
  for (const e of history.events ?? []) {
    cost.events++;
    if (e.eventType === T.EVENT_TYPE_WORKFLOW_TASK_STARTED) cost.workflowTasks++;
    else if (e.eventType === T.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED) cost.signals++;
    else if (e.eventType === T.EVENT_TYPE_TIMER_STARTED) cost.timers++;
    else if (e.eventType === T.EVENT_TYPE_MARKER_RECORDED) cost.markers++;
    else if (e.eventType === T.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) {
      cost.activities++;
      const type = e.activityTaskScheduledEventAttributes?.activityType?.name ?? 'unknown';
      cost.activitiesByType[type] = (cost.activitiesByType[type] ?? 0) + 1;
    }
  }
  return cost;
}

export function addCost(a: TemporalCost, b: TemporalCost): TemporalCost {
  const byType = { ...a.activitiesByType };
  for (const [k, v] of Object.entries(b.activitiesByType)) byType[k] = (byType[k] ?? 0) + v;
  return {
    events: a.events + b.events,
    workflowTasks: a.workflowTasks + b.workflowTasks,
    activities: a.activities + b.activities,
    activitiesByType: byType,
    signals: a.signals + b.signals,
    timers: a.timers + b.timers,
    markers: a.markers + b.markers,
  };
}

/** Markdown table rows: each figure per call and per turn. */
export function costRows(total: TemporalCost, calls: number, turns: number): string[] {
  const f = (n: number, d: number) => (d ? (n / d).toFixed(1) : 'NA');
  const row = (label: string, n: number) => `| ${label} | ${f(n, calls)} | ${f(n, turns)} |`;
  return [
    '| | per call | per turn |',
    '|---|---|---|',
    row('history events', total.events),
    row('workflow tasks', total.workflowTasks),
    row('activities', total.activities),
    ...Object.entries(total.activitiesByType)
      .sort((x, y) => y[1] - x[1])
      .map(([type, n]) => row(`· ${type}`, n)),
    row('signals', total.signals),
    row('timers', total.timers),
    row('markers (patches, local activities)', total.markers),
  ];
}

/**
 * A failed call's last history events, named, with what explains a stuck call: a signal's name,
 * an activity's type, a failed task's cause and message (e.g. a deadlock, a task timeout).
 */
export function historyTail(history: History, count = 12): string {
  const name = (type: number | null | undefined) => (T[type ?? 0] ?? String(type)).replace(/^EVENT_TYPE_/, '').toLowerCase();
  return (history.events ?? [])
    .slice(-count)
    .map((e) => {
      const detail =
        e.workflowExecutionSignaledEventAttributes?.signalName ??
        e.activityTaskScheduledEventAttributes?.activityType?.name ??
        e.workflowTaskFailedEventAttributes?.failure?.message?.slice(0, 80) ??
        e.activityTaskFailedEventAttributes?.failure?.message?.slice(0, 80) ??
        e.activityTaskTimedOutEventAttributes?.failure?.message?.slice(0, 80);
      return detail ? `${name(e.eventType)}(${detail})` : name(e.eventType);
    })
    .join(' ');
}

/** A history as readable JSON (event types as names, 64-bit ids as strings), for BENCH_LOG_DIR. */
export function historyJson(history: History): string {
  return JSON.stringify(temporal.api.history.v1.History.fromObject(history).toJSON(), null, 1);
}
