// The layers of sheetrest, lowest first. An import points down this list or stays in its layer:
//
//   lib/                         the engine: pure, runtime-neutral, imports only lib/
//   server/log.ts, durable/, redis/
//                                the floor of the shell: the log, atomic files and locks, a Redis client
//   server/sources/              where rows live: source.ts (the contract), scope, memory, the
//                                registry, and one folder per source type (file/, google/) entered
//                                through its mod.ts; a type declares its settings with config/'s
//                                vocabulary (config/fields.ts, config/secret.ts), nothing more of config/
//   server/config/, auth.ts, quota/, idempotency/, connections.ts, shared-store.ts, http/, admin/
//                                the features, which see a source only through its entry module
//                                (connections.ts opens a connection's source by its type, for the
//                                start and the admin API; shared-store.ts opens what instances share)
//   server/start.ts, main.ts, cli.js, runtime/
//                                the composition root and the listeners: nothing below imports them
//   tools/                       the Google emulator, fixture replay: the server never imports them
//
// Checked by test/architecture.test.ts (run by `npm test`); `node tools/import-graph.ts` prints
// the figures (rooms, arrows, arrows back up, cycles).

// Outside server/sources/, a source is reached only through these: the contract, the scope of
// a request, the in-memory source, the registry, and each source type's entry module.
const SOURCE_ENTRIES = '^server/sources/(source|scope|memory|registry)[.]ts$|^server/sources/[^/]+/mod[.]ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'lib-imports-only-lib',
      comment: 'The engine runs on any runtime and in a browser: no node: module, no package, nothing from the shell.',
      severity: 'error',
      from: { path: '^lib/' },
      to: { pathNot: '^lib/' },
    },
    {
      name: 'no-cycles',
      comment: 'A cycle means a type or helper lives in the wrong module: move it to the module that owns it.',
      severity: 'error',
      from: { path: '^(lib|server|tools)/' },
      to: { circular: true },
    },
    {
      name: 'sources-below-features',
      comment:
        'A source serves rows; the features (HTTP pipeline, admin API, quota, Idempotency-Keys, the config loader) and the composition root sit on top of it. ' +
        "Allowed by name: config/fields.ts and config/secret.ts, the config's vocabulary (valibot building blocks and the Secret wrapper) with which a source type declares its own settings (server/sources/source-type.ts).",
      severity: 'error',
      from: { path: '^server/sources/' },
      to: {
        path: '^server/(http|admin|quota|idempotency|config|runtime)/|^server/(auth|connections|start|main|shared-store)[.]ts$',
        pathNot: '^server/config/(fields|secret)[.]ts$',
      },
    },
    {
      name: 'features-use-source-entries',
      comment: "Outside server/sources/, nothing reaches into a source type's own modules: add what is needed to its mod.ts, or move a shared helper down (durable/, redis/).",
      severity: 'error',
      from: { path: '^(server|tools)/', pathNot: '^server/sources/' },
      to: { path: '^server/sources/', pathNot: SOURCE_ENTRIES },
    },
    {
      name: 'floor-imports-nothing-above',
      comment: 'durable/ and redis/ are the floor: they hand out files, locks and a Redis client, and know no feature or source.',
      severity: 'error',
      from: { path: '^server/(durable|redis)/' },
      to: { path: '^server/(http|admin|quota|idempotency|config|sources|runtime)/|^server/(auth|connections|start|main)[.]ts$' },
    },
    {
      name: 'runtime-only-wires-http',
      comment: 'A runtime entry wires the fetch handler to a listener: it imports http/, the log and durable/, nothing else of the server.',
      severity: 'error',
      from: { path: '^server/runtime/' },
      to: { path: '^server/', pathNot: '^server/(runtime|http|durable)/|^server/log[.]ts$' },
    },
    {
      name: 'entry-on-top',
      comment: 'cli.js starts main.ts (the command line), which starts start.ts (the composition root) on a runtime listener: nothing they wire imports them back.',
      severity: 'error',
      from: { path: '^server/', pathNot: '^server/(start|main)[.]ts$|^server/cli[.]js$|^server/runtime/' },
      to: { path: '^server/(start|main)[.]ts$|^server/runtime/' },
    },
    {
      name: 'server-not-tools-tests-bench',
      comment: 'The server ships without tools/, test/ and bench/.',
      severity: 'error',
      from: { path: '^server/' },
      to: { path: '^(tools|test|bench)/' },
    },
  ],
  options: {
    // dependency-cruiser's default TypeScript parser needs TypeScript's JS API, which TypeScript 7
    // no longer has; swc reads .ts (type-only imports included) without a build.
    parser: 'swc',
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    // Dashboard files are served as static files to the browser, not imported by the server.
    exclude: { path: '^server/dashboard/' },
  },
};
