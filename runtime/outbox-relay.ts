import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Database } from '../db/database';
import type { deliverWebhook, DeliveryRetry, relayWebhookEvent } from '../workflows/webhooks';

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
 * Hands what the outbox holds to Temporal: each event to a relayWebhookEvent run, each redelivery to a
 * deliverWebhook run, by workflow ids made from theirs (a second start of the same one is refused by Temporal, so
 * a relay that dies between starting and marking costs a repeat start, never a second delivery). Several relays
 * (one per worker) share the work: rows are claimed for a while, skipping those another holds.
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
   * Claims the waiting rows of one queue (the outbox's events, or redeliveries), starts a workflow for each, in
   * order, and marks it handed on.
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
    for (const { id } of rows) {
      await start(() => startFor(id));
      await db.query(`UPDATE ${queue.table} SET ${queue.handed} = now() WHERE id = $1`, [id]);
    }
    return rows.length;
  }

  async function relayOnce(): Promise<number> {
    const events = await handOver({ table: 'webhook_events', order: 'seq', handed: 'relayed_at' }, (id) =>
      client.workflow.start<typeof relayWebhookEvent>('relayWebhookEvent', {
        workflowId: `webhook-event-${id}`,
        taskQueue,
        args: [id, retry],
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      }),
    );
    const redeliveries = await handOver({ table: 'webhook_deliveries', order: 'id', handed: 'started_at' }, (id) =>
      client.workflow.start<typeof deliverWebhook>('deliverWebhook', {
        workflowId: `webhook-delivery-${id}`,
        taskQueue,
        args: [id, retry],
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      }),
    );
    return events + redeliveries;
  }

  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let round: Promise<unknown> = Promise.resolve();
  const loop = () => {
    if (stopped) return;
    round = relayOnce()
      .catch((error: Error) => onError(error))
      .finally(() => {
        if (!stopped) timer = setTimeout(loop, everyMs);
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
