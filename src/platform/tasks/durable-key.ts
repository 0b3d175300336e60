/**
 * The durable key of a task's call: what a worker keeps the call's course under (scale-out/nats-outcomes.ts), made
 * from the task id so that whichever replica reads the task finds it, and one-way so that the bucket never holds the
 * handle a client uses. Pure.
 */
import { createHash } from 'node:crypto';

export function durableKeyOf(taskId: string): string {
  return createHash('sha256').update(`subako.task-call:${taskId}`).digest('hex');
}
