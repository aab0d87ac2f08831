import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRetryAfterMs, parseRetryAfterMsHeader, retryAfterFromHeaders } from '../../model/retry-after.ts';

const NOW = Date.parse('Wed, 21 Oct 2015 07:28:00 GMT');

test('delta-seconds become milliseconds', () => {
  assert.equal(parseRetryAfterMs('1', NOW), 1000);
  assert.equal(parseRetryAfterMs('0', NOW), 0);
  assert.equal(parseRetryAfterMs(' 120 ', NOW), 120_000);
});

test('decimal seconds are honoured', () => {
  assert.equal(parseRetryAfterMs('2.5', NOW), 2500);
  assert.equal(parseRetryAfterMs('0.25', NOW), 250);
});

test('an HTTP-date gives the time left until it', () => {
  assert.equal(parseRetryAfterMs('Wed, 21 Oct 2015 07:28:30 GMT', NOW), 30_000);
});

test('an HTTP-date already past means retry at once', () => {
  assert.equal(parseRetryAfterMs('Wed, 21 Oct 2015 07:27:00 GMT', NOW), 0);
});

test('absent, negative or garbage values give no hint', () => {
  for (const value of [undefined, null, '', '   ', '-1', '-0.5', 'soon', '1e3', '5s', 'NaN', 'Wed, 99 Foo 2015']) {
    assert.equal(parseRetryAfterMs(value, NOW), undefined, `value ${JSON.stringify(value)}`);
  }
});

test('retry-after-ms is read as milliseconds', () => {
  assert.equal(parseRetryAfterMsHeader('250'), 250);
  assert.equal(parseRetryAfterMsHeader('12.6'), 13);
  assert.equal(parseRetryAfterMsHeader('-5'), undefined);
  assert.equal(parseRetryAfterMsHeader('later'), undefined);
});

test('from headers, retry-after-ms wins over Retry-After, which is the fallback', () => {
  assert.equal(retryAfterFromHeaders(new Headers({ 'retry-after-ms': '300', 'retry-after': '2' }), NOW), 300);
  assert.equal(retryAfterFromHeaders(new Headers({ 'retry-after-ms': 'junk', 'Retry-After': '2' }), NOW), 2000);
  assert.equal(retryAfterFromHeaders(new Headers({}), NOW), undefined);
  assert.equal(retryAfterFromHeaders(undefined, NOW), undefined);
});
