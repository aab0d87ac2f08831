import type { Request } from 'express';
import { z } from 'zod';
import { decodeUtf8, readSkillFolder } from '../skills/bundle.ts';
import { BundleError, type BundleCaps, type ZipFile } from '../skills/zip-reader.ts';
import { TooLargeError, ValidationError } from '../contracts/errors.ts';

/** A skill as uploaded: its SKILL.md text, and for a zip the folder's name and its other files. */
export type SkillUpload = { skillMd: string; folder: string | undefined; files: ZipFile[] | undefined; skipped: string[] };

export const ZIP_TYPES = ['application/zip', 'application/x-zip-compressed'];

/** The variable that sets each bundle cap, named in its 413. */
const CAP_VARIABLES: Record<keyof BundleCaps, string> = {
  maxFiles: 'SKILL_BUNDLE_MAX_FILES',
  maxFileBytes: 'SKILL_BUNDLE_MAX_FILE_KB',
  maxTotalBytes: 'SKILL_BUNDLE_MAX_TOTAL_KB',
  maxRatio: 'SKILL_BUNDLE_MAX_RATIO',
};

/** Reads an upload: a zip (application/zip), raw SKILL.md (text/markdown, text/plain) or JSON `{skillMd}`. */
export async function readSkillUpload(req: Request, caps: BundleCaps): Promise<SkillUpload> {
  if (Buffer.isBuffer(req.body) && req.is(ZIP_TYPES)) return readZipUpload(req.body, caps);
  if (Buffer.isBuffer(req.body)) return { skillMd: req.body.toString('utf8'), folder: undefined, files: undefined, skipped: [] };
  const parsed = z.object({ skillMd: z.string().min(1) }).safeParse(req.body);
  if (!parsed.success) {
    throw new ValidationError('send SKILL.md as text/markdown, JSON {"skillMd": "..."}, or the skill folder as application/zip', {
      fields: [{ field: 'skillMd', message: 'required' }],
    });
  }
  return { skillMd: parsed.data.skillMd, folder: undefined, files: undefined, skipped: [] };
}

/** The skill folder of a zip; a hostile or malformed archive is a 400, one over the size caps a 413. */
export async function readZipUpload(zip: Buffer, caps: BundleCaps): Promise<SkillUpload> {
  try {
    const { folder, files, skipped } = await readSkillFolder(zip, caps);
    const skillMd = decodeUtf8(files.find((f) => f.path === 'SKILL.md')!.data);
    if (skillMd === undefined) throw new BundleError('SKILL.md is not valid UTF-8');
    if (skillMd.includes('\u0000')) throw new BundleError('SKILL.md contains the NUL character (U+0000)');
    return { skillMd, folder, files, skipped };
  } catch (err) {
    if (!(err instanceof BundleError)) throw err;
    const fields = [{ field: 'bundle', message: err.message }];
    const variable = err.cap && CAP_VARIABLES[err.cap];
    if (variable) throw new TooLargeError(`bundle refused: ${err.message} (set by ${variable})`, { fields, variable });
    if (err.tooLarge) throw new TooLargeError(`bundle refused: ${err.message}`, { fields });
    throw new ValidationError(`bundle refused: ${err.message}`, { fields });
  }
}
