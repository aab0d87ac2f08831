import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cliEnv, runCli, runCliInTerminal } from '../helpers/cli-process.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { until } from '../../testkit/until.ts';

describe('the cadenza CLI, run as a binary against the stack', () => {
  let stack: TestStack;
  let env: Record<string, string>;
  before(async () => {
    stack = await startTestStack();
    const key = await stack.api.newKey();
    env = cliEnv(stack.url, key);
    await stack.api.createSkill(key, skillMd({ name: 'scanner', tools: ['lab.lookup', 'lab.scan'], maxTurns: 4 }));
  });
  after(() => stack?.stop());

  it('runs a mission to completion with live progress in a terminal: turns, a spinner per tool, durations, the answer', async () => {
    stack.tools.on('lookup', () => ({ delayMs: 1_500, body: { hit: 'found it' } }));
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_look', name: 'lab__lookup', input: { q: 'q' } }] } },
      { reply: { text: 'The lookup found it.' } },
    );
    const term = runCliInTerminal(['run', 'scanner', 'Look it up.'], env);
    const code = await term.done;
    const out = term.output();
    assert.equal(code, 0, out);
    assert.match(out, /Turn 1/);
    assert.match(out, /Turn 2/);
    assert.match(out, /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] lab\.lookup/, 'a spinner while the tool ran');
    const ended = /✓ lab\.lookup tu_look\s+(\d+\.\d)s completed/.exec(out);
    assert.ok(ended, out);
    assert.ok(Number(ended[1]) >= 1.4, `the tool took 1.5 s, shown ${ended[1]} s`);
    assert.match(out, /✓ completed in [\d.]+s · 2 turns · 1 tool calls/);
    assert.match(out, /The lookup found it\./);
  });

  it('Ctrl-C in a terminal asks, and `c` cancels the mission: the run ends cancelled with exit status 7', async () => {
    stack.tools.on('scan', () => ({ hang: true }));
    stack.model.enqueue({ reply: { toolUses: [{ id: 'tu_scan', name: 'lab__scan', input: { target: 'cli' } }] } });
    const term = runCliInTerminal(['run', 'scanner', 'Scan forever.'], env);
    try {
      await until(() => /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] lab\.scan/.test(term.output()), { timeoutMs: 60_000, what: 'the scan spinner' });
      term.type('\u0003');
      await until(() => term.output().includes('[c] cancel the mission, [d] detach'), { timeoutMs: 10_000, what: 'the Ctrl-C question' });
      term.type('c');
      const code = await term.done;
      const out = term.output();
      assert.equal(code, 7, out);
      assert.match(out, /⊘ lab\.scan tu_scan\s+[\d.]+s cancelled/);
      assert.match(out, /✗ cancelled/);
      const id = /mission ([0-9a-f-]{36})/.exec(out)![1]!;
      const listed = await runCli(['missions', 'show', id, '--json'], env);
      assert.equal(JSON.parse(listed.stdout).status, 'cancelled');
    } finally {
      term.kill();
    }
  });

  it('lists, shows and cancels missions, with --json for scripts and exit statuses that mean something', async () => {
    const list = await runCli(['missions', 'list', '--json'], env);
    assert.equal(list.code, 0, list.stderr);
    const page = JSON.parse(list.stdout);
    assert.equal(page.items.length, 2);
    const table = await runCli(['missions', 'list', '--status', 'cancelled'], env);
    assert.match(table.stdout, /^ID\s+STATUS\s+SKILL/);
    assert.equal(table.stdout.trim().split('\n').length, 2, table.stdout);
    const done = page.items.find((m: { status: string }) => m.status === 'completed');
    const show = await runCli(['missions', 'show', done.id], env);
    assert.match(show.stdout, /tu_look\s+lab\.lookup\s+completed/);
    assert.match(show.stdout, /The lookup found it\./);

    const cancelDone = await runCli(['missions', 'cancel', done.id], env);
    assert.equal(cancelDone.code, 5, 'a refusal (409: already completed)');
    assert.match(cancelDone.stderr, /409.*already completed/);
    const toolGone = await runCli(['tools', 'cancel', done.id, 'tu_nope'], env);
    assert.ok([4, 5].includes(toolGone.code!), toolGone.stderr);
    const unknown = await runCli(['missions', 'show', '00000000-0000-4000-8000-000000000000'], env);
    assert.equal(unknown.code, 4);
    const badKey = await runCli(['missions', 'list'], { ...env, CADENZA_API_KEY: 'nope' });
    assert.equal(badKey.code, 3);
    assert.match(badKey.stderr, /401/);
    const down = await runCli(['missions', 'list'], { ...env, CADENZA_URL: 'http://127.0.0.1:9' });
    assert.equal(down.code, 6);
    const usage = await runCli(['missions', 'list', '--limit', 'many'], env);
    assert.equal(usage.code, 2);
    const help = await runCli(['skills', 'import', '--help'], env);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /Usage: cadenza skills import/);
  });

  it('imports a skill folder (quarantined), lists, shows, exports it verbatim and activates it', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'cadenza-cli-')), 'folder-skill');
    mkdirSync(join(dir, 'references'), { recursive: true });
    const md = '---\nname: folder-skill\ndescription: A skill imported from a folder.\n---\nRead references/notes.md first.\n';
    writeFileSync(join(dir, 'SKILL.md'), md);
    writeFileSync(join(dir, 'references', 'notes.md'), 'Notes.\n');
    const imported = await runCli(['skills', 'import', dir, '--json'], env);
    assert.equal(imported.code, 0, imported.stderr);
    const skill = JSON.parse(imported.stdout);
    assert.equal(skill.status, 'quarantined');

    const shown = JSON.parse((await runCli(['skills', 'show', skill.id, '--json'], env)).stdout);
    assert.deepEqual(shown.files.map((f: { path: string }) => f.path).sort(), ['SKILL.md', 'references/notes.md']);
    const out = join(dir, '..', 'exported.md');
    assert.equal((await runCli(['skills', 'export', skill.id, '-o', out], env)).code, 0);
    assert.equal(readFileSync(out, 'utf8'), md);
    const activated = await runCli(['skills', 'activate', skill.id, '--json'], env);
    assert.equal(JSON.parse(activated.stdout).status, 'active');
    const listed = await runCli(['skills', 'list', '--status', 'active'], env);
    assert.match(listed.stdout, /folder-skill\s+1\s+active/);
    const missing = await runCli(['skills', 'import', join(dir, 'nope')], env);
    assert.equal(missing.code, 2);
  });

  it('creates API keys with the admin key, and the new key works', async () => {
    const noAdmin = await runCli(['keys', 'create', '--tenant', 'acme', '--user', 'cli-user'], env);
    assert.equal(noAdmin.code, 3, 'a user key is not the admin key');
    const admin = { ...env, CADENZA_ADMIN_KEY: stack.config.adminKey! };
    const created = await runCli(['keys', 'create', '--tenant', 'acme', '--user', 'cli-user', '--capabilities', 'mission.read'], admin);
    assert.equal(created.code, 0, created.stderr);
    const key = created.stdout.trim();
    assert.match(created.stderr, /acme\/cli-user: mission\.read/);
    const asNewUser = await runCli(['missions', 'list', '--json'], { ...env, CADENZA_API_KEY: key });
    assert.deepEqual(JSON.parse(asNewUser.stdout).items, []);
    const badCap = await runCli(['keys', 'create', '--tenant', 'acme', '--user', 'x', '--capabilities', 'root'], admin);
    assert.equal(badCap.code, 2);

    // The config file is read when the environment names no key.
    const file = join(env.XDG_CONFIG_HOME!, 'cadenza', 'config.json');
    mkdirSync(join(env.XDG_CONFIG_HOME!, 'cadenza'), { recursive: true });
    writeFileSync(file, JSON.stringify({ url: stack.url, apiKey: key }));
    const fromFile = await runCli(['missions', 'list', '--json'], {
      XDG_CONFIG_HOME: env.XDG_CONFIG_HOME!,
      CADENZA_URL: '',
      CADENZA_API_KEY: '',
    });
    assert.equal(fromFile.code, 0, fromFile.stderr);
  });
  it('`chat` talks to a session in a terminal: the answer, a typed message, the next answer; Ctrl-D closes it', async () => {
    const first = stack.model.requests.length;
    stack.model.enqueue({ reply: { text: 'Hello, first answer.' } }, { reply: { text: 'Second answer, weather included.' } });
    const term = runCliInTerminal(['chat', 'scanner', 'Talk to me.'], env);
    try {
      await until(() => term.output().includes('Hello, first answer.') && term.output().includes('your turn'), {
        timeoutMs: 60_000,
        what: 'the first answer',
      });
      term.type('Mind the weather.\r');
      await until(() => term.output().includes('Second answer, weather included.'), { timeoutMs: 60_000, what: 'the second answer' });
      assert.equal(stack.model.requests[first + 1]!.lastUserText, 'Mind the weather.');
      term.type('\u0004');
      const code = await term.done;
      const out = term.output();
      assert.equal(code, 0, out);
      assert.match(out, /✉ message delivered: Mind the weather\./);
      assert.match(out, /✓ completed/);
      const id = /session ([0-9a-f-]{36})/.exec(out)![1]!;
      const ended = await stack.api.getMission(env.CADENZA_API_KEY!, id);
      assert.equal(ended.body.exchanges.length, 2);
    } finally {
      term.kill();
    }
  });

  it('`chat`: Ctrl-C while it works makes the next line an interrupt that stops the running tool; Ctrl-C at the prompt ends it', async () => {
    stack.tools.on('scan', () => ({ hang: true }));
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_chat_scan', name: 'lab__scan', input: { target: 'chat' } }] } },
      { reply: { text: 'Stopped, as you asked.' } },
    );
    const term = runCliInTerminal(['chat', 'scanner', 'Scan it all.'], env);
    try {
      await until(() => /lab\.scan/.test(term.output()), { timeoutMs: 60_000, what: 'the scan running' });
      term.type('\u0003');
      await until(() => term.output().includes('interrupt: type the message'), { timeoutMs: 10_000, what: 'the interrupt prompt' });
      term.type('Stop scanning.\r');
      await until(() => term.output().includes('Stopped, as you asked.'), { timeoutMs: 60_000, what: 'the answer after the interrupt' });
      assert.match(term.output(), /⊘ lab\.scan tu_chat_scan\s+[\d.]+s cancelled/);
      assert.match(term.output(), /✉ interrupt delivered: Stop scanning\./);
      await until(() => term.output().includes('your turn'), { timeoutMs: 10_000, what: 'idle' });
      term.type('\u0003');
      const code = await term.done;
      assert.equal(code, 0, term.output());
      assert.match(term.output(), /✓ completed/);
    } finally {
      term.kill();
    }
  });

  it('sends an idle session a message and closes it: `missions send` and `missions close`', async () => {
    stack.model.enqueue({ reply: { text: 'First.' } }, { reply: { text: 'Second.' } });
    const key = env.CADENZA_API_KEY!;
    const { id: session } = await stack.api.startMission(key, { skill: 'scanner', objective: 'Chat on.', session: true });
    await until(async () => (await stack.api.getMission(key, session)).body.status === 'idle', { timeoutMs: 60_000 });
    const sent = await runCli(['missions', 'send', session, 'And more?', '--json'], env);
    assert.equal(sent.code, 0, sent.stderr);
    assert.equal(JSON.parse(sent.stdout).position, 1);
    await until(async () => (await stack.api.getMission(key, session)).body.exchanges?.length === 2, { timeoutMs: 60_000 });
    const closed = await runCli(['missions', 'close', session], env);
    assert.equal(closed.code, 0, closed.stderr);
    assert.equal((await stack.api.waitForEnd(key, session)).status, 'completed');
    const refused = await runCli(['missions', 'send', session, 'Still there?'], env);
    assert.equal(refused.code, 5, 'a refusal (409): the session ended');
    assert.match(refused.stderr, /start a new mission/);
  });
});
