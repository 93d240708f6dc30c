/**
 * The demo's clinic (scripts/demo.ts): its booking backend (a webhook receiver's answers), a
 * scripted receptionist standing in for the LLM, and its configuration through the API as a user
 * would do it: telephony settings, two webhook tools, an agent, and the phone number's endpoint.
 */
import type { FakeReply } from '../../test/fakes/openai-server';
import type { FakeTelephony } from '../../test/fakes/telephony-fakes';
import type { ReceivedRequest } from '../../test/fakes/webhook-receiver';

export const CLINIC_NUMBER = '+15005550006';
const AGENT = 'sunrise-clinic';
const GREETING = 'Hello, this is Sunrise Clinic. How can I help you today?';
export const CHECKING = 'Let me check the calendar.';
export const VAD_STOP_SECS = 0.4;

const FREE_SLOTS = ['09:00', '10:30', '11:00', '15:30'];
const SPOKEN_TIME: Record<string, string> = { '09:00': 'nine', '10:30': 'half past ten', '11:00': 'eleven', '15:30': 'half past three' };

export function clinicBackend(req: ReceivedRequest) {
  if (req.path === '/slots') return { status: 200, body: { day: req.query.day ?? 'tomorrow', free_slots: FREE_SLOTS } };
  if (req.path === '/appointments') {
    const body = (req.body ?? {}) as Record<string, unknown>;
    return { status: 201, body: { confirmed: true, reference: 'SC-4711', day: body.day, time: body.time } };
  }
  return { status: 404, body: { error: 'not found' } };
}

function listSlots(slots: string[]): string {
  const morning = slots.filter((s) => s < '12:00').map((s) => SPOKEN_TIME[s] ?? s);
  const afternoon = slots.filter((s) => s >= '12:00').map((s) => SPOKEN_TIME[s] ?? s);
  const join = (xs: string[]) => (xs.length > 1 ? `${xs.slice(0, -1).join(', ')} and ${xs.at(-1)}` : (xs[0] ?? ''));
  return (
    `Tomorrow I have ${slots.length} openings: ${join(morning)} in the morning, and ${join(afternoon)} in the afternoon. ` +
    'The morning appointments are with Doctor Rao, the afternoon one with Doctor Lee. Which time suits you best?'
  );
}

/** The receptionist: what a real LLM would answer at each point of this conversation. */
export function receptionist(body: any): FakeReply {
  const messages: any[] = body.messages ?? [];
  const last = messages[messages.length - 1];
  if (last?.role === 'tool') {
    const call = messages.flatMap((m) => m.tool_calls ?? []).find((c: any) => c.id === last.tool_call_id);
    let result: any = {};
    try {
      result = JSON.parse(last.content);
    } catch {
      // an error text: answered below
    }
    if (call?.function?.name === 'check_slots' && Array.isArray(result.free_slots)) return { content: listSlots(result.free_slots) };
    if (call?.function?.name === 'book_appointment' && result.confirmed) {
      const ref = String(result.reference ?? '').replace(/[^A-Z0-9]/g, '').split('').join(' ');
      return {
        content: `You are booked for ${SPOKEN_TIME[result.time] ?? result.time} o'clock tomorrow with Doctor Rao, reference ${ref}. Goodbye!`,
        tool_calls: [{ name: 'end_call', arguments: {} }],
      };
    }
    return { content: 'Sorry, our calendar is not available right now. Please call again later.' };
  }
  const said = String(last?.content ?? '').toLowerCase();
  if (/book|appointment/.test(said)) return { content: CHECKING, tool_calls: [{ name: 'check_slots', arguments: { day: 'tomorrow' } }] };
  if (/stop|wait/.test(said)) return { content: 'Sure, take your time.' };
  if (/nine/.test(said)) return { tool_calls: [{ name: 'book_appointment', arguments: { day: 'tomorrow', time: '09:00' } }] };
  return { content: 'Sorry, could you say that again?' };
}

export interface ClinicSetup {
  /** Calls the platform's API; throws on an error status. */
  api(method: string, path: string, body?: unknown): Promise<any>;
  print(line: string): void;
  provider: string;
  phone: Pick<FakeTelephony, 'settings'>;
  /** The booking backend (a webhook receiver). */
  clinicUrl: string;
  /** The API's address, as the telephony vendor reaches it. */
  publicBaseUrl: string;
}

/** Configures the clinic through the API; returns the phone number's endpoint. */
export async function configureClinic({ api, print, provider, phone, clinicUrl, publicBaseUrl }: ClinicSetup): Promise<{ inbound_webhook_url: string }> {
  const show = (method: string, p: string, what: string) => print(`  ${method.padEnd(5)}${p.padEnd(27)} ${what}`);
  await api('PUT', '/api/settings/telephony', { provider, public_base_url: publicBaseUrl, ...phone.settings(CLINIC_NUMBER, 5) });
  show('PUT', '/api/settings/telephony', `${provider} credentials, number ${CLINIC_NUMBER}, public_base_url ${publicBaseUrl}`);
  const checkSlots = await api('POST', '/api/tools', {
    name: 'check_slots',
    description: 'List the free appointment slots of a day. Use it before offering times to the caller.',
    parameters: { properties: { day: { type: 'string', description: 'the day, e.g. tomorrow or 2025-05-02' } }, required: ['day'] },
    webhook_url: `${clinicUrl}/slots`,
    webhook_method: 'GET',
    headers: { Authorization: 'Bearer clinic-backend-secret' },
    timeout_secs: 5,
  });
  show('POST', '/api/tools', `check_slots → GET ${clinicUrl}/slots`);
  const book = await api('POST', '/api/tools', {
    name: 'book_appointment',
    description: 'Book the slot the caller chose.',
    parameters: {
      properties: { day: { type: 'string', description: 'the day' }, time: { type: 'string', description: 'HH:MM, one of the free slots' } },
      required: ['day', 'time'],
    },
    webhook_url: `${clinicUrl}/appointments`,
    headers: { Authorization: 'Bearer clinic-backend-secret' },
    timeout_secs: 5,
  });
  show('POST', '/api/tools', `book_appointment → POST ${clinicUrl}/appointments`);
  await api('POST', '/api/agents', {
    name: AGENT,
    prompt:
      'You are the receptionist of Sunrise Clinic on the phone. Be brief and friendly. Use check_slots before offering times, ' +
      'book_appointment once the caller has chosen one, then say goodbye and call end_call.',
    greeting: GREETING,
    stt_provider: 'deepgram',
    llm_provider: 'openai',
    tts_provider: 'cartesia',
    tool_ids: [checkSlots.id, book.id],
    // 0.4 s: the caller's "Hello, …" pauses ~0.2 s at the comma; min_words 1: any speech interrupts.
    pipeline_settings: { vad_stop_secs: VAD_STOP_SECS, min_words: 1 },
  });
  show('POST', '/api/agents', `${AGENT}: greeting, 2 tools, deepgram / openai / cartesia, vad_stop_secs ${VAD_STOP_SECS}, min_words 1`);
  const endpoint = await api('POST', '/api/settings/endpoints', { phone_number: CLINIC_NUMBER, provider, inbound_agent_name: AGENT, label: 'Front desk' });
  show('POST', '/api/settings/endpoints', `${CLINIC_NUMBER} → ${AGENT}; inbound_webhook_url ${endpoint.inbound_webhook_url}`);
  return endpoint;
}
