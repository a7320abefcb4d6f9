import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness, type TestOrganization } from '../support/harness';

// The MCP server as an outside client sees it: the MCP Inspector's command-line mode
// (@modelcontextprotocol/inspector, a devDependency) connects over Streamable HTTP with only the URL and a key,
// lists the tools and calls them. No browser, no network beyond the local api.

const execFileAsync = promisify(execFile);

let h: Harness;
let org: TestOrganization;
let url: string;
let home: string;

beforeAll(async () => {
  h = await startHarness();
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  url = `http://127.0.0.1:${(h.app.server.address() as { port: number }).port}/mcp`;
  org = await h.createOrganization();
  // The Inspector keeps a catalog, client settings and OAuth state under $HOME/.mcp-inspector: keep them here.
  home = await mkdtemp(join(tmpdir(), 'gatehouse-inspector-'));
});
afterAll(async () => {
  await h?.close();
  if (home) await rm(home, { recursive: true, force: true });
});

interface InspectorRun {
  /** 0 on success; 5 when a tool answered isError. */
  exitCode: number;
  /** The `--format json` answer: { result }, or { error } when the call failed. */
  output: { result?: any; error?: { code: string; message: string } };
  stderr: string;
}

/** `npx @modelcontextprotocol/inspector --cli <url> --transport http --header "Authorization: Bearer <key>" …`. */
async function inspector(token: string, ...args: string[]): Promise<InspectorRun> {
  const argv = ['--no-install', '@modelcontextprotocol/inspector', '--cli', url, '--transport', 'http', '--header', `Authorization: Bearer ${token}`, '--format', 'json', ...args];
  const options = { env: { ...process.env, HOME: home }, maxBuffer: 64 * 1024 * 1024, timeout: 50_000 };
  let exitCode = 0;
  let stdout: string;
  let stderr: string;
  try {
    ({ stdout, stderr } = await execFileAsync('npx', argv, options));
  } catch (error) {
    const failed = error as { code?: number | string; stdout?: string; stderr?: string };
    if (typeof failed.code !== 'number') throw error;
    ({ stdout = '', stderr = '' } = failed);
    exitCode = failed.code;
  }
  // The answer is one JSON line: the result on stdout, or (on failure) an error envelope on stderr.
  const line = (stdout.trim() || stderr.trim()).split('\n').at(-1) ?? '';
  try {
    return { exitCode, output: JSON.parse(line), stderr };
  } catch {
    throw new Error(`The Inspector's output is not JSON (exit ${exitCode}):\n${stdout}\n${stderr}`);
  }
}

describe('the MCP Inspector CLI, as an outside client', () => {
  it('lists the tools, with no error-severity schema portability problem (--strict)', async () => {
    const run = await inspector(org.readWriteToken, '--method', 'tools/list', '--strict');
    expect(run.exitCode, run.stderr).toBe(0);
    const names = (run.output.result.tools as { name: string }[]).map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['list_tasks', 'create_task', 'whoami', 'get_review_status']));
  });

  it('calls whoami: the organization comes from the key', async () => {
    const run = await inspector(org.readWriteToken, '--method', 'tools/call', '--tool-name', 'whoami');
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.output.result.isError).toBeFalsy();
    expect(run.output.result.structuredContent.organization.slug).toBe(org.organization.slug);
  });

  it('makes a gated write that the policy allows: applied, through the same workflow, as interface mcp', async () => {
    const run = await inspector(org.readWriteToken, '--method', 'tools/call', '--tool-name', 'create_task', '--tool-arg', 'title=From the Inspector', 'priority=high');
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.output.result.structuredContent).toMatchObject({ status: 'applied', record: { title: 'From the Inspector', priority: 'high' } });
    const id = run.output.result.structuredContent.record.id as string;
    const { rows } = await h.db.query(`SELECT title FROM tasks WHERE org_id = $1 AND id = $2`, [org.organization.id, id]);
    expect(rows).toEqual([{ title: 'From the Inspector' }]);
    const decisions = await h.db.query(`SELECT interface FROM gate_decisions WHERE org_id = $1 AND input->>'title' = 'From the Inspector'`, [org.organization.id]);
    expect(decisions.rows).toEqual([{ interface: 'mcp' }]);
  });

  it('a read-only key: the write tools are not offered, and calling one fails', async () => {
    const listed = await inspector(org.readOnlyToken, '--method', 'tools/list');
    expect((listed.output.result.tools as { name: string }[]).map((tool) => tool.name)).not.toContain('create_task');
    const run = await inspector(org.readOnlyToken, '--method', 'tools/call', '--tool-name', 'create_task', '--tool-arg', 'title=sneaky');
    // The Inspector checks the tool list before calling; the server's own refusal is tested in mcp.test.ts.
    expect(run.exitCode).not.toBe(0);
    expect(run.output.error?.code).toBe('tool_not_found');
    expect((await h.db.query(`SELECT 1 FROM tasks WHERE org_id = $1 AND title = 'sneaky'`, [org.organization.id])).rowCount).toBe(0);
  });
});
