import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import proto from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { IGNORED_PROGRESS_SINKS } from '../../events/progress-sinks.ts';
import { missionWorkflowId } from '../../contracts/mission.ts';
import { chainOf, followSession } from '../../testkit/session-runs.ts';

const HISTORIES = fileURLToPath(new URL('../fixtures/histories/', import.meta.url));
const bundle = () => ({ codePath: process.env.CADENZA_TEST_BUNDLE! });

describe('replaying recorded mission histories against the current workflow code', () => {
  let stack: TestStack;
  before(async () => {
    stack = await startTestStack();
  });
  after(() => stack.stop());

  // Binary protobuf: the SDK's JSON history reader trips over two protobufjs copies in this dependency tree.
  for (const file of readdirSync(HISTORIES).filter((f) => f.endsWith('.pb'))) {
    it(`replays ${file} without non-determinism`, async () => {
      const history = proto.temporal.api.history.v1.History.decode(readFileSync(`${HISTORIES}${file}`));
      await Worker.runReplayHistory({ workflowBundle: bundle(), sinks: IGNORED_PROGRESS_SINKS }, history, file);
    });
  }

  // Fresh missions replayed as they end; RECORD_HISTORIES=1 writes them as the fixtures above. Until the first release
  // a workflow change re-records both (docs/decisions.md, "Workflow changes before and after the first release").
  async function runScanMission(end: (key: string, id: string) => Promise<void>, expected: string, fixture: string) {
    const key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'replayed', tools: ['lab.lookup', 'lab.scan'], maxTurns: 3 }));
    stack.tools.on('scan', () => ({ hang: true }));
    stack.model.enqueue(
      {
        reply: {
          toolUses: [
            { id: 'tu_l', name: 'lab__lookup', input: { q: 'a' } },
            { id: 'tu_s', name: 'lab__scan', input: { target: 'b' } },
            { id: 'tu_g', name: 'lab__ghost', input: {} },
          ],
        },
      },
      { reply: { text: 'done' } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'replayed', objective: 'record me' });
    await stack.tools.waitFor(() => stack.tools.requests.some((r) => r.tool === 'scan'));
    await end(key, id);
    assert.equal((await stack.api.waitForEnd(key, id)).status, expected);
    const history = await stack.handle(id).fetchHistory();
    await Worker.runReplayHistory({ workflowBundle: bundle(), sinks: IGNORED_PROGRESS_SINKS }, history, `mission-${id}`);
    if (process.env.RECORD_HISTORIES)
      writeFileSync(`${HISTORIES}${fixture}`, proto.temporal.api.history.v1.History.encode(history).finish());
  }

  it('replays a fresh mission with parallel tools, a tool cancelled by the update, an unknown tool and a final answer', async () => {
    await runScanMission(
      async (key, id) => assert.equal((await stack.api.request('POST', `/api/v1/missions/${id}/tools/tu_s/cancel`, { key })).status, 202),
      'completed',
      'mission-update-cancel.pb',
    );
  });

  it('replays a fresh mission cancelled while a tool runs: every running call ended, the cancellation recorded', async () => {
    await runScanMission(
      async (key, id) => assert.equal((await stack.api.request('POST', `/api/v1/missions/${id}/cancel`, { key })).status, 202),
      'cancelled',
      'mission-parallel-cancel.pb',
    );
  });

  it('replays a fresh mission whose delegate call ran a child mission, and the child', async () => {
    const key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'replayed-helper', maxTurns: 2 }));
    await stack.api.createSkill(
      key,
      [
        '---',
        'name: replayed-boss',
        'description: Delegates.',
        'metadata:',
        '  cadenza-delegates: replayed-helper',
        '---',
        'Delegate.',
        '',
      ].join('\n'),
    );
    // Steps another test left queued are dropped; each request is answered by what it is.
    stack.model.reset();
    stack.model.setHandler((r) =>
      r.toolNames.includes('delegate')
        ? r.toolResults.length === 0
          ? { reply: { toolUses: [{ id: 'tu_d', name: 'delegate', input: { skill: 'replayed-helper', objective: 'help' } }] } }
          : { reply: { text: 'done' } }
        : { reply: { text: 'helped' } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'replayed-boss', objective: 'record me' });
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');
    for (const [missionId, fixture] of [
      [id, 'mission-delegate.pb'],
      [mission.children[0].id as string, 'mission-delegate-child.pb'],
    ] as const) {
      const history = await stack.handle(missionId).fetchHistory();
      await Worker.runReplayHistory({ workflowBundle: bundle(), sinks: IGNORED_PROGRESS_SINKS }, history, `mission-${missionId}`);
      if (process.env.RECORD_HISTORIES)
        writeFileSync(`${HISTORIES}${fixture}`, proto.temporal.api.history.v1.History.encode(history).finish());
    }
  });
});

describe('replaying the runs of a session that continued as new', () => {
  let stack: TestStack;
  before(async () => {
    stack = await startTestStack({ env: { SESSION_HISTORY_EVENTS: '1' } });
  });
  after(() => stack.stop());

  it('replays each run of the chain: the first, a continued one with a tool call, the last one closed', async () => {
    const key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'chained', tools: ['lab.lookup'], maxTurns: 3 }));
    stack.tools.on('lookup', () => ({ body: { hit: 'x' } }));
    stack.model.enqueue(
      { reply: { text: 'one' } },
      { reply: { toolUses: [{ id: 'tu_c', name: 'lab__lookup', input: { q: 'c' } }] } },
      { reply: { text: 'two' } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'chained', objective: 'chain me', session: true });
    const session = followSession(stack, key, id);
    await session.idle(1);
    await session.exchange('more', 2);
    assert.equal((await stack.api.request('POST', `/api/v1/missions/${id}/close`, { key })).status, 202);
    assert.equal((await stack.api.waitForEnd(key, id)).status, 'completed');
    const runs = await chainOf(stack.temporal, id, ['CONTINUED_AS_NEW', 'CONTINUED_AS_NEW', 'COMPLETED']);
    for (const [i, run] of runs.entries()) {
      const history = await stack.temporal.workflow.getHandle(missionWorkflowId(id), run.runId).fetchHistory();
      await Worker.runReplayHistory({ workflowBundle: bundle(), sinks: IGNORED_PROGRESS_SINKS }, history, `mission-${id}-${i + 1}`);
      if (process.env.RECORD_HISTORIES)
        writeFileSync(`${HISTORIES}session-continued-${i + 1}.pb`, proto.temporal.api.history.v1.History.encode(history).finish());
    }
  });
});
