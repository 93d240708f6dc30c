/**
 * The OpenAPI document as a contract for generated clients (built offline, as
 * scripts/write-openapi.ts does): every resource, enum and the error body is one named component
 * referenced wherever it appears, timestamps are `date-time`, flags are booleans; Redocly's
 * `recommended` lint passes; and the checked-in SDK (clients/) is what `npm run sdk:generate`
 * makes from the code now.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { openApiDocument } from '../../scripts/lib/openapi-document';

const ROOT = path.join(__dirname, '..', '..');
const doc = openApiDocument() as any;
const schemas = doc.components.schemas as Record<string, any>;
const ops = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([p, byMethod]) =>
  Object.entries(byMethod).map(([method, op]) => ({ route: `${method.toUpperCase()} ${p}`, op })),
);
const op = (route: string) => ops.find((o) => o.route === route)!.op;
const json = (response: any) => response.content['application/json'].schema;
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** Every schema object in `node` with the JSON pointer to it. */
function* walk(node: unknown, pointer = ''): Generator<[string, any]> {
  if (!node || typeof node !== 'object') return;
  yield [pointer, node];
  for (const [key, value] of Object.entries(node)) yield* walk(value, `${pointer}/${key}`);
}

it('names the agent, the call and the error once, and every operation refers to them', () => {
  for (const route of ['POST /api/agents', 'GET /api/agents/{agent_id}', 'PATCH /api/agents/{agent_id}']) {
    expect({ route, schema: json(Object.values(op(route).responses)[0]) }).toEqual({ route, schema: ref('Agent') });
  }
  expect(json(op('GET /api/agents').responses[200])).toEqual({ type: 'array', items: ref('Agent') });
  expect(json(op('POST /api/agents/import').responses[201])).toEqual(ref('ImportResult'));
  expect(schemas.ImportResult.properties.agent).toEqual(ref('Agent'));
  expect(json(op('GET /api/agents/{agent_id}/export').responses[200])).toEqual(ref('AgentBundle'));
  expect(schemas.AgentBundle.properties.agent).toEqual(ref('AgentConfig'));

  expect(json(op('GET /api/calls/{call_id}').responses[200])).toEqual(ref('Call'));
  expect(schemas.CallList.properties.calls).toEqual({ type: 'array', items: ref('Call') });
  expect(json(op('POST /api/calls/start').responses[201])).toEqual(ref('Call'));
  expect(json(op('POST /api/calls/end').responses[200])).toEqual(ref('Call'));

  // POST /mcp is JSON-RPC: its transport's own errors are JSON-RPC error objects (mcp/openapi-path.ts).
  for (const { route, op: o } of ops.filter((o) => o.route !== 'POST /mcp')) {
    for (const [status, response] of Object.entries(o.responses as Record<string, any>)) {
      if (Number(status) >= 400) expect({ route, status, schema: json(response) }).toEqual({ route, status, schema: ref('Error') });
    }
  }
  expect(schemas.Error).toEqual(expect.objectContaining({ type: 'object', required: ['detail'] }));
});

it('lists each closed set of values once, as a named enum, providers included', () => {
  expect(schemas.SttProvider.enum).toEqual(expect.arrayContaining(['deepgram', 'sarvam']));
  expect(schemas.LlmProvider.enum).toEqual(expect.arrayContaining(['openai']));
  expect(schemas.TtsProvider.enum).toEqual(expect.arrayContaining(['cartesia']));
  expect(schemas.TelephonyProvider.enum).toEqual(['twilio', 'exotel', 'plivo']);
  // On input the spec's aliases are accepted too.
  expect(schemas.TelephonyProviderInput.enum).toEqual(expect.arrayContaining(['twilio', 'provider_a', 'exotel', 'provider_b', 'plivo', 'provider_c']));
  expect(schemas.AgentCreate.properties.stt_provider).toMatchObject(ref('SttProvider'));
  expect(schemas.Endpoint.properties.provider).toEqual(ref('TelephonyProvider'));

  const named = new Map(Object.entries(schemas).filter(([, s]) => Array.isArray(s.enum)).map(([name, s]) => [JSON.stringify(s.enum), name]));
  const copies: string[] = [];
  for (const [pointer, node] of walk(doc)) {
    const name = Array.isArray(node.enum) ? named.get(JSON.stringify(node.enum)) : undefined;
    if (name && pointer !== `/components/schemas/${name}`) copies.push(`${pointer} repeats ${name}`);
  }
  expect(copies).toEqual([]);
});

it('documents timestamps as date-time in the one form, flags as booleans and the event stream as text/event-stream', () => {
  const untyped: string[] = [];
  for (const [pointer, node] of walk(doc)) {
    for (const [name, prop] of Object.entries((node.properties ?? {}) as Record<string, any>)) {
      const isTime = /(_at|_time|^timestamp)$/.test(name) && !pointer.includes('requestBody') && !/Bundle|Input|Create|Patch/.test(pointer);
      if (isTime && !JSON.stringify(prop).includes('"format":"date-time"')) untyped.push(`${pointer}/${name}`);
    }
  }
  // Bundles' and imports' response-only fields are accepted and ignored, whatever they hold.
  expect(untyped).toEqual([]);
  expect(schemas.Call.properties.created_at).toMatchObject({ format: 'date-time', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}$' });

  const flags = ops.flatMap(({ route, op: o }) => (o.parameters ?? []).filter((p: any) => JSON.stringify(p.schema).includes('"true"')).map((p: any) => `${route} ${p.name}`));
  expect(flags).toEqual([]);
  expect(op('GET /api/calls').parameters.find((p: any) => p.name === 'include_transcript').schema).toMatchObject({ type: 'boolean', default: true });

  expect(Object.keys(op('GET /api/calls/{call_id}/events/stream').responses[200].content)).toEqual(['text/event-stream']);
});

it('documents the streamed contact upload as a text/csv body, with its 413 and 415, answering the JSON upload\'s result', () => {
  const upload = op('POST /api/campaigns/{campaign_id}/contacts.csv');
  expect(upload.requestBody).toMatchObject({ required: true, content: { 'text/csv': { schema: { type: 'string' } } } });
  expect(Object.keys(upload.requestBody.content)).toEqual(['text/csv']);
  expect(json(upload.responses[200])).toEqual(ref('UploadResult'));
  expect(json(op('POST /api/campaigns/{campaign_id}/contacts').responses[200])).toEqual(ref('UploadResult'));
  for (const status of ['403', '404', '409', '413', '415', '422']) expect(json(upload.responses[status])).toEqual(ref('Error'));
  expect(upload.parameters.map((p: any) => `${p.in} ${p.name}`)).toEqual(['path campaign_id', 'query default_country']);
});

it('keeps a tool parameters schema an object schema, and a transfer destination one of a number or a SIP URI', () => {
  expect(schemas.ToolParameters.properties.type).toMatchObject({ const: 'object' });
  expect(schemas.ToolParameters.required).toEqual(expect.arrayContaining(['type', 'properties', 'required']));
  expect(schemas.TransferDestination.oneOf).toEqual([
    { required: ['phone_number'], properties: { phone_number: { type: 'string' } } },
    { required: ['sip_uri'], properties: { sip_uri: { type: 'string' } } },
  ]);
  expect(schemas.AgentCreate.properties.stt_mode.description).toMatch(/only for the stt_provider that offers it \(sarvam\)/);
});

it('passes Redocly lint with the recommended rules', async () => {
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: 'openapi.json', config });
  expect(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} (${p.location[0]?.pointer ?? ''})`)).toEqual([]);
}, 30_000);

it('has the checked-in SDK and document that npm run sdk:generate makes from the code', async () => {
  // Generated in a process of its own (the generator is an ES module) and compared in memory.
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts', 'sdk-generate.ts'), '--print'], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
  const files = JSON.parse(stdout) as Record<string, string>;
  expect(Object.keys(files).sort()).toEqual(['clients/openapi.json', 'clients/typescript/src/models.ts', 'clients/typescript/src/schema.ts']);
  for (const [file, text] of Object.entries(files)) {
    const stale = fs.readFileSync(path.join(ROOT, file), 'utf8') !== text;
    expect({ file, stale, fix: stale ? 'run npm run sdk:generate' : undefined }).toEqual({ file, stale: false, fix: undefined });
  }
  // One type per resource, named after it.
  expect(files['clients/typescript/src/models.ts']).toMatch(/^export type Agent = components\['schemas'\]\['Agent'\];$/m);
  expect(files['clients/typescript/src/models.ts']).toMatch(/^export type Call = components\['schemas'\]\['Call'\];$/m);
  expect(files['clients/typescript/src/models.ts']).toMatch(/^export type ApiErrorBody = components\['schemas'\]\['Error'\];$/m);
  expect(files['clients/typescript/src/models.ts']).toMatch(/^export const SttProviderValues = \[/m);
}, 60_000);
