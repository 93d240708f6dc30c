/** Request and response shapes of webhook tools. */
import { z } from 'zod';
import { TOOL_TIMEOUT_DEFAULT_SECS, TOOL_TIMEOUT_MAX_SECS } from '../../shared/catalog';
import { ParameterType, Timestamp, WebhookMethod } from './common';

export { PARAMETER_TYPES } from './common';
export const TOOL_NAME_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;
// LLM function-calling APIs accept parameter names of this form only.
const PARAMETER_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;
// RFC 9110 token characters; anything else would make the HTTP client throw at call time.
const HEADER_NAME_PATTERN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export const ToolNameSchema = z
  .string()
  .regex(TOOL_NAME_PATTERN, 'must be snake_case: a lower-case letter, then up to 63 lower-case letters, digits or underscores');

/** One parameter: JSON Schema keywords beyond type/description (enum, items, ...) are kept as given. */
const ParameterSchema = z
  .looseObject({
    type: ParameterType,
    description: z.string().optional(),
  })
  .meta({ id: 'ToolParameter' });

/**
 * The schema is kept whole, as the client wrote it: `type` (always "object"; added when left
 * out) and any other keyword besides `properties` and `required`, so what GET answers is the
 * JSON Schema that was sent.
 */
export const ToolParametersSchema = z
  .looseObject({
    type: z.literal('object').default('object'),
    properties: z.record(z.string(), ParameterSchema),
    required: z.array(z.string()).default([]),
  })
  .superRefine((value, ctx) => {
    for (const name of Object.keys(value.properties)) {
      if (!PARAMETER_NAME_PATTERN.test(name)) {
        ctx.addIssue({ code: 'custom', path: ['properties', name], message: 'parameter names must match [A-Za-z_][A-Za-z0-9_-]{0,63}' });
      }
    }
    value.required.forEach((name, i) => {
      if (!(name in value.properties)) {
        ctx.addIssue({ code: 'custom', path: ['required', i], message: `"${name}" is not one of the properties` });
      } else if (value.required.indexOf(name) !== i) {
        ctx.addIssue({ code: 'custom', path: ['required', i], message: `"${name}" is listed twice` });
      }
    });
  })
  .meta({ id: 'ToolParameters', description: 'JSON Schema form: { type: "object", properties: { <name>: { type, description } }, required: [<name>] }' });

export const ToolHeadersSchema = z
  .record(z.string(), z.string().refine((v) => !/[\r\n]/.test(v), 'header values cannot contain line breaks'))
  .superRefine((value, ctx) => {
    for (const name of Object.keys(value)) {
      if (!HEADER_NAME_PATTERN.test(name)) ctx.addIssue({ code: 'custom', path: [name], message: 'not a valid HTTP header name' });
    }
  })
  .describe('custom HTTP headers sent with every webhook request (stored encrypted)');

const WebhookUrlSchema = z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' });
const TimeoutSchema = z
  .number()
  .int()
  .min(1)
  .max(TOOL_TIMEOUT_MAX_SECS)
  .describe(`request timeout in seconds, 1 to ${TOOL_TIMEOUT_MAX_SECS}`);

export const ToolCreateSchema = z.object({
  name: ToolNameSchema.describe('unique function name shown to the LLM; cannot be changed later'),
  description: z.string().trim().min(1).describe('tells the LLM when to call the tool'),
  parameters: ToolParametersSchema,
  webhook_url: WebhookUrlSchema,
  webhook_method: WebhookMethod.default('POST'),
  headers: ToolHeadersSchema.default({}),
  timeout_secs: TimeoutSchema.default(TOOL_TIMEOUT_DEFAULT_SECS),
}).meta({ id: 'ToolCreate' });

export const ToolPatchSchema = z.object({
  name: z.string().optional().describe('may be sent but must equal the current name'),
  description: z.string().trim().min(1).optional(),
  parameters: ToolParametersSchema.optional(),
  webhook_url: WebhookUrlSchema.optional(),
  webhook_method: WebhookMethod.optional(),
  headers: ToolHeadersSchema.nullable().optional().describe('replaces all headers; null or {} removes them'),
  timeout_secs: TimeoutSchema.optional(),
}).meta({ id: 'ToolPatch' });

export const ToolSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  description: z.string(),
  parameters: ToolParametersSchema,
  webhook_url: z.string(),
  webhook_method: WebhookMethod,
  headers: z.record(z.string(), z.string()).describe('values masked: the last four characters'),
  timeout_secs: z.number().int(),
  created_at: Timestamp,
  updated_at: Timestamp,
  owner_id: z.uuid().nullable().describe('the user who created it (members may change only their own); null = the administrators\''),
}).meta({ id: 'Tool' });

export const ToolTestBodySchema = z.object({
  args: z.record(z.string(), z.unknown()).default({}).describe('arguments as the LLM would pass them'),
});

export const ToolTestResultSchema = z.object({
  status_code: z.number().int().nullable().describe('HTTP status of the webhook; null when no response arrived'),
  response: z.unknown().describe('parsed JSON body, or the body text'),
  duration_ms: z.number().int(),
  error: z.string().nullable().describe('null on success; timeout, DNS failure, refused connection, HTTP status or invalid JSON'),
}).meta({ id: 'ToolTestResult' });
