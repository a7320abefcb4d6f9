import protos from '@temporalio/proto';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, inject, it } from 'vitest';

// Held writes wait for weeks, so a worker deployed today must carry on workflows that older code started.
// test/histories holds histories recorded from earlier versions of the gated-write workflow (see record.ts
// there) and of the changeset workflow (record-changesets.ts); each must replay on the workflow code as it is
// now without a nondeterminism error.

const { History } = protos.temporal.api.history.v1;
// The change this file makes on purpose is logged by Temporal as a warning; only errors are news here.
Runtime.install({ logger: new DefaultLogger('ERROR'), telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' } } } });
const folder = new URL('../histories/', import.meta.url);
const recorded = readdirSync(folder).filter((file) => file.endsWith('.json')).sort();
const historyOf = (file: string) => History.fromObject(JSON.parse(readFileSync(new URL(file, folder), 'utf8')));

describe('recorded histories of the gated-write workflow', () => {
  it('are there: every path of the workflow, from each recorded version', () => {
    const paths = ['allow', 'deny', 'review-approved', 'review-denied', 'review-approved-by-reread', 'review-expired', 'review-approved-apply-failed', 'refused-before-deciding'];
    for (const path of paths) expect(recorded.filter((file) => file.endsWith(`-${path}.json`)).length, path).toBeGreaterThan(0);
    // Every workflow type: the one the api starts, and the older ones whose runs may still be waiting.
    const types = new Set(recorded.map((file) => historyOf(file).events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name));
    expect([...types].sort()).toEqual(['changesetV1', 'gatedWrite', 'gatedWriteV2', 'gatedWriteV3']);
    for (const prefix of ['2026-11-23-v2-', '2026-11-24-v3-']) {
      for (const path of paths) expect(recorded.filter((file) => file.startsWith(prefix) && file.endsWith(`-${path}.json`)), `${prefix}${path}`).toHaveLength(1);
    }
  });

  it('are there for a review withdrawn while it waited: told at once and found by the re-read, on every workflow type', () => {
    const typeOf = (file: string) => historyOf(file).events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name;
    const typesOf = (path: string) => [...new Set(recorded.filter((file) => file.endsWith(`-${path}.json`)).map(typeOf))].sort();
    // Told at once (the api's revoke), on the type the api starts and on the older types whose runs may still wait.
    expect(typesOf('review-withdrawn')).toEqual(['gatedWrite', 'gatedWriteV2', 'gatedWriteV3']);
    // Found by the re-read (the CLI, the OAuth events).
    expect(typesOf('review-withdrawn-by-reread')).toEqual(['gatedWriteV3']);
  });

  it('are there for runs an older worker kept waiting past their withdrawal, and for their end on the current code', () => {
    // Recorded by record-old-worker.ts: the code before withdrawal read `withdrawn` as still waiting. Each run
    // replays here as that worker left it; once a current worker took it, it ended withdrawn, with the patch's marker.
    for (const path of ['review-withdrawn', 'changeset-held-withdrawn']) {
      const [waiting, ...more] = recorded.filter((file) => file.endsWith(`-old-worker-${path}-kept-waiting.json`));
      expect(waiting, path).toBeDefined();
      expect(more).toEqual([]);
      const waited = historyOf(waiting!).events!;
      expect(waited.at(-1)?.workflowExecutionCompletedEventAttributes, waiting).toBeFalsy();
      // It read the review at least twice after the withdrawal (its re-reads), and waited on.
      expect(waited.filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'readReviewStatus').length).toBeGreaterThanOrEqual(2);

      const ended = historyOf(waiting!.replace('-kept-waiting.json', '-then-ended.json')).events!;
      expect(ended.at(-1)?.workflowExecutionCompletedEventAttributes, path).toBeTruthy();
      const patches = ended.flatMap((event) =>
        event.markerRecordedEventAttributes?.markerName === 'core_patch'
          ? (event.markerRecordedEventAttributes.details?.['patch-data']?.payloads ?? []).map((payload) => JSON.parse(Buffer.from(payload.data!).toString('utf8')).id)
          : [],
      );
      expect(patches).toEqual(['withdrawals-end']);
    }
  });

  it("are there for changesets (changesetV1): every path, each of the workflow's type", () => {
    const paths = ['allowed', 'denied', 'held-approved', 'held-denied', 'divisible-one-rejected', 'held-withdrawn'];
    for (const path of paths) {
      const files = recorded.filter((file) => file.endsWith(`-changeset-${path}.json`));
      expect(files.length, path).toBeGreaterThan(0);
      for (const file of files) expect(historyOf(file).events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name, file).toBe('changesetV1');
    }
  });

  it.each(recorded)('%s replays on the current code', async (file) => {
    await Worker.runReplayHistory({ workflowBundle: { codePath: inject('workflowBundlePath') } }, historyOf(file), file);
  });

  it('a change that alters what the workflow does is caught', async () => {
    // Inside the project, so that the bundler finds @temporalio/workflow.
    const cache = fileURLToPath(new URL('../../node_modules/.cache/', import.meta.url));
    mkdirSync(cache, { recursive: true });
    const dir = mkdtempSync(join(cache, 'gatehouse-changed-workflow-'));
    try {
      // The same workflow type, which now waits before anything else: its first command differs from the history's.
      writeFileSync(
        join(dir, 'index.ts'),
        "import { sleep } from '@temporalio/workflow';\nexport async function gatedWrite() { await sleep(1000); return {}; }\n",
      );
      const { code } = await bundleWorkflowCode({ workflowsPath: join(dir, 'index.ts'), logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} } });
      const file = recorded.find((name) => name.endsWith('-allow.json'))!;
      await expect(Worker.runReplayHistory({ workflowBundle: { code } }, historyOf(file), file)).rejects.toThrow(/nondetermin/i);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// A held write's supervision waits on timers for hours and a delivery retries for a day: the webhook and
// notification workflows' recorded runs (test/histories/record-notify.ts) must replay on the current code too.
const notifyFolder = new URL('../histories/notify/', import.meta.url);
const notifyRecorded = readdirSync(notifyFolder).filter((file) => file.endsWith('.json')).sort();
const notifyHistoryOf = (file: string) => History.fromObject(JSON.parse(readFileSync(new URL(file, notifyFolder), 'utf8')));

describe('recorded histories of the webhook and notification workflows', () => {
  it('are there: every workflow type, and each path', () => {
    const types = new Set(notifyRecorded.map((file) => notifyHistoryOf(file).events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name));
    expect([...types].sort()).toEqual(['deliverWebhook', 'relayWebhookEvent', 'superviseReview']);
    for (const path of ['relay-event', 'relay-review-event', 'delivery-delivered', 'delivery-failed', 'supervise-escalated', 'supervise-decided']) {
      expect(notifyRecorded.filter((file) => file.endsWith(`-${path}.json`)).length, path).toBeGreaterThan(0);
    }
  });

  it.each(notifyRecorded)('%s replays on the current code', async (file) => {
    await Worker.runReplayHistory({ workflowBundle: { codePath: inject('workflowBundlePath') } }, notifyHistoryOf(file), file);
  });
});
