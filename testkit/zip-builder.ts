import { crc32, deflateRawSync } from 'node:zlib';

/** An entry of a hand-built zip; the overrides let a test forge what hostile archives carry. */
export type RawEntry = {
  path: string;
  data?: Uint8Array | string;
  deflate?: boolean;
  /** Unix mode in the external attributes (0o120777 marks a symbolic link). */
  mode?: number;
  /** A declared uncompressed size other than the real one (a lying header). */
  declaredSize?: number;
};

/** Builds a zip byte by byte, as an archiver (or an attacker) would: no checks, every field as told. */
export function buildZip(entries: RawEntry[]): Buffer {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.path, 'utf8');
    const data = Buffer.from(e.data ?? '');
    const body = e.deflate ? deflateRawSync(data) : data;
    const size = e.declaredSize ?? data.length;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6);
    local.writeUInt16LE(e.deflate ? 8 : 0, 8);
    local.writeUInt32LE(crc32(data), 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    const dir = Buffer.alloc(46);
    dir.writeUInt32LE(0x02014b50, 0);
    dir.writeUInt16LE((3 << 8) | 20, 4);
    dir.writeUInt16LE(20, 6);
    dir.writeUInt16LE(0x0800, 8);
    dir.writeUInt16LE(e.deflate ? 8 : 0, 10);
    dir.writeUInt32LE(crc32(data), 16);
    dir.writeUInt32LE(body.length, 20);
    dir.writeUInt32LE(size, 24);
    dir.writeUInt16LE(name.length, 28);
    dir.writeUInt32LE(((e.mode ?? 0o100644) << 16) >>> 0, 38);
    dir.writeUInt32LE(offset, 42);
    parts.push(local, name, body);
    central.push(dir, name);
    offset += 30 + name.length + body.length;
  }
  const cd = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, cd, end]);
}

/** A minimal valid SKILL.md for bundle tests. */
export const bundleSkillMd = (name: string, extra = '') =>
  `---\nname: ${name}\ndescription: Bundle test skill ${name}.\n${extra}---\nFollow the steps.\n`;
