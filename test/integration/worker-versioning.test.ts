import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import proto from '@temporalio/proto';
import { DeterminismViolationError } from '@temporalio/workflow';
import { Worker, bundleWorkflowCode } from '@temporalio/worker';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { IGNORED_PROGRESS_SINKS } from '../../events/progress-sinks.ts';
import { currentBuildId } from '../../worker/worker-version.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const IN_FLIGHT = 50;

/**
 * A second build whose workflow code is incompatible with the first: the mission workflow starts with a timer. Bundled
 * from a copy of `workflows/` beside links to the project's `contracts/` and `node_modules/`.
 */
async function incompatibleBuild(): Promise<{ code: string; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'cadenza-v2-'));
  await cp(join(ROOT, 'workflows'), join(dir, 'workflows'), { recursive: true });
  await symlink(join(ROOT, 'contracts'), join(dir, 'contracts'));
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  const file = join(dir, 'workflows', 'mission-workflow.ts');
  const source = await readFile(file, 'utf8');
  const opening = 'export async function missionWorkflow(input: MissionInput): Promise<MissionResult> {';
  assert.ok(source.includes(opening), 'the mission workflow still opens the way this test edits it');
  await writeFile(
    file,
    `import { sleep as v2Sleep } from '@temporalio/workflow';\n` + source.replace(opening, `${opening}\n  await v2Sleep(1);`),
  );
  const { code } = await bundleWorkflowCode({
    workflowsPath: join(dir, 'workflows', 'index.ts'),
    workflowInterceptorModules: [join(dir, 'workflows', 'events-interceptor.ts')],
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} },
  });
  return { code, dir };
}

const buildIdOf = async (stack: TestStack, id: string): Promise<string | undefined> => {
  const info = (await stack.handle(id).describe()).raw.workflowExecutionInfo?.versioningInfo;
  return info?.deploymentVersion?.buildId ?? info?.version?.split('.').at(-1) ?? undefined;
};

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not reached in time: ${what}`);
    await new Promise((ok) => setTimeout(ok, 100));
  }
}

/** The session's view once it is idle after `n` exchanges. */
async function idleAfter(stack: TestStack, key: string, id: string, n: number) {
  let mission: { status: string; exchanges?: { text: string }[] } = { status: '' };
  await until(async () => {
    mission = (await stack.api.request('GET', `/api/v1/missions/${id}`, { key })).body;
    return mission.status === 'idle' && mission.exchanges?.length === n;
  }, `session ${id} idle after ${n} exchanges`);
  return mission as { status: string; exchanges: { text: string }[] };
}

describe('worker versioning: a rolling deploy while missions run', () => {
  const deployment = `cadenza-test-${Date.now().toString(36)}`;
  let v1: TestStack;
  let v2: TestStack | undefined;
  let v2dir: string | undefined;
  let key: string;
  let release!: () => void;
  const gate = new Promise<void>((ok) => (release = ok));

  before(async () => {
    v1 = await startTestStack({
      // Sessions continue as new after every exchange: where a session may leave its build.
      env: { TEMPORAL_WORKER_DEPLOYMENT: deployment, TEMPORAL_WORKER_BUILD_ID: 'v1', SESSION_HISTORY_EVENTS: '1' },
    });
    key = await v1.api.newKey();
    await v1.api.createSkill(key, skillMd({ name: 'waiter', tools: ['lab.scan'], maxTurns: 3 }));
    await v1.api.createSkill(key, skillMd({ name: 'chat', maxTurns: 2 }));
    v1.tools.on('scan', async () => (await gate, { body: { waited: true } }));
    v1.model.setHandler((req) => {
      const chat = /Chat \d/.exec(req.lastUserText)?.[0];
      if (chat) return { reply: { text: `Answered ${chat}.` } };
      if (req.toolResults.length > 0) return { reply: { text: 'Waited.' } };
      return { reply: { toolUses: [{ id: 'tu_wait', name: 'lab__scan', input: { target: 'x' } }] } };
    });
  });
  after(async () => {
    release();
    await v2?.stop();
    await v1.stop();
    if (v2dir) await rm(v2dir, { recursive: true, force: true });
  });

  it('old missions finish on the build that started them, new ones start on the new build, no non-determinism anywhere', async () => {
    assert.equal(await v1.worker!.promoted, 'promoted', 'the first build of a deployment makes itself current');
    assert.equal(await currentBuildId(v1.temporal, 'default', deployment), 'v1');

    // A session too, idle between exchanges when the deploy comes.
    const session = (await v1.api.startMission(key, { skill: 'chat', objective: 'Chat 0', session: true })).id;
    await idleAfter(v1, key, session, 1);
    const old: string[] = [];
    for (let i = 0; i < IN_FLIGHT; i++) old.push((await v1.api.startMission(key, { skill: 'waiter', objective: `Old ${i}` })).id);
    await v1.tools.waitFor(() => v1.tools.requests.filter((r) => r.tool === 'scan').length === IN_FLIGHT, 60_000);

    // The deploy: a build with other workflow code joins the same task queues and makes itself current.
    const build = await incompatibleBuild();
    v2dir = build.dir;
    v2 = await startTestStack({
      databaseUrl: v1.env.DATABASE_URL,
      workflowBundle: { code: build.code },
      env: { ...v1.env, TEMPORAL_WORKER_BUILD_ID: 'v2', TEMPORAL_WORKER_PROMOTE: 'always' },
    });
    assert.equal(await v2.worker!.promoted, 'promoted');
    assert.equal(await currentBuildId(v1.temporal, 'default', deployment), 'v2');

    const fresh: string[] = [];
    for (let i = 0; i < 5; i++) fresh.push((await v1.api.startMission(key, { skill: 'waiter', objective: `New ${i}` })).id);
    await v1.tools.waitFor(() => v1.tools.requests.filter((r) => r.tool === 'scan').length === IN_FLIGHT + 5, 60_000);
    release();

    // The session's next exchanges run after the deploy. It continues as new after each (SESSION_HISTORY_EVENTS=1) asking
    // for AUTO_UPGRADE; a server with upgrade-on-continue-as-new (1.30+) moves it to v2 there, the 1.29 dev server keeps
    // the pinned version through continue-as-new. Either way no exchange may be lost or fail.
    assert.equal((await v1.api.request('POST', `/api/v1/missions/${session}/messages`, { key, body: { text: 'Chat 1' } })).status, 202);
    await idleAfter(v1, key, session, 2);
    assert.equal((await v1.api.request('POST', `/api/v1/missions/${session}/messages`, { key, body: { text: 'Chat 2' } })).status, 202);
    const chatted = await idleAfter(v1, key, session, 3);
    assert.deepEqual(
      chatted.exchanges.map((e: { text: string }) => e.text),
      ['Answered Chat 0.', 'Answered Chat 1.', 'Answered Chat 2.'],
    );
    const sessionBuild = await buildIdOf(v1, session);
    assert.ok(sessionBuild === 'v1' || sessionBuild === 'v2', `the session runs on a build of the deployment (${sessionBuild})`);
    console.log(`# the session's latest run is on ${sessionBuild}`);
    assert.equal((await v1.api.request('POST', `/api/v1/missions/${session}/close`, { key })).status, 202);

    for (const id of [...old, ...fresh]) {
      const mission = await v1.api.waitForEnd(key, id, 120_000);
      assert.equal(mission.status, 'completed', `mission ${id}: ${JSON.stringify(mission.error ?? null)}`);
      assert.equal(mission.result.text, 'Waited.');
      const events = (await v1.handle(id).fetchHistory()).events ?? [];
      assert.equal(events.filter((e) => e.workflowTaskFailedEventAttributes).length, 0, `mission ${id} had a failed workflow task`);
    }
    for (const id of old) assert.equal(await buildIdOf(v1, id), 'v1', `old mission ${id} stayed on v1`);
    for (const id of fresh) assert.equal(await buildIdOf(v1, id), 'v2', `new mission ${id} ran on v2`);
    // Each mission's calls ran once: the tool saw one request per mission.
    assert.equal(v1.tools.requests.filter((r) => r.tool === 'scan').length, IN_FLIGHT + 5);

    // The old build drains: with no open mission pinned to it, the server reports it DRAINED, the operator's cue to stop
    // it (docs/operations.md). The test server reports it within seconds (test/global-setup.ts), a default one in minutes.
    await until(
      async () => {
        const { workerDeploymentVersionInfo: v } = await v1.temporal.workflowService.describeWorkerDeploymentVersion({
          namespace: 'default',
          deploymentVersion: { deploymentName: deployment, buildId: 'v1' },
        });
        return v?.drainageInfo?.status === proto.temporal.api.enums.v1.VersionDrainageStatus.VERSION_DRAINAGE_STATUS_DRAINED;
      },
      'build v1 reported DRAINED',
      120_000,
    );

    // Why pinning mattered: the new build cannot replay an old mission's history (the old one can).
    const history = await v1.handle(old[0]!).fetchHistory();
    await Worker.runReplayHistory(
      { workflowBundle: { codePath: process.env.CADENZA_TEST_BUNDLE! }, sinks: IGNORED_PROGRESS_SINKS },
      history,
    );
    await assert.rejects(
      Worker.runReplayHistory({ workflowBundle: { code: build.code }, sinks: IGNORED_PROGRESS_SINKS }, history),
      DeterminismViolationError,
    );
  });
});
