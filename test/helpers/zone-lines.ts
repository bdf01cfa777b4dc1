/**
 * Reading zone-file lines back as a zone parser does (RFC 1035 §5.1, RFC 9460 Appendix A), for
 * tests of what `dnsAidZone` and `dns-records` print: fields split on unquoted blanks, `"…"`
 * quoting (anywhere in a field, as in `key65400="…"`), `\X` and `\DDD` escapes, `;` starting a
 * comment. Strict where our output must be: an unquoted parenthesis (a multi-line record), an
 * unterminated quote, a dangling backslash, a `\DDD` over 255 or a CR/LF in the line throws.
 */

export interface ZoneLine {
  /** The fields, unescaped, as bytes. */
  readonly fields: readonly Buffer[];
  /** The text after an unquoted `;`, when there is one. */
  readonly comment?: string;
}

const isDigit = (b: number | undefined) => b !== undefined && b >= 0x30 && b <= 0x39;

/** Splits one line into its fields and comment, as a zone parser reads it. */
export function zoneLine(line: string): ZoneLine {
  if (/[\r\n]/.test(line)) throw new Error(`not one line: ${JSON.stringify(line)}`);
  const bytes = Buffer.from(line, 'utf8');
  const fields: Buffer[] = [];
  let field: number[] | undefined;
  let quoted = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b === 0x5c) {
      // An escape: \DDD (a byte) or \X (X itself), quoted or not.
      field ??= [];
      if (isDigit(bytes[i + 1]) && isDigit(bytes[i + 2]) && isDigit(bytes[i + 3])) {
        const value = Number(bytes.toString('latin1', i + 1, i + 4));
        if (value > 255) throw new Error(`\\DDD escape over 255 in ${JSON.stringify(line)}`);
        field.push(value);
        i += 3;
      } else {
        if (i + 1 >= bytes.length) throw new Error(`dangling backslash in ${JSON.stringify(line)}`);
        field.push(bytes[i + 1]!);
        i += 1;
      }
    } else if (quoted) {
      if (b === 0x22) quoted = false;
      else field!.push(b);
    } else if (b === 0x22) {
      quoted = true;
      field ??= [];
    } else if (b === 0x20 || b === 0x09) {
      if (field !== undefined) fields.push(Buffer.from(field));
      field = undefined;
    } else if (b === 0x3b) {
      if (field !== undefined) fields.push(Buffer.from(field));
      return { fields, comment: bytes.toString('utf8', i + 1) };
    } else if (b === 0x28 || b === 0x29) {
      throw new Error(`unquoted parenthesis (a multi-line record) in ${JSON.stringify(line)}`);
    } else {
      field ??= [];
      field.push(b);
    }
  }
  if (quoted) throw new Error(`unterminated quote in ${JSON.stringify(line)}`);
  if (field !== undefined) fields.push(Buffer.from(field));
  return { fields };
}

/** The bytes of one quoted <character-string> (`"…"`, nothing around it). */
export function unquoteCharacterString(text: string): Buffer {
  if (!text.startsWith('"') || !text.endsWith('"') || text.length < 2) throw new Error(`not quoted: ${JSON.stringify(text)}`);
  const { fields, comment } = zoneLine(text);
  if (fields.length !== 1 || comment !== undefined) throw new Error(`not one character-string: ${JSON.stringify(text)}`);
  return fields[0]!;
}

/** The bytes a comment's text stands for: its `\DDD` and `\\` escapes undone. */
export function unescapeComment(text: string): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  const out: number[] = [];
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] === 0x5c && isDigit(bytes[i + 1]) && isDigit(bytes[i + 2]) && isDigit(bytes[i + 3])) {
      out.push(Number(bytes.toString('latin1', i + 1, i + 4)));
      i += 3;
    } else if (bytes[i] === 0x5c && bytes[i + 1] === 0x5c) {
      out.push(0x5c);
      i += 1;
    } else out.push(bytes[i]!);
  }
  return Buffer.from(out);
}
