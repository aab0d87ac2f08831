import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gitUrlProblem } from '../../skills/git-fetch.ts';
import { freePort } from '../../testkit/free-port.ts';
import { startTestStack, type TestStack } from '../../testkit/test-stack.ts';

const skill = (description: string) => `---\nname: weather-note\ndescription: ${description}\n---\nWrite the note.\n`;

/** A repository built with the real git CLI: each commit writes the given files; returns the commit sha. */
function makeRepo(dir: string) {
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', dir, ...args], {
      encoding: 'utf8',
      env: {
        ...process.env,
        GIT_CONFIG_GLOBAL: '/dev/null',
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@t',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@t',
      },
    }).trim();
  mkdirSync(dir, { recursive: true });
  git('init', '--quiet', '--initial-branch=main');
  return {
    git,
    commit(files: Record<string, string | Buffer | { link: string }>, message: string) {
      for (const [path, data] of Object.entries(files)) {
        mkdirSync(dirname(join(dir, path)), { recursive: true });
        if (typeof data === 'object' && 'link' in data) symlinkSync(data.link, join(dir, path));
        else writeFileSync(join(dir, path), data);
      }
      git('add', '-A');
      git('commit', '--quiet', '-m', message);
      return git('rev-parse', 'HEAD');
    },
  };
}

describe('POST /skills/import/git: one ref of a repository, quarantined, with its commit in the audit', () => {
  const root = mkdtempSync(join(tmpdir(), 'cadenza-git-test-'));
  let stack: TestStack;
  let key: string;
  let daemon: ChildProcess;
  let daemonUrl: string;
  const shas: Record<string, string> = {};
  before(async () => {
    const work = makeRepo(join(root, 'work'));
    shas.first = work.commit(
      { 'skills/weather-note/SKILL.md': skill('First version.'), 'skills/weather-note/references/units.md': 'km/h\n' },
      'first',
    );
    work.git('tag', 'v1');
    shas.second = work.commit({ 'skills/weather-note/SKILL.md': skill('Second version.') }, 'second');
    work.git('checkout', '--quiet', '-b', 'next');
    shas.next = work.commit({ 'skills/weather-note/SKILL.md': skill('Next version.') }, 'next');
    work.git('checkout', '--quiet', 'main');
    execFileSync('git', ['clone', '--quiet', '--bare', join(root, 'work'), join(root, 'served', 'skills.git')]);

    const hostile = makeRepo(join(root, 'hostile'));
    hostile.commit({ 'evil/SKILL.md': skill('Evil.'), 'evil/passwd': { link: '../../../etc/passwd' } }, 'link');
    const big = makeRepo(join(root, 'big'));
    big.commit({ 'big/SKILL.md': skill('Big.'), 'big/blob.bin': randomBytes(3 * 1024 * 1024) }, 'big');

    const port = await freePort();
    daemon = spawn(
      'git',
      ['daemon', '--reuseaddr', '--export-all', `--base-path=${join(root, 'served')}`, '--listen=127.0.0.1', `--port=${port}`],
      {
        stdio: 'ignore',
      },
    );
    daemonUrl = `git://127.0.0.1:${port}/skills.git`;
    // Ready when it answers: wait with a deadline.
    const deadline = Date.now() + 15_000;
    for (;;) {
      try {
        execFileSync('git', ['ls-remote', daemonUrl], { stdio: 'ignore', timeout: 5_000 });
        break;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((ok) => setTimeout(ok, 100));
      }
    }
    stack = await startTestStack({ env: { SKILL_GIT_LOCAL_URLS: 'true', SKILL_GIT_MAX_KB: '1024', SKILL_GIT_TIMEOUT_S: '30' } });
    key = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'gitter' });
  });
  after(async () => {
    daemon?.kill();
    await stack?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  const importGit = (body: Record<string, unknown>) => stack.api.request('POST', '/api/v1/skills/import/git', { key, body });
  const fileUrl = (repo: string) => `file://${join(root, repo)}`;

  it('imports a tag over file:// from a bare repo: quarantined, its files kept, URL and resolved commit in the audit', async () => {
    const res = await importGit({ url: fileUrl('served/skills.git'), ref: 'v1', path: 'skills/weather-note' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.status, 'quarantined');
    assert.equal(res.body.commit, shas.first);
    const detail = await stack.api.request('GET', `/api/v1/skills/${res.body.id}`, { key });
    assert.equal(detail.body.description, 'First version.');
    assert.deepEqual(
      detail.body.files.map((f: { path: string }) => f.path),
      ['SKILL.md', 'references/units.md'],
    );
    assert.deepEqual(detail.body.importAudit.git, {
      url: fileUrl('served/skills.git'),
      ref: 'v1',
      path: 'skills/weather-note',
      commit: shas.first,
    });
    assert.equal(detail.body.importAudit.format, 'git');
  });

  it('imports a branch and a commit sha over git daemon; the default ref is the remote HEAD', async () => {
    const other = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'gitter-2' });
    const as = (k: string, body: Record<string, unknown>) => stack.api.request('POST', '/api/v1/skills/import/git', { key: k, body });
    const branch = await as(other, { url: daemonUrl, ref: 'next', path: 'skills/weather-note' });
    assert.equal(branch.status, 201, JSON.stringify(branch.body));
    assert.equal(branch.body.commit, shas.next);
    const third = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'gitter-3' });
    const sha = await as(third, { url: daemonUrl, ref: shas.second, path: 'skills/weather-note' });
    assert.equal(sha.status, 201, JSON.stringify(sha.body));
    assert.equal(sha.body.commit, shas.second);
    const fourth = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'gitter-4' });
    const head = await as(fourth, { url: daemonUrl, path: '/skills/weather-note/' });
    assert.equal(head.status, 201, JSON.stringify(head.body));
    assert.equal(head.body.commit, shas.second);
    const detail = await stack.api.request('GET', `/api/v1/skills/${branch.body.id}`, { key: other });
    assert.equal(detail.body.description, 'Next version.');
  });

  it('names the field for a missing path, a missing ref, a bad URL; refuses a symlink (400) and an oversized repo (413); stores nothing', async () => {
    const missingPath = await importGit({ url: fileUrl('served/skills.git'), path: 'skills/nothing' });
    assert.equal(missingPath.status, 422, JSON.stringify(missingPath.body));
    assert.equal(missingPath.body.error.details.fields[0].field, 'path');
    const missingRef = await importGit({ url: daemonUrl, ref: 'no-such-branch', path: 'skills/weather-note' });
    assert.equal(missingRef.status, 422, JSON.stringify(missingRef.body));
    assert.equal(missingRef.body.error.details.fields[0].field, 'ref');
    const optionRef = await importGit({ url: daemonUrl, ref: '--upload-pack=touch /tmp/x' });
    assert.equal(optionRef.status, 422);
    assert.equal(optionRef.body.error.details.fields[0].field, 'ref');
    const http = await importGit({ url: 'http://127.0.0.1:1/skills.git' });
    assert.equal(http.status, 400);
    assert.equal(http.body.error.details.fields[0].field, 'url');
    const link = await importGit({ url: fileUrl('hostile'), path: 'evil' });
    assert.equal(link.status, 400, JSON.stringify(link.body));
    assert.match(link.body.error.message, /passwd is a symbolic link/);
    const big = await importGit({ url: fileUrl('big'), path: 'big' });
    assert.equal(big.status, 413, JSON.stringify(big.body));
    assert.match(big.body.error.message, /fetch .*1048576 bytes/, 'the fetch itself is bounded, before any file is read');
    const unknown = await importGit({ url: daemonUrl, branch: 'main' });
    assert.equal(unknown.status, 400);
    const list = await stack.api.request('GET', '/api/v1/skills', { key });
    assert.equal(list.body.items.length, 1, 'only the first import was stored');
  });

  it('accepts only https:// unless local URLs are allowed', () => {
    assert.equal(gitUrlProblem('https://github.com/org/skills.git', false), undefined);
    assert.match(gitUrlProblem('file:///srv/skills.git', false)!, /https/);
    assert.match(gitUrlProblem('git://127.0.0.1/skills.git', false)!, /https/);
    assert.match(gitUrlProblem('ext::sh -c touch% /tmp/pwned', true)!, /URL/);
    assert.match(gitUrlProblem('https://user:secret@github.com/org/skills.git', false)!, /credentials/);
  });
});
