import type { ApiKeyActor } from '../../domain/identity/actors';
import { forget, memorySchema, recallInput, recallMemories, remember } from '../../domain/resources/memories';
import { gatedOperation, listOperation } from './define';

// Memories belong to the key that wrote them: the organization alone is not enough to reach one.

export const memoryOperations = [
  listOperation({
    name: 'memories.list',
    tool: 'recall',
    summary: 'Recall memories',
    description:
      'Recalls the short notes this key remembered in earlier conversations, newest first: preferences, facts and decisions worth keeping. Filter by tags or search the content; check here before asking the user again. Only this key sees its memories. Paginated.',
    path: '/memories',
    input: recallInput,
    item: memorySchema,
    handler: (input, { db, caller }) => recallMemories(db, caller.organization.id, (caller.actor as ApiKeyActor).keyId, input),
  }),
  gatedOperation({
    write: remember,
    tool: 'remember',
    summary: 'Remember a note',
    description:
      'Remembers a short note across conversations (a preference, a fact about a customer, a decision and its reason), with optional tags to recall it by. Keep one idea per note; recall finds it later. Only this key can recall or forget it.',
    method: 'POST',
    path: '/memories',
    output: memorySchema,
  }),
  gatedOperation({
    write: forget,
    tool: 'forget',
    summary: 'Forget a memory',
    description:
      "Forgets a note this key remembered, by the id recall gave; use it when a note is wrong or no longer holds. The answer is the note as it was. Another key's memories cannot be forgotten (404).",
    method: 'DELETE',
    path: '/memories/:id',
    output: memorySchema,
  }),
];
