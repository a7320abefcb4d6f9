import { describe, expect, it } from 'vitest';
import { catalog } from '../../api/catalog';
import { isOfferedOn, pathParameters } from '../../api/catalog/operation';
import { allAbilities } from '../../domain/identity/abilities';
import { everyGatedWrite } from '../../domain/resources';

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

describe('the operation catalog', () => {
  it('has unique names and unique method + path pairs', () => {
    const names = catalog.map((op) => op.name);
    expect(new Set(names).size).toBe(names.length);
    const routes = catalog.map((op) => `${op.method} ${op.path}`);
    expect(new Set(routes).size).toBe(routes.length);
  });

  it('gives every operation open to API keys a unique MCP tool name, and people-only operations none', () => {
    const tools = catalog.filter((op) => op.tool).map((op) => op.tool!);
    expect(new Set(tools).size).toBe(tools.length);
    for (const op of catalog) {
      if (op.access.apiKey) expect(op.tool, op.name).toMatch(/^[a-z][a-z0-9_]{2,63}$/);
      else expect(op.tool, op.name).toBeUndefined();
    }
  });

  it('declares every gated write once: each write of the resources is one operation, and nothing else is gated', () => {
    // (A changeset is gated too, but holds the others' writes: it declares none of its own.)
    const written = catalog.flatMap((op) => (op.kind === 'gated_write' && !op.changeset ? [op.write] : []));
    expect(catalog.filter((op) => op.kind === 'gated_write' && op.changeset).map((op) => op.name)).toEqual(['changesets.submit']);
    expect(new Set(written).size).toBe(written.length);
    expect([...written].sort(byName)).toEqual([...everyGatedWrite].sort(byName));
  });

  it.each(catalog.map((op) => [op.name, op] as const))('%s declares a consistent posture', (_name, op) => {
    expect(op.name).toMatch(/^[a-z_]+\.[a-z_]+$/);
    expect(op.name.startsWith(`${op.family}.`)).toBe(true);
    expect(op.summary.length).toBeGreaterThan(0);
    expect(op.description.length).toBeGreaterThan(20);
    expect(op.access.apiKey || op.access.person).toBeTruthy();
    const ability = op.access.apiKey?.ability;
    if (ability) expect(allAbilities).toContain(ability);
    for (const parameter of pathParameters(op.path)) expect(Object.keys(op.input.shape)).toContain(parameter);

    switch (op.kind) {
      case 'read':
        // A read whose input is a secret carries it in a POST's body, never in the URL.
        expect(op.method).toBe(op.secretInBody ? 'POST' : 'GET');
        if (op.secretInBody) expect(op.interfaces).toEqual(['console']);
        // Open to every key only where the answer is about the key itself: who it is, the writes it submitted.
        if (ability === null) expect(['me.get', 'reviews.status', 'writes.get']).toContain(op.name);
        // The organization's own settings are for people in the console alone; its audit trail, for people in the
        // console and over REST with a personal token (their tooling exports it); so are its trust windows (never MCP:
        // agents do not see what lets their writes through).
        else if (ability === undefined) {
          expect(op.interfaces).toEqual(op.name === 'audit.events' || op.family === 'webhooks' ? undefined : op.family === 'trust_windows' ? ['rest', 'console'] : ['console']);
        }
        else expect(ability).toBe(`${op.family}.read`);
        if (op.list) expect(Object.keys(op.input.shape)).toEqual(expect.arrayContaining(['limit', 'cursor']));
        break;
      case 'gated_write':
        expect(op.method).not.toBe('GET');
        // An undo needs the write ability of the family of the write it undoes, which the gate checks as it proposes it;
        // a changeset is open to any read-write key, each item needing its own family's write ability.
        if (op.name === 'writes.undo' || op.changeset) expect(ability).toBeNull();
        else expect(ability).toBe(`${op.family}.write`);
        expect(op.access.person).toBeUndefined();
        expect(op.name).toBe(op.write.name);
        expect(op.input).toBe(op.write.input);
        break;
      case 'person_action':
        expect(['POST', 'PATCH', 'DELETE']).toContain(op.method);
        expect(op.access.apiKey).toBeUndefined();
        expect(op.access.person?.roles).not.toContain('member');
        break;
    }
  });

  it.each(catalog.map((op) => [op.name, op] as const))('%s is offered where its callers are', (_name, op) => {
    // REST and MCP are the agents' (and people's scripts'); the console takes people only.
    if (isOfferedOn(op, 'console')) expect(op.access.person).toBeDefined();
    if (isOfferedOn(op, 'mcp')) expect(op.access.apiKey).toBeDefined();
    if (!isOfferedOn(op, 'rest')) {
      expect(op.tool).toBeUndefined();
      expect(op.access.apiKey).toBeUndefined();
    }
    expect(['rest', 'mcp', 'console'].some((via) => isOfferedOn(op, via as 'rest'))).toBe(true);
  });
});
