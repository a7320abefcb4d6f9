import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/** The SDK's own client, connected over Streamable HTTP with a bearer key, as an agent would be. */
export async function connectMcp(baseUrl: string, token: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'gatehouse-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}`, ...headers } },
  });
  await client.connect(transport);
  return client;
}

/** The text an agent reads from a tool result. */
export function textOf(result: unknown): string {
  return (((result as { content?: unknown }).content as { type: string; text?: string }[]) ?? []).map((part) => part.text ?? '').join('\n');
}
