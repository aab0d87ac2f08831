import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../config/config.ts';
import type { ScriptCall } from '../../skill-scripts/callback-pipe.ts';
import { createScriptRunner, type ScriptOutcome } from '../../skill-scripts/run-script.ts';
import { createSandbox } from '../../skill-scripts/sandbox.ts';
import { alive, pidsWith, waitFor } from '../helpers/processes.ts';

const PROJECT = fileURLToPath(new URL('../../', import.meta.url));
const settings = loadConfig({ SCRIPT_TIMEOUT_S: '30', SCRIPT_CPU_S: '10', SCRIPT_MAX_OUTPUT_KB: '1024' }).scripts;
const runner = createScriptRunner(settings);
// A generous wall clock next to 1 CPU second: on a loaded machine the CPU limit must still be what stops a busy loop.
const oneCpuSecond = createScriptRunner({ ...settings, cpuS: 1 });
const quick = createScriptRunner({ ...settings, timeoutS: 2 });
const MiB = 1024 * 1024;
const smallMemory = createScriptRunner({ ...settings, memoryBytes: 256 * MiB });
const smallTotal = createScriptRunner({ ...settings, memoryBytes: 256 * MiB, memoryTotalBytes: 320 * MiB });
/** A Python script that holds `chunks` × 16 MiB of written memory, saying each step on stderr, then sleeps. */
const holder = (chunks: number, sleepS = 0) =>
  `import sys, time\nheld = []\nfor i in range(1, ${chunks + 1}):\n    held.append(b"x" * (16 * 1024 * 1024))\n    sys.stderr.write(f"held {i * 16} MiB\\n")\n    sys.stderr.flush()\ntime.sleep(${sleepS})\nprint(len(held) * 16)\n`;
const noCalls = async () => ({ ok: false as const, error: 'no calls in this test' });

/** Runs one script file in the real sandbox; `marker` lands in its argv so the test can find its processes. */
function run(
  code: string,
  opts: { path?: string; args?: unknown; signal?: AbortSignal; onCall?: (c: ScriptCall) => Promise<never>; using?: typeof runner } = {},
): Promise<ScriptOutcome> {
  const path = opts.path ?? 'scripts/main.py';
  return (opts.using ?? runner).run({
    files: [
      { path: 'SKILL.md', data: Buffer.from('---\nname: t\ndescription: t\n---\nt\n') },
      { path, data: Buffer.from(code) },
    ],
    script: { name: path, path, runtime: path.endsWith('.py') ? 'python' : 'node', postconditions: [] },
    args: opts.args ?? {},
    signal: opts.signal ?? new AbortController().signal,
    onCall: opts.onCall ?? noCalls,
  });
}
const output = (r: ScriptOutcome) => {
  assert.ok(r.ok, JSON.stringify(r));
  return (r.result as { output: unknown }).output;
};
const failure = (r: ScriptOutcome) => {
  assert.ok(!r.ok, `expected an error, got ${JSON.stringify(r).slice(0, 500)}`);
  return r.error;
};

describe('skill scripts in the bubblewrap sandbox', () => {
  let server: Server;
  let port = 0;
  let connections = 0;
  let otherSkill: string;
  before(async () => {
    server = createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
    // Another skill's files on the host, as a concurrent run would hydrate them.
    otherSkill = mkdtempSync(join(tmpdir(), 'cadenza-other-skill-'));
    writeFileSync(join(otherSkill, 'secret.txt'), 'other skill secret');
  });
  after(() => {
    server.close();
    rmSync(otherSkill, { recursive: true, force: true });
  });

  it('runs a Python script: args as JSON on stdin and a list as argv, JSON on stdout is the result', async () => {
    const code =
      'import json, sys\nargs = json.load(sys.stdin)\nprint(json.dumps({"args": args, "argv": sys.argv[1:], "sum": sum(int(a) for a in args)}))\n';
    assert.deepEqual(output(await run(code, { args: ['1', 2, '3'] })), { args: ['1', 2, '3'], argv: ['1', '2', '3'], sum: 6 });
  });

  it('runs a Node script, and returns text that is not JSON as text', async () => {
    const code =
      "let s = '';\nfor await (const c of process.stdin) s += c;\nconsole.log(`hello ${JSON.parse(s).who} from ${process.version}`);\n";
    assert.match(String(output(await run(code, { path: 'scripts/hello.mjs', args: { who: 'sandbox' } }))), /^hello sandbox from v\d+/);
  });

  it('has no network: a connection to a server on the host’s loopback fails, and the server sees nothing', async () => {
    const code = `import json, socket
results = {}
for host in ["127.0.0.1", "localhost", "10.0.0.1"]:
    try:
        socket.create_connection((host, ${port}), timeout=2).close()
        results[host] = "connected"
    except OSError as e:
        results[host] = type(e).__name__
print(json.dumps(results))
`;
    const results = output(await run(code)) as Record<string, string>;
    for (const [host, outcome] of Object.entries(results)) assert.notEqual(outcome, 'connected', host);
    assert.equal(connections, 0, 'the loopback server saw no connection');
  });

  it('reads nothing outside its bundle: not the project, not /etc/shadow, not another skill’s files', async () => {
    const paths = [
      join(PROJECT, 'package.json'),
      join(PROJECT, '.env.example'),
      join(PROJECT, '.data'),
      '/etc/shadow',
      '/etc/passwd',
      join(otherSkill, 'secret.txt'),
      '/root/.bash_history',
      '/proc/1/environ',
    ];
    const code = `import json, os
paths = ${JSON.stringify(paths)}
seen = {}
for p in paths:
    try:
        with open(p, "rb") as f:
            seen[p] = "read " + str(len(f.read()))
    except OSError as e:
        seen[p] = type(e).__name__
seen["own"] = open("/skill/SKILL.md").read()[:3]
seen["listing"] = sorted(os.listdir("/"))
print(json.dumps(seen))
`;
    const seen = output(await run(code)) as Record<string, unknown>;
    for (const path of paths) assert.doesNotMatch(String(seen[path]), /^read/, `${path} was readable: ${String(seen[path])}`);
    assert.equal(seen.own, '---', 'its own bundle is readable');
    // `/out` is the run's own writable folder for the files it returns, empty at the start.
    const runtime = new Set(['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32', 'usr', 'root', 'dev', 'proc', 'tmp', 'skill', 'out']);
    for (const dir of seen.listing as string[]) assert.ok(runtime.has(dir), `/${dir} of the host is visible`);
  });

  it('sees none of the server’s environment', async () => {
    process.env.CADENZA_TEST_SECRET = `secret-${randomBytes(6).toString('hex')}`;
    try {
      const code = `import json, os
env = dict(os.environ)
try:
    env["proc1"] = open("/proc/1/environ").read()
except OSError as e:
    env["proc1"] = type(e).__name__
env["self"] = open("/proc/self/environ").read()
print(json.dumps(env))
`;
      const env = output(await run(code)) as Record<string, string>;
      assert.ok(!JSON.stringify(env).includes(process.env.CADENZA_TEST_SECRET), 'the secret leaked');
      assert.ok(!JSON.stringify(env).includes('DATABASE_URL') && !JSON.stringify(env).includes('TEMPORAL'), 'a server variable leaked');
      const { proc1: _p, self: _s, ...vars } = env;
      assert.deepEqual(Object.keys(vars).sort(), ['CADENZA_TOOL_FD', 'HOME', 'LANG', 'PATH', 'PWD', 'TMPDIR']);
    } finally {
      delete process.env.CADENZA_TEST_SECRET;
    }
  });

  it('writes only to its private /tmp: the bundle, the runtime and the host stay untouched', async () => {
    const escape = join(PROJECT, `escaped-${randomBytes(4).toString('hex')}`);
    const targets = ['/skill/new.txt', '/skill/SKILL.md', '/usr/pwned', '/pwned', escape, '/root/pwned'];
    const code = `import json
out = {}
for p in ${JSON.stringify(targets)}:
    try:
        with open(p, "w") as f:
            f.write("x")
        out[p] = "written"
    except OSError as e:
        out[p] = type(e).__name__
with open("/tmp/ok.txt", "w") as f:
    f.write("fine")
out["tmp"] = open("/tmp/ok.txt").read()
print(json.dumps(out))
`;
    const out = output(await run(code)) as Record<string, string>;
    for (const target of targets) assert.notEqual(out[target], 'written', target);
    assert.equal(out.tmp, 'fine');
    assert.ok(!existsSync(escape));
  });

  it('cannot make user namespaces or reach the keyring and eBPF, while fork and spawn still work', async () => {
    const syscalls = process.arch === 'arm64' ? { clone: 220, keyctl: 219, bpf: 280 } : { clone: 56, keyctl: 250, bpf: 321 };
    const code = `import ctypes, json, os, subprocess
libc = ctypes.CDLL(None, use_errno=True)
def attempt(nr, *args):
    r = libc.syscall(nr, *args)
    if r == 0 and nr == ${syscalls.clone}:
        os._exit(0)
    if r > 0:
        os.waitpid(r, 0)
    return "allowed" if r >= 0 else os.strerror(ctypes.get_errno())
out = {
    "unshare": attempt(ctypes.c_long(${process.arch === 'arm64' ? 97 : 272}), ctypes.c_long(0x10000000)),
    "clone_newuser": attempt(${syscalls.clone}, ctypes.c_ulong(0x10000000 | 17), None, None, None, None),
    "keyctl": attempt(${syscalls.keyctl}, 0, 0),
    "bpf": attempt(${syscalls.bpf}, 0, None, 0),
}
pid = os.fork()
if pid == 0:
    os._exit(7)
out["fork"] = os.waitpid(pid, 0)[1] >> 8
out["spawn"] = subprocess.run(["/usr/bin/true"]).returncode
print(json.dumps(out))
`;
    const out = output(await run(code)) as Record<string, unknown>;
    assert.deepEqual(out, {
      unshare: 'Operation not permitted',
      clone_newuser: 'Operation not permitted',
      keyctl: 'Operation not permitted',
      bpf: 'Operation not permitted',
      fork: 7,
      spawn: 0,
    });
  });

  it('contains a fork bomb under its process limit, and leaves no process behind', async () => {
    const marker = `bomb-${randomBytes(4).toString('hex')}`;
    const code = `import json, os, sys, time
root = os.getpid()
forked = 0
while True:
    try:
        pid = os.fork()
    except OSError as e:
        if os.getpid() == root:
            print(json.dumps({"forked": forked, "error": e.strerror}), flush=True)
            os._exit(0)
        time.sleep(2)
        os._exit(0)
    if pid and os.getpid() == root:
        forked += 1
`;
    const result = output(await run(code, { args: [marker] })) as { forked: number; error: string };
    assert.ok(result.forked < settings.maxProcesses, `forked ${result.forked}`);
    assert.match(result.error, /Resource temporarily unavailable/);
    await waitFor('the bomb’s processes to be gone', () => (pidsWith(marker).length === 0 ? true : undefined), 5_000);
  });

  it('holds a script to its open-file limit', async () => {
    const code =
      'import json\nfiles = []\ntry:\n    while True:\n        files.append(open("/skill/SKILL.md"))\nexcept OSError as e:\n    print(json.dumps({"opened": len(files), "error": e.strerror}))\n';
    const result = output(await run(code)) as { opened: number; error: string };
    assert.ok(result.opened < settings.maxOpenFiles, `opened ${result.opened}`);
    assert.equal(result.error, 'Too many open files');
  });

  it('limits resident memory, not address space: Node starts at 256 MiB, a 400 MiB Python hog stops near 256 MiB', async () => {
    const node = 'console.log(JSON.stringify({ started: process.memoryUsage().rss > 0 }))';
    assert.deepEqual(output(await run(node, { path: 'scripts/main.mjs', using: smallMemory })), { started: true });
    const error = failure(await run(holder(25), { using: smallMemory }));
    assert.match(error, /was killed: it went over its memory limit of 256 MiB \(SCRIPT_MEMORY_MB\)/);
    const held = Math.max(...[...error.matchAll(/held (\d+) MiB/g)].map((m) => Number(m[1])));
    assert.ok(held >= 192 && held < 256, `held ${held} MiB before it was stopped`);
  });

  it('holds all running scripts together to SCRIPT_MEMORY_TOTAL_MB', async () => {
    // Two scripts of 192 MiB each: either fits its own 256 MiB, both together do not fit the 320 MiB total.
    const outcomes = await Promise.all([run(holder(12, 5), { using: smallTotal }), run(holder(12, 5), { using: smallTotal })]);
    const errors = outcomes.flatMap((o) => (o.ok ? [] : [o.error]));
    assert.equal(errors.length, 1, JSON.stringify(outcomes).slice(0, 1000));
    assert.match(errors[0]!, /was killed: it went over the 320 MiB all running scripts share \(SCRIPT_MEMORY_TOTAL_MB\)/);
    assert.equal(output(outcomes.find((o) => o.ok)!), 192);
  });

  it('kills a CPU-bound infinite loop at its CPU limit, and a sleeping one at the wall-clock limit', async () => {
    assert.match(
      failure(await run('while True:\n    pass\n', { using: oneCpuSecond })),
      /killed by SIGXCPU: it used its 1 CPU seconds \(SCRIPT_CPU_S\)/,
    );
    const sleeper = 'import time\nwhile True:\n    time.sleep(1)\n';
    assert.match(failure(await run(sleeper, { using: quick })), /timed out after 2 s \(SCRIPT_TIMEOUT_S\) and was killed/);
  });

  it('kills a script printing 100 MB as soon as it passes the output limit', async () => {
    const marker = `flood-${randomBytes(4).toString('hex')}`;
    const code = 'import sys\nfor _ in range(100):\n    sys.stdout.write("x" * 1024 * 1024)\n';
    assert.match(failure(await run(code, { args: [marker] })), /printed more than 1024 KiB \(SCRIPT_MAX_OUTPUT_KB\) and was killed/);
    assert.deepEqual(pidsWith(marker), []);
  });

  it('kills the whole process tree when the call is cancelled mid-run', async () => {
    const marker = `cancel-${randomBytes(4).toString('hex')}`;
    const code = 'import os, time\nif os.fork() == 0:\n    time.sleep(60)\ntime.sleep(60)\n';
    const abort = new AbortController();
    const running = run(code, { args: [marker], signal: abort.signal });
    const pids = await waitFor('the script and its child to start', () => {
      const found = pidsWith(marker);
      return found.length >= 2 ? found : undefined;
    });
    abort.abort(new Error('cancelled by the test'));
    await assert.rejects(running, /cancelled by the test/);
    await waitFor('every process of the script to be gone', () => (pids.every((pid) => !alive(pid)) ? true : undefined), 3_000);
  });

  it('refuses, saying why, when there is no sandbox or no interpreter, and never runs the script bare', async () => {
    const path = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      const bare = createScriptRunner(settings);
      const error = failure(
        await bare.run({
          files: [{ path: 'scripts/a.mjs', data: Buffer.from('console.log("ran")') }],
          script: { name: 'a', path: 'scripts/a.mjs', runtime: 'node', postconditions: [] },
          args: {},
          signal: new AbortController().signal,
          onCall: noCalls,
        }),
      );
      assert.match(error, /a was not run: bubblewrap \(bwrap\) is not installed/);
    } finally {
      process.env.PATH = path;
    }
    // bubblewrap present but the sandbox cannot be built (here: a folder to bind is missing): refused, not run.
    const broken = await createSandbox(settings).run({
      interpreter: { path: '/usr/bin/true', flags: [], binds: ['/nonexistent/runtime'] },
      bundleDir: '/nonexistent/bundle',
      outDir: '/nonexistent/out',
      scriptPath: 'x.py',
      argv: [],
      stdin: '{}',
      signal: new AbortController().signal,
      onCall: noCalls,
    });
    assert.equal(broken.end, 'unavailable');
    assert.match((broken as { reason: string }).reason, /the sandbox could not be created: bwrap: .*nonexistent/);
    const noPython = createScriptRunner({ ...settings, python: '/nonexistent/python3' });
    const error = failure(
      await noPython.run({
        files: [{ path: 'scripts/a.py', data: Buffer.from('print(1)') }],
        script: { name: 'a', path: 'scripts/a.py', runtime: 'python', postconditions: [] },
        args: {},
        signal: new AbortController().signal,
        onCall: noCalls,
      }),
    );
    assert.match(error, /a was not run: no python interpreter/);
  });
});

describe('the sandbox for a server that is not root (as the container image runs)', () => {
  it(
    'maps the caller into a user namespace of its own and holds the same line: empty environment, process limit',
    { skip: process.getuid?.() !== 0 && 'needs root to start a process as another user' },
    async () => {
      // An unprivileged user cannot reach this Node under /root: give it a copy it may run.
      const dir = mkdtempSync(join(tmpdir(), 'cadenza-unprivileged-'));
      const uid = 65534;
      try {
        chmodSync(dir, 0o755);
        copyFileSync(process.execPath, join(dir, 'node'));
        chmodSync(join(dir, 'node'), 0o755);
        const spawner = `const { spawn } = await import('node:child_process');
let started = 0, refused = '';
for (let i = 0; i < 100; i++) {
  const ok = await new Promise((resolve) => {
    const c = spawn('/usr/bin/sleep', ['5']);
    c.on('spawn', () => resolve(true));
    c.on('error', (e) => { refused = e.code; resolve(false); });
  });
  if (!ok) break;
  started += 1;
}
console.log(JSON.stringify({ uid: process.getuid(), env: Object.keys(process.env).sort(), started, refused }));
process.exit(0);
`;
        // The check loads the project as root, then drops to the unprivileged user before it runs anything: the
        // checkout (and its node_modules) may sit in a folder only root can read, as a clone into \`mktemp -d\` does.
        const check = `import { loadConfig } from ${JSON.stringify(join(PROJECT, 'config/config.ts'))};
import { createScriptRunner } from ${JSON.stringify(join(PROJECT, 'skill-scripts/run-script.ts'))};
process.setgroups([]);
process.setgid(${uid});
process.setuid(${uid});
const settings = loadConfig({ SCRIPT_NODE: ${JSON.stringify(join(dir, 'node'))}, SCRIPT_MAX_PROCESSES: '32' }).scripts;
const outcome = await createScriptRunner(settings).run({
  files: [{ path: 'scripts/spawner.mjs', data: Buffer.from(${JSON.stringify(spawner)}) }],
  script: { name: 'spawner', path: 'scripts/spawner.mjs', runtime: 'node', postconditions: [] },
  args: {}, signal: new AbortController().signal, onCall: async () => ({ ok: false, error: 'none' }),
});
console.log(JSON.stringify(outcome));
`;
        writeFileSync(join(dir, 'check.ts'), check, { mode: 0o644 });
        const result = spawnSync(join(dir, 'node'), [join(dir, 'check.ts')], {
          cwd: dir,
          encoding: 'utf8',
          env: { PATH: '/usr/bin:/bin', CADENZA_TEST_SECRET: 'unprivileged-secret' },
          timeout: 60_000,
        });
        assert.equal(result.status, 0, result.stderr);
        const outcome = JSON.parse(result.stdout) as ScriptOutcome;
        const seen = output(outcome) as { uid: number; env: string[]; started: number; refused: string };
        assert.equal(seen.uid, uid, 'the script runs as the caller, mapped into its own namespace');
        assert.deepEqual(seen.env, ['CADENZA_TOOL_FD', 'HOME', 'LANG', 'PATH', 'PWD', 'TMPDIR']);
        assert.ok(seen.started < 32, `started ${seen.started} processes`);
        assert.equal(seen.refused, 'EAGAIN', 'the process limit refused the rest');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
