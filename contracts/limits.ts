/** Mission limits: the one turn-limit rule and how a mission's effective limits are reported. */

/**
 * Every turn limit — a request's `maxTurns`, a skill's `max-turns`, the server's `MAX_TURNS_CAP` — is an integer
 * from 1 to this; a mission runs the lowest of those that are set.
 */
export const MAX_TURNS_CEILING = 50;

/** Who set a limit: the request, the skill, the server's configuration, or nobody (no limit). */
export type LimitSource = 'request' | 'skill' | 'server' | 'none';

/** One effective limit (null: none), where it came from, and what the request asked for when that was lowered. */
export type Limit<V extends number | null = number | null> = { value: V; source: LimitSource; requested?: number };

/** The effective limits of a mission, decided when it is recorded; a mission always has a turn limit. */
export type MissionLimits = { maxTurns: Limit<number>; maxTokens: Limit; maxCostUsd: Limit };
