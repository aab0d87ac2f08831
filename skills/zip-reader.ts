import { crc32 } from 'node:zlib';
import yauzl, { type Entry, type ZipFile as Archive } from 'yauzl';
import { bundlePathProblem } from './bundle-path.ts';

/** Caps on what an uploaded zip may expand to (SKILL_BUNDLE_* configuration). */
export type BundleCaps = { maxFiles: number; maxFileBytes: number; maxTotalBytes: number; maxRatio: number };

/** A refused archive: `tooLarge` for the caps (413), otherwise malformed or unsafe (400). */
export class BundleError extends Error {
  override name = 'BundleError';
  readonly tooLarge: boolean;
  /** The cap that refused it, when one did (so the API can name the variable that sets it). */
  readonly cap: keyof BundleCaps | undefined;
  constructor(message: string, tooLarge = false, cap?: keyof BundleCaps) {
    super(message);
    this.tooLarge = tooLarge;
    this.cap = cap;
  }
}

/** A file read from a zip. */
export type ZipFile = { path: string; data: Buffer };

// Files that archivers add on their own (macOS resource forks, Finder metadata): not part of a skill.
const ARCHIVER_NOISE = /(^|\/)(__MACOSX\/|\.DS_Store$)/;
// Small files compress well without being bombs; the ratio cap applies above this size.
const RATIO_FLOOR_BYTES = 4096;
// A classic zip directory holds at most 65,535 entries; more is a ZIP64 claim no skill needs, refused before listing.
const MAX_ENTRIES = 65_535;

/**
 * Reads every file of a zip (through yauzl), refusing before anything is expanded: unsafe paths (`..`, absolute),
 * links, duplicate names, encryption, too many files, a file or a total over the caps, and a compression ratio that
 * signals a bomb. Expansion then stops at each entry's declared size, so a lying header cannot expand further, and
 * each file's checksum is verified.
 */
export async function readZip(zip: Buffer, caps: BundleCaps): Promise<{ files: ZipFile[]; skipped: string[] }> {
  const archive = await open(zip);
  try {
    if (archive.entryCount > MAX_ENTRIES) throw new BundleError(`${archive.entryCount} entries, over the limit of ${MAX_ENTRIES}`, true);
    const entries = await listEntries(archive);
    const seen = new Set<string>();
    const kept: Array<{ path: string; entry: Entry }> = [];
    const skipped: string[] = [];
    for (const entry of entries) {
      // Names are decoded here, not by yauzl, so that an unsafe one is refused with this module's own reason.
      const name = entry.fileNameRaw.toString('utf8');
      const isDir = name.endsWith('/');
      const path = isDir ? name.slice(0, -1) : name;
      const problem = bundlePathProblem(path);
      if (problem) throw new BundleError(`unsafe path ${JSON.stringify(name)}: ${problem}`);
      const unix = entry.versionMadeBy >> 8 === 3;
      if (unix && ((entry.externalFileAttributes >>> 16) & 0o170000) === 0o120000)
        throw new BundleError(`${name} is a link; bundles may hold only regular files`);
      if (entry.isEncrypted()) throw new BundleError(`${name} is encrypted`);
      const key = name.toLowerCase();
      if (seen.has(key)) throw new BundleError(`duplicate name ${name} (names must differ, ignoring case)`);
      seen.add(key);
      if (isDir) continue;
      if (ARCHIVER_NOISE.test(name)) skipped.push(name);
      else kept.push({ path: name, entry });
    }
    if (kept.length > caps.maxFiles) throw new BundleError(`${kept.length} files, over the limit of ${caps.maxFiles}`, true, 'maxFiles');
    let total = 0;
    for (const { path, entry } of kept) {
      const { compressionMethod: method, uncompressedSize: size, compressedSize: compressed } = entry;
      if (method !== 0 && method !== 8)
        throw new BundleError(`${path} uses compression method ${method}; only stored and deflate are supported`);
      if (size > caps.maxFileBytes)
        throw new BundleError(`${path} is ${size} bytes, over the limit of ${caps.maxFileBytes} bytes`, true, 'maxFileBytes');
      total += size;
      const ratio = size / Math.max(compressed, 1);
      if (size > RATIO_FLOOR_BYTES && ratio > caps.maxRatio) {
        throw new BundleError(
          `${path} expands ${Math.round(ratio)}:1, over the limit of ${caps.maxRatio}:1 (a zip bomb?)`,
          true,
          'maxRatio',
        );
      }
    }
    if (total > caps.maxTotalBytes)
      throw new BundleError(`the files total ${total} bytes, over the limit of ${caps.maxTotalBytes} bytes`, true, 'maxTotalBytes');
    const files: ZipFile[] = [];
    for (const { path, entry } of kept) files.push({ path, data: await expand(archive, path, entry) });
    return { files, skipped };
  } finally {
    archive.close();
  }
}

function open(zip: Buffer): Promise<Archive> {
  return new Promise((resolve, reject) => {
    const options = { lazyEntries: true, autoClose: false, decodeStrings: false, validateEntrySizes: true, strictFileNames: false };
    yauzl.fromBuffer(zip, options, (err, archive) => (err ? reject(malformed(err)) : resolve(archive)));
  });
}

/** Every entry of the central directory; nothing is expanded yet. */
function listEntries(archive: Archive): Promise<Entry[]> {
  return new Promise((resolve, reject) => {
    const entries: Entry[] = [];
    archive.on('entry', (entry: Entry) => {
      entries.push(entry);
      archive.readEntry();
    });
    archive.once('end', () => resolve(entries));
    archive.once('error', (err: Error) => reject(malformed(err)));
    archive.readEntry();
  });
}

/** One entry's bytes; yauzl stops a stream that runs past the declared size, and the checksum is ours to check. */
async function expand(archive: Archive, path: string, entry: Entry): Promise<Buffer> {
  const chunks: Buffer[] = [];
  try {
    const stream = await archive.openReadStreamPromise(entry);
    for await (const chunk of stream) chunks.push(chunk as Buffer);
  } catch (err) {
    const message = (err as Error).message;
    if (/too many bytes in the stream/.test(message)) throw new BundleError(`${path} expands beyond its declared size (a zip bomb?)`, true);
    if (/not enough bytes in the stream/.test(message))
      throw new BundleError(`${path} expands to fewer bytes than the ${entry.uncompressedSize} its header declares`);
    throw new BundleError(`${path}: corrupt archive (${message})`);
  }
  const data = Buffer.concat(chunks);
  if (crc32(data) !== entry.crc32) throw new BundleError(`${path}: checksum mismatch (corrupt archive)`);
  return data;
}

/** yauzl's reason for refusing an archive, as a 400. */
function malformed(err: Error): BundleError {
  if (/end of central directory record signature not found/i.test(err.message))
    return new BundleError('not a zip archive (no end of central directory)');
  // yauzl reads the directory through to its last entry: running out of file means the directory lies past its end.
  if (/unexpected EOF/.test(err.message)) return new BundleError('not a valid zip: the central directory runs past the end of the file');
  return new BundleError(`not a valid zip: ${err.message}`);
}
