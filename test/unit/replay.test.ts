/**
 * Replays recorded workflow histories (test/replay/histories, made by `npm run record:histories`)
 * against the current workflow code: a change that would break calls already running fails here.
 */
import fs from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';

const DIR = path.join(__dirname, '..', 'replay', 'histories');
const quiet = { trace() {}, debug() {}, info() {}, warn() {}, error: (m: string) => console.error(m) } as never;

describe('workflow replay', () => {
  const files = fs.readdirSync(DIR).filter((f) => f.endsWith('.binpb'));

  it('has recorded histories of calls and webhook deliveries', () => {
    expect(files).toEqual(expect.arrayContaining(['freeform-tool-call.binpb', 'flow-to-terminal.binpb', 'idle-timeout.binpb', 'webhook-delivery-retried.binpb', 'voice-armed-turns.binpb', 'post-call-analysis.binpb', 'analysis-rerun.binpb']));
    // A phone call its gateway drained (docs/call-lifecycle.md, "Draining").
    expect(files).toContain('voice-drained.binpb');
    // Agent tests (docs/agent-tests.md): a run, one of its attempts and that attempt's call.
    expect(files).toEqual(expect.arrayContaining(['agent-test-run.binpb', 'agent-test-attempt.binpb', 'agent-test-call.binpb']));
    // Transfer to a human (docs/phone-operations.md): handed over, and a busy destination coming back.
    expect(files).toEqual(expect.arrayContaining(['voice-transfer-answered.binpb', 'voice-transfer-busy.binpb']));
    // A phone call that rode through a Temporal outage (scripts/record-outage-history.ts).
    expect(files).toContain('voice-temporal-outage.binpb');
    // Outbound calls an answering machine took: the vendor's AMD, the gateway's detector (docs/phone-operations.md#voicemail-on-outbound-calls).
    expect(files).toEqual(expect.arrayContaining(['voice-voicemail-vendor.binpb', 'voice-voicemail-message.binpb']));
    // A hang-up that overtook the greeting's report, before and since the turn armed meanwhile is
    // settled (scripts/record-hangup-race-history.ts).
    expect(files).toEqual(expect.arrayContaining(['voice-hangup-before-greeting-report.binpb', 'voice-hangup-before-greeting-report-call-patches-4.binpb']));
    // Incoming phone calls from before their workflow started with the stream (call-lifecycle.md).
    expect(files).toEqual(expect.arrayContaining(['voice-armed-turns-2026-11-27.binpb', 'voice-turn-run-2026-11-27.binpb', 'voice-transfer-busy-2026-11-27.binpb']));
  });

  it('replays every recorded history without nondeterminism', async () => {
    // The unit tier has no global set-up, so no bundle made for it: this test bundles the code itself.
    const codePath = process.env.VAP_TEST_WORKFLOW_BUNDLE;
    const workflowBundle = codePath ? { codePath } : await bundleWorkflowCode({ workflowsPath: require.resolve('../../workflows'), logger: quiet });
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
