import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import pLimit from 'p-limit';
import type { Database } from '../db/database';
import { planEventDeliveries } from '../domain/notify/deliveries';
import { ownerAlertTypes } from '../domain/notify/owner-alerts';
import { ownerAlertWorkflowId, reviewPeopleWorkflowId, webhookDeliveryWorkflowId } from '../workflows/messages';
import type { superviseReview } from '../workflows/notifications';
import type { alertOwners } from '../workflows/owner-alerts';
import type { deliverWebhook, DeliveryRetry } from '../workflows/webhooks';

export interface OutboxRelayOptions {
  db: Database;
  client: Client;
  taskQueue: string;
  retry: DeliveryRetry;
  /** How often the outbox is read (a few rows at most are waiting: an indexed read of nothing, mostly). */
  everyMs?: number;
  /** Told of a round that failed (the database or Temporal away); the next round tries again. */
  onError?: (error: Error) => void;
}

export interface OutboxRelay {
  /** One round now: the events and redeliveries waiting, handed to Temporal. Answers how many. */
  relayOnce(): Promise<number>;
  stop(): Promise<void>;
}

/** How long a claimed row is left to the relay that claimed it, should that one die before handing it on. */
const claimSeconds = 30;
const batch = 50;
/**
 * Events a relay hands on at once. One at a time, a relay carried about 5 events a second while a busy dev server
 * answered each start in 0.2 s: less than the soak's mixed load raises (9 a second), so the outbox grew. Many at
 * once took Temporal from the gated writes (16: writes waited past their deadline); a few keep up.
 */
const eventsAtOnce = 4;

/**
 * Hands what the outbox holds to Temporal: each event's deliveries planned here (a row per endpoint that asks for
 * it, in the database) and each started as a deliverWebhook run, with a held write's supervisor (superviseReview)
 * or an owners' alert's sending (alertOwners);
 * each redelivery to a deliverWebhook run. Workflow ids are made from the rows' (a second start of the same one is
 * refused by Temporal, and planning again finds the deliveries planned before), so a relay that dies between
 * starting and marking costs a repeat start, never a second delivery. Several relays (one per worker) share the
 * work: rows are claimed for a while, skipping those another holds.
 *
 * Until 2026-11-27 an event was handed to a relayWebhookEvent run that planned and started the same children: a
 * workflow, an activity and its tasks more for each event, half of what a webhook cost Temporal. Runs of it still
 * open finish on the worker, which keeps the type.
 */
export function startOutboxRelay({ db, client, taskQueue, retry, everyMs = 500, onError = () => {} }: OutboxRelayOptions): OutboxRelay {
  const start = async (run: () => Promise<unknown>) => {
    try {
      await run();
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
  };

  /**
   * Claims the waiting rows of one queue (the outbox's events, or redeliveries), starts a workflow for each, oldest
   * first and several at once (events are not ordered across deliveries: receivers order by `timestamp`), and marks
   * those started handed on. A start that failed leaves its row claimed: a later round takes it again.
   */
  async function handOver(queue: { table: string; order: string; handed: string }, startFor: (id: string) => Promise<unknown>) {
    const { rows } = await db.query<{ id: string; position: string }>(
      `UPDATE ${queue.table} SET claimed_until = now() + make_interval(secs => $1)
       WHERE ${queue.order} IN (
         SELECT ${queue.order} FROM ${queue.table} WHERE ${queue.handed} IS NULL AND (claimed_until IS NULL OR claimed_until < now())
         ORDER BY ${queue.order} LIMIT $2 FOR UPDATE SKIP LOCKED)
       RETURNING id, ${queue.order} AS position`,
      [claimSeconds, batch],
    );
    rows.sort((a, b) => String(a.position).localeCompare(String(b.position), 'en', { numeric: true }));
    const limit = pLimit(eventsAtOnce);
    const started = await Promise.allSettled(rows.map(({ id }) => limit(() => startFor(id).then(() => id))));
    const handed = started.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
    if (handed.length) await db.query(`UPDATE ${queue.table} SET ${queue.handed} = now() WHERE id = ANY($1::text[])`, [handed]);
    const failed = started.find((outcome) => outcome.status === 'rejected');
    if (failed) throw failed.reason;
    return rows.length;
  }

  const deliver = (deliveryId: string) =>
    start(() =>
      client.workflow.start<typeof deliverWebhook>('deliverWebhook', {
        workflowId: webhookDeliveryWorkflowId(deliveryId),
        taskQueue,
        args: [deliveryId, retry],
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      }),
    );

  /** An event's deliveries, planned and started; for a held write its reviewers' supervision; for an owners' alert its sending. */
  async function relayEvent(eventId: string): Promise<void> {
    const planned = await planEventDeliveries(db, eventId);
    const reviewId = planned.type === 'review.created' ? planned.reviewId : null;
    await Promise.all([
      ...planned.deliveryIds.map(deliver),
      ...(ownerAlertTypes.includes(planned.type)
        ? [
            start(() =>
              client.workflow.start<typeof alertOwners>('alertOwners', {
                workflowId: ownerAlertWorkflowId(eventId),
                taskQueue,
                args: [eventId],
                workflowIdReusePolicy: 'REJECT_DUPLICATE',
              }),
            ),
          ]
        : []),
      ...(reviewId
        ? [
            start(() =>
              client.workflow.start<typeof superviseReview>('superviseReview', {
                workflowId: reviewPeopleWorkflowId(reviewId),
                taskQueue,
                args: [reviewId],
                workflowIdReusePolicy: 'REJECT_DUPLICATE',
              }),
            ),
          ]
        : []),
    ]);
  }

  async function relayOnce(): Promise<number> {
    const events = await handOver({ table: 'webhook_events', order: 'seq', handed: 'relayed_at' }, relayEvent);
    const redeliveries = await handOver({ table: 'webhook_deliveries', order: 'id', handed: 'started_at' }, deliver);
    return events + redeliveries;
  }

  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let round: Promise<unknown> = Promise.resolve();
  const loop = () => {
    if (stopped) return;
    let relayed = 0;
    round = relayOnce()
      .then((count) => {
        relayed = count;
      })
      .catch((error: Error) => onError(error))
      .finally(() => {
        // A full batch may have more behind it: the next round goes at once.
        if (!stopped) timer = setTimeout(loop, relayed >= batch ? 0 : everyMs);
      });
  };
  timer = setTimeout(loop, 0);

  return {
    relayOnce,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await round;
    },
  };
}
