/** Integration tests share one PostgreSQL server and one Temporal dev server started in globalSetup. */
module.exports = {
  // Node's typed arrays inside the sandbox: onnxruntime-node (Silero VAD) rejects jest's own.
  testEnvironment: '<rootDir>/test/support/shared-typed-arrays-environment.js',
  transform: { '^.+\\.ts$': ['@swc/jest'] },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 60000,
};
