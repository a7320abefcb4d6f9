import { z } from 'zod';
import { text } from '../../kit/fields';
import type { GatedWrite } from '../writes';

// A changeset on the wire: several gated writes submitted as one, with references between the records it creates.

/** The most items one changeset may hold. */
export const changesetLimit = 20;

/** The operation name a changeset is recorded under (gate_decisions, reviews, audit, the policy never sees it). */
export const changesetOperation = 'changesets.submit';

/** How an item names a record made by an earlier item: the whole string `$ref:<name>`, where `<name>` is that item's `ref`. */
export const refPrefix = '$ref:';
const refName = /^[A-Za-z][A-Za-z0-9_-]{0,39}$/;

/** A reviewer's verdicts on some items of a held changeset, given with their approval of the whole (see ./verdicts.ts). */
export const itemVerdictsInput = z
  .array(
    z.strictObject({
      index: z.number().int().min(0).max(changesetLimit - 1).describe('The item, from 0'),
      verdict: z.enum(['approved', 'rejected']).describe('approved (the default for an item not listed) or rejected'),
      reason: text({ max: 2000 }).optional().describe('Why; required for a rejected item'),
      edit: editFieldsInput()
        .optional()
        .describe(
          'Fields to change in this item (a create or update item, with verdict approved) over its input as the review holds it, e.g. {"title": "…"}; id and if_match cannot change; a "$ref:<name>" must name an earlier item kept. A problem names items.<k>.edit.<field> (422)',
        ),
    }),
  )
  .max(changesetLimit);

/**
 * How deep an item's input may nest (objects and lists inside each other). Refs are looked for in the whole input
 * before its write's own schema has a say, so the bound is checked first: a deeper input is refused (422), never
 * walked into a stack overflow.
 */
export const maxInputDepth = 32;

export const changesetModes = ['all_or_nothing', 'divisible'] as const;
export type ChangesetMode = (typeof changesetModes)[number];

/** A changeset's input as the gate reads it back (the api validated it whole with changesetInputOf). */
export interface ChangesetInput {
  mode: ChangesetMode;
  items: { ref?: string; operation: string; input: Record<string, unknown> }[];
}

const modeSchema = z
  .enum(changesetModes)
  .default('all_or_nothing')
  .describe(
    'all_or_nothing (default): a reviewer approves or denies the whole; divisible: a reviewer may also approve some items and reject others (the approved ones are applied together)',
  );

/** How the gate reads a changeset's input back: its shape (each item is parsed by its own write as it is decided). */
export const changesetShape = z.object({
  mode: modeSchema,
  items: z.array(z.object({ ref: z.string().optional(), operation: z.string(), input: z.record(z.string(), z.unknown()) })).min(1).max(changesetLimit),
});

/**
 * A changeset's input as the catalog takes it, for the gated writes it may hold (the resources' registry): each item's
 * input valid for its write, each `$ref:` naming an earlier item's ref, refs unique. A problem names its item's field
 * (`items.2.input.project_id`).
 */
export function changesetInputOf(writes: readonly GatedWrite[]) {
  const byName = new Map(writes.map((write) => [write.name, write]));
  const itemSchema = z.strictObject({
    ref: z
      .string()
      .regex(refName, 'a letter, then up to 39 letters, digits, _ or -')
      .optional()
      .describe('A name for the record this item creates (or changes), so that later items refer to its id as "$ref:<name>"'),
    operation: z
      .enum(writes.map((write) => write.name) as [string, ...string[]])
      .describe('The gated write, by its operation name: tasks.create, projects.update, tasks.delete, …'),
    input: z
      .record(z.string(), z.unknown())
      .describe(
        `That write's input, exactly as its own operation takes it (path fields such as id go in here). Any string value "$ref:<name>" is replaced by the id of the record made by the earlier item with that ref. At most ${maxInputDepth} levels of objects and lists deep`,
      ),
  });
  return z
    .strictObject({
      mode: modeSchema,
      items: z
        .array(itemSchema)
        .min(1)
        .max(changesetLimit)
        .describe(`The writes, 1 to ${changesetLimit}, applied in this order in one transaction: all of them or none`),
    })
    .superRefine((changeset, ctx) => {
      const defined = new Map<string, number>();
      changeset.items.forEach((item, index) => {
        const tooDeep = pathBeyondDepth(item.input, maxInputDepth);
        if (tooDeep) {
          ctx.addIssue({ code: 'custom', message: `nests more than ${maxInputDepth} levels deep (objects and lists inside each other)`, path: ['items', index, 'input', ...tooDeep.slice(0, 1)] });
          return;
        }
        const parsed = byName.get(item.operation)!.input.safeParse(item.input);
        if (!parsed.success) {
          for (const issue of parsed.error.issues) {
            ctx.addIssue({ code: 'custom', message: issue.message, path: ['items', index, 'input', ...issue.path] });
          }
        }
        for (const { path, name } of refsIn(item.input)) {
          if (!defined.has(name)) {
            ctx.addIssue({
              code: 'custom',
              message: `refers to ${refPrefix}${name}, which no earlier item defines (an item may refer only to the ref of an item before it)`,
              path: ['items', index, 'input', ...path],
            });
          }
        }
        if (item.ref !== undefined) {
          if (defined.has(item.ref)) {
            ctx.addIssue({ code: 'custom', message: `ref "${item.ref}" is already item ${defined.get(item.ref)}'s`, path: ['items', index, 'ref'] });
          } else {
            defined.set(item.ref, index);
          }
        }
      });
    });
}


/**
 * Where a value nests deeper than `max` levels (the path to the first container past it), or undefined. Walked
 * with a stack of its own, so that any depth the JSON parser took is measured without recursion.
 */
export function pathBeyondDepth(value: unknown, max: number): (string | number)[] | undefined {
  const pending: { value: unknown; path: (string | number)[] }[] = [{ value, path: [] }];
  while (pending.length) {
    const { value: next, path } = pending.pop()!;
    if (!next || typeof next !== 'object') continue;
    if (path.length >= max) return path;
    const entries: [string | number, unknown][] = Array.isArray(next) ? next.map((entry, index) => [index, entry]) : Object.entries(next);
    for (const [key, entry] of entries) pending.push({ value: entry, path: [...path, key] });
  }
  return undefined;
}

/** Where a string (a value or a key) holds what PostgreSQL's jsonb cannot store (NUL, a lone surrogate), or undefined. */
function pathOfUnstorableText(value: unknown): (string | number)[] | undefined {
  const unstorable = (text: string) => text.includes('\u0000') || !text.isWellFormed();
  const pending: { value: unknown; path: (string | number)[] }[] = [{ value, path: [] }];
  while (pending.length) {
    const { value: next, path } = pending.pop()!;
    if (typeof next === 'string' && unstorable(next)) return path;
    if (!next || typeof next !== 'object') continue;
    const entries: [string | number, unknown][] = Array.isArray(next) ? next.map((entry, index) => [index, entry]) : Object.entries(next);
    for (const [key, entry] of entries) {
      if (typeof key === 'string' && unstorable(key)) return [...path, key];
      pending.push({ value: entry, path: [...path, key] });
    }
  }
  return undefined;
}

/**
 * Fields a person changes as they approve (a held write's `edit`, a changeset item's): any JSON object that nests at
 * most maxInputDepth levels and holds no text the database cannot keep; what the fields may be is the write's own
 * schema's to say, once the edit is applied over its input.
 */
export function editFieldsInput() {
  return z.record(z.string(), z.unknown()).superRefine((fields, ctx) => {
    const tooDeep = pathBeyondDepth(fields, maxInputDepth);
    if (tooDeep) {
      ctx.addIssue({ code: 'custom', message: `nests more than ${maxInputDepth} levels deep (objects and lists inside each other)`, path: tooDeep.slice(0, 1) });
      return;
    }
    const unstorable = pathOfUnstorableText(fields);
    if (unstorable) ctx.addIssue({ code: 'custom', message: 'must not contain NUL characters or lone surrogates', path: unstorable });
  });
}

/**
 * Every `$ref:<name>` string in an item's input, with where it stands. Nothing deeper than maxInputDepth is walked
 * (a validated input never is deeper).
 */
export function refsIn(value: unknown, path: (string | number)[] = []): { path: (string | number)[]; name: string }[] {
  if (typeof value === 'string') return value.startsWith(refPrefix) ? [{ path, name: value.slice(refPrefix.length) }] : [];
  if (path.length >= maxInputDepth) return [];
  if (Array.isArray(value)) return value.flatMap((entry, index) => refsIn(entry, [...path, index]));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([key, entry]) => refsIn(entry, [...path, key]));
  return [];
}

/** The item's input with each `$ref:<name>` replaced by the id `ids` gives that name (as deep as maxInputDepth). */
export function resolveRefs(value: unknown, ids: ReadonlyMap<string, string>, depth = 0): unknown {
  if (typeof value === 'string') return value.startsWith(refPrefix) ? (ids.get(value.slice(refPrefix.length)) ?? value) : value;
  if (depth >= maxInputDepth) return value;
  if (Array.isArray(value)) return value.map((entry) => resolveRefs(entry, ids, depth + 1));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, resolveRefs(entry, ids, depth + 1)]));
  return value;
}

/** The refs an item's input names (each once). */
export function refNames(input: unknown): string[] {
  return [...new Set(refsIn(input).map((ref) => ref.name))];
}
