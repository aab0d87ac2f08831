/**
 * How a worker process is launched: `node ${WORKER_NODE_FLAGS} bin/worker.ts` with `WORKER_PROCESS_ENV` in its
 * environment (docker-compose.yml, `npm run worker` and the benches use these; test/unit/docker-compose.test.ts keeps
 * them equal). Node sizes V8's heaps from the machine's memory (a 4 GB heap limit with 64 MB young-generation
 * semi-spaces on a 24 GB machine), so a worker whose live heaps are ~160 MB (main thread) and ~35 MB (workflow
 * thread) at 1,000 missions in flight carried several times that in garbage between collections, in both isolates;
 * and glibc gives each of the process's ~20 threads (Temporal core's runtime, libuv, V8) its own malloc arena, each
 * keeping freed pages. Sized for the job instead (bench/thousand-missions.ts, docs/decisions.md):
 */
export const WORKER_NODE_FLAGS = ['--max-semi-space-size=16', '--max-old-space-size=1024'] as const;

/**
 * How the embedded default is launched (`scripts/start.sh`, `npm start`): `bin/cadenza.ts` is a worker too, with the API
 * and PGlite beside it, so it gets the worker's young generation and `WORKER_PROCESS_ENV`; not its 1 GB heap cap, which
 * is sized for a worker's heap alone. Launched as Node sized it, it peaked at 1,611 MB with 1,000 missions in flight,
 * and at 1,102 MB launched this way (`embedded-thousand`, docs/decisions.md).
 */
export const EMBEDDED_NODE_FLAGS = ['--max-semi-space-size=16'] as const;

/**
 * glibc's malloc, read before any code runs (so set at launch): two arenas instead of one per thread; and a fixed
 * 64 KB threshold above which an allocation gets pages of its own that go back to the OS when freed (by default the
 * threshold grows after each large free, so ONNX Runtime's and the Temporal core's large buffers stayed in the heap).
 */
export const WORKER_PROCESS_ENV = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '65536' } as const;
