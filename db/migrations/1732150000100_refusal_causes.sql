-- Up Migration

-- Why a write was refused rather than decided (domain/gate/decide.ts): its key was revoked before its run decided
-- it ('unauthorized', the code its caller is answered), or the review queue was full. Refusals recorded before this
-- were all of a full queue, and are marked so. (A changeset so refused is recorded as refused too: changesets.decision
-- takes the decision as it is.)
ALTER TABLE gate_decisions ADD COLUMN refusal text CHECK (refusal IN ('unauthorized', 'review_queue_full'));
UPDATE gate_decisions SET refusal = 'review_queue_full' WHERE decision = 'refused';
ALTER TABLE gate_decisions ADD CONSTRAINT gate_decisions_refusal_named CHECK ((decision = 'refused') = (refusal IS NOT NULL));

-- Down Migration

ALTER TABLE gate_decisions DROP COLUMN refusal;
