import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

/** Test cases per operation and phase: about two minutes in all on a loaded 2-core machine. */
const MAX_EXAMPLES = '12';
const CONFIG = fileURLToPath(new URL('../fixtures/schemathesis.toml', import.meta.url));

// Excluded, each for a reason: a git import fetches the URL it is given (a fuzzer's URLs would reach out to the
// network; test/integration/skills-import-git.test.ts covers it against a local repository); a zip upload is bytes no schema
// generates (Schemathesis has no zip serializer; the upload tests cover it); a webhook's URL is resolved when it is
// registered and called when events come (a fuzzer's URLs would reach out too, and whether one is refused depends on
// where its name points, which no schema can state; test/integration/webhooks-*.test.ts cover it); the admin routes
// answer only the admin key (their own run below); `/mcp` speaks MCP's JSON-RPC, which MCP's own schemas state and
// test/integration/mcp-server.test.ts drives with the SDK's client; `/a2a` likewise speaks A2A's JSON-RPC
// (test/integration/a2a.test.ts drives it with the A2A SDK's client; the cards stay in the run); `/ag-ui` takes AG-UI's
// RunAgentInput, which its own schemas state (a valid one streams a mission's run until it answers), and
// test/integration/ag-ui.test.ts drives it with the SDK's HttpAgent.
const USER_RUN = [
  '--exclude-path',
  '/api/v1/skills/import/git',
  '--exclude-path',
  '/api/v1/skills/import/zip',
  '--exclude-path',
  '/api/v1/webhooks',
  '--exclude-path',
  '/mcp',
  '--exclude-path',
  '/a2a',
  '--exclude-path',
  '/ag-ui',
  '--exclude-path-regex',
  '^/api/v1/admin/',
];
const ADMIN_RUN = ['--include-path-regex', '^/api/v1/admin/'];

/** Runs Schemathesis (scripts/schemathesis.sh installs it as $SCHEMATHESIS) over the served document; its exit code and output. */
function schemathesis(url: string, key: string, args: string[]): Promise<{ code: number | null; output: string }> {
  const st = process.env.SCHEMATHESIS;
  if (!st) throw new Error('SCHEMATHESIS is not set: run the tests through scripts/test.sh (it sources scripts/schemathesis.sh)');
  const reportDir = mkdtempSync(join(tmpdir(), 'cadenza-schemathesis-'));
  const child = spawn(
    st,
    [
      '--config-file',
      CONFIG,
      'run',
      `${url}/api/v1/openapi.json`,
      '--checks',
      'all',
      // Deterministic generation: the same cases every run (a fixed seed, without Hypothesis's random variation or
      // its database of earlier failures).
      '--generation-deterministic',
      '--max-examples',
      MAX_EXAMPLES,
      // One worker: with two threads Hypothesis's lambda descriptions race on Python's AST recursion counter ("AST
      // constructor recursion depth mismatch", a Runtime Error of the tool that failed CI once, not a finding).
      '--workers',
      '1',
      '--request-timeout',
      '20',
      '--no-color',
      '--header',
      `Authorization: Bearer ${key}`,
      '--report',
      'junit',
      '--report-dir',
      reportDir,
      ...args,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], cwd: reportDir },
  );
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  return new Promise((ok) =>
    child.on('close', (code) => ok({ code, output: output || readFileSync(join(reportDir, 'junit.xml'), 'utf8') })),
  );
}

describe('Schemathesis over the served OpenAPI document', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey();
    // Data for the operations that read: a skill, and a mission run on it.
    await stack.api.createSkill(key, skillMd({ name: 'fuzzed' }));
    await stack.api.startMission(key, { skill: 'fuzzed', objective: 'Say hello.' });
  });
  after(() => stack?.stop());

  it('finds no failure with every check, for a user key', { timeout: 280_000 }, async () => {
    const run = await schemathesis(stack.url, key, USER_RUN);
    assert.equal(run.code, 0, run.output);
  });

  it('finds no failure with every check, for the admin key', { timeout: 120_000 }, async () => {
    const run = await schemathesis(stack.url, stack.config.adminKey!, ADMIN_RUN);
    assert.equal(run.code, 0, run.output);
  });
});
