import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import { appendFileSync } from 'node:fs';
import pLimit from 'p-limit';
import { expect } from 'vitest';
import type { Database } from '../../../db/database';
import { FuzzTally, envelopeProblems, errorCodeOf, isPolicyDenial, jsonRpcProblems, toolResultProblems, type HttpAnswer } from './answers';
import { rpc, type McpCase } from './mcp-cases';
import { orgState, writesBetween } from './org-digest';
import { rawRequest } from './raw-http';
import type { FuzzCase } from './rest-cases';
import type { WireCase } from './wire-cases';

// How the suite sends its cases (inject for the bulk, a socket for the wire, the SDK's client for MCP) and
// judges each answer, and a group: its cases a few at a time, its tally printed, nothing written.

export interface FuzzRunOptions {
  app: FastifyInstance;
  db: Database;
  /** Where the app listens, for requests over a real socket. */
  baseUrl: string;
  /** The organizations no request of the run may write to. */
  orgIds: string[];
  concurrency: number;
  /** A file to append each group's findings to. */
  report?: string;
}

export interface FuzzRun {
  /** Sends the cases, prints the tally, and fails on any finding or on anything written. */
  group<T>(name: string, cases: readonly T[], send: (tally: FuzzTally, item: T) => Promise<void>): Promise<FuzzTally>;
  rest(tally: FuzzTally, request: FuzzCase): Promise<void>;
  wire(tally: FuzzTally, item: WireCase): Promise<void>;
  mcp(tally: FuzzTally, request: McpCase): Promise<void>;
  /** One tools/call through the SDK's client. */
  callTool(tally: FuzzTally, client: McpClient, tool: Tool, args: Record<string, unknown>): Promise<void>;
}

export function fuzzRun({ app, db, baseUrl, orgIds, concurrency, report }: FuzzRunOptions): FuzzRun {
  return {
    async group(name, cases, send) {
      const tally = new FuzzTally(name);
      const started = performance.now();
      const before = await orgState(db, orgIds);
      const limit = pLimit(concurrency);
      await Promise.all(cases.map((item) => limit(() => send(tally, item))));
      const writes = writesBetween(before, await orgState(db, orgIds), tally.denied);
      console.log(`${tally.summary()} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
      if (report) appendFileSync(report, `## ${tally.summary()}\n${[...tally.distinctFindings(), ...writes].join('\n')}\n\n`);
      expect({ findings: tally.distinctFindings(), writes }).toEqual({ findings: [], writes: [] });
      return tally;
    },

    async rest(tally, request) {
      let answer: HttpAnswer;
      try {
        const response = await app.inject({ method: request.method as 'GET', url: request.url, headers: request.headers, payload: request.body });
        answer = { status: response.statusCode, headers: response.headers, body: response.body };
        // A replayed answer repeats a decision already recorded.
        if (response.headers['idempotent-replayed'] !== 'true' && errorCodeOf(answer) === 'policy_denied') tally.denied++;
      } catch (error) {
        tally.record(request, { status: 0, body: '' }, [`the request could not be sent: ${(error as Error).message}`], 'not sent');
        return;
      }
      const problems = envelopeProblems(answer);
      const code = errorCodeOf(answer);
      const { expected } = request;
      if (expected && (answer.status !== expected.status || code !== expected.code)) {
        problems.push(`expected ${expected.status} ${expected.code}, got ${answer.status} ${code ?? '(no code)'}`);
      }
      tally.record(request, answer, problems, code ? `${answer.status} ${code}` : String(answer.status));
    },

    async wire(tally, item) {
      const outcome = await rawRequest(baseUrl, item.raw);
      if (outcome.kind === 'reset') {
        tally.record(item.request, { status: 0, body: '' }, [`no answer: the connection ended (${outcome.error}) after ${outcome.received} bytes`], 'reset');
        return;
      }
      const { answer } = outcome;
      const code = errorCodeOf(answer);
      if (code === 'policy_denied') tally.denied++;
      const problems = item.mcp ? jsonRpcProblems(answer, item.expectedRpcCode).problems : envelopeProblems(answer);
      if (item.expectedStatus !== undefined && answer.status !== item.expectedStatus) problems.push(`expected ${item.expectedStatus}, got ${answer.status}`);
      if (item.expectedCode !== undefined && code !== item.expectedCode) problems.push(`expected ${item.expectedCode}, got ${code ?? '(no code)'}`);
      tally.record(item.request, answer, problems, code ? `${answer.status} ${code}` : String(answer.status));
    },

    async mcp(tally, request) {
      const response = await app.inject({ method: request.method as 'POST', url: request.url, headers: request.headers, payload: request.body });
      const answer: HttpAnswer = { status: response.statusCode, headers: response.headers, body: response.body };
      const { problems, message } = jsonRpcProblems(answer, request.expectedCode);
      if (request.expectedStatus !== undefined && answer.status !== request.expectedStatus) problems.push(`expected HTTP ${request.expectedStatus}, got ${answer.status}`);
      const result = message?.result;
      if (result && request.body?.includes('"tools/call"')) {
        problems.push(...toolResultProblems(result));
        if (isPolicyDenial(result)) tally.denied++;
      }
      if (request.refusedCall) {
        if (result && result.isError !== true) problems.push('the tool accepted arguments its schema rules out');
        if (message?.error && message.error.code !== rpc.invalidParams) problems.push(`a refused call answered JSON-RPC ${String(message.error.code)}, not -32602`);
      }
      const outcome = message?.error ? `${answer.status} rpc ${String(message.error.code)}` : result?.isError ? `${answer.status} isError` : String(answer.status);
      tally.record(request, answer, problems, outcome);
    },

    async callTool(tally, client, tool, args) {
      const request = { label: `${tool.name} (random)`, method: 'tools/call', url: tool.name, body: JSON.stringify(args) };
      try {
        const result = (await client.callTool({ name: tool.name, arguments: args })) as Record<string, unknown>;
        if (isPolicyDenial(result)) tally.denied++;
        const text = ((result.content as { text?: string }[] | undefined) ?? [])[0]?.text ?? '';
        const outcome = result.isError ? `error ${/^Error ([a-z_]+)/.exec(text)?.[1] ?? 'policy_denied'}` : 'result';
        tally.record(request, { status: 200, body: text }, toolResultProblems(result), outcome);
      } catch (error) {
        // The client raises JSON-RPC errors; -32602 is a refusal, but not when the client made it of our result.
        const code = error instanceof McpError ? error.code : undefined;
        const message = (error as Error).message;
        const problems = code === rpc.invalidParams && !/output schema/.test(message) ? [] : [`the call failed: ${message}`];
        tally.record(request, { status: 200, body: message }, problems, `rpc ${code ?? 'none'}`);
      }
    },
  };
}
