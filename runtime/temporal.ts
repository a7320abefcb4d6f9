import { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, type LogLevel } from '@temporalio/worker';
import type { Config } from './config';
import { ensureSearchAttributes } from './search-attributes';

let runtimeInstalled = false;

/** Temporal's own log lines go to stderr at warnings and above unless LOG_LEVEL asks for more. */
export function installTemporalRuntime(config: Config): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const level: LogLevel = config.logLevel === 'debug' || config.logLevel === 'trace' ? 'DEBUG' : 'WARN';
  Runtime.install({ logger: new DefaultLogger(level) });
}

/**
 * The api's client, over the SDK's native (Rust) connection, the one the worker uses, rather than the JavaScript
 * gRPC client: measured on the floor's update-with-start, it answers a few milliseconds sooner and costs less CPU.
 * It needs Temporal's runtime, installed here if the process has not yet. The namespace gets Gatehouse's search
 * attributes if it lacks them (the workflows it starts carry them).
 */
export async function connectTemporalClient(config: Config, address: string): Promise<{ client: Client; close(): Promise<void> }> {
  installTemporalRuntime(config);
  const connection = await NativeConnection.connect({ address });
  try {
    await ensureSearchAttributes(connection, config.temporal.namespace);
  } catch (error) {
    await connection.close();
    throw error;
  }
  return { client: new Client({ connection, namespace: config.temporal.namespace }), close: () => connection.close() };
}

/** The worker's connection, once the namespace has the search attributes its workflows keep. */
export async function connectWorkerConnection(address: string, namespace: string): Promise<NativeConnection> {
  const connection = await NativeConnection.connect({ address });
  try {
    await ensureSearchAttributes(connection, namespace);
  } catch (error) {
    await connection.close();
    throw error;
  }
  return connection;
}
