import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import express from 'express';
import {
  ConflictError,
  ModelUnconfiguredError,
  NotFoundError,
  RateLimitedError,
  TooLargeError,
  UnavailableError,
  UnprocessableError,
  ValidationError,
} from '../../contracts/errors.ts';
import { createLogger } from '../../lib/logger.ts';
import { errorMiddleware } from '../../server/errors.ts';

// What a client sees when a service throws each domain error: the status, the code of the closed set, the details.
describe('domain errors at the HTTP edge', () => {
  const thrown: Record<string, Error> = {
    'not-found': new NotFoundError('mission not found'),
    conflict: new ConflictError('mission is already completed'),
    validation: new ValidationError('invalid body: name: required', { fields: [{ field: 'name', message: 'required' }] }),
    unprocessable: new UnprocessableError('no active skill matches the objective'),
    'too-large': new TooLargeError('bundle refused: too many files', { fields: [{ field: 'bundle', message: 'too many files' }] }),
    'rate-limited': new RateLimitedError('too many starts', 17),
    unavailable: new UnavailableError('no worker confirmed the cancel in time'),
    unconfigured: new ModelUnconfiguredError('missions cannot run: no key', { variable: 'MODEL_API_KEY' }),
  };
  let base = '';
  let server: ReturnType<express.Express['listen']>;
  before(async () => {
    const app = express();
    app.get('/:kind', (req) => {
      throw thrown[req.params.kind]!;
    });
    app.use(errorMiddleware(createLogger({ write: () => {} })));
    server = app.listen(0, '127.0.0.1');
    await new Promise((ok) => server.once('listening', ok));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise((ok) => server.close(ok)));

  const answer = async (kind: string) => {
    const res = await fetch(`${base}/${kind}`);
    const body = (await res.json()) as { error: { code: string; message: string; details?: unknown } };
    return { status: res.status, retryAfter: res.headers.get('retry-after'), ...body.error };
  };

  it('answers each kind with its status and code, the message and the details as thrown', async () => {
    assert.deepEqual(await answer('not-found'), { status: 404, retryAfter: null, code: 'not_found', message: 'mission not found' });
    assert.equal((await answer('conflict')).code, 'conflict');
    assert.deepEqual(await answer('validation'), {
      status: 400,
      retryAfter: null,
      code: 'validation_failed',
      message: 'invalid body: name: required',
      details: { fields: [{ field: 'name', message: 'required' }] },
    });
    assert.equal((await answer('unprocessable')).status, 422);
    assert.equal((await answer('too-large')).code, 'payload_too_large');
    assert.deepEqual(await answer('unconfigured'), {
      status: 503,
      retryAfter: null,
      code: 'model_unconfigured',
      message: 'missions cannot run: no key',
      details: { variable: 'MODEL_API_KEY' },
    });
  });

  it('tells a rate-limited client when to retry, and an unavailable one too', async () => {
    const limited = await answer('rate-limited');
    assert.deepEqual([limited.status, limited.code, limited.retryAfter], [429, 'rate_limited', '17']);
    const unavailable = await answer('unavailable');
    assert.deepEqual([unavailable.status, unavailable.code, unavailable.retryAfter], [503, 'unavailable', '5']);
  });
});
