import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { ZipFile } from '../skills/zip-reader.ts';

/**
 * A bundle written out for one run: `bundleDir` is what the sandbox binds read-only, `outDir` the empty folder it binds
 * writable at /out (the files the script returns); `remove()` deletes it all.
 */
export type Hydrated = { bundleDir: string; outDir: string; remove(): Promise<void> };

/**
 * Writes a stored bundle's files into a private temporary folder (0700, so no other host user can look in) holding
 * the world-readable bundle folder that the sandbox's unprivileged uid reads.
 */
export async function hydrateBundle(files: ZipFile[]): Promise<Hydrated> {
  const root = await mkdtemp(join(tmpdir(), 'cadenza-script-'));
  const remove = () => rm(root, { recursive: true, force: true });
  try {
    const bundleDir = join(root, 'skill');
    await mkdir(bundleDir, { mode: 0o755 });
    await chmod(bundleDir, 0o755);
    for (const file of files) {
      const target = resolve(bundleDir, file.path);
      // Stored paths were checked on upload; refuse anything that would still land outside.
      if (!target.startsWith(bundleDir + sep)) throw new Error(`bundle path ${file.path} leaves the bundle`);
      await makeDirs(bundleDir, dirname(target));
      await writeFile(target, file.data);
      await chmod(target, 0o644); // modes are set explicitly: the process umask must not hide files from the sandbox
    }
    const outDir = join(root, 'out');
    // Writable by the sandbox's unprivileged uid; sticky, like /tmp.
    await mkdir(outDir);
    await chmod(outDir, 0o1777);
    return { bundleDir, outDir, remove };
  } catch (err) {
    await remove();
    throw err;
  }
}

/** Creates each folder from `base` down to `dir`, readable by all. */
async function makeDirs(base: string, dir: string): Promise<void> {
  let current = base;
  for (const part of relative(base, dir)
    .split(sep)
    .filter((p) => p !== '')) {
    current = join(current, part);
    await mkdir(current).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'EEXIST') throw e;
    });
    await chmod(current, 0o755);
  }
}
