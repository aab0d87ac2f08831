import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { until } from '../../testkit/until.ts';

/** The value of one sample line `name{labels} value` (labels in any order), or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return undefined;
}

describe('Prometheus metrics of the API and the worker', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'metered', tools: ['lab.lookup'], maxTurns: 3 }));
  });
  after(() => stack?.stop());

  it('count a mission, its model attempts (the 429 too), its tool call, tokens and queue waits, by bounded labels', async () => {
    stack.tools.on('lookup', () => ({ delayMs: 200, body: { hit: 'yes' } }));
    stack.model.enqueue(
      { status: 429, headers: { 'retry-after': '1' } },
      { reply: { toolUses: [{ id: 'tu_1', name: 'lab__lookup', input: { q: 'x' } }] } },
      { reply: { text: 'done' } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'metered', objective: 'Look it up.' });
    await stack.api.readEvents(key, id, { stopAfter: 1 });
    assert.equal((await stack.api.waitForEnd(key, id)).status, 'completed');

    const port = stack.worker!.metricsPort;
    assert.ok(port, 'the worker serves /metrics');
    const scrape = async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    await until(async () => sample(await scrape(), 'cadenza_missions_ended_total', { skill: 'metered', outcome: 'completed' }) === 1, {
      what: 'the mission counted as completed',
    });
    const worker = await scrape();
    assert.equal(sample(worker, 'cadenza_missions_started_total', { skill: 'metered' }), 1);
    const tier = 'allegro';
    assert.equal(sample(worker, 'cadenza_model_call_attempts_total', { tier, outcome: 'rate_limited' }), 1, 'the 429 is counted');
    assert.equal(sample(worker, 'cadenza_model_call_attempts_total', { tier, outcome: 'ok' }), 2);
    assert.equal(sample(worker, 'cadenza_model_call_duration_seconds_count', { tier, outcome: 'ok' }), 2);
    assert.equal(sample(worker, 'cadenza_tool_call_duration_seconds_count', { tool: 'lab.lookup', outcome: 'completed' }), 1);
    assert.ok(sample(worker, 'cadenza_tool_call_duration_seconds_sum', { tool: 'lab.lookup', outcome: 'completed' })! >= 0.2);
    assert.ok(sample(worker, 'cadenza_model_tokens_total', { tier, direction: 'input' })! > 0);
    assert.ok(sample(worker, 'cadenza_activity_queue_wait_seconds_count', { activity: 'callModel' })! >= 3);
    // The Temporal SDK's own worker metrics are relayed on the same endpoint.
    assert.match(worker, /^temporal_\w+/m);
    assert.ok(!worker.includes(id), 'no mission id in any label');

    const api = await (await fetch(`${stack.url}/metrics`)).text();
    assert.equal(sample(api, 'cadenza_sse_subscribers'), 0, 'the closed stream is no longer counted');
    assert.match(api, /^cadenza_process_cpu_user_seconds_total \d/m);
  });

  it('counts an open SSE stream on the API while it is open, and the events queries and pushes its relay took', async () => {
    stack.tools.on('lookup', () => ({ delayMs: 3_000, body: { hit: 'yes' } }));
    stack.model.enqueue({ reply: { toolUses: [{ id: 'tu_2', name: 'lab__lookup', input: { q: 'y' } }] } }, { reply: { text: 'ok' } });
    const { id } = await stack.api.startMission(key, { skill: 'metered', objective: 'Slow lookup.' });
    const reading = stack.api.readEvents(key, id);
    await until(async () => sample(await (await fetch(`${stack.url}/metrics`)).text(), 'cadenza_sse_subscribers') === 1, {
      what: 'one SSE subscriber counted',
    });
    const metricsBefore = await (await fetch(`${stack.url}/metrics`)).text();
    const brought = (text: string) =>
      (sample(text, 'cadenza_relay_events_queries_total', { found: 'events' }) ?? 0) +
      (sample(text, 'cadenza_relay_events_pushed_total') ?? 0);
    const broughtBefore = brought(metricsBefore);
    await reading;
    await until(async () => sample(await (await fetch(`${stack.url}/metrics`)).text(), 'cadenza_sse_subscribers') === 0, {
      what: 'the stream closed',
    });
    const metricsAfter = await (await fetch(`${stack.url}/metrics`)).text();
    // The tool's and the answer's events came by a query or by a worker's push (once their activity started).
    assert.ok(
      brought(metricsAfter) > broughtBefore,
      `the relay's queries and pushes that brought events: ${broughtBefore} → ${brought(metricsAfter)}`,
    );
    assert.ok(sample(metricsAfter, 'cadenza_relay_events_pushed_total')! > 0, 'a worker in this process pushed events');
    assert.ok(sample(metricsAfter, 'cadenza_relay_events_queries_total', { found: 'none' })! >= 0, 'the empty ones are a series too');
  });
});
