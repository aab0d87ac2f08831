import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { folderZip, skillsHttp } from '../helpers/skills-http.ts';
import { startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { buildZip, bundleSkillMd } from '../../testkit/zip-builder.ts';

/** Nine references per level, five levels deep: 9^5 = 59,049 nodes from a few hundred bytes. */
const aliasBomb = [
  'a: &a [x, x, x, x, x, x, x, x, x]',
  ...['b', 'c', 'd', 'e'].map((k, i) => `${k}: &${k} [${Array(9).fill(`*${'abcd'[i]}`).join(', ')}]`),
  `f: [${Array(9).fill('*e').join(', ')}]`,
].join('\n');

describe('hostile SKILL.md and zip input answers 400 naming the problem, never 500, storing nothing', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'fuzzer' });
  });
  after(() => stack.stop());
  const { post, counts } = skillsHttp(
    () => stack,
    () => key,
  );

  const yamlCases: Array<[string, string, RegExp]> = [
    ['an alias to an anchor that does not exist', '---\nname: alias-nope\ndescription: *nope\n---\nSteps.\n', /aliases.*\*nope at line 3/],
    ['an alias bomb', `---\nname: alias-bomb\ndescription: Explodes.\n${aliasBomb}\n---\nSteps.\n`, /aliases.*\*a at line 5/],
    [
      'an alias to a defined anchor',
      '---\nname: alias-ok\ndescription: &d Reused.\nlicense: *d\n---\nSteps.\n',
      /aliases are not allowed \(\*d at line 4\)/,
    ],
  ];
  for (const [what, md, message] of yamlCases) {
    it(`refuses ${what} on authoring, import and zip import`, async () => {
      const before = await counts();
      const zip = folderZip(/name: ([a-z-]+)/.exec(md)![1]!, { 'SKILL.md': md });
      for (const [path, body] of [
        ['', { md }],
        ['/import', { md }],
        ['/import/zip', { zip }],
        ['', { zip }],
      ] as const) {
        const res = await post(path, body);
        assert.equal(res.status, 400, `${path} ${Object.keys(body)[0]}: ${JSON.stringify(res.body)}`);
        assert.equal(res.body.error.code, 'validation_failed');
        const field = res.body.error.details.fields.find((f: { field: string }) => f.field === 'frontmatter');
        assert.ok(field, JSON.stringify(res.body));
        assert.match(field.message, message);
      }
      assert.deepEqual(await counts(), before, 'nothing was stored');
    });
  }

  it('refuses a zip whose central directory points past the end of the file (400 naming it)', async () => {
    const zip = buildZip([{ path: 's/SKILL.md', data: bundleSkillMd('s') }]);
    // The end record's "offset of the central directory" (bytes 16..19) now points far beyond the archive.
    zip.writeUInt32LE(zip.length + 10_000, zip.length - 22 + 16);
    const before = await counts();
    for (const path of ['', '/import/zip']) {
      const res = await post(path, { zip });
      assert.equal(res.status, 400, `${path}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error.details.fields[0].field, 'bundle');
      assert.match(res.body.error.message, /central directory/);
    }
    assert.deepEqual(await counts(), before);
  });

  it('refuses a zip whose entry points past the end of the file (400 naming the entry)', async () => {
    const zip = buildZip([{ path: 's/SKILL.md', data: bundleSkillMd('s') }]);
    const central = zip.length - 22 - (46 + 's/SKILL.md'.length);
    zip.writeUInt32LE(zip.length + 5_000, central + 42);
    const res = await post('/import/zip', { zip });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(res.body.error.details.fields[0].field, 'bundle');
  });
});
