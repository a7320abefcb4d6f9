export { gatedWrite, gatedWriteV2, gatedWriteV3 } from './gated-write';
export { changesetV1 } from './changeset';
export { pruneRetention } from './retention';
export { sealAuditLedger, witnessAuditLedger } from './audit-seal';
export { relayWebhookEvent, deliverWebhook } from './webhooks';
export { superviseReview } from './notifications';
export { alertOwners } from './owner-alerts';
