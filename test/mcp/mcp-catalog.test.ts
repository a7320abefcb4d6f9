import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness, type TestOrganization } from '../support/harness';

// What agents see, pinned: every change to a tool's name, title, description, schemas or annotations (and to
// the prompts) changes a committed snapshot, so it shows in review. After an intended change, update them with
// `npx vitest run test/mcp/mcp-catalog.test.ts --update` and review the diff.

let h: Harness;
let org: TestOrganization;


const asFile = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

beforeAll(async () => {
  h = await startHarness();
  await h.listen();
  // On the business plan, as the harness makes it: every feature, so every tool.
  org = await h.createOrganization();
});
afterAll(() => h?.close());

describe('the MCP catalog agents see', () => {
  it('a read-write key: every tool with its title, description, schemas and annotations', async () => {
    const { tools } = await (await h.mcp(org.readWriteToken)).listTools();
    // Every field as served, the main ones first: a field added later (execution, icons, _meta) shows too.
    const pinned = [...tools].sort(byName).map(({ name, title, description, inputSchema, outputSchema, annotations, ...rest }) => ({
      name,
      title,
      description,
      inputSchema,
      outputSchema,
      annotations,
      ...rest,
    }));
    await expect(asFile(pinned)).toMatchFileSnapshot('__snapshots__/mcp-tools.json');
  });

  it('a read-only key: the tool names', async () => {
    const { tools } = await (await h.mcp(org.readOnlyToken)).listTools();
    await expect(asFile(tools.map((tool) => tool.name).sort())).toMatchFileSnapshot('__snapshots__/mcp-tools-read-only.json');
  });

  it('the prompts, with their arguments', async () => {
    const { prompts } = await (await h.mcp(org.readWriteToken)).listPrompts();
    await expect(asFile([...prompts].sort(byName))).toMatchFileSnapshot('__snapshots__/mcp-prompts.json');
  });
});
