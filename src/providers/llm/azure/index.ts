/**
 * Azure OpenAI with the openai SDK's AzureOpenAI client: the agent's llm_model is the deployment
 * name; AZURE_OPENAI_API_VERSION selects the REST API version.
 */
import { AzureOpenAI } from 'openai';
import { DEFAULT_LLM_MODEL } from '../../../shared/catalog';
import { firstMissing, required } from '../../vendor';
import type { LlmVendor } from '../types';

export const AZURE_OPENAI_DEFAULT_API_VERSION = '2024-10-21';

export const descriptor: LlmVendor = {
  name: 'azure',
  label: 'Azure OpenAI',
  env: ['AZURE_OPENAI_ENDPOINT', 'AZURE_OPENAI_API_KEY'],
  optionalEnv: ['AZURE_OPENAI_API_VERSION'],
  transport: { kind: 'sdk', why: 'the openai SDK has an Azure client (deployment URLs, api-key header, api-version)' },
  defaultModel: DEFAULT_LLM_MODEL.azure,
  structuredOutput: 'json_schema',
  missing: (config) => firstMissing(config, ['AZURE_OPENAI_ENDPOINT', 'AZURE_OPENAI_API_KEY']),
  client: (config) =>
    new AzureOpenAI({
      endpoint: required(config, 'AZURE_OPENAI_ENDPOINT'),
      apiKey: required(config, 'AZURE_OPENAI_API_KEY'),
      apiVersion: config.AZURE_OPENAI_API_VERSION ?? AZURE_OPENAI_DEFAULT_API_VERSION,
      maxRetries: 0,
    }),
};
