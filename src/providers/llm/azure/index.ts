/**
 * Azure OpenAI with the openai SDK's AzureOpenAI client: the agent's llm_model is the deployment
 * name; AZURE_OPENAI_API_VERSION selects the REST API version.
 */
import { AzureOpenAI } from 'openai';
import { z } from 'zod';
import { configValues, optionalString, optionalUrl } from '../../../shared/config-fields';
import { firstMissing, required } from '../../vendor';
import type { LlmVendor } from '../types';

export const AZURE_OPENAI_DEFAULT_API_VERSION = '2024-10-21';

const AZURE_OPENAI_CONFIG = {
  AZURE_OPENAI_ENDPOINT: optionalUrl(),
  AZURE_OPENAI_API_KEY: optionalString,
  AZURE_OPENAI_API_VERSION: z.string().default(AZURE_OPENAI_DEFAULT_API_VERSION),
};

export const descriptor: LlmVendor = {
  name: 'azure',
  label: 'Azure OpenAI',
  env: ['AZURE_OPENAI_ENDPOINT', 'AZURE_OPENAI_API_KEY'],
  optionalEnv: ['AZURE_OPENAI_API_VERSION'],
  config: AZURE_OPENAI_CONFIG,
  transport: { kind: 'sdk', why: 'the openai SDK has an Azure client (deployment URLs, api-key header, api-version)' },
  // The deployment name: whatever the operator deployed; this is the usual name of a gpt-4o-mini deployment.
  defaultModel: 'gpt-4o-mini',
  structuredOutput: 'json_schema',
  missing: (config) => firstMissing(config, ['AZURE_OPENAI_ENDPOINT', 'AZURE_OPENAI_API_KEY']),
  client: (config, options) =>
    new AzureOpenAI({
      endpoint: required(config, 'AZURE_OPENAI_ENDPOINT'),
      apiKey: required(config, 'AZURE_OPENAI_API_KEY'),
      apiVersion: configValues(AZURE_OPENAI_CONFIG, config).AZURE_OPENAI_API_VERSION ?? AZURE_OPENAI_DEFAULT_API_VERSION,
      maxRetries: options?.maxRetries ?? 0,
      ...(options?.timeoutMs ? { timeout: options.timeoutMs } : {}),
    }),
};
