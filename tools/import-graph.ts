// `node tools/import-graph.ts [COMMIT [NAMES_AT]]`: the shape of the import graph of lib/, server/ and
// tools/, as issue 23's review measured it: rooms, arrows between rooms, arrows that point back
// up (against the layering of .dependency-cruiser.cjs) and import cycles, each listed.
//
//   node tools/import-graph.ts            the working tree
//   node tools/import-graph.ts 5af5af8 d175f52
//                                         a commit, read from git: its paths are mapped to their
//                                         names at NAMES_AT (default HEAD; git's rename detection)
//                                         before the rules apply. For the layout before issue 23,
//                                         name the move-only commit d175f52: mapped to HEAD, a file
//                                         later moved to a higher layer to fix its imports
//                                         (server/redis/mod.ts -> server/shared-store.ts) would
//                                         hide what it broke where it was.
//
// A room is a folder (server/http/, lib/openapi/); each file directly in lib/, server/ or tools/
// is a room of its own (lib/table.ts). An arrow is a pair of rooms with at least one import from
// the first into the second. A cycle is a set of two or more modules that reach one another
// through imports (a strongly connected component), so three import loops through the same
// modules count once. test/architecture.test.ts fails on any of these; this prints the figures.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { cruise } from 'dependency-cruiser';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SCANNED = ['lib', 'server', 'tools'];
const OURS = /^(lib|server|tools)\//;

interface PathRule {
  readonly name: string;
  readonly from: { path?: string; pathNot?: string };
  readonly to: { path?: string; pathNot?: string; circular?: boolean };
}

interface Graph {
  /** Every module of lib/ server/ tools/ and the modules of lib/ server/ tools/ it imports. */
  readonly imports: Map<string, string[]>;
}

async function readGraph(baseDir: string, options: object): Promise<Graph> {
  const result = await cruise(SCANNED, { ...options, baseDir, outputType: 'json' });
  const report = typeof result.output === 'string' ? JSON.parse(result.output) : result.output;
  const imports = new Map<string, string[]>();
  for (const module of report.modules as { source: string; dependencies: { resolved: string }[] }[]) {
    if (!OURS.test(module.source)) continue;
    imports.set(module.source, [...new Set(module.dependencies.map((dependency) => dependency.resolved).filter((path) => OURS.test(path)))]);
  }
  return { imports };
}

/** `server/http/app.ts` -> `server/http/`; `server/start.ts` -> itself. */
function roomOf(path: string): string {
  const parts = path.split('/');
  return parts.length === 2 ? path : `${parts.slice(0, -1).join('/')}/`;
}

/** Whether an import breaks one of the path rules (every rule but the cycle rule, counted apart). */
function brokenRules(rules: readonly PathRule[], from: string, to: string): string[] {
  const matches = (pattern: string | undefined, path: string) => pattern === undefined || new RegExp(pattern).test(path);
  const misses = (pattern: string | undefined, path: string) => pattern === undefined || !new RegExp(pattern).test(path);
  return rules
    .filter((rule) => matches(rule.from.path, from) && misses(rule.from.pathNot, from) && matches(rule.to.path, to) && misses(rule.to.pathNot, to))
    .map((rule) => rule.name);
}

/** Tarjan's strongly connected components with more than one module: the import cycles. */
function cycles(imports: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (module: string) => {
    index.set(module, index.size);
    low.set(module, index.get(module)!);
    stack.push(module);
    onStack.add(module);
    for (const next of imports.get(module) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(module, Math.min(low.get(module)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(module, Math.min(low.get(module)!, index.get(next)!));
      }
    }
    if (low.get(module) !== index.get(module)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== module);
    if (component.length > 1) found.push(component.sort());
  };
  for (const module of [...imports.keys()].sort()) if (!index.has(module)) visit(module);
  return found.sort((a, b) => a[0].localeCompare(b[0]));
}

/** The name at `namesAt` of each path of `commit` that git sees as renamed in between. */
function renamesBetween(commit: string, namesAt: string): Map<string, string> {
  const diff = execFileSync('git', ['diff', '--name-status', '--find-renames', commit, namesAt, '--', ...SCANNED], { cwd: ROOT, encoding: 'utf8' });
  const renames = new Map<string, string>();
  for (const line of diff.split('\n')) {
    const [status, before, after] = line.split('\t');
    if (status?.startsWith('R')) renames.set(before, after);
  }
  return renames;
}

const config = createRequire(import.meta.url)('../.dependency-cruiser.cjs');
const rules: PathRule[] = config.forbidden.filter((rule: PathRule) => rule.to.circular === undefined);
const [commit, namesAt = 'HEAD'] = process.argv.slice(2);

let graph: Graph;
let todaysName = (path: string) => path;
if (commit === undefined) {
  graph = await readGraph(ROOT, config.options);
} else {
  const folder = mkdtempSync(join(tmpdir(), 'import-graph-'));
  try {
    // test/ comes along so that tools/ importing test helpers resolves as it did at the commit.
    execFileSync('sh', ['-c', `git archive "$1" lib server tools test | tar -x -C "$2"`, 'sh', commit, folder], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    graph = await readGraph(folder, config.options);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
  const renames = renamesBetween(commit, namesAt);
  todaysName = (path) => renames.get(path) ?? path;
}

const arrows = new Set<string>();
// By room pair; a pair of one room with itself is a room that mixes layers (server/shared/ once
// held the Redis client and, above it, Google's and the admin API's state).
const upward = new Map<string, Set<string>>();
for (const [from, targets] of graph.imports) {
  for (const to of targets) {
    const arrow = `${roomOf(from)} -> ${roomOf(to)}`;
    if (roomOf(from) !== roomOf(to)) arrows.add(arrow);
    const broken = brokenRules(rules, todaysName(from), todaysName(to));
    if (broken.length === 0) continue;
    if (!upward.has(arrow)) upward.set(arrow, new Set());
    upward.get(arrow)!.add(`${from} -> ${to} (${broken.join(', ')})`);
  }
}
const rooms = new Set([...graph.imports.keys()].map(roomOf));
const found = cycles(graph.imports);
const importCount = [...graph.imports.values()].reduce((sum, targets) => sum + targets.length, 0);

console.log(`import graph of ${SCANNED.join('/ ')}/ at ${commit === undefined ? 'the working tree' : `${commit}, judged by its names at ${namesAt}`}`);
console.log(`  modules ${graph.imports.size}, imports between them ${importCount}`);
const brokenImports = [...upward.values()].reduce((sum, imports) => sum + imports.size, 0);
console.log(`  rooms ${rooms.size}, arrows between rooms ${arrows.size}, arrows back up ${upward.size} (${brokenImports} imports), import cycles ${found.length}`);
if (upward.size > 0) console.log('\narrows back up (the imports that break a rule of .dependency-cruiser.cjs):');
for (const [arrow, imports] of [...upward].sort()) {
  console.log(`  ${arrow}`);
  for (const line of [...imports].sort()) console.log(`      ${line}`);
}
if (found.length > 0) console.log('\nimport cycles (modules that reach one another):');
for (const component of found) console.log(`  ${component.join('  ')}`);
