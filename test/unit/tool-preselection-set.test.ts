import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadPreselectionSet } from '../../testkit/tools-eval.ts';

test('the preselection set labels at least 30 objectives over at least 40 tools, in a tune and a held-out half', async () => {
  const set = await loadPreselectionSet();
  assert.ok(set.names.length >= 40, `${set.names.length} tools`);
  assert.ok(set.objectives.length >= 30, `${set.objectives.length} objectives`);
  const tune = set.objectives.filter((o) => o.split === 'tune').length;
  assert.ok(tune >= 15 && set.objectives.length - tune >= 15, `${tune} tune objectives`);
  // loadPreselectionSet throws when an objective needs a tool the fixture apps do not declare.
  assert.equal(new Set(set.objectives.map((o) => o.objective)).size, set.objectives.length, 'no objective twice');
});
