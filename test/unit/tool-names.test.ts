import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MODEL_TOOL_NAME_PATTERN, parseQualifiedToolName, toModelToolName } from '../../contracts/names.ts';

const longApp = 'a'.repeat(32);
const longTool = (last: string) => `${'t'.repeat(47)}${last}`;

describe('toModelToolName', () => {
  it('joins app id and tool name with a double underscore', () => {
    assert.equal(toModelToolName('weather.get_forecast'), 'weather__get_forecast');
    assert.equal(toModelToolName('my-app.x'), 'my-app__x');
  });

  it('keeps over-long names within 64 provider-legal characters, deterministically', () => {
    const name = toModelToolName(`${longApp}.${longTool('x')}`);
    assert.equal(name.length, 64);
    assert.match(name, MODEL_TOOL_NAME_PATTERN);
    assert.equal(toModelToolName(`${longApp}.${longTool('x')}`), name);
  });

  it('gives distinct names to long tools that differ only past the cut', () => {
    assert.notEqual(toModelToolName(`${longApp}.${longTool('x')}`), toModelToolName(`${longApp}.${longTool('y')}`));
  });

  it('leaves a name of exactly 64 characters untouched', () => {
    const app = 'b'.repeat(14);
    const tool = 'c'.repeat(48);
    assert.equal(toModelToolName(`${app}.${tool}`), `${app}__${tool}`);
  });

  it('rejects what is not a qualified tool name', () => {
    assert.throws(() => toModelToolName('get_forecast'), TypeError);
    assert.throws(() => toModelToolName('Weather.get_forecast'), TypeError);
  });
});

describe('parseQualifiedToolName', () => {
  it('splits a valid name into app id and tool', () => {
    assert.deepEqual(parseQualifiedToolName('weather.get_forecast'), { appId: 'weather', tool: 'get_forecast' });
    assert.deepEqual(parseQualifiedToolName('my-app2.t_1'), { appId: 'my-app2', tool: 't_1' });
  });

  for (const bad of [
    'weather',
    '.get_forecast',
    'weather.',
    'Weather.get_forecast',
    'weather.GetForecast',
    'weather.get-forecast',
    'weather.get.forecast',
    '-weather.x',
    'weather-.x',
    'wea--ther.x',
    'wea_ther.x',
    `${'a'.repeat(33)}.x`,
    `weather.${'t'.repeat(49)}`,
  ]) {
    it(`rejects ${JSON.stringify(bad)}`, () => {
      assert.equal(parseQualifiedToolName(bad), undefined);
    });
  }
});
