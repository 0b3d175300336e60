/**
 * The server's end of the lanes: a Unix socket, in a directory of its own that only this user can enter,
 * where each sandbox worker connects and says `hello` with its process's token. A lane is one worker: the
 * server writes a run to it and reads that run's output and end from it, with no thread of the sandbox
 * process in between.
 *
 * Everything read from a lane is checked as coming from a process a guest may have taken over: frames
 * past a cap, frames V8 cannot read, a wrong token or no `hello` in time end the connection (`onBroken`),
 * never the server.
 */
import { rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeFrame, FrameReader, LaneFrameError } from './lane-frames.js';
import { makeLaneDir } from './lane-dirs.js';
import type { FromLane, LaneRun } from './process-protocol.js';

/** The largest frame a worker may send: an output piece (1 MiB) or a bridge request, with room to spare. */
const MAX_LANE_FRAME_BYTES = 16 * 1024 * 1024;
/** The socket's name in its directory. */
const SOCKET_NAME = 'lanes.sock';
/** The longest socket path every platform Node runs on takes. */
const MAX_SOCKET_PATH_BYTES = 100;
/** A connection that has not said who it is by then is dropped. */
const HELLO_TIMEOUT_MS = 10_000;

/** What a lane tells its owner. */
export interface LaneEvents {
  /** A worker said `hello` with `token`: true keeps the lane. */
  laneOpened(lane: Lane, token: string): boolean;
  laneFrame(lane: Lane, frame: Exclude<FromLane, { t: 'hello' }>): void;
  /** The connection closed (the worker ended, or the lane was dropped as broken). */
  laneClosed(lane: Lane): void;
}

export class Lane {
  laneId = 0;
  /** The connection has closed: nothing more will be read. */
  closedSocket = false;

  constructor(private readonly socket: Socket) {}

  send(run: LaneRun): void {
    if (!this.closedSocket) this.socket.write(encodeFrame(run));
  }

  /** Drops the connection (a lane that broke the protocol, or the sandbox closing). */
  destroy(): void {
    this.socket.destroy();
  }
}

export class LaneListener {
  private readonly dir: string;
  readonly path: string;
  private readonly server: Server;

  constructor(private readonly events: LaneEvents) {
    // mkdtemp makes the directory 0700: no other user can reach the socket inside. A socket's path has a
    // short limit (108 bytes on Linux, 104 on macOS): under a long TMPDIR, /tmp holds the directory instead.
    let dir = makeLaneDir(tmpdir());
    if (Buffer.byteLength(join(dir, SOCKET_NAME)) > MAX_SOCKET_PATH_BYTES) {
      rmSync(dir, { recursive: true, force: true });
      dir = makeLaneDir('/tmp');
    }
    this.dir = dir;
    this.path = join(this.dir, SOCKET_NAME);
    this.server = createServer((socket) => this.accept(socket));
    this.server.on('error', () => undefined);
    // Binding a path happens within listen(): workers started after this can connect.
    this.server.listen(this.path);
    this.server.unref();
  }

  close(): void {
    this.server.close();
    rmSync(this.dir, { recursive: true, force: true });
  }

  private accept(socket: Socket): void {
    socket.unref();
    const lane = new Lane(socket);
    const frames = new FrameReader(MAX_LANE_FRAME_BYTES);
    let open = false;
    const hello = setTimeout(() => socket.destroy(), HELLO_TIMEOUT_MS);
    hello.unref();
    const onFrame = (value: unknown): void => {
      const frame = value as FromLane;
      if (!open) {
        if (typeof frame !== 'object' || frame === null || frame.t !== 'hello' || typeof frame.token !== 'string' || !Number.isInteger(frame.laneId)) {
          throw new LaneFrameError('a lane did not open with hello');
        }
        clearTimeout(hello);
        lane.laneId = frame.laneId;
        if (!this.events.laneOpened(lane, frame.token)) throw new LaneFrameError('a lane named a token or lane this server did not give');
        open = true;
        return;
      }
      if (typeof frame !== 'object' || frame === null || frame.t === 'hello') throw new LaneFrameError('a lane sent a frame out of place');
      this.events.laneFrame(lane, frame);
    };
    socket.on('data', (chunk: Buffer) => {
      try {
        frames.push(chunk, onFrame);
      } catch (error) {
        if (!(error instanceof LaneFrameError)) throw error;
        socket.destroy();
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(hello);
      lane.closedSocket = true;
      if (open) this.events.laneClosed(lane);
    });
  }
}
