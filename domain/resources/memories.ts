import { z } from 'zod';
import type { Database, Queryable } from '../../db/database';
import { recordAudit } from '../audit/events';
import { AppError } from '../kit/errors';
import { createWrite, deleteWrite, type Writer } from '../gate/writes';
import { createdAt, ifMatch, recordId, recordVersion, text, updatedAt } from '../kit/fields';
import { newId } from '../kit/ids';
import { pageInput, type Page } from '../kit/pagination';
import { containsPattern, Filters, listPage } from '../kit/query';
import { plainRecord } from '../kit/rows';

// What agents remember: notes that belong to the API key that wrote them, not only to the organization,
// so that one agent's memory never leaks into another's conversations.

const memoryId = text({ max: 100 }).describe('The memory id, e.g. mry_01j…, as recall returned it');
const tag = text({ max: 50 }).trim().min(1);

export const memorySchema = z
  .object({
    id: recordId('memory', 'mry', 'pass it to forget (DELETE /v1/memories/{id}) when the note no longer holds'),
    api_key_id: z.string().describe('The API key that remembered it (key_…); only that key recalls or forgets it'),
    content: z.string().describe('The note itself, as it was remembered'),
    tags: z.array(z.string()).describe('Labels to recall it by, e.g. preference, customer, decision'),
    version: recordVersion,
    created_at: createdAt,
    updated_at: updatedAt,
  })
  .describe('A note this API key keeps across conversations; other keys of the organization never see it');

export type Memory = z.infer<typeof memorySchema>;

export const rememberInput = z.strictObject({
  content: text({ max: 4_000 })
    .trim()
    .min(1)
    .describe('The note to keep, 1 to 4,000 characters: a fact, preference or decision worth knowing in a later conversation'),
  tags: z
    .array(tag)
    .max(20)
    .default([])
    .describe('Labels to recall the note by (e.g. preference, customer, decision), at most 20, each up to 50 characters'),
});
export type RememberInput = z.infer<typeof rememberInput>;

export const forgetInput = z.strictObject({ id: memoryId, if_match: ifMatch });

export const recallInput = z.strictObject({
  tags: z
    .string()
    .max(500)
    .optional()
    .transform((value) => value?.split(',').map((label) => label.trim()).filter(Boolean))
    .describe('Comma-separated tags; only memories carrying all of them'),
  search: text({ max: 200 }).optional().describe('Matches the content (case-insensitive, part of a word is enough)'),
  ...pageInput,
});
export type RecallInput = z.infer<typeof recallInput>;

/** The key's own memories, newest first; the cursor is the last id shown, since ids sort by creation time. */
export function recallMemories(db: Queryable, orgId: string, apiKeyId: string, input: RecallInput): Promise<Page<Memory>> {
  const filters = new Filters(orgId)
    .add('api_key_id = $?', apiKeyId)
    .add('content ILIKE $?', containsPattern(input.search))
    .add('tags @> $?::text[]', input.tags?.length ? input.tags : undefined);
  return listPage(db, 'agent_memories', filters, input);
}

async function insertMemory(tx: Queryable, orgId: string, input: RememberInput, by: Writer): Promise<Memory> {
  const { rows } = await tx.query(
    `INSERT INTO agent_memories (id, org_id, api_key_id, content, tags) VALUES ($1, $2, $3, $4, $5) RETURNING *`,
    [newId('mry'), orgId, by.apiKeyId, input.content, input.tags],
  );
  return plainRecord(rows[0]) as Memory;
}

export const remember = createWrite({ name: 'memories.remember', resourceType: 'Memory', input: rememberInput, insert: insertMemory });

export const forget = deleteWrite({ name: 'memories.forget', resourceType: 'Memory', table: 'agent_memories', what: 'memory', input: forgetInput, ownedByKey: true });

// People's view of what agents remember (the console's Agent Command Center): every key's memories, and an
// admin's correction or forgetting of one. A person's action, not a gated write; recorded with who and why.

export const peopleMemoriesInput = z.strictObject({
  api_key_id: text({ max: 100 }).optional().describe('Only the memories of this API key (key_…)'),
  ...pageInput,
});

export async function listMemoriesOfAllKeys(db: Queryable, orgId: string, input: z.infer<typeof peopleMemoriesInput>): Promise<Page<Memory>> {
  return listPage(db, 'agent_memories', new Filters(orgId).add('api_key_id = $?', input.api_key_id), input);
}

export const correctMemoryInput = z.strictObject({
  id: memoryId,
  content: text({ min: 1, max: 4000 }).describe('The note as it should read'),
  reason: text({ min: 1, max: 500 }).describe('Why it was corrected, for the audit trail'),
});

export const forgetMemoryInput = z.strictObject({
  id: memoryId,
  reason: text({ min: 1, max: 500 }).describe('Why it is forgotten, for the audit trail'),
});

export async function correctMemory(db: Database, orgId: string, input: z.infer<typeof correctMemoryInput>, userId: string): Promise<Memory> {
  return db.transaction(async (tx) => {
    const before = await lockMemory(tx, orgId, input.id);
    const { rows } = await tx.query(
      `UPDATE agent_memories SET content = $3, version = version + 1, updated_at = now() WHERE org_id = $1 AND id = $2 RETURNING *`,
      [orgId, input.id, input.content],
    );
    await recordAudit(tx, orgId, {
      type: 'memory.corrected',
      actor: { type: 'user', id: userId },
      resourceId: input.id,
      data: { api_key_id: before.api_key_id, reason: input.reason, before: before.content, after: input.content },
    });
    return plainRecord(rows[0]) as Memory;
  });
}

export async function forgetMemoryForKey(db: Database, orgId: string, input: z.infer<typeof forgetMemoryInput>, userId: string): Promise<{ id: string; forgotten: true }> {
  return db.transaction(async (tx) => {
    const before = await lockMemory(tx, orgId, input.id);
    await tx.query('DELETE FROM agent_memories WHERE org_id = $1 AND id = $2', [orgId, input.id]);
    await recordAudit(tx, orgId, {
      type: 'memory.forgotten',
      actor: { type: 'user', id: userId },
      resourceId: input.id,
      data: { api_key_id: before.api_key_id, reason: input.reason, content: before.content },
    });
    return { id: input.id, forgotten: true };
  });
}

async function lockMemory(tx: Queryable, orgId: string, id: string): Promise<Memory> {
  const { rows } = await tx.query('SELECT * FROM agent_memories WHERE org_id = $1 AND id = $2 FOR UPDATE', [orgId, id]);
  if (!rows[0]) throw new AppError('not_found', `The organization has no memory ${id}`);
  return plainRecord(rows[0]) as Memory;
}

/**
 * A key's notes that concern a record, as they stood by `heldAt` (what the agent knew when it wrote): those that
 * share a tag with it, or name its id, title or name in their content (case-insensitive). Newest first, at most
 * `limit`; only that key's notes, of that organization.
 */
export async function memoriesConcerning(
  db: Queryable,
  orgId: string,
  apiKeyId: string,
  about: { ids: string[]; names: string[]; tags: string[] },
  heldAt: string,
  limit = 20,
): Promise<(Memory & { matched: string[] })[]> {
  const patterns = [...about.ids, ...about.names].map((term) => containsPattern(term)!);
  const tags = about.tags.map((tag) => tag.toLowerCase());
  if (patterns.length === 0 && tags.length === 0) return [];
  const { rows } = await db.query(
    `SELECT m.*,
            array(SELECT t FROM unnest(m.tags) t WHERE lower(t) = ANY($4::text[])) AS shared_tags,
            array(SELECT p FROM unnest($5::text[]) p WHERE m.content ILIKE p) AS named
     FROM agent_memories m
     WHERE m.org_id = $1 AND m.api_key_id = $2 AND m.created_at <= $3
       AND (EXISTS (SELECT 1 FROM unnest(m.tags) t WHERE lower(t) = ANY($4::text[])) OR m.content ILIKE ANY($5::text[]))
     ORDER BY m.id DESC
     LIMIT $6`,
    [orgId, apiKeyId, heldAt, tags, patterns, limit],
  );
  const termOf = new Map(patterns.map((pattern, at) => [pattern, [...about.ids, ...about.names][at]!]));
  return rows.map((row) => {
    const { shared_tags: sharedTags, named, ...memory } = row;
    return {
      ...(plainRecord(memory) as Memory),
      matched: [...(sharedTags as string[]).map((tag) => `tag ${tag}`), ...(named as string[]).map((pattern) => `names “${termOf.get(pattern)}”`)],
    };
  });
}
