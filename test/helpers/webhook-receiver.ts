// A webhook receiver on loopback for the webhooks' tests: `const target = await receiver(t)` ->
// `{url, got}`, answering every POST `status` (204) and noting its event id, body and signature
// header in `got`; closed (its connections too) after the test.
import { createServer } from 'node:http';

export interface Received {
  readonly id: string;
  readonly body: string;
  readonly signature: string;
}

export async function receiver(t: { after(fn: () => unknown): void }, status = 204): Promise<{ url: string; got: Received[] }> {
  const got: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      got.push({ id: String(request.headers['sheetrest-event-id']), body: Buffer.concat(chunks).toString('utf8'), signature: String(request.headers['sheetrest-signature']) });
      response.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`, got };
}
