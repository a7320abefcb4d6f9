import { z } from 'zod';
import { givenFields, givenFieldsSchema, heldRecords, mentionsOf, staleCheckSchema, staleRecords } from '../../domain/gate/reviews/context';
import { getReview } from '../../domain/gate/reviews/reads';
import { findApiKey } from '../../domain/identity/api-keys';
import { roles, rolesThat, type PersonActor, type Role } from '../../domain/identity/actors';
import { instantField, text } from '../../domain/kit/fields';
import { findGatedWrite } from '../../domain/resources';
import { memoriesConcerning, memorySchema } from '../../domain/resources/memories';
import { callOutcomes } from '../../domain/usage/call-log';
import { callsBefore } from '../../domain/usage/calls-before';
import { mcpClientBefore } from '../../domain/usage/mcp-clients';
import { defineOperation } from './operation';

// Around a held write, for the person deciding it: whether its record changed since it was held, what the agent
// remembered about that record, and where the write came from. The queue's card asks for its own review's.

/** Who sees what the agent remembered on a card: those who decide reviews, and those who see memories anyway. */
const seeAgentNotes: readonly Role[] = [...new Set<Role>([...rolesThat.decideReviews, ...rolesThat.seeMemories])];

/** How many of the agent's calls before the hold a card lists, and how far back it looks. */
const callsShown = { limit: 5, withinMinutes: 60 };

const contextSchema = z.object({
  review_id: z.string().describe('The review (rev_…)'),
  stale: z
    .array(staleCheckSchema)
    .describe(
      "For a pending review: each record the write (or a changeset's item) updates or deletes, read again; a record written since the hold is `changed`, with the fields that differ. Empty for creates and for decided reviews",
    ),
  given: z.array(givenFieldsSchema).describe('For each create (the write, or a changeset item): the fields it was given, so that the card shows them first'),
  memories: z
    .array(
      memorySchema.extend({
        matched: z.array(z.string()).describe('Why it concerns the record: a tag it shares, or the id, title or name its content names'),
      }),
    )
    .nullable()
    .describe(
      "What the agent knew: the submitting key's notes, as they were when the write was held, that share a tag with the record or name its id, title or name; newest first, at most 20. null: your role does not see agents' notes",
    ),
  provenance: z
    .object({
      interface: z.enum(['rest', 'mcp']).describe('rest or mcp'),
      api_key: z.object({
        id: z.string().describe('The key (key_…)'),
        label: z.string().describe("The key's label; for a connected client, the client's name"),
        connected_client: z
          .object({ client_id: z.string().describe('The OAuth client id'), client_uri: z.string().nullable().describe("The client's home page, as it registered") })
          .nullable()
          .describe('Set when the key is an MCP or REST client a person connected over OAuth; null for a key made as a key'),
      }),
      mcp_client: z
        .object({
          name: z.string().describe('The name the client gave in its initialize (clientInfo.name)'),
          version: z.string().describe('The version it gave (clientInfo.version)'),
          first_seen_at: instantField('When the key first initialized with this client'),
          last_seen_at: instantField('When it last did'),
        })
        .nullable()
        .describe('For a write over MCP: the client the key initialized with last before the hold, as the client named itself; null over REST, or when none is known'),
      calls_before: z
        .array(
          z.object({
            id: z.string(),
            interface: z.enum(['rest', 'mcp']),
            operation: z.string().describe('The operation called, e.g. tasks.get'),
            outcome: z.enum(callOutcomes).describe('ok, applied, held, denied, refused or error'),
            code: z.string().describe('ok, applied, pending_review, policy_denied, or the error code'),
            created_at: instantField('When the call ended'),
          }),
        )
        .describe(`The key's last calls (at most ${callsShown.limit}, within ${callsShown.withinMinutes} minutes) before the write was held, newest first`),
    })
    .describe('Where the write came from'),
});

export const reviewContextOperation = defineOperation({
  kind: 'read',
  name: 'reviews.context',
  family: 'reviews',
  summary: 'What surrounds a held write',
  description:
    "For the person deciding a review: whether the record it updates or deletes changed since the write was held (and how), the submitting key's notes that concern the record (for those who decide reviews or see memories), and where the write came from (interface, connected client, the key's calls just before).",
  method: 'GET',
  path: '/reviews/:id/context',
  list: false,
  input: z.strictObject({ id: text({ max: 100 }).describe('The review id') }),
  output: contextSchema,
  access: { person: { roles } },
  interfaces: ['console'],
  handler: async (input, { db, caller }) => {
    const orgId = caller.organization.id;
    const review = await getReview(db, orgId, input.id);
    const keyId = review.submitted_by.api_key_id;
    const records = heldRecords(review);
    const seesNotes = seeAgentNotes.includes((caller.actor as PersonActor).role);
    const [stale, memories, key, calls, mcpClient] = await Promise.all([
      staleRecords(db, orgId, review, (operation) => findGatedWrite(operation)?.record),
      seesNotes ? memoriesConcerning(db, orgId, keyId, mentionsOf(records), review.created_at) : null,
      findApiKey(db, orgId, keyId),
      callsBefore(db, orgId, keyId, review.created_at, callsShown),
      review.submitted_by.interface === 'mcp' ? mcpClientBefore(db, orgId, keyId, review.created_at) : null,
    ]);
    return {
      review_id: review.id,
      stale,
      given: givenFields(records, (operation) => findGatedWrite(operation)?.input),
      memories,
      provenance: {
        interface: review.submitted_by.interface,
        api_key: {
          id: key.id,
          label: key.label,
          connected_client: key.connection && { client_id: key.connection.clientId, client_uri: key.connection.clientUri },
        },
        mcp_client: mcpClient,
        calls_before: calls,
      },
    };
  },
});
