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
    const fields = { method: e.deflate ? 8 : 0, crc: crc32(data), compressed: body.length, size, nameLength: name.length };
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    writeShared(local, 4, fields);
    const dir = Buffer.alloc(46);
    dir.writeUInt32LE(0x02014b50, 0);
    dir.writeUInt16LE((3 << 8) | 20, 4); // made by: Unix, so the external attributes hold a mode
    writeShared(dir, 6, fields);
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

/**
 * The fields a local header (from byte 4) and its central directory entry (from byte 6) share, in the same order:
 * version needed, flags (UTF-8 names), method, time and date (zero), CRC-32, compressed size, size, name length.
 */
function writeShared(
  header: Buffer,
  at: number,
  f: { method: number; crc: number; compressed: number; size: number; nameLength: number },
): void {
  header.writeUInt16LE(20, at);
  header.writeUInt16LE(0x0800, at + 2);
  header.writeUInt16LE(f.method, at + 4);
  header.writeUInt32LE(f.crc, at + 10);
  header.writeUInt32LE(f.compressed, at + 14);
  header.writeUInt32LE(f.size, at + 18);
  header.writeUInt16LE(f.nameLength, at + 22);
}

/** A minimal valid SKILL.md for bundle tests. */
export const bundleSkillMd = (name: string, extra = '') =>
  `---\nname: ${name}\ndescription: Bundle test skill ${name}.\n${extra}---\nFollow the steps.\n`;
