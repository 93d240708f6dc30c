/**
 * A call's tools: webhook tools (the `callTool` activity, or a test call's mocked results),
 * pre-call tools and `call_tool` pre-actions whose results become context for the LLM, and
 * `send_dtmf` keypresses. Workflow code: deterministic, no I/O.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { CallContext } from './call-context';
import { dtmfDigits, SEND_DTMF, stringify, toolArguments } from './conversation';
import { mockedToolOutcome } from './tool-mocks';

export class CallTools {
  /** Test calls: how many times each tool has answered from its mocked results. */
  private readonly mockUses = new Map<string, number>();

  constructor(private readonly ctx: CallContext) {}

  async run(toolId: string, args: Record<string, unknown>, toolCallId: string) {
    const { input, recorder } = this.ctx;
    const tool = input.agent.tools.find((t) => t.id === toolId)!;
    const { callTool } = proxyActivities<Activities>({
      // The webhook's own timeout plus room for the request to start; a crashed worker is noticed
      // by the heartbeat long before that and the call is retried with the same Idempotency-Key.
      startToCloseTimeout: `${tool.timeout_secs + 5}s`,
      heartbeatTimeout: '3s',
      retry: { initialInterval: '500ms', maximumAttempts: 3 },
    });
    // A test call (docs/agent-tests.md) calls no webhook: its results come with the input.
    const mocked = input.test ? mockedToolOutcome(input.test, tool.name, this.mockUses) : null;
    let outcome;
    if (mocked) outcome = mocked;
    else {
      try {
        outcome = await callTool({ callId: input.callId, toolCallId, tool, args });
      } catch (err) {
        outcome = { status_code: null, response: null, duration_ms: 0, error: `tool activity failed: ${(err as Error).message}` };
      }
    }
    recorder.record('tool_result', {
      function: tool.name,
      result: outcome.response,
      status_code: outcome.status_code,
      duration_ms: outcome.duration_ms,
      error: outcome.error,
      ...(mocked ? { mocked: mocked.error === null } : {}),
    });
    return outcome;
  }

  /** Pre-call tools and call_tool pre-actions: the result becomes context for the LLM. */
  async runForContext(toolId: string, args: Record<string, unknown>, source: string): Promise<void> {
    const { input, recorder, conv } = this.ctx;
    const tool = input.agent.tools.find((t) => t.id === toolId);
    if (!tool) return;
    recorder.record('tool_called', { function: tool.name, args, source });
    const full = toolArguments(args, input.customParameters, input);
    const outcome = await this.run(toolId, full, `${source}-${tool.name}-${recorder.nextSeq}`);
    const text = outcome.error ? `unavailable (${outcome.error})` : stringify(outcome.response);
    conv.injectedContext.push(`Context from ${tool.name}: ${text}`);
    recorder.record('context_injected', { source, tool: tool.name, content: text });
  }

  /** send_dtmf: the keys go out as tones in the call's audio (the gateway); text calls only record them. */
  async pressKeys(args: Record<string, unknown>): Promise<string> {
    const { ctx } = this;
    const digits = dtmfDigits(args);
    if (digits === null) {
      const error = 'digits must be keys of a phone keypad: 0-9, * and #';
      ctx.recorder.record('tool_result', { function: SEND_DTMF, result: null, error });
      return `Error: ${error}.`;
    }
    ctx.requireChannel();
    const channel = ctx.voice;
    if (!channel) {
      ctx.recorder.record('tool_result', { function: SEND_DTMF, result: { digits, method: 'none' } });
      return `ok, pressed ${digits}`;
    }
    const sent = await channel.sendDtmf(digits, ctx.nextSpeechId());
    ctx.recordGatewayEvents(sent.events);
    ctx.recorder.record('tool_result', { function: SEND_DTMF, result: { digits, method: sent.method }, duration_ms: sent.playedMs });
    return `ok, pressed ${digits}`;
  }
}
