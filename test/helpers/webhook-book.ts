// The webhook tests that spawn the real server (delivery.test.ts, journaled.test.ts) start it on
// the same thing: a workbook with an empty `People` tab (Id, Name) and a config file serving it
// as `book`, with one webhook `receiver` posting to `url`, loopback allowed and retries fast.
//   const args = await webhookBook(dir, hook.url, { env: 'HOOK_SECRET' }, 200);
//   const child = await spawnServer(t, args, { HOOK_SECRET: SECRET });
import { writeFile } from 'node:fs/promises';
import { writeXlsx, type TempDir } from './http.ts';

/** Writes `book.xlsx` and `sheetrest.json` into `dir`; answers the CLI arguments that serve them. */
export async function webhookBook(dir: TempDir, url: string, secret: string | { env: string }, retryCapMs: number): Promise<string[]> {
  await writeXlsx(dir.path('book.xlsx'), 'People', [['Id', 'Name']]);
  const config = dir.path('sheetrest.json');
  await writeFile(config, JSON.stringify({
    stateDir: 'state',
    log: { level: 'warn' },
    webhooks: { allowPrivateTargets: true, retryBaseMs: 10, retryCapMs, timeoutMs: 2_000 },
    connections: [{ id: 'book', source: { type: 'file', path: 'book.xlsx' }, webhooks: [{ name: 'receiver', url, secret }] }],
  }));
  return ['--config', config];
}
