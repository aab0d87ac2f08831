import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { bundleFiles } from '../../skills/bundle.ts';
import { folderZip, sha256, skillsHttp } from '../helpers/skills-http.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { buildZip, bundleSkillMd, type RawEntry } from '../../testkit/zip-builder.ts';
import { CORPUS_DIR, corpusManifest, corpusSkip } from '../../testkit/corpus.ts';

describe('skills registry: imports, bundles and strict authoring', () => {
  let stack: TestStack;
  let key: string;
  const owner = { tenantId: 'acme', userId: 'registrar' };
  before(async () => {
    stack = await startTestStack({
      env: { SKILL_BUNDLE_MAX_FILES: '40', SKILL_BUNDLE_MAX_FILE_KB: '256', SKILL_BUNDLE_MAX_TOTAL_KB: '512' },
    });
    key = await stack.api.newKey(undefined, owner);
  });
  after(() => stack.stop());
  const { post, get, bytesOf, counts } = skillsHttp(
    () => stack,
    () => key,
  );

  describe('imports', () => {
    it('imports a SKILL.md leniently, quarantined, keeping its warnings as the audit record', async () => {
      const md =
        '---\nname: lenient-one\ndescription: Use when: someone asks nicely\nallowed-tools: lab.lookup, lab.scan\nargument-hint: x\n---\nSteps.\n';
      const res = await post('/import', { md });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      assert.equal(res.body.status, 'quarantined');
      assert.equal(res.body.source, 'imported');
      const fields = res.body.warnings.map((w: { field: string }) => w.field);
      for (const f of ['description', 'allowed-tools', 'argument-hint']) assert.ok(fields.includes(f), `${f} in ${fields}`);
      const detail = await get(`/${res.body.id}`);
      assert.equal(detail.body.status, 'quarantined');
      assert.deepEqual(detail.body.importAudit.warnings, res.body.warnings);
      assert.equal(detail.body.importAudit.format, 'skill-md');
      assert.deepEqual(detail.body.spec.allowedTools, ['lab.lookup', 'lab.scan']);
    });

    it('refuses an import that stays unparseable or has no description, naming the field', async () => {
      const res = await post('/import', { md: '---\nname: nodesc\n---\nBody.\n' });
      assert.equal(res.status, 400);
      assert.deepEqual(
        res.body.error.details.fields.map((f: { field: string }) => f.field),
        ['description'],
      );
    });

    it('imports a zipped folder (SKILL.md one level down) and serves its bundle and its SKILL.md bytes verbatim', async () => {
      const md = '\uFEFF---\r\nname: zipped-guide\r\ndescription: Guides.\r\n---\r\nRead references/guide.md.   \r\n';
      const files = { 'SKILL.md': md, 'references/guide.md': '# Guide\n\nStep one.\n', 'assets/logo.bin': Buffer.from([0, 1, 2, 255]) };
      const res = await post('/import/zip', { zip: folderZip('zipped-guide', files) });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      assert.deepEqual(res.body.warnings, []);

      const exported = await bytesOf(`/${res.body.id}/export`);
      assert.ok(exported.bytes.equals(Buffer.from(md, 'utf8')), 'export is the SKILL.md bytes as uploaded');
      const bundle = await bytesOf(`/${res.body.id}/bundle`);
      assert.equal(bundle.status, 200);
      assert.match(bundle.headers.get('content-type') ?? '', /application\/zip/);
      const detail = await get(`/${res.body.id}`);
      assert.equal(sha256(bundle.bytes), detail.body.bundleSha256, 'the bundle is addressed by its sha256');
      assert.equal(bundle.headers.get('etag'), `"${detail.body.bundleSha256}"`);
      const back = Object.fromEntries((await bundleFiles(bundle.bytes)).map((f) => [f.path, f.data]));
      assert.deepEqual(Object.keys(back).sort(), Object.keys(files).sort());
      for (const [path, data] of Object.entries(files)) assert.ok(back[path]!.equals(Buffer.from(data)), path);
      assert.deepEqual(
        detail.body.files.map((f: { path: string }) => f.path),
        ['SKILL.md', 'assets/logo.bin', 'references/guide.md'],
      );
    });

    it('stores the same content once: two users importing the same folder share one bundle', async () => {
      const zip = folderZip('shared-content', { 'SKILL.md': bundleSkillMd('shared-content'), 'references/r.md': 'same\n' });
      const other = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'twin' });
      const [a, b] = [await post('/import/zip', { zip }), await post('/import/zip', { zip, key: other })];
      assert.equal(a.status, 201);
      assert.equal(b.status, 201);
      const [da, db] = [await get(`/${a.body.id}`), await get(`/${b.body.id}`, other)];
      assert.equal(da.body.bundleSha256, db.body.bundleSha256);
      const rows = await stack.db.selectFrom('skill_bundles').select('sha256').where('sha256', '=', da.body.bundleSha256).execute();
      assert.equal(rows.length, 1);
    });

    it('imports every folder of the real-world corpus as a zip', { skip: corpusSkip() }, async () => {
      const manifest = corpusManifest();
      const corpusKey = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'corpus' });
      for (const entry of manifest) {
        const dir = new URL(`${entry.corpus_path}/`, CORPUS_DIR);
        const entries: RawEntry[] = listFiles(dir).map((p) => ({
          path: `${entry.folder_name}/${p}`,
          data: readFileSync(new URL(p, dir)),
          deflate: true,
        }));
        const res = await post('/import/zip', { zip: buildZip(entries), key: corpusKey });
        assert.equal(res.status, 201, `${entry.corpus_path}: ${JSON.stringify(res.body)}`);
        assert.equal(res.body.name, entry.name);
        assert.equal(res.body.status, 'quarantined');
        const exported = await bytesOf(`/${res.body.id}/export`, corpusKey);
        assert.ok(exported.bytes.equals(readFileSync(new URL('SKILL.md', dir))), `${entry.corpus_path}: export is verbatim`);
      }
    });
  });

  describe('hostile bundles are refused with a 4xx and nothing is stored', () => {
    const cases: Array<[string, Buffer, number, RegExp]> = [
      [
        'a path with ..',
        buildZip([
          { path: 's/SKILL.md', data: bundleSkillMd('s') },
          { path: 's/../../x', data: 'x' },
        ]),
        400,
        /'\.\.'/,
      ],
      ['an absolute path', buildZip([{ path: '/SKILL.md', data: bundleSkillMd('s') }]), 400, /absolute/],
      [
        'a link',
        buildZip([
          { path: 's/SKILL.md', data: bundleSkillMd('s') },
          { path: 's/l', data: '/etc/passwd', mode: 0o120777 },
        ]),
        400,
        /link/,
      ],
      [
        'duplicate names',
        buildZip([
          { path: 's/SKILL.md', data: bundleSkillMd('s') },
          { path: 's/SKILL.md', data: bundleSkillMd('s') },
        ]),
        400,
        /duplicate/,
      ],
      [
        'too many files',
        buildZip([
          { path: 's/SKILL.md', data: bundleSkillMd('s') },
          ...Array.from({ length: 40 }, (_, i) => ({ path: `s/f${i}`, data: 'x' })),
        ]),
        413,
        /41 files/,
      ],
      [
        'a file over the cap',
        buildZip([
          { path: 's/SKILL.md', data: bundleSkillMd('s') },
          { path: 's/big', data: Buffer.alloc(257 * 1024, 7) },
        ]),
        413,
        /over the limit/,
      ],
      [
        'a total over the cap',
        buildZip([
          { path: 's/SKILL.md', data: bundleSkillMd('s') },
          ...[1, 2, 3].map((i) => ({ path: `s/p${i}`, data: Buffer.alloc(200 * 1024, i) })),
        ]),
        413,
        /total/,
      ],
      [
        'a zip bomb',
        buildZip([
          { path: 's/SKILL.md', data: bundleSkillMd('s') },
          { path: 's/bomb', data: Buffer.alloc(250 * 1024), deflate: true },
        ]),
        413,
        /zip bomb/,
      ],
      ['no SKILL.md', buildZip([{ path: 's/README.md', data: 'x' }]), 400, /no SKILL\.md/],
    ];
    for (const [what, zip, status, message] of cases) {
      it(`refuses ${what} (${status})`, async () => {
        const before = await counts();
        for (const path of ['/import/zip', '']) {
          const res = await post(path, { zip });
          assert.equal(res.status, status, `${path}: ${JSON.stringify(res.body)}`);
          assert.match(res.body.error.message, message);
          assert.equal(res.body.error.details.fields[0].field, 'bundle');
        }
        assert.deepEqual(await counts(), before, 'no skill, version or bundle row was written');
      });
    }

    it('answers 415 to /import/zip without a zip body', async () => {
      assert.equal((await post('/import/zip', { md: bundleSkillMd('nozip') })).status, 415);
    });
  });

  describe('authoring from a zip (strict)', () => {
    it('authors a skill with declared scripts from its folder zip, active at once', async () => {
      const md = bundleSkillMd('scripted', 'scripts:\n  - {name: fetch, path: scripts/fetch.py}\n');
      const res = await post('', { zip: folderZip('scripted', { 'SKILL.md': md, 'scripts/fetch.py': 'print("hi")\n' }) });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      assert.equal(res.body.status, 'active');
      assert.equal(res.body.source, 'authored');
      assert.deepEqual((await get(`/${res.body.id}`)).body.spec.scripts, [{ name: 'fetch', path: 'scripts/fetch.py' }]);
    });

    it('answers 400 naming `name` when it differs from the folder, and `scripts` for a missing script file', async () => {
      const res = await post('', {
        zip: folderZip('folder-name', { 'SKILL.md': bundleSkillMd('other-name', 'scripts:\n  - {name: f, path: scripts/f.py}\n') }),
      });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body.error.details.fields.map((f: { field: string }) => f.field).sort(), ['name', 'scripts']);
    });

    it('answers 400 naming allowed-tools for a tool that is not installed', async () => {
      const res = await post('', { md: skillMd({ name: 'unknown-tool', tools: ['lab.lookup', 'lab.nope'] }) });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body.error.details.fields, [{ field: 'allowed-tools', message: "'lab.nope' is not an installed tool" }]);
    });
  });
});

function listFiles(dir: URL, prefix = ''): string[] {
  return readdirSync(dir).flatMap((name) => {
    const rel = `${prefix}${name}`;
    return statSync(new URL(name, dir)).isDirectory() ? listFiles(new URL(`${name}/`, dir), `${rel}/`) : [rel];
  });
}
