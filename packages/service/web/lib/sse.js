// @ts-check
/**
 * A Server-Sent Events parser over a fetch body. EventSource cannot send an Authorization
 * header, so the dashboard reads `/api/stream` with `fetch` and this parser (works with and
 * without a token). No browser globals: it also runs under Node for its unit test.
 */

/**
 * @typedef {{ event: string, data: string, id?: string }} SseMessage
 */

/**
 * Feeds text chunks in; calls `onMessage` for every complete message (a blank line ends one).
 * Handles `\n`, `\r\n` and `\r` line ends, lines split across chunks, `:` comments, several
 * `data:` lines, and `id:`.
 *
 * @param {(message: SseMessage) => void} onMessage
 * @returns {{ push(chunk: string): void, end(): void }}
 */
export function sseParser(onMessage) {
  let buffer = '';
  let event = '';
  /** @type {string[]} */
  let data = [];
  /** @type {string | undefined} */
  let id;
  /** @param {string} line */
  const line = (line) => {
    if (line === '') {
      if (data.length > 0) onMessage({ event: event || 'message', data: data.join('\n'), ...(id !== undefined && { id }) });
      event = '';
      data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
    else if (field === 'id' && !value.includes('\0')) id = value;
  };
  return {
    push(chunk) {
      buffer += chunk;
      for (;;) {
        const match = /\r\n|\r|\n/.exec(buffer);
        if (match === null) return;
        // A lone \r at the very end may be the first half of \r\n: wait for the next chunk.
        if (match[0] === '\r' && match.index === buffer.length - 1) return;
        line(buffer.slice(0, match.index));
        buffer = buffer.slice(match.index + match[0].length);
      }
    },
    end() {
      if (buffer !== '') line(buffer);
      buffer = '';
      line('');
    },
  };
}

/**
 * Reads a whole event-stream body, calling `onMessage` per message, until it ends or is aborted.
 *
 * @param {ReadableStream<Uint8Array>} body
 * @param {(message: SseMessage) => void} onMessage
 */
export async function readSse(body, onMessage) {
  const parser = sseParser(onMessage);
  const reader = body.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      parser.push(decoder.decode(value, { stream: true }));
    }
    parser.push(decoder.decode());
    parser.end();
  } finally {
    reader.releaseLock();
  }
}
