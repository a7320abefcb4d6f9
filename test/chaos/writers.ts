import { setTimeout as sleep } from 'node:timers/promises';

/** How one gated write ended for the writer that sent it. */
export type WriteEnd = 'applied' | 'held' | 'denied' | 'refused' | 'unresolved';

export interface WriteRecord {
  title: string;
  idempotencyKey: string;
  end: WriteEnd;
  attempts: number;
  /** From the first attempt to the definitive answer (or to giving up). */
  ms: number;
  /** The answer that ended it, or the last one seen for an unresolved write. */
  lastAnswer: string;
  reviewId?: string;
  /** The id of the record a 201 answered with. */
  recordId?: string;
  /** When the definitive answer came (Date.now()). */
  answeredAt?: number;
}

/** What the writers saw, over every attempt of every write. */
export interface LoadCounts {
  attempted: number;
  applied: number;
  held: number;
  denied: number;
  /** Writes answered with a definitive refusal other than the policy's (a 4xx, say). */
  refused: number;
  /** Writes still without a definitive answer when their writer gave up. */
  unresolved: number;
  /** Attempts after the first, all with the same Idempotency-Key. */
  retries: number;
  answers503: number;
  /** 5xx answers other than 503 (a 500, say): the api failed where it should have retried or said 503. */
  answersOther5xx: number;
  /**
   * 5xx answers without Gatehouse's envelope: a proxy's 502 for an api it lost mid-request (or 503 with none left to
   * try), as good as a dropped connection.
   */
  proxyErrors: number;
  answers429: number;
  /** Refused connections, resets, sockets closed mid-answer. */
  connectionErrors: number;
  /** Attempts without an answer within the attempt's timeout. */
  timeouts: number;
  /** Answers marked `Idempotent-Replayed`: a retry that found the first request's answer. */
  replayed: number;
}

export interface WriterOptions {
  apiUrl: string;
  /** One token per writer. */
  tokens: string[];
  /** Unique within the organization: titles and Idempotency-Keys start with it. */
  prefix: string;
  /** The bound in count: no writer sends more writes than this. */
  maxWritesPerWriter: number;
  /** Give up on one write (unresolved) after this long without a definitive answer. */
  writeDeadlineMs?: number;
  /** Wait this long for one attempt's answer; the api itself answers 503 after 30 s. */
  attemptTimeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * Writers sending gated `tasks.create` writes, each with its own Idempotency-Key, retrying with the same key on
 * a 503, a 5xx, a 429 or a connection error until a definitive answer (201, 202, 403, another 4xx).
 */
export class WriteLoad {
  readonly records: WriteRecord[] = [];
  readonly counts: LoadCounts = {
    attempted: 0,
    applied: 0,
    held: 0,
    denied: 0,
    refused: 0,
    unresolved: 0,
    retries: 0,
    answers503: 0,
    answersOther5xx: 0,
    proxyErrors: 0,
    answers429: 0,
    connectionErrors: 0,
    timeouts: 0,
    replayed: 0,
  };
  private stopping = false;
  /** Writers still sending. */
  private writing: number;
  private readonly loops: Promise<void>[];

  constructor(private readonly options: WriterOptions) {
    this.writing = options.tokens.length;
    this.loops = options.tokens.map((token, writer) => this.writerLoop(token, writer));
  }

  /** Definitive answers so far: a sign the service makes progress again after a fault. */
  get settled(): number {
    return this.counts.applied + this.counts.held + this.counts.denied + this.counts.refused;
  }

  /** Every writer has sent all the writes it may send (a scenario too small for its faults, when it happens before they end). */
  get exhausted(): boolean {
    return this.writing === 0 && this.options.tokens.length > 0;
  }

  /** Resolves once `more` further writes have been answered definitively, or after `timeoutMs`; true if they were. */
  async progressed(more: number, timeoutMs: number): Promise<boolean> {
    const target = this.settled + more;
    const deadline = Date.now() + timeoutMs;
    while (this.settled < target) {
      if (Date.now() > deadline || this.options.signal?.aborted || this.exhausted) return false;
      await sleep(100);
    }
    return true;
  }

  /** No new writes; those under way go on until they have an answer (or give up). */
  async stop(): Promise<WriteRecord[]> {
    this.stopping = true;
    await Promise.all(this.loops);
    return this.records;
  }

  private async writerLoop(token: string, writer: number): Promise<void> {
    for (let n = 0; n < this.options.maxWritesPerWriter && !this.stopping && !this.options.signal?.aborted; n += 1) {
      await this.send(token, `${this.options.prefix}-w${writer}-n${n}`);
    }
    this.writing -= 1;
  }

  /** Sends one write (its title is its Idempotency-Key too) and retries it until its answer is definitive. */
  async send(token: string, title: string): Promise<WriteRecord> {
    const record: WriteRecord = { title, idempotencyKey: title, end: 'unresolved', attempts: 0, ms: 0, lastAnswer: '' };
    this.records.push(record);
    const started = Date.now();
    this.counts.attempted += 1;
    const deadline = Date.now() + (this.options.writeDeadlineMs ?? 150_000);
    for (let attempt = 0; Date.now() < deadline && !this.options.signal?.aborted; attempt += 1) {
      if (attempt > 0) {
        this.counts.retries += 1;
        await sleep(Math.min(2000, 100 * 2 ** Math.min(attempt, 5)) * (0.5 + Math.random()));
      }
      record.attempts += 1;
      const end = await this.attempt(token, record);
      record.ms = Date.now() - started;
      if (end) {
        record.end = end;
        record.answeredAt = Date.now();
        this.counts[end] += 1;
        return record;
      }
    }
    this.counts.unresolved += 1;
    return record;
  }

  /** One attempt: the write's end if the answer was definitive, else undefined (to retry). */
  private async attempt(token: string, record: WriteRecord): Promise<WriteEnd | undefined> {
    let response: Response;
    let body: any;
    try {
      response = await fetch(`${this.options.apiUrl}/v1/tasks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': record.idempotencyKey },
        body: JSON.stringify({ title: record.title }),
        signal: AbortSignal.timeout(this.options.attemptTimeoutMs ?? 45_000),
      });
      body = await response.json().catch(() => undefined);
    } catch (error) {
      const name = (error as Error).name;
      if (name === 'TimeoutError' || name === 'AbortError') {
        this.counts.timeouts += 1;
        record.lastAnswer = 'timeout';
      } else {
        this.counts.connectionErrors += 1;
        record.lastAnswer = `connection error: ${describeFetchError(error)}`;
      }
      return undefined;
    }
    const code: string | undefined = body?.error?.code;
    record.lastAnswer = `${response.status}${code ? ` ${code}` : ''}`;
    if (response.headers.get('idempotent-replayed') === 'true') this.counts.replayed += 1;
    if (response.status === 201) {
      record.recordId = body?.data?.id;
      return 'applied';
    }
    if (response.status === 202) {
      record.reviewId = body?.review?.id;
      return 'held';
    }
    if (response.status === 403 && code === 'policy_denied') return 'denied';
    if (response.status >= 500 && body?.success !== false) {
      this.counts.proxyErrors += 1;
      return undefined;
    }
    if (response.status === 503) {
      this.counts.answers503 += 1;
      return undefined;
    }
    if (response.status >= 500) {
      this.counts.answersOther5xx += 1;
      return undefined;
    }
    if (response.status === 429) {
      this.counts.answers429 += 1;
      return undefined;
    }
    return 'refused';
  }
}

function describeFetchError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}
