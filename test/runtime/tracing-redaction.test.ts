import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createWebhookEndpoint } from '../../domain/notify/endpoints';
import { updateReviewNotificationSettings } from '../../domain/notify/settings';
import { updateSlackAppSettings } from '../../domain/notify/slack-app';
import { startTracing } from '../../runtime/tracing';
import { publicUrl, startHarness, type Harness, type TestOrganization } from '../support/harness';
import { linksIn, startMailCatcher, type MailCatcher } from '../support/mail-catcher';
import { startReceiver, type Receiver } from '../support/receiver';

// With traces on, a decision link's whole journey leaves no secret in any span: the held write, the email with its
// links, the links opened in their older form (the token in the path) and their new one, the read and the confirm,
// the webhook delivered to an endpoint whose path and query are its secret, the Slack message to an incoming
// webhook URL (a secret in its path), a press answered through its response_url, and the Slack link offered. Its
// own file: tracing starts once per process.

const exporter = new InMemorySpanExporter();
const tracing = startTracing('gatehouse-redaction-test', { spanProcessor: new SimpleSpanProcessor(exporter) });

const signingSecret = 'redaction-test-signing-secret';
const secrets = {
  endpointPath: 'endpoint-path-secret-4f1c',
  endpointQuery: 'endpoint-query-secret-9a2e',
  slackWebhook: 'slack-webhook-secret-77b0',
  responseUrl: 'response-url-secret-c3d8',
};

let h: Harness;
let catcher: MailCatcher;
let receiver: Receiver;
let baseUrl: string;
let org: TestOrganization;

beforeAll(async () => {
  catcher = await startMailCatcher();
  receiver = await startReceiver();
  h = await startHarness({ tracing, webhooks: { smtpUrl: catcher.url } });
  baseUrl = await h.listen();
  org = await h.createOrganization({ approveLinks: 'anyone_with_link' });
  const loopback = { allowLoopback: true, allowPrivate: false };
  const system = { type: 'system' as const, id: 'test' };
  await createWebhookEndpoint(h.db, h.secrets, org.organization.id, { url: `${receiver.url}/hooks/${secrets.endpointPath}?key=${secrets.endpointQuery}`, eventTypes: ['review.decided', 'write.applied'] }, loopback);
  await updateReviewNotificationSettings(h.db, h.secrets, org.organization.id, { slackWebhookUrl: `${receiver.url}/services/T0/B0/${secrets.slackWebhook}` }, loopback, system);
  await updateSlackAppSettings(h.db, h.secrets, org.organization.id, { signingSecret }, system);
});

afterAll(async () => {
  await h?.close();
  await receiver?.close();
  await catcher?.close();
  await tracing.shutdown();
});

/** A press of the held write's Approve button in Slack, by a Slack user not linked yet, signed as Slack signs it. */
function press(value: string): Promise<Response> {
  const timestamp = Math.floor(Date.now() / 1000);
  const payload = {
    type: 'block_actions',
    user: { id: 'U0TRACED', username: 'traced.user', name: 'traced.user', team_id: 'T0TRACED' },
    team: { id: 'T0TRACED', domain: 'traced-workspace' },
    response_url: `${receiver.url}/respond/${secrets.responseUrl}`,
    actions: [{ action_id: 'gatehouse.approve', value, type: 'button' }],
  };
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const signature = `v0=${createHmac('sha256', signingSecret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
  return fetch(`${baseUrl}/slack/interactions/${org.organization.id}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-slack-request-timestamp': String(timestamp), 'x-slack-signature': signature },
    body,
  });
}

const postJson = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

/** A page as a browser asks for it. */
const openPage = (path: string) => fetch(`${baseUrl}${path}`, { headers: { accept: 'text/html' } });

/** Every string a span carries: its name, its attributes, its events' names and attributes, its resource's attributes. */
function everythingIn(span: ReadableSpan): string[] {
  const values = (attributes: Record<string, unknown> = {}) => Object.entries(attributes).map(([name, value]) => `${name}=${JSON.stringify(value)}`);
  return [
    span.name,
    ...values(span.attributes),
    ...span.events.flatMap((event) => [event.name, ...values(event.attributes)]),
    ...values(span.resource.attributes),
  ];
}

describe('traces of a decision link’s journey', () => {
  it('carry no link token, and no path or query of an outgoing URL', async () => {
    exporter.reset();
    const held = await fetch(`${baseUrl}/api/v1/tasks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.readWriteToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'review the traced write' }),
    });
    expect(held.status).toBe(202);
    const reviewId = ((await held.json()) as { review: { id: string } }).review.id;
    const [approve, deny] = linksIn(await catcher.mailTo(`reviewer@${org.organization.slug}.test`, reviewId), `${publicUrl}/decide#`).map((link) =>
      link.slice(`${publicUrl}/decide#`.length),
    );
    const [message] = await receiver.waitFor(1, (request) => request.path.startsWith('/services/') && request.body.includes(reviewId));
    const approveButton = (JSON.parse(message!.body).blocks as { type: string; elements?: { action_id: string; value: string }[] }[])
      .find((block) => block.type === 'actions')!
      .elements!.find((element) => element.action_id === 'gatehouse.approve')!;

    // A Slack user not linked yet presses: answered through the response_url with a one-time link.
    expect((await press(approveButton.value)).status).toBe(200);
    const [answer] = await receiver.waitFor(1, (request) => request.path.startsWith('/respond/'));
    const offer = /\/slack\/link#([A-Za-z0-9_-]{43})/.exec(JSON.parse(answer!.body).text)![1]!;

    // The links opened as a browser opens them: the older form with the token in the path, and the new one.
    for (const path of [`/decide/${approve}`, '/decide', `/slack/link/${offer}`, '/slack/link']) expect((await openPage(path)).status, path).toBe(200);
    // A page loaded before the links moved calls the older routes, with the token in the path: refused, and unrecorded.
    expect((await fetch(`${baseUrl}/console/api/decision-links/${deny}`)).status).toBe(404);
    expect((await postJson(`/console/api/decision-links/${deny}/confirm`, {})).status).toBe(404);
    expect((await postJson('/console/api/decision-links/read', { token: deny })).status).toBe(200);
    expect((await postJson('/console/api/decision-links/read', { token: approve })).status).toBe(200);
    const confirmed = await postJson('/console/api/decision-links/confirm', { token: approve });
    expect(confirmed.status, await confirmed.clone().text()).toBe(200);

    // The approval's webhooks reach the endpoint; each outgoing request's span has ended once its answer came.
    await receiver.waitFor(2, (request) => request.path.startsWith('/hooks/'));
    const outgoing = () => exporter.getFinishedSpans().filter((span) => span.kind === SpanKind.CLIENT && String(span.attributes['http.host'] ?? span.attributes['server.address']).includes('127.0.0.1'));
    await vi.waitFor(() => expect(outgoing().length).toBeGreaterThanOrEqual(4), { timeout: 15_000, interval: 100 });

    // The receiver stands in for Slack and the endpoint, in this process: its own spans are what they would record.
    const receiverHost = new URL(receiver.url).host;
    const ours = exporter.getFinishedSpans().filter((span) => !(span.kind === SpanKind.SERVER && span.attributes['http.host'] === receiverHost));
    const forbidden = [approve!, deny!, offer, ...Object.values(secrets)];
    const leaks = ours.flatMap((span) => everythingIn(span).filter((value) => forbidden.some((secret) => value.includes(secret))).map((value) => `${span.name}: ${value}`));
    expect(leaks).toEqual([]);

    // Redacted, not dropped: the paths that carried a token, and every outgoing URL down to its scheme and host.
    const incomingTargets = ours.filter((span) => span.kind === SpanKind.SERVER).map((span) => span.attributes['http.target']);
    expect(incomingTargets).toEqual(
      expect.arrayContaining(['/decide/REDACTED', '/slack/link/REDACTED', '/decide', '/console/api/decision-links/REDACTED', '/console/api/decision-links/confirm']),
    );
    const outgoingUrls = new Set(outgoing().map((span) => span.attributes['http.url']));
    expect([...outgoingUrls]).toEqual([`${receiver.url}/REDACTED`]);
  }, 60_000);
});
