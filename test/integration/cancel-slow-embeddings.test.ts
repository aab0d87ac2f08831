import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { until } from '../../testkit/until.ts';

// Cancellations landing in code that waits on a slow embeddings endpoint (which is not handed the abort signal).
describe('cancelling while an embeddings call is slow', () => {
  let stack: TestStack;
  let server: Server;
  let key: string;
  const HANG_MS = 8_000;
  let hungAt: number | undefined;
  before(async () => {
    server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString()));
      req.on('end', () => {
        const { input } = JSON.parse(raw) as { input: string[] };
        const reply = () =>
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ data: input.map((_t, index) => ({ index, embedding: [1, 0, 0] })) }));
        if (!input.some((t) => t.includes('slow'))) return reply();
        hungAt = Date.now();
        setTimeout(reply, HANG_MS);
      });
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    const { port } = server.address() as { port: number };
    stack = await startTestStack({ env: { EMBEDDINGS_BASE_URL: `http://127.0.0.1:${port}/v1` } });
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'recaller', maxTurns: 3 }));
    // A stored vector to compare with: without one, a search does not embed its query at all.
    const memory = await stack.api.request('POST', '/api/v1/memories', { key, body: { content: 'An old note.' } });
    assert.equal(memory.status, 201);
  });
  after(async () => {
    await stack.stop();
    server.closeAllConnections();
    server.close();
  });

  it('reports the cancelled call as cancelled, promptly', async () => {
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_recall', name: 'search_memory', input: { query: 'a slow recollection' } }] } },
      { reply: { text: 'Answered without memories.' } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'recaller', objective: 'Recall things.' });
    await until(() => hungAt !== undefined, { what: 'the tool reaching the embeddings endpoint' });

    const cancel = await stack.api.request('POST', `/api/v1/missions/${id}/tools/tu_recall/cancel`, { key });
    assert.equal(cancel.status, 202);
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');
    const tool = mission.tools.find((t: { toolUseId: string }) => t.toolUseId === 'tu_recall');
    assert.equal(tool.status, 'cancelled');
    assert.ok(tool.durationMs < HANG_MS - 1_000, `ended after ${tool.durationMs} ms, not when the endpoint answered`);
    const results = stack.model.requests[1]!.toolResults;
    assert.ok(results[0]!.isError && /cancelled/.test(results[0]!.content), 'the model sees cancelled');
  });

  it('a mission cancelled while its completion is being written ends one way, in Temporal and in Postgres alike', async () => {
    hungAt = undefined;
    stack.model.enqueue({ reply: { text: 'A slow answer.' } });
    const { id } = await stack.api.startMission(key, { skill: 'recaller', objective: 'Answer at once.' });
    await until(() => hungAt !== undefined, { what: 'completeMission reaching the embeddings endpoint' });

    const cancel = await stack.api.request('POST', `/api/v1/missions/${id}/cancel`, { key });
    assert.equal(cancel.status, 202);
    const handle = stack.handle(id);
    await handle.result().catch(() => undefined);
    const closed = (await handle.describe()).status.name;
    // Whatever the workflow did, the completion activity may still be writing: wait until no activity runs.
    const missions = stack.worker!.workers.missions;
    await until(() => hungAt !== undefined && missions.getStatus().numInFlightActivities === 0, {
      timeoutMs: HANG_MS * 3,
      what: 'the completion activity to finish',
    });
    const row = await stack.db.selectFrom('missions').select('status').where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(row.status, closed.toLowerCase(), `Temporal says ${closed}, Postgres says ${row.status}`);
    const ends = await stack.db.selectFrom('feed').select('outcome').where('event_key', '=', `${id}/end`).execute();
    assert.deepEqual(
      ends.map((e) => e.outcome),
      [row.status],
    );
  });
});
