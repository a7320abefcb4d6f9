import { z } from 'zod';
import { closeTrustWindow, listTrustWindows, trustWindowSchema } from '../../domain/gate/trust-windows';
import { rolesThat, type PersonActor } from '../../domain/identity/actors';
import { text } from '../../domain/kit/fields';
import { defineOperation } from './operation';

// Trust windows as people see and end them: the Policy page's list and its "Close now", and the same over REST
// with a personal access token. Windows are opened by an approval (reviews.approve's `trust`), never here; agents
// neither see nor change them.

export const listTrustWindowsOperation = defineOperation({
  kind: 'read',
  name: 'trust_windows.list',
  family: 'trust_windows',
  summary: 'List trust windows',
  description:
    'The trust windows people opened as they approved held writes: which key and operation each lets through without review, the attribute values a write must have, its uses and its expiry, who opened it from which review. The open ones by default; `state=all` for the 100 newest of any state.',
  method: 'GET',
  path: '/trust-windows',
  list: false,
  input: z.strictObject({ state: z.enum(['open', 'all']).optional().describe('open (default): windows that still let writes through; all: the 100 newest, closed, expired and used up too') }),
  output: z.object({ windows: z.array(trustWindowSchema).describe('Newest first') }),
  access: { person: { roles: rolesThat.readAudit } },
  interfaces: ['rest', 'console'],
  handler: async (input, { db, caller }) => ({ windows: await listTrustWindows(db, caller.organization.id, input.state ?? 'open') }),
});

export const closeTrustWindowOperation = defineOperation({
  kind: 'person_action',
  name: 'trust_windows.close',
  family: 'trust_windows',
  summary: 'Close a trust window now',
  description:
    'Closes a trust window at once: the next write it would have let through is decided by the policy alone again (held for review). Owners and admins close any window, a reviewer the windows they opened (403 insufficient_role otherwise); a closed window cannot be closed again (409). Audited.',
  method: 'POST',
  path: '/trust-windows/:id/close',
  input: z.strictObject({ id: text({ max: 100 }).describe('The trust window (trw_…)') }),
  output: trustWindowSchema,
  access: { person: { roles: rolesThat.decideReviews } },
  interfaces: ['rest', 'console'],
  handler: async (input, { db, caller }) => {
    const person = caller.actor as PersonActor;
    return closeTrustWindow(db, caller.organization.id, input.id, { userId: person.userId, role: person.role });
  },
});

export const trustWindowOperations = [listTrustWindowsOperation, closeTrustWindowOperation];
