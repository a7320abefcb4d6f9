import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

// Prompts: ready-made instructions a person picks in their MCP client (a slash command, a menu entry) to
// start a piece of work. Arguments reach the server as strings.

export const meetingNotesPromptName = 'tasks_from_meeting_notes';

const meetingNotesArgs = {
  transcript: z
    .string()
    .trim()
    .min(1)
    .max(500_000)
    .describe('The meeting transcript or notes, as plain text (up to 500,000 characters)'),
  meeting_title: z
    .string()
    .trim()
    .max(300)
    .optional()
    .describe('What the meeting was, e.g. "Weekly sales sync"; derived from the transcript when left out'),
  meeting_date: z
    .string()
    .trim()
    .max(100)
    .optional()
    .describe('When the meeting took place: a day (YYYY-MM-DD) or an RFC 3339 time; due dates such as "by Friday" are counted from it'),
};

function meetingNotesText(args: { transcript: string; meeting_title?: string; meeting_date?: string }): string {
  const title = args.meeting_title
    ? `The meeting: "${args.meeting_title}". Use this as the ingest's title.`
    : 'No meeting title was given: derive a short one from the transcript (e.g. "Weekly sales sync").';
  const date = args.meeting_date
    ? `It took place on ${args.meeting_date}. Use it for occurred_at (RFC 3339; a bare day becomes that day at 00:00:00Z) and to resolve relative deadlines.`
    : 'No meeting date was given: take it from the transcript if it says; otherwise ask the user rather than guessing, since occurred_at is required and relative deadlines depend on it.';

  return `Turn the meeting transcript below into tasks in Gatehouse, with one create_meeting_ingest tool call.

${title}
${date}

1. Find the action items. Keep only concrete work somebody agreed to do, with a clear outcome ("Send the revised quote to Acme"). Leave out discussion, decisions that need no follow-up, and vague ideas ("we should think about pricing someday"). Merge items that say the same thing. Never invent items the transcript does not contain.
2. Find the owners. Call list_team_members for the roster and set assignee_id to the id of the member the transcript names as owner (match on name or email). If nobody is named, or the name matches nobody or more than one member, leave assignee_id out and name the owner in the description instead.
3. Describe each item as a task:
   - title: a short imperative summary, at most 500 characters.
   - description (optional): the context a person needs later: why, acceptance criteria, who asked, a short quote.
   - due_on (optional): YYYY-MM-DD, only when the transcript gives a date or a deadline you can resolve from the meeting date ("by Friday", "end of next week"). Do not make one up.
   - priority: low, normal, high or urgent. Use normal unless the transcript says the item is urgent, blocking, or can wait.
   - project_id (optional): only when the transcript names a project you find with list_projects.
   Leave status out (new tasks start as todo).
4. Send everything in ONE create_meeting_ingest call, with: title; occurred_at (RFC 3339); participants (the names of the people present); source (optional, where the transcript came from, e.g. zoom, teams, notes); transcript (the full transcript below, verbatim: do not summarize or shorten it); tasks (all the items, 1 to 100). Do not call create_task item by item: the ingest creates the tasks together, or none of them.
5. The call is a gated write: the organization's policy decides what happens to it.
   - status "applied": the ingest and its tasks exist; tell the user what was created, with each task's assignee and due date.
   - status "pending_review": the whole batch is held for a person to approve; nothing is written yet. Tell the user, with the review id, and follow it with get_review_status (review_id). Do not send the batch again.
   - an error result saying it was denied: read the reason and the rule quoted. Change the batch if a smaller or different one would be allowed, or tell the user and ask a person.
   - an error naming a field: fix that field and try again.

If the transcript holds no action items, say so and do not call the tool. If create_meeting_ingest is not among your tools, this key may not write tasks: list the action items for the user instead.

<transcript>
${args.transcript}
</transcript>`;
}

/** The MCP prompts of the server; the same for every key (the tools a key sees decide what it can do). */
export function registerPrompts(server: McpServer): void {
  server.registerPrompt(
    meetingNotesPromptName,
    {
      title: 'Meeting notes to tasks',
      description:
        'Turn a meeting transcript into tasks: extract the action items, match owners to the team roster, and create them all in one gated create_meeting_ingest call that keeps the transcript.',
      argsSchema: meetingNotesArgs,
    },
    (args) => ({
      description: `Tasks from the meeting${args.meeting_title ? ` "${args.meeting_title}"` : ''}`,
      messages: [{ role: 'user', content: { type: 'text', text: meetingNotesText(args) } }],
    }),
  );
}
