import fs from 'node:fs';
import { temporal } from '@temporalio/proto';
const h = temporal.api.history.v1.History.decode(fs.readFileSync(process.argv[2]!));
const t0 = Number(h.events[0]!.eventTime!.seconds) * 1000 + h.events[0]!.eventTime!.nanos! / 1e6;
for (const e of h.events) {
  const t = Number(e.eventTime!.seconds) * 1000 + e.eventTime!.nanos! / 1e6;
  const type = temporal.api.enums.v1.EventType[e.eventType!];
  let extra = '';
  if (e.activityTaskScheduledEventAttributes) extra = e.activityTaskScheduledEventAttributes.activityType!.name!;
  if (e.markerRecordedEventAttributes) extra = e.markerRecordedEventAttributes.markerName!;
  if (e.workflowExecutionSignaledEventAttributes) extra = e.workflowExecutionSignaledEventAttributes.signalName!;
  if (e.workflowExecutionUpdateAcceptedEventAttributes) extra = e.workflowExecutionUpdateAcceptedEventAttributes.acceptedRequest?.input?.name ?? '';
  console.log(String(e.eventId).padStart(3), (t - t0).toFixed(0).padStart(7), type, extra);
}
