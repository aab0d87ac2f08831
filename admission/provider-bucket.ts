import type { ProviderLimit } from '../config/provider-limits.ts';

/** What is left of a target's per-minute allowances (may be below zero: a call used more than it reserved). */
export type Bucket = { requests: number; inputTokens: number; outputTokens: number };
/** One call's reservation: a request and its estimated tokens. */
export type CallNeed = { inputTokens: number; outputTokens: number };

const DIMENSIONS = [
  ['requests', 'requestsPerMinute'],
  ['inputTokens', 'inputTokensPerMinute'],
  ['outputTokens', 'outputTokensPerMinute'],
] as const;

/** A full bucket: each limit's whole minute (an unlimited dimension never runs out). */
export const fullBucket = (limit: ProviderLimit): Bucket => ({
  requests: limit.requestsPerMinute ?? Infinity,
  inputTokens: limit.inputTokensPerMinute ?? Infinity,
  outputTokens: limit.outputTokensPerMinute ?? Infinity,
});

/**
 * The bucket `elapsedS` seconds later: each allowance refills continuously at its limit per minute, up to the limit.
 * The providers' own limiters work this way (a token bucket of one minute's capacity), so a provider that counts the
 * same limit sees no more than this bucket let through, whatever the order the calls arrive in.
 */
export function refill(bucket: Bucket, limit: ProviderLimit, elapsedS: number): Bucket {
  const out = { ...bucket };
  for (const [dim, key] of DIMENSIONS) {
    const cap = limit[key];
    if (cap !== undefined) out[dim] = Math.min(cap, bucket[dim] + (cap * Math.max(0, elapsedS)) / 60);
  }
  return out;
}

/** A call's need in each dimension, capped at the limit: a call larger than a whole minute goes once the bucket is full. */
function needOf(call: CallNeed, limit: ProviderLimit): Bucket {
  const cap = (n: number, c: number | undefined) => (c === undefined ? n : Math.min(n, c));
  return {
    requests: cap(1, limit.requestsPerMinute),
    inputTokens: cap(call.inputTokens, limit.inputTokensPerMinute),
    outputTokens: cap(call.outputTokens, limit.outputTokensPerMinute),
  };
}

/**
 * Whether the last of `ahead` (the calls in fair order up to and including the asking one) may go now: the bucket must
 * hold all of them, so a call never takes what an earlier one in the order is waiting for. Granted: the bucket after
 * its reservation. Refused: the seconds until the bucket will hold them all.
 */
export function decide(bucket: Bucket, limit: ProviderLimit, ahead: CallNeed[]): { bucket: Bucket } | { waitS: number } {
  const total: Bucket = { requests: 0, inputTokens: 0, outputTokens: 0 };
  for (const call of ahead) {
    const need = needOf(call, limit);
    for (const [dim] of DIMENSIONS) total[dim] += need[dim];
  }
  let waitS = 0;
  for (const [dim, key] of DIMENSIONS) {
    const cap = limit[key];
    if (cap === undefined) continue;
    const deficit = total[dim] - bucket[dim];
    if (deficit > 1e-9) waitS = Math.max(waitS, (deficit * 60) / cap);
  }
  if (waitS > 0) return { waitS };
  const own = needOf(ahead[ahead.length - 1]!, limit);
  return {
    bucket: {
      requests: bucket.requests - own.requests,
      inputTokens: bucket.inputTokens - own.inputTokens,
      outputTokens: bucket.outputTokens - own.outputTokens,
    },
  };
}
