// What every answer the fuzz suite gets must look like, and the tally it prints: REST's envelope, JSON-RPC's
// error object, and an MCP tool's error result. Checks answer the problems they find rather than throwing, so
// that one run reports every kind of fault at once.

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

/** One request the suite sent, as a person would retype it. */
export interface SentRequest {
  /** The route or case it stands for, e.g. `PATCH /v1/tasks/{id} tags: a string`: findings are grouped by it. */
  label: string;
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface Finding {
  problem: string;
  request: SentRequest;
  answer: { status: number; body: string };
}

const errorKeys = new Set(['code', 'message', 'details']);

function contentTypeOf(answer: HttpAnswer): string {
  return String(answer.headers['content-type'] ?? '');
}

function parsed(answer: HttpAnswer): { value?: unknown; problem?: string } {
  if (!/^application\/json\b/.test(contentTypeOf(answer))) return { problem: `content-type is "${contentTypeOf(answer)}", not JSON` };
  try {
    return { value: JSON.parse(answer.body) };
  } catch {
    return { problem: 'the body is not JSON' };
  }
}

function errorObjectProblems(error: unknown): string[] {
  if (typeof error !== 'object' || error === null || Array.isArray(error)) return ['error is not an object'];
  const { code, message, details } = error as Record<string, unknown>;
  const problems: string[] = [];
  const extra = Object.keys(error).filter((key) => !errorKeys.has(key));
  if (extra.length) problems.push(`error has fields outside the envelope: ${extra.join(', ')}`);
  if (typeof code !== 'string' || !/^[a-z_]+$/.test(code)) problems.push('error.code is not one of our codes');
  if (typeof message !== 'string' || message.length === 0) problems.push('error.message is missing');
  if (details !== undefined && (typeof details !== 'object' || details === null || Array.isArray(details))) problems.push('error.details is not an object');
  return problems;
}

/**
 * REST's envelope: `{success: true, data, page?}` for 200 and 201, `{success: false, error: {code, message,
 * details?}}` and nothing else for every 4xx, the pending review's shape for 202, JSON always, never a 5xx.
 */
export function envelopeProblems(answer: HttpAnswer): string[] {
  if (answer.status >= 500) return [`${answer.status}: a fault on our side`];
  if (answer.status < 200 || (answer.status >= 300 && answer.status < 400)) return [`unexpected status ${answer.status}`];
  const { value, problem } = parsed(answer);
  if (problem) return [problem];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return ['the body is not an object'];
  const body = value as Record<string, unknown>;
  const keys = Object.keys(body).sort().join(',');
  if (answer.status === 200 || answer.status === 201) {
    return body.success === true && (keys === 'data,success' || keys === 'data,page,success') ? [] : [`not a success envelope: {${keys}}`];
  }
  if (answer.status === 202) {
    const code = (body.error as { code?: unknown } | undefined)?.code;
    return body.success === false && code === 'pending_review' && keys === 'error,review,success' ? [] : [`not a pending_review envelope: {${keys}}`];
  }
  if (body.success !== false || keys !== 'error,success') return [`not an error envelope: {${keys}}`];
  return errorObjectProblems(body.error);
}

/** The error code of an envelope, if the answer is one. */
export function errorCodeOf(answer: HttpAnswer): string | undefined {
  try {
    return (JSON.parse(answer.body) as { error?: { code?: string } }).error?.code;
  } catch {
    return undefined;
  }
}

export interface JsonRpcMessage {
  jsonrpc?: unknown;
  id?: unknown;
  result?: Record<string, unknown>;
  error?: { code?: unknown; message?: unknown };
}

/**
 * A JSON-RPC answer to one POST /mcp: JSON, `jsonrpc: "2.0"`, a result or an error with an integer code and a
 * message; with `expectedCode`, an error carrying it.
 */
export function jsonRpcProblems(answer: HttpAnswer, expectedCode?: number): { problems: string[]; message?: JsonRpcMessage } {
  if (answer.status >= 500) return { problems: [`${answer.status}: a fault on our side`] };
  if (answer.status === 202 && answer.body === '') {
    return { problems: expectedCode === undefined ? [] : [`expected JSON-RPC error ${expectedCode}, got 202 with no body`] };
  }
  const { value, problem } = parsed(answer);
  if (problem) return { problems: [problem] };
  const message = value as JsonRpcMessage;
  if (typeof message !== 'object' || message === null || message.jsonrpc !== '2.0') return { problems: ['not a JSON-RPC 2.0 message'] };
  const problems: string[] = [];
  if (message.error) {
    if (!Number.isInteger(message.error.code)) problems.push('error.code is not an integer');
    if (typeof message.error.message !== 'string' || message.error.message.length === 0) problems.push('error.message is missing');
    if (message.error.code === -32603) problems.push('an internal error (-32603): a fault on our side');
    if (expectedCode !== undefined && message.error.code !== expectedCode) problems.push(`expected JSON-RPC error ${expectedCode}, got ${String(message.error.code)}`);
  } else if (typeof message.result !== 'object' || message.result === null) {
    problems.push('neither result nor error');
  } else if (expectedCode !== undefined) {
    problems.push(`expected JSON-RPC error ${expectedCode}, got a result`);
  }
  return { problems, message };
}

/** A tool result: content to read; an error result starts with our error line (or says the policy denied it). */
export function toolResultProblems(result: Record<string, unknown>): string[] {
  const content = result.content as { type?: string; text?: string }[] | undefined;
  if (!Array.isArray(content) || content.length === 0) return ['a tool result without content'];
  if (result.isError !== true) return [];
  const text = content.map((part) => part.text ?? '').join('\n');
  return /^Error [a-z_]+: \S/.test(text) || /^Denied by the organization's policy: /.test(text) ? [] : [`an error result not in our words: ${text.slice(0, 80)}`];
}

/** Whether a tool error result is the policy's denial (it records a gate decision; other refusals record nothing). */
export function isPolicyDenial(result: Record<string, unknown> | undefined): boolean {
  const content = result?.content as { text?: string }[] | undefined;
  return result?.isError === true && /^Denied by the organization's policy: /.test(content?.[0]?.text ?? '');
}

/** Every request of a group, its statuses and the problems found, kept to print and to assert on at the end. */
export class FuzzTally {
  readonly statuses = new Map<string, number>();
  readonly findings: Finding[] = [];
  sent = 0;
  /** Answers that were the policy's denial: the only requests allowed to add to the gate's records. */
  denied = 0;

  constructor(readonly group: string) {}

  record(request: SentRequest, answer: { status: number; body: string }, problems: string[], outcome = String(answer.status)): void {
    this.sent++;
    this.statuses.set(outcome, (this.statuses.get(outcome) ?? 0) + 1);
    for (const problem of problems) this.findings.push({ problem, request, answer: { status: answer.status, body: answer.body.slice(0, 300) } });
  }

  /** `group: 412 cases; 200×80 401×12 …`, for the run's output. */
  summary(): string {
    const statuses = [...this.statuses.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([status, n]) => `${status}×${n}`);
    return `fuzz ${this.group}: ${this.sent} cases; ${statuses.join(' ')}${this.findings.length ? `; ${this.findings.length} findings` : ''}`;
  }

  /**
   * One line per kind of fault (the problem, the route or case, the status), with its shortest example, so that a
   * failing run reads as a list of reproductions rather than a wall of repeats.
   */
  distinctFindings(): string[] {
    const byKind = new Map<string, Finding>();
    for (const finding of this.findings) {
      const kind = `${finding.problem} | ${finding.request.label} | ${finding.answer.status}`;
      const seen = byKind.get(kind);
      if (!seen || reproduction(finding.request).length < reproduction(seen.request).length) byKind.set(kind, finding);
    }
    return [...byKind.entries()].map(([kind, finding]) => `${kind}\n    ${reproduction(finding.request)}\n    → ${finding.answer.status} ${finding.answer.body}`);
  }
}

export function reproduction(request: SentRequest): string {
  const headers = Object.entries(request.headers ?? {})
    .filter(([name]) => name !== 'authorization' || !/^Bearer gate_[kp]_/.test(request.headers![name]!))
    .map(([name, value]) => ` -H '${name}: ${truncate(value, 60)}'`)
    .join('');
  const body = request.body === undefined ? '' : ` -d '${truncate(request.body, 160)}'`;
  return `${request.method} ${truncate(request.url, 160)}${headers}${body}`;
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…(${text.length} chars)` : text;
}
