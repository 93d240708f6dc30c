/**
 * The agent's side of a call: one turn's LLM rounds with tool calls (webhook and MCP tools, flow
 * functions, end_call, send_dtmf, transfer_call), the LLM request of the call's state, and flow-node
 * entry with its pre-actions. Workflow code: deterministic, no I/O.
 */
import { substitute, substituteDeep } from '../src/shared/template';
import type { LlmTurnRequest, SnapshotNode } from './call-definitions';
import type { CallContext } from './call-context';
import type { CallTools } from './call-tools';
import { CallMcpTools } from './mcp-tools';
import { CallKnowledge } from './call-knowledge';
import { GatewayLost, type Thought } from './channels';
import { END_CALL, findNode, SEND_DTMF, offeredTools, systemMessages, toolArguments, toolResultText } from './conversation';
import { canTransfer, type Transfer } from './call-transfer';
import { MAX_TOOL_ROUNDS_PER_TURN } from './call-limits';
import type { Utterance } from './utterance';
import { TRANSFER_CALL } from '../src/shared/transfer';

export class AgentTurns {
  private readonly mcp: CallMcpTools;
  private readonly knowledge: CallKnowledge;

  constructor(
    private readonly ctx: CallContext,
    private readonly tools: CallTools,
    private readonly transfer: Transfer,
  ) {
    this.mcp = new CallMcpTools(ctx);
    this.knowledge = new CallKnowledge(ctx);
  }

  /** LLM rounds until the agent answers without calling tools (or ends the call); returns what the caller heard. */
  async turn(transientInstruction?: string, prepared?: Utterance['prepared']): Promise<string[]> {
    const { ctx } = this;
    const replies: string[] = [];
    // An armed turn's reply the caller already heard is recorded even after they hung up; its
    // tools are not run (nobody is left to hear what they would change).
    const spokenAfterEnd = prepared?.thought != null && ctx.endRequest !== null;
    for (let round = 0; round < MAX_TOOL_ROUNDS_PER_TURN && (ctx.endRequest === null || (round === 0 && spokenAfterEnd)); round++) {
      const result = round === 0 && prepared ? await this.preparedLlm(prepared) : await this.callLlm(transientInstruction);
      // What the caller actually heard: on barge-in, only the part played before they spoke.
      const said = result.heardText;
      if (said) {
        replies.push(said);
        ctx.recorder.record('agent_spoke', { text: said, ...(result.interrupted ? { interrupted: true } : {}) });
      }
      // Tool calls of a reply the caller cut off are dropped: they answered what was not heard.
      const toolCalls = result.interrupted || spokenAfterEnd ? [] : result.toolCalls;
      // An assistant message needs text or tool calls (a reply cut off before any audio has neither).
      if (said || toolCalls.length) {
        ctx.conv.history.push({
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
        ctx.conv.history.push({ role: 'tool', tool_call_id: call.id, content: output });
      }
    }
    return replies;
  }

  /** The LLM request of the current state (the caller's words, if any, already in the history). */
  llmRequest(transientInstruction?: string): LlmTurnRequest {
    const { input, conv, prompt } = this.ctx;
    const { agent, customParameters, callId } = input;
    const messages = [...systemMessages(prompt, agent, conv, customParameters), ...conv.history];
    if (transientInstruction) messages.push({ role: 'system', content: transientInstruction });
    const knowledge = this.knowledge.autoRequest();
    return {
      callId,
      provider: agent.llm_provider,
      model: agent.llm_model,
      temperature: agent.llm_settings.temperature,
      maxTokens: agent.llm_settings.max_tokens,
      messages,
      tools: transientInstruction ? [] : [...offeredTools(agent, conv, { ...input, transferable: canTransfer(input) }), ...this.knowledge.toolSpecs()],
      ...(knowledge && !transientInstruction ? { knowledge } : {}),
    };
  }

  private async callLlm(transientInstruction?: string): Promise<Thought> {
    const result = await this.ctx.requireChannel().think(this.llmRequest(transientInstruction), this.ctx.nextSpeechId());
    return this.countThought(result);
  }

  /** The reply the gateway started for an armed turn (or the retries of its failed LLM request). */
  private async preparedLlm(prepared: NonNullable<Utterance['prepared']>): Promise<Thought> {
    if (prepared.thought) return this.countThought(prepared.thought);
    this.ctx.requireChannel();
    const channel = this.ctx.voice;
    if (!channel) throw new GatewayLost('no media gateway holds this call');
    const request = { ...(prepared.request ?? this.llmRequest()), messages: this.llmRequest().messages };
    return this.countThought(await channel.retryArmed(request, this.ctx.nextSpeechId(), prepared.failure!));
  }

  private countThought(result: Thought): Thought {
    const { ctx } = this;
    ctx.countSpeech(result);
    ctx.totals.llm_prompt_tokens += result.usage.prompt_tokens;
    ctx.totals.llm_completion_tokens += result.usage.completion_tokens;
    // Before the usage: the retrieval happened before the LLM request.
    this.knowledge.record(result.knowledge);
    ctx.recorder.record('llm_usage', { ...result.usage, model: ctx.input.agent.llm_model });
    if (result.ttfbMs !== null) ctx.recorder.record('ttfb_metric', { processor: 'llm', ms: result.ttfbMs });
    return result;
  }

  /** Runs one tool call of the LLM; returns the text the LLM gets back. */
  private async handleToolCall(call: Thought['toolCalls'][number], replies: string[]): Promise<string> {
    const { ctx } = this;
    const { input, recorder, conv } = ctx;
    const mcpTool = this.mcp.offered(call.name);
    recorder.record('tool_called', { function: call.name, args: call.arguments, ...(mcpTool ? { server: mcpTool.server, tool: mcpTool.tool } : {}) });
    if (mcpTool) return toolResultText(await this.mcp.run(mcpTool, toolArguments(call.arguments, input.customParameters, input), call.id));
    if (this.knowledge.offers(call.name)) return this.knowledge.search(call.arguments);
    if (call.name === END_CALL) {
      recorder.record('tool_result', { function: call.name, result: 'ok' });
      ctx.requestEnd('agent_ended');
      return 'ok';
    }
    if (call.name === SEND_DTMF) return this.tools.pressKeys(call.arguments);
    if (call.name === TRANSFER_CALL) return this.transfer.transferCall(String(call.arguments.destination ?? ''), 'tool');
    const node = findNode(input.agent, conv.nodeKey);
    const fn = node?.functions.find((f) => f.name === call.name);
    if (fn) {
      Object.assign(conv.variables, call.arguments);
      const next = fn.next_node_key ? findNode(input.agent, fn.next_node_key) : undefined;
      recorder.record('tool_result', { function: call.name, result: next ? `moved to ${next.node_key}` : 'recorded' });
      if (next) replies.push(...(await this.enterNode(next, fn.name)));
      return next ? `ok, moved to ${next.node_key}` : 'ok';
    }
    const tool = input.agent.tools.find((t) => t.name === call.name);
    if (!tool) {
      const message = `unknown function ${call.name}`;
      recorder.record('tool_result', { function: call.name, result: null, error: message });
      return `Error: ${message}.`;
    }
    const outcome = await this.tools.run(tool.id, toolArguments(call.arguments, input.customParameters, input), call.id);
    return toolResultText(outcome);
  }

  /**
   * Enters a flow node: events, variable substitution (at use), pre-actions. Returns said texts;
   * `silent` skips the `say` pre-actions (nobody asked the agent anything yet).
   */
  async enterNode(node: SnapshotNode, viaFunction: string | null, options: { silent?: boolean } = {}): Promise<string[]> {
    const { ctx } = this;
    const { conv, recorder } = ctx;
    const from = conv.nodeKey;
    if (from !== null) recorder.record('node_transition', { from, to: node.node_key, function: viaFunction });
    conv.nodeKey = node.node_key;
    recorder.record('node_entered', { node_key: node.node_key });
    ctx.describe();
    const said: string[] = [];
    for (const action of node.pre_actions) {
      if (action.type === 'say') {
        if (options.silent) continue;
        const heard = await ctx.say(substitute(action.text, conv.variables));
        if (heard) said.push(heard);
      } else if (action.type === 'call_tool') {
        const args = substituteDeep(action.args ?? {}, conv.variables) as Record<string, unknown>;
        await this.tools.runForContext(action.tool_id, args, `pre_action:${node.node_key}`);
      } else if (action.type === 'end_call') {
        ctx.requestEnd('agent_ended');
      } else if (action.type === 'transfer_call') {
        recorder.record('tool_called', { function: TRANSFER_CALL, args: { destination: action.destination }, source: `pre_action:${node.node_key}` });
        const result = await this.transfer.transferCall(action.destination, `pre_action:${node.node_key}`);
        // Whatever became of it, the LLM's next round knows (a failed transfer: the caller is back).
        if (ctx.endRequest === null) conv.history.push({ role: 'system', content: result });
      }
    }
    return said;
  }
}
