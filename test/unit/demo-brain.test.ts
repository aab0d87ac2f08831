import { encode } from '@toon-format/toon';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { briefFrom, demoBrain, placeOf } from '../../demo/demo-brain.ts';
import type { FakeReply, RecordedRequest, Step } from '../../fake-model/fake-model-server.ts';

const TOOLS = ['weather__get_forecast', 'weather__get_alerts'];
const ask = (objective: string, results: string[] = []) =>
  ({
    lastUserText: `Objective: ${objective}`,
    toolNames: TOOLS,
    allToolResults: results.map((content) => ({ content })),
  }) as unknown as RecordedRequest;

const replyOf = (step: Step): FakeReply | undefined => ('reply' in step ? step.reply : undefined);

describe("the demo's fake model", () => {
  for (const [text, place] of [
    ['I am flying tomorrow: brief me on the weather in Lisbon.', 'Lisbon'],
    ['Flying to New York on Monday, what should I expect?', 'New York'],
    ['Porto forecast for the weekend', 'Porto'],
    ["What's the weather like in Rio de Janeiro this weekend?", 'Rio de Janeiro'],
    ['trip to lisbon next week', 'Lisbon'],
    ['Tomorrow Berlin: any alerts?', 'Berlin'],
    ['Will it rain in São Paulo tonight?', 'São Paulo'],
    ["Brief me on Edinburgh's weather", 'Edinburgh'],
  ] as const) {
    it(`finds ${place} in ${JSON.stringify(text)}`, () => assert.equal(placeOf(text), place));
  }

  it('finds no place where none is named, and asks for one instead of guessing', () => {
    assert.equal(placeOf('What is the weather tomorrow?'), undefined);
    const step = replyOf(demoBrain(ask('What is the weather tomorrow?')));
    assert.equal(step?.toolUses, undefined);
    assert.match(step?.text ?? '', /Which place/);
  });

  it('calls both tools for a brief, and only the one asked for otherwise', () => {
    const names = (objective: string) => replyOf(demoBrain(ask(objective)))?.toolUses?.map((t) => t.name);
    assert.deepEqual(names('Brief me on the weather in Lisbon'), TOOLS);
    assert.deepEqual(names('Any weather alerts for Porto?'), ['weather__get_alerts']);
    assert.deepEqual(names('The forecast in Madrid, please'), ['weather__get_forecast']);
    assert.deepEqual(replyOf(demoBrain(ask('weather in Oslo')))?.toolUses?.[0]?.input, { place: 'Oslo' });
  });

  it('answers in at most three readable lines: the alert first, the forecast, advice', () => {
    const text = briefFrom([
      JSON.stringify({ place: 'Lisbon', forecast: 'light rain until noon, then sunny spells', highC: 14, lowC: 6 }),
      JSON.stringify({ region: 'Lisbon', alerts: [{ level: 'yellow', text: 'strong gusts along the coast in the evening' }] }),
    ]);
    assert.equal(
      text,
      [
        'Yellow alert for Lisbon: strong gusts along the coast in the evening.',
        'Lisbon: light rain until noon, then sunny spells, 6 to 14 °C.',
        'Advice: take an umbrella, and expect wind on the coast in the evening.',
      ].join('\n'),
    );
    assert.doesNotMatch(text, /[{}"]/, 'no JSON in the answer');
  });

  it('reads results sent as TOON, with Cadenza’s notes after them, the same way', () => {
    const asJson = briefFrom([
      JSON.stringify({ place: 'Lisbon', forecast: 'light rain until noon, then sunny spells', highC: 14, lowC: 6 }),
      JSON.stringify({ region: 'Lisbon', alerts: [{ level: 'yellow', text: 'strong gusts along the coast in the evening' }] }),
    ]);
    const asToon = briefFrom([
      `${encode({ place: 'Lisbon', forecast: 'light rain until noon, then sunny spells', highC: 14, lowC: 6 })}\n\n[shown to the user as canvases: "Temperature"]`,
      encode({ region: 'Lisbon', alerts: [{ level: 'yellow', text: 'strong gusts along the coast in the evening' }] }),
    ]);
    assert.equal(asToon, asJson);
  });
});
