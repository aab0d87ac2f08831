import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Seconds buckets for model calls (seconds to minutes) and tools and queue waits (milliseconds to minutes). */
const MODEL_BUCKETS = [0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 40, 80, 180];
const SHORT_BUCKETS = [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/** Mission outcomes as the metrics count them. */
export type MissionOutcome = 'completed' | 'failed' | 'cancelled';

/**
 * A process's Prometheus metrics, built once in its composition root. Every label takes a bounded set of values:
 * tiers, outcomes and activity types are closed sets; skill and tool names are capped per process (`_other` beyond).
 */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'cadenza_' });
  const registers = [registry];
  const skill = boundedLabel(100);
  const tool = boundedLabel(200);

  const missionsStarted = new Counter({
    name: 'cadenza_missions_started_total',
    help: 'Missions whose preparation succeeded, by skill',
    labelNames: ['skill'],
    registers,
  });
  const missionsEnded = new Counter({
    name: 'cadenza_missions_ended_total',
    help: 'Missions that ended, by skill and outcome (completed, failed, cancelled)',
    labelNames: ['skill', 'outcome'],
    registers,
  });
  const modelCalls = new Histogram({
    name: 'cadenza_model_call_duration_seconds',
    help: 'Model call attempts: duration by tier and outcome (ok, rate_limited, server_error, client_error, network, malformed, cancelled, error)',
    labelNames: ['tier', 'outcome'],
    buckets: MODEL_BUCKETS,
    registers,
  });
  const modelAttempts = new Counter({
    name: 'cadenza_model_call_attempts_total',
    help: 'Model call attempts by tier and outcome; rate_limited counts the 429s',
    labelNames: ['tier', 'outcome'],
    registers,
  });
  const tokens = new Counter({
    name: 'cadenza_model_tokens_total',
    help: 'Tokens by tier and direction: input (the whole prompt), cache_read and cache_write (the parts of it the prompt cache read and wrote), output',
    labelNames: ['tier', 'direction'],
    registers,
  });
  const cost = new Counter({
    name: 'cadenza_model_cost_usd_total',
    help: 'Model cost in USD (MODEL_PRICES) by tier',
    labelNames: ['tier'],
    registers,
  });
  const fallbacks = new Counter({
    name: 'cadenza_model_fallbacks_total',
    help: "Model calls moved to the next target of their tier's chain (MODEL_TIER_<TIER>_FALLBACKS), by tier, from and to (provider:model) and reason (rate_limited, server_error, network)",
    labelNames: ['tier', 'from', 'to', 'reason'],
    registers,
  });
  const providerWaits = new Counter({
    name: 'cadenza_provider_limit_waits_total',
    help: 'Model calls told to wait for their turn at PROVIDER_LIMITS (each refusal is one durable timer), by target (provider:model)',
    labelNames: ['target'],
    registers,
  });
  const providerWaited = new Histogram({
    name: 'cadenza_provider_limit_wait_seconds',
    help: 'Time a model call waited for its turn at PROVIDER_LIMITS before it was reserved (0: at once), by target (provider:model)',
    labelNames: ['target'],
    buckets: MODEL_BUCKETS,
    registers,
  });
  const toolCalls = new Histogram({
    name: 'cadenza_tool_call_duration_seconds',
    help: 'Tool call attempts: duration by tool and outcome (completed, error, cancelled, failed)',
    labelNames: ['tool', 'outcome'],
    buckets: SHORT_BUCKETS,
    registers,
  });
  const queueWait = new Histogram({
    name: 'cadenza_activity_queue_wait_seconds',
    help: 'Time an activity attempt waited in its task queue before a worker slot took it, by activity type',
    labelNames: ['activity'],
    buckets: SHORT_BUCKETS,
    registers,
  });
  const sseSubscribers = new Gauge({ name: 'cadenza_sse_subscribers', help: 'Open SSE streams of mission events', registers });
  type RelayCounts = { queries: number; empty: number; pushed: number };
  let relayCounts: () => RelayCounts = () => ({ queries: 0, empty: 0, pushed: 0 });
  new Counter({
    name: 'cadenza_relay_events_queries_total',
    help: 'Events queries the SSE relay asked of mission workflows, by whether they found new events (what watching costs)',
    labelNames: ['found'],
    registers,
    collect() {
      const { queries, empty } = relayCounts();
      this.reset();
      this.inc({ found: 'events' }, queries - empty);
      this.inc({ found: 'none' }, empty);
    },
  });
  new Counter({
    name: 'cadenza_relay_events_pushed_total',
    help: 'Pushes of mission events the SSE relay released on a worker proof instead of asking a query',
    registers,
    collect() {
      this.reset();
      this.inc(relayCounts().pushed);
    },
  });

  return {
    registry,
    missionStarted: (skillName: string) => missionsStarted.inc({ skill: skill(skillName) }),
    missionEnded: (skillName: string, outcome: MissionOutcome) => missionsEnded.inc({ skill: skill(skillName), outcome }),
    modelCall(o: {
      tier: string;
      outcome: string;
      seconds: number;
      inputTokens?: number;
      outputTokens?: number;
      cacheReadTokens?: number;
      cacheCreationTokens?: number;
      costUsd?: number;
    }) {
      modelCalls.observe({ tier: o.tier, outcome: o.outcome }, o.seconds);
      modelAttempts.inc({ tier: o.tier, outcome: o.outcome });
      if (o.inputTokens) tokens.inc({ tier: o.tier, direction: 'input' }, o.inputTokens);
      if (o.outputTokens) tokens.inc({ tier: o.tier, direction: 'output' }, o.outputTokens);
      if (o.cacheReadTokens) tokens.inc({ tier: o.tier, direction: 'cache_read' }, o.cacheReadTokens);
      if (o.cacheCreationTokens) tokens.inc({ tier: o.tier, direction: 'cache_write' }, o.cacheCreationTokens);
      if (o.costUsd) cost.inc({ tier: o.tier }, o.costUsd);
    },
    /** A call moved on to a fallback; the labels are configured targets, a bounded set. */
    modelFallback: (o: { tier: string; from: string; to: string; reason: string }) => fallbacks.inc(o),
    /** A call's turn at PROVIDER_LIMITS: refused (`waitMs`) or reserved after `waitedMs`; targets are configured, a bounded set. */
    providerTurn: (o: { target: string; waitMs?: number; waitedMs?: number }) =>
      o.waitMs !== undefined
        ? providerWaits.inc({ target: o.target })
        : providerWaited.observe({ target: o.target }, (o.waitedMs ?? 0) / 1000),
    toolCall: (toolName: string, outcome: string, seconds: number) => toolCalls.observe({ tool: tool(toolName), outcome }, seconds),
    queueWait: (activity: string, seconds: number) => queueWait.observe({ activity }, Math.max(0, seconds)),
    sseOpened: () => sseSubscribers.inc(),
    sseClosed: () => sseSubscribers.dec(),
    /** The relay whose query counts the scrape reads (one per API process). */
    watchRelay: (counts: () => RelayCounts) => void (relayCounts = counts),
  };
}
export type Metrics = ReturnType<typeof createMetrics>;

/** A label that keeps the first `max` distinct values it sees and reports every later one as `_other`. */
function boundedLabel(max: number): (value: string) => string {
  const seen = new Set<string>();
  return (value) => {
    if (seen.has(value)) return value;
    if (seen.size >= max) return '_other';
    seen.add(value);
    return value;
  };
}
