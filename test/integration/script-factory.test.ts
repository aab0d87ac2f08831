import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { bundleFiles } from '../../skills/bundle.ts';
import type { MissionEvent } from '../../contracts/events.ts';
import { scriptFactoryWorkflowId } from '../../contracts/script-factory.ts';
import { eventsOf } from '../../testkit/api-client.ts';
import { parseToolResult } from '../helpers/model-form.ts';
import { alive, pidsWith, waitFor } from '../helpers/processes.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { spawnWorker } from '../helpers/worker-process.ts';

const SAMPLE = { rows: [{ amount: 2 }, { amount: 5 }] };
const EXPECTED = ['total == 7', 'count == 2'];
const RIGHT =
  'import json, sys\nd = json.load(sys.stdin)\nprint(json.dumps({"total": sum(r["amount"] for r in d["rows"]), "count": len(d["rows"])}))';
/** A script whose output misses the checks in its own way (a different error each time). */
const wrong = (total: number) => `import json, sys\njson.load(sys.stdin)\nprint(json.dumps({"total": ${total}, "count": 2}))`;

type Stack = TestStack;

/** The helpers every scenario of this file uses, on one stack. */
function factoryScenario(current: () => Stack, key: () => string) {
  const createScript = (id: string, input: Record<string, unknown>) => ({
    reply: {
      toolUses: [
        {
          id,
          name: 'create_script',
          input: { description: 'Sums the amounts of the rows and counts them.', sample_input: SAMPLE, expected: EXPECTED, ...input },
        },
      ],
    },
  });
  const factoryRequests = () => current().model.requests.filter((r) => r.factory);
  const skillRow = (name: string) =>
    current().db.selectFrom('skills').selectAll().where('name', '=', name).where('owner_id', '=', 'factory-user').executeTakeFirstOrThrow();
  const versions = async (name: string) =>
    current()
      .db.selectFrom('skill_versions')
      .selectAll()
      .where('skill_id', '=', (await skillRow(name)).id)
      .orderBy('version')
      .execute();
  /** Runs one mission whose first turn calls create_script, then answers; returns the mission and the factory's result. */
  async function runFactory(toolUseId: string, input: Record<string, unknown>) {
    current().model.enqueue(createScript(toolUseId, input), { reply: { text: 'Factory done.' } });
    const { id } = await current().api.startMission(key(), { skill: 'factory-host', objective: 'Write the script.' });
    const mission = await current().api.waitForEnd(key(), id);
    const result = current()
      .model.requests.filter((r) => !r.factory)
      .at(-1)!
      .toolResults.find((r) => r.toolUseId === toolUseId)!;
    return { id, mission, result };
  }
  return { factoryRequests, skillRow, versions, runFactory };
}

async function addSkills(stack: Stack, key: string) {
  await stack.api.createSkill(key, skillMd({ name: 'factory-host', maxTurns: 3 }));
  for (const name of ['tally', 'tally-live', 'tally-repeat', 'tally-limit', 'tally-cancel']) {
    await stack.api.createSkill(key, skillMd({ name, body: 'Tally rows with the scripts.' }));
  }
  // A draft: the factory's version becomes its active version (the skill is out of use until the owner activates it).
  const tally = await stack.db.selectFrom('skills').select('id').where('name', '=', 'tally').executeTakeFirstOrThrow();
  assert.equal((await stack.api.request('POST', `/api/v1/skills/${tally.id}/deactivate`, { key })).status, 200);
}

describe('the script factory (create_script)', () => {
  let stack: Stack;
  let key: string;
  const s = factoryScenario(
    () => stack,
    () => key,
  );
  before(async () => {
    stack = await startTestStack({ env: { FACTORY_MAX_ATTEMPTS: '4' } });
    key = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'factory-user' });
    await addSkills(stack, key);
  });
  after(() => stack.stop());

  it('converges on the third attempt, feeding each error back; the version runs through run_skill_script', async () => {
    stack.model.enqueueScripts(wrong(0), 'import json, sys\nd = json.load(sys.stdin\nprint(d)', RIGHT);
    const { id, mission, result } = await s.runFactory('tu_conv', { skill: 'tally', name: 'sum_rows' });
    assert.equal(mission.status, 'completed');
    assert.equal(result.isError, false, result.content);
    const reply = parseToolResult(result.content) as {
      stoppedBy: string;
      version: number;
      status: string;
      attempts: Array<{ passed: boolean }>;
    };
    assert.equal(reply.stoppedBy, 'converged');
    assert.equal(reply.version, 2);
    assert.deepEqual(
      reply.attempts.map((a) => a.passed),
      [false, false, true],
    );
    const prompts = s.factoryRequests();
    assert.equal(prompts.length, 3);
    assert.doesNotMatch(prompts[0]!.lastUserText, /previous script/);
    assert.match(prompts[1]!.lastUserText, /total == 7 \(total is 0\)/, 'the second attempt sees the first one’s failed check');
    assert.match(prompts[2]!.lastUserText, /SyntaxError/, 'the third sees the second one’s error');

    const progress = eventsOf((await stack.api.readEvents(key, id)).frames).filter(
      (e): e is Extract<MissionEvent, { type: 'tool_attempt' }> => e.type === 'tool_attempt',
    );
    assert.deepEqual(
      progress.map((e) => [e.toolUseId, e.progress, e.total]),
      [
        ['tu_conv', 1, 4],
        ['tu_conv', 2, 4],
        ['tu_conv', 3, 4],
      ],
    );
    assert.match(progress[2]!.message, /attempt 3; the last failed: .*SyntaxError/s);

    // The call is an embed like any tool's: stored, finished, holding the answer the model got.
    const embedId = mission.tools.find((t: { toolUseId: string }) => t.toolUseId === 'tu_conv')!.embedId as string;
    const embed = await stack.api.request('GET', `/api/v1/embeds/${embedId}`, { key });
    assert.equal(embed.status, 200);
    const stored = embed.body as { status: string; tool: string; result: { stoppedBy: string; version: number } };
    assert.deepEqual(
      [stored.status, stored.tool, stored.result.stoppedBy, stored.result.version],
      ['finished', 'system.create_script', 'converged', 2],
    );

    const tally = await s.skillRow('tally');
    assert.equal(tally.active_version, 2, 'a draft skill takes the version as its active one');
    const [, v2] = await s.versions('tally');
    const audit = v2!.audit as { factory: { stoppedBy: string; attempts: unknown[] } };
    assert.equal(audit.factory.stoppedBy, 'converged');
    assert.equal(audit.factory.attempts.length, 3);
    assert.deepEqual(v2!.spec.scripts, [
      {
        name: 'sum_rows',
        path: 'scripts/sum_rows.py',
        description: 'Sums the amounts of the rows and counts them.',
        runtime: 'python',
        postconditions: EXPECTED,
      },
    ]);
    assert.match(v2!.skill_md, /cadenza-scripts/);
    assert.match(v2!.skill_md, /\nTally rows with the scripts\.\n$/, 'the body is kept as it was');
    const bundle = await stack.db
      .selectFrom('skill_bundles')
      .select('bytes')
      .where('sha256', '=', v2!.bundle_sha256!)
      .executeTakeFirstOrThrow();
    const script = (await bundleFiles(bundle.bytes)).find((f) => f.path === 'scripts/sum_rows.py')!;
    assert.equal(script.data.toString('utf8'), `${RIGHT}\n`);

    // The owner reviews and activates it; a mission then runs the script on other rows and its postconditions pass.
    assert.equal((await stack.api.request('POST', `/api/v1/skills/${tally.id}/activate`, { key })).status, 200);
    stack.model.enqueue(
      {
        reply: {
          toolUses: [
            { id: 'tu_run', name: 'run_skill_script', input: { script: 'sum_rows', args: { rows: [{ amount: 3 }, { amount: 4 }] } } },
          ],
        },
      },
      { reply: { text: 'Summed.' } },
    );
    const run = await stack.api.startMission(key, { skill: 'tally', objective: 'Sum the rows.' });
    assert.equal((await stack.api.waitForEnd(key, run.id)).status, 'completed');
    const ran = stack.model.requests.at(-1)!.toolResults.find((r) => r.toolUseId === 'tu_run')!;
    assert.equal(ran.isError, false, ran.content);
    const out = parseToolResult(ran.content) as { output: unknown; postconditions: Array<{ status: string }> };
    assert.deepEqual(out.output, { total: 7, count: 2 });
    assert.deepEqual(
      out.postconditions.map((c) => c.status),
      ['passed', 'passed'],
    );
  });

  it('on an active skill, stores the version as a draft for review: the active version keeps running', async () => {
    stack.model.reset();
    stack.model.enqueueScripts(RIGHT);
    const { result } = await s.runFactory('tu_live', { skill: 'tally-live', name: 'sum_rows' });
    assert.equal(result.isError, false, result.content);
    assert.match((parseToolResult(result.content) as { message: string }).message, /version 2 of tally-live holds the script as a draft/);
    const row = await s.skillRow('tally-live');
    assert.deepEqual([row.status, row.active_version, row.draft_version], ['active', 1, 2]);
    const detail = await stack.api.request('GET', `/api/v1/skills/${row.id}?version=2`, { key });
    assert.equal(detail.body.draftVersion, 2);
    assert.equal(detail.body.audit.factory.stoppedBy, 'converged');
    // The owner's review puts it in use.
    const activated = await stack.api.request('POST', `/api/v1/skills/${row.id}/activate`, { key });
    assert.deepEqual([activated.status, activated.body.version, activated.body.status], [200, 2, 'active']);
    const after = await s.skillRow('tally-live');
    assert.deepEqual([after.active_version, after.draft_version], [2, null]);
  });

  it('stops at once when an attempt fails with the same error as the one before (line numbers aside)', async () => {
    stack.model.reset();
    const keyError = 'import json, sys\nd = json.load(sys.stdin)\nprint(d["items"])';
    stack.model.enqueueScripts(keyError, `# moved down a line\n${keyError}`, RIGHT);
    const before = (await s.versions('tally-repeat')).length;
    const { result } = await s.runFactory('tu_rep', { skill: 'tally-repeat', name: 'sum_rows' });
    assert.equal(result.isError, true);
    assert.match(result.content, /attempt 2 failed with the same error as attempt 1: .*KeyError: 'items'/s);
    assert.equal((parseToolResult(result.content.replace(/^error: /, '')) as { stoppedBy: string }).stoppedBy, 'repeated_error');
    assert.equal(s.factoryRequests().length, 2, 'no third attempt');
    assert.equal((await s.versions('tally-repeat')).length, before, 'nothing stored');
  });

  it('stops after FACTORY_MAX_ATTEMPTS attempts and returns their record', async () => {
    stack.model.reset();
    stack.model.enqueueScripts(wrong(1), wrong(2), wrong(3), wrong(4), RIGHT);
    const { mission, result } = await s.runFactory('tu_lim', { skill: 'tally-limit', name: 'sum_rows' });
    assert.equal(result.isError, true);
    const embedId = mission.tools.find((t: { toolUseId: string }) => t.toolUseId === 'tu_lim')!.embedId as string;
    const embed = (await stack.api.request('GET', `/api/v1/embeds/${embedId}`, { key })).body as { status: string; error: string };
    assert.equal(embed.status, 'error');
    assert.match(embed.error, /all 4 attempts/);
    assert.match(result.content, /all 4 attempts \(FACTORY_MAX_ATTEMPTS\) failed; the last: .*total is 4/s);
    const record = parseToolResult(result.content.replace(/^error: /, '')) as {
      stoppedBy: string;
      attempts: Array<{ attempt: number; error: string }>;
    };
    assert.equal(record.stoppedBy, 'attempt_limit');
    assert.deepEqual(
      record.attempts.map((a) => a.attempt),
      [1, 2, 3, 4],
    );
    assert.equal(s.factoryRequests().length, 4);
    assert.equal((await s.versions('tally-limit')).length, 1, 'nothing stored');
  });

  it('answers a problem with the request before any attempt: an unknown embed names sample_input', async () => {
    stack.model.reset();
    const { result } = await s.runFactory('tu_embed', { skill: 'tally', name: 'from_embed', sample_input: { embed: 'emb_someone_elses' } });
    assert.equal(result.isError, true);
    assert.match(result.content, /sample_input: embed emb_someone_elses not found/);
    const bad = await s.runFactory('tu_bad', { skill: 'tally', name: 'sum_rows', expected: ['total = 7'] });
    assert.match(bad.result.content, /expected: 'total = 7' expects an operator/);
    const taken = await s.runFactory('tu_taken', { skill: 'tally', name: 'sum_rows' });
    assert.match(taken.result.content, /name: skill tally already has a script named sum_rows/);
    assert.equal(s.factoryRequests().length, 0, 'no model call was made');
  });

  it('runs on real data: the sample given as the embed of an earlier tool result; someone else’s embed is not found', async () => {
    stack.model.reset();
    /** A mission of `owner` that calls lab.lookup once; the call's embed id. */
    const embedOfLookup = async (owner: string) => {
      stack.tools.on('lookup', () => ({ body: SAMPLE }));
      stack.model.enqueue(
        { reply: { toolUses: [{ id: 'tu_look', name: 'lab__lookup', input: { q: 'rows' } }] } },
        { reply: { text: 'Looked up.' } },
      );
      const { id } = await stack.api.startMission(owner, { skill: 'lookup-host', objective: 'Look the rows up.' });
      const mission = await stack.api.waitForEnd(owner, id);
      assert.equal(mission.status, 'completed');
      return mission.tools[0].embedId as string;
    };
    const stranger = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'someone-else' });
    await stack.api.createSkill(key, skillMd({ name: 'lookup-host', tools: ['lab.lookup'] }));
    await stack.api.createSkill(stranger, skillMd({ name: 'lookup-host', tools: ['lab.lookup'] }));

    const theirs = await embedOfLookup(stranger);
    const refused = await s.runFactory('tu_theirs', { skill: 'tally', name: 'from_their_embed', sample_input: { embed: theirs } });
    assert.equal(refused.result.isError, true);
    assert.match(refused.result.content, new RegExp(`sample_input: embed ${theirs} not found`));
    assert.equal(s.factoryRequests().length, 0, 'no attempt on someone else’s data');

    const mine = await embedOfLookup(key);
    stack.model.enqueueScripts(RIGHT);
    const { result } = await s.runFactory('tu_mine', { skill: 'tally', name: 'from_my_embed', sample_input: { embed: mine } });
    assert.equal(result.isError, false, result.content);
    assert.equal((parseToolResult(result.content) as { stoppedBy: string }).stoppedBy, 'converged');
    assert.match(s.factoryRequests()[0]!.lastUserText, /"amount"/, 'the attempt saw the embed’s rows');
  });

  it('cancelling the tool call cancels the factory and kills its sandbox; no version is stored', async () => {
    stack.model.reset();
    const name = `wait_${randomBytes(4).toString('hex')}`;
    stack.model.enqueueScripts('import time\ntime.sleep(120)');
    stack.model.enqueue(
      {
        reply: {
          toolUses: [
            {
              id: 'tu_cancel',
              name: 'create_script',
              input: { skill: 'tally-cancel', name, description: 'Waits.', sample_input: SAMPLE, expected: EXPECTED },
            },
          ],
        },
      },
      { reply: { text: 'Cancelled, fine.' } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'factory-host', objective: 'Write a slow script.' });
    const pids = await waitFor('the attempt’s sandbox', () => (pidsWith(name).length > 0 ? pidsWith(name) : undefined), 60_000);
    assert.equal((await stack.api.request('POST', `/api/v1/missions/${id}/tools/tu_cancel/cancel`, { key })).status, 202);
    await waitFor('the sandbox to be gone', () => (pids.every((pid) => !alive(pid)) ? true : undefined), 15_000);
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');
    assert.deepEqual(
      mission.tools.map((t: { status: string }) => t.status),
      ['cancelled'],
    );
    const child = await stack.temporal.workflow.getHandle(scriptFactoryWorkflowId(id, 1, 'tu_cancel')).describe();
    assert.equal(child.status.name, 'CANCELLED');
    assert.equal((await s.versions('tally-cancel')).length, 1, 'no version');
  });
});

describe('the script factory across a worker’s death', () => {
  let stack: Stack;
  let key: string;
  const s = factoryScenario(
    () => stack,
    () => key,
  );
  before(async () => {
    stack = await startTestStack({ worker: false });
    key = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'factory-user' });
    await addSkills(stack, key);
  });
  after(() => stack.stop());

  it('a worker killed during attempt 2 resumes at attempt 2: no attempt is written again', async () => {
    const name = `slow_${randomBytes(4).toString('hex')}`;
    // Attempt 2 takes a few seconds to pass: long enough to kill the worker while it runs.
    stack.model.enqueueScripts(wrong(0), `import time\ntime.sleep(3)\n${RIGHT}`);
    stack.model.enqueue(
      {
        reply: {
          toolUses: [
            {
              id: 'tu_crash',
              name: 'create_script',
              input: { skill: 'tally', name, description: 'Sums.', sample_input: SAMPLE, expected: EXPECTED },
            },
          ],
        },
      },
      { reply: { text: 'Survived.' } },
    );
    const first = await spawnWorker(stack.env);
    const { id } = await stack.api.startMission(key, { skill: 'factory-host', objective: 'Write it despite a crash.' });
    await waitFor('attempt 2’s sandbox', () => (s.factoryRequests().length === 2 && pidsWith(name).length > 0 ? true : undefined), 60_000);
    assert.notEqual(await first.kill('SIGKILL'), 0);
    const second = await spawnWorker(stack.env);
    try {
      const mission = await stack.api.waitForEnd(key, id);
      assert.equal(mission.status, 'completed');
      const result = stack.model.requests
        .filter((r) => !r.factory)
        .at(-1)!
        .toolResults.find((r) => r.toolUseId === 'tu_crash')!;
      assert.equal(result.isError, false, result.content);
      const reply = parseToolResult(result.content) as { attempts: Array<{ attempt: number; passed: boolean }> };
      assert.deepEqual(
        reply.attempts.map((a) => [a.attempt, a.passed]),
        [
          [1, false],
          [2, true],
        ],
      );
      assert.equal(s.factoryRequests().length, 2, 'the model wrote two scripts in all: attempt 2 ran again, it was not written again');
    } finally {
      await second.kill('SIGTERM');
    }
  });
});
