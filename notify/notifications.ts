import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import type { PGlite } from '@electric-sql/pglite';
import type { Logger } from '../lib/logger.ts';

/** The channels Cadenza's processes wake each other on; a payload is at most NOTIFY_MAX_BYTES. */
export const CHANNELS = {
  /** A mission's workflow emitted events: a wake-up or the events themselves (events/wire.ts). */
  events: 'cadenza_events',
  /** A live event (events/live-publisher.ts). */
  live: 'cadenza_live',
  /** An accepted tool cancel (payload: `missionId/toolUseId`): the worker holding the call aborts it at once. */
  toolCancel: 'cadenza_tool_cancel',
  /** An owner's skills changed what a listing shows (payload: `tenantId/userId`; sent by a trigger on `skills`). */
  skills: 'cadenza_skills',
} as const;
export type Channel = (typeof CHANNELS)[keyof typeof CHANNELS];

/** Postgres refuses NOTIFY payloads of 8000 bytes or more. */
export const NOTIFY_MAX_BYTES = 7_900;

/**
 * Postgres LISTEN/NOTIFY between the processes of one deployment (API and worker, one or many of each). Best effort:
 * a notification only says "look now"; whoever listens still reads the record (the workflow query, Temporal's
 * cancellation), and keeps a slow poll for what a dropped connection lost.
 */
export type Notifications = {
  /**
   * Sends one notification, or several in one statement (one round trip; delivered in this order). Never throws: a
   * lost notification is a later poll, not an error.
   */
  notify(channel: Channel, payload: string | readonly string[]): Promise<void>;
  /** Calls `handler` with each payload on the channel; `onResync` after the listening connection was re-opened. */
  listen(channel: Channel, handler: (payload: string) => void, onResync?: () => void): () => void;
  close(): Promise<void>;
};

/**
 * How the listening connection proves it still hears: every `everyMs` it notifies itself, and one that has not heard
 * that within `timeoutMs` is re-opened (which wakes every listener: what it missed is read again). A connection can
 * die without a word (a half-open TCP connection, a failover that sent no reset): it would otherwise look healthy
 * while every notification is lost.
 */
export type ListenProbe = { everyMs: number; timeoutMs: number };
const LISTEN_PROBE: ListenProbe = { everyMs: 30_000, timeoutMs: 10_000 };
const PROBE_CHANNEL = 'cadenza_listen_probe';

type Listener = { handler: (payload: string) => void; onResync: (() => void) | undefined };

/** Notifications over the database's own connections: a dedicated client listens, the pool sends. */
export function createNotifications<DB>(
  db: Kysely<DB>,
  target: { kind: 'postgres'; url: string } | { kind: 'pglite'; pglite: PGlite },
  logger?: Pick<Logger, 'warn'>,
  probe: ListenProbe = LISTEN_PROBE,
): Notifications {
  const listeners = new Map<Channel, Set<Listener>>();
  const dispatch = (channel: string, payload: string) => {
    for (const l of listeners.get(channel as Channel) ?? []) {
      try {
        l.handler(payload);
      } catch (err) {
        logger?.warn('a notification handler failed', { channel, err });
      }
    }
  };
  const transport =
    target.kind === 'pglite' ? pgliteListener(target.pglite, dispatch) : postgresListener(target.url, dispatch, resync, logger, probe);
  // On Postgres a connection of its own sends: a notification never waits for a pool connection behind the process's
  // other statements (a loaded worker's activities hold them all at times). Through the pool while it is down.
  const sender = target.kind === 'postgres' ? postgresSender(target.url) : undefined;
  function resync(): void {
    for (const set of listeners.values()) for (const l of set) l.onResync?.();
  }
  let closed = false;
  return {
    async notify(channel, payload) {
      if (closed || payload.length === 0) return;
      const statement =
        typeof payload === 'string'
          ? sql`select pg_notify(${channel}, ${payload})`
          : sql`select pg_notify(${channel}, p) from unnest(${[...payload]}::text[]) with ordinality as t(p, n) order by n`;
      const compiled = statement.compile(db);
      const sent = sender ? sender.send(compiled.sql, compiled.parameters) : Promise.resolve(false);
      await sent
        .then((done) => (done ? undefined : statement.execute(db)))
        .then(
          () => undefined,
          (err: unknown) => logger?.warn('could not send a notification', { channel, err }),
        );
    },
    listen(channel, handler, onResync) {
      let set = listeners.get(channel);
      if (!set) {
        set = new Set();
        listeners.set(channel, set);
        transport.add(channel);
      }
      const l = { handler, onResync };
      set.add(l);
      return () => void set.delete(l);
    },
    async close() {
      closed = true;
      listeners.clear();
      await Promise.all([transport.close(), sender?.close()]);
    },
  };
}

/**
 * One client outside the pool that only sends notifications, one statement at a time, opened at the first and again
 * after it failed. `send` resolves false when it could not (the caller sends through the pool instead).
 */
function postgresSender(url: string) {
  let client: Promise<pg.Client> | undefined;
  let queue: Promise<unknown> = Promise.resolve();
  let closed = false;
  const open = () => {
    const c = new pg.Client({ connectionString: url });
    const opened = c.connect().then(() => c);
    const drop = () => {
      if (client === opened) client = undefined;
      c.end().catch(() => {});
    };
    c.on('error', drop);
    c.on('end', drop);
    opened.catch(drop);
    return opened;
  };
  return {
    send(text: string, values: readonly unknown[]): Promise<boolean> {
      if (closed) return Promise.resolve(false);
      const c = (client ??= open());
      const sent = queue
        .then(() => c.then((cl) => cl.query(text, [...values])))
        .then(
          () => true,
          () => false,
        );
      queue = sent;
      return sent;
    },
    async close() {
      closed = true;
      await queue;
      await (await client?.catch(() => undefined))?.end().catch(() => {});
    },
  };
}

type Transport = { add(channel: string): void; close(): Promise<void> };

function pgliteListener(pglite: PGlite, dispatch: (channel: string, payload: string) => void): Transport {
  const stops: Array<Promise<() => Promise<void>>> = [];
  return {
    add: (channel) => void stops.push(pglite.listen(channel, (payload) => dispatch(channel, payload))),
    async close() {
      for (const stop of await Promise.all(stops)) await stop().catch(() => {});
    },
  };
}

/** One client outside the pool, LISTENing on every channel asked for; re-opened with a backoff when it drops. */
function postgresListener(
  url: string,
  dispatch: (channel: string, payload: string) => void,
  resync: () => void,
  logger: Pick<Logger, 'warn'> | undefined,
  probe: ListenProbe,
): Transport {
  const channels = new Set<string>();
  let client: pg.Client | undefined;
  let connecting: Promise<void> | undefined;
  let closed = false;
  let failures = 0;
  let probeSeq = 0;
  let heard = 0;
  // The client's queries one after another: a LISTEN asked for while a probe (or another LISTEN) is still out waits
  // for it, rather than queueing inside pg, which pg 9 will refuse.
  let queue: Promise<unknown> = Promise.resolve();
  const send = (c: pg.Client, text: string): Promise<unknown> => {
    const sent = queue.then(() => c.query(text));
    queue = sent.catch(() => {});
    return sent;
  };

  const probing = setInterval(() => {
    const c = client;
    // One probe at a time: an unheard one re-opens the connection, which counts as heard.
    if (!c || connecting || heard < probeSeq) return;
    const sent = ++probeSeq;
    send(c, `select pg_notify('${PROBE_CHANNEL}', '${sent}')`).catch(() => reopen(c));
    setTimeout(() => {
      if (client !== c || heard >= sent) return;
      logger?.warn('the notification listener stopped hearing its own probe; re-opening it');
      reopen(c);
      c.end().catch(() => {});
    }, probe.timeoutMs).unref();
  }, probe.everyMs);
  probing.unref();

  function open(): Promise<void> {
    connecting ??= (async () => {
      const c = new pg.Client({ connectionString: url });
      c.on('notification', (n) => {
        if (n.channel === PROBE_CHANNEL) heard = Math.max(heard, Number(n.payload));
        else dispatch(n.channel, n.payload ?? '');
      });
      c.on('error', () => reopen(c));
      c.on('end', () => reopen(c));
      try {
        await c.connect();
        for (const ch of [PROBE_CHANNEL, ...channels]) await c.query(`listen ${pg.escapeIdentifier(ch)}`);
        if (closed) return void (await c.end());
        const wasDown = failures > 0 || client !== undefined;
        client = c;
        queue = Promise.resolve(); // nothing of the old client's is waited for
        failures = 0;
        heard = probeSeq;
        // Whatever was sent while no one listened is lost: listeners look again now.
        if (wasDown) resync();
      } catch (err) {
        failures += 1;
        if (failures % 10 === 1) logger?.warn('cannot listen for notifications; retrying', { err });
        c.end().catch(() => {});
        setTimeout(() => void open(), Math.min(200 * 2 ** failures, 5_000)).unref();
      } finally {
        connecting = undefined;
      }
    })();
    return connecting;
  }
  function reopen(c: pg.Client): void {
    if (closed || client !== c) return;
    client = undefined;
    failures = 1;
    setTimeout(() => void open(), 200).unref();
  }
  return {
    add(channel) {
      channels.add(channel);
      const listen = () => {
        const c = client;
        if (c) send(c, `listen ${pg.escapeIdentifier(channel)}`).catch(() => reopen(c));
      };
      // A connection being opened may have sent its LISTENs already: this channel follows once it is up.
      if (connecting) void connecting.then(listen);
      else if (client) listen();
      else void open();
    },
    async close() {
      closed = true;
      clearInterval(probing);
      await connecting;
      const c = client;
      client = undefined;
      await c?.end().catch(() => {});
    },
  };
}
