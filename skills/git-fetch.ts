import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { bundlePathProblem } from './bundle-path.ts';
import type { BundleCaps, ZipFile } from './zip-reader.ts';

const run = promisify(execFile);

/** Where a git import comes from: the URL, the ref asked for (a branch, a tag or a commit sha) and the folder. */
export type GitSource = { url: string; ref?: string | undefined; path?: string | undefined };

/** The fetch's bounds: its time, the clone's size on disk, and which URL schemes are accepted. */
export type GitLimits = { timeoutMs: number; maxBytes: number; localUrls: boolean };

/** A skill folder read from one commit: its files (SKILL.md among them), the folder's name and the resolved commit. */
export type GitFolder = { commit: string; folder: string | undefined; files: ZipFile[] };

/** Why a git import was refused: the field to name (`url`, `ref`, `path`, `bundle`) and whether it is a size cap. */
export class GitImportError extends Error {
  override name = 'GitImportError';
  readonly field: 'url' | 'ref' | 'path' | 'bundle';
  readonly tooLarge: boolean;
  constructor(field: GitImportError['field'], message: string, tooLarge = false) {
    super(message);
    this.field = field;
    this.tooLarge = tooLarge;
  }
}

const SHA = /^[0-9a-f]{40}$/;
// A ref as git accepts it, without anything that reads as an option or a revision expression.
const REF = /^(?!-)(?!.*\.\.)(?!.*[~^:?*[\\\s])[A-Za-z0-9._/-]{1,200}$/;

/** The URL schemes accepted: https always; file:// and git:// only when local URLs are allowed (admins, tests). */
export function gitUrlProblem(url: string, localUrls: boolean): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not a URL';
  }
  if (parsed.username || parsed.password) return 'must not carry credentials';
  if (parsed.protocol === 'https:') return undefined;
  if ((parsed.protocol === 'file:' || parsed.protocol === 'git:') && localUrls) return undefined;
  return localUrls ? 'must be an https://, file:// or git:// URL' : 'must be an https:// URL';
}

/**
 * A shallow fetch of one ref with the git CLI into a temporary repository (no checkout: nothing of the tree is
 * written as files, so a symlink in it points nowhere), then the folder at `path` read from the object store under
 * the same caps and checks as an uploaded zip: no links or submodules, safe paths, file count, file and total sizes.
 * The fetch is killed past its timeout or when the clone outgrows `maxBytes`.
 */
export async function fetchGitFolder(source: GitSource, limits: GitLimits, caps: BundleCaps): Promise<GitFolder> {
  const urlProblem = gitUrlProblem(source.url, limits.localUrls);
  if (urlProblem) throw new GitImportError('url', `url ${urlProblem}`);
  if (source.ref !== undefined && !REF.test(source.ref)) throw new GitImportError('ref', 'ref must be a branch, a tag or a commit sha');
  const folderPath = (source.path ?? '').replace(/^\/+|\/+$/g, '');
  if (folderPath && bundlePathProblem(folderPath)) throw new GitImportError('path', `path ${bundlePathProblem(folderPath)}`);

  const dir = await mkdtemp(join(tmpdir(), 'cadenza-git-import-'));
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dir,
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ALLOW_PROTOCOL: limits.localUrls ? 'https:file:git' : 'https',
  };
  const git = (args: string[], maxBuffer = 16 * 1024 * 1024) =>
    run('git', ['-C', dir, ...args], { env, maxBuffer, encoding: 'buffer', timeout: limits.timeoutMs });
  try {
    await git(['init', '--quiet', '--bare']);
    await fetchBounded(dir, env, source.url, source.ref ?? 'HEAD', limits);
    const commit = (await git(['rev-parse', 'FETCH_HEAD^{commit}'])).stdout.toString().trim();
    if (!SHA.test(commit)) throw new GitImportError('ref', `ref ${source.ref ?? 'HEAD'} does not name a commit`);
    const listing = (await git(['ls-tree', '-r', '-l', '-z', '--full-tree', commit, '--', ...(folderPath ? [folderPath] : [])])).stdout
      .toString('utf8')
      .split('\0')
      .filter(Boolean);
    const prefix = folderPath ? `${folderPath}/` : '';
    const entries = listing.map((line) => {
      const [meta, path] = [line.slice(0, line.indexOf('\t')), line.slice(line.indexOf('\t') + 1)];
      const [mode, type, object, size] = meta.split(/\s+/);
      return { mode: mode!, type: type!, object: object!, size: Number(size), path: path.slice(prefix.length) };
    });
    if (entries.length === 0) throw new GitImportError('path', `path '${folderPath}' is not a folder at commit ${commit}`);
    for (const e of entries) {
      if (e.mode === '120000') throw new GitImportError('bundle', `${e.path} is a symbolic link; links are not allowed in a skill`);
      if (e.type !== 'blob') throw new GitImportError('bundle', `${e.path} is a submodule; a skill folder holds files only`);
      const problem = bundlePathProblem(e.path);
      if (problem) throw new GitImportError('bundle', `${e.path}: ${problem}`);
    }
    if (!entries.some((e) => e.path === 'SKILL.md'))
      throw new GitImportError('path', `there is no SKILL.md in '${folderPath || '/'}' at commit ${commit}`);
    if (entries.length > caps.maxFiles)
      throw new GitImportError('bundle', `${entries.length} files, over the cap of ${caps.maxFiles}`, true);
    const big = entries.find((e) => e.size > caps.maxFileBytes);
    if (big) throw new GitImportError('bundle', `${big.path} is ${big.size} bytes, over the cap of ${caps.maxFileBytes}`, true);
    const total = entries.reduce((n, e) => n + e.size, 0);
    if (total > caps.maxTotalBytes)
      throw new GitImportError('bundle', `${total} bytes in all, over the cap of ${caps.maxTotalBytes}`, true);
    const files: ZipFile[] = [];
    for (const e of entries) files.push({ path: e.path, data: (await git(['cat-file', 'blob', e.object], e.size + 1024)).stdout });
    const folder = folderPath ? folderPath.split('/').at(-1) : repoName(source.url);
    return { commit, folder, files };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** `git fetch --depth 1` of one ref, killed past the timeout or when the repository outgrows the size cap. */
async function fetchBounded(dir: string, env: Record<string, string>, url: string, ref: string, limits: GitLimits): Promise<void> {
  const child = spawn('git', ['-C', dir, 'fetch', '--quiet', '--depth', '1', '--no-tags', '--', url, ref], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-2000)));
  let killed: GitImportError | undefined;
  const stop = (why: GitImportError) => {
    killed ??= why;
    child.kill('SIGKILL');
  };
  const timer = setTimeout(
    () => stop(new GitImportError('url', `the fetch took longer than ${limits.timeoutMs / 1000} s; stopped`)),
    limits.timeoutMs,
  );
  const watch = setInterval(() => {
    void dirSize(dir).then((size) => {
      if (size > limits.maxBytes) stop(new GitImportError('bundle', `the fetch grew past ${limits.maxBytes} bytes; stopped`, true));
    });
  }, 100);
  const code = await new Promise<number | null>((ok) => child.on('close', ok));
  clearTimeout(timer);
  clearInterval(watch);
  if (killed) throw killed;
  // A fetch that finished between two checks is measured once more.
  if ((await dirSize(dir)) > limits.maxBytes) throw new GitImportError('bundle', `the fetch is over ${limits.maxBytes} bytes`, true);
  if (code !== 0) {
    const message = stderr.replace(/\s+/g, ' ').trim().slice(0, 300);
    const missingRef = /couldn't find remote ref|not our ref|no such remote ref|invalid refspec|unadvertised object/i.test(message);
    throw new GitImportError(
      missingRef ? 'ref' : 'url',
      missingRef ? `ref ${ref} was not found: ${message}` : `git fetch failed: ${message}`,
    );
  }
}

async function dirSize(dir: string): Promise<number> {
  let total = 0;
  const entries = await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => []);
  for (const e of entries) {
    if (!e.isFile()) continue;
    total += await stat(join(e.parentPath, e.name)).then(
      (s) => s.size,
      () => 0,
    );
  }
  return total;
}

/** The repository's name from its URL (`skills` of https://host/org/skills.git), the folder a root SKILL.md sits in. */
function repoName(url: string): string | undefined {
  const last = new URL(url).pathname.replace(/\/+$/, '').split('/').at(-1);
  return last?.replace(/\.git$/, '') || undefined;
}
