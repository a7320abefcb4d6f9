import { z } from 'zod';
import type { Ability } from '../../domain/identity/abilities';
import type { Page } from '../../domain/kit/pagination';
import type { Feature } from '../../domain/identity/plans';
import type { GatedWrite } from '../../domain/gate/writes';
import { defineOperation, type GatedWriteOperation, type OperationAccess, type OperationContext, type ReadOperation } from './operation';

// Shorthands for the common shapes of operations; each operation is still declared once, in its family's file.

interface Common {
  name: string;
  tool: string;
  /** Abilities beyond the family's own (see OperationAccess). */
  alsoNeeds?: Ability[];
  summary: string;
  description: string;
  path: string;
  feature?: Feature;
  /** Who may call it besides keys with the family's read ability (default: those keys alone). */
  access?: OperationAccess;
}

export function listOperation<Input extends z.ZodObject, Item extends z.ZodType>(
  spec: Common & { input: Input; item: Item; handler: (input: z.infer<Input>, context: OperationContext) => Promise<Page<unknown>> },
): ReadOperation<Input> {
  const family = spec.name.split('.')[0]!;
  return defineOperation({
    kind: 'read',
    list: true,
    family,
    method: 'GET',
    output: z.array(spec.item),
    access: { apiKey: { ability: `${family}.read` as Ability, alsoNeeds: spec.alsoNeeds } },
    ...spec,
  });
}

export function getOperation<Input extends z.ZodObject>(
  spec: Common & { input: Input; output: z.ZodType; handler: (input: z.infer<Input>, context: OperationContext) => Promise<unknown> },
): ReadOperation<Input> {
  const family = spec.name.split('.')[0]!;
  return defineOperation({
    kind: 'read',
    list: false,
    family,
    method: 'GET',
    access: { apiKey: { ability: `${family}.read` as Ability, alsoNeeds: spec.alsoNeeds } },
    ...spec,
  });
}

const gateNote =
  " Gated: the organization's policy allows it (the record), holds it for a person's review (202 pending_review) or denies it (403 policy_denied).";

/** A write through the gate: its name and input are the gated write's own, so the two never drift apart. */
export function gatedOperation<Input extends z.ZodObject>(
  spec: Omit<Common, 'name'> & { write: GatedWrite<Input>; method: 'POST' | 'PATCH' | 'DELETE'; output: z.ZodType; successStatus?: 200 | 201 },
): GatedWriteOperation<Input> {
  const { write, ...rest } = spec;
  const family = write.name.split('.')[0]!;
  return defineOperation({
    kind: 'gated_write',
    name: write.name,
    family,
    access: { apiKey: { ability: `${family}.write` as Ability, alsoNeeds: spec.alsoNeeds } },
    input: write.input,
    write,
    successStatus: spec.successStatus ?? (spec.method === 'POST' ? 201 : 200),
    destructive: spec.method === 'DELETE',
    ...rest,
    description: `${spec.description}${gateNote}`,
  });
}
