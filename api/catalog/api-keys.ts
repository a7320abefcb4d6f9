import { z } from 'zod';
import { allAbilities, families, isWriteAbility } from '../../domain/identity/abilities';
import { rolesThat, type PersonActor } from '../../domain/identity/actors';
import { createApiKey, keyBudgetBounds, listApiKeys, revokeApiKey, setApiKeyBudget, type ApiKey } from '../../domain/identity/api-keys';
import { text } from '../../domain/kit/fields';
import { defineOperation, type Operation } from './operation';
import { withdrawReviewsOfKey } from '../../domain/gate/reviews/withdraw';

// The organization's API keys, managed by people in the console (Settings → Advanced → API Keys).

const access = { person: { roles: rolesThat.manageKeys } };
const consoleOnly = ['console'] as const;

const dailyRequestBudget = z
  .number()
  .int()
  .min(1)
  .max(keyBudgetBounds.dailyRequests)
  .describe("The key's own requests a day (REST and MCP together, the organization's local day), within the organization's budget; null: none");
const writeCaps = z
  .record(z.string().max(60), z.number().int().min(1).max(keyBudgetBounds.writesPerOperation))
  .describe('Daily caps of writes submitted, by gated-write operation, whatever the policy decides: {"customers.update": 20}; {} for none');

/** The names of the catalog's gated writes (`customers.update`): what a write cap may name. */
const gatedWriteNames = (catalog: readonly Operation[]) => catalog.flatMap((operation) => (operation.kind === 'gated_write' ? [operation.write.name] : []));

const apiKeySchema = z.object({
  id: z.string().describe('The key id (key_…); the token starts gate_k_<id>_'),
  label: z.string().describe("What the key is for; a connected app's is the name it gave itself (numbered when another key has it)"),
  label_verified: z.boolean().describe("false: a connected app's own name, which nobody verified; true: a person wrote the label"),
  access: z.enum(['read', 'read_write']).describe('read: reads only; read_write: may also submit gated writes'),
  abilities: z.array(z.string()).describe('What the key may reach, <family>.read or <family>.write'),
  created_at: z.iso.datetime(),
  created_by: z.object({ id: z.string(), email: z.string() }).nullable().describe('The person who made it; null when the CLI did'),
  expires_at: z.iso.datetime().nullable().describe('When it stops working by itself; null: until revoked'),
  last_used_at: z.iso.datetime().nullable().describe('To the minute'),
  revoked_at: z.iso.datetime().nullable(),
  state: z.enum(['active', 'expired', 'revoked']),
  daily_request_budget: z.number().int().nullable().describe("The key's own requests a day; null: the organization's budget alone"),
  write_caps: z.record(z.string(), z.number().int()).describe('Daily caps of writes submitted, by gated-write operation'),
  connection: z
    .object({
      client_id: z.string().describe("The client's id: the https URL of its metadata document, or the id it was registered under"),
      client_name: z.string().describe('The name the client gave itself (the label), numbered when another key of the organization has it; not verified'),
      client_uri: z.string().nullable(),
      identified_by: z.enum(['metadata_document', 'registration']).describe('How the client identified itself when it was connected'),
    })
    .nullable()
    .describe('A client a person connected over OAuth (created_by: who; label: its name); null for a key made as a key'),
});

function wireOf(key: ApiKey): z.infer<typeof apiKeySchema> {
  const expired = key.expiresAt !== null && Date.parse(key.expiresAt) <= Date.now();
  return {
    id: key.id,
    label: key.label,
    label_verified: key.connection === null,
    access: key.access,
    abilities: key.abilities,
    created_at: key.createdAt,
    created_by: key.createdBy,
    expires_at: key.expiresAt,
    last_used_at: key.lastUsedAt,
    revoked_at: key.revokedAt,
    state: key.revokedAt ? 'revoked' : expired ? 'expired' : 'active',
    daily_request_budget: key.dailyRequestBudget,
    write_caps: key.writeCaps,
    connection: key.connection && {
      client_id: key.connection.clientId,
      client_name: key.label,
      client_uri: key.connection.clientUri,
      identified_by: key.connection.clientId.startsWith('https://') ? 'metadata_document' : 'registration',
    },
  };
}

const actorOf = (actor: PersonActor) => ({ type: 'user' as const, id: actor.userId });

export const listApiKeysOperation = defineOperation({
  kind: 'read',
  name: 'api_keys.list',
  family: 'api_keys',
  summary: "List the organization's API keys",
  description: 'Every key, active, expired or revoked, oldest first; tokens are never shown again.',
  method: 'GET',
  path: '/api-keys',
  // Whole: an organization has tens of keys, not thousands.
  list: false,
  input: z.strictObject({}),
  output: z.array(apiKeySchema),
  access,
  interfaces: consoleOnly,
  handler: async (_input, { db, caller }) => (await listApiKeys(db, caller.organization.id)).map(wireOf),
});

export const apiKeyAbilitiesOperation = defineOperation({
  kind: 'read',
  name: 'api_keys.abilities',
  family: 'api_keys',
  summary: 'The abilities a key may carry',
  description: 'Each ability with its family and what the family holds; write abilities need a read-write key, and name the gated writes they allow (what a write cap may name).',
  method: 'GET',
  path: '/api-keys/abilities',
  list: false,
  input: z.strictObject({}),
  output: z.array(
    z.object({ ability: z.string(), family: z.string(), description: z.string(), write: z.boolean(), operations: z.array(z.string()).describe('The gated writes it allows') }),
  ),
  access,
  interfaces: consoleOnly,
  handler: async (_input, { catalog }) =>
    allAbilities.map((ability) => {
      const family = ability.split('.')[0] as keyof typeof families;
      const operations = catalog.flatMap((operation) => (operation.kind === 'gated_write' && operation.access.apiKey?.ability === ability ? [operation.write.name] : []));
      return { ability, family, description: families[family].description, write: isWriteAbility(ability), operations };
    }),
});

export const createApiKeyOperation = defineOperation({
  kind: 'person_action',
  name: 'api_keys.create',
  family: 'api_keys',
  summary: 'Create an API key',
  description: 'A new key for an agent, an automation or a script. The answer carries its token, shown this once.',
  method: 'POST',
  path: '/api-keys',
  input: z.strictObject({
    label: text({ min: 1, max: 100 }).describe('What the key is for, e.g. "Support agent"'),
    access: z.enum(['read', 'read_write']).describe('read: reads only; read_write: may also submit gated writes'),
    abilities: z.array(z.string().max(60)).max(100).optional().describe('Default: everything the access level allows'),
    expires_at: z.iso.datetime({ offset: true }).nullish().describe('When it stops working by itself; omit for never'),
    daily_request_budget: dailyRequestBudget.nullish(),
    write_caps: writeCaps.optional(),
  }),
  output: z.object({ key: apiKeySchema, token: z.string().describe('The bearer token, shown once: store it now') }),
  access,
  interfaces: consoleOnly,
  handler: async (input, { db, caller, catalog }) => {
    const created = await createApiKey(
      db,
      {
        orgId: caller.organization.id,
        label: input.label,
        access: input.access,
        abilities: input.abilities,
        expiresAt: input.expires_at ?? null,
        dailyRequestBudget: input.daily_request_budget ?? null,
        writeCaps: input.write_caps,
        writeOperations: gatedWriteNames(catalog),
      },
      actorOf(caller.actor as PersonActor),
    );
    return { key: wireOf(created.key), token: created.token };
  },
});

export const revokeApiKeyOperation = defineOperation({
  kind: 'person_action',
  name: 'api_keys.revoke',
  family: 'api_keys',
  summary: 'Revoke an API key',
  description:
    "The key stops working at its next request, and its writes still held for review are withdrawn at once (status withdrawn: nobody can approve them, nothing of them is written). Revoking a revoked key changes nothing, but withdraws any of its writes still held.",
  method: 'POST',
  path: '/api-keys/:id/revoke',
  input: z.strictObject({ id: z.string().max(100).describe('The key id (key_…)') }),
  output: apiKeySchema,
  access,
  interfaces: consoleOnly,
  handler: async (input, { db, gate, caller }) => {
    const { key, withdrawn } = await revokeApiKey(db, withdrawReviewsOfKey, caller.organization.id, input.id, actorOf(caller.actor as PersonActor));
    // Committed: the withdrawn writes' workflows end now rather than at their next re-read.
    await gate.reviewsChanged(withdrawn.map((review) => review.workflowId));
    return wireOf(key);
  },
});

export const updateApiKeyBudgetOperation = defineOperation({
  kind: 'person_action',
  name: 'api_keys.update_budget',
  family: 'api_keys',
  summary: "Set an API key's budgets",
  description:
    "The key's own daily request budget (null: none) and its daily caps of writes by operation (replaced whole; {}: none), each only when given. They count from the key's next request, by the organization's local day; past them the key is answered 429 rate_limited (key_daily, key_operation_daily).",
  method: 'PATCH',
  path: '/api-keys/:id/budget',
  input: z.strictObject({
    id: z.string().max(100).describe('The key id (key_…)'),
    daily_request_budget: dailyRequestBudget.nullable().optional(),
    write_caps: writeCaps.optional(),
  }),
  output: apiKeySchema,
  access,
  interfaces: consoleOnly,
  handler: async (input, { db, caller, catalog }) => {
    const change = { dailyRequestBudget: input.daily_request_budget, writeCaps: input.write_caps };
    return wireOf(await setApiKeyBudget(db, caller.organization.id, input.id, change, gatedWriteNames(catalog), actorOf(caller.actor as PersonActor)));
  },
});

export const apiKeyOperations = [listApiKeysOperation, apiKeyAbilitiesOperation, createApiKeyOperation, revokeApiKeyOperation, updateApiKeyBudgetOperation];
