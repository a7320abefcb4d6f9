#!/usr/bin/env node
// Verifies a copy of an organization's audit ledger, offline, with Node alone and nothing of Gatehouse:
//
//   npx gatehouse audit export --org acme > acme-audit.jsonl
//   node docs/verify-audit-export.mjs acme-audit.jsonl
//
// The export is JSON Lines, oldest first; its last line is the ledger's head as the service held it when the
// export was made: {"ledger_head": {"org_id", "seq", "chain"}}. This script recomputes each chained event's
// digest from its content and each link of the chain, and checks that they end at that head. Keep the head
// elsewhere too (a ticket, a mail to yourself, another system): a later export whose chain does not pass
// through it was rewritten. Exits 1 and names what does not verify.
//
// The scheme (domain/audit/chain.ts): digest = SHA-256 of the canonical JSON of the event's content (id,
// org_id, type, actor_type, actor_id, workflow_id, review_id, resource_type, resource_id, data; object keys
// sorted; the values of `email`, `name` and `comment` replaced by "sha256:<hex>" of the value, an erased value
// {"erased": "sha256:<hex>"} by its digest); chain(n) = SHA-256(chain(n-1) ‖ decimal n ‖ digest(n)), chain(0) =
// 32 zero bytes.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

const personal = new Set(['email', 'name', 'comment']);
const sha256 = (...parts) => parts.reduce((hash, part) => hash.update(part), createHash('sha256')).digest();

function canonical(value, key) {
  if (key !== undefined && personal.has(key)) {
    if (typeof value === 'string') return `sha256:${sha256(value).toString('hex')}`;
    if (value && typeof value === 'object' && typeof value.erased === 'string') return value.erased;
  }
  if (Array.isArray(value)) return value.map((item) => canonical(item));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map((name) => [name, canonical(value[name], name)]));
  }
  return value;
}

const file = process.argv[2];
if (!file) {
  console.error('usage: node verify-audit-export.mjs <export.jsonl>');
  process.exit(2);
}
const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
const head = lines.at(-1)?.ledger_head;
if (!head) {
  console.error('the last line is not {"ledger_head": …}: export with `gatehouse audit export --format jsonl` (the default), whole');
  process.exit(2);
}
const problems = [];
let chain = Buffer.alloc(32);
let seq = 0;
for (const event of lines.slice(0, -1).filter((line) => line.seq !== null)) {
  const { id, type, actor, workflow_id, review_id, resource_type, resource_id, data } = event;
  const content = { id, org_id: head.org_id, type, actor_type: actor.type, actor_id: actor.id, workflow_id, review_id, resource_type, resource_id, data };
  const digest = sha256(JSON.stringify(canonical(content)));
  if (digest.toString('hex') !== event.digest) problems.push(`event ${id} (${type}) was changed after it was written`);
  if (event.seq !== seq + 1) problems.push(`events ${seq + 1}–${event.seq - 1} of the chain are missing from the copy`);
  else if (sha256(chain, String(event.seq), Buffer.from(event.digest, 'hex')).toString('hex') !== event.chain) {
    problems.push(`the chain's hash at event ${id} does not follow from the events before it`);
  }
  // Carry on from the hash as stored, so that one problem is reported once.
  chain = Buffer.from(event.chain, 'hex');
  seq = event.seq;
}
if (seq !== head.seq || (seq > 0 && chain.toString('hex') !== head.chain)) problems.push(`the chain ends at event ${seq}, not at the head (event ${head.seq})`);
if (problems.length > 0) {
  console.log(`does NOT verify (${problems.length} problems):`);
  for (const problem of problems) console.log(`  ${problem}`);
  process.exit(1);
}
console.log(`verifies: ${seq} events chained, head ${head.seq} ${head.chain}`);
