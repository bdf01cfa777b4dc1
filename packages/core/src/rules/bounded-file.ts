/**
 * The one way the CLI and the configuration read a local file (configurations, cards, token and
 * credential files, JWKs, the dashboard's files): open it, check that it is a regular file, and
 * read at most `maxBytes` before anything decodes it. `/dev/zero`, a FIFO or a directory is
 * refused at once instead of being read until memory runs out (or forever).
 *
 * @module
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';

/** Why a file could not be read; `message` is the short reason (never the file's content). */
export class FileReadError extends Error {
  override readonly name = 'FileReadError';
  /** True when the file is larger than the cap. */
  readonly tooLarge: boolean;

  constructor(reason: string, options: { tooLarge?: boolean; cause?: unknown } = {}) {
    super(reason, options.cause === undefined ? undefined : { cause: options.cause });
    this.tooLarge = options.tooLarge ?? false;
  }
}

/**
 * Reads a regular file of at most `maxBytes` bytes.
 *
 * @throws FileReadError with a short reason: `no such file`, `permission denied`, `it is a
 *   directory`, `it is not a regular file (a character device)`, `it is larger than N bytes`
 *   (`tooLarge`).
 * @example
 * const bytes = await readBoundedFile('/etc/a2a/discovery.yaml', 1024 * 1024);
 */
export async function readBoundedFile(file: string, maxBytes: number): Promise<Buffer> {
  let handle;
  try {
    // O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever.
    handle = await open(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0));
  } catch (err) {
    throw new FileReadError(fileErrorReason(err), { cause: err });
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new FileReadError(stat.isDirectory() ? 'it is a directory' : `it is not a regular file (${kind(stat)})`);
    if (stat.size > maxBytes) throw new FileReadError(`it is larger than ${maxBytes} bytes`, { tooLarge: true });
    // Read until EOF, but never more than one byte past the cap (the file may grow after stat).
    const chunks: Buffer[] = [];
    let length = 0;
    for (;;) {
      const chunk = Buffer.alloc(Math.min(64 * 1024, maxBytes + 1 - length));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      chunks.push(chunk.subarray(0, bytesRead));
      length += bytesRead;
      if (length > maxBytes) throw new FileReadError(`it is larger than ${maxBytes} bytes`, { tooLarge: true });
    }
    return Buffer.concat(chunks, length);
  } catch (err) {
    throw err instanceof FileReadError ? err : new FileReadError(fileErrorReason(err), { cause: err });
  } finally {
    await handle.close();
  }
}

function kind(stat: { isCharacterDevice(): boolean; isBlockDevice(): boolean; isFIFO(): boolean; isSocket(): boolean }): string {
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  if (stat.isFIFO()) return 'a named pipe';
  if (stat.isSocket()) return 'a socket';
  return 'not a file';
}

/** A short reason for a file system error (`ENOENT` → `no such file`), without the file's content. */
export function fileErrorReason(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  switch (code) {
    case 'ENOENT':
      return 'no such file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'it is a directory';
    default:
      return typeof code === 'string' ? code : err instanceof Error ? err.message : String(err);
  }
}

/** The largest secret file read (a token, a client secret, a header value, a key): 64 KiB. */
export const MAX_SECRET_BYTES = 64 * 1024;

/**
 * A secret file's text, read under {@link MAX_SECRET_BYTES} with {@link readBoundedFile}'s care (a
 * FIFO without a writer, a directory or a device is refused, never waited on). The one way every
 * `…File` setting of the configuration and the credentials is read.
 *
 * @throws FileReadError naming why (never the content).
 */
export async function readSecretFile(file: string): Promise<string> {
  return (await readBoundedFile(file, MAX_SECRET_BYTES)).toString('utf8');
}
