// The layering of .dependency-cruiser.cjs holds: lib/ imports only lib/, no import cycle in lib/
// server/ tools/, a source never imports http/ or admin/, a feature reaches a source only through
// its entry module, and durable/ redis/ runtime/ import nothing above them. A failure names each
// broken import, e.g. "floor-imports-nothing-above: server/redis/client.ts -> server/config/config.ts".
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** dependency-cruiser is a devDependency: a checkout installed without it skips this test, saying so. */
async function loadCruiser(): Promise<typeof import('dependency-cruiser') | undefined> {
  try {
    return await import('dependency-cruiser');
  } catch {
    return undefined;
  }
}

const cruiser = await loadCruiser();

test('every import follows the layering of .dependency-cruiser.cjs', { skip: cruiser ? false : 'dependency-cruiser is not installed (npm install installs the devDependencies)' }, async () => {
  const config = createRequire(import.meta.url)('../.dependency-cruiser.cjs');
  const result = await cruiser!.cruise(['lib', 'server', 'tools'], {
    ...config.options,
    baseDir: ROOT,
    validate: true,
    ruleSet: { forbidden: config.forbidden },
    outputType: 'json',
  });
  const report = typeof result.output === 'string' ? JSON.parse(result.output) : result.output;
  // The check means something only if it saw the code: swc followed the .ts imports.
  assert.ok(report.summary.totalCruised > 150, `only ${report.summary.totalCruised} modules cruised`);
  assert.ok(report.summary.totalDependenciesCruised > 500, `only ${report.summary.totalDependenciesCruised} imports cruised`);
  const broken = report.summary.violations.map((violation: { rule: { name: string }; from: string; to: string; cycle?: { name: string }[] }) =>
    violation.cycle && violation.cycle.length > 0
      ? `${violation.rule.name}: ${violation.from} -> ${violation.cycle.map((step) => step.name).join(' -> ')}`
      : `${violation.rule.name}: ${violation.from} -> ${violation.to}`,
  );
  assert.deepEqual(broken, [], `imports that break the layering:\n  ${broken.join('\n  ')}`);
});
