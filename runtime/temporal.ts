import { Client } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { DefaultLogger, NativeConnection, Runtime, type GrpcCompressionConfig, type LogLevel, type NativeConnectionOptions } from '@temporalio/worker';
import { isIP } from 'node:net';
import type { Config } from './config';
import { ensureSearchAttributes } from './search-attributes';
import { encryptingDataConverter } from './payload-codec';
import { currentTracing } from './tracing';

let runtimeInstalled = false;
let temporalMetricsServed = false;

/**
 * Temporal's own log lines go to stderr at warnings and above unless LOG_LEVEL asks for more. A process that runs
 * a worker (`workerMetrics`) has the SDK serve its worker metrics for Prometheus at
 * http://METRICS_HOST:TEMPORAL_METRICS_PORT/metrics; if that port cannot be had, the worker runs without them.
 */
export function installTemporalRuntime(config: Config, { workerMetrics = false } = {}): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const level: LogLevel = config.logLevel === 'debug' || config.logLevel === 'trace' ? 'DEBUG' : 'WARN';
  const logger = new DefaultLogger(level);
  const { host, temporalPort } = config.metrics;
  if (!workerMetrics || temporalPort === 'off') {
    Runtime.install({ logger });
    return;
  }
  try {
    Runtime.install({ logger, telemetryOptions: { metrics: { prometheus: { bindAddress: `${host}:${temporalPort}` } } } });
    temporalMetricsServed = true;
  } catch (error) {
    process.stderr.write(`gatehouse: Temporal's worker metrics not served on ${host}:${temporalPort} (${(error as Error).message.split('\n')[0]}); set TEMPORAL_METRICS_PORT, or TEMPORAL_METRICS_PORT=off\n`);
    Runtime.install({ logger });
  }
}

/** Where the SDK serves a worker process's metrics, if it does. */
export function temporalMetricsUrl(config: Config): string | undefined {
  const { host, temporalPort } = config.metrics;
  return temporalPort === 'off' || !temporalMetricsServed ? undefined : `http://${host}:${temporalPort}/metrics`;
}

/**
 * The api's client, over the SDK's native (Rust) connection, the one the worker uses, rather than the JavaScript
 * gRPC client: measured on the floor's update-with-start, it answers a few milliseconds sooner and costs less CPU.
 * It needs Temporal's runtime, installed here if the process has not yet. The namespace gets Gatehouse's search
 * attributes if it lacks them (the workflows it starts carry them).
 */
export async function connectTemporalClient(config: Config, address: string): Promise<{ client: Client; close(): Promise<void> }> {
  installTemporalRuntime(config);
  const connection = await connectWithSearchAttributes(config, address);
  const tracing = currentTracing();
  return {
    client: new Client({
      connection,
      namespace: config.temporal.namespace,
      dataConverter: dataConverterFor(config),
      plugins: tracing ? [tracing.temporal] : [],
    }),
    close: () => connection.close(),
  };
}

/** How the api's client and the worker turn values into Temporal payloads: encrypted when keys are configured. */
export function dataConverterFor(config: Config): DataConverter | undefined {
  const { keys } = config.payloads;
  return keys ? encryptingDataConverter(keys) : undefined;
}

/** The worker's connection, once the namespace has the search attributes its workflows keep. */
export function connectWorkerConnection(config: Config, address: string): Promise<NativeConnection> {
  return connectWithSearchAttributes(config, address);
}

/** How every Gatehouse process connects to Temporal at `address`. */
export function nativeConnectionOptions(config: Config, address: string): NativeConnectionOptions {
  return { address, grpcCompression: grpcCompressionFor(config.temporal.grpcCompression, address) };
}

/**
 * The SDK compresses every request with gzip unless told not to. Over loopback that is CPU spent for nothing, so
 * `auto` turns it off when the server's host is this machine (a loopback address or `localhost`).
 */
export function grpcCompressionFor(setting: Config['temporal']['grpcCompression'], address: string): GrpcCompressionConfig {
  if (setting !== 'auto') return { codec: setting };
  return { codec: isLoopback(hostOf(address)) ? 'none' : 'gzip' };
}

function hostOf(address: string): string {
  const bracketed = /^\[([^\]]+)\]/.exec(address);
  if (bracketed) return bracketed[1]!;
  return isIP(address) === 6 ? address : address.replace(/:\d+$/, '');
}

function isLoopback(host: string): boolean {
  const name = host.toLowerCase();
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  if (isIP(name) === 4) return name.startsWith('127.');
  return isIP(name) === 6 && (name === '::1' || name === '0:0:0:0:0:0:0:1');
}

/** A connection to Temporal whose namespace has Gatehouse's search attributes (added where missing). */
async function connectWithSearchAttributes(config: Config, address: string): Promise<NativeConnection> {
  const connection = await NativeConnection.connect(nativeConnectionOptions(config, address));
  try {
    await ensureSearchAttributes(connection, config.temporal.namespace);
  } catch (error) {
    await connection.close();
    throw error;
  }
  return connection;
}
