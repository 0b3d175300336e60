/**
 * User Timing marks (`performance.mark`) of a sandbox process's start, so that a fresh process's timeline says
 * where its first answer waited: for the sandbox process's Node to start, or for its first worker to boot and
 * open its lane (bench/cold-child.ts reads them). Only the first sandbox process a process starts is marked, each
 * mark once: a long life adds none.
 */
export const START_MARKS = {
  /** The sandbox process was forked. */
  forked: 'subako:sandbox-forked',
  /** It said it is ready: its Node has started and its workers are starting. */
  ready: 'subako:sandbox-ready',
  /** Its first worker opened its lane: a run can be handed to it. */
  firstLane: 'subako:sandbox-first-lane',
} as const;

export type StartMark = (typeof START_MARKS)[keyof typeof START_MARKS];

let taken = false;

/** The marker of the first sandbox process this process starts; every later one is given a marker that marks nothing. */
export function startMarker(): (mark: StartMark) => void {
  if (taken) return () => undefined;
  taken = true;
  const made = new Set<StartMark>();
  return (mark) => {
    if (made.has(mark)) return;
    made.add(mark);
    performance.mark(mark);
  };
}
