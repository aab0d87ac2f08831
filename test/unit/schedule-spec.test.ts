import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cronProblem, durationMs, inZone, isTimeZone, temporalSpec } from '../../schedules/schedule-spec.ts';

describe('schedule timing, checked before Temporal sees it', () => {
  it('takes five-field crons with ranges, steps, lists and names, and the macros', () => {
    for (const ok of ['0 9 * * *', '*/15 8-18 * * mon-fri', '0 0 1,15 * *', '30 18 * jan,jul 0', '0 12 * * 7', '@daily', '@hourly'])
      assert.equal(cronProblem(ok), undefined, ok);
  });

  it('says what is wrong with a cron that is not one', () => {
    assert.match(cronProblem('61 * * * *')!, /minute field "61": "61" is outside 0-59/);
    assert.match(cronProblem('0 9 * *')!, /needs 5 fields/);
    assert.match(cronProblem('0 25 * * *')!, /hour/);
    assert.match(cronProblem('0 9 * * funday')!, /day of week/);
    assert.match(cronProblem('0 18-9 * * *')!, /runs backwards/);
    assert.match(cronProblem('*/0 * * * *')!, /step "0"/);
  });

  it('reads durations with a unit, and knows IANA zones', () => {
    assert.equal(durationMs('30s'), 30_000);
    assert.equal(durationMs('2h'), 7_200_000);
    assert.equal(durationMs('5 minutes'), undefined);
    assert.equal(durationMs('0s'), undefined);
    assert.ok(isTimeZone('Europe/Paris'));
    assert.ok(!isTimeZone('Mars/Olympus_Mons'));
  });

  it('builds the Temporal spec, UTC unless a zone is given', () => {
    assert.deepEqual(temporalSpec({ every: '2s' }), { intervals: [{ every: 2_000 }], timezone: 'UTC' });
    assert.deepEqual(temporalSpec({ cron: ' 0 9 * * * ', timezone: 'Asia/Tokyo' }), {
      cronExpressions: ['0 9 * * *'],
      timezone: 'Asia/Tokyo',
    });
  });

  it('shows a moment on the wall clock of a zone, with its offset', () => {
    const at = new Date('2026-12-04T00:00:00Z');
    assert.equal(inZone(at, 'Asia/Tokyo'), '2026-12-04T09:00:00+09:00');
    assert.equal(inZone(at, 'UTC'), '2026-12-04T00:00:00+00:00');
    assert.equal(inZone(at, 'America/New_York'), '2026-12-03T19:00:00-05:00');
  });
});
