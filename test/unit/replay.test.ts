/**
 * Replays recorded workflow histories (test/replay/histories, made by `npm run record:histories`)
 * against the current workflow code: a change that would break calls already running fails here.
 */
import fs from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { workflowBundleOptions } from '../../src/worker/workflow-bundle';

const DIR = path.join(__dirname, '..', 'replay', 'histories');
const quiet = { trace() {}, debug() {}, info() {}, warn() {}, error: (m: string) => console.error(m) } as never;

describe('workflow replay', () => {
  const files = fs.readdirSync(DIR).filter((f) => f.endsWith('.binpb'));

  // Every path a call can take now (call workflows are pinned to their worker's deployment
  // version: no history of an older path is kept, docs/conversation-engine.md).
  it('has recorded histories of every path a call takes', () => {
    expect(files.sort()).toEqual(
      [
        // Text calls: freeform with a webhook tool, a flow to its terminal node, the idle timers.
        'freeform-tool-call.binpb',
        'flow-to-terminal.binpb',
        'idle-timeout.binpb',
        // A text call whose LLM used an MCP server's tool (docs/tools.md).
        'mcp-tool-call.binpb',
        // Knowledge bases (docs/knowledge-base.md): a document's ingestion, text calls in auto and tool mode.
        'knowledge-ingest.binpb',
        'knowledge-auto-call.binpb',
        'knowledge-tool-call.binpb',
        // A call_ended webhook delivery retried after a failure.
        'webhook-delivery-retried.binpb',
        // Post-call analysis, and its re-run (docs/post-call-analysis.md).
        'post-call-analysis.binpb',
        'analysis-rerun.binpb',
        // Agent tests (docs/agent-tests.md): a run, one of its attempts and that attempt's call.
        'agent-test-run.binpb',
        'agent-test-attempt.binpb',
        'agent-test-call.binpb',
        // Phone calls: armed turns with a tool round and a barge-in, a greeting cut off, a turn run.
        'voice-armed-turns.binpb',
        'voice-greeting-cut-off.binpb',
        'voice-turn-run.binpb',
        // Keypresses both ways: the caller's keys reach the LLM, the agent's send_dtmf.
        'voice-keypresses.binpb',
        // Transfer to a human (docs/phone-operations.md): handed over, and a busy destination coming back.
        'voice-transfer-answered.binpb',
        'voice-transfer-busy.binpb',
        // Warm transfer (docs/phone-operations.md#warm-transfer): briefed and joined, briefed and declined;
        // joined on Plivo (the destination's leg dialled by request id, joined by its CallUUID).
        'voice-warm-transfer-joined.binpb',
        'voice-warm-transfer-declined.binpb',
        'voice-warm-transfer-plivo-joined.binpb',
        // Outbound calls an answering machine took: the vendor's AMD, the gateway's detector.
        'voice-voicemail-vendor.binpb',
        'voice-voicemail-message.binpb',
        // A web call: a browser on /media/web (docs/web-calls.md).
        'web-call.binpb',
        // A web call whose gateway retrieved from a knowledge base in auto mode (docs/knowledge-base.md).
        'web-knowledge-call.binpb',
        // A phone call its gateway drained (docs/call-lifecycle.md, "Draining").
        'voice-drained.binpb',
        // A phone call that rode through a Temporal outage (scripts/record-outage-history.ts).
        'voice-temporal-outage.binpb',
        // A hang-up that overtook the greeting's report (scripts/record-hangup-race-history.ts).
        'voice-hangup-before-greeting-report.binpb',
      ].sort(),
    );
  });

  it('replays every recorded history without nondeterminism', async () => {
    // The unit tier has no global set-up, so no bundle made for it: this test bundles the code itself.
    const codePath = process.env.VAP_TEST_WORKFLOW_BUNDLE;
    const workflowBundle = codePath ? { codePath } : await bundleWorkflowCode({ ...workflowBundleOptions(), logger: quiet });
    const options = { workflowBundle };
    // One replay worker for all of them (a worker per history was most of this test's time).
    const histories = files.map((file) => ({
      workflowId: path.basename(file, '.binpb'),
      history: temporal.api.history.v1.History.decode(fs.readFileSync(path.join(DIR, file))),
    }));
    const failures: string[] = [];
    let replayed = 0;
    for await (const result of Worker.runReplayHistories(options, histories)) {
      replayed++;
      if (result.error) failures.push(`${result.workflowId}: ${result.error.message}`);
    }
    expect(failures).toEqual([]);
    expect(replayed).toBe(files.length);
    // Bundling takes 10 s on an idle machine and came within a second of jest's 60-s default on a loaded one.
  }, 180_000);
});
