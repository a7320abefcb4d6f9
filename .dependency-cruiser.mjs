// What may import what: the layer rules of the README's "Architecture", checked by test/architecture.test.ts
// (and by `npx depcruise --config .dependency-cruiser.mjs api workflows activities worker domain data-import db
// policy metrics runtime cli web`). Type-only imports count: a layer that names another's types depends on it too, except
// where a rule says otherwise.

const ours = '^(api|workflows|activities|worker|domain|data-import|db|policy|metrics|runtime|cli|bench|deploy|test|web)/';
const runtimeOnly = { dependencyTypesNot: ['type-only'] };

/** A concern of the domain may import only the concerns listed (and itself). */
const domainLayer = (concern, mayImport, why) => ({
  name: `domain-${concern}`,
  comment: why,
  severity: 'error',
  from: { path: `^domain/${concern}/` },
  to: { path: '^domain/', pathNot: [`^domain/(${[concern, ...mayImport].join('|')})/`] },
});

export default {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'No module imports itself through others, type-only imports included.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },

    // The domain: business logic, free of transports, Temporal and the processes that host it.
    {
      name: 'domain-is-the-core',
      comment: 'domain/ imports only domain/, db/ and policy/ of ours (never api, workflows, activities, worker, runtime, cli, data-import).',
      severity: 'error',
      from: { path: '^domain/' },
      to: { path: ours, pathNot: '^(domain|db|policy)/' },
    },
    {
      name: 'domain-has-no-transport',
      comment: 'domain/ knows no HTTP server, MCP or Temporal.',
      severity: 'error',
      from: { path: '^domain/' },
      to: { path: 'node_modules/(fastify|@fastify|@modelcontextprotocol|@temporalio)/' },
    },
    {
      name: 'domain-files-live-in-a-concern',
      comment: 'Every file of domain/ belongs to one of its concerns: kit, audit, policy-sets, gate, identity, resources, usage or notify.',
      severity: 'error',
      from: {},
      to: { path: '^domain/', pathNot: '^domain/(kit|audit|policy-sets|gate|identity|resources|usage|notify)/' },
    },
    domainLayer('kit', [], 'kit/ (errors, ids, fields, pagination, queries, rows) is what every concern shares: it imports none of them.'),
    domainLayer('audit', ['kit'], 'audit/ (the trail, its hash chain and the ledger export) imports only kit/: every concern records into it.'),
    domainLayer('policy-sets', ['kit', 'audit'], "policy-sets/ (the organization's Cedar policy sets: storage, versions, simulation, shadow, suggestions) imports kit/ and audit/."),
    domainLayer('gate', ['kit', 'audit', 'policy-sets'], 'gate/ (deciding, applying, idempotency and reviews) imports kit/, audit/ and policy-sets/.'),
    domainLayer('identity', ['kit', 'audit', 'policy-sets'], 'identity/ imports kit/, audit/ and policy-sets/ (a new organization gets the default policy; key changes are audited), never gate/.'),
    domainLayer('resources', ['kit', 'audit', 'gate'], 'resources/ (the families and their gated writes) import kit/, audit/ and gate/, never each other through identity or usage.'),
    domainLayer('usage', ['kit', 'gate', 'identity'], 'usage/ (limits, call log, MCP tasks) imports kit/, gate/ and identity/.'),
    domainLayer('notify', ['kit', 'audit', 'gate', 'identity'], 'notify/ (webhooks, reviewer notifications, escalation) imports kit/, audit/, gate/ and identity/.'),

    // Temporal: the api starts workflows, the worker runs them, activities do the work.
    {
      name: 'workflows-are-pure',
      comment:
        'Workflows run in a deterministic sandbox: at run time they import only @temporalio/workflow, @temporalio/common (the SDK bundles it into every sandbox; search attribute keys come from it), their own folder and the gate contract (which imports nothing at run time).',
      severity: 'error',
      from: { path: '^workflows/' },
      to: { ...runtimeOnly, pathNot: ['^workflows/', '^domain/gate/contract\\.ts$', 'node_modules/@temporalio/(workflow|common)/'] },
    },
    {
      name: 'the-contract-is-pure',
      comment: 'domain/gate/contract.ts is bundled into the workflow sandbox: it imports types only.',
      severity: 'error',
      from: { path: '^domain/gate/contract\\.ts$' },
      to: runtimeOnly,
    },
    {
      name: 'activities-do-not-reach-up',
      comment: 'activities/ import no api, workflow or worker code.',
      severity: 'error',
      from: { path: '^activities/' },
      to: { path: '^(api|workflows|worker|runtime|cli)/' },
    },
    {
      name: 'api-starts-workflows-only',
      comment: 'api/ never imports activities or the worker, and takes from workflows/ only the messages (and types).',
      severity: 'error',
      from: { path: '^api/' },
      to: { path: '^(activities|worker|runtime|cli|data-import)/' },
    },
    {
      name: 'api-takes-workflow-messages',
      comment: 'From workflows/, the api imports the message definitions at run time, the rest by type only.',
      severity: 'error',
      from: { path: '^api/' },
      to: { ...runtimeOnly, path: '^workflows/', pathNot: '^workflows/messages\\.ts$' },
    },

    // Inside the api: the catalog, and the interfaces that translate to it.
    {
      name: 'the-catalog-knows-no-interface',
      comment: 'api/catalog/ (the operations and the call pipeline) imports none of REST, MCP and the console.',
      severity: 'error',
      from: { path: '^api/catalog/' },
      to: { path: '^api/(rest|mcp|console)/' },
    },
    {
      name: 'rest-knows-no-mcp',
      comment: 'The REST adapter imports nothing of the MCP adapter or the console.',
      severity: 'error',
      from: { path: '^api/rest/' },
      to: { path: '^api/(mcp|console)/' },
    },
    {
      name: 'mcp-knows-no-rest',
      comment: 'The MCP adapter imports from REST only what every HTTP answer shares (rest/http.ts: errors, rate-limit headers), and nothing of the console.',
      severity: 'error',
      from: { path: '^api/mcp/' },
      to: { path: '^api/(rest|console)/', pathNot: '^api/rest/http\\.ts$' },
    },
    {
      name: 'the-console-speaks-rest',
      comment: "The console's API is the REST dialect with a session (rest/routes.ts) and the same HTTP answers (rest/http.ts); it knows nothing of MCP.",
      severity: 'error',
      from: { path: '^api/console/' },
      to: { path: '^api/(rest|mcp)/', pathNot: '^api/rest/(routes|http)\\.ts$' },
    },
    {
      name: 'the-console-door',
      comment:
        "Besides the pipeline, the console reaches the domain only for its door: signing in and out, sessions, set-password links and one's passkeys (identity), what changed for live pages (usage/changes.ts), and the shared kit.",
      severity: 'error',
      from: { path: '^api/console/' },
      to: {
        ...runtimeOnly,
        path: '^domain/',
        pathNot: ['^domain/kit/', '^domain/identity/(actors|sessions|password-links|passwords|tokens|passkeys|passkey-sign-in)\\.ts$', '^domain/usage/changes\\.ts$'],
      },
    },
    {
      name: 'the-console-page-stands-alone',
      comment: "web/ runs in the browser: it talks to the service over HTTP (/console/api) and imports none of the server's code.",
      severity: 'error',
      from: { path: '^web/' },
      to: { path: ours, pathNot: '^web/' },
    },
    {
      name: 'console-features-stand-alone',
      comment: 'A feature of the console (web/src/features/<feature>/) imports no other feature: what two features share lives in web/src/lib/.',
      severity: 'error',
      from: { path: '^web/src/features/([^/]+)/' },
      to: { path: '^web/src/features/', pathNot: '^web/src/features/$1/' },
    },
    {
      name: 'interfaces-call-the-pipeline',
      comment: 'REST and MCP reach the domain through the catalog and its pipeline; they read the domain only for types and rendering helpers.',
      severity: 'error',
      from: { path: '^api/(rest|mcp)/' },
      to: {
        ...runtimeOnly,
        path: '^domain/',
        pathNot: ['^domain/kit/', '^domain/identity/(abilities|actors)\\.ts$', '^domain/gate/remediation\\.ts$', '^domain/usage/mcp-tasks\\.ts$', '^domain/usage/mcp-clients\\.ts$'],
      },
    },

    // Leaves and tools.
    {
      name: 'leaves',
      comment: 'db/ (the connection, migrations), policy/ (the Cedar engine) and metrics/ (the Prometheus metrics) import nothing of ours.',
      severity: 'error',
      from: { path: '^(db|policy|metrics)/' },
      to: { path: ours, pathNot: '^(db|policy|metrics)/' },
    },
    {
      name: 'data-import-is-outside-the-core',
      comment: 'data-import/ (import, seed) writes through the domain and the database; nothing of the service imports it but the CLI, dev mode and the benchmark.',
      severity: 'error',
      from: { path: '^(api|workflows|activities|worker|domain|db|policy)/' },
      to: { path: '^data-import/' },
    },
    {
      name: 'tests-and-bench-are-not-imported',
      comment: 'Nothing of the service imports test/, bench/ or the deployment rehearsal (deploy/rehearsal/), which run the service from outside.',
      severity: 'error',
      from: { pathNot: '^(test|bench|deploy/rehearsal)/' },
      to: { path: '^(test|bench|deploy/rehearsal)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js', '.json'] },
    exclude: { path: '^(scratch|web/dist)/' },
  },
};
