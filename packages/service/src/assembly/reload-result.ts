/**
 * The answer of `POST /api/config/reload` (reload.ts), a leaf of its own: the HTTP app and
 * `ServiceOptions` name it without importing the reloader (and, through it, each other).
 */
/** The answer to a reload: applied or refused, and why. */
export interface ReloadResult {
  readonly applied: boolean;
  /** SHA-256 (hex) of the file as read; empty when it could not be read. */
  readonly sha256: string;
  /** Keys that differ from the running configuration. */
  readonly changed: readonly string[];
  /** Refused: one line per problem (`file:line:col path: message`, or a key that needs a restart). */
  readonly problems: readonly string[];
  /** Applied: the snapshot current after the first cycle with the new settings. */
  readonly version?: number;
}
