/** Why `path` is not a safe relative path inside a skill bundle, or undefined when it is one. */
export function bundlePathProblem(path: string): string | undefined {
  if (path === '') return 'empty path';
  if (path.length > 255) return 'longer than 255 characters';
  if (/[\u0000-\u001f]/.test(path)) return 'contains a control character';
  if (path.includes('\\')) return 'uses a backslash (separate folders with /)';
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) return 'is absolute';
  const segments = path.split('/');
  if (segments.includes('..')) return "climbs out of the bundle with '..'";
  if (segments.some((s) => s === '' || s === '.')) return "has an empty or '.' segment";
  return undefined;
}
