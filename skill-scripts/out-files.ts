import { lstat, readdir, readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';

/** A file a script left under /out, as a tool result's `files` entry carries it. */
export type OutFile = { name: string; mediaType: string; base64: string };

// More than any mission keeps (MISSION_FILE_MAX_COUNT's ceiling is the caller's to apply); a folder of thousands is refused.
const MAX_OUT_FILES = 1_000;

const MEDIA_TYPES: Record<string, string> = {
  '.txt': 'text/plain',
  '.md': 'text/markdown',
  '.csv': 'text/csv',
  '.json': 'application/json',
  '.html': 'text/html',
  '.xml': 'application/xml',
  '.pdf': 'application/pdf',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.svg': 'image/svg+xml',
  '.zip': 'application/zip',
};

/**
 * The regular files under a run's out folder, named by their path inside it, in name order. Read after every process
 * of the run is gone; a symbolic link is skipped, never followed (it could point anywhere on the host).
 */
export async function readOutFiles(outDir: string): Promise<OutFile[] | string> {
  const found: string[] = [];
  const walk = async (dir: string, prefix: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const name = prefix + entry.name;
      if (entry.isDirectory()) await walk(join(dir, entry.name), `${name}/`);
      else if (entry.isFile()) found.push(name);
      if (found.length > MAX_OUT_FILES) return;
    }
  };
  await walk(outDir, '');
  if (found.length > MAX_OUT_FILES) return `the script wrote more than ${MAX_OUT_FILES} files under /out`;
  found.sort();
  const files: OutFile[] = [];
  for (const name of found) {
    const path = join(outDir, name);
    if (!(await lstat(path)).isFile()) continue;
    const bytes = await readFile(path);
    files.push({
      name,
      mediaType: MEDIA_TYPES[extname(name).toLowerCase()] ?? 'application/octet-stream',
      base64: bytes.toString('base64'),
    });
  }
  return files;
}
