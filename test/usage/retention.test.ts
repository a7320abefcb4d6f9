import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ensureRetentionSchedule, retentionScheduleId } from '../../runtime/schedules';
import { newId } from '../../domain/kit/ids';
import { createApiKey, revokeApiKey } from '../../domain/identity/api-keys';
import { pruneExpiredRecords } from '../../domain/usage/retention';
import { insertWebhookDelivery } from '../support/fixtures';
import { json, startHarness, type Harness, type TestOrganization } from '../support/harness';
import { withdrawReviewsOfKey } from '../../domain/gate/reviews/withdraw';

const day = 24 * 60 * 60 * 1000;
let h: Harness;
let acme: TestOrganization;

beforeAll(async () => {
  // As a worker started with CALL_LOG_RETENTION=30d and REVIEW_RETENTION=90d.
  h = await startHarness({ retention: { callLogMs: 30 * day, reviewsMs: 90 * day } });
  acme = await h.createOrganization();
});

afterAll(async () => {
  await h.temporal.schedule.getHandle(retentionScheduleId).delete().catch(() => {});
  await h.close();
});

const write = (title: string) => h.request({ method: 'POST', url: '/api/v1/tasks', token: acme.readWriteToken, payload: { title } });
const decide = (id: string, verdict: 'approve' | 'deny') =>
  h.request({ method: 'POST', url: `/api/v1/reviews/${id}/${verdict}`, token: acme.reviewerToken, payload: {} });

describe('retention, pruned by a Temporal Schedule', () => {
  it('removes old call log rows and long-decided reviews, and keeps decisions, pending reviews and recent rows', async () => {
    const reviewOf = async (title: string) => json(await write(title)).review.id as string;
    const [denied, approved, pending, recent] = [await reviewOf('review: deny'), await reviewOf('review: approve'), await reviewOf('review: wait'), await reviewOf('review: recent')];
    expect((await decide(denied, 'deny')).statusCode).toBe(200);
    expect((await decide(approved, 'approve')).statusCode).toBe(200);
    expect((await decide(recent, 'deny')).statusCode).toBe(200);
    // Time passes: two decisions a year old, a review still waiting since then, and half the call log old.
    await h.db.query(`UPDATE reviews SET decided_at = now() - interval '400 days' WHERE id = ANY($1)`, [[denied, approved]]);
    await h.db.query(`UPDATE reviews SET created_at = now() - interval '400 days' WHERE id = $1`, [pending]);
    // The call log is written off the request path, a moment after each answer.
    const calls = await vi.waitFor(async () => {
      const { rows } = await h.db.query('SELECT id FROM call_log WHERE org_id = $1 ORDER BY created_at, id', [acme.organization.id]);
      expect(rows.length).toBeGreaterThanOrEqual(7);
      return rows;
    });
    const old = calls.slice(0, 3).map((row) => row.id as string);
    await h.db.query(`UPDATE call_log SET created_at = now() - interval '31 days' WHERE id = ANY($1)`, [old]);
    // A webhook delivery as old (failed), and one as old still being tried: the first goes with its event.
    const settled = await insertWebhookDelivery(h.db, acme.organization.id);
    const trying = await insertWebhookDelivery(h.db, acme.organization.id);
    // An old delivery sent again twice, recently: the redeliveries stay when their original goes.
    const resent = await insertWebhookDelivery(h.db, acme.organization.id);
    const redeliveries = [newId('whd'), newId('whd')];
    for (const id of redeliveries) {
      await h.db.query(
        `INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event_id, redelivery_of, is_redelivery, status, started_at)
         SELECT $1, org_id, endpoint_id, event_id, id, true, 'delivered', now() FROM webhook_deliveries WHERE id = $2`,
        [id, resent.deliveryId],
      );
    }
    await h.db.query(`UPDATE webhook_deliveries SET created_at = now() - interval '31 days' WHERE id = $1`, [resent.deliveryId]);
    await h.db.query(`UPDATE webhook_deliveries SET status = 'pending' WHERE id = $1`, [trying.deliveryId]);
    await h.db.query(`UPDATE webhook_deliveries SET created_at = now() - interval '31 days' WHERE id = ANY($1)`, [[settled.deliveryId, trying.deliveryId]]);
    await h.db.query(`UPDATE webhook_events SET created_at = now() - interval '31 days' WHERE id IN (SELECT event_id FROM webhook_deliveries WHERE id = ANY($1))`, [
      [settled.deliveryId, trying.deliveryId],
    ]);

    const schedule = await ensureRetentionSchedule(h.temporal, { taskQueue: h.taskQueue });
    // Made again (a second worker starting): the same schedule, brought up to date rather than an error.
    await ensureRetentionSchedule(h.temporal, { taskQueue: h.taskQueue });
    const described = await schedule.describe();
    expect(described.spec.intervals).toMatchObject([{ every: 60 * 60 * 1000 }]);
    expect(described.policies.overlap).toBe('SKIP');

    // Its next run, now rather than within the hour.
    await schedule.trigger();
    let runId: string | undefined;
    for (let attempt = 0; attempt < 50 && !runId; attempt++) {
      const action = (await schedule.describe()).info.recentActions.at(-1)?.action;
      runId = action?.type === 'startWorkflow' ? action.workflow.workflowId : undefined;
      if (!runId) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const pruned = (await h.temporal.workflow.getHandle(runId!).result()) as { callLog: number; reviews: number; webhookDeliveries: number };
    expect(pruned.callLog).toBeGreaterThanOrEqual(3);
    expect(pruned.reviews).toBeGreaterThanOrEqual(2);
    expect(pruned.webhookDeliveries).toBeGreaterThanOrEqual(1);
    const { rows: deliveries } = await h.db.query('SELECT id FROM webhook_deliveries WHERE id = ANY($1)', [[settled.deliveryId, trying.deliveryId]]);
    expect(deliveries.map((row) => row.id)).toEqual([trying.deliveryId]);
    const { rows: kept } = await h.db.query('SELECT id, redelivery_of FROM webhook_deliveries WHERE id = ANY($1) ORDER BY id', [[resent.deliveryId, ...redeliveries]]);
    expect(kept).toEqual(redeliveries.map((id) => ({ id, redelivery_of: null })));
    const { rows: events } = await h.db.query('SELECT count(*)::int AS n FROM webhook_events e JOIN webhook_deliveries d ON d.event_id = e.id WHERE d.id = $1', [
      trying.deliveryId,
    ]);
    expect(events[0].n).toBe(1);

    const { rows: reviews } = await h.db.query('SELECT id FROM reviews WHERE org_id = $1 ORDER BY id', [acme.organization.id]);
    expect(reviews.map((row) => row.id).sort()).toEqual([pending, recent].sort());
    const { rows: decisions } = await h.db.query(`SELECT decision FROM gate_decisions WHERE org_id = $1 AND decision = 'review'`, [acme.organization.id]);
    expect(decisions).toHaveLength(4);
    const { rows: left } = await h.db.query('SELECT id FROM call_log WHERE org_id = $1', [acme.organization.id]);
    expect(left.map((row) => row.id)).toEqual(expect.not.arrayContaining(old));
    expect(left.length).toBe(calls.length - 3);
    // The approved write was applied and stays; only its review went.
    const tasks = json(await h.request({ method: 'GET', url: '/api/v1/tasks?limit=50', token: acme.readOnlyToken })).data.map((task: { title: string }) => task.title);
    expect(tasks).toContain('review: approve');
  });

  it('prunes a withdrawn review as a decided one, by when it was withdrawn', async () => {
    const other = await h.createOrganization();
    const heldBy = async (title: string) => {
      const key = await createApiKey(h.db, { orgId: other.organization.id, label: title, access: 'read_write' });
      const held = await h.request({ method: 'POST', url: '/api/v1/tasks', token: key.token, payload: { title } });
      expect(held.statusCode).toBe(202);
      const { withdrawn } = await revokeApiKey(h.db, withdrawReviewsOfKey, other.organization.id, key.key.id);
      expect(withdrawn.map((review) => review.id)).toEqual([json(held).review.id]);
      return json(held).review.id as string;
    };
    const [longAgo, lately] = [await heldBy('review: withdrawn long ago'), await heldBy('review: withdrawn lately')];
    await h.db.query(`UPDATE reviews SET decided_at = now() - interval '400 days' WHERE id = $1`, [longAgo]);
    // What each scheduled run does (the test above runs it through the schedule).
    await pruneExpiredRecords(h.db, { callLogMs: undefined, reviewsMs: 90 * day });
    const { rows } = await h.db.query('SELECT id, status FROM reviews WHERE org_id = $1', [other.organization.id]);
    expect(rows).toEqual([{ id: lately, status: 'withdrawn' }]);
  });
});
