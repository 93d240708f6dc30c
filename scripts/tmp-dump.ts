import fs from 'node:fs';
import { temporal } from '@temporalio/proto';
const h = temporal.api.history.v1.History.decode(fs.readFileSync(process.argv[2]!));
const names = Object.fromEntries(Object.entries(temporal.api.enums.v1.EventType).map(([k, v]) => [v, k]));
for (const e of h.events) {
  const t = names[e.eventType as number]!.replace('EVENT_TYPE_', '');
  let extra = '';
  if (e.activityTaskScheduledEventAttributes) extra = e.activityTaskScheduledEventAttributes.activityType?.name ?? '';
  if (e.timerStartedEventAttributes) extra = `${e.timerStartedEventAttributes.startToFireTimeout?.seconds}s`;
  if (e.markerRecordedEventAttributes) extra = e.markerRecordedEventAttributes.markerName ?? '';
  if (e.workflowExecutionSignaledEventAttributes) extra = e.workflowExecutionSignaledEventAttributes.signalName ?? '';
  if (e.workflowExecutionUpdateAcceptedEventAttributes) extra = e.workflowExecutionUpdateAcceptedEventAttributes.acceptedRequest?.input?.name ?? '';
  console.log(e.eventId, t, extra);
}
