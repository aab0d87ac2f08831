import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { MissionEvent } from '../../contracts/events.ts';
import type { RecordedRequest } from '../../fake-model/fake-model-types.ts';
import { eventsOf } from '../../testkit/api-client.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

const WEATHER = {
  type: 'object',
  required: ['city', 'temperatureC'],
  properties: { city: { type: 'string' }, temperatureC: { type: 'number' } },
  additionalProperties: false,
};
const GOOD = { city: 'Oslo', temperatureC: 4 };

/** The schema a request carried, the provider's way: Anthropic's `output_config.format`, OpenAI's `response_format`. */
function offeredSchema(r: RecordedRequest): unknown {
  const body = r.body as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  if (r.protocol === 'anthropic') {
    assert.equal(body.output_config?.format?.type, 'json_schema');
    return body.output_config.format.schema;
  }
  assert.equal(body.response_format?.type, 'json_schema');
  assert.match(body.response_format.json_schema.name, /^[a-zA-Z0-9_-]{1,64}$/);
  return body.response_format.json_schema.schema;
}

for (const provider of ['anthropic', 'openai'] as const) {
  describe(`typed results (${provider}): the answer is JSON matching the mission's output schema`, () => {
    let stack: TestStack;
    let key: string;
    before(async () => {
      stack = await startTestStack({ provider });
      key = await stack.api.newKey();
      await stack.api.createSkill(key, skillMd({ name: 'weather', tools: ['lab.lookup'], maxTurns: 4 }));
      stack.tools.on('lookup', () => ({ body: { forecast: '4 degrees in Oslo' } }));
    });
    after(() => stack?.stop());

    /** Runs a mission to its end: what the API says of it, its durable events, the model requests it made. */
    async function run(body: Record<string, unknown>) {
      const before = stack.model.requests.length;
      const { id } = await stack.api.startMission(key, { skill: 'weather', objective: 'Weather in Oslo?', ...body });
      const mission = await stack.api.waitForEnd(key, id);
      const events = eventsOf((await stack.api.readEvents(key, id)).frames);
      const rejected = events.filter((e): e is Extract<MissionEvent, { type: 'output_rejected' }> => e.type === 'output_rejected');
      return { id, mission, rejected, requests: stack.model.requests.slice(before) };
    }

    it('offers the schema on every call, tool turns included, and puts the parsed answer in result.output', async () => {
      stack.model.reset();
      stack.model.enqueue({ reply: { toolUses: [{ name: 'lab__lookup', input: { q: 'Oslo' } }] } }, { reply: { json: GOOD } });
      const { mission, rejected, requests } = await run({ outputSchema: WEATHER });
      assert.equal(mission.status, 'completed', JSON.stringify(mission.error));
      assert.deepEqual(mission.result.output, GOOD);
      assert.deepEqual(JSON.parse(mission.result.text), GOOD);
      assert.deepEqual(mission.outputSchema, WEATHER);
      assert.equal(requests.length, 2, 'the tool turn is not checked: no correction');
      for (const r of requests) assert.deepEqual(offeredSchema(r), WEATHER);
      assert.ok(requests[0]!.toolNames.includes('lab__lookup'), 'tools stay offered beside the schema');
      assert.deepEqual(rejected, []);
    });

    it('sends a non-matching answer back once with the errors, counted as a turn, and keeps the corrected one', async () => {
      stack.model.reset();
      stack.model.enqueue({ reply: { json: { city: 'Oslo', temperatureC: 'cold' } } }, { reply: { json: GOOD } });
      const { mission, rejected, requests } = await run({ outputSchema: WEATHER });
      assert.equal(mission.status, 'completed', JSON.stringify(mission.error));
      assert.deepEqual(mission.result.output, GOOD);
      assert.equal(requests.length, 2);
      assert.match(requests[1]!.lastUserText, /does not match the required output schema: \/temperatureC must be number/);
      assert.deepEqual(requests[1]!.toolNames, [], 'the correction is a final call: no tools');
      assert.deepEqual(offeredSchema(requests[1]!), WEATHER);
      assert.equal(mission.result.metrics.turns, 2, 'the correction is a model call of its own, in the budgets');
      assert.deepEqual(
        rejected.map(({ turn, retried }) => ({ turn, retried })),
        [{ turn: 1, retried: true }],
      );
      assert.match(rejected[0]!.errors, /\/temperatureC must be number/);
    });

    it('sends an answer that is not JSON back once, saying so', async () => {
      stack.model.reset();
      stack.model.enqueue(
        { reply: { text: 'It is 4 degrees in Oslo.' } },
        { reply: { text: '```json\n{"city":"Oslo","temperatureC":4}\n```' } },
      );
      const { mission, requests } = await run({ outputSchema: WEATHER });
      assert.equal(mission.status, 'completed', JSON.stringify(mission.error));
      assert.deepEqual(mission.result.output, GOOD);
      assert.match(requests[1]!.lastUserText, /the answer is not JSON/);
    });

    it('fails the mission in phase output with the errors when the corrected answer misses too', async () => {
      stack.model.reset();
      stack.model.enqueue({ reply: { json: { city: 'Oslo' } } }, { reply: { text: 'Sorry, 4 degrees.' } });
      const { mission, rejected, requests } = await run({ outputSchema: WEATHER });
      assert.equal(mission.status, 'failed');
      assert.equal(mission.error.phase, 'output');
      assert.match(mission.error.message, /does not match the output schema: the answer is not JSON/);
      assert.equal(mission.result, undefined);
      assert.equal(requests.length, 2, 'one correction, never a second');
      assert.match(requests[1]!.lastUserText, /must have required property 'temperatureC'/);
      assert.deepEqual(
        rejected.map(({ turn, retried }) => ({ turn, retried })),
        [
          { turn: 1, retried: true },
          { turn: 2, retried: false },
        ],
      );
    });

    it('leaves a mission without a schema as it was: no schema offered, no output', async () => {
      stack.model.reset();
      stack.model.enqueue({ reply: { text: 'not JSON, and fine' } });
      const { mission, requests } = await run({});
      assert.equal(mission.status, 'completed');
      assert.equal(mission.result.text, 'not JSON, and fine');
      assert.equal(mission.result.output, undefined);
      assert.equal(requests[0]!.outputSchema, undefined);
    });

    it("takes the skill's metadata.cadenza-output-schema when the start gives none (the fake answers to the schema)", async () => {
      const md = [
        '---',
        'name: city-card',
        'description: Test skill city-card.',
        'metadata:',
        `  cadenza-output-schema: '${JSON.stringify({ type: 'object', required: ['city', 'rank'], properties: { city: { type: 'string', minLength: 2 }, rank: { type: 'integer', minimum: 1 } } })}'`,
        '---',
        'Describe the city.',
        '',
      ].join('\n');
      await stack.api.createSkill(key, md);
      stack.model.reset();
      const { mission, requests } = await run({ skill: 'city-card' });
      assert.equal(mission.status, 'completed', JSON.stringify(mission.error));
      assert.deepEqual(mission.result.output, { city: 'xx', rank: 1 }, 'unscripted, the fake model answers a value matching the schema');
      assert.deepEqual((offeredSchema(requests[0]!) as { required: string[] }).required, ['city', 'rank']);
      assert.deepEqual(mission.outputSchema.required, ['city', 'rank'], 'GET /missions/:id shows the schema the mission answers to');
    });
  });
}

describe('typed results: schemas that are not valid JSON Schema', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'weather' }));
  });
  after(() => stack?.stop());

  const start = (outputSchema: unknown) =>
    stack.api.request('POST', '/api/v1/missions', { key, body: { skill: 'weather', objective: 'x', workspaceCode: 'ws', outputSchema } });

  it('answers 422 naming outputSchema for an invalid JSON Schema or a non-object schema, 400 for one that is not an object', async () => {
    for (const [schema, why, status] of [
      [{ type: 'object', properties: { a: { type: 'strnig' } } }, /outputSchema is not a valid JSON Schema/, 422],
      [{ type: 'object', minProperties: 'two' }, /outputSchema is not a valid JSON Schema/, 422],
      [{ type: 'string' }, /outputSchema must describe an object/, 422],
      ['{"type":"object"}', /outputSchema/, 400],
    ] as const) {
      const res = await start(schema);
      assert.equal(res.status, status, JSON.stringify(res.body));
      assert.match(res.body.error.message, why);
      assert.ok(JSON.stringify(res.body.error.details).includes('outputSchema'), JSON.stringify(res.body.error));
    }
    const { count } = await stack.db
      .selectFrom('missions')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(count), 0, 'nothing was recorded');
  });

  it('refuses an invalid skill schema in strict authoring with its field path, and warns on a lenient import', async () => {
    const md = (i: number, schema: string) =>
      [
        '---',
        `name: bad-schema-${i}`,
        'description: Test skill bad-schema.',
        'metadata:',
        `  cadenza-output-schema: '${schema}'`,
        '---',
        'Go.',
        '',
      ].join('\n');
    for (const [i, schema] of ['{"type":"object","properties":{"a":{"type":"strnig"}}}', '{"type": object}'].entries()) {
      const strict = await stack.api.request('POST', '/api/v1/skills', {
        key,
        raw: md(i, schema),
        headers: { 'content-type': 'text/markdown' },
      });
      assert.equal(strict.status, 400, JSON.stringify(strict.body));
      const fields = strict.body.error.details.fields as Array<{ field: string; message: string }>;
      assert.ok(
        fields.some((f) => f.field === 'metadata.cadenza-output-schema'),
        JSON.stringify(fields),
      );
      const lenient = await stack.api.request('POST', '/api/v1/skills/import', {
        key,
        raw: md(i, schema),
        headers: { 'content-type': 'text/markdown' },
      });
      assert.equal(lenient.status, 201, JSON.stringify(lenient.body));
      const warned = lenient.body.warnings.filter((w: { field: string }) => w.field === 'metadata.cadenza-output-schema');
      assert.equal(warned.length, 1, JSON.stringify(lenient.body.warnings));
    }
  });
});
