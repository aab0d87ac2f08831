import {
  Client,
  Connection,
  defaultGrpcRetryOptions,
  makeGrpcRetryInterceptor,
  type ConnectionOptions,
  type WorkflowClientInterceptor,
} from '@temporalio/client';
import { toClientOptions } from '@temporalio/envconfig';
import { InterceptingCall, ListenerBuilder, type Interceptor } from '@grpc/grpc-js';
import type { NativeConnectionOptions } from '@temporalio/worker';
import type { Config } from '../config/config.ts';
import { isTemporalUnavailable } from './unavailable.ts';

/** How long any API call to Temporal may take when the caller set no tighter deadline (retries included). */
export const TEMPORAL_CALL_DEADLINE_MS = 5_000;
/** The longest wait between two reconnection attempts after Temporal went away (grpc-js' own default is 120 s). */
export const TEMPORAL_MAX_RECONNECT_BACKOFF_MS = 2_000;

type TemporalConfig = Pick<Config['temporal'], 'address' | 'namespace' | 'apiKey' | 'tls' | 'grpcMeta'>;

/**
 * Address, TLS, API key and headers of the Temporal frontend, for the worker's native connection and the API's
 * client alike: the profile from config (TEMPORAL_* variables, or an envconfig profile file) turned into SDK options
 * by @temporalio/envconfig, so an API key or mTLS reaches Temporal Cloud or a secured cluster.
 */
export function temporalConnectionOptions(config: TemporalConfig, address = config.address): NativeConnectionOptions {
  if (!address) throw new Error('no Temporal address: set TEMPORAL_ADDRESS (or start a dev server)');
  const { connectionOptions } = toClientOptions({
    address,
    namespace: config.namespace,
    ...(config.apiKey ? { apiKey: config.apiKey } : {}),
    ...(config.tls ? { tls: config.tls } : {}),
    ...(config.grpcMeta ? { grpcMeta: { ...config.grpcMeta } } : {}),
  });
  return connectionOptions;
}

/**
 * The API's client options: the same profile, plus a deadline on every call (so nothing hangs on a Temporal that is
 * down: the SDK's retries of an unavailable server would otherwise take ~20 s) and a short reconnect backoff (so
 * readiness comes back within seconds of the server).
 */
export function temporalClientOptions(config: TemporalConfig, address = config.address, calls = createCallTracker()): ConnectionOptions {
  const { address: normalised, tls, apiKey, metadata } = temporalConnectionOptions(config, address);
  const retry = makeGrpcRetryInterceptor(defaultGrpcRetryOptions());
  const withDefaultDeadline: typeof retry = (options, nextCall) =>
    retry({ ...options, deadline: options.deadline ?? Date.now() + TEMPORAL_CALL_DEADLINE_MS }, nextCall);
  return {
    ...(normalised ? { address: normalised } : {}),
    ...(tls !== undefined ? { tls } : {}),
    ...(apiKey ? { apiKey } : {}),
    ...(metadata ? { metadata } : {}),
    connectTimeout: TEMPORAL_CALL_DEADLINE_MS,
    interceptors: [calls.interceptor, withDefaultDeadline],
    channelArgs: {
      'grpc.initial_reconnect_backoff_ms': 250,
      'grpc.min_reconnect_backoff_ms': 250,
      'grpc.max_reconnect_backoff_ms': TEMPORAL_MAX_RECONNECT_BACKOFF_MS,
    },
  };
}

/**
 * Counts the client's calls until their final status (after the retry interceptor's last attempt). The SDK's retry
 * interceptor schedules a retry on a timer; one firing after the channel closed throws outside any caller, so the
 * connection is closed only once no call is in flight (`idle`).
 */
export function createCallTracker() {
  let inFlight = 0;
  let wake: (() => void) | undefined;
  const interceptor: Interceptor = (options, nextCall) => {
    inFlight += 1;
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      inFlight -= 1;
      if (inFlight === 0) wake?.();
    };
    return new InterceptingCall(nextCall(options), {
      start(metadata, _listener, next) {
        next(
          metadata,
          new ListenerBuilder()
            .withOnReceiveStatus((status, nextStatus) => {
              end();
              nextStatus(status);
            })
            .build(),
        );
      },
    });
  };
  return {
    interceptor,
    /** Resolves once no call is in flight, or after `ms` whatever remains. */
    idle(ms: number): Promise<void> {
      if (inFlight === 0) return Promise.resolve();
      return new Promise((ok) => {
        const timer = setTimeout(ok, ms);
        wake = () => {
          clearTimeout(timer);
          ok();
        };
      });
    },
  };
}

/**
 * The API's Temporal client, with its connection (closed on shutdown). The connection is lazy: a Temporal that is
 * down at start-up does not stop the API (it answers 503 and `/readyz` says why until Temporal is back), while a
 * server that answers with anything else (a refused API key, a TLS mismatch) fails start-up at once.
 * `workflowInterceptors` wrap the client's workflow calls (tracing).
 */
export async function connectTemporalClient(
  config: TemporalConfig,
  address = config.address,
  onUnavailable: (err: unknown) => void = () => {},
  workflowInterceptors: WorkflowClientInterceptor[] = [],
): Promise<{ client: Client; connection: Connection; close(): Promise<void> }> {
  const calls = createCallTracker();
  const connection = Connection.lazy(temporalClientOptions(config, address, calls));
  try {
    await connection.workflowService.getSystemInfo({});
  } catch (err) {
    if (!isTemporalUnavailable(err)) {
      await connection.close();
      throw err;
    }
    onUnavailable(err);
  }
  const close = async () => {
    await calls.idle(TEMPORAL_CALL_DEADLINE_MS + 1_000);
    await connection.close();
  };
  const client = new Client({ connection, namespace: config.namespace, interceptors: { workflow: workflowInterceptors } });
  return { client, connection, close };
}
