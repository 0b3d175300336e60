/**
 * Waiting for an event in a test: ask again every few milliseconds until the answer is the one awaited, with a
 * generous ceiling (a hang guard on a machine other work loads, never a margin). One helper, so that no test
 * sleeps a fixed time or invents its own loop.
 */
export async function eventually<T>(what: string, ask: () => T | Promise<T>, done: (answer: T) => boolean, options: { ms?: number; everyMs?: number } = {}): Promise<T> {
  const deadline = Date.now() + (options.ms ?? 60_000);
  for (;;) {
    const answer = await ask();
    if (done(answer)) return answer;
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what} (last answer: ${JSON.stringify(answer)?.slice(0, 500)})`);
    await new Promise((resolve) => setTimeout(resolve, options.everyMs ?? 20));
  }
}

/** `eventually` for a condition with nothing to return. */
export async function until(what: string, condition: () => boolean | Promise<boolean>, ms?: number): Promise<void> {
  await eventually(what, condition, (held) => held, { ms });
}
