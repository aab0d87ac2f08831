import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ActivityFailure, ApplicationFailure, CancelledFailure, RetryState, TimeoutFailure, TimeoutType } from '@temporalio/common';
import { fallbackAfter } from '../../workflows/model-fallback.ts';

/** A model activity's final failure as the workflow receives it. */
const failed = (cause: Error, state: RetryState = RetryState.MAXIMUM_ATTEMPTS_REACHED) =>
  new ActivityFailure('Activity task failed', 'callModel', '7', state, 'worker', cause);
const model = (kind: string, details?: unknown) =>
  ApplicationFailure.create({
    type: `Model.${kind}`,
    message: `model call failed (attempt 3): ${kind}`,
    details: details ? [details] : [],
  });
const chain = { target: 'anthropic:main', next: 'openai:backup' };

test('an overload, a 5xx or a network failure with a next target falls back to it, saying why', () => {
  for (const kind of ['rate_limited', 'server_error', 'network'])
    assert.deepEqual(fallbackAfter(failed(model(kind, chain))), {
      from: 'anthropic:main',
      to: 'openai:backup',
      reason: kind,
      message: `model call failed (attempt 3): ${kind}`,
    });
});

test('a 4xx about the request, a malformed reply, the end of the chain, a cancellation or a timeout do not fall back', () => {
  assert.equal(fallbackAfter(failed(model('client_error', chain), RetryState.NON_RETRYABLE_FAILURE)), undefined);
  assert.equal(fallbackAfter(failed(model('malformed', chain))), undefined);
  assert.equal(fallbackAfter(failed(model('server_error', { target: 'openai:backup' }))), undefined, 'the last target');
  assert.equal(fallbackAfter(failed(model('server_error'))), undefined, 'no details: a failure from before chains');
  assert.equal(fallbackAfter(failed(new CancelledFailure('cancelled'))), undefined);
  assert.equal(fallbackAfter(failed(new TimeoutFailure('heartbeat', undefined, TimeoutType.HEARTBEAT))), undefined);
  assert.equal(fallbackAfter(model('server_error', chain)), undefined, 'not an activity failure');
});
