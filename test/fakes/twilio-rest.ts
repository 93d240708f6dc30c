/**
 * The fake Twilio's REST Calls API: create (`POST …/Calls.json`), fetch (`GET …/Calls/{Sid}.json`)
 * and update (`POST …/Calls/{Sid}.json`: `Status=completed|canceled` hangs up, `Twiml` redirects the
 * live call) with Twilio's validation, error codes and call resource.
 */
import type http from 'node:http';
import { newSid } from './twilio-caller';
import { parseTwiml, type TwimlVerb } from './twilio-twiml';
import { amdRequestProblem } from './twilio-amd';
import type { CallState, FakeTwilioContext } from './twilio-fake-types';
import { finish, hangup, newState, simulateOutbound } from './twilio-call-flow';
import { API_VERSION, baseParams, fetchTwiml, rfc2822 } from './twilio-webhooks';

const E164 = /^\+[1-9]\d{1,14}$/;
const CALL_EVENTS = ['initiated', 'ringing', 'answered', 'completed'];

export function readForm(body: string): Record<string, string | string[]> {
  const form = new URLSearchParams(body);
  const out: Record<string, string | string[]> = {};
  for (const key of new Set(form.keys())) {
    const all = form.getAll(key);
    out[key] = all.length === 1 ? all[0] : all;
  }
  return out;
}

function single(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[v.length - 1] : v;
}

function isValidAddress(n: string): boolean {
  return E164.test(n) || /^(client|sip):\S+$/.test(n);
}

const twilioError = (res: http.ServerResponse, status: number, code: number, message: string, extra: object = {}) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status, ...extra }));
  return status;
};

const resource = (s: CallState) => {
  const c = s.record;
  const base = `/${API_VERSION}/Accounts/${c.accountSid}/Calls/${c.sid}`;
  return {
    account_sid: c.accountSid,
    annotation: null,
    answered_by: null,
    api_version: API_VERSION,
    caller_name: null,
    date_created: rfc2822(c.createdAtMs),
    date_updated: rfc2822(),
    direction: c.direction,
    duration: c.durationSecs === undefined ? null : String(c.durationSecs),
    end_time: c.endedAtMs ? rfc2822(c.endedAtMs) : null,
    forwarded_from: null,
    from: c.from,
    from_formatted: c.from,
    group_sid: null,
    parent_call_sid: null,
    phone_number_sid: null,
    price: null,
    price_unit: 'USD',
    queue_time: '0',
    sid: c.sid,
    start_time: c.answeredAtMs ? rfc2822(c.answeredAtMs) : null,
    status: c.status,
    subresource_uris: {
      notifications: `${base}/Notifications.json`,
      recordings: `${base}/Recordings.json`,
      streams: `${base}/Streams.json`,
      events: `${base}/Events.json`,
    },
    to: c.to,
    to_formatted: c.to,
    trunk_sid: null,
    uri: `${base}.json`,
  };
};

function createCall(ctx: FakeTwilioContext, res: http.ServerResponse, form: Record<string, string | string[]>): number {
  const to = single(form.To);
  const from = single(form.From);
  const url = single(form.Url);
  const twiml = single(form.Twiml);
  if (!to) return twilioError(res, 400, 21201, "No 'To' number is specified");
  if (!from) return twilioError(res, 400, 21213, "No 'From' number is specified");
  if (!isValidAddress(to)) return twilioError(res, 400, 21211, `Invalid 'To' Phone Number: ${to}`);
  if (!isValidAddress(from)) return twilioError(res, 400, 21212, `Invalid 'From' Phone Number: ${from}`);
  if (!url && !twiml) return twilioError(res, 400, 21205, 'Url parameter is required.');
  if (url && !/^https?:\/\/\S+$/.test(url)) return twilioError(res, 400, 21205, `Url is not a valid URL: ${url}`);
  if (twiml && twiml.length > 4000) return twilioError(res, 400, 21232, 'Twiml must be 4000 characters or fewer');
  const statusCallback = single(form.StatusCallback);
  if (statusCallback && !/^https?:\/\/\S+$/.test(statusCallback)) {
    return twilioError(res, 400, 21609, `StatusCallback is not a valid URL: ${statusCallback}`);
  }
  const rawEvents = form.StatusCallbackEvent === undefined ? ['completed'] : ([] as string[]).concat(form.StatusCallbackEvent);
  const events = rawEvents.flatMap((e) => e.split(' ')).filter(Boolean);
  const bad = events.find((e) => !CALL_EVENTS.includes(e));
  if (bad) return twilioError(res, 400, 21626, `Invalid StatusCallbackEvent: ${bad}`);
  if (!events.includes('completed')) events.push('completed');
  for (const [field, max] of [['Timeout', 600], ['TimeLimit', 86400]] as const) {
    const v = single(form[field]);
    if (v !== undefined && (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > max)) {
      return twilioError(res, 400, 21210, `${field} must be an integer between 1 and ${max}`);
    }
  }
  const s = newState(
    ctx,
    {
      sid: newSid('CA'),
      accountSid: ctx.accountSid,
      direction: 'outbound-api',
      to,
      from,
      status: 'queued',
      params: form,
      statusCallbackEvents: events,
    },
    ctx.authToken,
  );
  s.statusCallback = statusCallback;
  s.statusCallbackMethod = single(form.StatusCallbackMethod) ?? 'POST';
  const timeLimit = single(form.TimeLimit);
  if (timeLimit) s.timeLimitSecs = Number(timeLimit);
  const script = ctx.outcomes.get(to) ?? ctx.defaultOutcome;
  s.script = script;
  const amdProblem = amdRequestProblem(form);
  if (amdProblem) return twilioError(res, 400, 21626, amdProblem);
  res.writeHead(201, { 'content-type': 'application/json' });
  res.end(JSON.stringify(resource(s)));
  void simulateOutbound(ctx, s, script, url, single(form.Method) ?? 'POST', url ? undefined : twiml).catch((err) => {
    s.record.errors.push(`simulation failed: ${(err as Error).message}`);
    void finish(s, 'failed', '500');
  });
  return 201;
}

/** A call update with `Url`: Twilio fetches the document (signed, like a voice webhook), then runs it in place of the current one. */
function redirectToUrl(s: CallState, url: string, method: string): void {
  void (async () => {
    const twiml = await fetchTwiml(s, url, method, baseParams(s, 'in-progress'), 'twiml');
    if (twiml === null || s.hungUp) return;
    try {
      s.redirect = parseTwiml(twiml);
    } catch (err) {
      s.record.errors.push(`12100 Document parse failure: ${(err as Error).message}`);
      return;
    }
    s.record.redirects.push(twiml);
    if (s.record.caller?.isOpen) void s.record.caller.hangup();
    s.wake?.();
  })();
}

function updateCall(res: http.ServerResponse, s: CallState, form: Record<string, string | string[]>): number {
  const status = single(form.Status);
  const newTwiml = single(form.Twiml);
  const newUrl = single(form.Url);
  if (newUrl !== undefined && newTwiml === undefined && status === undefined) {
    if (s.record.status !== 'in-progress') return twilioError(res, 400, 21220, 'Call is not in-progress. Cannot redirect.');
    if (!/^https?:\/\/\S+$/.test(newUrl)) return twilioError(res, 400, 21205, `Url is not a valid URL: ${newUrl}`);
    redirectToUrl(s, newUrl, single(form.Method) ?? 'POST');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(resource(s)));
    return 200;
  }
  if (newTwiml !== undefined && status === undefined) {
    if (s.record.status !== 'in-progress') return twilioError(res, 400, 21220, 'Call is not in-progress. Cannot redirect.');
    if (newTwiml.length > 4000) return twilioError(res, 400, 21232, 'Twiml must be 4000 characters or fewer');
    let verbs: TwimlVerb[];
    try {
      verbs = parseTwiml(newTwiml);
    } catch (err) {
      return twilioError(res, 400, 21232, `Invalid Twiml: ${(err as Error).message}`);
    }
    s.record.redirects.push(newTwiml);
    s.redirect = verbs;
    // Twilio stops the running <Connect><Stream> (a `stop` message, then the socket closes), or a conference.
    if (s.record.caller?.isOpen) void s.record.caller.hangup();
    s.wake?.();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(resource(s)));
    return 200;
  }
  if (status !== undefined && status !== 'completed' && status !== 'canceled') {
    return twilioError(res, 400, 20001, `Status must be one of completed, canceled`);
  }
  if (status) {
    const live = ['queued', 'ringing', 'in-progress'].includes(s.record.status);
    if (!live) return twilioError(res, 400, 21220, 'Call is not in-progress. Cannot redirect.');
    // `canceled` only ends a call that has not been answered yet.
    if (status === 'completed' || s.record.status !== 'in-progress') hangup(s);
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(resource(s)));
  return 200;
}

export function route(ctx: FakeTwilioContext, req: http.IncomingMessage, res: http.ServerResponse, path: string, form: Record<string, string | string[]>): number {
  const m = /^\/2010-04-01\/Accounts\/([^/]+)\/Calls(?:\/([^/]+))?\.json$/.exec(path);
  if (!m) return twilioError(res, 404, 20404, `The requested resource ${path} was not found`);
  const expected = `Basic ${Buffer.from(`${ctx.accountSid}:${ctx.authToken}`).toString('base64')}`;
  if (req.headers.authorization !== expected) {
    res.setHeader('www-authenticate', 'Basic realm="Twilio API"');
    return twilioError(res, 401, 20003, 'Authenticate', { detail: 'Your AccountSid or AuthToken was incorrect.' });
  }
  if (m[1] !== ctx.accountSid) return twilioError(res, 404, 20404, `The requested resource ${path} was not found`);
  if (req.method === 'POST' && !String(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
    return twilioError(res, 400, 20001, 'Content-Type must be application/x-www-form-urlencoded');
  }
  if (!m[2]) {
    if (req.method !== 'POST') return twilioError(res, 405, 20004, 'Method not allowed');
    return createCall(ctx, res, form);
  }
  const s = ctx.states.get(m[2]);
  if (!s) return twilioError(res, 404, 20404, `The requested resource ${path} was not found`);
  if (req.method === 'GET') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(resource(s)));
    return 200;
  }
  if (req.method === 'POST') return updateCall(res, s, form);
  return twilioError(res, 405, 20004, 'Method not allowed');
}
