// Runs the emulator on its own: `node tools/google-emulator/cli.ts --port 8085 [--host 127.0.0.1]
// [--latency 50] [--demo]` -> serves until SIGINT/SIGTERM. With --demo it holds one spreadsheet
// ("demo", Sheet1 with a header and two rows) that the token "demo-token" may write.
import process from 'node:process';
import { parseArgs } from 'node:util';
import { startEmulator } from './mod.ts';

const USAGE = 'usage: npm run google-emulator -- [--host HOST] [--port PORT] [--latency MS] [--demo]';
let parsed;
try {
  parsed = parseArgs({
    options: { host: { type: 'string', default: '127.0.0.1' }, port: { type: 'string', default: '8085' }, latency: { type: 'string', default: '0' }, demo: { type: 'boolean', default: false }, help: { type: 'boolean', default: false } },
  });
} catch (error) {
  console.error(`${(error as Error).message}\n${USAGE}`);
  process.exit(2);
}
const { values } = parsed;
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const port = Number(values.port);
const latencyMs = Number(values.latency);
if (!Number.isInteger(port) || port < 0 || port > 65535 || !Number.isFinite(latencyMs) || latencyMs < 0) {
  console.error(USAGE);
  process.exit(2);
}
const emulator = await startEmulator({ host: values.host, port, latencyMs });
if (values.demo) {
  emulator.createSpreadsheet({
    spreadsheetId: 'demo',
    title: 'Demo',
    sheets: [{ title: 'Sheet1', rows: [['Name', 'Age', 'Joined'], ['Ann', 30, { date: '2024-01-15' }], ['Bob', 41, { date: '2023-06-01' }]] }],
    access: { 'demo-token': 'writer' },
  });
}
console.log(`Google Sheets API emulator on ${emulator.rootUrl}${values.demo ? ' (spreadsheet "demo", token "demo-token")' : ''}`);
const stop = () => {
  emulator.close().then(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
