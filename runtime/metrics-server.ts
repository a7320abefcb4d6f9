import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Database } from '../db/database';
import { countReviewsByStatus } from '../domain/gate/reviews/reads';
import { collectNodeMetrics, metricsRegistry, reviewsGauge } from '../metrics';
import type { Config } from './config';

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

/** Where each kind of process serves its metrics unless METRICS_PORT says otherwise. */
export const defaultMetricsPorts = { api: 9464, worker: 9465, dev: 9464 } as const;

/**
 * Serves the process's Prometheus metrics at http://METRICS_HOST:port/metrics (loopback by default), apart from
 * the public api port. Undefined when METRICS_PORT=off. A port that is taken is logged and skipped: metrics are
 * not worth stopping the service for.
 */
export async function serveMetrics(
  config: Config,
  role: keyof typeof defaultMetricsPorts,
  db: Database,
  log: (message: string) => void,
): Promise<MetricsServer | undefined> {
  const port = config.metrics.port ?? defaultMetricsPorts[role];
  if (port === 'off') return undefined;
  reviewsGauge(() => countReviewsByStatus(db));
  collectNodeMetrics();
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('Metrics are at /metrics\n');
      return;
    }
    metricsRegistry.metrics().then(
      (text) => response.writeHead(200, { 'content-type': metricsRegistry.contentType }).end(text),
      (error: Error) => response.writeHead(500, { 'content-type': 'text/plain' }).end(`${error.message}\n`),
    );
  });
  try {
    await listen(server, port, config.metrics.host);
  } catch (error) {
    log(`metrics not served: ${config.metrics.host}:${port} ${(error as NodeJS.ErrnoException).code ?? (error as Error).message} (set METRICS_PORT, or METRICS_PORT=off)`);
    return undefined;
  }
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}/metrics`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
