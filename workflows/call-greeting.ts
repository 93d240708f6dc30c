/**
 * The start of the conversation: the greeting and the pre-call tools in parallel, then the flow's
 * initial node. On voice calls the first turn is armed while the greeting plays. A client-managed
 * call gets no greeting and enters its initial node silently: the agent speaks only when spoken
 * to. Also the greeting planned for the gateway (voiceConfig), which synthesises it the moment the
 * stream connects. Workflow code: deterministic, no I/O.
 */
import { substitute } from '../src/shared/template';
import type { VoiceConfig } from './call-definitions';
import type { CallContext } from './call-context';
import type { AgentTurns } from './agent-turns';
import type { CallTools } from './call-tools';
import type { TurnLoop } from './turn-loop';
import type { TurnArming } from './turn-arming';
import { isFinal } from './call-status';
import { initialNode } from './conversation';

export class Greeting {
  constructor(
    private readonly ctx: CallContext,
    private readonly agent: AgentTurns,
    private readonly tools: CallTools,
    private readonly turns: TurnLoop,
    private readonly arming: TurnArming | null,
  ) {}

  async begin(): Promise<void> {
    const { ctx } = this;
    const { agent, customParameters } = ctx.input;
    const preCall = agent.pre_call_tool_ids.map((id) => this.tools.runForContext(id, { ...customParameters }, 'pre_call'));
    try {
      if (agent.greeting && !ctx.clientManaged) {
        ctx.greeting = substitute(agent.greeting, ctx.conv.variables);
        // The first turn is armed while the greeting plays (if nothing else comes before it): armed
        // after the greeting's result, it was often later than the caller's answer under load.
        const early = this.arming !== null && preCall.length === 0 && !initialNode(agent);
        const saying = ctx.say(ctx.greeting);
        if (early) this.turns.armNext(ctx.greeting);
        const heard = await saying;
        // Cut off: the plan assumed the whole greeting. The gateway does not use it then; taken back.
        if (early && heard !== ctx.greeting) await this.arming!.disarm();
      }
      await Promise.all(preCall);
      const first = initialNode(agent);
      if (first) await this.agent.enterNode(first, null, { silent: ctx.clientManaged });
    } catch (err) {
      ctx.failOn(err);
    }
    ctx.greetingDone = true;
    ctx.lastActivityMs = Date.now();
    // Arming the first turn does not wait for this write: under load that round trip took longer
    // than the caller's pause after the greeting. Writes stay in order (the recorder chains them).
    void ctx.recorder.flush(ctx.patch());
  }

  /**
   * The greeting begin() will speak, with the id its `speak` will carry, while it has not started:
   * the gateway synthesises it the moment the stream connects instead of waiting for the request.
   */
  planned(): VoiceConfig['greeting'] {
    const { ctx } = this;
    const { agent } = ctx.input;
    if (!ctx.isVoice || ctx.input.carried || ctx.greetingDone || ctx.speechCount > 0 || !agent.greeting) return null;
    if (ctx.clientManaged || isFinal(ctx.status) || ctx.endRequest !== null) return null;
    return { utteranceId: `u${ctx.speechCount + 1}`, text: substitute(agent.greeting, ctx.conv.variables) };
  }
}
