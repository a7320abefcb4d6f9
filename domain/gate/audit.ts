import type { Queryable } from '../../db/database';
import { newId } from '../kit/ids';

/** Who did something: a key (agents, scripts), a person, or the system itself (expiry, the CLI). */
export type ActorRef =
  | { type: 'api_key'; id: string }
  | { type: 'user'; id: string }
  | { type: 'system'; id: string | null };

interface GateEvent {
  workflowId: string;
  reviewId?: string;
}

/** Every audit event the service records; `data` is typed per event. */
export type AuditEvent =
  | (GateEvent & {
      type: 'gate.decided';
      actor: ActorRef;
      data: { operation: string; decision: string; reason: string; policyIds: string[]; interface: string };
    })
  | (GateEvent & {
      type: 'write.applied';
      actor: ActorRef;
      resourceType: string;
      resourceId: string;
      data: { operation: string };
    })
  | (GateEvent & { type: 'write.failed'; actor: ActorRef; data: { code: string; message: string } })
  | (GateEvent & { type: 'review.approved' | 'review.denied'; actor: ActorRef; data: { comment: string | null } })
  | (GateEvent & { type: 'review.expired'; actor: ActorRef; data: Record<string, never> })
  | { type: 'policy.updated'; actor: ActorRef; data: { version: number } }
  | { type: 'api_key.created' | 'api_key.revoked'; actor: ActorRef; resourceId: string; data: { label: string; access?: string; abilities?: string[]; expires_at?: string | null } }
  | {
      type: 'person.invited' | 'person.updated' | 'person.password_set' | 'person.password_reset' | 'person.sessions_ended' | 'person.signed_in' | 'person.locked';
      actor: ActorRef;
      /** The person concerned (usr_…). */
      resourceId: string;
      data: Record<string, unknown>;
    }
  | { type: 'organization.updated'; actor: ActorRef; data: Record<string, unknown> }
  | {
      type: 'memory.corrected' | 'memory.forgotten';
      actor: ActorRef;
      /** The memory (mry_…). */
      resourceId: string;
      data: { api_key_id: string; reason: string } & Record<string, unknown>;
    }
  | { type: 'data.imported'; actor: ActorRef; data: Record<string, number> };

export async function recordAudit(tx: Queryable, orgId: string, event: AuditEvent): Promise<void> {
  const gate = 'workflowId' in event ? event : undefined;
  await tx.query(
    `INSERT INTO audit_events (id, org_id, type, actor_type, actor_id, workflow_id, review_id, resource_type, resource_id, data)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [
      newId('evt'),
      orgId,
      event.type,
      event.actor.type,
      event.actor.id,
      gate?.workflowId ?? null,
      gate?.reviewId ?? null,
      'resourceType' in event ? event.resourceType : null,
      'resourceId' in event ? event.resourceId : null,
      JSON.stringify(event.data),
    ],
  );
}

export const cliActor: ActorRef = { type: 'system', id: 'cli' };
