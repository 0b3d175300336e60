/**
 * The worker's half of the bridge: a host import posts its request to the main thread and blocks in
 * Atomics.wait until the reply is posted back, so the guest sees a plain synchronous call.
 */
import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { BRIDGE_SEQ, type ControlBlock } from './control-block.js';
import type { BridgeReply, WorkerMessage } from './protocol.js';

export type BridgeResult = { ok: Uint8Array } | { error: string } | { missing: true };

export type BridgeCall = (channel: string, payload: Uint8Array) => BridgeResult;

export function makeBridgeCall(
  post: (message: WorkerMessage, transfer?: ArrayBuffer[]) => void,
  port: MessagePort,
  control: ControlBlock,
  runId: number,
  budgetLeft: () => number,
): BridgeCall {
  return (channel, payload) => {
    post({ type: 'bridge', runId, channel, payload, budgetLeft: budgetLeft() }, [payload.buffer as ArrayBuffer]);
    for (;;) {
      const seen = Atomics.load(control.i32, BRIDGE_SEQ);
      for (;;) {
        const received = receiveMessageOnPort(port);
        if (!received) break;
        const reply = received.message as BridgeReply;
        if (reply.runId !== runId) continue;
        if ('ok' in reply) return { ok: reply.ok };
        if ('error' in reply) return { error: reply.error };
        return { missing: true };
      }
      Atomics.wait(control.i32, BRIDGE_SEQ, seen);
    }
  };
}
