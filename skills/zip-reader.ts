import { crc32, inflateRawSync } from 'node:zlib';
import { bundlePathProblem } from './bundle-path.ts';

/** Caps on what an uploaded zip may expand to (SKILL_BUNDLE_* configuration). */
export type BundleCaps = { maxFiles: number; maxFileBytes: number; maxTotalBytes: number; maxRatio: number };

/** A refused archive: `tooLarge` for the caps (413, with the `cap` passed when one was), otherwise malformed or unsafe (400). */
export class BundleError extends Error {
  override name = 'BundleError';
  readonly tooLarge: boolean;
  readonly cap: keyof BundleCaps | undefined;
  constructor(message: string, tooLarge = false, cap?: keyof BundleCaps) {
    super(message);
    this.tooLarge = tooLarge;
    this.cap = cap;
  }
}

/** A file read from a zip. */
export type ZipFile = { path: string; data: Buffer };

type CentralEntry = {
  path: string;
  flags: number;
  method: number;
  crc: number;
  compressed: number;
  size: number;
  offset: number;
  mode: number;
  unix: boolean;
};

// Files that archivers add on their own (macOS resource forks, Finder metadata): not part of a skill.
const ARCHIVER_NOISE = /(^|\/)(__MACOSX\/|\.DS_Store$)/;
// Small files compress well without being bombs; the ratio cap applies above this size.
const RATIO_FLOOR_BYTES = 4096;

/**
 * Reads every file of a zip, refusing before anything is expanded: unsafe paths (`..`, absolute), links, duplicate
 * names, encryption, too many files, a file or a total over the caps, and a compression ratio that signals a bomb.
 * Expansion is then capped at each entry's declared size, so a lying header cannot expand further.
 */
export function readZip(zip: Buffer, caps: BundleCaps): { files: ZipFile[]; skipped: string[] } {
  const entries = readCentralDirectory(zip);
  const seen = new Set<string>();
  const kept: CentralEntry[] = [];
  const skipped: string[] = [];
  for (const entry of entries) {
    const isDir = entry.path.endsWith('/');
    const path = isDir ? entry.path.slice(0, -1) : entry.path;
    const problem = bundlePathProblem(path);
    if (problem) throw new BundleError(`unsafe path ${JSON.stringify(entry.path)}: ${problem}`);
    if (entry.unix && (entry.mode & 0o170000) === 0o120000)
      throw new BundleError(`${entry.path} is a link; bundles may hold only regular files`);
    if (entry.flags & 1) throw new BundleError(`${entry.path} is encrypted`);
    const key = entry.path.toLowerCase();
    if (seen.has(key)) throw new BundleError(`duplicate name ${entry.path} (names must differ, ignoring case)`);
    seen.add(key);
    if (isDir) continue;
    if (ARCHIVER_NOISE.test(entry.path)) skipped.push(entry.path);
    else kept.push(entry);
  }
  if (kept.length > caps.maxFiles) throw new BundleError(`${kept.length} files, over the limit of ${caps.maxFiles}`, true, 'maxFiles');
  let total = 0;
  for (const entry of kept) {
    if (entry.method !== 0 && entry.method !== 8)
      throw new BundleError(`${entry.path} uses compression method ${entry.method}; only stored and deflate are supported`);
    if (entry.size > caps.maxFileBytes)
      throw new BundleError(`${entry.path} is ${entry.size} bytes, over the limit of ${caps.maxFileBytes} bytes`, true, 'maxFileBytes');
    total += entry.size;
    if (entry.size > RATIO_FLOOR_BYTES && entry.size / Math.max(entry.compressed, 1) > caps.maxRatio) {
      throw new BundleError(
        `${entry.path} expands ${Math.round(entry.size / Math.max(entry.compressed, 1))}:1, over the limit of ${caps.maxRatio}:1 (a zip bomb?)`,
        true,
        'maxRatio',
      );
    }
  }
  if (total > caps.maxTotalBytes)
    throw new BundleError(`the files total ${total} bytes, over the limit of ${caps.maxTotalBytes} bytes`, true, 'maxTotalBytes');
  return { files: kept.map((entry) => ({ path: entry.path, data: expand(zip, entry) })), skipped };
}

function expand(zip: Buffer, entry: CentralEntry): Buffer {
  if (zip.readUInt32LE(entry.offset) !== 0x04034b50) throw new BundleError(`${entry.path}: local header missing`);
  const start = entry.offset + 30 + zip.readUInt16LE(entry.offset + 26) + zip.readUInt16LE(entry.offset + 28);
  if (start + entry.compressed > zip.length) throw new BundleError(`${entry.path}: data runs past the end of the archive`);
  const raw = zip.subarray(start, start + entry.compressed);
  let data: Buffer;
  try {
    // One byte over the declared size is enough to catch a header that lies about it.
    data = entry.method === 0 ? Buffer.from(raw) : inflateRawSync(raw, { maxOutputLength: entry.size + 1 });
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE')
      throw new BundleError(`${entry.path} expands beyond its declared size (a zip bomb?)`, true);
    throw new BundleError(`${entry.path}: corrupt compressed data`);
  }
  if (data.length !== entry.size)
    throw new BundleError(
      `${entry.path} expands to ${data.length} bytes, not the ${entry.size} its header declares`,
      data.length > entry.size,
    );
  if (crc32(data) !== entry.crc) throw new BundleError(`${entry.path}: checksum mismatch (corrupt archive)`);
  return data;
}

function readCentralDirectory(zip: Buffer): CentralEntry[] {
  const eocd = findEndOfCentralDirectory(zip);
  const count = zip.readUInt16LE(eocd + 10);
  const size = zip.readUInt32LE(eocd + 12);
  let at = zip.readUInt32LE(eocd + 16);
  if (zip.readUInt16LE(eocd + 4) !== 0 || zip.readUInt16LE(eocd + 6) !== 0) throw new BundleError('multi-part archives are not supported');
  if (count === 0xffff || size === 0xffffffff || at === 0xffffffff) throw new BundleError('ZIP64 archives are not supported');
  if (at + size > eocd) throw new BundleError('not a valid zip: the central directory runs past its end record');
  const entries: CentralEntry[] = [];
  for (let i = 0; i < count; i++) {
    if (at + 46 > zip.length || zip.readUInt32LE(at) !== 0x02014b50) throw new BundleError('not a valid zip: broken central directory');
    const nameLength = zip.readUInt16LE(at + 28);
    const entry: CentralEntry = {
      path: zip.toString('utf8', at + 46, at + 46 + nameLength),
      flags: zip.readUInt16LE(at + 8),
      method: zip.readUInt16LE(at + 10),
      crc: zip.readUInt32LE(at + 16),
      compressed: zip.readUInt32LE(at + 20),
      size: zip.readUInt32LE(at + 24),
      offset: zip.readUInt32LE(at + 42),
      mode: zip.readUInt32LE(at + 38) >>> 16,
      unix: zip.readUInt8(at + 5) === 3,
    };
    if (entry.size === 0xffffffff || entry.compressed === 0xffffffff || entry.offset === 0xffffffff)
      throw new BundleError('ZIP64 archives are not supported');
    entries.push(entry);
    at += 46 + nameLength + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  }
  return entries;
}

function findEndOfCentralDirectory(zip: Buffer): number {
  // The end record is 22 bytes plus a comment of at most 65535 bytes, so it lies within the last 65557 bytes.
  for (let at = zip.length - 22; at >= Math.max(0, zip.length - 65557); at--) {
    if (zip.readUInt32LE(at) === 0x06054b50) return at;
  }
  throw new BundleError('not a zip archive (no end of central directory)');
}
