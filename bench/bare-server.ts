// The floor for the HTTP benchmark: node:http answering every request with the same
// pre-serialized bytes (sheetrest's own all-rows answer, read from a file at start).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const [file, port] = process.argv.slice(2);
const body = readFileSync(file);
createServer((request, response) => {
  request.resume();
  response.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': body.byteLength });
  response.end(body);
}).listen(Number(port), '127.0.0.1');
