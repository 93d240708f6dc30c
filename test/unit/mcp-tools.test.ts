/**
 * MCP tools as the LLM and the call see them: the function name, the schema normalised for the
 * LLM providers, the arguments a strict schema gets, and what a tool result becomes.
 */
import { mcpArguments, mcpFunctionName, normaliseMcpSchema, parseMcpRef } from '../../src/shared/mcp-tools';
import { mcpOutcome, mcpResultText } from '../../src/tools/mcp-results';

describe('MCP tool names and references', () => {
  it('makes an OpenAI function name of server and tool', () => {
    expect(mcpFunctionName('crm', 'lookup_customer')).toBe('crm__lookup_customer');
    expect(mcpFunctionName('crm', 'orders.get/v2')).toBe('crm__orders_get_v2');
    expect(mcpFunctionName('crm', 'x'.repeat(100))).toHaveLength(64);
  });

  it('splits server/tool at the first slash', () => {
    expect(parseMcpRef('crm/orders/get')).toEqual({ server: 'crm', tool: 'orders/get' });
    expect(parseMcpRef('crm')).toBeNull();
    expect(parseMcpRef('crm/')).toBeNull();
  });
});

describe('normaliseMcpSchema', () => {
  it('keeps an object schema, dropping what the LLM providers refuse or do not need', () => {
    const schema = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { id: { type: 'string', $comment: 'x' }, nested: { type: 'object', properties: {}, additionalProperties: {} } },
      required: ['id', 'ghost'],
      anyOf: [{ required: ['id'] }],
      additionalProperties: {},
    };
    expect(normaliseMcpSchema(schema)).toEqual({
      type: 'object',
      properties: { id: { type: 'string' }, nested: { type: 'object', properties: {}, additionalProperties: true } },
      required: ['id'],
      additionalProperties: true,
    });
  });

  it('makes an object of a schema that is not one', () => {
    expect(normaliseMcpSchema(undefined)).toEqual({ type: 'object', properties: {}, required: [] });
    expect(normaliseMcpSchema({ oneOf: [{ type: 'object' }] })).toEqual({ type: 'object', properties: {}, required: [] });
  });
});

describe('mcpArguments', () => {
  const merged = { phone_number: '+1', direction: 'inbound', account: 'A', word: 'hi' };
  it('sends the call context to a schema that allows more', () => {
    expect(mcpArguments(merged, { type: 'object', properties: { word: {} } })).toEqual(merged);
  });
  it('sends only the declared properties to a schema that forbids more', () => {
    expect(mcpArguments(merged, { type: 'object', properties: { word: {}, phone_number: {} }, additionalProperties: false })).toEqual({ word: 'hi', phone_number: '+1' });
  });
});

describe('MCP results', () => {
  it('joins text, notes binary content and names links', () => {
    const text = mcpResultText({
      content: [
        { type: 'text', text: 'first' },
        { type: 'image', data: Buffer.alloc(3072).toString('base64'), mimeType: 'image/png' },
        { type: 'resource', resource: { uri: 'file:///a.txt', text: 'from a resource' } },
        { type: 'resource', resource: { uri: 'file:///b.bin', blob: 'AAAA', mimeType: 'application/pdf' } },
        { type: 'resource_link', uri: 'https://x.example/doc', name: 'doc' },
      ],
    });
    expect(text.split('\n')).toEqual([
      'first',
      '[image/png image, 3 KB, not shown]',
      'from a resource',
      '[resource file:///b.bin (application/pdf, 1 KB), not shown]',
      '[resource link: https://x.example/doc (doc)]',
    ]);
  });

  it('answers structuredContent when there is no content, and parses JSON text', () => {
    expect(mcpOutcome({ content: [], structuredContent: { a: 1 } }, 5)).toEqual({ status_code: null, response: { a: 1 }, duration_ms: 5, error: null });
    expect(mcpOutcome({ content: [{ type: 'text', text: 'plain' }] }, 1).response).toBe('plain');
  });

  it('turns isError into the outcome error with the server words', () => {
    expect(mcpOutcome({ isError: true, content: [{ type: 'text', text: 'no such order' }] }, 2)).toEqual({
      status_code: null,
      response: null,
      duration_ms: 2,
      error: 'the tool reported an error: no such order',
    });
  });
});
