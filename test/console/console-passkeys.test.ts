import { spawnSync } from 'node:child_process';
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sealAuditChain } from '../../domain/audit/ledger';
import { passkeySignInLimits } from '../../api/console/session-routes';
import { approvalChallenge, batchChallenge, batchDigest, undoChallenge } from '../../domain/gate/reviews/signing';
import { issueDecisionLinks } from '../../domain/notify/decision-links';
import { accessibilityViolations, launchChromium, screenshot } from '../support/browser';
import { cleanEnv, runCli } from '../support/cli';
import { addPerson, freshAddress, signIn, type ConsoleSession, type TestPerson } from '../support/console';
import { json, startHarness, type Harness, type TestOrganization } from '../support/harness';
import { SoftwareAuthenticator } from '../support/software-authenticator';
import { throttleKeys } from '../../domain/identity/sign-in-throttle';

// Passkeys in Chromium with a virtual WebAuthn authenticator (the DevTools protocol's WebAuthn domain), against
// the real api, worker, Temporal and PostgreSQL, served at http://localhost (a secure context, as WebAuthn needs):
// a person registers a passkey, signs in with it, and approves a held write with it once the organization needs
// approvals signed; approvals without one, and assertions made for something else, are refused and change nothing.

let h: Harness;
let acme: TestOrganization;
let browser: Browser;
let origin: string;
let owner: TestPerson;
let colleague: TestPerson;
let page: Page;
let cdp: CDPSession;
let authenticatorId: string;
const pageErrors: string[] = [];
/** The assertion the browser sent with its approval (captured from the request), to replay elsewhere. */
let captured: { reviewId: string; passkey: Record<string, string> };
let passkeyCredentialId: string;

beforeAll(async () => {
  h = await startHarness({ servedAtLocalhost: true });
  acme = await h.createOrganization({ name: 'Acme Inc.' });
  owner = await addPerson(h.db, acme.organization, 'owner');
  colleague = await addPerson(h.db, acme.organization, 'reviewer');
  origin = await h.listen();
  expect(origin).toMatch(/^http:\/\/localhost:\d+$/);
  browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
  page = await context.newPage();
  page.on('pageerror', (error) => pageErrors.push(error.message));
  cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  ({ authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  }));
  await page.goto(`${origin}/`);
  await page.getByLabel('Organization').fill(acme.organization.slug);
  await page.getByLabel('Email').fill(owner.email);
  await page.getByLabel('Password').fill(owner.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('navigation', { name: 'Console' }).waitFor();
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

const card = (on: Page, title: string) => on.locator('article.review', { hasText: title });

async function holdTask(title: string): Promise<string> {
  const response = await fetch(`${origin}/api/v1/tasks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${acme.readWriteToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title }),
  });
  expect(response.status).toBe(202);
  return ((await response.json()) as { review: { id: string } }).review.id;
}

async function reviewState(reviewId: string) {
  const { rows } = await h.db.query('SELECT status, (SELECT count(*)::int FROM review_approvals a WHERE a.review_id = r.id) AS approvals FROM reviews r WHERE id = $1', [reviewId]);
  return rows[0] as { status: string; approvals: number };
}

/** A sign-in assertion as the browser hands it to the console (AuthenticationResponseJSON). */
function assertionResponse(key: SoftwareAuthenticator, challenge: string) {
  const signed = key.assert(challenge);
  return {
    id: signed.credential_id,
    rawId: signed.credential_id,
    type: 'public-key',
    clientExtensionResults: {},
    response: { authenticatorData: signed.authenticator_data, clientDataJSON: signed.client_data_json, signature: signed.signature },
  };
}

describe('passkeys', () => {
  it('a person registers a passkey in Settings → Passkeys; its public key goes into the audit ledger', async () => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Passkeys' }).click();
    await page.getByRole('heading', { level: 1, name: 'Passkeys' }).waitFor();
    await page.getByText('You have no passkey yet.').waitFor();
    await page.getByLabel('Name (optional)').fill('Work laptop');
    // A session alone adds no passkey: the form asks for the current password, and a wrong one adds nothing.
    await page.getByLabel('Your current password').fill('not the password at all');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByRole('alert').getByText('That is not your current password').waitFor({ timeout: 10_000 });
    expect(await page.getByLabel('Your current password').getAttribute('aria-invalid')).toBe('true');
    expect((await h.db.query('SELECT 1 FROM passkeys WHERE user_id = $1', [owner.user.id])).rowCount).toBe(0);
    // The authenticator made its key before the service refused it: forget that one, as nothing knows it.
    for (const orphan of (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials) {
      await cdp.send('WebAuthn.removeCredential', { authenticatorId, credentialId: orphan.credentialId });
    }
    await page.getByLabel('Your current password').fill(owner.password);
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByText('Added “Work laptop”').waitFor({ timeout: 10_000 });
    expect(await page.getByLabel('Your current password').inputValue()).toBe('');
    await page.getByRole('table', { name: 'Your passkeys' }).getByRole('rowheader', { name: 'Work laptop' }).waitFor();

    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]!.isResidentCredential).toBe(true);
    passkeyCredentialId = Buffer.from(credentials[0]!.credentialId, 'base64').toString('base64url');
    const { rows: stored } = await h.db.query('SELECT user_id, org_id, name FROM passkeys WHERE credential_id = $1', [passkeyCredentialId]);
    expect(stored).toEqual([{ user_id: owner.user.id, org_id: acme.organization.id, name: 'Work laptop' }]);

    // The ledger's key is the authenticator's: the SPKI of the public half of the private key it holds.
    const { rows: added } = await h.db.query("SELECT actor_id, resource_id, data FROM audit_events WHERE org_id = $1 AND type = 'person.passkey_added'", [acme.organization.id]);
    expect(added).toEqual([
      {
        actor_id: owner.user.id,
        resource_id: owner.user.id,
        data: { credential_id: passkeyCredentialId, public_key_spki: expect.any(String), algorithm: expect.any(Number), rp_id: 'localhost', name: 'Work laptop' },
      },
    ]);
    // Chromium's virtual authenticator makes Ed25519 keys (COSE -8) when offered, as the options offer it first.
    expect(added[0].data.algorithm).toBe(-8);
    const authenticatorsKey = createPublicKey(createPrivateKey({ key: Buffer.from(credentials[0]!.privateKey, 'base64'), format: 'der', type: 'pkcs8' }));
    expect(added[0].data.public_key_spki).toBe(authenticatorsKey.export({ type: 'spki', format: 'der' }).toString('base64url'));

    await page.getByRole('button', { name: 'Rename Work laptop' }).click();
    await page.getByLabel('New name for Work laptop').fill('Office laptop');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('rowheader', { name: 'Office laptop' }).waitFor();
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'passkeys');
  });

  it('signs out, and signs in again with the passkey alone (the same session, recorded as a passkey sign-in)', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Use a passkey' }).waitFor();
    expect(await accessibilityViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await page.getByRole('navigation', { name: 'Console' }).waitFor({ timeout: 10_000 });
    const { rows } = await h.db.query(
      "SELECT data FROM audit_events WHERE org_id = $1 AND type = 'person.signed_in' AND resource_id = $2 ORDER BY created_at DESC, id DESC LIMIT 1",
      [acme.organization.id, owner.user.id],
    );
    expect(rows[0].data).toEqual({ session: expect.stringMatching(/^ses_/), method: 'passkey', credential_id: passkeyCredentialId });
    const { rows: used } = await h.db.query('SELECT last_used_at FROM passkeys WHERE credential_id = $1', [passkeyCredentialId]);
    expect(used[0].last_used_at).not.toBeNull();
  });

  it('turns on "approvals need a passkey" (refused in an organization where nobody who decides has one)', async () => {
    const other = await h.createOrganization();
    const otherOwner = await addPerson(h.db, other.organization, 'owner');
    const refused = await (await signIn(h.app, other.organization, otherOwner)).request({ method: 'PATCH', url: '/console/api/v1/organization', payload: { approvals_need_passkey: true } });
    expect(refused.statusCode).toBe(409);
    expect(json(refused).error.message).toContain('Settings → Passkeys');

    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Policy' }).click();
    const setting = page.getByRole('switch', { name: 'Approvals need a passkey' });
    await setting.waitFor();
    expect(await setting.getAttribute('aria-checked')).toBe('false');
    await setting.click();
    await expect.poll(() => setting.getAttribute('aria-checked')).toBe('true');
    const { rows } = await h.db.query('SELECT approvals_need_passkey FROM organizations WHERE id = $1', [acme.organization.id]);
    expect(rows[0].approvals_need_passkey).toBe(true);
    const { rows: events } = await h.db.query("SELECT actor_id, data FROM audit_events WHERE org_id = $1 AND type = 'organization.updated'", [acme.organization.id]);
    expect(events).toEqual([{ actor_id: owner.user.id, data: { approvalsNeedPasskey: true } }]);
  });

  it('approves a held write with the passkey: the write runs, the signature is kept with the verdict and in the ledger', async () => {
    const reviewId = await holdTask('review the passkey order');
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Review queue' }).click();
    const shown = card(page, 'review the passkey order');
    await shown.waitFor({ timeout: 10_000 });
    await shown.getByText('Approving asks your passkey to sign it').waitFor();
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'approve-with-passkey');

    const sent = page.waitForRequest((request) => request.url().endsWith(`/console/api/v1/reviews/${reviewId}/approve`));
    await shown.getByRole('button', { name: 'Approve', exact: true }).click();
    const body = (await sent).postDataJSON() as { passkey: Record<string, string> };
    captured = { reviewId, passkey: body.passkey };
    expect(body.passkey).toEqual({
      credential_id: passkeyCredentialId,
      authenticator_data: expect.any(String),
      client_data_json: expect.any(String),
      signature: expect.any(String),
      signed_at: expect.any(String),
    });
    await shown.waitFor({ state: 'detached', timeout: 20_000 });
    const written = async () => (await h.db.query('SELECT id FROM tasks WHERE org_id = $1 AND title = $2', [acme.organization.id, 'review the passkey order'])).rows.length;
    await expect.poll(written, { timeout: 20_000 }).toBe(1);
    expect((await reviewState(reviewId)).status).toBe('approved');

    const { rows: events } = await h.db.query("SELECT actor_id, data FROM audit_events WHERE org_id = $1 AND type = 'review.approved' AND review_id = $2", [
      acme.organization.id,
      reviewId,
    ]);
    expect(events).toEqual([
      {
        actor_id: owner.user.id,
        data: expect.objectContaining({ via: 'console', payload_digest: expect.stringMatching(/^[0-9a-f]{64}$/), passkey: body.passkey }),
      },
    ]);
    // The challenge the authenticator signed is the one the review, the payload, the verdict and the time make.
    const clientData = JSON.parse(Buffer.from(body.passkey.client_data_json!, 'base64url').toString('utf8'));
    expect(clientData).toMatchObject({ type: 'webauthn.get', origin, challenge: approvalChallenge(reviewId, events[0].data.payload_digest, 'approved', body.passkey.signed_at!) });
    const { rows: approvals } = await h.db.query('SELECT via, passkey FROM review_approvals WHERE review_id = $1', [reviewId]);
    expect(approvals).toEqual([{ via: 'console', passkey: { assertion: body.passkey, payload: expect.objectContaining({ review_id: reviewId, operation: 'tasks.create' }) } }]);
    expect(pageErrors).toEqual([]);
  });

  it('approves three held writes selected in the queue with one passkey signature over all of them', async () => {
    const titles = ['review batch by passkey one', 'review batch by passkey two', 'review batch by passkey three'];
    const ids = [];
    for (const title of titles) ids.push(await holdTask(title));
    await page.goto(`${origin}/reviews`);
    for (const title of titles) await card(page, title).locator('input.select-review').check();
    const bar = page.getByRole('region', { name: 'Decide selected writes' });
    await bar.getByText('Approving asks your passkey to sign once for every selected write').waitFor();
    expect(await accessibilityViolations(page)).toEqual([]);
    const sent = page.waitForRequest((request) => request.url().endsWith('/console/api/v1/reviews/batch'));
    await bar.getByRole('button', { name: 'Approve 3 selected' }).click();
    const body = (await sent).postDataJSON() as { passkey: Record<string, string>; signed_reviews: { review_id: string; payload_digest: string }[] };
    expect(body.passkey.credential_id).toBe(passkeyCredentialId);
    expect(body.signed_reviews.map((review) => review.review_id).sort()).toEqual([...ids].sort());
    const clientData = JSON.parse(Buffer.from(body.passkey.client_data_json!, 'base64url').toString('utf8'));
    expect(clientData).toMatchObject({ type: 'webauthn.get', origin, challenge: batchChallenge(body.signed_reviews, 'approved', body.passkey.signed_at!) });
    await bar.locator('.batch-outcome p, [role="alert"]').first().waitFor({ timeout: 30_000 });
    expect(await bar.locator('.batch-outcome').innerText(), await bar.innerText()).toBe('3 approved.');
    const written = async () => (await h.db.query('SELECT title FROM tasks WHERE org_id = $1 AND title = ANY($2::text[])', [acme.organization.id, titles])).rowCount;
    await expect.poll(written, { timeout: 20_000 }).toBe(3);
    const { rows } = await h.db.query("SELECT data FROM audit_events WHERE type = 'review.approved' AND review_id = ANY($1::text[])", [ids]);
    expect(rows.map((row) => row.data.batch_digest)).toEqual(Array(3).fill(batchDigest(body.signed_reviews, 'approved')));
    expect(pageErrors).toEqual([]);
  });

  it("undoes an approved write from its review's card with the passkey, which signs the write and the time", async () => {
    const { rows } = await h.db.query("SELECT r.id, r.workflow_id FROM reviews r JOIN gate_decisions d ON d.id = r.decision_id WHERE r.org_id = $1 AND d.input->>'title' = 'review batch by passkey one'", [
      acme.organization.id,
    ]);
    const [{ id: reviewId, workflow_id: write }] = rows;
    await page.goto(`${origin}/reviews/${reviewId}`);
    await page.getByRole('button', { name: 'Undo tasks.create' }).click();
    const sent = page.waitForRequest((request) => request.url().endsWith(`/console/api/v1/writes/${encodeURIComponent(write)}/undo`));
    await page.getByRole('button', { name: 'Undo now: tasks.create' }).click();
    const { passkey } = (await sent).postDataJSON() as { passkey: Record<string, string> };
    expect(passkey.credential_id).toBe(passkeyCredentialId);
    const clientData = JSON.parse(Buffer.from(passkey.client_data_json!, 'base64url').toString('utf8'));
    expect(clientData).toMatchObject({ type: 'webauthn.get', origin, challenge: undoChallenge(write, passkey.signed_at!) });
    await page.getByRole('status').getByText(/It was undone \(undo_/).waitFor({ timeout: 20_000 });
    const { rows: undone } = await h.db.query("SELECT actor_id, data FROM audit_events WHERE org_id = $1 AND type = 'write.undone' AND data->>'undoes' = $2", [acme.organization.id, write]);
    expect(undone).toEqual([{ actor_id: owner.user.id, data: expect.objectContaining({ undoes: write, outcome: 'removed', passkey }) }]);
    expect(pageErrors).toEqual([]);
  });

  it('refuses an approval that cannot carry a passkey (a personal access token) with where to finish it', async () => {
    const reviewId = await holdTask('review the token approval');
    const refused = await h.request({ method: 'POST', url: `/api/v1/reviews/${reviewId}/approve`, token: acme.reviewerToken, payload: {} });
    expect(refused.statusCode).toBe(403);
    expect(json(refused).error).toMatchObject({ code: 'passkey_required', details: { finish_url: `${origin}/reviews/${reviewId}` } });
    expect(await reviewState(reviewId)).toEqual({ status: 'pending', approvals: 0 });
    // A denial needs no signature.
    expect((await h.request({ method: 'POST', url: `/api/v1/reviews/${reviewId}/deny`, token: acme.reviewerToken, payload: {} })).statusCode).toBe(200);
  });

  it('an authenticator that does not sign (cancelled, or the person not verified) is said in words, and nothing is decided', async () => {
    const reviewId = await holdTask('review the cancelled approval');
    await page.goto(`${origin}/reviews`);
    const shown = card(page, 'review the cancelled approval');
    await shown.waitFor({ timeout: 10_000 });
    await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: false });
    try {
      await shown.getByRole('button', { name: 'Approve', exact: true }).click();
      await shown.getByRole('alert').getByText('Your passkey was not used').waitFor({ timeout: 20_000 });
    } finally {
      await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: true });
    }
    expect(await reviewState(reviewId)).toEqual({ status: 'pending', approvals: 0 });
  });

  it('a person without a passkey is told to register one first', async () => {
    const reviewId = await holdTask('review without a passkey');
    const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
    const theirs = await context.newPage();
    await theirs.goto(`${origin}/reviews/${reviewId}`);
    await theirs.getByLabel('Organization').fill(acme.organization.slug);
    await theirs.getByLabel('Email').fill(colleague.email);
    await theirs.getByLabel('Password').fill(colleague.password);
    await theirs.getByRole('button', { name: 'Sign in', exact: true }).click();
    const shown = card(theirs, 'review without a passkey');
    await shown.getByRole('button', { name: 'Approve', exact: true }).click();
    await shown.getByRole('alert').getByText('Register a passkey in Settings → Passkeys first.').waitFor();
    await shown.getByRole('link', { name: 'Add a passkey in Settings → Passkeys' }).waitFor();
    expect(await reviewState(reviewId)).toEqual({ status: 'pending', approvals: 0 });
    await context.close();
  });

  describe('an assertion made for something else is refused, and nothing changes', () => {
    let reviewId: string;
    let ownerSession: ConsoleSession;
    let software: SoftwareAuthenticator;

    const approveWith = (session: ConsoleSession, passkey: Record<string, string>) =>
      session.request({ method: 'POST', url: `/console/api/v1/reviews/${reviewId}/approve`, payload: { passkey } });

    async function challengeFor(session: ConsoleSession) {
      const asked = await session.request({ method: 'POST', url: `/console/api/v1/reviews/${reviewId}/passkey-challenge`, payload: { verdict: 'approved' } });
      expect(asked.statusCode).toBe(200);
      return json(asked).data as { challenge: string; signed_at: string; payload_digest: string; rp_id: string; allow_credentials: { id: string }[] };
    }

    async function expectRefused(session: ConsoleSession, passkey: Record<string, string>, why: string) {
      const refused = await approveWith(session, passkey);
      expect(refused.statusCode).toBe(403);
      expect(json(refused).error.code).toBe('passkey_failed');
      expect(json(refused).error.message).toContain(why);
      expect(await reviewState(reviewId)).toEqual({ status: 'pending', approvals: 0 });
    }

    beforeAll(async () => {
      reviewId = await holdTask('review the replayed approval');
      ownerSession = await signIn(h.app, acme.organization, owner);
      // A second passkey of the owner's, in software, to sign what a browser would not.
      software = new SoftwareAuthenticator({ rpId: 'localhost', origin });
      const options = json(await ownerSession.request({ method: 'POST', url: '/console/api/passkeys/registration-options' })).data;
      expect(options.rp).toEqual({ id: 'localhost', name: 'Gatehouse' });
      expect(options.excludeCredentials).toEqual([expect.objectContaining({ id: passkeyCredentialId })]);
      const registered = await ownerSession.request({
        method: 'POST',
        url: '/console/api/passkeys',
        payload: { name: 'software', password: owner.password, response: software.register(options.challenge) },
      });
      expect(registered.statusCode, registered.body).toBe(201);
    });

    it('the browser’s assertion for another review', async () => {
      await expectRefused(ownerSession, captured.passkey, 'challenge');
    });

    it('an assertion over the other verdict', async () => {
      const asked = await challengeFor(ownerSession);
      expect(asked.allow_credentials.map((credential) => credential.id)).toContain(software.id);
      const denied = approvalChallenge(reviewId, asked.payload_digest, 'denied', asked.signed_at);
      await expectRefused(ownerSession, { ...software.assert(denied), signed_at: asked.signed_at }, 'challenge');
    });

    it('an assertion older than five minutes', async () => {
      const asked = await challengeFor(ownerSession);
      const then = new Date(Date.now() - 6 * 60 * 1000).toISOString();
      await expectRefused(ownerSession, { ...software.assert(approvalChallenge(reviewId, asked.payload_digest, 'approved', then)), signed_at: then }, 'five minutes');
    });

    it('another person’s passkey', async () => {
      const theirs = await signIn(h.app, acme.organization, colleague);
      const asked = await challengeFor(theirs);
      expect(asked.allow_credentials).toEqual([]);
      await expectRefused(theirs, { ...software.assert(asked.challenge), signed_at: asked.signed_at }, 'not one of your passkeys');
    });

    it('while the owner’s own fresh assertion over this review approves it', async () => {
      const asked = await challengeFor(ownerSession);
      const approved = await approveWith(ownerSession, { ...software.assert(asked.challenge), signed_at: asked.signed_at });
      expect(approved.statusCode).toBe(200);
      expect(json(approved).data.status).toBe('approved');
      expect(json(approved).data.approvals.given).toEqual([expect.objectContaining({ user_id: owner.user.id, via: 'console', passkey: true })]);
    });

    describe('one assertion signs a batch: every review with the digest of its payload, the verdict and the time', () => {
      type SignedReviews = { review_id: string; payload_digest: string }[];
      const batchChallengeFor = async (session: ConsoleSession, ids: string[], verdict = 'approved') => {
        const asked = await session.request({ method: 'POST', url: '/console/api/v1/reviews/batch/passkey-challenge', payload: { review_ids: ids, verdict } });
        expect(asked.statusCode, asked.body).toBe(200);
        return json(asked).data as { challenge: string; signed_at: string; reviews: SignedReviews; allow_credentials: { id: string }[] };
      };
      const decideBatch = (session: ConsoleSession, payload: Record<string, unknown>) =>
        session.request({ method: 'POST', url: '/console/api/v1/reviews/batch', payload: { verdict: 'approved', ...payload } });
      const statuses = async (ids: string[]) => (await Promise.all(ids.map(reviewState))).map((state) => state.status);

      it('the challenge lists the pending reviews by id with their digests; a signature over it approves them all, each recorded as signed by it', async () => {
        const ids = [await holdTask('review batch signed one'), await holdTask('review batch signed two'), await holdTask('review batch signed three')];
        const asked = await batchChallengeFor(ownerSession, ids);
        expect(asked.reviews.map((review) => review.review_id)).toEqual(ids);
        expect(asked.challenge).toBe(batchChallenge(asked.reviews, 'approved', asked.signed_at));
        // Each review's digest is the one its own single approval would sign.
        const single = json(await ownerSession.request({ method: 'POST', url: `/console/api/v1/reviews/${ids[1]}/passkey-challenge`, payload: { verdict: 'approved' } })).data;
        expect(asked.reviews[1]!.payload_digest).toBe(single.payload_digest);

        const passkey = { ...software.assert(asked.challenge), signed_at: asked.signed_at };
        const decided = await decideBatch(ownerSession, { review_ids: ids, passkey, signed_reviews: asked.reviews });
        expect(decided.statusCode, decided.body).toBe(200);
        expect(json(decided).data.refused).toEqual([]);
        expect(json(decided).data.decided.map((review: { status: string }) => review.status)).toEqual(['approved', 'approved', 'approved']);
        const batch = batchDigest(asked.reviews, 'approved');
        const { rows: events } = await h.db.query("SELECT review_id, data FROM audit_events WHERE type = 'review.approved' AND review_id = ANY($1::text[]) ORDER BY review_id", [ids]);
        expect(events).toHaveLength(3);
        for (const event of events) {
          expect(event.data).toMatchObject({ via: 'console', passkey, batch_digest: batch, payload_digest: asked.reviews.find((review) => review.review_id === event.review_id)!.payload_digest });
        }
        const { rows: kept } = await h.db.query('SELECT payload FROM signed_payloads WHERE digest = $1', [batch]);
        expect(kept).toEqual([{ payload: { verdict: 'approved', reviews: [...asked.reviews].sort((a, b) => (a.review_id < b.review_id ? -1 : 1)) } }]);
      });

      it('refuses the whole batch, deciding nothing, when the signature is over another verdict, other digests, or a stale time', async () => {
        const ids = [await holdTask('review batch refused one'), await holdTask('review batch refused two')];
        const asked = await batchChallengeFor(ownerSession, ids);
        const forged = asked.reviews.map((review) => ({ ...review, payload_digest: 'f'.repeat(64) }));
        const then = new Date(Date.now() - 6 * 60 * 1000).toISOString();
        const attempts = [
          { passkey: { ...software.assert(batchChallenge(asked.reviews, 'denied', asked.signed_at)), signed_at: asked.signed_at }, signed_reviews: asked.reviews, why: 'challenge' },
          { passkey: { ...software.assert(asked.challenge), signed_at: asked.signed_at }, signed_reviews: forged, why: 'challenge' },
          { passkey: { ...software.assert(batchChallenge(asked.reviews, 'approved', then)), signed_at: then }, signed_reviews: asked.reviews, why: 'five minutes' },
        ];
        for (const { why, ...attempt } of attempts) {
          const refused = await decideBatch(ownerSession, { review_ids: ids, ...attempt });
          expect(refused.statusCode, refused.body).toBe(403);
          expect(json(refused).error).toMatchObject({ code: 'passkey_failed', message: expect.stringContaining(why) });
        }
        // Another person cannot use the owner's signature.
        const theirs = await signIn(h.app, acme.organization, colleague);
        const stolen = await decideBatch(theirs, { review_ids: ids, passkey: { ...software.assert(asked.challenge), signed_at: asked.signed_at }, signed_reviews: asked.reviews });
        expect(json(stolen).error.message).toContain('not one of your passkeys');
        // Bad input is named, not decided.
        const unnamed = await decideBatch(ownerSession, { review_ids: ids, passkey: { ...software.assert(asked.challenge), signed_at: asked.signed_at } });
        expect(unnamed.statusCode).toBe(422);
        expect(json(unnamed).error.details.fields).toEqual([expect.objectContaining({ field: 'signed_reviews' })]);
        const stray = await decideBatch(ownerSession, { review_ids: [ids[0]], passkey: { ...software.assert(asked.challenge), signed_at: asked.signed_at }, signed_reviews: asked.reviews });
        expect(stray.statusCode).toBe(422);
        expect(json(stray).error.details.fields).toEqual([{ field: 'signed_reviews.1.review_id', message: `review ${ids[1]} is not among review_ids` }]);
        expect(await statuses(ids)).toEqual(['pending', 'pending']);
      });

      it('a review whose payload is not the one signed is refused (payload_changed), one left out of the signature needs its own, and the others are approved', async () => {
        const ids = [await holdTask('review batch changed'), await holdTask('review batch kept'), await holdTask('review batch unsigned')];
        const asked = await batchChallengeFor(ownerSession, ids.slice(0, 2));
        // The person's key signed a digest that is not what review 0 holds (as when it was edited after they looked).
        const signedReviews = asked.reviews.map((review) => (review.review_id === ids[0] ? { ...review, payload_digest: 'e'.repeat(64) } : review));
        const challenge = batchChallenge(signedReviews, 'approved', asked.signed_at);
        const decided = await decideBatch(ownerSession, { review_ids: ids, passkey: { ...software.assert(challenge), signed_at: asked.signed_at }, signed_reviews: signedReviews });
        expect(decided.statusCode, decided.body).toBe(200);
        expect(json(decided).data.refused).toEqual([
          { id: ids[0], code: 'payload_changed', message: expect.stringContaining('has changed') },
          { id: ids[2], code: 'passkey_required', message: expect.stringContaining('passkey') },
        ]);
        expect(await statuses(ids)).toEqual(['pending', 'approved', 'pending']);
      });

      it("a divisible changeset's rejected items are part of what a single approval signs", async () => {
        const held = await h.request({
          method: 'POST',
          url: '/api/v1/changesets',
          token: acme.readWriteToken,
          payload: { mode: 'divisible', items: [{ operation: 'tasks.create', input: { title: 'review signed item kept' } }, { operation: 'tasks.create', input: { title: 'review signed item rejected' } }] },
        });
        expect(held.statusCode, held.body).toBe(202);
        const changesetReview = json(held).review.id as string;
        const items = [{ index: 1, verdict: 'rejected', reason: '  not this one ' }];
        const asked = json(await ownerSession.request({ method: 'POST', url: `/console/api/v1/reviews/${changesetReview}/passkey-challenge`, payload: { verdict: 'approved', items } })).data;
        const plain = json(await ownerSession.request({ method: 'POST', url: `/console/api/v1/reviews/${changesetReview}/passkey-challenge`, payload: { verdict: 'approved' } })).data;
        expect(asked.payload_digest).not.toBe(plain.payload_digest);
        const passkey = { ...software.assert(asked.challenge), signed_at: asked.signed_at };
        // The signature over rejecting item 1 does not approve the whole, nor rejecting another item.
        for (const other of [{}, { items: [{ index: 0, verdict: 'rejected', reason: 'not this one' }] }]) {
          const refused = await ownerSession.request({ method: 'POST', url: `/console/api/v1/reviews/${changesetReview}/approve`, payload: { passkey, ...other } });
          expect(refused.statusCode, refused.body).toBe(403);
          expect(json(refused).error.code).toBe('passkey_failed');
        }
        const approved = await ownerSession.request({ method: 'POST', url: `/console/api/v1/reviews/${changesetReview}/approve`, payload: { passkey, items } });
        expect(approved.statusCode, approved.body).toBe(200);
        expect(json(approved).data.status).toBe('approved');
        const { rows } = await h.db.query('SELECT payload FROM signed_payloads WHERE digest = $1', [asked.payload_digest]);
        expect(rows[0].payload.items).toEqual([{ index: 1, verdict: 'rejected', reason: 'not this one' }]);
      });
    });

    it("a person's undo needs their passkey's signature over that write: a token cannot carry one, another write's is refused", async () => {
      const { rows } = await h.db.query("SELECT r.workflow_id FROM reviews r JOIN gate_decisions d ON d.id = r.decision_id WHERE r.org_id = $1 AND d.input->>'title' = ANY($2::text[]) ORDER BY d.input->>'title'", [
        acme.organization.id,
        ['review batch signed one', 'review batch signed two'],
      ]);
      const [write, other] = rows.map((row) => row.workflow_id as string);
      const undoWith = (payload: Record<string, unknown>) => ownerSession.request({ method: 'POST', url: `/console/api/v1/writes/${encodeURIComponent(write!)}/undo`, payload });
      const stillThere = async () => (await h.db.query("SELECT 1 FROM tasks WHERE org_id = $1 AND title = 'review batch signed one'", [acme.organization.id])).rowCount;

      const byToken = await h.request({ method: 'POST', url: `/api/v1/writes/${encodeURIComponent(write!)}/undo`, token: acme.reviewerToken, payload: {} });
      expect(byToken.statusCode).toBe(403);
      expect(json(byToken).error).toMatchObject({ code: 'passkey_required', message: expect.stringContaining('personal access token') });
      expect(json(await undoWith({})).error.code).toBe('passkey_required');
      const asked = json(await ownerSession.request({ method: 'POST', url: `/console/api/v1/writes/${encodeURIComponent(other!)}/undo/passkey-challenge` })).data;
      expect(asked.challenge).toBe(undoChallenge(other!, asked.signed_at));
      const refused = await undoWith({ passkey: { ...software.assert(asked.challenge), signed_at: asked.signed_at } });
      expect(refused.statusCode).toBe(403);
      expect(json(refused).error.code).toBe('passkey_failed');
      expect(await stillThere()).toBe(1);
      const unknown = await ownerSession.request({ method: 'POST', url: '/console/api/v1/writes/nothing-here/undo/passkey-challenge' });
      expect(unknown.statusCode).toBe(404);

      const signedAt = new Date().toISOString();
      const undone = await undoWith({ passkey: { ...software.assert(undoChallenge(write!, signedAt)), signed_at: signedAt } });
      expect(undone.statusCode, undone.body).toBe(200);
      expect(json(undone).data.outcome).toBe('removed');
      expect(await stillThere()).toBe(0);
    });

    it('a decision link asks the passkey of the person it was sent to, over the payload it was sent for', async () => {
      const linked = await holdTask('review the linked approval');
      const token = (await issueDecisionLinks(h.db, acme.organization.id, linked, [owner.user.id])).get(owner.user.id)!.approve;
      const asked = await h.request({ method: 'POST', url: '/console/api/decision-links/passkey-challenge', payload: { token } });
      expect(asked.statusCode).toBe(200);
      const { rows } = await h.db.query("SELECT payload_digest FROM decision_links WHERE review_id = $1 AND verdict = 'approved'", [linked]);
      const challenge = json(asked).data;
      expect(challenge).toMatchObject({ payload_digest: rows[0].payload_digest, rp_id: 'localhost' });
      expect(challenge.challenge).toBe(approvalChallenge(linked, rows[0].payload_digest, 'approved', challenge.signed_at));
      // Whoever holds the link is not told which passkeys its person has: the browser offers its own.
      expect(challenge.allow_credentials).toEqual([]);
      // The console's challenge for the same review commits to the same payload: one write, one digest.
      const inConsole = json(await ownerSession.request({ method: 'POST', url: `/console/api/v1/reviews/${linked}/passkey-challenge`, payload: { verdict: 'approved' } })).data;
      expect(inConsole.payload_digest).toBe(rows[0].payload_digest);
      expect((await h.request({ method: 'POST', url: '/console/api/decision-links/passkey-challenge', payload: { token: 'x'.repeat(43) } })).statusCode).toBe(410);
    });

    it('signs in over HTTP once per challenge, and never a deactivated person', async () => {
      const signInWith = async (key: SoftwareAuthenticator, challenge?: string) => {
        const options = json(await h.request({ method: 'POST', url: '/console/api/session/passkey-options' })).data;
        expect(options).toMatchObject({ rpId: 'localhost', userVerification: 'required' });
        const response = assertionResponse(key, challenge ?? options.challenge);
        return { challenge: options.challenge as string, answer: await h.request({ method: 'POST', url: '/console/api/session/passkey', payload: { response } }) };
      };
      const first = await signInWith(software);
      expect(first.answer.statusCode).toBe(201);
      expect(json(first.answer).data.person.id).toBe(owner.user.id);
      // The challenge was spent by that sign-in.
      expect((await signInWith(software, first.challenge)).answer.statusCode).toBe(401);

      const leaving = await addPerson(h.db, acme.organization, 'reviewer');
      const theirs = await signIn(h.app, acme.organization, leaving);
      const key = new SoftwareAuthenticator({ rpId: 'localhost', origin });
      const options = json(await theirs.request({ method: 'POST', url: '/console/api/passkeys/registration-options' })).data;
      expect((await theirs.request({ method: 'POST', url: '/console/api/passkeys', payload: { password: leaving.password, response: key.register(options.challenge) } })).statusCode).toBe(201);
      expect((await signInWith(key)).answer.statusCode).toBe(201);
      await h.db.query('UPDATE users SET deactivated_at = now() WHERE id = $1', [leaving.user.id]);
      const refused = (await signInWith(key)).answer;
      expect(refused.statusCode).toBe(401);
      expect(refused.cookies.some((cookie) => cookie.name.endsWith('gatehouse_session') && cookie.value)).toBe(false);
    });

    it('signs in with a passkey however many password guesses wait, from one address and over every address', async () => {
      const guess = { organization: acme.organization.slug, email: owner.email, password: 'a stranger guessing' };
      const stranger = '203.0.113.11';
      // Ten failed sign-ins from one address (a lock of old): the next is refused.
      for (let i = 0; i < 10; i++) await h.request({ method: 'POST', url: '/console/api/session', payload: guess, remoteAddress: stranger });
      expect((await h.request({ method: 'POST', url: '/console/api/session', payload: guess, remoteAddress: stranger })).statusCode).toBe(429);
      // And the account's own wait over every address, as guesses spread over many would leave it.
      const keys = throttleKeys({ orgSlug: acme.organization.slug, email: owner.email }, stranger);
      await h.db.query("UPDATE sign_in_throttles SET failures = 100, wait_until = now() + interval '10 minutes' WHERE key = $1", [keys.account]);
      try {
        expect((await h.request({ method: 'POST', url: '/console/api/session', payload: guess, remoteAddress: '203.0.113.12' })).statusCode).toBe(429);
        const options = json(await h.request({ method: 'POST', url: '/console/api/session/passkey-options', remoteAddress: stranger })).data;
        const response = assertionResponse(software, options.challenge);
        const signedIn = await h.request({ method: 'POST', url: '/console/api/session/passkey', payload: { response }, remoteAddress: stranger });
        expect(signedIn.statusCode, signedIn.body).toBe(201);
        expect(json(signedIn).data.person.id).toBe(owner.user.id);
      } finally {
        await h.db.query('UPDATE sign_in_throttles SET failures = 0, wait_until = NULL WHERE key = ANY($1)', [[keys.account, keys.pair]]);
      }
    });

    it('a removed passkey is recorded as removed; removing one takes the current password too', async () => {
      const { rows } = await h.db.query("SELECT id FROM passkeys WHERE credential_id = $1", [software.id]);
      const url = `/console/api/passkeys/${rows[0].id}`;
      const unproven = await ownerSession.request({ method: 'DELETE', url });
      expect(unproven.statusCode).toBe(422);
      expect(json(unproven).error.details.fields).toEqual([expect.objectContaining({ field: 'password' })]);
      const wrong = await ownerSession.request({ method: 'DELETE', url, payload: { password: 'not the password at all' } });
      expect(wrong.statusCode).toBe(422);
      expect(json(wrong).error.message).toContain('not your current password');
      expect((await h.db.query('SELECT 1 FROM passkeys WHERE credential_id = $1', [software.id])).rowCount).toBe(1);
      const removed = await ownerSession.request({ method: 'DELETE', url, payload: { password: owner.password } });
      expect(removed.statusCode, removed.body).toBe(200);
      const { rows: events } = await h.db.query("SELECT data FROM audit_events WHERE org_id = $1 AND type = 'person.passkey_removed'", [acme.organization.id]);
      expect(events).toEqual([{ data: { credential_id: software.id, name: 'software' } }]);
    });
  });

  describe('adding a passkey takes the person’s current password, and a broken key is refused; neither registers anything', () => {
    let person: TestPerson;
    let session: ConsoleSession;

    const registerWith = async (payload: (challenge: string) => Record<string, unknown>) => {
      const options = json(await session.request({ method: 'POST', url: '/console/api/passkeys/registration-options' })).data;
      return session.request({ method: 'POST', url: '/console/api/passkeys', payload: payload(options.challenge as string) });
    };
    const stored = async () => {
      const passkeys = (await h.db.query('SELECT credential_id FROM passkeys WHERE user_id = $1', [person.user.id])).rowCount;
      const added = (await h.db.query("SELECT 1 FROM audit_events WHERE type = 'person.passkey_added' AND resource_id = $1", [person.user.id])).rowCount;
      return { passkeys, added };
    };
    /** The failures counted against the person's name from the session's address (inject's, 127.0.0.1). */
    const failures = async () => {
      const keys = throttleKeys({ orgSlug: acme.organization.slug, email: person.email }, '127.0.0.1');
      return ((await h.db.query('SELECT failures FROM sign_in_throttles WHERE key = $1', [keys.pair])).rows[0]?.failures ?? 0) as number;
    };

    beforeAll(async () => {
      person = await addPerson(h.db, acme.organization, 'reviewer');
      session = await signIn(h.app, acme.organization, person);
    });

    it('without the password (the session’s cookie and CSRF token alone)', async () => {
      const key = new SoftwareAuthenticator({ rpId: 'localhost', origin });
      const refused = await registerWith((challenge) => ({ response: key.register(challenge) }));
      expect(refused.statusCode).toBe(422);
      expect(json(refused).error.details.fields).toEqual([expect.objectContaining({ field: 'password' })]);
      expect(await stored()).toEqual({ passkeys: 0, added: 0 });
    });

    it('with a wrong password, counted as a failed sign-in with the person’s name from this address is', async () => {
      const key = new SoftwareAuthenticator({ rpId: 'localhost', origin });
      const refused = await registerWith((challenge) => ({ password: 'not the password at all', response: key.register(challenge) }));
      expect(refused.statusCode).toBe(422);
      expect(json(refused).error).toMatchObject({ code: 'validation_failed', details: { fields: [{ field: 'password', message: 'is not your current password' }] } });
      expect(await stored()).toEqual({ passkeys: 0, added: 0 });
      expect(await failures()).toBe(1);
    });

    for (const kind of ['short-coordinate', 'rsa-without-n', 'unknown-kty'] as const) {
      it(`with a malformed public key (${kind}): passkey_failed, not a fault`, async () => {
        const key = new SoftwareAuthenticator({ rpId: 'localhost', origin });
        const refused = await registerWith((challenge) => ({ password: person.password, response: key.register(challenge, key.malformedCoseKey(kind)) }));
        expect(refused.statusCode, refused.body).toBe(403);
        expect(json(refused).error.code).toBe('passkey_failed');
        expect(await stored()).toEqual({ passkeys: 0, added: 0 });
      });
    }

    it('while the right password registers it, whatever strangers’ guesses at it wait, and forgives the failures', async () => {
      // A stranger's ten failed sign-ins from elsewhere (a lock of old), and the account's wait over every address.
      const stranger = '203.0.113.21';
      const guess = { organization: acme.organization.slug, email: person.email, password: 'a stranger guessing' };
      for (let i = 0; i < 10; i++) await h.request({ method: 'POST', url: '/console/api/session', payload: guess, remoteAddress: stranger });
      const keys = throttleKeys({ orgSlug: acme.organization.slug, email: person.email }, stranger);
      await h.db.query("UPDATE sign_in_throttles SET failures = 100, wait_until = now() + interval '10 minutes' WHERE key = $1", [keys.account]);
      expect((await h.request({ method: 'POST', url: '/console/api/session', payload: guess, remoteAddress: '203.0.113.22' })).statusCode).toBe(429);

      const key = new SoftwareAuthenticator({ rpId: 'localhost', origin });
      const registered = await registerWith((challenge) => ({ password: person.password, response: key.register(challenge) }));
      expect(registered.statusCode, registered.body).toBe(201);
      expect(await stored()).toEqual({ passkeys: 1, added: 1 });
      expect(await failures()).toBe(0);
    });

    it('a stolen session guessing at the password waits as a stranger at the sign-in page does', async () => {
      const { rows } = await h.db.query('SELECT id FROM passkeys WHERE user_id = $1', [person.user.id]);
      const remove = (password: string) => session.request({ method: 'DELETE', url: `/console/api/passkeys/${rows[0].id}`, payload: { password } });
      // A burst of guesses: five failures free, the sixth heard (it starts a wait), the rest refused unheard.
      const answers = await Promise.all(Array.from({ length: 9 }, () => remove('a thief guessing')));
      expect(answers.map((answer) => answer.statusCode).sort()).toEqual([422, 422, 422, 422, 422, 422, 429, 429, 429]);
      const refused = answers.find((answer) => answer.statusCode === 429)!;
      expect(json(refused).error.code).toBe('rate_limited');
      expect(refused.headers['retry-after']).toBe('1');
      expect(await stored()).toEqual({ passkeys: 1, added: 1 });
    });
  });

  it('a decision link’s page has the passkey sign the link’s verdict when the organization needs it', async () => {
    const reviewId = await holdTask('review from the link');
    const token = (await issueDecisionLinks(h.db, acme.organization.id, reviewId, [owner.user.id])).get(owner.user.id)!.approve;
    const { rows } = await h.db.query("SELECT payload_digest FROM decision_links WHERE review_id = $1 AND verdict = 'approved'", [reviewId]);
    await page.goto(`${origin}/decide#${token}`);
    const signedConfirm = page.waitForRequest((request) => request.url().endsWith('/decision-links/confirm') && request.postDataJSON()?.token === token && Boolean(request.postDataJSON()?.passkey));
    await page.getByRole('button', { name: 'Approve this write' }).click();
    const { passkey } = (await signedConfirm).postDataJSON() as { passkey: Record<string, string> };
    expect(passkey.credential_id).toBe(passkeyCredentialId);
    const clientData = JSON.parse(Buffer.from(passkey.client_data_json!, 'base64url').toString('utf8'));
    expect(clientData).toMatchObject({ type: 'webauthn.get', origin, challenge: approvalChallenge(reviewId, rows[0].payload_digest, 'approved', passkey.signed_at!) });
    // The link's verdict port checks it: the write runs, approved from the link with the passkey's signature.
    await page.locator('.outcome, [role="alert"]').first().waitFor({ timeout: 20_000 });
    const written = async () => (await h.db.query('SELECT id FROM tasks WHERE org_id = $1 AND title = $2', [acme.organization.id, 'review from the link'])).rowCount;
    await expect.poll(written, { timeout: 20_000 }).toBe(1);
    const { rows: approved } = await h.db.query("SELECT data FROM audit_events WHERE review_id = $1 AND type = 'review.approved'", [reviewId]);
    expect(approved).toMatchObject([{ data: { via: 'link', passkey: { credential_id: passkeyCredentialId } } }]);
    expect(pageErrors).toEqual([]);
  });

  it('the offline verifier checks each signed approval of the export against the key the ledger recorded', async () => {
    await sealAuditChain(h.db, acme.organization.id, { lagMs: 0 });
    const exported = await runCli(['audit', 'export', '--org', acme.organization.slug], cleanEnv({ DATABASE_URL: inject('databaseUrl') }));
    expect(exported.code, exported.stderr).toBe(0);
    const file = join(mkdtempSync(join(tmpdir(), 'gatehouse-passkeys-')), 'export.jsonl');
    writeFileSync(file, exported.stdout);
    const verifier = fileURLToPath(new URL('../../docs/verify-audit-export.mjs', import.meta.url));
    const checked = spawnSync(process.execPath, [verifier, file], { encoding: 'utf8' });
    expect(checked.status, checked.stdout + checked.stderr).toBe(0);
    // The browser's approvals in the console and from the decision link (Ed25519, Chromium's virtual authenticator)
    // and the software one (ES256).
    expect(Number(/(\d+) signed verdicts checked against their passkeys/.exec(checked.stdout)?.[1])).toBeGreaterThanOrEqual(3 + 3 + 3 + 2);

    // A batch's list that is not the one signed (a review taken out of it) is named.
    const lines = exported.stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line));
    const batched = lines.find((line) => line.signed_batch);
    expect(batched).toBeDefined();
    batched.signed_batch.reviews = batched.signed_batch.reviews.filter((review: { review_id: string }) => review.review_id === batched.review_id);
    writeFileSync(file, lines.map((line) => JSON.stringify(line)).join('\n'));
    const tampered = spawnSync(process.execPath, [verifier, file], { encoding: 'utf8' });
    expect(tampered.status).toBe(1);
    expect(tampered.stdout).toContain(`review ${batched.review_id}, by ${batched.actor.id}): the batch beside it is not the one it signed`);
  });

  it('each address may start only so many passkey sign-ins a minute', async () => {
    const codes: number[] = [];
    // An address of its own: its window starts with this test's first request, not with an earlier test's.
    const from = freshAddress();
    for (let attempt = 0; attempt <= passkeySignInLimits.perMinute; attempt++) {
      const answer = await h.request({ method: 'POST', url: '/console/api/session/passkey-options', remoteAddress: from });
      codes.push(answer.statusCode);
      if (answer.statusCode === 429) {
        expect(json(answer).error.code).toBe('rate_limited');
        break;
      }
    }
    expect(codes.at(-1)).toBe(429);
  });
});
