/**
 * Approval as a step of a session's tool whose policy needs one (approvals.ts holds the rule and decides who
 * approves; this applies its plan to a call). A call whose end user is to be asked is answered `input_required`
 * before anything is recorded (the call happens on the retry). A retry carrying an approval redeems it once the
 * call has its place (a call refused for a full queue keeps it). Any other call is recorded at once and held,
 * taking no turn, until an operator decides; once approved it asks for a turn like any call. A call not approved
 * ends without running; its record keeps how it was decided.
 */
import { CrashReason } from '../../function/index.js';
import type { ToolInterceptor } from '../../tool.js';
import type { ApprovalGate, Verdict } from './approvals.js';
import { cancelledCall, didNotRun, type CallNotRun, type CallScope, type SessionCallContext } from './call-log.js';

export function approvalStep(gate: ApprovalGate, scope: CallScope, name: string): ToolInterceptor<SessionCallContext> {
  return (next) => async (args, ctx) => {
    const call = ctx.call!;
    // A continuation the input relay resumed (or refused) is the call that was approved before it ran, if at all:
    // its approval stands, it is not asked again.
    if (ctx.resumed !== undefined) {
      call.approval = ctx.resumed.approval;
      return next(args, ctx);
    }
    // Throws before anything is recorded when the client's person is to be asked, or too many calls are held.
    const plan = await gate.plan(scope.session.id, name, args, { callId: call.id, input: ctx.input, secrets: scope.secrets, signal: ctx.signal });
    if (plan.kind === 'redeem') {
      call.onAdmitted(async () => {
        const verdict = await plan.redeem();
        call.approval = verdict.approval;
        return verdict.run ? null : notApproved(name, verdict, 0);
      });
      return next(args, ctx);
    }
    call.approval = plan.approval;
    await call.recordStart();
    // A caller that follows progress learns what it waits for (and the tool's own reports still rise past it).
    ctx.progress?.(0, undefined, `waiting for a person to approve this call (approval ${plan.approval?.id}; decide it through the API)`);
    const verdict = await plan.decided;
    call.approval = verdict.approval;
    if (!verdict.run) throw notApproved(name, verdict, call.waitedMs());
    return next(args, ctx);
  };
}

/** A call that was not approved: denied, stopped (its session went away while held) or cancelled (its caller did). */
function notApproved(name: string, verdict: Verdict & { run: false }, waitedMs: number): CallNotRun {
  if (verdict.ending === 'cancelled') return cancelledCall(name, waitedMs, verdict.message);
  return didNotRun(name, verdict.message, verdict.ending === 'stopped'
    ? { status: 'crash', crash: { reason: CrashReason.stopped, message: verdict.message, stderr: '' }, durationMs: waitedMs }
    : { status: verdict.ending, durationMs: waitedMs });
}
