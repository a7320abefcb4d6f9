import { trace, type ProxyTracerProvider } from '@opentelemetry/api';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { Resource } from '@opentelemetry/resources';
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { BasicTracerProvider, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { OpenTelemetryPlugin } from '@temporalio/interceptors-opentelemetry';
import { createRequire } from 'node:module';
import { incomingRequestRedactions, outgoingRequestRedactions } from './trace-redaction';

/**
 * OpenTelemetry traces, off unless the standard variables ask for them (see `tracingWanted`): one trace per
 * request, from the api's HTTP span through the Temporal client's start, the workflow and its activities (Temporal's
 * interceptors, carried in the workflow's headers) down to each PostgreSQL query. Where the spans go is the OTel
 * SDK's to read from the same variables (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL,
 * OTEL_TRACES_SAMPLER, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES…).
 *
 * The OpenTelemetry packages stay on the 1.x line that @temporalio/interceptors-opentelemetry 1.24 is built on: the
 * workflow's spans cross the sandbox as that line's spans.
 *
 * Secrets never reach a span (./trace-redaction.ts): an incoming path or query that carries a link's token is
 * redacted, and so are the path and query of every URL the service sends a request to (webhook endpoints, Slack).
 */
export interface Tracing {
  /** Temporal's interceptors for the api's client and the worker, and the sink the workflow's spans leave by. */
  temporal: OpenTelemetryPlugin;
  /** Sends what is buffered and stops. */
  shutdown(): Promise<void>;
}

/**
 * Whether the environment asks for traces: an OTLP endpoint, or OTEL_TRACES_EXPORTER naming an exporter; never
 * with OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none. (The SDK alone would export to localhost:4318 whenever
 * it is started; Gatehouse starts it only when asked.)
 */
export function tracingWanted(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((name) => name.trim()).filter(Boolean);
  if (exporters.includes('none')) return false;
  return exporters.length > 0 || Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

let started: Tracing | undefined;

/**
 * Starts tracing for this process, once (later calls answer the first's). `serviceName` is the default for
 * OTEL_SERVICE_NAME. Tests hand their own span processor (an in-memory exporter's); otherwise the SDK builds the
 * exporters the environment names.
 */
export function startTracing(serviceName: string, options: { spanProcessor?: SpanProcessor } = {}): Tracing {
  if (started) return started;
  const sdk = new NodeSDK({
    resource: new Resource({ [ATTR_SERVICE_NAME]: serviceName }),
    ...(options.spanProcessor ? { spanProcessors: [options.spanProcessor] } : {}),
    instrumentations: [
      new HttpInstrumentation({
        // Probes, scrapes and the Web UI's codec calls are not requests anyone follows.
        ignoreIncomingRequestHook: (request) => /^\/(healthz|readyz|metrics|decode|encode)(\?|$)/.test(request.url ?? ''),
        startIncomingSpanHook: incomingRequestRedactions,
        startOutgoingSpanHook: outgoingRequestRedactions,
      }),
      new PgInstrumentation({ requireParentSpan: true }),
    ],
  });
  sdk.start();
  patchLoadedModules();
  // The workflow's spans are made in the sandbox and leave it through a sink: they go to the processor the SDK
  // built from the environment, the one every other span of this process goes to.
  const provider = (trace.getTracerProvider() as ProxyTracerProvider).getDelegate() as Partial<BasicTracerProvider>;
  if (typeof provider.getActiveSpanProcessor !== 'function' || !provider.resource) {
    void sdk.shutdown();
    throw new Error('OpenTelemetry did not start a tracer provider: check OTEL_TRACES_EXPORTER (otlp, console or none) and OTEL_EXPORTER_OTLP_PROTOCOL');
  }
  const resource = provider.resource;
  started = {
    temporal: new OpenTelemetryPlugin({ resource, spanProcessor: options.spanProcessor ?? provider.getActiveSpanProcessor() }),
    async shutdown() {
      await sdk.shutdown();
    },
  };
  return started;
}

/**
 * Starts tracing if the configuration asks for it and nothing in this process has yet (`gatehouse dev` runs the
 * api and the worker in one process, under one service name). Answers how to stop it: a no-op for a caller that
 * did not start it.
 */
export function tracingFor(config: { tracing: boolean }, serviceName: string): () => Promise<void> {
  if (!config.tracing || started) return async () => {};
  return startTracing(serviceName).shutdown;
}

/** Tracing as started in this process, if it was. */
export function currentTracing(): Tracing | undefined {
  return started;
}

/**
 * The instrumentations patch `http` and `pg` when they are required after the SDK starts; Gatehouse imports both
 * (as ES modules) before it reads its configuration. Requiring them once more through the hooks patches the
 * prototypes every importer shares.
 */
function patchLoadedModules(): void {
  const require = createRequire(import.meta.url);
  require('node:http');
  require('pg');
}
