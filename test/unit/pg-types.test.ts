import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { parseFloat8Array } from '../../db/pg-types.ts';

const general = pg.types.getTypeParser(1022 as never, 'text') as (v: string) => unknown;

test('a double precision[] reads as the numbers pg itself would give, plain or with exponents', () => {
  for (const text of ['{}', '{1}', '{0.5,-2,3.25}', '{1e+20,-3.5e-05,0,-0}', '{0.1234567890123,9.87654321e-300}']) {
    assert.deepEqual(parseFloat8Array(text), general(text), text);
  }
  const vector = Array.from({ length: 384 }, (_, i) => Math.sin(i) / (i + 1));
  assert.deepEqual(parseFloat8Array(`{${vector.join(',')}}`), vector);
});

test('NULL elements, NaN, Infinity and nested arrays go to pg’s own parser', () => {
  for (const text of ['{NULL,1}', '{NaN,1}', '{Infinity,-Infinity}', '{{1,2},{3,4}}']) {
    assert.deepEqual(parseFloat8Array(text), general(text), text);
  }
});
