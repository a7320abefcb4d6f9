import { WrongAnswerError, type Operation } from './measure';

/** The same read on two api processes: one counting every request against the plan, one with RATE_LIMITS=off. */
export const limitKinds = ['limitsOn', 'limitsOff'] as const;
export type LimitKind = (typeof limitKinds)[number];

const pageLimit = 50;

/**
 * GET /api/v1/tasks?limit=50: 200 with a full page. With limits on, the answer must carry the rate-limit headers
 * (the request was counted); with limits off, it must not (nothing was).
 */
function listTasks(apiUrl: string, token: string, counted: boolean): Operation {
  const url = `${apiUrl}/api/v1/tasks?limit=${pageLimit}`;
  const headers = { authorization: `Bearer ${token}` };
  const label = counted ? 'limits on' : 'limits off';
  return async (sequence) => {
    const response = await fetch(url, { headers, signal: AbortSignal.timeout(60_000) });
    const text = await response.text();
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (response.status !== 200 || body?.success !== true || !Array.isArray(body?.data) || body.data.length !== pageLimit) {
      throw new WrongAnswerError(`GET tasks, ${label}, #${sequence}: expected 200 with ${pageLimit} tasks, got ${response.status}: ${text.slice(0, 500)}`);
    }
    if (response.headers.has('x-ratelimit-remaining') !== counted) {
      throw new WrongAnswerError(`GET tasks, ${label}, #${sequence}: X-RateLimit-Remaining ${counted ? 'missing' : 'present'}`);
    }
  };
}

/** The pair of reads, run in rounds that alternate which api goes first. */
export function limitOperations(limitsOnUrl: string, limitsOffUrl: string, token: string): Record<LimitKind, Operation> {
  return { limitsOn: listTasks(limitsOnUrl, token, true), limitsOff: listTasks(limitsOffUrl, token, false) };
}
