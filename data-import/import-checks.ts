import type { z } from 'zod';
import { importKinds, refTargets, type ImportKind } from './import-schema';

/** One thing wrong with a data file, at a path such as `customers[3].email`. */
export interface ImportProblem {
  field: string;
  message: string;
}

type Path = readonly PropertyKey[];
interface PlacedProblem {
  path: Path;
  message: string;
}

const labels: Record<ImportKind, string> = {
  team_members: 'team member',
  projects: 'project',
  products: 'product',
  tasks: 'task',
  customers: 'customer',
  events: 'event',
  invoices: 'invoice',
  bookings: 'booking',
  expenses: 'expense',
  work_logs: 'work log',
};

export function formatPath(path: Path): string {
  let out = '';
  for (const segment of path) out += typeof segment === 'number' ? `[${segment}]` : `${out ? '.' : ''}${String(segment)}`;
  return out || '(the file)';
}

/** Problems in file order: by kind, then record, then as found. */
export function orderedProblems(problems: PlacedProblem[]): ImportProblem[] {
  const rank = (path: Path) => {
    const kind = importKinds.indexOf(path[0] as ImportKind);
    return [kind === -1 ? -1 : kind, typeof path[1] === 'number' ? path[1] : -1] as const;
  };
  return problems
    .map((problem, index) => ({ problem, index, rank: rank(problem.path) }))
    .sort((a, b) => a.rank[0] - b.rank[0] || a.rank[1] - b.rank[1] || a.index - b.index)
    .map(({ problem }) => ({ field: formatPath(problem.path), message: problem.message }));
}

/** Zod's issues as problems; an unknown field is named like the REST API names it. */
export function schemaProblems(error: z.ZodError): PlacedProblem[] {
  return error.issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ path: [...issue.path, key], message: 'unknown field' }))
      : [{ path: issue.path, message: issue.message }],
  );
}

const asRecords = (value: unknown): Record<string, unknown>[] =>
  Array.isArray(value) ? value.map((item) => (typeof item === 'object' && item !== null ? (item as Record<string, unknown>) : {})) : [];
const refValue = (value: unknown) => (typeof value === 'string' && value.trim() ? value.trim() : undefined);

/**
 * What the schema cannot see one record at a time: refs unique per kind, every ref naming a record of the
 * right kind in the file, invoice numbers unique, text that is whole Unicode. Works on the file as given, so
 * that it runs even when some records are malformed, and every problem is named in one pass.
 */
export function crossRecordProblems(file: unknown): PlacedProblem[] {
  if (typeof file !== 'object' || file === null) return [];
  const data = file as Record<string, unknown>;
  const problems: PlacedProblem[] = [];

  const known = new Map<ImportKind, Set<string>>();
  for (const kind of importKinds) {
    const firstAt = new Map<string, number>();
    asRecords(data[kind]).forEach((record, index) => {
      const ref = refValue(record.ref);
      if (ref === undefined) return;
      const first = firstAt.get(ref);
      if (first === undefined) firstAt.set(ref, index);
      else problems.push({ path: [kind, index, 'ref'], message: `duplicate ref "${ref}": ${kind}[${first}] has it already` });
    });
    known.set(kind, new Set(firstAt.keys()));
  }

  for (const kind of importKinds) {
    asRecords(data[kind]).forEach((record, index) => {
      for (const target of refTargets[kind]) {
        const places: { path: Path; value: unknown }[] = target.inLines
          ? asRecords(record.lines).map((line, lineIndex) => ({ path: [kind, index, 'lines', lineIndex, target.field], value: line[target.field] }))
          : target.many
            ? (Array.isArray(record[target.field]) ? (record[target.field] as unknown[]) : []).map((value, refIndex) => ({
                path: [kind, index, target.field, refIndex],
                value,
              }))
            : [{ path: [kind, index, target.field], value: record[target.field] }];
        for (const place of places) {
          const ref = refValue(place.value);
          if (ref !== undefined && !known.get(target.kind)!.has(ref)) {
            problems.push({ path: place.path, message: `no ${labels[target.kind]} has ref "${ref}" in this file` });
          }
        }
      }
    });
  }

  for (const kind of importKinds) {
    // JSON.stringify writes an unpaired surrogate as an escape: a quick test before walking every field.
    if (/\\ud[89a-f]/i.test(JSON.stringify(data[kind]) ?? '')) problems.push(...unpairedSurrogates(data[kind], [kind]));
  }

  const numbers = new Map<string, number>();
  asRecords(data.invoices).forEach((invoice, index) => {
    const number = refValue(invoice.number);
    if (number === undefined) return;
    const first = numbers.get(number);
    if (first === undefined) numbers.set(number, index);
    else problems.push({ path: ['invoices', index, 'number'], message: `duplicate invoice number "${number}": invoices[${first}] has it already` });
  });
  return problems;
}

const unpaired = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * A JSON file can carry half of a UTF-16 surrogate pair ("\ud800"), which is no character at all;
 * PostgreSQL refuses it, so it is named here rather than failing the write.
 */
function unpairedSurrogates(value: unknown, path: PropertyKey[]): PlacedProblem[] {
  if (typeof value === 'string') return unpaired.test(value) ? [{ path, message: 'contains half of a UTF-16 surrogate pair, which is not valid text' }] : [];
  if (Array.isArray(value)) return value.flatMap((item, index) => unpairedSurrogates(item, [...path, index]));
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value).flatMap(([key, item]) => unpairedSurrogates(item, [...path, key]));
  }
  return [];
}
