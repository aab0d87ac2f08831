import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cliEnv, runCli, runCliInTerminal } from '../helpers/cli-process.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { until } from '../../testkit/until.ts';

describe('the cadenza CLI and tools the caller runs', () => {
  let stack: TestStack;
  let env: Record<string, string>;
  before(async () => {
    stack = await startTestStack();
    const key = await stack.api.newKey();
    env = cliEnv(stack.url, key);
    await stack.api.createSkill(key, skillMd({ name: 'desk-cli', tools: ['desk.*'], maxTurns: 3 }));
  });
  after(() => stack?.stop());

  it('run prints each waiting call; tools result sends an output from a file and one from stdin; bad JSON is a usage error', async () => {
    stack.model.setHandler((r) =>
      r.toolResults.length === 0
        ? {
            reply: {
              toolUses: [
                { id: 'tu_file', name: 'desk__ask_user', input: { question: 'Which city?' } },
                { id: 'tu_stdin', name: 'desk__pick_color', input: { hint: 'sky' } },
              ],
            },
          }
        : { reply: { text: `Answers: ${r.toolResults.map((t) => `${t.toolUseId}=${t.content}`).join(' | ')}` } },
    );
    const term = runCliInTerminal(['run', 'desk-cli', 'Ask the user twice.'], env);
    try {
      await until(() => /desk\.pick_color tu_stdin waits for your result/.test(term.output()), {
        timeoutMs: 60_000,
        what: 'the waiting calls',
      });
      const out = term.output();
      assert.match(out, /desk\.ask_user tu_file waits for your result until \S+: \{"question":"Which city\?"\}/);
      const id = /mission ([0-9a-f-]{36})/.exec(out)![1]!;
      assert.match(out, new RegExp(`cadenza tools result ${id} tu_file`), 'the command to answer it, with the mission id');

      const dir = mkdtempSync(join(tmpdir(), 'cadenza-cli-result-'));
      writeFileSync(join(dir, 'bad.json'), '{not json');
      const bad = await runCli(['tools', 'result', id, 'tu_file', '--file', join(dir, 'bad.json')], env);
      assert.equal(bad.code, 2, bad.stderr);
      assert.match(bad.stderr, /not JSON/);
      const refused = await runCli(['tools', 'result', id, 'tu_stdin'], env, undefined, JSON.stringify({ color: 'purple' }));
      assert.equal(refused.code, 5, 'the output schema refused it (400)');
      assert.match(refused.stderr, /output\.color/);

      writeFileSync(join(dir, 'city.json'), JSON.stringify({ city: 'Porto' }));
      const sent = await runCli(['tools', 'result', id, 'tu_file', '--file', join(dir, 'city.json'), '--json'], env);
      assert.equal(sent.code, 0, sent.stderr);
      assert.deepEqual(JSON.parse(sent.stdout), { toolUseId: 'tu_file', status: 'completed' });
      const piped = await runCli(['tools', 'result', id, 'tu_stdin'], env, undefined, JSON.stringify({ color: 'blue' }));
      assert.equal(piped.code, 0, piped.stderr);

      assert.equal(await term.done, 0, term.output());
      assert.match(term.output(), /tu_file=.*Porto/);
      assert.match(term.output(), /tu_stdin=.*blue/);
      const again = await runCli(['tools', 'result', id, 'tu_file', '--error', 'too late'], env);
      assert.equal(again.code, 5, 'the call waits no more (409)');
    } finally {
      term.kill();
    }
  });
});
