import { Client, Connection } from '@temporalio/client';
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

export async function connectTemporalClient(address: string, namespace: string): Promise<{ client: Client; close(): Promise<void> }> {
  const connection = await Connection.connect({ address });
  return { client: new Client({ connection, namespace }), close: () => connection.close() };
}

export async function connectWorkerConnection(address: string): Promise<NativeConnection> {
  return NativeConnection.connect({ address });
}
