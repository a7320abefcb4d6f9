import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { chainLink, contentDigest } from '../../domain/audit/chain';
import { sealAuditChain } from '../../domain/audit/ledger';
import { payloadDigest } from '../../domain/gate/reviews/signing';
import { updateOrganization } from '../../domain/identity/organizations';
import { cleanEnv, runCli } from '../support/cli';
import { addPerson, signIn, type ConsoleSession } from '../support/console';
import { json, publicUrl, startHarness, type Harness, type TestOrganization } from '../support/harness';
import { SoftwareAuthenticator } from '../support/software-authenticator';

// An approval signed with a passkey proves itself offline: the export carries the person's public key (from
// person.passkey_added), the assertion (chained with the verdict) and the payload it signed, and
// docs/verify-audit-export.mjs checks the signature over the challenge made of the review, the payload's digest,
// the verdict and the time. Even a copy whose every digest and link was recomputed after an edit (what someone
// holding the database and knowing the scheme could make) is named, because nobody else can sign for the person.

let h: Harness;
let org: TestOrganization;
let session: ConsoleSession;
let lines: string[];
const script = fileURLToPath(new URL('../../docs/verify-audit-export.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'gatehouse-signed-'));

const check = (name: string, content: string[]) => {
  writeFileSync(join(dir, name), `${content.join('\n')}\n`);
  return spawnSync(process.execPath, [script, join(dir, name)], { encoding: 'utf8' });
};

async function holdTask(title: string): Promise<string> {
  const held = await h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title } });
  expect(held.statusCode).toBe(202);
  return json(held).review.id as string;
}

/** Approves a held write as the signed-in reviewer, with their authenticator's signature over its challenge. */
async function approveSigned(authenticator: SoftwareAuthenticator, reviewId: string) {
  const asked = await session.request({ method: 'POST', url: `/console/api/v1/reviews/${reviewId}/passkey-challenge`, payload: { verdict: 'approved' } });
  expect(asked.statusCode, asked.body).toBe(200);
  const { challenge, signed_at } = json(asked).data;
  const approved = await session.request({
    method: 'POST',
    url: `/console/api/v1/reviews/${reviewId}/approve`,
    payload: { comment: 'signed', passkey: { ...authenticator.assert(challenge), signed_at } },
  });
  expect(approved.statusCode, approved.body).toBe(200);
}

beforeAll(async () => {
  h = await startHarness();
  org = await h.createOrganization();
  const reviewer = await addPerson(h.db, org.organization, 'reviewer');
  session = await signIn(h.app, org.organization, reviewer);
  const authenticator = new SoftwareAuthenticator({ rpId: new URL(publicUrl).hostname, origin: publicUrl });
  const options = await session.request({ method: 'POST', url: '/console/api/passkeys/registration-options' });
  expect(options.statusCode, options.body).toBe(200);
  const registered = await session.request({
    method: 'POST',
    url: '/console/api/passkeys',
    payload: { name: 'test key', password: reviewer.password, response: authenticator.register(json(options).data.challenge) },
  });
  expect(registered.statusCode, registered.body).toBe(201);

  await approveSigned(authenticator, await holdTask('review the signed one'));
  await approveSigned(authenticator, await holdTask('review the second signed one'));
  // And one approved without a passkey: checked as before, not as signed.
  const unsigned = await holdTask('review the unsigned one');
  expect((await h.request({ method: 'POST', url: `/api/v1/reviews/${unsigned}/approve`, token: org.reviewerToken, payload: {} })).statusCode).toBe(200);

  await sealAuditChain(h.db, org.organization.id, { lagMs: 0 });
  const exported = await runCli(['audit', 'export', '--org', org.organization.slug], cleanEnv({ DATABASE_URL: inject('databaseUrl') }));
  expect(exported.code, exported.stderr).toBe(0);
  lines = exported.stdout.trim().split('\n');
});

afterAll(async () => {
  await h?.close();
});

type Line = Record<string, any>;
const parsed = () => lines.map((line) => JSON.parse(line) as Line);
const signedApprovals = (events: Line[]) => events.filter((event) => event.type === 'review.approved' && event.data.passkey);

/** Re-seals a copy after editing it: every digest, link and the head recomputed, as the service would have. */
function resealed(events: Line[]): string[] {
  const head = events.at(-1)!.ledger_head;
  let chain: Buffer | null = null;
  for (const event of events.slice(0, -1)) {
    if (event.seq === null) continue;
    const digest = contentDigest({
      id: event.id,
      org_id: head.org_id,
      type: event.type,
      actor_type: event.actor.type,
      actor_id: event.actor.id,
      workflow_id: event.workflow_id,
      review_id: event.review_id,
      resource_type: event.resource_type,
      resource_id: event.resource_id,
      data: event.data,
    });
    chain = chainLink(chain, event.seq, digest);
    event.digest = digest.toString('hex');
    event.chain = chain.toString('hex');
  }
  head.chain = chain!.toString('hex');
  return events.map((event) => JSON.stringify(event));
}

describe('approvals signed with a passkey, verified offline', () => {
  it('the export carries the public key, each signature and the payload it signed, and the script verifies them', () => {
    const events = parsed();
    expect(events.filter((event) => event.type === 'person.passkey_added')).toEqual([
      expect.objectContaining({ data: expect.objectContaining({ credential_id: expect.any(String), public_key_spki: expect.any(String), algorithm: -7, rp_id: 'gatehouse.test' }) }),
    ]);
    const signed = signedApprovals(events);
    expect(signed).toHaveLength(2);
    expect(signed[0]).toMatchObject({
      data: { via: 'console', payload_digest: expect.stringMatching(/^[0-9a-f]{64}$/), passkey: { signed_at: expect.any(String) } },
      signed_payload: { review_id: signed[0]!.review_id, operation: 'tasks.create', input: { title: 'review the signed one' }, edit: null, proposed_edit: null },
    });
    const copy = check('copy.jsonl', lines);
    expect(copy.status, copy.stdout + copy.stderr).toBe(0);
    expect(copy.stdout).toContain('2 signed verdicts checked against their passkeys');
  });

  it('names a signed approval whose payload beside it was changed', () => {
    const events = parsed();
    signedApprovals(events)[0]!.signed_payload.input.title = 'review something else';
    const result = check('payload.jsonl', events.map((event) => JSON.stringify(event)));
    expect(result.status).toBe(1);
    expect(result.stdout).toMatch(/signed approval evt_\w+ \(review rev_\w+, by usr_\w+\): the payload beside it is not the one it signed/);
  });

  it('names a tampered signed approval even when the chain was recomputed after the edit', () => {
    // Someone holding the database says the person approved another payload: its digest, and the chain, redone.
    const events = parsed();
    const forged = signedApprovals(events)[1]!;
    forged.signed_payload.input.title = 'pay 10 000 to the attacker';
    forged.data.payload_digest = payloadDigest(forged.signed_payload);
    const copy = resealed(events);
    const result = check('forged.jsonl', copy);
    expect(result.status).toBe(1);
    // The chain verifies (it was recomputed); the signature is what names it.
    expect(result.stdout).not.toMatch(/was changed after it was written|does not follow/);
    expect(result.stdout).toContain(`signed approval ${forged.id as string}`);
    expect(result.stdout).toContain('its challenge is not this review, payload, verdict and time');

    // A signature swapped for another approval's: the challenge is not this one's.
    const swapped = parsed();
    const [first, second] = signedApprovals(swapped);
    second!.data.passkey = first!.data.passkey;
    const swappedResult = check('swapped.jsonl', resealed(swapped));
    expect(swappedResult.status).toBe(1);
    expect(swappedResult.stdout).toContain(`signed approval ${second!.id as string} (review ${second!.review_id as string}, by ${second!.actor.id as string}): its challenge is not this review, payload, verdict and time`);

    // A signature's bytes changed: it does not verify with the person's key.
    const flipped = parsed();
    const target = signedApprovals(flipped)[0]!;
    const signature = Buffer.from(target.data.passkey.signature, 'base64url');
    signature.writeUInt8(signature.readUInt8(signature.length - 1) ^ 1, signature.length - 1);
    target.data.passkey.signature = signature.toString('base64url');
    const flippedResult = check('flipped.jsonl', resealed(flipped));
    expect(flippedResult.status).toBe(1);
    expect(flippedResult.stdout).toContain("its signature does not verify with the person's passkey");
  });
});

describe('where the organization needs approvals signed', () => {
  it('counts only signed approvals toward a quorum, keeps what each signed after an edit removed the approval, and the verifier names an unsigned approval', async () => {
    const acme = await h.createOrganization({
      policy: `@id("allow") permit (principal, action, resource);
@id("two") @decision("review") @approvals("2") @reason("Two people") permit (principal, action == Action::"tasks.create", resource) when { resource has title && resource.title like "big*" };`,
    });
    const people = await Promise.all([addPerson(h.db, acme.organization, 'reviewer'), addPerson(h.db, acme.organization, 'reviewer')]);
    const signers = await Promise.all(
      people.map(async (person) => {
        const signed = await signIn(h.app, acme.organization, person);
        const key = new SoftwareAuthenticator({ rpId: new URL(publicUrl).hostname, origin: publicUrl });
        const options = json(await signed.request({ method: 'POST', url: '/console/api/passkeys/registration-options' })).data;
        const added = await signed.request({ method: 'POST', url: '/console/api/passkeys', payload: { password: person.password, response: key.register(options.challenge) } });
        expect(added.statusCode, added.body).toBe(201);
        return { session: signed, key, person };
      }),
    );
    const [first, second] = signers as [(typeof signers)[0], (typeof signers)[0]];
    const held = await h.request({ method: 'POST', url: '/api/v1/tasks', token: acme.readWriteToken, payload: { title: 'big signed launch' } });
    expect(held.statusCode).toBe(202);
    const reviewId = json(held).review.id as string;
    // The first approval, before the organization needs passkeys: unsigned.
    expect((await first.session.request({ method: 'POST', url: `/console/api/v1/reviews/${reviewId}/approve`, payload: {} })).statusCode).toBe(200);
    await updateOrganization(h.db, acme.organization.slug, { approvalsNeedPasskey: true });

    const sign = async (signer: typeof first, extra: { edit?: Record<string, unknown>; seen_edit?: string } = {}) => {
      const asked = json(
        await signer.session.request({ method: 'POST', url: `/console/api/v1/reviews/${reviewId}/passkey-challenge`, payload: { verdict: 'approved', ...(extra.edit ? { edit: extra.edit } : {}) } }),
      ).data;
      return signer.session.request({
        method: 'POST',
        url: `/console/api/v1/reviews/${reviewId}/approve`,
        payload: { ...extra, passkey: { ...signer.key.assert(asked.challenge), signed_at: asked.signed_at } },
      });
    };
    // The second person's signed approval does not end it: the first one's was not signed.
    const secondAnswer = await sign(second);
    expect(secondAnswer.statusCode, secondAnswer.body).toBe(200);
    expect(json(secondAnswer).data.status).toBe('pending');
    // The first person signs theirs with an edit: the edit removes the approvals given to the earlier version (the
    // second person's signed one among them), and theirs counts as the first of two.
    const edited = await sign(first, { edit: { description: 'Signed off with a launch date' } });
    expect(edited.statusCode, edited.body).toBe(200);
    expect(json(edited).data).toMatchObject({ status: 'pending', approvals: { given: [{ user_id: first.person.user.id, passkey: true }] } });
    // The second person signs the edited version: the write runs.
    const last = await sign(second, { seen_edit: json(edited).data.edit.id });
    expect(last.statusCode, last.body).toBe(200);
    expect(json(last).data.status).toBe('approved');
    expect(json(last).data.approvals.given.map((given: { passkey: boolean }) => given.passkey)).toEqual([true, true]);

    await sealAuditChain(h.db, acme.organization.id, { lagMs: 0 });
    const exported = await runCli(['audit', 'export', '--org', acme.organization.slug], cleanEnv({ DATABASE_URL: inject('databaseUrl') }));
    expect(exported.code, exported.stderr).toBe(0);
    const copy = exported.stdout.trim().split('\n');
    const untouched = check('quorum.jsonl', copy);
    expect(untouched.status, untouched.stdout).toBe(0);
    // All three signatures verify, the one whose approval the edit removed among them (its payload is kept).
    expect(untouched.stdout).toContain('3 signed verdicts checked against their passkeys');

    // A copy that says the second approval was given unsigned, re-sealed: named, for the organization needed it.
    const events = copy.map((line) => JSON.parse(line) as Line);
    const approval = events.find((event) => event.type === 'review.approved')!;
    approval.data.passkey = null;
    const unsignedCopy = check('unsigned.jsonl', resealed(events));
    expect(unsignedCopy.status).toBe(1);
    expect(unsignedCopy.stdout).toContain(`approval ${approval.id as string} (review ${reviewId}, by ${approval.actor.id as string}) was not signed, while the organization needed approvals signed`);
  });
});
