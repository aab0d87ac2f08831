import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { errorKey } from '../../script-factory/error-key.ts';
import { scriptFromReply } from '../../script-factory/factory-prompt.ts';
import { resolveSample } from '../../script-factory/sample-input.ts';
import { withScriptEntry } from '../../script-factory/script-entry.ts';
import { parseSkillMd } from '../../skills/skill-md.ts';

const owner = { tenantId: 't', userId: 'u' };
const entry = { name: 'sum_rows', path: 'scripts/sum_rows.py', runtime: 'python' as const, postconditions: ['total == 7'] };

describe('the script factory’s pure parts', () => {
  it('compares errors without line numbers, addresses, temporary paths and durations', () => {
    const a = 'sum_rows exited with code 1; stderr: File "/skill/scripts/sum_rows.py", line 3, in <module>\nKeyError: \'items\'';
    const b = 'sum_rows exited with code 1; stderr: File "/skill/scripts/sum_rows.py", line 14, in <module>\nKeyError: \'items\'';
    assert.equal(errorKey(a), errorKey(b));
    assert.equal(
      errorKey('object at 0x7f3a2c1d in /tmp/cadenza-script-Ab12/x after 312 ms'),
      errorKey('object at 0x55e0 in /tmp/cadenza-script-Zz9/x after 8 ms'),
    );
    assert.notEqual(
      errorKey('total == 7 (total is 0)'),
      errorKey('total == 7 (total is 1)'),
      'a different wrong answer is a different error',
    );
    assert.notEqual(errorKey(a), errorKey(a.replace("'items'", "'rows'")));
  });

  it('takes the script from the first fenced block of a reply, or the whole reply without one', () => {
    assert.deepEqual(scriptFromReply('Here:\n```python\nprint(1)\n```\nand more\n```\nprint(2)\n```'), { ok: true, source: 'print(1)\n' });
    assert.deepEqual(scriptFromReply('print(3)'), { ok: true, source: 'print(3)\n' });
    const empty = scriptFromReply('```\n```');
    assert.ok(!empty.ok && /no script/.test(empty.error));
  });

  it('declares the script in metadata.cadenza-scripts, keeping comments, other scripts and the body bytes', () => {
    const md = [
      '---',
      'name: tally',
      'description: Tallies rows.',
      '# a comment the author wrote',
      'metadata:',
      '  cadenza-model: minuet',
      '  cadenza-scripts: |',
      '    - name: old',
      '      path: scripts/old.py',
      '---',
      '',
      'Tally the rows.  ',
      '',
    ].join('\n');
    const written = withScriptEntry(md, entry);
    assert.ok(written.ok);
    assert.match(written.skillMd, /# a comment the author wrote/);
    assert.ok(written.skillMd.endsWith('---\n\nTally the rows.  \n'), 'the body is untouched');
    const parsed = parseSkillMd(written.skillMd, { files: ['SKILL.md', 'scripts/old.py', 'scripts/sum_rows.py'] });
    assert.ok(parsed.ok, JSON.stringify(parsed));
    assert.deepEqual(
      parsed.skill.spec.scripts.map((s) => s.name),
      ['old', 'sum_rows'],
    );
    assert.deepEqual(parsed.skill.spec.scripts[1], entry);
    assert.equal(parsed.skill.spec.tier, 'minuet');
  });

  it('adds to a top-level scripts list (the older form) rather than declaring scripts twice, and creates metadata when none', () => {
    const old = withScriptEntry(
      '---\nname: tally\ndescription: T.\nscripts:\n  - name: old\n    path: scripts/old.py\n---\nBody.\n',
      entry,
    );
    assert.ok(old.ok);
    const parsedOld = parseSkillMd(old.skillMd, { files: ['scripts/old.py', 'scripts/sum_rows.py'] });
    assert.ok(parsedOld.ok && parsedOld.skill.spec.scripts.length === 2);
    assert.doesNotMatch(old.skillMd, /cadenza-scripts/);
    const bare = withScriptEntry('---\nname: tally\ndescription: T.\n---\nBody.\n', entry);
    assert.ok(bare.ok);
    const parsed = parseSkillMd(bare.skillMd, { files: ['scripts/sum_rows.py'] });
    assert.ok(parsed.ok && parsed.skill.spec.scripts[0]!.name === 'sum_rows');
    assert.ok(!withScriptEntry('no frontmatter', entry).ok);
  });

  it('resolves an inline sample as given and an embed id through the lookup; a missing embed names sample_input', async () => {
    assert.deepEqual(await resolveSample({ rows: [] }, owner, async () => 'x'), { ok: true, value: { rows: [] } });
    assert.deepEqual(await resolveSample({ embed: 'e1' }, owner, async (_o, id) => (id === 'e1' ? [1] : undefined)), {
      ok: true,
      value: [1],
    });
    assert.deepEqual(await resolveSample({ embed: 'e2' }, owner, async () => undefined), {
      ok: false,
      error: 'sample_input: embed e2 not found',
    });
    assert.deepEqual(await resolveSample({ embed: 'e3', more: 1 }, owner, async () => undefined), {
      ok: true,
      value: { embed: 'e3', more: 1 },
    });
  });
});
