import { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, type LogLevel } from '@temporalio/worker';
import type { Config } from './config';

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
 * It needs Temporal's runtime, installed here if the process has not yet.
 */
export async function connectTemporalClient(config: Config, address: string): Promise<{ client: Client; close(): Promise<void> }> {
  installTemporalRuntime(config);
  const connection = await NativeConnection.connect({ address });
  return { client: new Client({ connection, namespace: config.temporal.namespace }), close: () => connection.close() };
}

export async function connectWorkerConnection(address: string): Promise<NativeConnection> {
  return NativeConnection.connect({ address });
}
