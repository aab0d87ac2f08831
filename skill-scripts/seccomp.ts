/**
 * A seccomp filter (classic BPF, as bubblewrap's `--add-seccomp-fd` reads it) that takes from a script the system
 * calls it never needs and that widen the kernel's attack surface: new user namespaces (`clone` with
 * CLONE_NEWUSER, `unshare`, `setns`), the kernel keyring, eBPF, perf events, userfaultfd and io_uring. `clone3` gets
 * ENOSYS, so the C library falls back to `clone`, whose flags the filter can read. Other architectures' calls
 * (x32, 32-bit) are refused. Undefined where the syscall table is unknown: the namespaces and limits still hold.
 */
export function seccompFilter(arch: string = process.arch): Buffer | undefined {
  const table = TABLES[arch];
  if (!table) return undefined;
  const program: Instruction[] = [
    [LD_ABS, 0, 0, ARCH_OFFSET],
    [JEQ, 1, 0, table.audit],
    [RET, 0, 0, ERRNO | EPERM],
    [LD_ABS, 0, 0, NR_OFFSET],
    [JGE, 0, 1, X32_BIT],
    [RET, 0, 0, ERRNO | EPERM],
    ...table.denied.flatMap((nr): Instruction[] => [
      [JEQ, 0, 1, nr],
      [RET, 0, 0, ERRNO | EPERM],
    ]),
    [JEQ, 0, 1, table.clone3],
    [RET, 0, 0, ERRNO | ENOSYS],
    // Last, because it replaces the syscall number in the accumulator with the flags.
    [JEQ, 0, 3, table.clone],
    [LD_ABS, 0, 0, ARG0_OFFSET],
    [JSET, 0, 1, CLONE_NEWUSER],
    [RET, 0, 0, ERRNO | EPERM],
    [RET, 0, 0, ALLOW],
  ];
  const bytes = Buffer.alloc(program.length * 8);
  program.forEach(([code, jt, jf, k], i) => {
    bytes.writeUInt16LE(code, i * 8);
    bytes.writeUInt8(jt, i * 8 + 2);
    bytes.writeUInt8(jf, i * 8 + 3);
    bytes.writeUInt32LE(k >>> 0, i * 8 + 4);
  });
  return bytes;
}

/**
 * Whether scripts run here: with the architecture's filter; without one, still (the warning says so at start), or
 * not at all when SCRIPT_REQUIRE_SECCOMP is set (`refusal` is the error the model sees).
 */
export function seccompDecision(requireSeccomp: boolean, arch: string = process.arch): { filter: Buffer | undefined; refusal?: string } {
  const filter = seccompFilter(arch);
  if (filter || !requireSeccomp) return { filter };
  return { filter, refusal: `${seccompMissing(arch)}, and SCRIPT_REQUIRE_SECCOMP=true refuses scripts without it` };
}

/** The start-up warning where the architecture has no filter; undefined where it has one. */
export function seccompWarning(arch: string = process.arch): string | undefined {
  return seccompFilter(arch) ? undefined : `${seccompMissing(arch)}: scripts run with the namespaces and limits only`;
}

const seccompMissing = (arch: string) => `no seccomp filter exists for the ${arch} architecture (only ${Object.keys(TABLES).join(', ')})`;

type Instruction = [code: number, jt: number, jf: number, k: number];

const LD_ABS = 0x20; // BPF_LD | BPF_W | BPF_ABS
const JEQ = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const JGE = 0x35; // BPF_JMP | BPF_JGE | BPF_K
const JSET = 0x45; // BPF_JMP | BPF_JSET | BPF_K
const RET = 0x06; // BPF_RET | BPF_K
const ALLOW = 0x7fff0000;
const ERRNO = 0x00050000;
const EPERM = 1;
const ENOSYS = 38;
// struct seccomp_data: nr at 0, arch at 4, args[0] at 16 (its low 32 bits, little-endian).
const NR_OFFSET = 0;
const ARCH_OFFSET = 4;
const ARG0_OFFSET = 16;
const X32_BIT = 0x40000000;
const CLONE_NEWUSER = 0x10000000;

type Table = { audit: number; clone: number; clone3: number; denied: number[] };
// unshare, setns, add_key, request_key, keyctl, bpf, perf_event_open, userfaultfd, io_uring_setup/enter/register.
const TABLES: Record<string, Table> = {
  x64: { audit: 0xc000003e, clone: 56, clone3: 435, denied: [272, 308, 248, 249, 250, 321, 298, 323, 425, 426, 427] },
  arm64: { audit: 0xc00000b7, clone: 220, clone3: 435, denied: [97, 268, 217, 218, 219, 280, 241, 282, 425, 426, 427] },
};
