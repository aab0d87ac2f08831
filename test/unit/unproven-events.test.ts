import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { createUnprovenEvents } from '../../events/unproven-events.ts';
import type { MissionEvent } from '../../contracts/events.ts';

const at = '2026-12-01T00:00:00.000Z';
const turn = (seq: number): MissionEvent => ({ seq, at, type: 'turn', turn: seq });
const unproven = (run: string, ...seqs: number[]) => seqs.map((seq) => ({ event: turn(seq), digest: `${run}${seq}` }));

/** A relay's pairing whose releases and expiries are recorded, in order. */
function pairing(waitMs = 1_000) {
  const seen: string[] = [];
  const pairs = createUnprovenEvents({
    waitMs,
    released: (m, events) => void seen.push(`push ${m} ${events.map((e) => e.seq).join(',')}`),
    expired: (m, lastSeq) => void seen.push(`query ${m} ${lastSeq}`),
  });
  return { seen, pairs };
}

describe("the relay's pairing of unproven events and proofs", () => {
  it('releases the events up to a matching proof as a push, and the rest at their own proof', () => {
    const { seen, pairs } = pairing();
    pairs.unproven('m', unproven('a', 1, 2, 3));
    pairs.proof('m', { upTo: 2, digest: 'a2' });
    pairs.proof('m', { upTo: 2, digest: 'a2' }); // a second activity of the task: settled already
    pairs.proof('m', { upTo: 3, digest: 'a3' });
    assert.deepEqual(seen, ['push m 1,2', 'push m 3']);
    assert.equal(pairs.size(), 0, 'nothing is left waiting');
  });

  it('keeps a proof that came before its events, and releases them when they arrive', () => {
    const { seen, pairs } = pairing();
    pairs.proof('m', { upTo: 2, digest: 'a2' });
    assert.deepEqual(seen, []);
    pairs.unproven('m', unproven('a', 1, 2));
    assert.deepEqual(seen, ['push m 1,2']);
  });

  it('never releases events of a task run that was lost: the run again replaces them, and only its proof matches', async () => {
    const { seen, pairs } = pairing(50);
    pairs.unproven('m', unproven('lost', 1, 2));
    pairs.unproven('m', unproven('again', 1, 2));
    pairs.proof('m', { upTo: 2, digest: 'lost2' });
    assert.deepEqual(seen, [], 'the lost run digest matches nothing held');
    pairs.proof('m', { upTo: 2, digest: 'again2' });
    assert.deepEqual(seen, ['push m 1,2']);
    await sleep(120);
    assert.deepEqual(seen, ['push m 1,2'], 'the unmatched proof is settled by the release: no query');
  });

  it('reads by the query what no proof came for, and what a proof matched nothing of, once the wait is over', async () => {
    const { seen, pairs } = pairing(50);
    pairs.unproven('m1', unproven('a', 1, 2));
    pairs.proof('m2', { upTo: 4, digest: 'b4' });
    await sleep(20);
    assert.deepEqual(seen, [], 'both wait');
    await sleep(100);
    assert.deepEqual(seen.sort(), ['query m1 2', 'query m2 4']);
    pairs.proof('m1', { upTo: 2, digest: 'a2' }); // too late: the query reads them
    await sleep(100);
    assert.deepEqual(seen.length, 2);
    assert.equal(pairs.size(), 0);
  });

  it('releases runs without a gap, the seqs a wake-up named left to the query', () => {
    const { seen, pairs } = pairing();
    pairs.unproven('m', unproven('a', 1, 2));
    pairs.unproven('m', unproven('a', 5, 6));
    pairs.proof('m', { upTo: 6, digest: 'a6' });
    assert.deepEqual(seen, ['push m 1,2', 'push m 5,6'], 'each run on its own; 3 and 4 came by a wake-up');
    const other = pairing();
    other.pairs.unproven('m', unproven('a', 1, 2));
    other.pairs.wokenUp('m', 2, false);
    other.pairs.proof('m', { upTo: 2, digest: 'a2' });
    assert.deepEqual(other.seen, [], 'a wake-up said to read them: nothing waits for them');
    assert.equal(other.pairs.size(), 0);
  });

  it('forgets a mission at its terminal wake-up', () => {
    const { seen, pairs } = pairing();
    pairs.unproven('m', unproven('a', 1, 2));
    pairs.wokenUp('m', 3, true);
    assert.equal(pairs.size(), 0);
    assert.deepEqual(seen, []);
  });
});
