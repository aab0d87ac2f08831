import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startProductionShape, type ProductionShape } from '../../testkit/chaos/production-shape.ts';
import { createApiClient, eventsOf, ALL_CAPABILITIES } from '../../testkit/api-client.ts';
import { skillMd } from '../../testkit/test-stack.ts';

// Two API processes and two worker processes (bin/api.ts, bin/worker.ts, each its own OS process) on one Temporal
// dev server and one Postgres: missions complete, either API serves any mission's stream, and the limits hold.
describe('two of everything: two API and two worker processes on one Temporal and one Postgres', () => {
  let shape: ProductionShape;
  before(
    async () => {
      shape = await startProductionShape(() => {}, {
        apis: 2,
        env: { MAX_RUNNING_MISSIONS_PER_USER: '2', MAX_STARTS_PER_MINUTE_PER_USER: '8' },
      });
    },
    { timeout: 240_000 },
  );
  after(() => shape?.stop());

  it('completes missions started on either API, streams each from the other, and never runs more than the limit', async () => {
    const [a, b] = shape.urls.map((url) => createApiClient(url, shape.adminKey)) as [
      ReturnType<typeof createApiClient>,
      ReturnType<typeof createApiClient>,
    ];
    const key = await a.newKey(ALL_CAPABILITIES, { tenantId: 'pair', userId: 'ivy' });
    await b.createSkill(key, skillMd({ name: 'scanner', tools: ['lab.scan'], maxTurns: 2 }));
    let running = 0;
    let peak = 0;
    shape.tools.on('scan', async () => {
      peak = Math.max(peak, ++running);
      await new Promise((ok) => setTimeout(ok, 1_500));
      running--;
      return { body: { scanned: true } };
    });
    shape.model.setHandler((req) =>
      req.toolResults.length > 0
        ? { reply: { text: 'scanned' } }
        : { reply: { toolUses: [{ name: 'lab__scan', input: { target: 'x' } }] } },
    );
    // Six starts at once, alternating between the two API processes: the limit is decided in Postgres, not per process.
    const started = await Promise.all(
      Array.from({ length: 6 }, (_, i) => (i % 2 === 0 ? a : b).startMission(key, { skill: 'scanner', objective: `Scan ${i}.` })),
    );
    assert.equal(started.filter((m) => m.status === 'running').length, 2, JSON.stringify(started.map((m) => m.status)));
    assert.equal(started.filter((m) => m.status === 'queued').length, 4);

    // Each mission's stream read from the API process that did not start it, to its terminal event.
    const streams = await Promise.all(started.map((m, i) => (i % 2 === 0 ? b : a).readEvents(key, m.id)));
    for (const [i, s] of streams.entries()) {
      const events = eventsOf(s.frames);
      assert.equal(s.status, 200);
      assert.deepEqual(
        events.map((e) => e.seq),
        events.map((_, j) => j + 1),
        'in order, without gaps',
      );
      assert.deepEqual(events.at(-1), { ...events.at(-1), type: 'status', status: 'completed' }, `mission ${i}`);
    }
    const ended = await Promise.all(started.map((m, i) => (i % 2 === 0 ? a : b).waitForEnd(key, m.id)));
    assert.deepEqual(
      ended.map((m) => m.status),
      Array(6).fill('completed'),
    );
    assert.equal(peak, 2, 'two tool calls at once, never more: the user’s running-mission limit held across processes');
    const queuedFirst = streams.filter(
      (s) => eventsOf(s.frames)[0]?.type === 'status' && (eventsOf(s.frames)[0] as { status: string }).status === 'queued',
    );
    assert.equal(queuedFirst.length, 4, 'the four queued missions said so on their streams');
    for (const p of [...shape.workers, shape.api]) assert.deepEqual(p.errorLines(), [], `${p.name} logged no error`);
  });
});
