/**
 * The agent's side of a call: LLM rounds with tool calls (webhook tools, flow functions,
 * end_call), flow-node entry with its pre-actions, fixed texts spoken. Workflow code.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { substitute, substituteDeep } from '../src/shared/template';
import type { LlmTurnRequest, SnapshotNode } from './call-definitions';
import { GatewayLost, VoiceChannel, type Thought } from './channels';
import {
  dtmfDigits,
  END_CALL,
  findNode,
  SEND_DTMF,
  offeredTools,
  stringify,
  systemMessages,
  toolArguments,
  toolResultText,
} from './conversation';
import { CallState } from './call-state';
import { MAX_TOOL_ROUNDS_PER_TURN } from './call-limits';
import type { Utterance } from './utterance';
import { mockedToolOutcome } from './tool-mocks';
import { TRANSFER_CALL } from '../src/shared/transfer';

export abstract class AgentTurns extends CallState {
  /** transfer_call (call-transfer.ts): returns the text the LLM gets back. */
  protected abstract transferCall(destination: string, source: string): Promise<string>;
  /** Whether transfer_call is offered on this call. */
  protected abstract canTransfer(): boolean;

  /** Test calls: how many times each tool has answered from its mocked results. */
  private readonly toolMockUses = new Map<string, number>();

  // ---- agent turns ---------------------------------------------------------------------------

  /** LLM rounds until the agent answers without calling tools (or ends the call). */
  protected async agentTurn(transientInstruction?: string, prepared?: Utterance['prepared']): Promise<string[]> {
    const replies: string[] = [];
    // An armed turn's reply the caller already heard is recorded even after they hung up; its
    // tools are not run (nobody is left to hear what they would change).
    const spokenAfterEnd = prepared?.thought != null && this.endRequest !== null;
    for (let round = 0; round < MAX_TOOL_ROUNDS_PER_TURN && (this.endRequest === null || (round === 0 && spokenAfterEnd)); round++) {
      const result = round === 0 && prepared ? await this.preparedLlm(prepared) : await this.callLlm(transientInstruction);
      // What the caller actually heard: on barge-in, only the part played before they spoke.
      const said = result.heardText;
      if (said) {
        replies.push(said);
        this.recorder.record('agent_spoke', { text: said, ...(result.interrupted ? { interrupted: true } : {}) });
      }
      // Tool calls of a reply the caller cut off are dropped: they answered what was not heard.
      const toolCalls = result.interrupted || spokenAfterEnd ? [] : result.toolCalls;
      // An assistant message needs text or tool calls (a reply cut off before any audio has neither).
      if (said || toolCalls.length) {
        this.conv.history.push({
          role: 'assistant',
          content: said || null,
          ...(toolCalls.length
            ? {
                tool_calls: toolCalls.map((tc) => ({
                  id: tc.id,
                  type: 'function' as const,
                  function: { name: tc.name, arguments: JSON.stringify(tc.arguments) },
                })),
              }
            : {}),
        });
      }
      if (!toolCalls.length) break;
      for (const call of toolCalls) {
        const output = await this.handleToolCall(call, replies);
        this.conv.history.push({ role: 'tool', tool_call_id: call.id, content: output });
      }
    }
    return replies;
  }

  /** The LLM request of the current state (the caller's words, if any, already in the history). */
  protected llmRequest(transientInstruction?: string): LlmTurnRequest {
    const { agent, customParameters, callId } = this.input;
    const messages = [...systemMessages(this.prompt, agent, this.conv, customParameters), ...this.conv.history];
    if (transientInstruction) messages.push({ role: 'system', content: transientInstruction });
    return {
      callId,
      provider: agent.llm_provider,
      model: agent.llm_model,
      temperature: agent.llm_settings.temperature,
      maxTokens: agent.llm_settings.max_tokens,
      messages,
      tools: transientInstruction ? [] : offeredTools(agent, this.conv, { ...this.input, transferable: this.canTransfer() }),
    };
  }

  protected async callLlm(transientInstruction?: string): Promise<Thought> {
    const result = await this.requireChannel().think(this.llmRequest(transientInstruction), this.nextSpeechId());
    return this.countThought(result);
  }

  /** The reply the gateway started for an armed turn (or the retries of its failed LLM request). */
  protected async preparedLlm(prepared: NonNullable<Utterance['prepared']>): Promise<Thought> {
    if (prepared.thought) return this.countThought(prepared.thought);
    const channel = this.requireChannel();
    if (!(channel instanceof VoiceChannel)) throw new GatewayLost('no media gateway holds this call');
    const request = { ...(prepared.request ?? this.llmRequest()), messages: this.llmRequest().messages };
    return this.countThought(await channel.retryArmed(request, this.nextSpeechId(), prepared.failure!));
  }

  protected countThought(result: Thought): Thought {
    const { agent } = this.input;
    this.countSpeech(result);
    this.totals.llm_prompt_tokens += result.usage.prompt_tokens;
    this.totals.llm_completion_tokens += result.usage.completion_tokens;
    this.recorder.record('llm_usage', { ...result.usage, model: agent.llm_model });
    if (result.ttfbMs !== null) this.recorder.record('ttfb_metric', { processor: 'llm', ms: result.ttfbMs });
    return result;
  }

  /** Runs one tool call of the LLM; returns the text the LLM gets back. */
  protected async handleToolCall(call: Thought['toolCalls'][number], replies: string[]): Promise<string> {
    const { agent } = this.input;
    this.recorder.record('tool_called', { function: call.name, args: call.arguments });
    if (call.name === END_CALL) {
      this.recorder.record('tool_result', { function: call.name, result: 'ok' });
      this.requestEnd('agent_ended');
      return 'ok';
    }
    if (call.name === SEND_DTMF) return this.pressKeys(call.arguments);
    if (call.name === TRANSFER_CALL) return this.transferCall(String(call.arguments.destination ?? ''), 'tool');
    const node = findNode(agent, this.conv.nodeKey);
    const fn = node?.functions.find((f) => f.name === call.name);
    if (fn) {
      Object.assign(this.conv.variables, call.arguments);
      const next = fn.next_node_key ? findNode(agent, fn.next_node_key) : undefined;
      this.recorder.record('tool_result', { function: call.name, result: next ? `moved to ${next.node_key}` : 'recorded' });
      if (next) replies.push(...(await this.enterNode(next, fn.name)));
      return next ? `ok, moved to ${next.node_key}` : 'ok';
    }
    const tool = agent.tools.find((t) => t.name === call.name);
    if (!tool) {
      const message = `unknown function ${call.name}`;
      this.recorder.record('tool_result', { function: call.name, result: null, error: message });
      return `Error: ${message}.`;
    }
    const outcome = await this.runTool(tool.id, toolArguments(call.arguments, this.input.customParameters, this.input), call.id);
    return toolResultText(outcome);
  }

  /** send_dtmf: the keys go out as tones in the call's audio (the gateway); text calls only record them. */
  private async pressKeys(args: Record<string, unknown>): Promise<string> {
    const digits = dtmfDigits(args);
    if (digits === null) {
      const error = 'digits must be keys of a phone keypad: 0-9, * and #';
      this.recorder.record('tool_result', { function: SEND_DTMF, result: null, error });
      return `Error: ${error}.`;
    }
    const channel = this.requireChannel();
    if (!(channel instanceof VoiceChannel)) {
      this.recorder.record('tool_result', { function: SEND_DTMF, result: { digits, method: 'none' } });
      return `ok, pressed ${digits}`;
    }
    const sent = await channel.sendDtmf(digits, this.nextSpeechId());
    this.recordGatewayEvents(sent.events);
    this.recorder.record('tool_result', { function: SEND_DTMF, result: { digits, method: sent.method }, duration_ms: sent.playedMs });
    return `ok, pressed ${digits}`;
  }

  protected async runTool(toolId: string, args: Record<string, unknown>, toolCallId: string) {
    const tool = this.input.agent.tools.find((t) => t.id === toolId)!;
    const { callTool } = proxyActivities<Activities>({
      // The webhook's own timeout plus room for the request to start; a crashed worker is noticed
      // by the heartbeat long before that and the call is retried with the same Idempotency-Key.
      startToCloseTimeout: `${tool.timeout_secs + 5}s`,
      heartbeatTimeout: '3s',
      retry: { initialInterval: '500ms', maximumAttempts: 3 },
    });
    // A test call (docs/agent-tests.md) calls no webhook: its results come with the input.
    const mocked = this.input.test ? mockedToolOutcome(this.input.test, tool.name, this.toolMockUses) : null;
    let outcome;
    if (mocked) outcome = mocked;
    else {
      try {
        outcome = await callTool({ callId: this.input.callId, toolCallId, tool, args });
      } catch (err) {
        outcome = { status_code: null, response: null, duration_ms: 0, error: `tool activity failed: ${(err as Error).message}` };
      }
    }
    this.recorder.record('tool_result', {
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
  protected async runToolForContext(toolId: string, args: Record<string, unknown>, source: string): Promise<void> {
    const tool = this.input.agent.tools.find((t) => t.id === toolId);
    if (!tool) return;
    this.recorder.record('tool_called', { function: tool.name, args, source });
    const full = toolArguments(args, this.input.customParameters, this.input);
    const outcome = await this.runTool(toolId, full, `${source}-${tool.name}-${this.recorder.nextSeq}`);
    const text = outcome.error ? `unavailable (${outcome.error})` : stringify(outcome.response);
    this.conv.injectedContext.push(`Context from ${tool.name}: ${text}`);
    this.recorder.record('context_injected', { source, tool: tool.name, content: text });
  }

  /**
   * Enters a flow node: events, variable substitution (at use), pre-actions. Returns said texts;
   * `silent` skips the `say` pre-actions (nobody asked the agent anything yet).
   */
  protected async enterNode(node: SnapshotNode, viaFunction: string | null, options: { silent?: boolean } = {}): Promise<string[]> {
    const from = this.conv.nodeKey;
    if (from !== null) this.recorder.record('node_transition', { from, to: node.node_key, function: viaFunction });
    this.conv.nodeKey = node.node_key;
    this.recorder.record('node_entered', { node_key: node.node_key });
    this.describe();
    const said: string[] = [];
    for (const action of node.pre_actions) {
      if (action.type === 'say') {
        if (options.silent) continue;
        const heard = await this.agentSays(substitute(action.text, this.conv.variables));
        if (heard) said.push(heard);
      } else if (action.type === 'call_tool') {
        const args = substituteDeep(action.args ?? {}, this.conv.variables) as Record<string, unknown>;
        await this.runToolForContext(action.tool_id, args, `pre_action:${node.node_key}`);
      } else if (action.type === 'end_call') {
        this.requestEnd('agent_ended');
      } else if (action.type === 'transfer_call') {
        this.recorder.record('tool_called', { function: TRANSFER_CALL, args: { destination: action.destination }, source: `pre_action:${node.node_key}` });
        const result = await this.transferCall(action.destination, `pre_action:${node.node_key}`);
        // Whatever became of it, the LLM's next round knows (a failed transfer: the caller is back).
        if (this.endRequest === null) this.conv.history.push({ role: 'system', content: result });
      }
    }
    return said;
  }

  /** The agent speaks a fixed text (greeting, `say` pre-action); returns what the caller heard. */
  protected async agentSays(text: string): Promise<string> {
    const spoken = await this.requireChannel().say(text, this.nextSpeechId());
    this.countSpeech(spoken);
    if (spoken.heardText) {
      this.recorder.record('agent_spoke', { text: spoken.heardText, ...(spoken.interrupted ? { interrupted: true } : {}) });
      this.conv.history.push({ role: 'assistant', content: spoken.heardText });
    }
    return spoken.heardText;
  }

}
