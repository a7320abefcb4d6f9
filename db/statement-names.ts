import { createHash } from 'node:crypto';
import type pg from 'pg';

/**
 * Names the statements a process sends again and again, so that PostgreSQL parses and plans each once per
 * connection instead of on every call (a gated write sends about nine; named, PostgreSQL spends about a third
 * less CPU on them). A text is named once it has been sent a few times, and only so many are: SQL built with
 * varying parts stays unnamed rather than filling every connection with plans.
 *
 * A migration that changes what a named statement returns (a column added under `RETURNING *`) makes PostgreSQL
 * refuse the old plan ("cached plan must not change result type"); `forget` then renames every statement, so the
 * next attempt prepares it afresh on whichever connection it lands. A server session that does not hold what this
 * connection prepared, or holds a name already (a pooler in transaction mode between us and PostgreSQL, sessions
 * shared by several clients), makes `stopNaming` send every statement unnamed from then on.
 */
export class StatementNames {
  private sent = new Map<string, number>();
  private names = new Map<string, string>();
  private generation = 0;
  private naming = true;

  constructor(
    private readonly options: { namedAfter: number; most: number } = { namedAfter: 3, most: 400 },
  ) {}

  /** The statement to hand `pg`: named when it has earned it, else as given. */
  statement(text: string | pg.QueryConfig, values?: unknown[]): { text: string | pg.QueryConfig; values?: unknown[] } {
    if (!this.naming || typeof text !== 'string' || values === undefined) return { text, values };
    const name = this.names.get(text) ?? this.earn(text);
    return name ? { text: { name, text, values } } : { text, values };
  }

  /** After a refused stale plan: every statement is prepared again under a new name. */
  forget(): void {
    this.generation++;
    this.names.clear();
    this.sent.clear();
  }

  /** After a session that lost or already had a name: nothing is named again in this process. */
  stopNaming(): void {
    this.naming = false;
    this.names.clear();
    this.sent.clear();
  }

  private earn(text: string): string | undefined {
    if (this.names.size >= this.options.most) return undefined;
    const times = (this.sent.get(text) ?? 0) + 1;
    if (times < this.options.namedAfter) {
      // Texts that never repeat must not pile up: the count starts again once too many are being counted.
      if (this.sent.size >= this.options.most * 10) this.sent.clear();
      this.sent.set(text, times);
      return undefined;
    }
    this.sent.delete(text);
    const name = `gh${this.generation}_${createHash('sha256').update(text).digest('base64url').slice(0, 22)}`;
    this.names.set(text, name);
    return name;
  }
}

/** PostgreSQL refused a prepared statement's plan because what it returns changed since it was prepared. */
export function isStalePlan(error: unknown): boolean {
  return (error as { code?: unknown })?.code === '0A000' && /cached plan must not change result type/.test((error as Error).message);
}

/**
 * The server session does not hold a statement this connection prepared (26000), or holds its name already (42P05):
 * the session is not this connection's alone. Refused before anything ran.
 */
export function isSharedSession(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return (code === '26000' || code === '42P05') && /prepared statement/.test((error as Error).message);
}
