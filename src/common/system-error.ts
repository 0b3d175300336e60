/**
 * Telling a failed system call (Node's `ENOENT`, `EACCES`, … errors, which carry `code` and `syscall`) from
 * everything else, so a catch can take the failures it expects from the host and rethrow the rest (a bug, a
 * Node argument check, an error of ours).
 */

/** The code of a failed system call (`ENOENT`, `EACCES`, …), or undefined for any other error. */
export function systemErrorCode(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const { code, syscall } = error as NodeJS.ErrnoException;
  return typeof code === 'string' && typeof syscall === 'string' ? code : undefined;
}

/** Whether `error` is a failed system call; with `codes`, one failing with one of them. */
export function isSystemError(error: unknown, ...codes: string[]): boolean {
  const code = systemErrorCode(error);
  return code !== undefined && (codes.length === 0 || codes.includes(code));
}
