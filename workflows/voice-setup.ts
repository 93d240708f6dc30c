/**
 * What a media gateway needs to set a voice call's audio up: the agent's speech settings and the
 * greeting the workflow will ask for first. The same pure function serves the workflow's
 * `voiceConfig` query and the memo the API starts the workflow with: the gateway reads the memo
 * from the server (`describe`) when the stream connects, without waiting for a call worker, and
 * starts synthesising the greeting at once. Workflow-safe.
 */
import { callVariables, substitute } from '../src/shared/template';
import type { VoicemailPlan } from '../src/voicemail/settings';
import type { CallWorkflowInput, VoiceConfig } from './call-definitions';

/** Memo key of the voice setup on call workflows. */
export const VOICE_MEMO_KEY = 'voice';

export function voiceSetup(input: CallWorkflowInput): VoiceConfig {
  const { agent } = input;
  const greets = input.channel === 'voice' && !input.carried && !!agent.greeting;
  return {
    agentName: agent.name,
    stt: agent.stt,
    tts: agent.tts,
    pipeline: agent.pipeline,
    // The first speech of the call, so `u1` (see CallContext.nextSpeechId).
    greeting: greets ? { utteranceId: 'u1', text: substitute(agent.greeting!, callVariables(input.customParameters, agent.context_variables)) } : null,
    ...(detectsVoicemail(input) ? { voicemail: voicemailPlan(input) } : {}),
  };
}

/** Outbound phone calls of an agent whose `voicemail.detect` is on listen for a machine. */
export function detectsVoicemail(input: CallWorkflowInput): boolean {
  return input.channel === 'voice' && input.direction === 'outbound' && input.agent.voicemail?.detect === true;
}

function voicemailPlan(input: CallWorkflowInput): VoicemailPlan {
  const vm = input.agent.voicemail!;
  const variables = callVariables(input.customParameters, input.agent.context_variables);
  return { action: vm.action, message: vm.message ? substitute(vm.message, variables) : null, utteranceId: 'voicemail' };
}

/** The memo's voice setup, if it has a usable one (calls started before it existed have none). */
export function voiceSetupFromMemo(memo: Record<string, unknown> | undefined): VoiceConfig | null {
  const v = memo?.[VOICE_MEMO_KEY] as Partial<VoiceConfig> | undefined;
  if (!v || typeof v !== 'object' || !v.stt || !v.tts || !v.pipeline || typeof v.agentName !== 'string') return null;
  return v as VoiceConfig;
}
