/** A worker thread that runs one peer's calls: built once from `workerData`, then one call per message. */
import { parentPort, workerData } from 'node:worker_threads';
import { makeRunner, type RunnerInput } from './runners.js';

const run = await makeRunner(workerData as RunnerInput);
parentPort!.on('message', () => {
  void Promise.resolve(run()).then((written) => parentPort!.postMessage(written), (error: unknown) => parentPort!.postMessage({ error: String(error) }));
});
parentPort!.postMessage('ready');
