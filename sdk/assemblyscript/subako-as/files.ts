/**
 * Files by their absolute names: /volume/tmp, /volume/data (when the agent enables it), /package (the
 * package's assets) and /skills. WASI opens paths relative to a preopened directory; these helpers find
 * the preopen that holds a path, so an author writes `files.writeText("/volume/tmp/a.txt", "hi")`.
 */
import {
  errno,
  errnoToString,
  fd_close,
  fd_prestat_dir_name,
  fd_prestat_get,
  fd_read,
  fd_write,
  oflags,
  path_create_directory,
  path_filestat_get,
  path_open,
  path_remove_directory,
  path_unlink_file,
  rights,
  prestat,
  filestat,
} from "bindings/wasi_snapshot_preview1";

/** What a file operation did: `ok`, or the WASI errno and a message that names the path. */
export class FileStatus {
  constructor(
    public ok: bool,
    public errno: u16,
    public message: string,
  ) {}
}

/** A file read whole: `ok` and its bytes, or the errno and a message. */
export class FileData {
  constructor(
    public ok: bool,
    public bytes: Uint8Array,
    public errno: u16,
    public message: string,
  ) {}

  /** The bytes as UTF-8 text. */
  text(): string {
    return String.UTF8.decodeUnsafe(this.bytes.dataStart, <usize>this.bytes.length);
  }
}

class Preopen {
  constructor(
    public fd: u32,
    public name: string,
  ) {}
}

let preopens: Preopen[] | null = null;
const scratch = memory.data(32);

function listPreopens(): Preopen[] {
  let found = preopens;
  if (found != null) return found;
  found = [];
  for (let fd: u32 = 3; fd < 64; fd++) {
    if (fd_prestat_get(fd, changetype<prestat>(scratch)) != 0) break;
    const length = <usize>load<u32>(scratch, 4);
    const name = new Uint8Array(<i32>length);
    if (fd_prestat_dir_name(fd, name.dataStart, length) != 0) continue;
    let text = String.UTF8.decodeUnsafe(name.dataStart, length);
    while (text.length > 1 && text.endsWith("/")) text = text.substring(0, text.length - 1);
    found.push(new Preopen(fd, text));
  }
  preopens = found;
  return found;
}

/** The preopen holding `path` (the longest match) and the path inside it, or null. */
class Located {
  constructor(
    public fd: u32,
    public inner: string,
  ) {}
}

function locate(path: string): Located | null {
  if (!path.startsWith("/")) return null;
  let best: Preopen | null = null;
  const all = listPreopens();
  for (let i = 0; i < all.length; i++) {
    const p = all[i];
    const inside = path == p.name || path.startsWith(p.name == "/" ? "/" : p.name + "/");
    if (inside && (best == null || p.name.length > best.name.length)) best = p;
  }
  if (best == null) return null;
  let inner = path.substring(best.name.length);
  while (inner.startsWith("/")) inner = inner.substring(1);
  return new Located(best.fd, inner.length == 0 ? "." : inner);
}

function status(err: u16, what: string, path: string): FileStatus {
  if (err == 0) return new FileStatus(true, 0, "");
  return new FileStatus(false, err, "cannot " + what + " " + path + ": " + errnoToString(err));
}

function notMounted(path: string): u16 {
  return path.startsWith("/") ? errno.NOENT : errno.INVAL;
}

function notMountedMessage(what: string, path: string): string {
  return path.startsWith("/")
    ? "cannot " + what + " " + path + ": no mounted directory holds it (use /volume/tmp, /volume/data, /package or /skills)"
    : "cannot " + what + " " + path + ": use an absolute path such as /volume/tmp/" + path;
}

function openFile(at: Located, flags: u16, base: u64): i64 {
  const name = String.UTF8.encode(at.inner);
  const err = path_open(at.fd, 0, changetype<usize>(name), <usize>name.byteLength, flags, base, 0, 0, changetype<usize>(scratch));
  if (err != 0) return -(<i64>err);
  return <i64>load<u32>(scratch);
}

export namespace files {
  /** Creates `path` and any missing parents (an existing directory is fine). */
  export function makeDirectory(path: string): FileStatus {
    const at = locate(path);
    if (at == null) return new FileStatus(false, notMounted(path), notMountedMessage("create", path));
    if (at.inner == ".") return new FileStatus(true, 0, "");
    const parts = at.inner.split("/");
    let prefix = "";
    for (let i = 0; i < parts.length; i++) {
      if (parts[i].length == 0) continue;
      prefix = prefix.length == 0 ? parts[i] : prefix + "/" + parts[i];
      const name = String.UTF8.encode(prefix);
      const err = path_create_directory(at.fd, changetype<usize>(name), <usize>name.byteLength);
      if (err != 0 && err != errno.EXIST) return status(err, "create", path);
    }
    return new FileStatus(true, 0, "");
  }

  function parentOf(path: string): string {
    const slash = path.lastIndexOf("/");
    return slash <= 0 ? "/" : path.substring(0, slash);
  }

  /** Writes `bytes` to `path` (replacing it), creating missing parent directories. */
  export function write(path: string, bytes: Uint8Array): FileStatus {
    const at = locate(path);
    if (at == null) return new FileStatus(false, notMounted(path), notMountedMessage("write", path));
    const parent = makeDirectory(parentOf(path));
    if (!parent.ok) return parent;
    const fd = openFile(at, oflags.CREAT | oflags.TRUNC, rights.FD_WRITE | rights.FD_SEEK | rights.FD_TELL | rights.FD_FILESTAT_GET);
    if (fd < 0) return status(<u16>-fd, "write", path);
    let offset = 0;
    let err: u16 = 0;
    while (offset < bytes.length) {
      store<usize>(scratch, bytes.dataStart + <usize>offset);
      store<usize>(scratch, <usize>(bytes.length - offset), sizeof<usize>());
      err = fd_write(<u32>fd, changetype<usize>(scratch), 1, changetype<usize>(scratch) + 2 * sizeof<usize>());
      if (err != 0) break;
      const n = <i32>load<usize>(scratch, 2 * sizeof<usize>());
      if (n == 0) break;
      offset += n;
    }
    fd_close(<u32>fd);
    return status(err, "write", path);
  }

  export function writeText(path: string, text: string): FileStatus {
    return write(path, Uint8Array.wrap(String.UTF8.encode(text)));
  }

  /** Reads the whole file at `path`. */
  export function read(path: string): FileData {
    const at = locate(path);
    if (at == null) return new FileData(false, new Uint8Array(0), notMounted(path), notMountedMessage("read", path));
    const fd = openFile(at, 0, rights.FD_READ | rights.FD_SEEK | rights.FD_TELL | rights.FD_FILESTAT_GET);
    if (fd < 0) {
      const s = status(<u16>-fd, "read", path);
      return new FileData(false, new Uint8Array(0), s.errno, s.message);
    }
    let data = new Uint8Array(65536);
    let used = 0;
    let err: u16 = 0;
    while (true) {
      if (used == data.length) {
        const bigger = new Uint8Array(data.length * 2);
        bigger.set(data);
        data = bigger;
      }
      store<usize>(scratch, data.dataStart + <usize>used);
      store<usize>(scratch, <usize>(data.length - used), sizeof<usize>());
      err = fd_read(<u32>fd, changetype<usize>(scratch), 1, changetype<usize>(scratch) + 2 * sizeof<usize>());
      if (err != 0) break;
      const n = <i32>load<usize>(scratch, 2 * sizeof<usize>());
      if (n == 0) break;
      used += n;
    }
    fd_close(<u32>fd);
    if (err != 0) {
      const s = status(err, "read", path);
      return new FileData(false, new Uint8Array(0), s.errno, s.message);
    }
    return new FileData(true, data.slice(0, used), 0, "");
  }

  export function readText(path: string): string | null {
    const data = read(path);
    return data.ok ? data.text() : null;
  }

  /** True when something exists at `path`. */
  export function exists(path: string): bool {
    const at = locate(path);
    if (at == null) return false;
    const name = String.UTF8.encode(at.inner);
    const stat = new ArrayBuffer(64);
    return path_filestat_get(at.fd, 0, changetype<usize>(name), <usize>name.byteLength, changetype<filestat>(changetype<usize>(stat))) == 0;
  }

  /** Removes a file, or an empty directory. */
  export function remove(path: string): FileStatus {
    const at = locate(path);
    if (at == null) return new FileStatus(false, notMounted(path), notMountedMessage("remove", path));
    const name = String.UTF8.encode(at.inner);
    let err = path_unlink_file(at.fd, changetype<usize>(name), <usize>name.byteLength);
    if (err == errno.ISDIR || err == errno.PERM) err = path_remove_directory(at.fd, changetype<usize>(name), <usize>name.byteLength);
    return status(err, "remove", path);
  }

  /**
   * The `volume:///` URI of a path under /volume (each segment percent-encoded), for a `resource_link`;
   * empty when the path is not under /volume.
   */
  export function volumeUri(path: string): string {
    if (!path.startsWith("/volume/")) return "";
    const segments = path.substring("/volume/".length).split("/");
    const encoded = new Array<string>(0);
    for (let i = 0; i < segments.length; i++) encoded.push(percentEncode(segments[i]));
    return "volume:///" + encoded.join("/");
  }

  const HEX = "0123456789ABCDEF";

  function percentEncode(segment: string): string {
    const bytes = Uint8Array.wrap(String.UTF8.encode(segment));
    let out = "";
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i];
      const unreserved = (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || (b >= 0x30 && b <= 0x39) || b == 0x2d || b == 0x2e || b == 0x5f || b == 0x7e;
      out += unreserved ? String.fromCharCode(b) : "%" + HEX.charAt(b >> 4) + HEX.charAt(b & 15);
    }
    return out;
  }
}
