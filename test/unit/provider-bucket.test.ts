import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decide, fullBucket, refill } from '../../admission/provider-bucket.ts';

const limit = { requestsPerMinute: 60, outputTokensPerMinute: 6_000 };
const call = { inputTokens: 1_000, outputTokens: 1_000 };

test('a bucket refills at its limit per minute, never past one minute of it', () => {
  const empty = { requests: 0, inputTokens: 0, outputTokens: 0 };
  assert.deepEqual(refill(empty, limit, 10), { requests: 10, inputTokens: 0, outputTokens: 1_000 });
  assert.deepEqual(refill(empty, limit, 600), { requests: 60, inputTokens: 0, outputTokens: 6_000 });
});

test('a call is reserved when the bucket holds it and every call ahead of it, and takes only its own need', () => {
  const verdict = decide(fullBucket(limit), limit, [call, call]);
  assert.ok('bucket' in verdict);
  assert.equal(verdict.bucket.requests, 59);
  assert.equal(verdict.bucket.outputTokens, 5_000);
  assert.equal(verdict.bucket.inputTokens, Infinity, 'an unlimited dimension never runs out');
});

test('a refused call is told how long until the bucket holds it and the calls ahead, in its scarcest dimension', () => {
  const bucket = { requests: 2, inputTokens: 0, outputTokens: 1_500 };
  const verdict = decide(bucket, limit, [call, call]);
  assert.deepEqual(verdict, { waitS: 5 }, '500 output tokens short at 100 a second');
  assert.deepEqual(decide({ ...bucket, outputTokens: 9_999 }, limit, [call, call, call]), { waitS: 1 }, 'one request short');
});

test('a call larger than a whole minute of a limit goes once the bucket is full, not never', () => {
  const huge = { inputTokens: 1, outputTokens: 50_000 };
  assert.ok('bucket' in decide(fullBucket(limit), limit, [huge]));
  assert.deepEqual(decide({ requests: 60, inputTokens: 0, outputTokens: 0 }, limit, [huge]), { waitS: 60 });
});
