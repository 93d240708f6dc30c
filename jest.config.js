/**
 * The test tiers (docs/development.md, "How the tests run"); `npm test` runs them one after the
 * other through scripts/run-tests.js, `npm run test:<tier>` runs one.
 *
 * - unit: test/unit, no PostgreSQL or Temporal (no global set-up), in parallel workers.
 * - integration: test/integration and test/security against the one PostgreSQL and Temporal dev
 *   server of the global set-up, several files at a time (each has its own database, task queue
 *   and ports).
 * - timed: the integration files listed in TIMED (why each is there is said next to it) and the
 *   browser tests, two files at a time, after the integration tier: they time real-time audio,
 *   which three files at a time beside the rest of the integration tier missed.
 * - durability: the files listed in DURABILITY, one at a time, beside the timed project's two
 *   (scripts/run-tests.js runs both jest runs at once for the `timed` tier).
 */
// Files that kill and restart processes (workers, gateways, the API, their own Temporal server)
// and wait for them with deadlines, or time an outage: with neighbours starting up beside them
// the processes missed their start-up deadlines (a parallel run, docs/development.md). They run
// one at a time, beside the two timed files (`durability` below): mostly they wait.
const DURABILITY = [
  'test/integration/temporal-outage.test.ts',
  'test/integration/multi-gateway.test.ts',
  'test/integration/gateway-drain.test.ts',
  'test/integration/graceful-stop.test.ts',
  'test/integration/call-durability.test.ts',
  'test/integration/agent-test-durability.test.ts',
  'test/integration/analysis-durability.test.ts',
  'test/integration/campaign-durability.test.ts',
  'test/integration/mcp-durability.test.ts',
  'test/integration/knowledge-durability.test.ts',
];
const TIMED = [
  'test/integration/readiness.test.ts',
  'test/integration/transfer-twilio.test.ts',
  // Its gateway's admission measures this process's event-loop lag and hand-off times: the
  // files running beside it would be charged to the gateway.
  'test/integration/gateway-admission.test.ts',
  // Whole calls that assert real-time audio: barge-in silencing the line within 300 ms, playout
  // pacing, a call's length to the fraction of a second. Beside other files they missed them.
  'test/integration/voice-call.test.ts',
  'test/integration/voice-call-exotel.test.ts',
  'test/integration/voice-call-plivo.test.ts',
  'test/integration/voice-call-providers.test.ts',
  'test/integration/voicemail-plivo-exotel.test.ts',
  // Greeting within 300 ms of the no-detection run's: 358 ms beside two other integration files.
  'test/integration/voicemail-twilio.test.ts',
  'test/integration/plivo-adapter.test.ts',
  'test/integration/gateway.test.ts',
  'test/integration/barge-in-onset.test.ts',
  'test/integration/demo.test.ts',
  'test/integration/analysis-voice-call.test.ts',
  // Times a barge-in's clear and a dictated turn's end through a real gateway, as gateway.test.ts.
  'test/integration/turn-feel.test.ts',
  // Measures the hold audio a caller hears in real time (frames by the wall clock against the
  // briefing's timestamps), and kills and restarts the call worker during a briefing, as
  // transfer-twilio does.
  'test/integration/warm-transfer-twilio.test.ts',
  // The same on Plivo: the wait sound measured frame by frame against the briefing's timestamps,
  // a destination ringing out in real time (ring_timeout), a worker killed during a briefing.
  'test/integration/warm-transfer-plivo.test.ts',
  // Times each turn against its knowledge_timeout_ms (300 ms, plus 700 ms for the rest of the
  // turn): a turn beside three other integration files' start-ups costs more than that margin.
  'test/integration/knowledge-timeout.test.ts',
];

const shared = {
  // Node's typed arrays inside the sandbox: onnxruntime-node (Silero VAD) rejects jest's own.
  testEnvironment: '<rootDir>/test/support/shared-typed-arrays-environment.js',
  transform: { '^.+\\.ts$': ['@swc/jest'] },
};

const services = {
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
};

const rooted = (files) => files.map((file) => `<rootDir>/${file}`);

module.exports = {
  testTimeout: 60000,
  // A jest worker that grew past this after a file is replaced by a fresh one (the files leave
  // Temporal workers' and gateways' caches behind; one process once reached 3.7 GB).
  workerIdleMemoryLimit: '1500MB',
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    {
      ...shared,
      ...services,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts', '<rootDir>/test/security/**/*.test.ts'],
      testPathIgnorePatterns: ['/node_modules/', ...[...TIMED, ...DURABILITY].map((file) => `/${file.replace(/[.]/g, '\\.')}$`)],
    },
    { ...shared, ...services, displayName: 'timed', testMatch: rooted(TIMED) },
    { ...shared, ...services, displayName: 'durability', testMatch: rooted(DURABILITY) },
    { ...shared, ...services, displayName: 'browser', testMatch: ['<rootDir>/test/browser/**/*.test.ts'], setupFilesAfterEnv: ['<rootDir>/test/browser/support/timeout.ts'] },
  ],
};
