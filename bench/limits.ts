import { restTaskPage, type Operation } from './measure';

/** The same read on two api processes: one counting every request against the plan, one with RATE_LIMITS=off. */
export const limitKinds = ['limitsOn', 'limitsOff'] as const;
export type LimitKind = (typeof limitKinds)[number];


/**
 * GET /api/v1/tasks?limit=50: 200 with a full page. With limits on, the answer must carry the rate-limit headers
 * (the request was counted); with limits off, it must not (nothing was).
 */
function listTasks(apiUrl: string, token: string, counted: boolean): Operation {
  return restTaskPage(apiUrl, token, `GET tasks, ${counted ? 'limits on' : 'limits off'}`, (response) =>
    response.headers.has('x-ratelimit-remaining') === counted ? undefined : `X-RateLimit-Remaining ${counted ? 'missing' : 'present'}`,
  );
}

/** The pair of reads, run in rounds that alternate which api goes first. */
export function limitOperations(limitsOnUrl: string, limitsOffUrl: string, token: string): Record<LimitKind, Operation> {
  return { limitsOn: listTasks(limitsOnUrl, token, true), limitsOff: listTasks(limitsOffUrl, token, false) };
}
