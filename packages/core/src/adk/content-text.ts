/** The text of an ADK/genai `Content`: its text parts joined (other parts ignored). */
export function contentText(content: { readonly parts?: ReadonlyArray<object> } | undefined, separator = ''): string {
  return (content?.parts ?? []).map((p) => ('text' in p && typeof p.text === 'string' ? p.text : '')).join(separator);
}
