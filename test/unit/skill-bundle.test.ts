import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { buildBundle, bundleFiles, readSkillFolder } from '../../skills/bundle.ts';
import { BundleError, readZip, type BundleCaps } from '../../skills/zip-reader.ts';
import { buildZip, bundleSkillMd } from '../../testkit/zip-builder.ts';

const CAPS: BundleCaps = { maxFiles: 10, maxFileBytes: 64 * 1024, maxTotalBytes: 128 * 1024, maxRatio: 100 };
const file = (path: string, text: string) => ({ path, data: Buffer.from(text) });

async function refused(zip: Buffer, message: RegExp, tooLarge = false) {
  await assert.rejects(
    () => readZip(zip, CAPS),
    (err: unknown) => err instanceof BundleError && message.test(err.message) && err.tooLarge === tooLarge,
  );
}

describe('deterministic bundles', () => {
  const files = [file('SKILL.md', bundleSkillMd('det')), file('scripts/run.py', 'print(1)\n'), file('references/a.md', '# A\n')];

  it('gives the same bytes and sha256 for the same content, whatever the order the files came in', () => {
    const a = buildBundle('det', files);
    const b = buildBundle('det', [...files].reverse());
    assert.ok(a.bytes.equals(b.bytes));
    assert.equal(a.sha256, b.sha256);
    assert.match(a.sha256, /^[0-9a-f]{64}$/);
    assert.deepEqual(
      a.files.map((f) => f.path),
      ['SKILL.md', 'references/a.md', 'scripts/run.py'],
    );
  });

  it('gives another hash when one byte of one file changes', () => {
    const changed = [files[0]!, file('scripts/run.py', 'print(2)\n'), files[2]!];
    assert.notEqual(buildBundle('det', files).sha256, buildBundle('det', changed).sha256);
  });

  it('reads back every file under the skill folder, byte for byte', async () => {
    const { bytes } = buildBundle('det', files);
    const back = await bundleFiles(bytes);
    assert.deepEqual(back.map((f) => [f.path, f.data.toString()]).sort(), files.map((f) => [f.path, f.data.toString()]).sort());
    const { folder } = await readSkillFolder(bytes, CAPS);
    assert.equal(folder, 'det', 'unzipping gives a folder named like the skill');
  });

  it('reads a folder zipped by the zip tool, with SKILL.md one level down (deflated, with directory entries)', async (t) => {
    try {
      execFileSync('zip', ['-v'], { stdio: 'ignore' });
    } catch {
      return t.skip('no zip tool on this machine');
    }
    const dir = mkdtempSync(join(tmpdir(), 'cadenza-zip-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    mkdirSync(join(dir, 'my-skill/scripts'), { recursive: true });
    writeFileSync(join(dir, 'my-skill/SKILL.md'), bundleSkillMd('my-skill'));
    writeFileSync(join(dir, 'my-skill/scripts/go.sh'), 'echo go\n'.repeat(100));
    execFileSync('zip', ['-r', '-q', 'out.zip', 'my-skill'], { cwd: dir });
    const read = await readSkillFolder(readFileSync(join(dir, 'out.zip')), CAPS);
    assert.equal(read.folder, 'my-skill');
    assert.deepEqual(read.files.map((f) => f.path).sort(), ['SKILL.md', 'scripts/go.sh']);
    assert.equal(read.files.find((f) => f.path === 'scripts/go.sh')!.data.toString(), 'echo go\n'.repeat(100));
  });

  it('takes SKILL.md at the root, or refuses a zip without it at the root or one folder down', async () => {
    assert.equal((await readSkillFolder(buildZip([{ path: 'SKILL.md', data: 'x' }]), CAPS)).folder, undefined);
    await assert.rejects(() => readSkillFolder(buildZip([{ path: 'a/b/SKILL.md', data: 'x' }]), CAPS), /no SKILL\.md/);
    await assert.rejects(
      () =>
        readSkillFolder(
          buildZip([
            { path: 'a/SKILL.md', data: 'x' },
            { path: 'b/x.md', data: 'y' },
          ]),
          CAPS,
        ),
      /no SKILL\.md/,
    );
  });

  it('leaves out macOS archiver metadata, saying so', async () => {
    const read = await readSkillFolder(
      buildZip([
        { path: 's/SKILL.md', data: 'x' },
        { path: '__MACOSX/s/._SKILL.md', data: 'junk' },
        { path: 's/.DS_Store', data: 'junk' },
      ]),
      CAPS,
    );
    assert.deepEqual(
      read.files.map((f) => f.path),
      ['SKILL.md'],
    );
    assert.deepEqual(read.skipped.sort(), ['__MACOSX/s/._SKILL.md', 's/.DS_Store']);
  });
});

describe('hostile bundles are refused before anything is expanded', () => {
  it("refuses a path that climbs out with '..'", () =>
    refused(buildZip([{ path: 's/../../etc/passwd', data: 'x' }]), /unsafe path.*'\.\.'/));
  it('refuses an absolute path', () => refused(buildZip([{ path: '/etc/passwd', data: 'x' }]), /unsafe path.*absolute/));
  it('refuses a Windows drive path and backslashes', async () => {
    await refused(buildZip([{ path: 'C:/x.txt', data: 'x' }]), /absolute/);
    await refused(buildZip([{ path: 's\\..\\x.txt', data: 'x' }]), /backslash/);
  });
  it('refuses a symbolic link', () => refused(buildZip([{ path: 's/link', data: '/etc/passwd', mode: 0o120777 }]), /is a link/));
  it('refuses duplicate names, also when they differ only in case', async () => {
    await refused(
      buildZip([
        { path: 's/a.md', data: '1' },
        { path: 's/a.md', data: '2' },
      ]),
      /duplicate name/,
    );
    await refused(
      buildZip([
        { path: 's/A.md', data: '1' },
        { path: 's/a.md', data: '2' },
      ]),
      /duplicate name/,
    );
  });
  it('refuses more files than the cap (413)', async () => {
    const many = Array.from({ length: CAPS.maxFiles + 1 }, (_, i) => ({ path: `s/f${i}.txt`, data: 'x' }));
    await refused(buildZip(many), /11 files, over the limit of 10/, true);
  });
  it('refuses a file over the size cap (413)', () =>
    refused(buildZip([{ path: 's/big.bin', data: Buffer.alloc(CAPS.maxFileBytes + 1, 1) }]), /over the limit of 65536/, true));
  it('refuses files whose total is over the cap (413)', async () => {
    const half = (i: number) => ({ path: `s/p${i}.bin`, data: Buffer.alloc(50 * 1024, i) });
    await refused(buildZip([half(1), half(2), half(3)]), /total 153600 bytes, over the limit/, true);
  });
  it('refuses a compression ratio that signals a zip bomb (413)', async () => {
    await refused(
      buildZip([{ path: 's/bomb.txt', data: Buffer.alloc(60 * 1024, 0), deflate: true }]),
      /expands \d+:1, over the limit of 100:1/,
      true,
    );
  });
  it('refuses an entry that expands beyond the size its header declares', async () => {
    const text = Array.from({ length: 2000 }, (_, i) => `line ${i} of a file that lies about its size`).join('\n');
    await refused(buildZip([{ path: 's/liar.txt', data: text, deflate: true, declaredSize: 1000 }]), /beyond its declared size/, true);
  });
  it('refuses what is not a zip at all', () => refused(Buffer.from('PK but not really a zip archive'), /not a zip archive/));

  it('refuses a central directory that points past the end of the file', async () => {
    const zip = buildZip([{ path: 's/SKILL.md', data: 'x' }]);
    zip.writeUInt32LE(zip.length + 10_000, zip.length - 22 + 16);
    await refused(zip, /not a valid zip: .*central directory/);
  });
  it('refuses an entry whose local header lies past the end of the file', async () => {
    const zip = buildZip([{ path: 's/SKILL.md', data: 'x' }]);
    zip.writeUInt32LE(zip.length + 5_000, zip.length - 22 - 56 + 42);
    await refused(zip, /s\/SKILL\.md: corrupt archive/);
  });
  it('refuses a file whose checksum does not match its bytes', async () => {
    const zip = buildZip([{ path: 's/SKILL.md', data: 'hello' }]);
    zip[30 + 's/SKILL.md'.length] = 'j'.charCodeAt(0);
    await refused(zip, /checksum mismatch/);
  });
  it('refuses an encrypted entry', async () => {
    const zip = buildZip([{ path: 's/SKILL.md', data: 'x', deflate: true }]);
    const central = zip.length - 22 - 56;
    zip.writeUInt16LE(zip.readUInt16LE(central + 8) | 1, central + 8);
    zip.writeUInt16LE(zip.readUInt16LE(6) | 1, 6);
    await refused(zip, /is encrypted/);
  });
});
