/** The socket errors of a connection that closed before any response came back on it. */
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);

/**
 * `fetch` that sends a request once more, at once, when its connection was reset before any response came back. The
 * common case is a kept-alive connection the provider closed while a worker starved of CPU could not see it: the request
 * was never read, and without this the reset spent one of the model call's three attempts (`bench/starved-worker.ts`).
 * Any other failure, a second reset, an aborted call or a body that cannot be sent again is thrown as it came.
 */
export const fetchResendingReset: typeof fetch = async (input, init) => {
  try {
    return await fetch(input, init);
  } catch (error) {
    const resendable = init?.body === undefined || init.body === null || typeof init.body === 'string';
    if (init?.signal?.aborted || !resendable || !isConnectionReset(error)) throw error;
    return fetch(input, init);
  }
};

function isConnectionReset(error: unknown): boolean {
  if (!(error instanceof TypeError)) return false;
  const cause: unknown = error.cause;
  const code = typeof cause === 'object' && cause !== null ? (cause as { code?: unknown }).code : undefined;
  return typeof code === 'string' && RESET_CODES.has(code);
}
