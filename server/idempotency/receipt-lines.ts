// The Idempotency-Key store's file format, one checksummed line per receipt (the key, the
// request's fingerprint and the answer), read back line by line so that a damaged line costs
// only itself:
//
//   3f0c9a1e5b7d2c44 {"key":"order-17","fingerprint":"<sha-256>","at":1763940000000,"status":201,...}
//
// The checksum is the first 16 hex digits of the JSON's SHA-256, as in the file source's journal.
import { isReceipt, type Receipt } from '../sources/source.ts';
import { fingerprint } from '../durable/disk.ts';

/** One line of the store: `<checksum> <json>\n`, the checksum the first 16 hex digits of the JSON's SHA-256. */
export function receiptLine(receipt: Receipt): string {
  const json = JSON.stringify({ key: receipt.key, fingerprint: receipt.fingerprint, at: receipt.at, status: receipt.status, headers: receipt.headers, body: receipt.body });
  return `${fingerprint(json).slice(0, 16)} ${json}\n`;
}

/** The receipts of a store file in order, how many intact lines it has, and how many damaged ones were skipped. */
export function parseReceipts(text: string): { receipts: Receipt[]; lines: number; damaged: number } {
  const receipts: Receipt[] = [];
  let damaged = 0;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const receipt = parseLine(line) ?? resync(line);
    if (receipt === undefined) damaged++;
    else receipts.push(receipt);
  }
  return { receipts, lines: receipts.length, damaged };
}

/** A torn append runs into the line written after it: finds an intact line starting inside. */
function resync(line: string): Receipt | undefined {
  for (const candidate of line.matchAll(/[0-9a-f]{16} \{/g)) {
    if (candidate.index === 0) continue;
    const receipt = parseLine(line.slice(candidate.index));
    if (receipt !== undefined) return receipt;
  }
  return undefined;
}

function parseLine(line: string): Receipt | undefined {
  if (line.indexOf(' ') !== 16) return undefined;
  const json = line.slice(17);
  if (fingerprint(json).slice(0, 16) !== line.slice(0, 16)) return undefined;
  try {
    const value: unknown = JSON.parse(json);
    return isReceipt(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
