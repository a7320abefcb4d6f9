import { z } from 'zod';
import { families } from '../../domain/abilities';
import { roles } from '../../domain/actors';
import { planByName } from '../../domain/plans';
import { isAllowed } from './access';
import { defineOperation } from './operation';

const meOutput = z.object({
  organization: z
    .object({
      id: z.string(),
      slug: z.string().describe('Used in explicit-organization paths: /v1/organizations/{slug}/…'),
      name: z.string(),
      timezone: z.string().describe('IANA time zone; the daily budget resets at midnight here'),
    })
    .describe("The token's organization"),
  plan: z
    .object({
      name: z.string(),
      features: z.array(z.string()).describe('Features the plan includes, e.g. expenses, work_logs'),
    })
    .describe("The organization's plan and what it includes"),
  token: z
    .discriminatedUnion('type', [
      z.object({
        type: z.literal('api_key'),
        id: z.string(),
        label: z.string(),
        access: z.enum(['read', 'read_write']),
        abilities: z.array(z.string()),
      }),
      z.object({
        type: z.literal('personal'),
        id: z.string(),
        user: z.object({ id: z.string(), email: z.string(), role: z.enum(roles) }),
      }),
    ])
    .describe('Who this token is: an API key with its access and abilities, or a person with a role'),
  endpoints: z
    .array(
      z.object({
        family: z.string(),
        description: z.string(),
        operations: z.array(
          z.object({
            name: z.string(),
            method: z.string(),
            path: z.string().describe('Relative to the REST base'),
            allowed: z.boolean().describe('Whether this token may call it'),
          }),
        ),
      }),
    )
    .describe('The endpoint families of the API and what this token may call'),
});

export const getMe = defineOperation({
  kind: 'read',
  name: 'me.get',
  family: 'me',
  summary: 'Who am I',
  description:
    "Discovery: the token's organization, its plan's capabilities, the token's access level and abilities, and the endpoint families of the API.",
  method: 'GET',
  path: '/me',
  list: false,
  input: z.strictObject({}),
  output: meOutput,
  access: { apiKey: { ability: null }, person: { roles } },
  async handler(_input, { caller, catalog }) {
    const { organization, actor } = caller;
    const plan = planByName(organization.plan);
    const byFamily = new Map<string, { name: string; method: string; path: string; allowed: boolean }[]>();
    for (const operation of catalog) {
      if (operation.family === 'me') continue;
      const list = byFamily.get(operation.family) ?? [];
      list.push({ name: operation.name, method: operation.method, path: `/v1${operation.path.replace(/:([a-z_]+)/g, '{$1}')}`, allowed: isAllowed(operation, caller) });
      byFamily.set(operation.family, list);
    }
    return {
      organization: { id: organization.id, slug: organization.slug, name: organization.name, timezone: organization.timezone },
      plan: { name: plan.name, features: plan.features },
      token:
        actor.kind === 'api_key'
          ? { type: 'api_key', id: actor.keyId, label: actor.label, access: actor.access, abilities: actor.abilities }
          : { type: 'personal', id: actor.tokenId, user: { id: actor.userId, email: actor.email, role: actor.role } },
      endpoints: [...byFamily].map(([family, operations]) => ({
        family,
        description: families[family as keyof typeof families]?.description ?? family,
        operations,
      })),
    };
  },
});
