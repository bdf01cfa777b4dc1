/**
 * The one byte cap on a streamed body: every body this project reads from a peer, an identity
 * provider, a leader replica or a client (the service's request bodies) is counted as it streams
 * and cut past its cap, so no more than the cap plus one chunk is ever held.
 *
 * @module
 */

/**
 * The bytes of a web stream, read chunk by chunk; undefined as soon as they pass `maxBytes` (the
 * stream is then cancelled). A null body is empty.
 *
 * @example const bytes = await readBoundedStream(res.body, 65_536); if (bytes === undefined) throw tooLarge();
 */
export async function readBoundedStream(body: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<Buffer | undefined> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (body !== null) {
    const reader = body.getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > maxBytes) {
          await reader.cancel().catch(() => undefined);
          return undefined;
        }
        chunks.push(value);
      }
    } catch (err) {
      await reader.cancel().catch(() => undefined);
      throw err;
    }
  }
  return Buffer.concat(chunks);
}

/**
 * `body` passed through chunk by chunk (an SSE stream stays a stream), erroring with `tooLarge()`
 * once more than `maxBytes` have passed.
 */
export function capStream(body: ReadableStream<Uint8Array>, maxBytes: number, tooLarge: () => Error): ReadableStream<Uint8Array> {
  let seen = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > maxBytes) {
          controller.error(tooLarge());
          return;
        }
        controller.enqueue(chunk);
      },
    }),
  );
}
