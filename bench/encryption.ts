import type { Client } from '@temporalio/client';
import { METADATA_ENCODING_KEY } from '@temporalio/common';
import { EncryptionCodec, encryptedEncoding, newPayloadKey } from '../runtime/payload-codec';
import { gatedWrite, type Operation } from './measure';

/**
 * The same gated Allow write on two api + worker pairs started together for this phase, each on its own task queue:
 * one whose payloads are plain, one started with PAYLOAD_ENCRYPTION_KEYS, whose api and worker encrypt every
 * payload. Both fresh, so that they differ by the key alone (not by how long their processes have run).
 */
export const encryptionKinds = ['plain', 'encrypted'] as const;
export type EncryptionKind = (typeof encryptionKinds)[number];

/** Each pair's api, where its titles count from (apart from each other's and the other phases'), its workflow ids. */
export interface EncryptionSide {
  apiUrl: string;
  firstSequence: number;
  workflowIds: string[];
}

/**
 * POST /api/v1/tasks with an Allow title on each pair, checked to answer 201. The two operations of a round get
 * the same sequence number: each adds its own first sequence, so no two writes share a title.
 */
export function encryptionOperations(token: string, sides: Record<EncryptionKind, EncryptionSide>): Record<EncryptionKind, Operation> {
  const operation = ({ apiUrl, firstSequence, workflowIds }: EncryptionSide): Operation => {
    const write = gatedWrite(apiUrl, token, 'allow', { workflowIds });
    return (sequence) => write(firstSequence + sequence);
  };
  return { plain: operation(sides.plain), encrypted: operation(sides.encrypted) };
}

/**
 * The encoding of the input payload of a workflow's first event (its start), read through a client without the
 * codec, so as Temporal stores it: `binary/encrypted` when the api that started it encrypts.
 */
export async function startInputEncoding(client: Client, workflowId: string): Promise<string> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
  if (!started) throw new Error(`workflow ${workflowId}: the first event of its history is not its start`);
  const payloads = started.input?.payloads ?? [];
  if (payloads.length === 0) throw new Error(`workflow ${workflowId}: its start has no input payload`);
  const encodings = payloads.map((payload) => {
    const encoding = payload.metadata?.[METADATA_ENCODING_KEY];
    return encoding ? new TextDecoder().decode(encoding) : '(none)';
  });
  const distinct = [...new Set(encodings)];
  if (distinct.length !== 1) throw new Error(`workflow ${workflowId}: its start's input payloads have different encodings (${distinct.join(', ')})`);
  return distinct[0]!;
}

/**
 * Proof that the encrypted pair encrypts and the plain pair does not: the start input of one workflow of each, as
 * Temporal holds it. Throws when either is not what it must be; returns the two encodings.
 */
export async function checkPayloadEncodings(client: Client, workflowIds: Record<EncryptionKind, string | undefined>): Promise<Record<EncryptionKind, string>> {
  const encodings = {} as Record<EncryptionKind, string>;
  for (const kind of encryptionKinds) {
    const workflowId = workflowIds[kind];
    if (!workflowId) throw new Error(`payload encryption: no workflow id from the ${kind} pair to check (no x-gatehouse-workflow-id header?)`);
    const encoding = await startInputEncoding(client, workflowId);
    const encrypted = encoding === encryptedEncoding;
    if (encrypted !== (kind === 'encrypted')) {
      throw new Error(
        `payload encryption: workflow ${workflowId} of the ${kind} pair has a start input encoded ${encoding}, ` +
          `${kind === 'encrypted' ? `not ${encryptedEncoding}: its api does not encrypt` : 'yet the main pair must not encrypt'}`,
      );
    }
    encodings[kind] = encoding;
  }
  return encodings;
}

/**
 * The codec's own cost, in this process: encrypting and decrypting a real gated write's start input (read back
 * from a plain workflow's history), `rounds` times `perRound`; answers the microseconds per payload of each round.
 * A gated Allow passes a handful of payloads through the codec (the input and the update on the way in, the answer
 * on the way out), in the api and in the worker.
 */
export async function codecMicroseconds(client: Client, plainWorkflowId: string, rounds = 5, perRound = 2000): Promise<{ payloadBytes: number; perPayloadUs: number[] }> {
  const history = await client.workflow.getHandle(plainWorkflowId).fetchHistory();
  const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  if (!payload?.data) throw new Error(`workflow ${plainWorkflowId}: no start input to measure the codec with`);
  const codec = new EncryptionCodec([newPayloadKey('bench')]);
  const perPayloadUs: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const started = performance.now();
    for (let i = 0; i < perRound; i++) await codec.decode(await codec.encode([payload]));
    perPayloadUs.push(Math.round(((performance.now() - started) / perRound) * 1000 * 10) / 10);
  }
  return { payloadBytes: payload.data.length, perPayloadUs };
}
