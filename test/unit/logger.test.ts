import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger, type LogFormat, type LogLevel } from '../../lib/logger.ts';

function capture(opts: { level?: LogLevel; format?: LogFormat } = {}) {
  const lines: string[] = [];
  const logger = createLogger({ ...opts, write: (l) => lines.push(l) });
  return { logger, lines, json: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

test('each line is one JSON object with time, level and msg', () => {
  const { logger, json } = capture();
  logger.info('api listening', { url: 'http://127.0.0.1:8080' });
  const [line] = json();
  assert.equal(line!.level, 'info');
  assert.equal(line!.msg, 'api listening');
  assert.equal(line!.url, 'http://127.0.0.1:8080');
  assert.match(String(line!.time), /^\d{4}-\d\d-\d\dT/);
});

test('lines below the level are not written', () => {
  const { logger, lines } = capture({ level: 'warn' });
  logger.debug('d');
  logger.info('i');
  logger.warn('w');
  logger.error('e');
  assert.deepEqual(
    lines.map((l) => (JSON.parse(l) as { msg: string }).msg),
    ['w', 'e'],
  );
});

test('an error keeps its stack, its code and its cause chain', () => {
  const { logger, json } = capture();
  const root = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
  logger.error('request failed', { err: new Error('could not load the mission', { cause: root }) });
  const err = json()[0]!.err as { type: string; message: string; stack: string; cause: { message: string; code: string; stack: string } };
  assert.equal(err.type, 'Error');
  assert.equal(err.message, 'could not load the mission');
  assert.match(err.stack, /logger\.test\.ts/);
  assert.equal(err.cause.message, 'connect ECONNREFUSED');
  assert.equal(err.cause.code, 'ECONNREFUSED');
  assert.match(err.cause.stack, /logger\.test\.ts/);
});

test('secrets are redacted wherever they sit; counts named like tokens are kept', () => {
  const { logger, lines } = capture();
  logger.info('calling', {
    MODEL_API_KEY: 'sk-ant-1234567890',
    apiKey: 'k-1234567890',
    headers: { authorization: 'Bearer abcdefghijkl', 'x-api-key': 'xyz-1234567890', accept: 'application/json' },
    nested: { deeper: { clientSecret: 's3cr3t-value', password: 'hunter2hunter2', refresh_token: 'rt-1234567890' } },
    databaseUrl: 'postgres://cadenza:pa55word@db.internal:5432/cadenza',
    note: 'sent Authorization: Bearer abcdefghijkl to the provider',
    metrics: { inputTokens: 120, outputTokens: 40, maxTokens: 4096 },
  });
  const text = lines[0]!;
  for (const secret of [
    'sk-ant-1234567890',
    'k-1234567890',
    'abcdefghijkl',
    'xyz-1234567890',
    's3cr3t-value',
    'hunter2',
    'rt-1234567890',
    'pa55word',
  ]) {
    assert.ok(!text.includes(secret), `${secret} leaked: ${text}`);
  }
  const line = JSON.parse(text) as {
    MODEL_API_KEY: string;
    headers: Record<string, string>;
    databaseUrl: string;
    metrics: Record<string, number>;
  };
  assert.equal(line.MODEL_API_KEY, '[redacted]');
  assert.equal(line.headers.authorization, '[redacted]');
  assert.equal(line.headers.accept, 'application/json');
  assert.equal(line.databaseUrl, 'postgres://cadenza:[redacted]@db.internal:5432/cadenza');
  assert.deepEqual(line.metrics, { inputTokens: 120, outputTokens: 40, maxTokens: 4096 });
});

test('secrets in an error, in a message and in child bindings are redacted too', () => {
  const { logger, lines } = capture();
  const err = Object.assign(new Error('401 from https://user:topsecretpw@api.example.com'), {
    config: { headers: { Authorization: 'Bearer zzzzzzzzzzzz' } },
  });
  logger.child({ token: 'tok-1234567890' }).error('provider refused Bearer yyyyyyyyyyyy', { err });
  const text = lines[0]!;
  for (const secret of ['topsecretpw', 'zzzzzzzzzzzz', 'yyyyyyyyyyyy', 'tok-1234567890'])
    assert.ok(!text.includes(secret), `${secret} leaked: ${text}`);
});

test('a value that refers to itself is logged, not a crash', () => {
  const { logger, json } = capture();
  const loop: Record<string, unknown> = { name: 'loop' };
  loop.self = loop;
  logger.info('cyclic', { loop });
  assert.deepEqual(json()[0]!.loop, { name: 'loop', self: '[circular]' });
});

test('the pretty format is one readable line per entry with the error stack below it', () => {
  const { logger, lines } = capture({ format: 'pretty' });
  logger.warn('event poll failed; retrying', { missionId: 'm-1', err: new Error('boom') });
  const [line] = lines;
  assert.match(line!, /^\d\d:\d\d:\d\d\.\d{3} WARN  event poll failed; retrying {2}missionId=m-1 err=Error: boom\n/);
  assert.match(line!, /\n {4}Error: boom\n {4}.*at /);
});
