import { describe, expect, it } from 'vitest';
import { defaultPolicySource } from '../../domain/policy-sets/versions';
import { compilePolicySet, evaluatePolicy, PolicyParseError, preparedSlots, type PolicyRequest } from '../../policy/engine';

const request = (overrides: Partial<PolicyRequest> = {}): PolicyRequest => ({
  principal: { type: 'ApiKey', id: 'key_1', attrs: { label: 'agent', access: 'read_write', abilities: ['tasks.write'] } },
  action: 'tasks.create',
  resource: { type: 'Task', id: 'new', attrs: { title: 'Write the report', priority: 'normal', tags: [], description: null } },
  context: { interface: 'rest' },
  ...overrides,
});

describe('the three-way decision', () => {
  const policies = compilePolicySet(`
    @id("allow") @reason("Allowed") permit (principal, action, resource);
    @id("urgent") @decision("review") @reason("Urgent work is reviewed")
    permit (principal, action, resource) when { resource.priority == "urgent" };
    @id("no-mcp-deletes") @reason("Agents on MCP may not delete")
    forbid (principal, action == Action::"tasks.delete", resource) when { context.interface == "mcp" };
  `);

  it('a matching permit allows', () => {
    expect(evaluatePolicy(policies, request())).toMatchObject({ decision: 'allow', policyIds: ['allow'], reason: 'Allowed' });
  });

  it('a matching permit marked @decision("review") holds for review, over a plain permit', () => {
    const held = evaluatePolicy(policies, request({ resource: { type: 'Task', id: 'new', attrs: { title: 'x', priority: 'urgent' } } }));
    expect(held).toMatchObject({ decision: 'review', policyIds: ['urgent'], reason: 'Urgent work is reviewed' });
  });

  it('a matching forbid denies, over any permit', () => {
    const denied = evaluatePolicy(policies, request({ action: 'tasks.delete', context: { interface: 'mcp' } }));
    expect(denied).toMatchObject({ decision: 'deny', policyIds: ['no-mcp-deletes'], reason: 'Agents on MCP may not delete' });
  });

  it('a policy set parsed once is evaluated by name, and again correctly after its name went to other sets', () => {
    const first = compilePolicySet('@id("first") @reason("The first set") permit (principal, action, resource);');
    expect(evaluatePolicy(first, request())).toMatchObject({ decision: 'allow', policyIds: ['first'] });
    // Enough other sets to reuse every name Cedar holds sets under, the first set's among them.
    for (let n = 0; n < preparedSlots; n++) {
      const other = compilePolicySet(`@id("other-${n}") forbid (principal, action, resource);`);
      expect(evaluatePolicy(other, request()).policyIds).toEqual([`other-${n}`]);
    }
    expect(evaluatePolicy(first, request())).toMatchObject({ decision: 'allow', policyIds: ['first'], reason: 'The first set' });
    expect(evaluatePolicy(policies, request({ action: 'tasks.delete', context: { interface: 'mcp' } })).decision).toBe('deny');
  });

  it('nothing permitting denies', () => {
    const none = compilePolicySet('@id("only-reads") permit (principal, action == Action::"tasks.list", resource);');
    expect(evaluatePolicy(none, request())).toMatchObject({ decision: 'deny', policyIds: [], reason: 'No policy permits tasks.create' });
  });

  it('fails closed: a forbid that cannot be evaluated (a missing attribute) denies, and says why', () => {
    const set = compilePolicySet(`
      @id("allow") permit (principal, action, resource);
      @id("done-stays-done") @reason("Done tasks stay done") forbid (principal, action, resource) when { context.before.status == "done" };
    `);
    const result = evaluatePolicy(set, request());
    expect(result).toMatchObject({ decision: 'deny', policyIds: ['done-stays-done'] });
    expect(result.reason).toContain('Done tasks stay done (the policy could not be evaluated');
    expect(result.errors[0]).toMatch(/^done-stays-done: .*before/);
  });

  it('fails closed: a review rule that cannot be evaluated holds the write', () => {
    const set = compilePolicySet(`
      @id("allow") permit (principal, action, resource);
      @id("big-change") @decision("review") permit (principal, action, resource) when { context.changes.amount > 100 };
    `);
    expect(evaluatePolicy(set, request())).toMatchObject({ decision: 'review', policyIds: ['big-change'] });
  });

  it('a permit that cannot be evaluated simply does not permit', () => {
    const set = compilePolicySet('@id("odd") permit (principal, action, resource) when { resource.missing == 1 };');
    expect(evaluatePolicy(set, request())).toMatchObject({ decision: 'deny', policyIds: [] });
  });

  it('guards with `has` keep rules that need optional attributes from erroring', () => {
    const set = compilePolicySet(`
      @id("allow") permit (principal, action, resource);
      @id("done-stays-done") forbid (principal, action, resource) when { context has before && context.before.status == "done" };
    `);
    expect(evaluatePolicy(set, request())).toMatchObject({ decision: 'allow', errors: [] });
  });

  it('unnamed policies get positional ids', () => {
    const set = compilePolicySet('permit (principal, action, resource);');
    expect(evaluatePolicy(set, request()).policyIds).toEqual(['policy1']);
  });
});

describe('parsing', () => {
  it("refuses a policy that does not parse, with Cedar's message and the place", () => {
    expect(() => compilePolicySet('permit (principal, action, resource) when { resource.x == };')).toThrowError(
      /unexpected token `}` at line 1, column 59/,
    );
  });

  it.each([
    ['duplicate ids', '@id("a") permit (principal, action, resource); @id("a") permit (principal, action, resource);', /two policies have the id "a"/],
    ['review on a forbid', '@decision("review") forbid (principal, action, resource);', /belongs on a permit/],
    ['an unknown decision', '@decision("maybe") permit (principal, action, resource);', /may only be "review"/],
  ])('refuses %s', (_label, source, message) => {
    expect(() => compilePolicySet(source)).toThrowError(PolicyParseError);
    expect(() => compilePolicySet(source)).toThrowError(message);
  });
});

describe('the default policy set', () => {
  const defaults = compilePolicySet(defaultPolicySource);

  it('allows ordinary writes by read-write keys', () => {
    expect(evaluatePolicy(defaults, request()).decision).toBe('allow');
  });

  it('holds deletes for review', () => {
    for (const action of ['tasks.delete', 'projects.delete', 'calendar.delete']) {
      expect(evaluatePolicy(defaults, request({ action })).decision).toBe('review');
    }
  });

  it('holds double-bookings and large meeting batches for review', () => {
    expect(evaluatePolicy(defaults, request({ action: 'calendar.book', context: { interface: 'rest', double_booked: true } }))).toMatchObject({
      decision: 'review',
      policyIds: ['review-double-bookings'],
    });
    expect(evaluatePolicy(defaults, request({ action: 'calendar.book', context: { interface: 'rest', double_booked: false } })).decision).toBe('allow');
    const batch = (n: number) =>
      request({ action: 'meeting_ingests.create', resource: { type: 'MeetingIngest', id: 'new', attrs: { title: 'Sync', task_count: n } } });
    expect(evaluatePolicy(defaults, batch(21)).decision).toBe('review');
    expect(evaluatePolicy(defaults, batch(20)).decision).toBe('allow');
  });

  it('denies writes by read-only keys, should one reach it', () => {
    const readOnly = request({ principal: { type: 'ApiKey', id: 'k', attrs: { label: 'r', access: 'read', abilities: [] } } });
    expect(evaluatePolicy(defaults, readOnly)).toMatchObject({ decision: 'deny', policyIds: ['read-only-keys-never-write'] });
  });
});
