/**
 * The chain from the black-box security run, step by step, as a member account. Each step is
 * refused on its own, so the chain fails at every link:
 *   1. write the Twilio Auth Token,
 *   2. sign an inbound webhook with it and create a call,
 *   3. point a webhook tool at Temporal's HTTP API on 127.0.0.1 to signal the call with
 *      `recordingPath: <DATA_DIR>/secrets.json` (or terminate a call through the Web UI),
 *   4. download that path as the call's recording.
 * The platform runs with its default outbound guard here (no WEBHOOK_ALLOWED_NETWORKS).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { startHarness, type Harness } from '../support/harness';
import { createSession, type Session } from '../support/users';
import { computeTwilioSignature } from '../../src/providers/telephony/twilio/signature';

const ADMIN_TWILIO_TOKEN = 'admin-real-auth-token-1234';
const MEMBER_TWILIO_TOKEN = 'member-chosen-auth-token';

let h: Harness;
let member: Session;
/** Stands in for Temporal's HTTP API on loopback: records whatever reaches it. */
let temporalHttp: http.Server;
let temporalHits: string[] = [];
let temporalUrl: string;
let secretsFile: string;

beforeAll(async () => {
  h = await startHarness({ env: { WEBHOOK_ALLOWED_NETWORKS: '' } });
  member = await createSession(h, 'member');
  await h.request('PUT', '/api/settings/telephony', {
    body: { provider: 'twilio', public_base_url: h.api.url, twilio_account_sid: 'AC00000000000000000000000000000000', twilio_auth_token: ADMIN_TWILIO_TOKEN, twilio_phone_number: '+14155550100' },
  });
  await h.request('POST', '/api/agents', { body: { name: 'support', prompt: 'Help.' } });
  await h.request('POST', '/api/settings/endpoints', { body: { phone_number: '+14155550100', provider: 'twilio', inbound_agent_name: 'support' } });
  temporalHttp = http.createServer((req, res) => (temporalHits.push(`${req.method} ${req.url}`), res.end('{}')));
  await new Promise<void>((r) => temporalHttp.listen(0, '127.0.0.1', r));
  temporalUrl = `http://127.0.0.1:${(temporalHttp.address() as AddressInfo).port}`;
  // What `npm start` keeps next to its data: the signing secret and the encryption key.
  secretsFile = path.join(h.config.dataDir, 'secrets.json');
  fs.writeFileSync(secretsFile, JSON.stringify({ jwtSecret: h.config.JWT_SECRET, encryptionKey: h.config.ENCRYPTION_KEY }), { mode: 0o600 });
});
afterAll(async () => {
  temporalHttp.close();
  await h.stop();
});

describe("a member cannot take over the server (the black-box run's chain)", () => {
  it('step 1: cannot write the telephony settings, nor read them', async () => {
    const put = await h.request('PUT', '/api/settings/telephony', {
      token: member.token,
      body: { provider: 'twilio', public_base_url: h.api.url, twilio_auth_token: MEMBER_TWILIO_TOKEN },
    });
    expect(put.status).toBe(403);
    expect((await h.request('GET', '/api/settings/telephony', { token: member.token })).status).toBe(403);
    const stored = await h.db.models.TelephonyProviderSettings.findByPk('twilio');
    expect(h.box.decrypt(stored!.get({ plain: true }).secrets.auth_token!)).toBe(ADMIN_TWILIO_TOKEN);
    // Nor manage the numbers, nor place calls with the stored credentials.
    expect((await h.request('POST', '/api/settings/endpoints', { token: member.token, body: { phone_number: '+14155550111', provider: 'twilio' } })).status).toBe(403);
    expect((await h.request('POST', '/api/calls/outbound', { token: member.token, body: { phone_number: '+14155550112', agent_name: 'support' } })).status).toBe(403);
  });

  it('step 2: an inbound webhook signed with a token of their choosing creates no call', async () => {
    const form = { CallSid: `CA${crypto.randomBytes(16).toString('hex')}`, AccountSid: 'AC00000000000000000000000000000000', From: '+14155550199', To: '+14155550100', CallStatus: 'ringing' };
    const url = `${h.api.url}/telephony/twilio/inbound/support`;
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': computeTwilioSignature(MEMBER_TWILIO_TOKEN, url, form) },
      body: new URLSearchParams(form).toString(),
    });
    expect(res.status).toBe(403);
    expect(await h.db.models.Call.count()).toBe(0);
  });

  it("step 3: a webhook tool cannot reach Temporal's HTTP API or Web UI on loopback", async () => {
    const callId = crypto.randomUUID();
    const targets = [
      `${temporalUrl}/api/v1/namespaces/default/workflows/call-${callId}/signal/mediaConnected`,
      `${temporalUrl}/api/v1/namespaces/default/workflows/call-${callId}/terminate`,
      `http://${process.env.VAP_TEST_TEMPORAL_ADDRESS}/temporal.api.workflowservice.v1.WorkflowService/SignalWorkflowExecution`,
      'http://localhost:8233/api/v1/namespaces/default/workflows',
    ];
    for (const webhook_url of targets) {
      const tool = await h.request('POST', '/api/tools', {
        token: member.token,
        body: { name: `signal_${crypto.randomBytes(3).toString('hex')}`, description: 'x', parameters: { properties: {} }, webhook_url },
      });
      expect(tool.status).toBe(201);
      const fired = await h.request('POST', `/api/tools/${tool.body.id}/test`, {
        token: member.token,
        body: { args: { gatewayTaskQueue: 'attacker', streamSid: 'MZ1', recordingPath: secretsFile } },
      });
      expect(fired.status).toBe(200);
      expect({ webhook_url, status_code: fired.body.status_code, error: fired.body.error }).toEqual({
        webhook_url,
        status_code: null,
        error: expect.stringMatching(/^blocked: .*a loopback address; allow it with WEBHOOK_ALLOWED_NETWORKS$/),
      });
    }
    expect(temporalHits).toEqual([]);
  });

  it("step 4: a call's recording is never a file outside the recordings directory", async () => {
    const callId = crypto.randomUUID();
    // The database holds what a forged mediaConnected signal would have stored.
    await h.db.models.Call.create({ id: callId, agent_name: 'support', phone_number: '+14155550199', direction: 'inbound', status: 'completed', workflow_id: `call-${callId}`, recording_path: secretsFile });
    const res = await fetch(`${h.api.url}/api/recordings/${callId}`, { headers: { authorization: `Bearer ${member.token}` } });
    const text = await res.text();
    expect(res.status).toBe(404);
    expect(text).toBe(JSON.stringify({ detail: 'Recording not found' }));
    expect(text).not.toContain(h.config.JWT_SECRET!);

    // A link planted in the recordings directory is not followed either.
    fs.mkdirSync(path.join(h.config.dataDir, 'recordings'), { recursive: true });
    fs.symlinkSync(secretsFile, path.join(h.config.dataDir, 'recordings', `${callId}.wav`));
    const linked = await fetch(`${h.api.url}/api/recordings/${callId}`, { headers: { authorization: `Bearer ${member.token}` } });
    expect(linked.status).toBe(404);
    expect(await linked.text()).not.toContain(h.config.JWT_SECRET!);

    // Ids that are not UUIDs (paths) never reach the file system.
    for (const id of ['..%2Fsecrets.json', '%2E%2E%2F%2E%2E%2Fsecrets', encodeURIComponent(secretsFile)]) {
      const bad = await h.request('GET', `/api/recordings/${id}`, { token: member.token });
      expect(bad.status).toBe(422);
    }
  });
});
