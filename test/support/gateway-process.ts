/**
 * A media gateway in its own OS process, so a test can kill it (SIGKILL) in the middle of a call.
 * Configured by environment like `npm run gateway`; prints its port and task queue when ready.
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadConfig } from '../../src/config';
import { startGateway } from '../../src/gateway/server';
import { connectTemporal } from '../../src/temporal/client';

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const config = loadConfig();
  const temporal = await connectTemporal(config.TEMPORAL_ADDRESS!, config.TEMPORAL_NAMESPACE);
  const gateway = await startGateway(
    { config, temporal, address: config.TEMPORAL_ADDRESS!, namespace: config.TEMPORAL_NAMESPACE, streamSecret: config.JWT_SECRET! },
    Number(process.env.GATEWAY_PORT ?? 0),
    '127.0.0.1',
  );
  process.stdout.write(`gateway ready ${JSON.stringify({ url: gateway.url, taskQueue: gateway.taskQueue })}\n`);
}

main().catch((err) => {
  process.stderr.write(`gateway failed: ${(err as Error).stack}\n`);
  process.exit(1);
});
