/**
 * Whose turn it is at the next free worker, among the agents with a call waiting for one: an agent with
 * nothing running goes first (in the order such agents came to wait), then the others round-robin — an agent
 * that was given a worker goes to the back. So an agent's backlog never runs ahead of another agent that has
 * nothing running, and no agent waits for ever: once its calls end it has nothing running, and goes first.
 *
 * Pure bookkeeping, every operation O(1): call admission (call-admission.ts) says who waits and who ran, and
 * asks `next()` when a worker frees. An agent listed here may have nothing left that could start (its waiting
 * calls wait for their own session's turn): admission drops it when it finds so.
 */
export class WorkerTurns<Agent> {
  /** Agents with nothing running, first come first served. */
  private readonly idle = new Set<Agent>();
  /** Agents with calls running, in round-robin order. */
  private readonly busy = new Set<Agent>();

  /** `agent` has a call waiting for a worker; `running`: how many of its calls run now. Keeps its place if it has one in the right tier. */
  wait(agent: Agent, running: number): void {
    const tier = running === 0 ? this.idle : this.busy;
    if (tier.has(agent)) return;
    this.drop(agent);
    tier.add(agent);
  }

  /** The number of `agent`'s running calls changed; if it is waiting, it moves to the tier that fits. */
  update(agent: Agent, running: number): void {
    if (this.idle.has(agent) || this.busy.has(agent)) this.wait(agent, running);
  }

  /** `agent` was given a worker and still has calls waiting: to the back of the round. */
  served(agent: Agent): void {
    this.drop(agent);
    this.busy.add(agent);
  }

  /** `agent` has no call waiting for a worker any more. */
  drop(agent: Agent): void {
    if (!this.idle.delete(agent)) this.busy.delete(agent);
  }

  /** The agent whose turn it is, or undefined when none waits. */
  next(): Agent | undefined {
    for (const agent of this.idle) return agent;
    for (const agent of this.busy) return agent;
    return undefined;
  }

  get size(): number {
    return this.idle.size + this.busy.size;
  }
}
