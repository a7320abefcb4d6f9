import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { meetingNotesPromptName } from '../../api/mcp/prompts';
import { startHarness, type Harness, type TestOrganization } from '../support/harness';

let h: Harness;
let org: TestOrganization;


const transcript = `Ana: Let's wrap up. Ben, can you send the revised quote to Acme by Friday?
Ben: Yes, I'll do it. It's urgent, they sign next week.
Ana: And I'll book the venue for the offsite before the end of the month.`;

beforeAll(async () => {
  h = await startHarness();
  await h.listen();
  org = await h.createOrganization();
});
afterAll(() => h?.close());

describe('prompt: meeting notes to tasks', () => {
  it('is listed with its arguments: the transcript required, the title and date optional, each described', async () => {
    const mcp = await h.mcp(org.readWriteToken);
    expect(mcp.getServerCapabilities()?.prompts).toBeDefined();
    const { prompts } = await mcp.listPrompts();
    const prompt = prompts.find((p) => p.name === meetingNotesPromptName);
    expect(prompt).toMatchObject({ name: 'tasks_from_meeting_notes', title: 'Meeting notes to tasks' });
    expect(prompt!.description).toMatch(/create_meeting_ingest/);
    const args = Object.fromEntries((prompt!.arguments ?? []).map((a) => [a.name, a]));
    expect(Object.keys(args).sort()).toEqual(['meeting_date', 'meeting_title', 'transcript']);
    expect(args.transcript!.required).toBe(true);
    expect(args.meeting_title!.required).toBe(false);
    expect(args.meeting_date!.required).toBe(false);
    for (const arg of Object.values(args)) expect(arg.description, arg.name).toBeTruthy();
  });

  it('guides the agent from the transcript to one gated create_meeting_ingest call, with the transcript in it', async () => {
    const mcp = await h.mcp(org.readWriteToken);
    const result = await mcp.getPrompt({
      name: meetingNotesPromptName,
      arguments: { transcript, meeting_title: 'Weekly sales sync', meeting_date: '2025-03-14' },
    });
    expect(result.messages.length).toBeGreaterThan(0);
    expect(result.messages[0]!.role).toBe('user');
    const text = result.messages.map((m) => (m.content.type === 'text' ? m.content.text : '')).join('\n');
    expect(text).toContain(transcript);
    expect(text).toContain('Weekly sales sync');
    expect(text).toContain('2025-03-14');
    for (const tool of ['create_meeting_ingest', 'list_team_members', 'get_review_status']) expect(text).toContain(tool);
    expect(text).toMatch(/one create_meeting_ingest call/i);
    expect(text).toMatch(/held for a person|pending_review/);
  });

  it('names only fields the create_meeting_ingest tool takes', async () => {
    const mcp = await h.mcp(org.readWriteToken);
    const text = ((await mcp.getPrompt({ name: meetingNotesPromptName, arguments: { transcript } })).messages[0]!.content as { text: string }).text;
    const tool = (await mcp.listTools()).tools.find((t) => t.name === 'create_meeting_ingest')!;
    const properties = tool.inputSchema.properties as Record<string, { items?: { properties?: Record<string, unknown> } }>;
    for (const field of ['title', 'occurred_at', 'participants', 'source', 'transcript', 'tasks']) {
      expect(properties, field).toHaveProperty(field);
      expect(text, field).toContain(field);
    }
    const taskFields = Object.keys(properties.tasks!.items?.properties ?? {});
    for (const field of ['title', 'description', 'due_on', 'priority', 'assignee_id', 'project_id']) {
      expect(taskFields, field).toContain(field);
      expect(text, field).toContain(field);
    }
    expect(text).toMatch(/derive a short one/);
  });

  it('refuses a call without a transcript', async () => {
    const mcp = await h.mcp(org.readWriteToken);
    await expect(mcp.getPrompt({ name: meetingNotesPromptName, arguments: { meeting_title: 'No notes' } })).rejects.toThrow(/transcript/);
  });
});
