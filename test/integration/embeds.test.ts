import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { decode } from '@toon-format/toon';
import { after, before, describe, it } from 'node:test';
import type { MissionEvent } from '../../contracts/events.ts';
import { eventsOf } from '../../testkit/api-client.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { until } from '../../testkit/until.ts';

type EmbedEvent = Extract<MissionEvent, { type: 'embed' }>;

const CHART = {
  type: 'vega-lite',
  title: 'Rain by day',
  spec: {
    mark: 'bar',
    data: {
      values: [
        { day: 'Mon', mm: 2 },
        { day: 'Tue', mm: 7 },
      ],
    },
    encoding: { x: { field: 'day', type: 'ordinal' }, y: { field: 'mm', type: 'quantitative' } },
  },
};

describe('tool results as embeds', () => {
  let stack: TestStack;
  let key: string;
  let otherKey: string;
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey();
    otherKey = await stack.api.newKey();
    await stack.api.createSkill(
      key,
      skillMd({ name: 'embedder', tools: ['lab.lookup', 'lab.scan', 'lab.quick', 'lab.report'], maxTurns: 3 }),
    );
  });
  after(() => stack.stop());

  const embedEvents = async (id: string) =>
    eventsOf((await stack.api.readEvents(key, id)).frames).filter((e): e is EmbedEvent => e.type === 'embed');

  it('stores previews (hashed by the server), follow-ups, added instructions and canvases; an invalid canvas is dropped with a warning', async () => {
    stack.tools.on('lookup', () => ({
      body: {
        forecast: 'rain on Tuesday',
        previews: [{ title: 'Paris, Tuesday', text: '7 mm of rain', hash: 'forged' }],
        suggestions_follow_up_requests: ['Compare with Lyon', 'Pack list for rain'],
        added_instructions: 'Quote the forecast verbatim.',
        canvas: [
          CHART,
          { type: 'vega-lite', title: 'Broken', spec: { mark: 'nope' } },
          { type: 'markdown', title: 'Notes', spec: '# Rain\nBring boots.' },
        ],
      },
    }));
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_rich', name: 'lab__lookup', input: { q: 'paris' } }] } },
      { reply: { text: 'Rainy.' } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'embedder', objective: 'Weather in Paris.' });
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');

    const [start, end] = await embedEvents(id);
    assert.equal(start!.status, 'processing');
    assert.equal(end!.status, 'finished');
    assert.equal(start!.embedId, end!.embedId);
    assert.deepEqual(end!.summary, { previews: 1, canvases: 2, followUps: 2, warnings: 1 });
    assert.equal(mission.tools[0].embedId, end!.embedId, 'GET /missions/:id names the embed of each call');

    const embed = await stack.api.request('GET', `/api/v1/embeds/${end!.embedId}`, { key });
    assert.equal(embed.status, 200);
    assert.equal(embed.body.status, 'finished');
    assert.equal(embed.body.toolUseId, 'tu_rich');
    assert.deepEqual(embed.body.result, { forecast: 'rain on Tuesday' });
    const expectedHash = createHash('sha256').update('{"text":"7 mm of rain","title":"Paris, Tuesday"}').digest('hex');
    assert.deepEqual(embed.body.previews, [{ title: 'Paris, Tuesday', text: '7 mm of rain', hash: expectedHash }]);
    assert.deepEqual(embed.body.followUps, ['Compare with Lyon', 'Pack list for rain']);
    assert.equal(embed.body.addedInstructions, 'Quote the forecast verbatim.');
    assert.equal(embed.body.warnings.length, 1);
    assert.match(embed.body.warnings[0], /canvas 2 dropped: vega-lite "Broken"/);

    assert.deepEqual(mission.result.canvasSpecIds, embed.body.canvasSpecIds);
    assert.equal(mission.result.canvasSpecIds.length, 2);
    assert.deepEqual(mission.result.followUps, ['Compare with Lyon', 'Pack list for rain']);
    const chart = await stack.api.request('GET', `/api/v1/canvases/${mission.result.canvasSpecIds[0]}`, { key });
    assert.equal(chart.status, 200);
    assert.deepEqual({ type: chart.body.type, title: chart.body.title, spec: chart.body.spec }, CHART);
    const notes = await stack.api.request('GET', `/api/v1/canvases/${mission.result.canvasSpecIds[1]}`, { key });
    assert.equal(notes.body.type, 'markdown');

    const seen = stack.model.requests.at(-1)!.toolResults[0]!.content;
    assert.match(seen, /\[instructions from the tool: Quote the forecast verbatim\.\]/);
    assert.match(seen, /rain on Tuesday/);
    assert.doesNotMatch(seen, /Compare with Lyon|"spec"/, 'follow-ups and canvas specs are for the caller, not the model');

    const list = await stack.api.request('GET', `/api/v1/embeds?missionId=${id}`, { key });
    assert.deepEqual(
      list.body.items.map((e: { id: string }) => e.id),
      [end!.embedId],
    );
    // Owner-private: another user of the same tenant sees nothing.
    assert.equal((await stack.api.request('GET', `/api/v1/embeds/${end!.embedId}`, { key: otherKey })).status, 404);
    assert.equal((await stack.api.request('GET', `/api/v1/canvases/${chart.body.id}`, { key: otherKey })).status, 404);
    assert.equal((await stack.api.request('GET', `/api/v1/embeds?missionId=${id}`, { key: otherKey })).status, 404);
  });

  it('ends embeds as error (a failure, a timeout) and cancelled (by embed id), each seen on SSE in order and through GET /embeds/:id', async () => {
    stack.tools.on('lookup', () => ({ status: 500, body: { message: 'upstream broke' } }));
    stack.tools.on('quick', () => ({ delayMs: 3_000, body: { late: true } }));
    stack.tools.on('scan', () => ({ hang: true }));
    stack.model.enqueue(
      {
        reply: {
          toolUses: [
            { id: 'tu_fail', name: 'lab__lookup', input: { q: 'x' } },
            { id: 'tu_slow', name: 'lab__quick', input: { target: 'x' } },
            { id: 'tu_hang', name: 'lab__scan', input: { target: 'x' } },
          ],
        },
      },
      { reply: { text: 'Coped.' } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'embedder', objective: 'Three ways to end.' });
    await stack.tools.waitFor(() => stack.tools.requests.some((r) => r.tool === 'scan' && r.input.target === 'x'));
    let hang: { id: string; status: string } | undefined;
    const embedsOf = async () => (await stack.api.request('GET', `/api/v1/embeds?missionId=${id}`, { key })).body.items as (typeof hang)[];
    await until(async () => (hang = (await embedsOf()).find((e) => (e as { toolUseId?: string }).toolUseId === 'tu_hang')) !== undefined, {
      timeoutMs: 30_000,
      what: 'the processing embed of the hanging call',
    });
    assert.equal(hang!.status, 'processing');
    const cancel = await stack.api.request('POST', `/api/v1/missions/${id}/tools/${hang!.id}/cancel`, { key });
    assert.equal(cancel.status, 202);
    assert.deepEqual(cancel.body, { toolUseId: 'tu_hang', embedId: hang!.id, status: 'cancelling' });
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');

    const events = await embedEvents(id);
    const byCall = (toolUseId: string) => events.filter((e) => e.toolUseId === toolUseId).map((e) => e.status);
    assert.deepEqual(byCall('tu_fail'), ['processing', 'error']);
    assert.deepEqual(byCall('tu_slow'), ['processing', 'error']);
    assert.deepEqual(byCall('tu_hang'), ['processing', 'cancelled']);
    const seqs = events.map((e) => e.seq);
    assert.deepEqual(
      seqs,
      [...seqs].sort((a, b) => a - b),
      'in the ordered stream',
    );

    const get = async (toolUseId: string) => {
      const embedId = events.find((e) => e.toolUseId === toolUseId)!.embedId;
      return (await stack.api.request('GET', `/api/v1/embeds/${embedId}`, { key })).body;
    };
    const failed = await get('tu_fail');
    assert.equal(failed.status, 'error');
    assert.match(failed.error, /HTTP 500/);
    const slow = await get('tu_slow');
    assert.equal(slow.status, 'error');
    assert.match(slow.error, /timed out after 1s/);
    const stopped = await get('tu_hang');
    assert.equal(stopped.status, 'cancelled');
    assert.equal(stopped.result, undefined);

    const again = await stack.api.request('POST', `/api/v1/missions/${id}/tools/${hang!.id}/cancel`, { key });
    assert.equal(again.status, 409, 'the finished mission still knows the embed id');
  });

  it('puts referenced embeds of one’s own into the context; someone else’s embed is a 404 naming embedRefs', async () => {
    stack.tools.on('report', () => ({
      body: {
        rows: [
          { city: 'Paris', mm: 7 },
          { city: 'Lyon', mm: 3 },
        ],
      },
    }));
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_src', name: 'lab__report', input: { size: 2 } }] } },
      { reply: { text: 'Stored.' } },
    );
    const first = await stack.api.startMission(key, { skill: 'embedder', objective: 'Make a table.' });
    await stack.api.waitForEnd(key, first.id);
    const [embed] = (await stack.api.request('GET', `/api/v1/embeds?missionId=${first.id}`, { key })).body.items;

    stack.model.enqueue({ reply: { text: 'Paris is wetter.' } });
    const second = await stack.api.startMission(key, { skill: 'embedder', objective: 'Which city is wetter?', embedRefs: [embed.id] });
    await stack.api.waitForEnd(key, second.id);
    const opening = stack.model.requests.at(-1)!.lastUserText;
    assert.match(opening, new RegExp(`Embed ${embed.id} \\(tool lab.report, finished\\)`));
    const content = opening.slice(opening.indexOf('finished):\n') + 'finished):\n'.length);
    assert.match(content, /^rows\[2\t?\]\{/, 'the referenced content as a TOON table');
    assert.deepEqual(decode(content), {
      rows: [
        { city: 'Paris', mm: 7 },
        { city: 'Lyon', mm: 3 },
      ],
    });

    const foreign = await stack.api.request('POST', '/api/v1/missions', {
      key: otherKey,
      body: { skill: 'embedder', objective: 'Steal it.', workspaceCode: 'ws-1', embedRefs: [embed.id] },
    });
    assert.equal(foreign.status, 404);
    assert.match(foreign.body.error.message, /^embedRefs: /);
    assert.equal(foreign.body.error.details.field, 'embedRefs');
  });

  it('shows the model TOON for a uniform array, compact JSON for an irregular object, and a cut result with a note', async () => {
    const hits = Array.from({ length: 20 }, (_, i) => ({
      id: i + 1,
      title: `Result ${i + 1}`,
      score: Math.round((1 - i / 40) * 100) / 100,
    }));
    const irregular = { user: { login: 'ada', org: { name: 'Analytical', seats: 3 } }, labels: ['bug'], closed: null };
    const huge = Array.from({ length: 3_000 }, (_, i) => ({
      id: i,
      line: `2026-12-01T10:00:${String(i % 60).padStart(2, '0')}Z worker-${i % 7} handled job ${i * 17}`,
    }));
    stack.tools.on('lookup', (input) => ({ body: input.q === 'hits' ? { hits } : irregular }));
    stack.tools.on('report', () => ({ body: { logs: huge } }));
    stack.model.enqueue(
      {
        reply: {
          toolUses: [
            { id: 'tu_hits', name: 'lab__lookup', input: { q: 'hits' } },
            { id: 'tu_obj', name: 'lab__lookup', input: { q: 'object' } },
            { id: 'tu_big', name: 'lab__report', input: { size: 3000 } },
          ],
        },
      },
      { reply: { text: 'Read them.' } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'embedder', objective: 'Three shapes.' });
    assert.equal((await stack.api.waitForEnd(key, id)).status, 'completed');
    const [toon, json, cut] = stack.model.requests.at(-1)!.toolResults.map((r) => r.content);
    assert.match(toon!, /^hits\[20\t?\]\{/, 'a uniform array goes as a TOON table');
    assert.deepEqual(decode(toon!), { hits });
    assert.deepEqual(JSON.parse(json!), irregular, 'an irregular object goes as JSON…');
    assert.equal(json, JSON.stringify(JSON.parse(json!)), '…compact JSON');
    assert.match(cut!, /\[truncated to fit 8000 tokens on a value boundary; logs: \d+ of 3000 items shown\]$/);
    const shown = Number(/logs: (\d+) of/.exec(cut!)![1]);
    assert.ok(shown > 10 && shown < 3000);
    assert.match(cut!, new RegExp(`handled job ${(shown - 1) * 17}\\b`), 'the last item shown is whole');
    const [big] = (await stack.api.request('GET', `/api/v1/embeds?missionId=${id}`, { key })).body.items.filter(
      (e: { toolUseId: string }) => e.toolUseId === 'tu_big',
    );
    assert.equal(big.result.logs.length, 3000, 'the embed keeps the whole result');
  });
});
