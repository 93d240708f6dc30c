/**
 * Every registered vendor's configuration keys, from the four registries (telephony, STT, TTS,
 * LLM): src/config.ts adds them to its schema. A key two descriptors share (one API key for a
 * vendor's STT and TTS) is declared once, in one of the vendor's folders, and imported by the other.
 */
import type { ConfigShape } from '../shared/config-fields';
import { LLM_VENDORS } from './llm/registry';
import { STT_VENDORS } from './stt/registry';
import { telephonyDescriptors } from './telephony/registry';
import { TTS_VENDORS } from './tts/registry';

export function vendorConfigShape(): ConfigShape {
  const shape: Record<string, ConfigShape[string]> = {};
  const owner: Record<string, string> = {};
  const vendors = [...telephonyDescriptors(), ...STT_VENDORS, ...TTS_VENDORS, ...LLM_VENDORS];
  for (const vendor of vendors) {
    for (const [key, schema] of Object.entries(vendor.config)) {
      if (shape[key] && shape[key] !== schema) throw new Error(`${key} is declared by ${owner[key]} and, differently, by ${vendor.name}`);
      shape[key] = schema;
      owner[key] = vendor.name;
    }
  }
  return shape;
}
