// Zip parts that lie about their size, for the tests and bench of issue 24, part 12: a
// `sheet1.xml` declaring 1,000 bytes whose deflate stream inflates to 2 GiB, built in about 2 MB
// without deflating 2 GiB: one MiB of zeros deflated with a sync flush (non-final blocks ending
// on a byte boundary) repeated, then an empty final block. Repeated blocks stay valid deflate:
// their back-references reach only zeros.
import { constants, deflateRawSync } from 'node:zlib';
import { readZip, replacedEntry, writeZip } from '../../server/sources/file/zip.ts';

const MIB = 1_048_576;

/** A raw deflate stream of `mebibytes` MiB of zeros. */
export function zerosDeflated(mebibytes: number): Uint8Array {
  const chunk = deflateRawSync(new Uint8Array(MIB), { finishFlush: constants.Z_SYNC_FLUSH });
  const end = deflateRawSync(new Uint8Array(0));
  const out = new Uint8Array(chunk.length * mebibytes + end.length);
  for (let n = 0; n < mebibytes; n++) out.set(chunk, n * chunk.length);
  out.set(end, chunk.length * mebibytes);
  return out;
}

/**
 * `bytes` (a zip) with part `name` replaced by a deflated one that declares `declared` bytes
 * and holds `content`: more (a bomb) or fewer than it declares.
 */
export function withLyingPart(bytes: Uint8Array, name: string, declared: number, content: { deflated: Uint8Array } | { text: string }): Uint8Array {
  return writeZip(
    readZip(bytes).map((entry) => {
      if (entry.name !== name) return entry;
      const honest = replacedEntry(entry, 'text' in content ? content.text : '');
      return { ...honest, size: declared, raw: 'deflated' in content ? content.deflated : honest.raw };
    }),
  );
}
