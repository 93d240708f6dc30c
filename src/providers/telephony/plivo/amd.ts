/**
 * Plivo's asynchronous machine detection (Make Call `machine_detection=true` with
 * `machine_detection_url`): Plivo posts the call's usual parameters (`CallUUID`, `From`, `To`,
 * `Direction`, …) plus `Machine` = `true` or `false` to that URL, signed (X-Plivo-Signature-V3)
 * like every callback. Plivo says nothing about the greeting's end: the gateway listens for the beep.
 */
import type { MachineDetectionResult } from '../types';
import { field } from '../webhook-fields';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function parsePlivoMachineDetection(params: Record<string, unknown>): MachineDetectionResult | null {
  const machine = field(params, 'Machine')?.toLowerCase();
  if (machine !== 'true' && machine !== 'false') return null;
  const uuid = field(params, 'CallUUID');
  return {
    providerCallId: uuid && UUID.test(uuid) ? uuid : null,
    answeredBy: machine === 'true' ? 'machine' : 'human',
    providerResult: `Machine=${machine}`,
    greetingEnded: false,
  };
}
