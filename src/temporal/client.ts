import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';
import { clientTracingInterceptors } from '../observability/tracing/temporal-tracing';

/**
 * gRPC attempts per call (the SDK's default is 10, about 20 s): an API request during a Temporal
 * outage answers 503 in under a second instead of hanging, and the gateway's outbox retries on its
 * own schedule.
 */
const GRPC_ATTEMPTS = 4;

/**
 * Connects to Temporal, retrying while the server comes up (a freshly started dev server opens its
 * port a moment before it serves the namespace).
 */
export async function connectTemporal(address: string, namespace: string, waitMs = 30_000): Promise<Client> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      const connection = await Connection.connect({
        address,
        connectTimeout: 2_000,
        interceptors: [makeGrpcRetryInterceptor(defaultGrpcRetryOptions({ maxAttempts: GRPC_ATTEMPTS }))],
      });
      await connection.workflowService.describeNamespace({ namespace });
      // Starts and signals carry the caller's trace context while tracing runs (docs/tracing.md).
      return new Client({ connection, namespace, interceptors: { workflow: clientTracingInterceptors() } });
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`Temporal at ${address} is not reachable: ${(err as Error).message}`);
      await new Promise((r) => setTimeout(r, 300));
    }
  }
}

/** True when the Temporal frontend answers; used by /healthz. */
export async function temporalHealthy(client: Client): Promise<boolean> {
  try {
    await client.connection.workflowService.getSystemInfo({}, );
    return true;
  } catch {
    return false;
  }
}
