/**
 * Admission as a step of a session's tool (call-admission.ts decides; this applies it to a call): the call asks
 * for a place — refused at once, nothing recorded, when its session's or agent's queue is full — is recorded once
 * it has one, waits for its turn, and runs with what is left of its deadline (the wait counts). A call whose
 * deadline passes in the queue, whose session or agent is deleted, or whose caller goes away before its turn ends
 * without running. Its place is given back however the call ends.
 *
 * In scale-out (`fleet` given), a call that has its replica's turn then takes a slot shared by every replica
 * (fleet-slots.ts) before it runs, and waits for one as it waited for its turn; the wait counts against the same
 * deadline, and the slot is given back however the call ends.
 */
import type { ToolInterceptor } from '../../tool.js';
import type { AdmittedTool, CallAdmission, NotStarted } from './call-admission.js';
import type { FleetSlots } from './fleet-slots.js';
import { cancelledCall, didNotRun, type CallNotRun, type CallScope, type SessionCallContext } from './call-log.js';

export function admissionStep(
  admission: CallAdmission, scope: CallScope, name: string, tool: AdmittedTool, callTimeoutMs: number, fleet?: FleetSlots,
): ToolInterceptor<SessionCallContext> {
  const { session } = scope;
  return (next) => async (args, ctx) => {
    const call = ctx.call!;
    // Throws before anything is recorded when the call may not even wait (CallRefusedError), or its session is gone.
    const admitted = admission.admit(session.id, session.agentId, callTimeoutMs, ctx.signal, tool);
    let holdsSlot = false;
    try {
      call.stoppedBecause = () => admitted.stoppedBecause();
      await call.admitted();
      let turn = await admitted.started;
      if (turn === 'run' && fleet) {
        const slot = await fleet.take({ callId: call.id, agentId: session.agentId, sessionId: session.id }, () => admitted.remainingMs(), admitted.signal);
        holdsSlot = slot === 'run';
        if (slot === 'aborted') turn = admitted.stoppedBecause() === null ? 'cancelled' : 'stopped';
        else if (slot === 'timeout') turn = 'timeout';
      }
      // A turn that comes with no time left is a deadline passed while waiting.
      if (turn === 'run' && admitted.remainingMs() <= 0) turn = 'timeout';
      if (turn !== 'run') throw notStarted(name, turn, admitted.waitedMs(), admitted.stoppedBecause(), callTimeoutMs);
      call.runningSince = performance.now();
      return await next(args, { ...ctx, signal: admitted.signal, timeoutMs: admitted.remainingMs() });
    } finally {
      if (holdsSlot) fleet!.release(call.id);
      admitted.end();
    }
  };
}

/** A call that never ran: its deadline passed while it waited, it was stopped, or its caller went away first. */
function notStarted(name: string, why: NotStarted, waitedMs: number, stoppedBecause: string | null, callTimeoutMs: number): CallNotRun {
  const waited = Math.round(waitedMs);
  if (why === 'cancelled') return cancelledCall(name, waited, `its caller went away after ${waited} ms, before it started`);
  const message = why === 'timeout'
    ? `the call waited ${waited} ms for a turn (its session or agent was running as many calls as it may, or every worker was busy) and its deadline ` +
      `of ${callTimeoutMs} ms, which counts the wait, passed before it could start`
    : `the call was stopped before it started: ${stoppedBecause ?? 'its session was deleted'}`;
  return didNotRun(name, message, { status: 'crash', crash: { reason: why, message, stderr: '' }, durationMs: waited });
}
