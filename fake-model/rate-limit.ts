/**
 * A provider's requests-per-minute limit as the providers enforce theirs: a token bucket holding one minute's requests,
 * refilled continuously. A request finding it empty gets a 429 with `Retry-After` (whole seconds until a token).
 */
export function createRateLimit(now: () => number = Date.now) {
  let perMinute: number | undefined;
  let tokens = 0;
  let at = now();
  return {
    /** Sets the limit (undefined: none) and fills the bucket. */
    set(limit: number | undefined): void {
      perMinute = limit;
      tokens = limit ?? 0;
      at = now();
    },
    /** Takes a request's token; the seconds to wait when there is none, undefined when it may go. */
    take(): number | undefined {
      if (perMinute === undefined) return undefined;
      const t = now();
      tokens = Math.min(perMinute, tokens + ((t - at) / 60_000) * perMinute);
      at = t;
      if (tokens >= 1) {
        tokens -= 1;
        return undefined;
      }
      return Math.max(1, Math.ceil(((1 - tokens) * 60) / perMinute));
    },
  };
}
