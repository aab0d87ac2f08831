import { createHash } from 'node:crypto';
import { BundleError, readZip, type BundleCaps, type ZipFile } from './zip-reader.ts';
import { writeZip } from './zip-writer.ts';

/** A file of a stored bundle, as listed on its version. */
export type BundleFile = { path: string; size: number; sha256: string };

/** A skill's bundle: the deterministic zip, its sha256 (its address in storage) and its file list. */
export type Bundle = { bytes: Buffer; sha256: string; files: BundleFile[] };

const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The bundle of a skill folder: every file under `<name>/`, sorted by path, zipped deterministically, so the same
 * content always gives the same bytes and the same hash.
 */
export function buildBundle(name: string, files: ZipFile[]): Bundle {
  const sorted = [...files].sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));
  const bytes = writeZip(sorted.map((f) => ({ path: `${name}/${f.path}`, data: f.data })));
  return { bytes, sha256: sha256(bytes), files: sorted.map((f) => ({ path: f.path, size: f.data.length, sha256: sha256(f.data) })) };
}

/** The skill folder of an uploaded zip: SKILL.md at the root, or one folder down (then named by that folder). */
export async function readSkillFolder(
  zip: Buffer,
  caps: BundleCaps,
): Promise<{ folder: string | undefined; files: ZipFile[]; skipped: string[] }> {
  const { files, skipped } = await readZip(zip, caps);
  if (files.some((f) => f.path === 'SKILL.md')) return { folder: undefined, files, skipped };
  const tops = new Set(files.map((f) => f.path.split('/')[0]));
  const [folder] = tops;
  if (tops.size === 1 && folder !== undefined && files.some((f) => f.path === `${folder}/SKILL.md`)) {
    return { folder, files: files.map((f) => ({ path: f.path.slice(folder.length + 1), data: f.data })), skipped };
  }
  throw new BundleError('no SKILL.md at the root of the zip or in its one top folder');
}

/** The files of a stored bundle, paths relative to the skill folder. */
export async function bundleFiles(bytes: Buffer): Promise<ZipFile[]> {
  // Our own stored zip: the caps only guard against a corrupt row.
  const caps = { maxFiles: 100_000, maxFileBytes: bytes.length, maxTotalBytes: bytes.length, maxRatio: Number.MAX_SAFE_INTEGER };
  return (await readZip(bytes, caps)).files.map((f) => ({ path: f.path.slice(f.path.indexOf('/') + 1), data: f.data }));
}

/** SKILL.md bytes as text, byte-order mark kept (exports are verbatim); undefined when they are not UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}
