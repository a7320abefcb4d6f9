import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { gatedWrite, restTaskPage, pageSize, WrongAnswerError, type Operation, type WriteSinks } from './measure';

/** The MCP tool calls and their REST twins, in the order each round runs them. */
export const mcpKinds = ['mcpRead', 'restRead', 'mcpWrite', 'restWrite'] as const;
export type McpKind = (typeof mcpKinds)[number];

/** The pairs the report compares, MCP ÷ REST. */
export const mcpPairs = {
  read: { mcp: 'mcpRead', rest: 'restRead' },
  write: { mcp: 'mcpWrite', rest: 'restWrite' },
} as const satisfies Record<string, { mcp: McpKind; rest: McpKind }>;
export type McpPair = keyof typeof mcpPairs;
/** The two kinds of a pair. */
export type PairKind<P extends McpPair> = (typeof mcpPairs)[P]['mcp'] | (typeof mcpPairs)[P]['rest'];


/**
 * The SDK's own Client over Streamable HTTP with the bench key, as an agent connects: initialize once, then
 * tools/list once (the client then checks every structured result against the tool's output schema).
 */
export async function connectBenchMcp(apiUrl: string, token: string): Promise<Client> {
  const client = new Client({ name: 'gatehouse-bench', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${apiUrl}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  try {
    const { tools } = await client.listTools();
    for (const name of ['list_tasks', 'create_task']) {
      if (!tools.some((tool) => tool.name === name)) throw new Error(`the bench key's tools/list has no ${name}`);
    }
  } catch (error) {
    await client.close().catch(() => {});
    throw error;
  }
  return client;
}

type ToolResult = { isError?: boolean; structuredContent?: Record<string, unknown>; content?: unknown };

function describe(result: ToolResult): string {
  return JSON.stringify(result).slice(0, 500);
}

/** list_tasks with limit 50: not an error, a full page of tasks. */
export function mcpListTasks(client: Client): Operation {
  return async (sequence) => {
    const result = (await client.callTool({ name: 'list_tasks', arguments: { limit: pageSize } })) as ToolResult;
    const items = result.structuredContent?.items;
    if (result.isError || !Array.isArray(items) || items.length !== pageSize) {
      throw new WrongAnswerError(`MCP list_tasks #${sequence}: expected ${pageSize} tasks, got ${describe(result)}`);
    }
  };
}

/**
 * create_task with the same body as the REST twin and an Allow title: not an error, status applied, the new task.
 * The write's workflow id (the result's `write`) goes to `sinks.workflowIds`.
 */
export function mcpCreateTask(client: Client, firstSequence: number, sinks: WriteSinks = {}): Operation {
  return async (sequence) => {
    const title = `ordinary mcp bench task ${firstSequence + sequence}`;
    const result = (await client.callTool({ name: 'create_task', arguments: { title, status: 'todo' } })) as ToolResult;
    const record = result.structuredContent?.record as { id?: unknown; title?: unknown } | undefined;
    if (result.isError || result.structuredContent?.status !== 'applied' || typeof record?.id !== 'string' || record.title !== title) {
      throw new WrongAnswerError(`MCP create_task #${sequence}: expected status applied, got ${describe(result)}`);
    }
    const write = result.structuredContent?.write;
    if (typeof write === 'string') sinks.workflowIds?.push(write);
  };
}


/**
 * Each pair's two kinds, MCP and its REST twin: list_tasks beside GET tasks, create_task beside POST task (both
 * writes Allow). Titles count from `firstSequence`, apart from the other phases'. A pair is measured in rounds
 * of its own, alternating which kind goes first: a read right after a gated write would share the machine with
 * the write's last steps (the workflow's completion in Temporal and the worker, the call log's row).
 */
export function mcpOperations(client: Client, apiUrl: string, token: string, firstSequence: number): { [P in McpPair]: Record<PairKind<P>, Operation> } {
  const restPost = gatedWrite(apiUrl, token, 'allow');
  const write = mcpCreateTask(client, firstSequence);
  return {
    read: { mcpRead: mcpListTasks(client), restRead: restTaskPage(apiUrl, token, 'REST GET tasks') },
    write: { mcpWrite: write, restWrite: (sequence) => restPost(firstSequence + sequence) },
  };
}
