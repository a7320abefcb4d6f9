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
//
// Approvals signed with a passkey (a review.approved, review.approval_added or review.denied event whose data has
// a `passkey`) are checked too: the signer's public key is the one their `person.passkey_added` event recorded
// (same credential id, same person); the WebAuthn client data must be a `webauthn.get` whose challenge is
// base64url(SHA-256("gatehouse approval v1\nreview <id>\npayload sha256:<payload_digest>\nverdict <verdict>\nat
// <signed_at>")); the authenticator data must name the recorded relying party and say the person was present and
// verified; the signature must verify over authenticator data ‖ SHA-256(client data). The payload the person
// signed travels beside the event (`signed_payload`): its digest (SHA-256 of its JSON with keys sorted) must be
// the event's `payload_digest`. A verdict given with others under one signature (a batch: the event's data has a
// `batch_digest`) carries the list it signed beside it (`signed_batch`: {verdict, reviews: [{review_id,
// payload_digest}]}, ordered by id): its digest must be the event's `batch_digest`, it must list this review with
// this payload digest and verdict, and the challenge is base64url(SHA-256("gatehouse batch approval v1\nverdict
// <verdict>\nat <signed_at>" and a line "review <id> payload sha256:<digest>" per review)). Only chained events are checked; a key counts from its `person.passkey_added` until
// its `person.passkey_removed`; and while the organization needed approvals signed (`organization.updated` with
// `approvalsNeedPasskey`), an approval without a signature is named. A person's undo (`write.undone` by a user)
// is checked the same way, over base64url(SHA-256("gatehouse undo v1\nwrite <undoes>\nat <signed_at>")).
import { createHash, createPublicKey, verify as verifySignature, constants } from 'node:crypto';
import { readFileSync } from 'node:fs';

const personal = new Set(['email', 'name', 'comment']);
const sha256 = (...parts) => parts.reduce((hash, part) => hash.update(part), createHash('sha256')).digest();
const canonicalJson = (value) => {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((name) => `${JSON.stringify(name)}:${canonicalJson(value[name])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
};
const fromBase64url = (text) => Buffer.from(String(text), 'base64url');

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

// The passkeys people registered (their public keys), then every signed verdict against them, in the chain's
// order: only chained events count (a line outside the chain vouches for nothing), a key counts from its
// registration until its removal, and while the organization needed approvals signed an unsigned one is named.
const verdicts = { 'review.approved': 'approved', 'review.approval_added': 'approved', 'review.denied': 'denied' };
const passkeys = new Map();
let signed = 0;
let needPasskey = false;
let outside = 0;
for (const event of lines.slice(0, -1)) {
  if (event.seq === null || event.seq > head.seq) {
    if ((event.type in verdicts || event.type === 'write.undone') && event.data?.passkey) outside += 1;
    continue;
  }
  if (event.type === 'person.passkey_added') passkeys.set(`${event.resource_id} ${event.data.credential_id}`, event.data);
  if (event.type === 'person.passkey_removed') passkeys.delete(`${event.resource_id} ${event.data.credential_id}`);
  if (event.type === 'organization.updated' && typeof event.data?.approvalsNeedPasskey === 'boolean') needPasskey = event.data.approvalsNeedPasskey;
  if (event.type === 'write.undone' && event.actor.type === 'user') {
    // A person's undo is signed as an approval is, while the organization needs approvals signed.
    if (!event.data?.passkey) {
      if (needPasskey) problems.push(`undo ${event.id} (of ${event.data?.undoes}, by ${event.actor.id}) was not signed, while the organization needed approvals signed with a passkey`);
      continue;
    }
    signed += 1;
    const key = passkeys.get(`${event.actor.id} ${event.data.passkey.credential_id}`);
    const problem = key
      ? signatureProblem(event.data.passkey, `gatehouse undo v1\nwrite ${event.data.undoes}\nat ${event.data.passkey.signed_at}`, 'this write and time', key)
      : `no passkey ${event.data.passkey.credential_id} of this person was registered earlier in the ledger`;
    if (problem) problems.push(`signed undo ${event.id} (of ${event.data.undoes}, by ${event.actor.id}): ${problem}`);
    continue;
  }
  if (!(event.type in verdicts)) continue;
  if (!event.data?.passkey) {
    if (needPasskey && verdicts[event.type] === 'approved' && event.data?.via) {
      problems.push(`approval ${event.id} (review ${event.review_id}, by ${event.actor.id}) was not signed, while the organization needed approvals signed with a passkey`);
    }
    continue;
  }
  signed += 1;
  const problem = signedVerdictProblem(event, verdicts[event.type], passkeys.get(`${event.actor.id} ${event.data.passkey.credential_id}`));
  if (problem) problems.push(`signed ${verdicts[event.type].replace('ed', '')}al ${event.id} (review ${event.review_id}, by ${event.actor.id}): ${problem}`);
}

/** The statement a batch's signature signed, from the list beside the event; null when that list is not the one named or leaves this verdict out. */
function batchStatement(event, verdict) {
  const batch = event.signed_batch;
  if (!batch || !Array.isArray(batch.reviews) || batch.verdict !== verdict) return null;
  if (sha256(canonicalJson(batch)).toString('hex') !== event.data.batch_digest) return null;
  if (!batch.reviews.every((review) => /^[0-9a-f]{64}$/.test(review.payload_digest) && !/\s/.test(review.review_id))) return null;
  if (!batch.reviews.some((review) => review.review_id === event.review_id && review.payload_digest === event.data.payload_digest)) return null;
  const lines = batch.reviews.map((review) => `review ${review.review_id} payload sha256:${review.payload_digest}`);
  return ['gatehouse batch approval v1', `verdict ${verdict}`, `at ${event.data.passkey.signed_at}`, ...lines].join('\n');
}

/** Why a signed verdict does not verify against the signer's recorded key and the payload it names; null when it does. */
function signedVerdictProblem(event, verdict, key) {
  const { passkey, payload_digest: payloadDigest } = event.data;
  if (!key) return `no passkey ${passkey.credential_id} of this person was registered earlier in the ledger`;
  if (event.signed_payload === undefined) return 'the export does not carry the payload it signed';
  if (event.signed_payload.review_id !== event.review_id || sha256(canonicalJson(event.signed_payload)).toString('hex') !== payloadDigest) {
    return 'the payload beside it is not the one it signed';
  }
  const statement = event.data.batch_digest === undefined ? `gatehouse approval v1\nreview ${event.review_id}\npayload sha256:${payloadDigest}\nverdict ${verdict}\nat ${passkey.signed_at}` : batchStatement(event, verdict);
  if (statement === null) return 'the batch beside it is not the one it signed, or does not list this review, payload and verdict';
  const what = event.data.batch_digest === undefined ? 'this review, payload, verdict and time' : "the batch's reviews, payloads, verdict and time";
  return signatureProblem(passkey, statement, what, key);
}

/** Why a passkey's assertion is not `key`'s signature over `statement` (`what` it commits to, in words); null when it is. */
function signatureProblem(passkey, statement, what, key) {
  const clientDataJson = fromBase64url(passkey.client_data_json);
  let clientData;
  try {
    clientData = JSON.parse(clientDataJson.toString('utf8'));
  } catch {
    return 'its client data is not JSON';
  }
  if (clientData.type !== 'webauthn.get' || clientData.challenge !== sha256(statement).toString('base64url')) {
    return `its challenge is not ${what}`;
  }
  let host;
  try {
    host = new URL(clientData.origin).hostname;
  } catch {
    host = undefined;
  }
  if (host !== key.rp_id) return `it was signed on ${clientData.origin}, not on ${key.rp_id}`;
  const authenticatorData = fromBase64url(passkey.authenticator_data);
  if (authenticatorData.length < 37 || !authenticatorData.subarray(0, 32).equals(sha256(key.rp_id))) return `it was not made for ${key.rp_id}`;
  if ((authenticatorData[32] & 0x05) !== 0x05) return 'the authenticator did not check that the person was present and verified';
  const hashes = { [-7]: 'sha256', [-35]: 'sha384', [-36]: 'sha512', [-257]: 'sha256', [-37]: 'sha256', [-8]: null };
  if (!(key.algorithm in hashes)) return `its key's algorithm ${key.algorithm} is not one this script checks`;
  const signedBytes = Buffer.concat([authenticatorData, sha256(clientDataJson)]);
  try {
    const publicKey = createPublicKey({ key: fromBase64url(key.public_key_spki), format: 'der', type: 'spki' });
    const options = key.algorithm === -37 ? { key: publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 } : publicKey;
    if (verifySignature(hashes[key.algorithm], signedBytes, options, fromBase64url(passkey.signature))) return null;
  } catch {
    // A key or a signature that cannot be read does not verify either.
  }
  return "its signature does not verify with the person's passkey";
}
if (problems.length > 0) {
  console.log(`does NOT verify (${problems.length} problems):`);
  for (const problem of problems) console.log(`  ${problem}`);
  process.exit(1);
}
console.log(`verifies: ${seq} events chained, head ${head.seq} ${head.chain}; ${signed} signed verdicts checked against their passkeys`);
if (outside > 0) console.log(`(${outside} signed verdicts outside the chain, sealed after the head or never, were not checked)`);
