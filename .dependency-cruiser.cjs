// The floor plan (docs/development.md), checked by `npm run lint`:
//   db/ (entities, ORM, database errors)  <  lib/ (shared domain code, ports, Temporal contracts)
//   <  api/, activities/, workflows/, workers/, media/  <  scripts/, bench/, test/
// A module may import from its own floor and the floors below it. Workflows are stricter: their
// code runs in Temporal's deterministic sandbox, so besides types they may import only the
// Temporal workflow SDK, other workflow code and the pure contracts in lib/temporal/.
/** lib/ modules outside lib/temporal/ that workflow code may import: free of I/O and clocks. */
const PURE_LIB_MODULES = '^lib/webhooks/retry-schedule\\.ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'lib-imports-nothing-above',
      comment:
        'lib/ is the shared floor: it may not import api/, workflows/, activities/, workers/, scripts/, bench/ or test/.',
      severity: 'error',
      from: { path: '^lib/' },
      to: { path: '^(api|workflows|activities|workers|media|scripts|bench|test)/' },
    },
    {
      name: 'db-imports-only-db',
      comment:
        'db/ is the basement: entities, ORM set-up and database-error classification import nothing of the floors above.',
      severity: 'error',
      from: { path: '^db/' },
      to: { path: '^(api|lib|workflows|activities|workers|media|scripts|bench|test)/' },
    },
    {
      name: 'workers-not-api',
      comment: 'Worker processes run without the HTTP API: workers/ imports nothing from api/.',
      severity: 'error',
      from: { path: '^workers/' },
      to: { path: '^api/' },
    },
    {
      name: 'media-stands-beside-the-service',
      comment:
        'The media gateway is a process of its own, built from lib/ and db/: it imports nothing of the API, the workers, their activities or workflows, and none of them imports it.',
      severity: 'error',
      from: { path: '^media/' },
      to: { path: '^(api|workers|activities|workflows)/' },
    },
    {
      name: 'service-parts-not-media',
      comment:
        'The API, the workers, activities and workflows reach the media gateway over its control API only.',
      severity: 'error',
      from: { path: '^(api|workers|activities|workflows)/' },
      to: { path: '^media/' },
    },
    {
      name: 'activities-not-api-or-workers',
      comment: 'Activities are built from lib/ and db/; the API and the worker processes are above them.',
      severity: 'error',
      from: { path: '^activities/' },
      to: { path: '^(api|workers|workflows)/' },
    },
    {
      name: 'api-not-workers-or-activities',
      comment: 'The API starts workflows by their contracts (lib/temporal/); it never runs worker code.',
      severity: 'error',
      from: { path: '^api/' },
      to: { path: '^(workers|activities|workflows)/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'workflows-are-deterministic',
      comment:
        'Workflow code may import (other than types) only @temporalio/workflow, @temporalio/common, other workflow code and lib/temporal/.',
      severity: 'error',
      from: { path: '^workflows/' },
      to: {
        dependencyTypesNot: ['type-only'],
        pathNot: ['^workflows/', '^lib/temporal/', PURE_LIB_MODULES, '@temporalio/(workflow|common)/'],
      },
    },
    {
      name: 'workflow-imports-stay-pure',
      comment:
        'lib/temporal/ and the pure lib modules are imported by workflow code: only types, each other and the Temporal SDK.',
      severity: 'error',
      from: { path: ['^lib/temporal/', PURE_LIB_MODULES] },
      to: {
        dependencyTypesNot: ['type-only'],
        pathNot: ['^lib/temporal/', PURE_LIB_MODULES, '@temporalio/(workflow|common)/'],
      },
    },
    {
      name: 'client-stands-alone',
      comment:
        'clients/typescript is a package for integrators: it imports its own files and dependencies, nothing of the service.',
      severity: 'error',
      from: { path: '^clients/' },
      to: { path: '^(api|lib|db|workflows|activities|workers|media|scripts|bench|test)/' },
    },
    {
      name: 'dashboard-is-browser-code',
      comment:
        'dashboard/ is the front end, bundled for the browser: it talks to the server over HTTP only and imports no server code.',
      severity: 'error',
      from: { path: '^dashboard/' },
      to: { path: '^(api|lib|db|workflows|activities|workers|media|scripts|bench|test)/' },
    },
    {
      name: 'no-unresolvable',
      comment: 'An import that resolves to nothing is a typo or a missing package.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|\\.data|db/migrations)/' },
    // swc parses TypeScript (with `import type` kept apart); the typescript 7 compiler has no JS API yet.
    parser: 'swc',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
  },
};
