import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { pathParameters, type Operation } from '../../api/catalog/operation';
import { headerFields } from '../../api/rest/routes';
import type { Caller } from '../../domain/identity/actors';
import { errorStatus, isErrorCode } from '../../domain/kit/errors';
import type { ConsoleSession } from './console';
import { textOf } from './mcp';

// One probe's input sent the way each interface takes it, and every answer read back into one shape, so that the
// matrix judges REST, MCP and the console alike.

/** Where a call goes: the two REST route shapes (the own and the other organization's slug), MCP, the console. */
export type Shape = 'implicit' | 'own slug' | 'other slug' | 'mcp' | 'console';

export interface Credential {
  name: string;
  /** Who the access rules see. */
  caller: Caller;
  call(operation: Operation, input: Record<string, unknown>, options: { shape: Shape; slug: string }): Promise<Answer>;
}

export interface Answer {
  /** The HTTP status, or for MCP the status its error code stands for (200 for a result). */
  status: number;
  ok: boolean;
  code: string | undefined;
  message: string;
  /** The fields a validation refusal names. */
  fields: string[];
  /** A list's items, when the answer is a page. */
  items: unknown[] | undefined;
  /** A count's number, when the answer is one (`{"count": n}`, the console's reviews.count). */
  count?: number;
  /** Everything the caller reads: the body, or the tool result's text and structured content. */
  text: string;
  /** Whether the answer has the interface's error shape: `{success, error: {code, message}}`, `Error <code>: …`. */
  envelope: boolean;
}

/** The request for an operation: path parameters in the path, header fields as headers, the rest in the query or body. */
export function restRequest(operation: Operation, input: Record<string, unknown>, base: string): InjectOptions {
  const inPath = new Set(pathParameters(operation.path));
  const url = `${base}${operation.path.replace(/:([a-z_]+)/g, (_, name: string) => encodeURIComponent(String(input[name])))}`;
  const headers: Record<string, string> = {};
  const fields: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(input)) {
    if (inPath.has(field)) continue;
    if (field in headerFields) headers[headerFields[field]!.toLowerCase()] = String(value);
    else fields[field] = value;
  }
  if (operation.method === 'GET' || operation.method === 'DELETE') {
    const query = new URLSearchParams(Object.entries(fields).map(([field, value]): [string, string] => [field, String(value)])).toString();
    return { method: operation.method, url: query ? `${url}?${query}` : url, headers };
  }
  return { method: operation.method, url, headers, payload: fields };
}

export function restAnswer(response: LightMyRequestResponse): Answer {
  let body: any;
  try {
    body = response.json();
  } catch {
    body = undefined;
  }
  const ok = response.statusCode < 300;
  const error = body?.error;
  const envelope = ok ? body?.success === true : body?.success === false && typeof error?.code === 'string' && typeof error?.message === 'string';
  return {
    status: response.statusCode,
    ok,
    code: ok ? undefined : error?.code,
    message: ok ? '' : String(error?.message ?? ''),
    fields: ((error?.details?.fields as { field: string }[] | undefined) ?? []).map((problem) => problem.field),
    items: ok && Array.isArray(body?.data) ? body.data : undefined,
    count: ok && typeof body?.data?.count === 'number' ? body.data.count : undefined,
    text: response.body,
    envelope,
  };
}

export function mcpAnswer(result: unknown): Answer {
  const { isError, structuredContent } = result as { isError?: boolean; structuredContent?: Record<string, unknown> };
  const text = textOf(result);
  const code = isError ? /^Error ([a-z_]+):/.exec(text)?.[1] : undefined;
  const items = structuredContent?.items;
  return {
    status: isError ? (code && isErrorCode(code) ? errorStatus[code] : 0) : 200,
    ok: !isError,
    code,
    message: isError ? text : '',
    // An agent reads the fields in the message: `…: tasks.0.project_id: no project … in this organization`.
    fields: isError ? [...text.matchAll(/(?:^|[:;]\s|\n- )([a-z_][a-z_0-9.]*): no /g)].map((match) => match[1]!) : [],
    items: Array.isArray(items) ? items : undefined,
    text: `${text}\n${JSON.stringify(structuredContent ?? null)}`,
    envelope: isError ? code !== undefined : true,
  };
}

/** A bearer token over REST, either route shape. */
export function restCredential(name: string, caller: Caller, token: string, request: (options: InjectOptions & { token?: string }) => Promise<LightMyRequestResponse>): Credential {
  return {
    name,
    caller,
    async call(operation, input, { shape, slug }) {
      const base = shape === 'implicit' ? '/api/v1' : `/api/v1/organizations/${slug}`;
      return restAnswer(await request({ ...restRequest(operation, input, base), token }));
    },
  };
}

/** An API key through the SDK's MCP client. */
export function mcpCredential(name: string, caller: Caller, client: McpClient): Credential {
  return {
    name,
    caller,
    async call(operation, input) {
      try {
        return mcpAnswer(await client.callTool({ name: operation.tool!, arguments: input }));
      } catch (error) {
        // A protocol error where a tool result was due: outside the envelope, which the matrix reports.
        const text = `protocol error: ${(error as Error).message}`;
        return { status: 0, ok: false, code: undefined, message: text, fields: [], items: undefined, text, envelope: false };
      }
    },
  };
}

/** A person signed in to the console, calling its API as the console's pages do. */
export function consoleCredential(name: string, caller: Caller, session: ConsoleSession): Credential {
  return {
    name,
    caller,
    async call(operation, input) {
      return restAnswer(await session.request(restRequest(operation, input, '/console/api/v1')));
    },
  };
}
