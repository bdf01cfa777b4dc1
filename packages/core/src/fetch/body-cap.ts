/**
 * The one byte cap on a streamed body: every body this project reads from a peer, an identity
 * provider, a leader replica or a client (the service's request bodies) is counted as it streams
 * and cut past its cap, so no more than the cap plus one chunk is ever held.
 *
 * Both take any async iterable of bytes: a web `ReadableStream` (a `Request`'s body) or a Node
 * stream (undici's `request()` body). Leaving the iteration early cancels or destroys the stream.
 *
 * @module
 */

/**
 * The bytes of a stream, read chunk by chunk; undefined as soon as they pass `maxBytes` (the
 * stream is then cancelled). A null body is empty.
 *
 * @example const bytes = await readBoundedStream(res.body, 65_536); if (bytes === undefined) throw tooLarge();
 */
export async function readBoundedStream(body: AsyncIterable<Uint8Array> | null, maxBytes: number): Promise<Buffer | undefined> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (body !== null) {
    for await (const chunk of body) {
      size += chunk.byteLength;
      // Leaving the loop cancels a web stream and destroys a Node one.
      if (size > maxBytes) return undefined;
      chunks.push(chunk);
    }
  }
  return Buffer.concat(chunks);
}

/**
 * `body` as a web stream passed through chunk by chunk (an SSE stream stays a stream), erroring
 * with `tooLarge()` once more than `maxBytes` have passed, and with `failed(err)` when the body
 * fails (default: the error as it is). Cancelling it cancels or destroys `body`.
 */
export function capStream(body: AsyncIterable<Uint8Array>, maxBytes: number, tooLarge: () => Error, failed: (err: unknown) => unknown = (err) => err): ReadableStream<Uint8Array> {
  const chunks = body[Symbol.asyncIterator]();
  let seen = 0;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let next: IteratorResult<Uint8Array>;
        try {
          next = await chunks.next();
        } catch (err) {
          controller.error(failed(err));
          return;
        }
        if (next.done === true) {
          controller.close();
          return;
        }
        seen += next.value.byteLength;
        if (seen > maxBytes) {
          await chunks.return?.();
          controller.error(tooLarge());
          return;
        }
        controller.enqueue(next.value);
      },
      async cancel() {
        await chunks.return?.();
      },
    },
    { highWaterMark: 0 },
  );
}
