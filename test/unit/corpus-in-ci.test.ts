import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';

// Runs the corpus unit test file in a child node process with the corpus pointed at a folder that does not exist.
const runCorpusTests = (env: Record<string, string | undefined>) =>
  spawnSync(process.execPath, ['--test', '--test-reporter=tap', 'test/unit/skill-import.test.ts'], {
    // Without NODE_TEST_CONTEXT the child reports on its own instead of to this runner.
    env: { ...process.env, NODE_TEST_CONTEXT: undefined, CADENZA_CORPUS_DIR: '/nonexistent/cadenza-corpus', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });

describe('corpus tests without the corpus', () => {
  it('fail under CI=true, naming the missing corpus', () => {
    const run = runCorpusTests({ CI: 'true' });
    assert.equal(run.status, 1, run.stdout);
    assert.match(run.stdout, /# fail 2/);
    assert.match(run.stdout, /skills corpus is missing: no MANIFEST\.json in \/nonexistent\/cadenza-corpus/);
  });

  it('skip outside CI, saying why', () => {
    const run = runCorpusTests({ CI: undefined });
    assert.equal(run.status, 0, run.stdout);
    assert.match(run.stdout, /# skipped 2/);
    assert.match(run.stdout, /SKIP no corpus at \/nonexistent\/cadenza-corpus\/ \(under CI=true this test fails instead\)/);
  });
});
