import { z } from 'zod';
import { pathParameters, type Operation } from '../../api/catalog/operation';
import { headerFields } from '../../api/rest/routes';
import { newId, sortableUnique, type IdPrefix } from '../../domain/kit/ids';
import { resourceWrites } from '../../domain/resources';

// Cross-tenant probes, generated from the catalog: for each operation, the places in its input that name a record
// (path parameters and reference fields, found in its zod schema), and an otherwise valid input around them, so
// that a refusal can only come from the record belonging to another organization.

/** One record of each kind of an organization, by id prefix. */
export type Holdings = Partial<Record<HoldingKind, string>>;

/** The kinds of record probed: those with an id prefix, and applied writes (named by their workflow id). */
export type HoldingKind = IdPrefix | 'write';

/** An id of the kind that no organization holds. */
export function ghostId(kind: HoldingKind): string {
  return kind === 'write' ? `ghost-org:tasks.create:${sortableUnique()}` : newId(kind);
}

/** A place in an operation's input that names a record. */
export interface Slot {
  /** Where the id goes in the input (`['tasks', 0, 'project_id']`). */
  at: (string | number)[];
  prefix: HoldingKind;
  /** A list of ids (`attendee_ids`): it gets one. */
  many: boolean;
}

/**
 * path: the other organization's ids in the path, and a change that a leak would apply to its record.
 * reference: the caller's own record in the path (if any) and one reference to the other organization's; one field
 * at a time, so that a check on one field cannot hide a missing check on another.
 * own: no path and no reference (a whole list, a create): the answer must still show nothing of the other organization.
 * control: the path probe with the caller's own ids, to show that the path reaches the record at all: a read answers
 * it, an update or a delete is refused for its stale If-Match (409), which changes nothing.
 */
export type ProbeKind = 'path' | 'reference' | 'own' | 'control';

/** The If-Match of a control: a version no record reaches in a test. */
export const staleVersion = '"999999"';

export interface Probe {
  operation: Operation;
  kind: ProbeKind;
  label: string;
  /** Filled with the other organization's ids. */
  foreign: Slot[];
  /** Filled with the caller's own ids: the record a reference probe changes. */
  own: Slot[];
  /** The rest of a valid input. */
  base: Record<string, unknown>;
}

export interface GeneratedProbes {
  probes: Probe[];
  /** Operations whose input could not be probed (a reference of an unknown kind, an input the samples do not satisfy). */
  problems: string[];
}

/** The kinds of record a probe may name. */
export const probePrefixes: readonly HoldingKind[] = ['task', 'prj', 'cus', 'cal', 'mem', 'prd', 'inv', 'bkg', 'exp', 'wlg', 'mtg', 'mry', 'rev', 'key', 'usr', 'whk', 'whd', 'trw', 'write'];

/**
 * What a reference names, by the noun in its field (`project_id`) or the operation's family (`id` of expenses.get):
 * the nouns of the data model, not a list of operations. A field none of them names is reported, not skipped.
 */
const prefixOfNoun: Record<string, HoldingKind> = {
  task: 'task', tasks: 'task',
  project: 'prj', projects: 'prj',
  customer: 'cus', customers: 'cus',
  event: 'cal', calendar: 'cal',
  product: 'prd', products: 'prd',
  invoice: 'inv', invoices: 'inv',
  booking: 'bkg', bookings: 'bkg',
  expense: 'exp', expenses: 'exp',
  work_log: 'wlg', work_logs: 'wlg',
  meeting_ingest: 'mtg', meeting_ingests: 'mtg',
  memory: 'mry', memories: 'mry',
  review: 'rev', reviews: 'rev',
  write: 'write', writes: 'write',
  api_key: 'key', api_keys: 'key',
  person: 'usr', people: 'usr', user: 'usr',
  trust_window: 'trw', trust_windows: 'trw',
  member: 'mem', team_member: 'mem', staff_member: 'mem', assignee: 'mem', owner: 'mem', attendee: 'mem', team: 'mem',
};

export function probesOf(catalog: readonly Operation[]): GeneratedProbes {
  const probes: Probe[] = [];
  const problems: string[] = [];
  for (const operation of catalog) {
    try {
      probes.push(...(operation.kind === 'gated_write' && operation.changeset ? changesetProbes(operation, catalog) : probesOfOperation(operation)));
    } catch (error) {
      problems.push(`${operation.name}: ${(error as Error).message}`);
    }
  }
  return { probes, problems };
}

function probesOfOperation(operation: Operation): Probe[] {
  const inPath = new Set(pathParameters(operation.path));
  const slots = slotsOf(operation.input, [], inPath, operation.family);
  const pathSlots = slots.filter((slot) => inPath.has(String(slot.at[0])));
  const references = slots.filter((slot) => !inPath.has(String(slot.at[0])));
  const required = sampleObject(operation.input, slots);
  // A reference the input cannot do without gets the caller's own record wherever it is not the one probed.
  const shape = operation.input.shape as Record<string, z.ZodType>;
  const ownReferences = references.filter((slot) => slot.at.length === 1 && isRequired(shape[String(slot.at[0])]!));
  const otherOwn = (probed: Slot) => ownReferences.filter((slot) => slot !== probed);

  const probes: Probe[] = [];
  if (pathSlots.length) {
    const changes = changesOf(operation.input, slots);
    probes.push({ operation, kind: 'path', label: 'path id', foreign: pathSlots, own: ownReferences, base: { ...required, ...changes } });
    const control = { operation, kind: 'control' as const, foreign: [], own: [...pathSlots, ...ownReferences] };
    if (operation.kind === 'read') probes.push({ ...control, label: 'own path id', base: required });
    else if ('if_match' in shape) probes.push({ ...control, label: 'own path id, stale If-Match', base: { ...required, if_match: staleVersion } });
  } else {
    probes.push({ operation, kind: 'own', label: 'own', foreign: [], own: ownReferences, base: required });
  }
  for (const reference of references) {
    const base = { ...required, ...optionalHolder(operation.input, reference, slots, required) };
    probes.push({ operation, kind: 'reference', label: fieldOf(reference), foreign: [reference], own: [...pathSlots, ...otherOwn(reference)], base });
  }

  for (const probe of probes) {
    const anyIds = Object.fromEntries(probePrefixes.map((prefix) => [prefix, ghostId(prefix)]));
    const checked = operation.input.safeParse(inputOf(probe, anyIds, anyIds));
    if (!checked.success) throw new Error(`the ${probe.label} probe's input is not valid: ${checked.error.message}`);
  }
  return probes;
}

/**
 * A changeset's probes: every probe of every gated write the changeset may hold, as its one item (the ids in the
 * item's input, where the changeset names them: `items.0.input.project_id`).
 */
const changesetItemNames = new Set(resourceWrites.map((write) => write.name));

function changesetProbes(operation: Operation, catalog: readonly Operation[]): Probe[] {
  const inItem = (slot: Slot): Slot => ({ ...slot, at: ['items', 0, 'input', ...slot.at] });
  const probes: Probe[] = [];
  for (const write of catalog) {
    if (write.kind !== 'gated_write' || write.changeset || !changesetItemNames.has(write.name)) continue;
    for (const probe of probesOfOperation(write)) {
      probes.push({
        operation,
        kind: probe.kind,
        label: `${write.name}: ${probe.label}`,
        foreign: probe.foreign.map(inItem),
        own: probe.own.map(inItem),
        base: { items: [{ operation: write.write.name, input: probe.base }] },
      });
    }
  }
  for (const probe of probes) {
    const anyIds = Object.fromEntries(probePrefixes.map((prefix) => [prefix, ghostId(prefix)]));
    const checked = operation.input.safeParse(inputOf(probe, anyIds, anyIds));
    if (!checked.success) throw new Error(`the ${probe.label} probe's input is not valid: ${checked.error.message}`);
  }
  return probes;
}

/** The probe's input, with `foreign` ids in its foreign slots and `own` ids in its own. */
export function inputOf(probe: Probe, foreign: Holdings, own: Holdings): Record<string, unknown> {
  const input = structuredClone(probe.base);
  const fill = (slot: Slot, holdings: Holdings) => {
    const id = holdings[slot.prefix];
    if (id === undefined) throw new Error(`${probe.operation.name}: no record with the prefix ${slot.prefix} to put in ${fieldOf(slot)}`);
    setAt(input, slot.at, slot.many ? [id] : id);
  };
  for (const slot of probe.own) fill(slot, own);
  for (const slot of probe.foreign) fill(slot, foreign);
  return input;
}

/** The field as validation errors name it: `attendee_ids.0`, `tasks.0.project_id`. */
export function fieldOf(slot: Slot): string {
  return [...slot.at, ...(slot.many ? [0] : [])].join('.');
}

function setAt(target: Record<string, unknown>, at: (string | number)[], value: unknown): void {
  let place: Record<string | number, unknown> = target;
  for (const [index, key] of at.entries()) {
    if (index === at.length - 1) place[key] = value;
    else place = place[key] as Record<string | number, unknown>;
  }
}

/** The schema one wrapper down: under optional, nullable, a default or a transform. */
function unwrapped(schema: z.ZodType): z.ZodType {
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable) return schema.unwrap() as z.ZodType;
  if (schema instanceof z.ZodDefault || schema instanceof z.ZodPrefault) return schema.def.innerType as z.ZodType;
  if (schema instanceof z.ZodPipe) return schema.in as z.ZodType;
  return schema;
}

/** What the field is made of, under all its wrappers. */
function coreOf(schema: z.ZodType): z.ZodType {
  let current = schema;
  for (let next = unwrapped(current); next !== current; next = unwrapped(current)) current = next;
  return current;
}

/** The first description on the way down (`.describe()` may sit on a wrapper or on the core). */
function descriptionOf(schema: z.ZodType): string {
  let current = schema;
  for (;;) {
    if (current.description) return current.description;
    const next = unwrapped(current);
    if (next === current) return '';
    current = next;
  }
}

const isRequired = (schema: z.ZodType) => !schema.safeParse(undefined).success;

/** Fields named `…_id` that name no record of ours: a passkey's WebAuthn credential id (base64url, the authenticator's). */
const notRecordIds = new Set(['credential_id']);

/** Every path parameter and every field named `…_id` or `…_ids`, also inside objects and lists of objects. */
function slotsOf(object: z.ZodObject, at: (string | number)[], inPath: Set<string>, family: string): Slot[] {
  const slots: Slot[] = [];
  for (const [field, schema] of Object.entries(object.shape as Record<string, z.ZodType>)) {
    const core = coreOf(schema);
    const here = [...at, field];
    // `write` names an applied write (writes.undo takes it in its body).
    if ((at.length === 0 && (inPath.has(field) || field === 'write')) || (/_ids?$/.test(field) && !notRecordIds.has(field))) {
      const noun = field === 'id' ? family : field.replace(/_ids?$/, '');
      const named = new RegExp(`\\b(${probePrefixes.join('|')})_`).exec(descriptionOf(schema))?.[1] as HoldingKind | undefined;
      const prefix = named ?? prefixOfNoun[noun];
      if (!prefix) throw new Error(`no kind of record is known for the field ${here.join('.')}`);
      slots.push({ at: here, prefix, many: core instanceof z.ZodArray });
    } else if (core instanceof z.ZodObject) {
      slots.push(...slotsOf(core, here, inPath, family));
    } else if (core instanceof z.ZodArray && coreOf(core.element as z.ZodType) instanceof z.ZodObject) {
      slots.push(...slotsOf(coreOf(core.element as z.ZodType) as z.ZodObject, [...here, 0], inPath, family));
    }
  }
  return slots;
}

let sampled = 0;

/** The object's required fields, each with a value its schema takes (a list of objects gets one). */
function sampleObject(object: z.ZodObject, slots: Slot[]): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [field, schema] of Object.entries(object.shape as Record<string, z.ZodType>)) {
    if (!isRequired(schema) || slots.some((slot) => slot.at.length === 1 && slot.at[0] === field)) continue;
    const core = coreOf(schema);
    const nested = (inner: z.ZodObject, at: number | undefined) =>
      sampleObject(inner, slots.filter((slot) => slot.at[0] === field).map((slot) => ({ ...slot, at: slot.at.slice(at === undefined ? 1 : 2) })));
    let value: unknown;
    if (core instanceof z.ZodObject) value = nested(core, undefined);
    else if (core instanceof z.ZodArray) {
      const element = coreOf(core.element as z.ZodType);
      value = schema.safeParse([]).success ? [] : [element instanceof z.ZodObject ? nested(element, 0) : sampleValue(field, element)];
    } else value = sampleValue(field, schema);
    if (value === undefined) throw new Error(`no sample value fits the required field ${field}`);
    values[field] = value;
  }
  return values;
}

/**
 * For a reference inside an optional object or list of objects (`signed_reviews.0.review_id`), which the required
 * sample leaves out: that field, sampled as if it were required, to hold the reference.
 */
function optionalHolder(object: z.ZodObject, reference: Slot, slots: Slot[], required: Record<string, unknown>): Record<string, unknown> {
  const field = String(reference.at[0]);
  if (reference.at.length === 1 || field in required) return {};
  const core = coreOf((object.shape as Record<string, z.ZodType>)[field]!);
  const inner = (at: number) => slots.filter((slot) => slot.at[0] === field).map((slot) => ({ ...slot, at: slot.at.slice(at) }));
  if (core instanceof z.ZodObject) return { [field]: sampleObject(core, inner(1)) };
  if (core instanceof z.ZodArray) return { [field]: [sampleObject(coreOf(core.element as z.ZodType) as z.ZodObject, inner(2))] };
  return {};
}

/**
 * For a path probe: a change to every optional plain field that takes one (a title, a comment, a role, a switch),
 * so that a leak would show as a changed row of the other organization.
 */
function changesOf(object: z.ZodObject, slots: Slot[]): Record<string, unknown> {
  const changes: Record<string, unknown> = {};
  for (const [field, schema] of Object.entries(object.shape as Record<string, z.ZodType>)) {
    // A page's cursor is the caller's own bookmark, not a change: a made-up one is refused before any record is read.
    if (isRequired(schema) || field in headerFields || field === 'cursor' || slots.some((slot) => slot.at[0] === field)) continue;
    const core = coreOf(schema);
    const value = core instanceof z.ZodString ? (field === 'url' ? sampleValue(field, core) : 'matrix probe') : core instanceof z.ZodEnum || core instanceof z.ZodBoolean ? sampleValue(field, core) : undefined;
    if (value !== undefined && schema.safeParse(value).success) changes[field] = value;
  }
  return changes;
}

function sampleValue(field: string, schema: z.ZodType): unknown {
  const core = coreOf(schema);
  if (core instanceof z.ZodEnum) return core.options[0];
  if (core instanceof z.ZodBoolean) return false;
  if (core instanceof z.ZodNumber) return 1;
  const tomorrow = new Date(Date.now() + 86_400_000);
  const at = (hour: number) => new Date(Date.UTC(tomorrow.getUTCFullYear(), tomorrow.getUTCMonth(), tomorrow.getUTCDate(), hour)).toISOString();
  const instants = /end|until|before|_to$/.test(field) ? [at(10), at(9)] : [at(9), at(10)];
  const email = `probe-${sampled++}@matrix.example`;
  const candidates = field.includes('email')
    ? [email, 'matrix probe']
    : field === 'url'
      ? ['http://127.0.0.1:9/matrix']
      : field === 'source'
        ? // A policy set (the Policy page's drafts): one that allows what the probes write, as the estate's does.
          ['@id("matrix-probe") permit (principal, action, resource);']
        : // The last: an id as Slack writes them (U0…), for the fields that take nothing else.
          ['matrix probe', email, ...instants, at(9).slice(0, 10), '0'.repeat(64), 'U0PROBE'];
  return candidates.find((candidate) => schema.safeParse(candidate).success);
}
